// Per-layer costs of a CNN layer graph under the ParaDL strategies (Kahira et al.
// HPDC'21): data, spatial (halo exchange on the split axes, batch-norm statistics
// all-reduced over the spatial ranks), filter (all-gather of outputs forward, all-reduce
// of input gradients backward), channel (all-reduce of partial sums forward, all-gather
// of input gradients backward), and their hybrids with pipelining. Spatial splitting
// covers layers [0, spatial_layers); the rest run data-parallel on gathered tensors
// (Oyama et al. 2020, "The case for strong scaling in deep learning"): the tensor at the
// cut is redistributed so each spatial rank takes micro_batch / spatial samples (or, when
// they do not divide, every rank gathers the whole micro-batch and repeats the work).
// What travels among the spatial ranks (halos, batch-norm statistics, the gathers of a
// fully connected layer inside the split and at the cut) is spatial_fwd_s / _bwd_s; the
// filter and channel collectives are tp_fwd_s / _bwd_s.
#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/status/status.h"
#include "estimator/inputs/layer_graph.h"
#include "estimator/workloads/model_costs.h"

namespace paraplan {

namespace {

double Product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), 1.0, [](double a, int64_t b) { return a * b; });
}

double Dim(const std::vector<int64_t>& v, size_t i) { return i < v.size() ? v[i] : 1; }

double SpatialProduct(const std::vector<int64_t>& shape) {
  return shape.size() > 1 ? Product(shape) / shape[0] : 1;
}

double KernelProduct(const LayerSpec& l) {
  double k = 1;
  for (int a = 0; a < SpatialAxes(l.input_shape); ++a) {
    k *= a < static_cast<int>(l.kernel_shape.size()) ? l.kernel_shape[a] : 1;
  }
  return k;
}

// One halo exchange of `bytes` with the neighbours: device to device on the level that
// joins spatial ranks, or staged through host memory (a PCIe copy out and in, plus the
// path's software latency).
double HaloExchange(const Hardware& hw, const Collectives& coll, double bytes, int level) {
  if (bytes <= 0) return 0;
  double t = coll.SendRecv(bytes, level) + hw.halo_latency_s();
  if (hw.halo_host_staged() && hw.host_staging_bytes_per_s() > 0) t += 2 * bytes / hw.host_staging_bytes_per_s();
  return t;
}

// A collective of model-parallel tensors (a filter / channel split's gathers and
// reductions, the gathers at and inside the spatial cut): as NCCL runs it on the device
// path, or staged through host memory by MPI where the implementation does so (ParaDL's
// chainermn functions): the same network time plus `pcie_bytes` copied out and back in
// at the staging rate.
double Staged(const Hardware& hw, double network_s, double pcie_bytes) {
  if (!hw.halo_host_staged() || hw.host_staging_bytes_per_s() <= 0) return network_s;
  return network_s + pcie_bytes / hw.host_staging_bytes_per_s();
}

// What every layer's costs read: the graph, its inputs, the split and its groups.
struct GraphContext {
  const LayerGraphSpec& graph;
  const std::vector<std::vector<int>>& inputs;
  const Hardware& hw;
  const Collectives& coll;
  double p;   // bytes per element
  double b;   // micro-batch
  int spatial_deg;                 // spatial parallelism (ParaDL spatial), not sequence parallelism
  double filter_deg, channel_deg;  // filter and channel parallelism
  int cut;    // layers [0, cut) split spatially
  std::vector<int> factors;  // the spatial degree per split axis
  GroupSpan filter, channel, spatial;
  // Past the cut, the micro-batch is redistributed into whole samples when it divides.
  bool redistribute;

  // Samples this rank works on at layer i: before the cut a spatial share of each.
  double Samples(int i) const {
    const double after = redistribute ? b / spatial_deg : b;
    return i < cut || spatial_deg == 1 ? b / spatial_deg : after;
  }
  // Elements of a tensor this rank holds: the sample (index -1) or layer i's output.
  // Filter and channel splits leave tensors whole (outputs are gathered / reduced).
  double Local(int i) const {
    const std::vector<int64_t>& s = i < 0 ? graph.layers[0].input_shape : graph.layers[i].output_shape;
    return Samples(std::max(i, 0)) * Product(s);
  }
};

