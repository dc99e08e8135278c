// Per-layer costs of a CNN layer graph under the ParaDL strategies (Kahira et al.
// HPDC'21): data, spatial (halo exchange), filter (all-gather of outputs forward,
// all-reduce of input gradients backward), channel (all-reduce of partial sums forward,
// all-gather of input gradients backward), and their hybrids with pipelining.
#include <algorithm>
#include <numeric>

#include "absl/status/status.h"
#include "estimator/model_costs.h"

namespace paraplan {

namespace {

double Product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), 1.0, [](double a, int64_t b) { return a * b; });
}

double Dim(const std::vector<int64_t>& v, size_t i) { return i < v.size() ? v[i] : 1; }

}  // namespace

absl::StatusOr<ModelCosts> LayerGraphCosts(const Workload& workload, const ModelShape& shape,
                                           const Hardware& hw, const Collectives& coll) {
  const double p = BytesPerElement(workload.precision);
  const double b = shape.micro_batch_size;
  const double sp = shape.spatial_parallel, fp = shape.filter_parallel, cp = shape.channel_parallel;
  // Filter and channel groups are innermost; spatial groups span them.
  const GroupSpan filter = coll.Place(shape.filter_parallel, 1);
  const GroupSpan channel = coll.Place(shape.channel_parallel, shape.filter_parallel);
  const GroupSpan spatial = coll.Place(shape.spatial_parallel, int64_t{shape.filter_parallel} * shape.channel_parallel);
  const int spatial_level = coll.LevelOfStride(int64_t{shape.filter_parallel} * shape.channel_parallel);
  const double split = sp * fp * cp;

  ModelCosts out;
  out.tokens_per_sample = 0;
  double flops_per_sample = 0;
  for (const LayerSpec& l : workload.layer_graph.layers) {
    BlockCosts blk;
    const double in_elems = b * Product(l.input_shape);
    const double out_elems = b * Product(l.output_shape);
    const double kh = Dim(l.kernel_shape, 0), kw = Dim(l.kernel_shape, 1);
    if (l.kind == "conv" || l.kind == "fc") {
      double m, n, k, params;
      if (l.kind == "conv") {
        const double c_in = Dim(l.input_shape, 0), c_out = Dim(l.output_shape, 0);
        // Implicit GEMM: (b * H_out * W_out) x C_out x (C_in * kh * kw).
        m = b * Dim(l.output_shape, 1) * Dim(l.output_shape, 2) / sp;
        n = c_out / fp;
        k = c_in * kh * kw / cp;
        params = (c_out * c_in * kh * kw + c_out) / (fp * cp);
      } else {
        m = b / sp;
        n = Product(l.output_shape) / fp;
        k = Product(l.input_shape) / cp;
        params = (Product(l.input_shape) * Product(l.output_shape) + Product(l.output_shape)) / (fp * cp);
      }
      const double fwd = hw.MatmulTime(m, n, k, 1, p);
      blk.fwd_s = fwd;
      blk.bwd_s = hw.MatmulTime(m, k, n, 1, p) + hw.MatmulTime(k, n, m, 1, p);
      blk.params = params;
      blk.tensors = 2;  // weight, bias
      blk.model_flops = 3 * 2 * m * n * k;
      flops_per_sample += 3 * 2 * m * n * k * split / b;
      // Stored: the layer input (this GPU's part).
      blk.activation_bytes = in_elems * p / split;
      if (sp > 1 && l.kind == "conv" && kh > 1) {
        // Halo rows (kh / 2 on each side) to and from both neighbours, forward and backward.
        const double halo = 2 * (kh / 2) * Dim(l.input_shape, 2) * Dim(l.input_shape, 0) / cp * b * p;
        blk.tp_fwd_s += coll.SendRecv(halo, spatial_level);
        blk.tp_bwd_s += coll.SendRecv(halo, spatial_level);
      }
      if (sp > 1 && l.kind == "fc") {
        blk.tp_fwd_s += coll.AllGather(in_elems * p / (fp * cp), spatial);
        blk.tp_bwd_s += coll.ReduceScatter(in_elems * p / (fp * cp), spatial);
      }
      if (fp > 1) {
        blk.tp_fwd_s += coll.AllGather(out_elems * p / sp, filter);
        blk.tp_bwd_s += coll.AllReduce(in_elems * p / sp, filter);
      }
      if (cp > 1) {
        blk.tp_fwd_s += coll.AllReduce(out_elems * p / sp, channel);
        blk.tp_bwd_s += coll.AllGather(in_elems * p / sp, channel);
      }
    } else {
      // pool, norm, relu: memory-bound (norm makes a statistics pass first).
      const double passes = l.kind == "norm" ? 2 : 1;
      const double bytes = (passes * in_elems + out_elems) * p / split;
      blk.fwd_s = hw.MemoryTime(bytes);
      blk.bwd_s = 2 * blk.fwd_s;
      blk.activation_bytes = (l.kind == "relu" ? out_elems : in_elems) * p / split;
      if (l.kind == "norm") {
        blk.params = 2 * Dim(l.input_shape, 0);
        blk.tensors = 2;  // scale, shift
      }
    }
    if (shape.recompute == Recompute::kFull) {
      blk.recompute_s = blk.fwd_s + blk.tp_fwd_s;
      blk.transient_bytes = blk.activation_bytes;
      blk.activation_bytes = in_elems * p / split;
    }
    out.pp_send_bytes = std::max(out.pp_send_bytes, out_elems * p / split);
    out.layers.push_back(blk);
  }
  // The data-parallel gradient group of a layer graph includes the spatial ranks, which
  // hold full copies of the (filter/channel-sharded) weights.
  out.model_flops_per_sample = flops_per_sample;
  if (shape.recompute == Recompute::kSelective) {
    return absl::InvalidArgumentError(
        "config.recompute: RECOMPUTE_SELECTIVE applies to transformers; use NONE or FULL for layer graphs");
  }
  return out;
}

}  // namespace paraplan
