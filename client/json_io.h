// The CLI's JSON conventions on top of the proto3 JSON mapping (input.h): what every
// command reads and prints goes through here.
//
// Contract: LoadJsonFile and LoadJsonLine parse as ParseJsonFile / ParseJsonLine do
// (strictly, whole files and JSON lines alike: an unknown field is refused by name; "-"
// is standard input; errors
// INVALID_ARGUMENT naming the file and line), after NormalizeEnumNames
// (json_enums.h): enum values may be written "selective", "bf16", "interleaved_1f1b";
// a JSON line with an enum value that names none is refused (protobuf would drop it).
// A floating-point field written -0 loads as 0 (JSON prints -0 as "-0", which would read
// back as 0). PrintJson prints `m` as ToJson does (proto field names, every primitive
// field) with 64-bit integers as JSON numbers (json_int64.h).
#ifndef PARAPLAN_CLIENT_JSON_IO_H_
#define PARAPLAN_CLIENT_JSON_IO_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace google::protobuf {
class Message;
}  // namespace google::protobuf

namespace paraplan::cli {

absl::Status LoadJsonFile(const std::string& path, google::protobuf::Message* m);

absl::Status LoadJsonLine(absl::string_view file, int line, absl::string_view text, google::protobuf::Message* m);

std::string PrintJson(const google::protobuf::Message& m, bool pretty);

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_JSON_IO_H_
