// Assemble: one candidate's iteration time, memory and energy from its stage costs and
// the degrees that do not change per-layer work (data parallelism, ZeRO stage, overlap,
// offload, schedule, micro-batch count).
//
// This is the search's inner loop: it allocates nothing and touches only plain numbers.
// The exposed parts of TimeBreakdown sum to iteration_time_s by construction.
#ifndef PARAPLAN_ESTIMATOR_ITERATION_ASSEMBLE_H_
#define PARAPLAN_ESTIMATOR_ITERATION_ASSEMBLE_H_

#include "estimator/iteration/data_parallel.h"
#include "estimator/iteration/result.h"
#include "estimator/iteration/stage_costs.h"
#include "estimator/system/collectives.h"
#include "estimator/system/hardware.h"
#include "estimator/system/input_pipeline.h"
#include "estimator/workloads/model_costs.h"

namespace paraplan {

struct CandidateResult {
  TimeBreakdown time;
  MemoryBreakdown memory;
  double iteration_time_s = 0;
  double busy_s = 0;  // per GPU on average over the pipeline's stages, compute-active time
  double energy_j = 0;
  double cost_usd = 0;
  double first_epoch_extra_s = 0;  // per iteration while the first epoch reads the shared FS
  double input_core_s = 0;         // host core-seconds of decoding per node and iteration
  double input_read_j = 0;         // storage energy of the job's reads per iteration
};

// Where a configuration's data-parallel groups sit (DpGroups, data_parallel.h).
DpGroups PlaceDataParallel(const ParallelConfig& c, const Collectives& coll);

// Rank distance between adjacent pipeline stages.
inline int64_t PipelineStride(const ParallelConfig& c) {
  return c.rank_order == RankOrder::kTpCpEpDpPp ? c.InnerDegree() * c.data_parallel : c.InnerDegree();
}

// The all-reduce of the last stage's embedding copy's gradient with the first stage's
// (ModelCosts::stage_embedding_copy_params), over the two ranks (p - 1) strides apart,
// in the reduced gradients' bytes, once per iteration after the data-parallel sync and
// before the step: exposed. 0 without pipeline stages or a copy.
double EmbeddingSyncS(const ModelCosts& model, const ParallelConfig& c, const Collectives& coll);
// Its bytes on each of the two ranks (0 without pipeline stages or a copy).
double EmbeddingSyncBytes(const ModelCosts& model, const ParallelConfig& c);
// Two ranks `stride` apart (adjacent pipeline stages; the first and the last), on the
// level that joins them.
GroupSpan RankPair(const Collectives& coll, int64_t stride);

// Everything about the system a candidate needs, prepared once.
struct SystemContext {
  const Hardware* hw = nullptr;
  const Collectives* coll = nullptr;
  double busy_power_w = 0;
  double idle_power_w = 0;
  double node_power_w = 0;
  double cpu_power_w = 0;  // part of node_power_w; 0 = node power flat
  double price_per_gpu_hour_usd = 0;
  double sample_bytes = 0;
  InputSystem input;
};

// `config` must be normalized and valid for the model.
// When `memory` is given it is the candidate's AssembleMemory result (already computed
// to prune) and is copied instead of recomputed.
void Assemble(const ModelCosts& model, const StageCosts& stages, const ParallelConfig& config,
              const SystemContext& sys, CandidateResult* out,
              const MemoryBreakdown* memory = nullptr);

// Assemble in two steps, for the search's variants of one setting: AssembleShared fills
// everything the overlap flags (overlap_grad_reduce, overlap_param_gather) and the rank
// order leave alone; AssembleVariant then adds, for one choice of them, the pipeline
// sends, the data-parallel traffic, the offload copies' exposure (which the data-parallel
// waits inside the passes help hide), the total and its energy and cost. Assemble is the
// two in turn; a variant starts from a copy of the shared result.
void AssembleShared(const ModelCosts& model, const StageCosts& stages, const ParallelConfig& config,
                    const SystemContext& sys, CandidateResult* out,
                    const MemoryBreakdown* memory = nullptr);
// What a variant computes that its rank order alone decides (the data-parallel groups,
// their collectives' seconds a call, the pipeline hop), kept for the setting's other
// variants of that order: one cache per setting, passed to each of its variants.
struct VariantCache {
  struct Entry {
    bool filled = false;
    DpGroups groups;
    DpCallTimes calls;
    int pp_level = 0;
    double hop_s = 0;
    double embedding_sync_s = 0;  // the embedding copy's gradient all-reduce (EmbeddingSyncS)
  };
  Entry by_order[2];  // RankOrder::kTpCpEpDpPp, kTpCpEpPpDp
};
void AssembleVariant(const ModelCosts& model, const StageCosts& stages, const ParallelConfig& config,
                     const SystemContext& sys, CandidateResult* out, VariantCache* cache = nullptr);

// A lower bound of what AssembleVariant makes of `shared` (AssembleShared's result for
// `config`), whatever the overlap flags and rank order: the iteration time without the
// pipeline sends, the data-parallel traffic and the offload copies (which only add), and the energy and cost
// of that time. The search skips a setting none of whose variants could rank.
void BoundVariants(const ParallelConfig& config, const SystemContext& sys, const CandidateResult& shared,
                   CandidateResult* bound);

// Memory only (cheaper; used to prune before timing).
void AssembleMemory(const ModelCosts& model, const StageCosts& stages,
                    const ParallelConfig& config, const SystemContext& sys,
                    MemoryBreakdown* out);

}  // namespace paraplan


namespace paraplan {

// SystemContext for a profile (the Hardware and Collectives must outlive it).
SystemContext MakeSystemContext(const SystemProfile& profile, const Workload& workload,
                                const Hardware& hw, const Collectives& coll);

// The full Estimate (throughput, MFU, bottleneck, warnings, time-to-train) of an
// assembled candidate. Allocates; used once per reported plan.
Estimate ToEstimate(const Workload& workload, const SystemProfile& profile,
                    const ParallelConfig& config, double tokens_per_sample,
                    double model_flops_per_sample, const CandidateResult& result);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_ITERATION_ASSEMBLE_H_