// checkpoint[i]: a weighted layer (conv, fc) reads layer i's output, so full recompute
// keeps it (once a scan of every later layer per layer: quadratic, 20 s at 99,000).
std::vector<bool> Checkpoints(const LayerGraphSpec& graph, const std::vector<std::vector<int>>& inputs) {
  std::vector<bool> checkpoint(graph.layers.size(), false);
  for (size_t j = 0; j < graph.layers.size(); ++j) {
    const LayerKind kind = graph.layers[j].kind;
    if (kind != LayerKind::kConv && kind != LayerKind::kFc) continue;
    for (int in : inputs[j]) {
      if (in >= 0) checkpoint[in] = true;
    }
  }
  return checkpoint;
}

// A convolution or fully connected layer: its implicit GEMMs forward and backward, and
// the split's collectives. `flops_per_sample` gains its FLOPs.
BlockCosts WeightedLayer(const GraphContext& g, int i, double in_elems, double out_elems, double* flops_per_sample) {
  const LayerSpec& l = g.graph.layers[i];
  const double c_in = Dim(l.input_shape, 0), c_out = Dim(l.output_shape, 0);
  const double filter_deg = g.filter_deg, channel_deg = g.channel_deg, p = g.p;
  BlockCosts blk;
  double m, n_cols, k, per_sample_flops, groups = 1;
  const double bias = l.bias ? c_out : 0;
  if (l.kind == LayerKind::kConv) {
    groups = std::max<int64_t>(1, l.groups);
    const double kprod = KernelProduct(l);
    // Implicit GEMM per group: (samples x output positions) x C_out/g x (C_in/g x kernel).
    m = g.Samples(i) * SpatialProduct(l.output_shape);
    n_cols = c_out / groups / filter_deg;
    k = c_in / groups * kprod / channel_deg;
    per_sample_flops = 2 * SpatialProduct(l.output_shape) * c_out * (c_in / groups) * kprod;
    blk.params = (c_out * (c_in / groups) * kprod + bias) / (filter_deg * channel_deg);
    // Forward, data gradient and weight gradient each move the input (or its gradient),
    // the filters and the output (or its gradient) once.
    const double bytes = (in_elems + out_elems + blk.params) * p;
    blk.fwd_s = g.hw.ConvTime(m, n_cols, k, groups, bytes);
    blk.bwd_s = g.hw.ConvTime(m, k, n_cols, groups, bytes) + g.hw.ConvTime(k, n_cols, m, groups, bytes);
  } else {
    m = g.Samples(i);
    n_cols = Product(l.output_shape) / filter_deg;
    k = Product(l.input_shape) / channel_deg;
    per_sample_flops = 2 * Product(l.input_shape) * Product(l.output_shape);
    blk.params = (Product(l.input_shape) * Product(l.output_shape) + (l.bias ? Product(l.output_shape) : 0)) /
                 (filter_deg * channel_deg);
    blk.fwd_s = g.hw.MatmulTime(m, n_cols, k, groups, p);
    blk.bwd_s = g.hw.MatmulTime(m, k, n_cols, groups, p) + g.hw.MatmulTime(k, n_cols, m, groups, p);
  }
  blk.tensors = l.bias ? 2 : 1;
  blk.weight_tensors = 1;
  // Useful work: this rank's share of the micro-batch, whatever is repeated past the cut.
  blk.model_flops = 3 * per_sample_flops * g.b / g.spatial_deg / (filter_deg * channel_deg);
  *flops_per_sample += 3 * per_sample_flops;
  const bool split = g.spatial_deg > 1 && i < g.cut;
  if (split && l.kind == LayerKind::kFc) {
    // A fully connected layer inside the spatial range needs the whole input.
    const double whole = in_elems * g.spatial_deg * p, pcie = (1 + g.spatial_deg) * in_elems * p;
    blk.spatial_fwd_s += Staged(g.hw, g.coll.AllGather(whole, g.spatial), pcie);
    blk.spatial_bwd_s += Staged(g.hw, g.coll.ReduceScatter(whole, g.spatial), pcie);
  }
  if (filter_deg > 1) {
    blk.tp_fwd_s += Staged(g.hw, g.coll.AllGather(out_elems * p, g.filter), (1 + 1 / filter_deg) * out_elems * p);
    blk.tp_bwd_s += Staged(g.hw, g.coll.AllReduce(in_elems * p, g.filter), 2 * in_elems * p);
  }
  if (channel_deg > 1) {
    blk.tp_fwd_s += Staged(g.hw, g.coll.AllReduce(out_elems * p, g.channel), 2 * out_elems * p);
    blk.tp_bwd_s += Staged(g.hw, g.coll.AllGather(in_elems * p, g.channel), (1 + 1 / channel_deg) * in_elems * p);
  }
  return blk;
}

