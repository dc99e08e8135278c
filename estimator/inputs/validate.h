// Validation of the three inputs, with errors that name the field and the reason.
//
// Every check returns INVALID_ARGUMENT with a message of the form
// "<path>: <value> <reason>", e.g. "config.pipeline_parallel: 7 does not divide
// num_layers 96". A string from the request is echoed at most kMaxEchoedChars long
// (Abbreviated, echo.h), so an error always fits in gRPC metadata. Every function accepts any
// input, however malformed (none assumes another ran first). Pure functions; thread-safe.
#ifndef PARAPLAN_ESTIMATOR_INPUTS_VALIDATE_H_
#define PARAPLAN_ESTIMATOR_INPUTS_VALIDATE_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "estimator/inputs/echo.h"
#include "estimator/inputs/parallel_config.h"
#include "estimator/inputs/system_profile.h"
#include "estimator/inputs/workload.h"

namespace paraplan {

absl::Status ValidateWorkload(const Workload& workload);
absl::Status ValidateProfile(const SystemProfile& profile);
// Checks the configuration against the workload's shape (config is normalized first).
// Safe on a workload that ValidateWorkload would refuse (it never indexes an empty shape).
absl::Status ValidateConfig(const Workload& workload, const ParallelConfig& config);
// As above, and the degrees must multiply to exactly `num_gpus`.
absl::Status ValidateConfigForGpus(const Workload& workload, const ParallelConfig& config,
                                   int64_t num_gpus);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_INPUTS_VALIDATE_H_
