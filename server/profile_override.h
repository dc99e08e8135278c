// What an Estimate or Plan request's `profile_override` changed: the fields in which a
// profile differs from the stored version it was made from, for the warning the
// response carries ("profile_override: dgx-a100-80gb@1 as changed for this request only,
// not stored: network_levels[1].bandwidth_gbytes_per_s 25 -> 50").
//
// Contract: pure functions over protos (no store, no I/O). Fields the server assigns
// (name, version, created_at, origin, promoted, is_default, fit_report) are not
// compared. Paths use the proto field names with 0-based indexes, as validation errors
// do: "accelerator.memory_gib", "network_levels[1].latency_us"; a list of another length
// is one difference ("network_levels: 2 -> 3 entries"). Thread-safe.
#ifndef PARAPLAN_SERVER_PROFILE_OVERRIDE_H_
#define PARAPLAN_SERVER_PROFILE_OVERRIDE_H_

#include <string>
#include <vector>

#include "paraplan/v1/types.pb.h"

namespace paraplan::server {

// "PATH OLD -> NEW", one per differing value, in field-number order.
std::vector<std::string> ProfileDifferences(const v1::SystemProfile& stored, const v1::SystemProfile& changed);

// The warning of a request that used `changed` instead of `stored` (at most
// kMaxListedDifferences differences listed, then how many more).
std::string OverrideWarning(const v1::SystemProfile& stored, const v1::SystemProfile& changed);
inline constexpr int kMaxListedDifferences = 8;

// The warning when the override names no stored version (nothing to compare with).
std::string UnstoredOverrideWarning(const v1::SystemProfile& used);

}  // namespace paraplan::server

#endif  // PARAPLAN_SERVER_PROFILE_OVERRIDE_H_
