// The planner's search space (search.h): what Plan enumerates before it ranks. From a
// request and a profile, BuildSearchSpace resolves the model's layers (a layer graph's
// ParaDL splits too) and, per distinct GPU count, the hardware, collectives and system
// context; EnumerateShapes lists the per-layer shapes (tp, cp, ep and etp, micro-batch,
// recompute, sp, flash, the CNN splits) that divide one GPU count under the request's
// constraints; ShapeConfig and InterleavingsOf give the configuration of a shape and the
// virtual pipeline stages to try. The search over the remaining dimensions and the
// ranking stay in search.cc. Internal to plan/; pure functions of their arguments
// (thread-safe); a SearchSpace is read-only once built and points into the request and
// profile it was built from, which must outlive it.
#ifndef PARAPLAN_ESTIMATOR_PLAN_SEARCH_SPACE_H_
#define PARAPLAN_ESTIMATOR_PLAN_SEARCH_SPACE_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "estimator/inputs/parallel_config.h"
#include "estimator/inputs/system_profile.h"
#include "estimator/inputs/workload.h"
#include "estimator/iteration/assemble.h"
#include "estimator/plan/search.h"
#include "estimator/system/collectives.h"
#include "estimator/system/hardware.h"

namespace paraplan {

// A short list of degrees, on the stack up to 16 (the search lists them per shape and
// pipeline degree: a heap allocation each cost it ~5 % of its time).
using IntList = absl::InlinedVector<int, 16>;

// Divisors of n that are <= cap, ascending. O(sqrt(n)): a global batch of 2^24 costs
// 4,096 trial divisions, not 16 million.
IntList Divisors(int64_t n, int64_t cap);

// Keeps `values` that the constraint list allows (empty = all) and that are <= max (0 =
// no cap).
IntList Allowed(const IntList& values, const std::vector<int>& allowed, int max);

// Whether the constraint list allows `v` (empty = all).
template <typename T>
bool Permits(const std::vector<T>& allowed, T v) {
  return allowed.empty() || std::find(allowed.begin(), allowed.end(), v) != allowed.end();
}

// The values a flag constraint leaves to search: {true}, {false} or {false, true}.
struct FlagList {
  bool values[2];
  int count;
  const bool* begin() const { return values; }
  const bool* end() const { return values + count; }
  int size() const { return count; }
};
FlagList FlagValues(Flag f);

// One per-layer shape: the part of a configuration that the per-layer costs depend on
// (the search fills in the pipeline, data parallel and remaining settings).
struct Shape {
  int tp, cp, ep, mbs;
  Recompute recompute;
  bool sp, flash;
  int etp = 1;  // expert tensor parallelism: tp, or 1 (experts folded over the TP ranks)
  // The expert group leaves the fastest domain: DeepEP is weighed against the all-to-all
  // (SearchShape keeps the faster; the two differ in their dispatch time alone).
  bool weigh_deepep = false;
  int spatial = 1, filter = 1, channel = 1;  // layer graphs (ParaDL)
  int spatial_layers = 0, spatial_axes = 1;

  int Inner() const { return tp * cp * spatial * filter * channel; }
};

// A layer graph's ParaDL split (spatial, filter or channel parallelism).
struct CnnSplit {
  int spatial, filter, channel;
  int spatial_layers = 0, spatial_axes = 1;
};

// What one Plan request searches over (BuildSearchSpace): the request and profile, the
// model's layers and splits, and per distinct GPU count its hardware and system.
struct SearchSpace {
  const PlanRequest* request;
  const SystemProfile* profile;
  // Per GPU count (ascending, as `gpu_counts`): the calibration of its regime
  // (calibration_regime.h), and the job's layout, which changes how its collectives
  // share the network.
  std::vector<int> gpu_counts;
  std::vector<std::unique_ptr<Hardware>> hws;
  std::vector<std::unique_ptr<Collectives>> colls;
  std::vector<SystemContext> systems;
  size_t Slot(int gpus) const {
    return static_cast<size_t>(std::lower_bound(gpu_counts.begin(), gpu_counts.end(), gpus) - gpu_counts.begin());
  }
  TransformerSpec spec;  // resolved (transformer workloads)
  int num_layers = 0;
  bool transformer = true;
  std::vector<CnnSplit> cnn_splits = {{1, 1, 1}};  // layer graphs: CnnSplits()
};

// The request's search space: the model's layers (and a layer graph's splits), and per
// distinct GPU count (ascending) its hardware, collectives and system.
void BuildSearchSpace(const PlanRequest& request, const SystemProfile& profile, SearchSpace* space);

// Enumerates the per-layer shapes for one GPU count. `micro_batches` are the allowed
// micro-batch sizes (divisors of the global batch: the largest local batch, dp = 1).
std::vector<Shape> EnumerateShapes(const SearchSpace& space, int gpus, const IntList& micro_batches);

// The configuration of `shape` with the request's fixed settings; the pipeline, data
// parallel, ZeRO, offload, schedule and flag settings are filled in by the search.
ParallelConfig ShapeConfig(const PlanConstraints& k, const Shape& shape, int global_batch);

// Megatron-Core's output-discarding checkpoints (TransformerConfig.recompute_modules:
// "moe_act", "layernorm" and "mla_up_proj" drop their outputs in the forward and re-run
// them in the backward; the Megatron-MoE model zoo's recipes set them where a MoE
// configuration does not fit otherwise): memory-bound re-runs that free the norms', the
// experts' activation's and MLA's up-projections' outputs (a dense layer without MLA has no
// norm of its own to drop). The recompute modules of `c`
// with those added, for the search to try on a setting that does not fit without them;
// 0 where they cannot apply: a layer graph, full recompute, fine-grained offloading, a
// framework other than Megatron-Core's, selective recompute not permitted, or torchtitan's
// op-level selective recompute.
unsigned LightRecomputeModules(const SearchSpace& space, const ParallelConfig& c);

// Virtual stages to try at `pp` stages, and the end stages' layer counts they take.
// Layers that do not divide over the stages interleave as Megatron-Core lays them out
// with the embedding and the loss counted as layers (Qwen3-235B's 94 over 8 x 4): the end
// stages one layer short, every chunk (L + 2) / (pp v) slots. Uneven stages (BLOOM: 70
// layers over 12; DeepSpeed's partitioning) take v = 1; the slowest stage sets the pace.
struct Interleaving {
  IntList vs = {1};
  int end_layers = 0;
};
Interleaving InterleavingsOf(const SearchSpace& space, int pp);

// Without virtual stages: the first and last stages' decoder layers that balance the
// embedding on the first and the LM head, loss and MTP layers on the last against the
// middle stages, as Megatron-Core lays them out (--decoder-first-pipeline-num-layers /
// --decoder-last-pipeline-num-layers; the middle stages take the rest evenly) — DeepSeek-V3's
// 61 layers over 16 stages: 4, 14 x 4, 1 with the MTP layer and the loss beside it, as
// Megatron-Bridge lays it out. {0, 0} (the even split) unless that makes the slowest stage
// at least 1 % faster; per-layer costs `model` (indexed).
struct EndLayers {
  int first = 0;
  int last = 0;
};
EndLayers BalancedEndLayers(const ModelCosts& model, int pp);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_PLAN_SEARCH_SPACE_H_
