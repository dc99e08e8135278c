// Validation of the three inputs, with errors that name the field and the reason.
//
// Every check returns INVALID_ARGUMENT with a message of the form
// "<path>: <value> <reason>", e.g. "config.pipeline_parallel: 7 does not divide
// num_layers 96". Pure functions; thread-safe.
#ifndef PARAPLAN_ESTIMATOR_VALIDATE_H_
#define PARAPLAN_ESTIMATOR_VALIDATE_H_

#include "absl/status/status.h"
#include "estimator/parallel_config.h"
#include "estimator/system_profile.h"
#include "estimator/workload.h"

namespace paraplan {

absl::Status ValidateWorkload(const Workload& workload);
absl::Status ValidateProfile(const SystemProfile& profile);
// Checks the configuration against the workload's shape (config is normalized first).
absl::Status ValidateConfig(const Workload& workload, const ParallelConfig& config);
// As above, and the degrees must multiply to exactly `num_gpus`.
absl::Status ValidateConfigForGpus(const Workload& workload, const ParallelConfig& config,
                                   int64_t num_gpus);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_VALIDATE_H_
