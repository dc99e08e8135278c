#include "estimator/plan/search_space.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "estimator/inputs/layer_graph.h"
#include "estimator/inputs/validate.h"

namespace paraplan {

namespace {

// Where a spatial split may end: after every layer that shrinks the first spatial axis
// (stride or pool: ParaDL splits the early, large layers), or nowhere (0 = all layers).
std::vector<int> SpatialCuts(const Workload& w) {
  std::vector<int> cuts = {0};
  const std::vector<LayerSpec>& layers = w.layer_graph.layers;
  for (size_t i = 0; i + 1 < layers.size(); ++i) {
    if (SpatialExtent(layers[i].output_shape, 0) < SpatialExtent(layers[i].input_shape, 0)) {
      cuts.push_back(static_cast<int>(i) + 1);
    }
  }
  return cuts;
}

// The widest CNN split searched: 64 ways leave a 224-pixel ImageNet layer 3.5 rows per
// GPU (about one 3x3 kernel's halo on each side) and ResNet-50's first convolutions one
// filter each; wider splits only add halo and gather traffic.
constexpr int kMaxCnnSplit = 64;

// The fewest tokens a context-parallel rank keeps: one FlashAttention-2 query tile (128
// rows, Dao 2023); below it the attention kernel's tiles run partly empty and the ring's
// exchanges outweigh the work.
constexpr int64_t kMinTokensPerContextRank = 128;

// ParaDL splits of a layer graph: data parallelism alone or with one of spatial, filter
// and channel parallelism (ParaDL's hybrids), in powers of two up to kMaxCnnSplit that
// the layer shapes admit; spatial ones over one axis or several and up to each cut
// (EnumerateShapes keeps those whose product divides the GPU count).
std::vector<CnnSplit> CnnSplits(const Workload& w) {
  std::vector<CnnSplit> out;
  const std::vector<int> cuts = SpatialCuts(w);
  const int axes = w.layer_graph.layers.empty() ? 1 : std::max(1, SpatialAxes(w.layer_graph.layers[0].input_shape));
  for (int s = 1; s <= kMaxCnnSplit; s *= 2) {
    for (int f = 1; f <= kMaxCnnSplit; f *= 2) {
      for (int c = 1; c <= kMaxCnnSplit; c *= 2) {
        if ((s > 1) + (f > 1) + (c > 1) > 1) continue;
        for (int cut : s > 1 ? cuts : std::vector<int>{0}) {
          for (int a = 1; a <= (s > 1 ? axes : 1); ++a) {
            ParallelConfig probe;
            probe.spatial_parallel = s;
            probe.filter_parallel = f;
            probe.channel_parallel = c;
            probe.spatial_layers = cut;
            probe.spatial_axes = a;
            probe.global_batch_size = 1;
            if (ValidateConfig(w, probe).ok()) out.push_back({s, f, c, cut, a});
          }
        }
      }
    }
  }
  return out;
}

// Expert tensor parallelism searched beside a TP degree: as TP (Megatron-Core's default)
// and, with experts spread over ranks (ep > 1), 1 (each expert whole on a GPU: MoE
// parallel folding's common choice).
std::vector<int> ExpertTensorDegrees(int tp, int ep) {
  if (tp > 1 && ep > 1) return {tp, 1};
  return {tp};
}

// Whether DeepEP is weighed against the all-to-all for an expert group of ep ranks:
// DeepEP sends a token once per rank its experts touch (and across nodes once per node,
// forwarded over NVLink inside; Megatron-Core's flex dispatcher), where the all-to-all
// sends every copy. Not under DeepSpeed, which has no DeepEP.
bool WeighDeepEp(const SearchSpace& space, int ep) {
  return ep > 1 && !space.profile->network_levels.empty() &&
         space.request->constraints.framework != Framework::kDeepSpeed;
}

}  // namespace

IntList Divisors(int64_t n, int64_t cap) {
  IntList low, high;
  for (int64_t i = 1; i * i <= n; ++i) {
    if (n % i != 0) continue;
    if (i <= cap) low.push_back(static_cast<int>(i));
    const int64_t j = n / i;
    if (j != i && j <= cap) high.push_back(static_cast<int>(j));
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

IntList Allowed(const IntList& values, const std::vector<int>& allowed, int max) {
  IntList out;
  for (int v : values) {
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), v) == allowed.end()) continue;
    if (max > 0 && v > max) continue;
    out.push_back(v);
  }
  return out;
}

FlagList FlagValues(Flag f) {
  switch (f) {
    case Flag::kOn:
      return {{true, true}, 1};
    case Flag::kOff:
      return {{false, false}, 1};
    case Flag::kAny:
      break;
  }
  return {{false, true}, 2};
}

