// The CLI's input and output in the proto3 JSON mapping: reading a file, parsing a
// whole-file message or one line of a JSON-lines file, and printing a message.
//
// Contract: errors are values. ReadFile fails with NOT_FOUND / FAILED_PRECONDITION and
// a message naming the file; the path "-" is standard input, which can be read once per
// process (a second "-" fails naming it), and is named "<stdin>" in messages; the parsers fail with INVALID_ARGUMENT and a message naming
// the file, the line and what is wrong (see json_error.h). A whole file is parsed
// strictly (an unknown field is an error, catching typos in hand-written files); a line
// of a JSON-lines file ignores unknown fields (records carry notes and extra columns).
// Output uses the proto field names (snake_case) and prints every primitive field, so a
// consumer always finds each field of the API contract. Thread-safe.
#ifndef PARAPLAN_CLIENT_INPUT_H_
#define PARAPLAN_CLIENT_INPUT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace google::protobuf {
class Message;
}  // namespace google::protobuf

namespace paraplan::cli {

absl::StatusOr<std::string> ReadFile(const std::string& path);

// Reads `path` and parses it, strictly, into `m`.
absl::Status ParseJsonFile(const std::string& path, google::protobuf::Message* m);

// Parses the whole text of file `file` (a name for messages), strictly, into `m`.
absl::Status ParseJsonText(absl::string_view file, absl::string_view text, google::protobuf::Message* m);

// How a path is named in messages: "<stdin>" for "-", else the path.
std::string DisplayName(const std::string& path);

// Parses line `line` (1-based) of JSON-lines file `file`. An unknown field is an error
// naming it, as in a whole file: a misspelt or newer field must not be answered as if
// it were absent (free-form notes belong in a Measurement's `labels`).
absl::Status ParseJsonLine(absl::string_view file, int line, absl::string_view text, google::protobuf::Message* m);

// The lines of a JSON-lines text with their 1-based numbers, blank lines left out.
struct NumberedLine {
  int number;
  absl::string_view text;
};
std::vector<NumberedLine> NonBlankLines(absl::string_view text);

// `m` in the proto3 JSON mapping with proto field names; indented when `pretty`.
std::string ToJson(const google::protobuf::Message& m, bool pretty);

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_INPUT_H_
