// Planner search: enumerate every valid configuration for a workload on a profile,
// drop those that do not fit, rank the rest, return the top k and the Pareto front.
//
// Per-layer costs are computed once per (tp, cp, ep, micro-batch, recompute, sp, flash)
// shape and reused across the remaining dimensions; the inner loop allocates nothing.
// Honours a deadline and a cancellation flag (checked between GPU counts while
// enumerating and between shapes while searching): cut short, it returns the best found
// so far with truncated = true. Thread-safe; uses up to `threads` worker threads.
#ifndef PARAPLAN_ESTIMATOR_PLAN_SEARCH_H_
#define PARAPLAN_ESTIMATOR_PLAN_SEARCH_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "estimator/inputs/parallel_config.h"
#include "estimator/inputs/system_profile.h"
#include "estimator/inputs/workload.h"
#include "estimator/iteration/estimate.h"

namespace paraplan {

enum class Objective { kTime, kCost, kEnergy };

enum class Flag { kAny, kOn, kOff };

struct PlanConstraints {
  // Empty = every value allowed.
  std::vector<int> tensor_parallel, pipeline_parallel, data_parallel, context_parallel,
      expert_parallel, micro_batch_size, virtual_pipeline_stages, zero_stage;
  std::vector<Recompute> recompute;
  std::vector<PipelineSchedule> pipeline_schedule;
  int max_tensor_parallel = 0;  // 0 = no cap
  int max_pipeline_parallel = 0;
  int max_context_parallel = 0;
  int max_micro_batch_size = 0;
  double memory_headroom_ratio = 0;  // keep this share of capacity free
  bool allow_offload = false;
  Flag sequence_parallel = Flag::kAny;
  Flag flash_attention = Flag::kAny;
  Flag overlap_grad_reduce = Flag::kAny;
  // Properties of the user's framework, not searched: every plan uses them as given.
  bool cuda_graphs = false;
  std::optional<bool> tp_comm_overlap;  // unset: the framework's default (ResolvedTpCommOverlap)
  // Megatron-Core's all-to-all overlap in every plan where it runs (EP > 1, no full
  // recompute, virtual stages under a pipeline; ValidateA2aOverlap).
  bool moe_a2a_overlap = false;
  // Pinned collective algorithms (kAuto = the cheapest per call) and where the job's
  // nodes sit; every plan uses them as given.
  CollectiveAlgorithm dp_algorithm = CollectiveAlgorithm::kAuto;
  CollectiveAlgorithm tp_algorithm = CollectiveAlgorithm::kAuto;
  Placement placement = Placement::kPacked;
  // Only configurations this framework runs (ValidateFramework).
  Framework framework = Framework::kAny;
};

// The largest global batch Plan accepts (INVALID_ARGUMENT above): every micro-batch
// size searched is a divisor of it.
inline constexpr int kMaxPlanGlobalBatchSize = 1 << 24;
// The highest quantile a plan may be ranked by (time@p99.9).
inline constexpr double kMaxObjectiveQuantile = 0.999;
// Plans a request may ask for (top_k; 0 = kDefaultTopK): each kept candidate costs the
// search's workers memory and the answer bytes, and a thousand rows is past any reading.
inline constexpr int kMaxTopK = 1000;
inline constexpr int kDefaultTopK = 10;

struct PlanRequest {
  Workload workload;
  std::vector<int> gpus;  // one or more GPU counts
  int global_batch_size = 0;
  int top_k = kDefaultTopK;
  Objective objective = Objective::kTime;
  // With kTime: rank by this quantile of the predicted time (iteration/uncertainty.h);
  // 0 = the prediction itself. INVALID_ARGUMENT outside [0, kMaxObjectiveQuantile] or
  // with another objective.
  double objective_quantile = 0;
  PlanConstraints constraints;
  absl::Time deadline = absl::InfiniteFuture();
  const std::atomic<bool>* cancelled = nullptr;  // may be null
  // Stop starting new shapes once this many candidates were enumerated (0 = no cap); the
  // result then says truncated. Checked between shapes, so it may be passed by a shape.
  int64_t max_candidates = 0;
  int threads = 2;
};

struct PlanResult {
  std::vector<Estimate> plans;   // best first
  std::vector<Estimate> pareto;  // over (time, cost, energy, memory headroom)
  int64_t candidates_enumerated = 0;
  int64_t candidates_feasible = 0;
  int64_t candidates_evaluated = 0;
  double search_time_s = 0;
  bool truncated = false;
  std::string infeasible_reason;  // set when no plan fits
};

absl::StatusOr<PlanResult> Plan(const PlanRequest& request, const SystemProfile& profile);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_PLAN_SEARCH_H_