// The memory-bound layers: elementwise and pooling, batch norm, residual add and concat
// (flatten is a view, free).
BlockCosts MemoryBoundLayer(const GraphContext& g, int i, double in_elems, double out_elems) {
  const LayerSpec& l = g.graph.layers[i];
  const double p = g.p;
  BlockCosts blk;
  if (l.kind == LayerKind::kPool || l.kind == LayerKind::kRelu || l.kind == LayerKind::kActivation ||
      l.kind == LayerKind::kSoftmax || l.kind == LayerKind::kDropout) {
    // Read the input, write the output (dropout also writes its 1-byte mask); backward
    // reads the output gradient and what was kept, writes the input gradient.
    const double mask = l.kind == LayerKind::kDropout ? out_elems : 0;
    blk.fwd_s = g.hw.MemoryTime((in_elems + out_elems) * p + mask);
    blk.bwd_s = 2 * blk.fwd_s;
    blk.activation_bytes += mask;
  } else if (l.kind == LayerKind::kNorm) {
    // Batch norm: a statistics pass, then normalise (read twice, write once).
    const double c_in = Dim(l.input_shape, 0);
    blk.fwd_s = g.hw.MemoryTime((2 * in_elems + out_elems) * p);
    blk.bwd_s = 2 * blk.fwd_s;
    blk.params = 2 * c_in;
    blk.tensors = 2;
    if (g.spatial_deg > 1 && i < g.cut) {
      // Statistics of the whole sample: sum and sum of squares over the spatial ranks,
      // forward; the two gradient reductions, backward (synchronised batch norm).
      blk.spatial_fwd_s += g.coll.AllReduce(2 * c_in * 4, g.spatial);
      blk.spatial_bwd_s += g.coll.AllReduce(2 * c_in * 4, g.spatial);
    }
  } else if (l.kind == LayerKind::kAdd || l.kind == LayerKind::kConcat) {
    // Residual add reads every input and writes the sum; concat copies its inputs.
    // Backward: the gradient is accumulated into (add) or sliced for (concat) each input.
    const double reads =
        l.kind == LayerKind::kAdd ? static_cast<double>(g.inputs[i].size()) * out_elems : out_elems;
    blk.fwd_s = g.hw.MemoryTime((reads + out_elems) * p);
    blk.bwd_s = g.hw.MemoryTime(2 * out_elems * p);
  }
  return blk;
}

// Kernels a layer launches forward and backward, as cuDNN / cuBLAS and an eager
// framework run it: a convolution or fully connected layer its GEMM (+ bias add), then
// the data and weight gradients (+ bias gradient); elementwise, pooling, softmax,
// dropout, batch norm and concat one each way; a residual add one forward, its gradient
// passing through; flatten none (a view).
std::pair<double, double> LayerKernels(const LayerSpec& l) {
  switch (l.kind) {
    case LayerKind::kConv:
    case LayerKind::kFc:
      return {l.bias ? 2.0 : 1.0, l.bias ? 3.0 : 2.0};
    case LayerKind::kAdd:
      return {1, 0};
    case LayerKind::kFlatten:
      return {0, 0};
    default:
      return {1, 1};
  }
}

