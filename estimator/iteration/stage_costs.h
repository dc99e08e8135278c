// StageCosts: a model's per-layer costs partitioned over pipeline stages.
//
// Layers are split evenly into pp * v chunks (or as the first / last stage counts say:
// ParallelConfig::PipelineChunkLayers); stage i holds chunks i, i + pp, ...
// (interleaved placement, Narayanan et al. SC'21). The embedding sits on the first
// stage and the LM head on the last, so stages are uneven; the slowest stage sets the
// steady-state pace (its compute, and the copies of offloaded tensors it does not hide:
// OffloadExposedS). Memory is bounded by the end stages and by any middle stage that
// may hold more than every stage before it: more layers than the first (BLOOM's 70
// layers over 12 stages, or end stages given fewer layers), more expert parameters
// (dense first layers), or more activations in flight (an earlier stage keeps at least
// as many micro-batches unless its first chunk is lighter: the embedding alone).
// Computed once per (shape, pp, v) and reused across the remaining degrees. Pure;
// thread-safe.
#ifndef PARAPLAN_ESTIMATOR_ITERATION_STAGE_COSTS_H_
#define PARAPLAN_ESTIMATOR_ITERATION_STAGE_COSTS_H_

#include <array>
#include <cmath>

#include "estimator/workloads/model_costs.h"

namespace paraplan {

struct StageMemory {
  double params = 0;             // parameters held (dense + expert)
  double expert_params = 0;
  double activation_bytes_per_mb = 0;  // all its chunks, one micro-batch
  double transient_bytes = 0;
  double chunk_activation_bytes_per_mb = 0;  // one chunk (for offload working set)
  double offloaded_bytes_per_mb = 0;  // all its chunks, one micro-batch: on the host (offload_modules)
  double expert_offloadable_bytes_per_mb = 0;  // of its activations, what expert offloading would move
  double light_recompute_bytes_per_mb = 0;     // of its activations, what light recompute modules would drop
  int layers = 0;                     // decoder / graph layers, all its chunks
  int index = 0;                      // its place in the pipeline (0 = first)
  double chunk0_share = 1;            // its first chunk's share of its activations
  double head_activation_bytes_per_mb = 0;  // of its activations, the LM head's and loss's (last stage)
};

// Middle stages a StageCosts keeps for memory at most (those no earlier stage outweighs
// in every term and in its activations held; beyond this many, the heaviest at one
// micro-batch).
inline constexpr int kMemoryMiddleStages = 4;

struct StageCosts {
  BlockCosts slowest;            // per micro-batch, the slowest stage (all its chunks)
  double slowest_total_s = 0;    // slowest.TotalS()
  double mean_total_s = 0;       // per micro-batch, averaged over stages
  // Per micro-batch, each stage's pace (its time and the offload copies it cannot hide,
  // Chunks::ExposedCopiesS) averaged over stages: what a step of the pipeline's fill and
  // drain takes, the bubble's unit.
  double mean_pace_s = 0;
  // Per micro-batch, forward + backward + recompute averaged over stages: what a GPU of
  // the pipeline computes on average (the stages' GPUs compute their own layers, not the
  // slowest stage's).
  double mean_compute_s = 0;
  int slowest_layers = 0;        // transformer / graph layers on the slowest stage
  // The most transformer / graph layers any stage holds, the last stage's MTP depths
  // counted (what a per-layer optimizer step, Muon's, takes longest on).
  int max_stage_layers = 0;
  StageMemory first;             // stage 0 (most micro-batches in flight, embedding)
  StageMemory last;              // stage pp - 1 (LM head, logits)
  // Middle stages that may hold more than the first (in pipeline order), `middles` of them.
  std::array<StageMemory, kMemoryMiddleStages> middle{};
  int middles = 0;
  // The most dense / expert parameters any stage holds (what its gradient reduction moves).
  double max_dense_params = 0;
  double max_expert_params = 0;
  int pp = 1;
  int v = 1;
};

// The stages whose memory a StageCosts keeps, in pipeline order: the first, the middle
// ones kept, the last (once when pp is 1). Returns how many it wrote to `out`.
using MemoryStageList = std::array<const StageMemory*, kMemoryMiddleStages + 2>;
inline int MemoryStages(const StageCosts& s, MemoryStageList* out) {
  int n = 0;
  (*out)[n++] = &s.first;
  for (int i = 0; i < s.middles; ++i) (*out)[n++] = &s.middle[i];
  if (s.pp > 1) (*out)[n++] = &s.last;
  return n;
}

// Layers are split as evenly as possible when pp * v does not divide them (BLOOM: 70
// layers over 12 stages gives stages of 5 and 6 layers; the slowest sets the pace).
// first_layers / last_layers: decoder layers on the first / last stage (0 = even).
StageCosts ComputeStageCosts(const ModelCosts& model, int pp, int v, int first_layers = 0, int last_layers = 0);

// The slowest stage's pace per micro-batch under that layout (its time and its exposed
// offload copies), alone (`model` indexed). With `cap`, stops at the first stage whose
// pace reaches it and returns that pace (a layout no faster than `cap`, for a caller
// looking for one that is).
double SlowestStageS(const ModelCosts& model, int pp, int v, int first_layers, int last_layers,
                     double cap = INFINITY);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_ITERATION_STAGE_COSTS_H_
