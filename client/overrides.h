// `--set PATH=VALUE`: one request's changes to a system profile, never saved.
//
// PATH names a field of paraplan.v1.SystemProfile by its proto (or JSON) field names,
// dot-separated: accelerator.memory_gib, price_per_gpu_hour_usd,
// calibration.matmul_efficiency. Repeated messages are addressed by their key, not
// their position: network levels by name (network.infiniband.bandwidth_gbytes_per_s;
// "network" stands for network_levels), calibration.network entries by level
// (calibration.network.infiniband.efficiency; an entry is added for a level the
// profile has but has not calibrated); other repeated messages by a 0-based index.
// VALUE is read by the field's type: a number (finite), true/false (also on/off,
// yes/no), an enum name as in JSON input (json_enums.h: "fat_tree"), or text.
//
// Contract: ParseOverride splits "PATH=VALUE" (the first '='). ApplyOverride changes
// `profile` in place through reflection, so new proto fields are addressable without a
// change here. Errors are INVALID_ARGUMENT starting "--set PATH: " and say what is
// wrong: an unknown field with the closest valid paths ("did you mean ...") or the
// fields there are, an unknown network level with the levels the profile has, a value
// of the wrong type, a message or list where a value is expected, and the fields the
// server assigns (name, version, created_at, origin, promoted, is_default,
// fit_report). No I/O.
#ifndef PARAPLAN_CLIENT_OVERRIDES_H_
#define PARAPLAN_CLIENT_OVERRIDES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "paraplan/v1/types.pb.h"

namespace paraplan::cli {

struct Override {
  std::string path, value;
};

absl::StatusOr<Override> ParseOverride(absl::string_view text);

absl::Status ApplyOverride(const Override& o, v1::SystemProfile* profile);

// Every path ApplyOverride accepts for `profile` (network levels by their names).
std::vector<std::string> OverridePaths(const v1::SystemProfile& profile);

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_OVERRIDES_H_