// What travels among the spatial ranks for layer i beyond its own collectives: the halo
// of a split layer, and past the cut the tensors made before it (`moved` marks those
// already carried).
void SpatialTraffic(const GraphContext& g, int i, std::vector<bool>* moved, BlockCosts* blk) {
  const LayerSpec& l = g.graph.layers[i];
  const double p = g.p;
  if (g.spatial_deg > 1 && i < g.cut) {
    int exchanges = 0;
    const double halo = HaloElementsPerSample(l, g.factors, &exchanges) * g.b * p;
    // One exchange per split axis, one after the other (corners travel with the
    // second): forward receives the input halo, backward returns its gradient rows.
    // Every rank waits for the slowest neighbour exchange: when the spatial group spans
    // nodes, the pair across a node boundary sets the pace on the outer level.
    for (int e = 0; e < exchanges; ++e) {
      blk->spatial_fwd_s += HaloExchange(g.hw, g.coll, halo / exchanges, g.spatial.level);
      blk->spatial_bwd_s += HaloExchange(g.hw, g.coll, halo / exchanges, g.spatial.level);
    }
  }
  if (g.spatial_deg > 1 && i >= g.cut) {
    // A tensor made before the cut and read after it (the cut's activation, a skip
    // connection): redistributed into whole samples (all-to-all) or gathered whole,
    // once; its gradient goes back the same way.
    for (int in : g.inputs[i]) {
      if (in >= g.cut || (*moved)[in + 1]) continue;
      (*moved)[in + 1] = true;
      const double bytes = g.Local(in) * p;
      const double pcie = g.redistribute ? 2 * bytes : (1 + g.spatial_deg) * bytes;
      const double whole = bytes * g.spatial_deg;
      const double all_to_all = g.redistribute ? g.coll.AllToAll(bytes, g.spatial) : 0;
      const double gather = g.redistribute ? all_to_all : g.coll.AllGather(whole, g.spatial);
      const double scatter = g.redistribute ? all_to_all : g.coll.ReduceScatter(whole, g.spatial);
      blk->spatial_fwd_s += Staged(g.hw, gather, pcie);
      blk->spatial_bwd_s += Staged(g.hw, scatter, pcie);
    }
  }
}

}  // namespace

