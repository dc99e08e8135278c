// 64-bit integers as JSON numbers in the CLI's JSON output. The proto3 JSON mapping
// prints int64 / uint64 (and their fixed / sint variants) as quoted strings
// ("hidden_size": "12288"); jq, spreadsheets and scripts then see text, not numbers.
//
// Contract: Int64AsNumbers takes JSON printed for a message of `type` and removes the
// quotes around every value of a 64-bit integer field (singular, repeated, map value,
// at any depth) whose text is an integer; map keys stay strings, as JSON requires. The
// rest of the text is unchanged (see json_fields.h). protobuf's JSON parser reads such
// numbers back exactly. Pure; thread-safe.
#ifndef PARAPLAN_CLIENT_JSON_INT64_H_
#define PARAPLAN_CLIENT_JSON_INT64_H_

#include <string>

#include "absl/strings/string_view.h"

namespace google::protobuf {
class Descriptor;
}  // namespace google::protobuf

namespace paraplan::cli {

std::string Int64AsNumbers(absl::string_view json, const google::protobuf::Descriptor* type);

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_JSON_INT64_H_
