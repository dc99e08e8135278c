// Assemble: one candidate's iteration time, memory and energy from its stage costs and
// the degrees that do not change per-layer work (data parallelism, ZeRO stage, overlap,
// offload, schedule, micro-batch count).
//
// This is the search's inner loop: it allocates nothing and touches only plain numbers.
// The exposed parts of TimeBreakdown sum to iteration_time_s by construction.
#ifndef PARAPLAN_ESTIMATOR_ITERATION_ASSEMBLE_H_
#define PARAPLAN_ESTIMATOR_ITERATION_ASSEMBLE_H_

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
  double busy_s = 0;  // per GPU, compute-active time
  double energy_j = 0;
  double cost_usd = 0;
  double first_epoch_extra_s = 0;  // per iteration while the first epoch reads the shared FS
  double input_core_s = 0;         // host core-seconds of decoding per node and iteration
  double input_read_j = 0;         // storage energy of the job's reads per iteration
};

// Data-parallel gradient groups: where a configuration's ranks that reduce gradients
// together sit.
struct DpGroups {
  GroupSpan dense;   // dp x cp ranks that hold the same dense parameters
  GroupSpan expert;  // ranks that hold the same experts
};
DpGroups PlaceDataParallel(const ParallelConfig& c, const Collectives& coll);

// ZeRO-3's collectives per layer and micro-batch, for `params` parameters of the slowest
// stage. FSDP (and any framework but DeepSpeed) gathers a layer's weights in one call
// each pass and reduce-scatters its gradients in one. DeepSpeed ZeRO-3
// (deepspeed/runtime/zero/partitioned_param_coordinator.py; defaults from
// deepspeed/runtime/zero/config.py) gathers each weight tensor in a call of its own, none
// under stage3_param_persistence_threshold (1e5 elements: kept whole on every rank),
// prefetches the next tensor while one computes unless a tensor alone reaches
// stage3_max_live_parameters (1e9), and reduces gradients in reduce_bucket_size (5e8
// element) buckets.
struct Zero3Calls {
  double gathers = 0;       // all-gathers per layer and pass (forward; again in backward)
  double gather_bytes = 0;  // each
  double reduces = 0;       // reduce-scatters per layer (may be a fraction: a bucket spans layers)
  double reduce_bytes = 0;  // each
  bool prefetch = true;     // the next gather may start while this one's module computes
};
Zero3Calls Zero3Collectives(const ModelCosts& model, const StageCosts& stages, const ParallelConfig& c,
                            double params);

// Rank distance between adjacent pipeline stages.
inline int64_t PipelineStride(const ParallelConfig& c) {
  return c.rank_order == RankOrder::kTpCpEpDpPp ? c.InnerDegree() * c.data_parallel : c.InnerDegree();
}

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