absl::StatusOr<ModelCosts> LayerGraphCosts(const Workload& workload, const ModelShape& shape,
                                           const Hardware& hw, const Collectives& coll, const Interrupt& stop) {
  const LayerGraphSpec& graph = workload.layer_graph;
  absl::StatusOr<std::vector<std::vector<int>>> inputs = ResolveInputs(graph);
  if (!inputs.ok()) return inputs.status();
  if (shape.recompute == Recompute::kSelective) {
    return absl::InvalidArgumentError(
        "config.recompute: RECOMPUTE_SELECTIVE applies to transformers; use NONE or FULL for layer graphs");
  }
  const std::vector<bool> kept = KeptTensors(graph, *inputs);
  const int n = static_cast<int>(graph.layers.size());
  const int spatial_deg = shape.spatial_parallel;
  // Filter and channel groups are innermost; spatial groups span them.
  const GraphContext g{graph,
                       *inputs,
                       hw,
                       coll,
                       BytesPerElement(workload.precision),
                       static_cast<double>(shape.micro_batch_size),
                       spatial_deg,
                       static_cast<double>(shape.filter_parallel),
                       static_cast<double>(shape.channel_parallel),
                       shape.spatial_layers > 0 ? std::min(shape.spatial_layers, n) : n,
                       SpatialFactors(spatial_deg, shape.spatial_axes),
                       coll.Place(shape.filter_parallel, 1),
                       coll.Place(shape.channel_parallel, shape.filter_parallel),
                       coll.Place(spatial_deg, int64_t{shape.filter_parallel} * shape.channel_parallel),
                       spatial_deg > 1 && shape.micro_batch_size % spatial_deg == 0};
  const std::vector<bool> checkpoint = Checkpoints(graph, *inputs);
  const double p = g.p;
  std::vector<bool> moved(n + 1, false);  // tensors already carried across the cut
  ModelCosts out;
  out.tokens_per_sample = 0;
  double flops_per_sample = 0;
  for (int i = 0; i < n; ++i) {
    if (i % kLayersPerInterruptCheck == kLayersPerInterruptCheck - 1) {
      if (absl::Status s = stop.Check("the layer graph's costs"); !s.ok()) return s;
    }
    const LayerSpec& l = graph.layers[i];
    const double in_elems = g.Local((*inputs)[i].front());
    const double out_elems = g.Local(i);
    const bool weighted = l.kind == LayerKind::kConv || l.kind == LayerKind::kFc;
    BlockCosts blk = weighted ? WeightedLayer(g, i, in_elems, out_elems, &flops_per_sample)
                              : MemoryBoundLayer(g, i, in_elems, out_elems);
    // A measured time for this layer on this system replaces the modelled compute
    // (ParaDL's empirical parameterisation): per sample, scaled to this rank's share of
    // the micro-batch and of the layer's filters / channels.
    if (const std::pair<double, double>* t = hw.MeasuredLayer(workload.name, l.name)) {
      const double share = g.Samples(i) / (weighted ? g.filter_deg * g.channel_deg : 1);
      blk.fwd_s = t->first * share;
      blk.bwd_s = t->second * share;
    }
    SpatialTraffic(g, i, &moved, &blk);
    // What backward keeps: this layer's output when some layer needs it (a tensor is
    // counted once, at the layer that makes it); the sample at the first layer.
    if (kept[i + 1]) blk.activation_bytes += out_elems * p;
    if (i == 0 && kept[0]) blk.activation_bytes += g.Local(-1) * p;
    if (shape.recompute == Recompute::kFull) {
      // Re-run every forward in backward; keep only the inputs of weighted layers (the
      // checkpoints), never more than without recompute.
      blk.recompute_s = blk.fwd_s + blk.tp_fwd_s + blk.spatial_fwd_s;
      const double without = blk.activation_bytes;
      blk.activation_bytes = kept[i + 1] && checkpoint[i] ? out_elems * p : 0;
      if (i == 0 && kept[0]) blk.activation_bytes += g.Local(-1) * p;
      // While its backward runs, the layer's recomputed tensors live again.
      blk.transient_bytes = without - blk.activation_bytes;
    }
    // Host dispatch: where a layer's kernels are shorter than their launches, the host
    // sets the pace. Recompute re-launches the forward inside backward.
    const double host_kernel_s = HostPerKernelS(shape, hw);
    const auto [kernels_fwd, kernels_bwd] = LayerKernels(l);
    const double recomputed = shape.recompute == Recompute::kFull ? kernels_fwd : 0;
    blk.kernels = kernels_fwd + kernels_bwd + recomputed;
    blk.host_fwd_s = HostExcess(kernels_fwd, host_kernel_s, blk.fwd_s + blk.tp_fwd_s + blk.spatial_fwd_s);
    blk.host_s = blk.host_fwd_s + HostExcess(kernels_bwd + recomputed, host_kernel_s,
                                             blk.bwd_s + blk.tp_bwd_s + blk.spatial_bwd_s + blk.recompute_s);
    out.pp_send_bytes = std::max(out.pp_send_bytes, out_elems * p);
    out.layers.push_back(blk);
  }
  // The data-parallel gradient group of a layer graph includes the spatial ranks, which
  // hold full copies of the (filter/channel-sharded) weights.
  out.model_flops_per_sample = flops_per_sample;
  return out;
}

}  // namespace paraplan
