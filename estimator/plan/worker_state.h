// What one worker of the plan search keeps and how a candidate enters it (search.cc):
// the ranked top, each objective's pool for the Pareto front, the closest configuration
// that did not fit, the first configuration the framework refused; the quantile factors
// of time@pNN; the key a candidate ranks by, the bound test that skips what could not
// rank, and the reason an answer gives when nothing ran. Internal to plan/; a
// WorkerState belongs to one thread.
#ifndef PARAPLAN_ESTIMATOR_PLAN_WORKER_STATE_H_
#define PARAPLAN_ESTIMATOR_PLAN_WORKER_STATE_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "estimator/inputs/parallel_config.h"
#include "estimator/inputs/validate.h"
#include "estimator/inputs/measured_features.h"
#include "estimator/iteration/estimate.h"
#include "estimator/iteration/uncertainty.h"
#include "estimator/plan/ranking.h"
#include "estimator/plan/search_space.h"
#include "estimator/workloads/model_costs.h"

namespace paraplan {

struct WorkerState {
  TopK top;
  TopK pool[kObjectives];
  int64_t enumerated = 0;
  int64_t feasible = 0;
  int64_t evaluated = 0;
  bool truncated = false;
  double best_shortfall_bytes = INFINITY;
  ParallelConfig shortfall_config;
  double shortfall_total_bytes = 0;
  // Over the settings of the shape being searched that did not fit, the least of what
  // they lack beyond what offloading the experts' inputs would move from their end
  // stages (<= 0: that offloading could make one fit).
  double shape_shortfall_after_offload = INFINITY;
  // A setting the framework asked for does not run, and why: the answer's example where
  // nothing ran, the first that fit (else the first of all) by ConfigBefore. Kept only
  // while this worker has offered nothing (once one has, the answer has plans).
  bool refused = false;
  bool refused_fit = false;
  ParallelConfig refused_config;
  FrameworkRefusal refusal;
  absl::Status error;
  // What this worker's shapes share whatever their expert layout (ComputeModelCosts).
  TransformerMemo memo;
  void NoteRefusal(const ParallelConfig& c, const FrameworkRefusal& r, bool fit) {
    if (feasible > 0) return;
    if (refused && (refused_fit > fit || (refused_fit == fit && !ConfigBefore(c, refused_config)))) return;
    refused = true;
    refused_fit = fit;
    refused_config = c;
    refusal = r;
  }
  // Whether this worker's refusal example comes before `other`'s (null: it does).
  bool RefusalBefore(const WorkerState* other) const {
    if (!refused) return false;
    if (other == nullptr || refused_fit != other->refused_fit) return other == nullptr || refused_fit;
    return ConfigBefore(refused_config, other->refused_config);
  }
  explicit WorkerState(size_t k)
      : top(k * kFoldSlack), pool{TopK(kPoolSize), TopK(kPoolSize), TopK(kPoolSize), TopK(kPoolSize)} {}
  // Candidates kept per plan asked for: a configuration comes in up to 8 variants of rank
  // order and overlap switches that may predict alike and fold into one row.
  static constexpr size_t kFoldSlack = 8;
  // Candidates kept per objective and worker: the answer's Pareto front is drawn from the
  // best kPoolSize by each objective over every worker's pools; a bound on memory and on
  // the front's work, not a tuned value.
  static constexpr size_t kPoolSize = 256;
};

// time@pNN: the quantile's multiplier of a predicted time, by the regime, envelope and
// measured features of the configuration (iteration/uncertainty.h). Within one shape only
// the pipeline, ZeRO-3 and offload features vary: at most 8 factors, each computed once.
class QuantileFactors {
 public:
  QuantileFactors(const SearchSpace& space, int gpus, const ModelCosts& model)
      : space_(space),
        gpus_(gpus),
        flops_per_token_(model.tokens_per_sample > 0 ? model.model_flops_per_sample / model.tokens_per_sample : 0) {}
  double Of(const ParallelConfig& candidate) {
    const PlanRequest& req = *space_.request;
    if (req.objective_quantile <= 0) return 1.0;
    const unsigned f = FeaturesOf(req.workload, candidate);
    const int slot = ((f & kFeaturePipelineParallel) ? 1 : 0) | ((f & kFeatureShardedWeights) ? 2 : 0) |
                     ((f & kFeatureOffload) ? 4 : 0);
    if (factors_[slot] == 0) {
      factors_[slot] = QuantileFactor(PredictionUncertainty(*space_.profile, gpus_, flops_per_token_, f).scale,
                                      req.objective_quantile);
    }
    return factors_[slot];
  }

 private:
  const SearchSpace& space_;
  const int gpus_;
  const double flops_per_token_;
  double factors_[8] = {};  // 0 = not yet computed
};

// The ranked top's key of an assembled candidate: the objective asked for per sample
// (ranked across GPU counts), time at the quantile asked for.
double RankKey(const SearchSpace& space, int global_batch, const CandidateResult& r, double quantile_factor);

// True when no candidate whose objectives are at least `bound`'s (BoundVariants), with
// its memory, could enter the ranked top or any objective's pool: each takes only
// candidates at or below its last (TopK::WouldAccept). Energy is compared a hair below
// the bound, against rounding in its sum.
bool Outranked(const SearchSpace& space, int global_batch, double quantile_factor, const CandidateResult& bound,
               const WorkerState& st);

// Offers an assembled candidate to the ranked top and to each objective's pool.
void Offer(const SearchSpace& space, int global_batch, const ModelCosts& model, const ParallelConfig& c,
           double quantile_factor, Scored s, WorkerState* st);

// Why no plan came back: what the framework asked for refused of what fit (`refused_state`:
// the worker whose refused setting comes first; null: none refused), the closest
// configuration's memory shortfall (`shortfall_state`), the deadline, or nothing that
// divides.
std::string InfeasibleReason(const SearchSpace& space, const WorkerState* shortfall_state,
                             const WorkerState* refused_state, bool truncated);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_PLAN_WORKER_STATE_H_
