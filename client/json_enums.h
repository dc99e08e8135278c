// Enum names in JSON input as people write them: "selective", "bf16",
// "interleaved_1f1b", "rmsnorm", "fat-tree" for RECOMPUTE_SELECTIVE, PRECISION_BF16,
// SCHEDULE_INTERLEAVED_1F1B, NORMALIZATION_RMSNORM, TOPOLOGY_FAT_TREE.
//
// Contract: EnumValueFromText maps a name to a value of `e`: the exact proto name, or the
// name upper-cased with '-' and ' ' read as '_', either whole or after the prefix that
// every value of the enum shares ("RECOMPUTE_", "SCHEDULE_"); nullptr when none matches
// (so "interleaved" matches nothing: SCHEDULE_INTERLEAVED_1F1B is the name). It works
// from the descriptors, so new enum values are accepted without a change here.
// NormalizeEnumNames rewrites, in JSON text of message `type`, every enum string value
// (in nested messages, arrays and map values too) that EnumValueFromText maps to its
// full proto name and leaves everything else as written (see json_fields.h): values it
// cannot map are left for the protobuf parser to reject. UnmappableEnumValue finds the
// first enum string value that EnumValueFromText cannot map — which protobuf's parser
// silently drops when it ignores unknown fields (JSON lines) — and describes it:
// "recompute: \"sometimes\" is not one of none, selective, full". Pure; thread-safe.
#ifndef PARAPLAN_CLIENT_JSON_ENUMS_H_
#define PARAPLAN_CLIENT_JSON_ENUMS_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace google::protobuf {
class Descriptor;
class EnumDescriptor;
class EnumValueDescriptor;
}  // namespace google::protobuf

namespace paraplan::cli {

const google::protobuf::EnumValueDescriptor* EnumValueFromText(const google::protobuf::EnumDescriptor& e,
                                                               absl::string_view text);

std::string NormalizeEnumNames(absl::string_view json, const google::protobuf::Descriptor* type);

std::optional<std::string> UnmappableEnumValue(absl::string_view json, const google::protobuf::Descriptor* type);

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_JSON_ENUMS_H_
