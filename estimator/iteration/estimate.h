// Estimate: the predicted cost of one training iteration under one configuration.
//
// EstimateIteration() is the estimator's front door: it validates the inputs, builds
// the per-layer costs for the configuration's shape and assembles time, memory, energy
// and money (result.h). Pure function of its arguments; thread-safe.
#ifndef PARAPLAN_ESTIMATOR_ITERATION_ESTIMATE_H_
#define PARAPLAN_ESTIMATOR_ITERATION_ESTIMATE_H_

#include "absl/status/statusor.h"
#include "estimator/inputs/parallel_config.h"
#include "estimator/inputs/system_profile.h"
#include "estimator/inputs/workload.h"
#include "estimator/iteration/result.h"

namespace paraplan {

// Validates workload, config and profile, then predicts. INVALID_ARGUMENT names the
// field at fault ("config.tensor_parallel: ...").
absl::StatusOr<Estimate> EstimateIteration(const Workload& workload,
                                           const ParallelConfig& config,
                                           const SystemProfile& profile);

// OK when every figure of `e` is finite; else INVALID_ARGUMENT naming the first that is
// not ("energy_to_train_j: the inputs make it overflow"): values each within its range
// can still multiply past a double's range, and no answer may carry an infinity.
absl::Status CheckFinite(const Estimate& e);

// The iteration time alone, for inputs EstimateIteration has already accepted (or that
// differ from accepted ones only in calibration values within their ranges): no
// validation, no collective listing, no warnings. Calibration's many evaluations of
// stored measurements use it. Errors only where the costs cannot be computed.
absl::StatusOr<double> IterationTimeOfValidated(const Workload& workload, const ParallelConfig& config,
                                                const SystemProfile& profile);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_ITERATION_ESTIMATE_H_