void BuildSearchSpace(const PlanRequest& request, const SystemProfile& profile, SearchSpace* space) {
  space->request = &request;
  space->profile = &profile;
  space->transformer = request.workload.kind == Workload::Kind::kTransformer;
  if (space->transformer) {
    space->spec = request.workload.transformer.Resolved();
    space->num_layers = space->spec.num_layers;
  } else {
    space->num_layers = static_cast<int>(request.workload.layer_graph.layers.size());
    space->cnn_splits = CnnSplits(request.workload);
  }
  std::vector<int> gpus = request.gpus;
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  space->gpu_counts = gpus;
  for (int g : gpus) {
    space->hws.push_back(std::make_unique<Hardware>(profile, request.workload.precision, g));
    const Hardware& hw = *space->hws.back();
    space->colls.push_back(std::make_unique<Collectives>(
        hw, JobLayout(g, profile.gpus_per_node, profile.num_nodes, request.constraints.placement)));
    space->systems.push_back(MakeSystemContext(profile, request.workload, hw, *space->colls.back()));
  }
}

std::vector<Shape> EnumerateShapes(const SearchSpace& space, int gpus, const IntList& micro_batches) {
  const PlanConstraints& k = space.request->constraints;
  std::vector<Shape> shapes;
  IntList tps = {1}, cps = {1}, eps = {1};
  if (space.transformer) {
    // Unless the request lists or caps the degrees, tensor parallelism stays inside the
    // fastest network level's domain (an NVLink domain: 8 GPUs of a DGX, 72 of an NVL72):
    // its per-layer collectives across a slower level lose to pipeline or expert
    // parallelism there (Narayanan et al. SC'21, sec. 3.3, takeaway 1).
    int tp_cap = k.max_tensor_parallel;
    if (k.tensor_parallel.empty() && tp_cap == 0 && !space.profile->network_levels.empty()) {
      tp_cap = static_cast<int>(std::min<int64_t>(gpus, ResolvedDomainSize(*space.profile, 0)));
    }
    tps = Allowed(Divisors(std::gcd(space.spec.num_attention_heads, space.spec.num_kv_heads), gpus), k.tensor_parallel,
                  tp_cap);
    // Context parallelism keeps at least kMinTokensPerContextRank tokens per rank.
    const int64_t max_cp = std::max<int64_t>(1, space.spec.seq_length / kMinTokensPerContextRank);
    // and two chunks of the sequence (validate_config.cc): cp divides half of it.
    cps = space.spec.seq_length % 2 == 0
              ? Allowed(Divisors(space.spec.seq_length / 2, max_cp), k.context_parallel, k.max_context_parallel)
              : Allowed({1}, k.context_parallel, k.max_context_parallel);
    if (space.spec.is_moe()) eps = Allowed(Divisors(space.spec.moe.num_experts, gpus), k.expert_parallel, 0);
  }
  const std::vector<Recompute> recomputes = {Recompute::kNone, Recompute::kSelective, Recompute::kFull};
  for (const CnnSplit& split : space.cnn_splits)
  for (int tp : tps) {
    if (gpus % (tp * split.spatial * split.filter * split.channel) != 0) continue;
    for (int cp : cps) {
      if ((gpus / tp) % cp != 0) continue;
      for (int ep : eps)
      for (int etp : ExpertTensorDegrees(tp, ep)) {
        if (gpus % (int64_t{ep} * etp) != 0) continue;
        const bool deepep = WeighDeepEp(space, ep);
        for (int mbs : micro_batches) {
          for (Recompute rc : recomputes) {
            if (!Permits(k.recompute, rc)) continue;
            if (!space.transformer && rc == Recompute::kSelective) continue;
            for (bool seq : FlagValues(k.sequence_parallel)) {
              if (seq && tp == 1) continue;
              if (etp != tp && !seq) continue;  // experts split otherwise than TP need SP
              for (bool flash : FlagValues(k.flash_attention)) {
                if (!space.transformer && flash) continue;
                if (!flash && cp > 1) continue;  // ring attention runs fused kernels (RunsFusedAttention)
                // With fused attention nothing s^2 is stored: selective is none (DeepSpeed,
                // PyTorch FSDP) or none plus a re-run of the fused core for its
                // log-sum-exp (Megatron-Core: slower, a log-sum-exp smaller), except
                // torchtitan's, which keeps its blocks' matmul outputs (op-level SAC).
                // Kept where none is not permitted: the light recompute modules
                // (LightRecomputeModules) then make selective differ.
                if (flash && rc == Recompute::kSelective && k.framework != Framework::kTorchtitan &&
                    Permits(k.recompute, Recompute::kNone)) {
                  continue;
                }
                shapes.push_back(Shape{tp, cp, ep, mbs, rc, seq, flash, etp, deepep, split.spatial,
                                       split.filter, split.channel, split.spatial_layers, split.spatial_axes});
              }
            }
          }
        }
      }
    }
  }
  return shapes;
}

