// Measured per-layer times for `paraplan profiles put-layer-times`: parses a CSV of
// `workload,layer,forward_ms,backward_ms` (milliseconds per sample; a header line naming
// those columns is optional) and merges the rows into a profile's layer_timings, a row
// replacing the stored one of the same workload and layer. Errors name the line and the
// column. Plain C++ over the generated message types.
#ifndef PARAPLAN_CLIENT_LAYER_TIMES_H_
#define PARAPLAN_CLIENT_LAYER_TIMES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "paraplan/v1/types.pb.h"

namespace paraplan::cli {

absl::StatusOr<std::vector<v1::LayerTiming>> ParseLayerTimes(const std::string& csv);

// Adds or replaces `rows` in `profile`; returns how many replaced stored rows.
int MergeLayerTimes(const std::vector<v1::LayerTiming>& rows, v1::SystemProfile* profile);

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_LAYER_TIMES_H_