ParallelConfig ShapeConfig(const PlanConstraints& k, const Shape& shape, int global_batch) {
  ParallelConfig c;
  c.framework = k.framework;
  c.tensor_parallel = shape.tp;
  c.context_parallel = shape.cp;
  c.expert_parallel = shape.ep;
  c.expert_tensor_parallel = shape.etp;
  c.micro_batch_size = shape.mbs;
  c.recompute = shape.recompute;
  c.sequence_parallel = shape.sp;
  c.flash_attention = shape.flash;
  c.cuda_graphs = k.cuda_graphs;
  if (k.tp_comm_overlap.has_value()) c.tp_comm_overlap = *k.tp_comm_overlap && shape.tp > 1;
  c.moe_a2a_overlap = k.moe_a2a_overlap && shape.ep > 1 && shape.recompute != Recompute::kFull;
  c.spatial_parallel = shape.spatial;
  c.filter_parallel = shape.filter;
  c.channel_parallel = shape.channel;
  c.spatial_layers = shape.spatial_layers;
  c.spatial_axes = shape.spatial_axes;
  c.global_batch_size = global_batch;
  c.dp_algorithm = k.dp_algorithm;
  c.tp_algorithm = k.tp_algorithm;
  c.placement = k.placement;
  return c;
}

unsigned LightRecomputeModules(const SearchSpace& space, const ParallelConfig& c) {
  const PlanConstraints& k = space.request->constraints;
  if (!space.transformer || c.recompute == Recompute::kFull || c.offload_modules != 0) return 0;
  if (!RunsMegatronCore(k.framework)) return 0;
  if (!Permits(k.recompute, Recompute::kSelective)) return 0;
  // Norms of their own (SeparateNorms) exist in MoE layers and beside MLA only.
  unsigned light = 0;
  if (space.spec.is_moe()) light |= kRecomputeLayernorm | kRecomputeMoeAct;
  if (space.spec.mla.enabled()) light |= kRecomputeLayernorm | kRecomputeMlaUpProj;
  if (light == 0) return 0;
  // Selective recompute without modules named re-runs the core attention (Megatron's default).
  const unsigned base = c.recompute == Recompute::kSelective
                            ? (c.recompute_modules != 0 ? c.recompute_modules : kRecomputeCoreAttn)
                            : 0;
  return (base | light) == base ? 0 : base | light;
}

EndLayers BalancedEndLayers(const ModelCosts& model, int pp) {
  const int n = static_cast<int>(model.layers.size());
  if (pp < 2 || n < pp || !model.Indexed()) return {};
  const double layer = model.prefix_total_s[n] / n;
  const double pre = model.pre.TotalS(), post = model.post.TotalS();
  // Ends carrying less than half a layer's time beyond the even split's balance nothing.
  if (!(layer > 0) || pre + post < 0.5 * layer) return {};
  const double per_stage = (n + (pre + post) / layer) / pp;  // layers' worth a stage
  const int first0 = static_cast<int>(std::floor(per_stage - pre / layer));
  const int last0 = static_cast<int>(std::floor(per_stage - post / layer));
  // Megatron-Core lays the middle stages out evenly: only ends that leave them so.
  std::array<EndLayers, 16> candidates;
  int count = 0;
  for (int first = std::max(1, first0 - 1); first <= std::max(1, first0 + 2); ++first) {
    for (int last = std::max(1, last0 - 1); last <= std::max(1, last0 + 2); ++last) {
      const int middle = n - first - last;
      if (pp == 2 ? middle != 0 : middle < pp - 2 || middle % (pp - 2) != 0) continue;
      candidates[count++] = {first, last};
    }
  }
  if (count == 0) return {};
  EndLayers best;
  double best_s = 0.99 * SlowestStageS(model, pp, 1, 0, 0);
  for (int i = 0; i < count; ++i) {
    // A layout is costed only as far as it could still beat the best so far.
    const double s = SlowestStageS(model, pp, 1, candidates[i].first, candidates[i].last, best_s);
    if (s < best_s) {
      best_s = s;
      best = candidates[i];
    }
  }
  return best;
}

Interleaving InterleavingsOf(const SearchSpace& space, int pp) {
  Interleaving out;
  if (pp > 1 && space.transformer && space.num_layers % pp == 0) {
    out.vs = Divisors(space.num_layers / pp, space.num_layers / pp);
  } else if (pp > 2 && space.transformer && (space.num_layers + 2) % pp == 0) {
    const int slots = (space.num_layers + 2) / pp;
    out.vs = Divisors(slots, slots);
    out.end_layers = slots - 1;
  }
  return out;
}

}  // namespace paraplan
