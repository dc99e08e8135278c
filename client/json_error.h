// Error messages for JSON input that a person can act on: the file, the line (and column)
// where the text goes wrong, and what is wrong.
//
// Contract: pure functions on text (no protobuf, no I/O). The protobuf JSON parser says
// *what* is wrong but not *where*; these locate it — a syntax error with nlohmann-json's
// strict RFC 8259 parser (UTF-8 checked), an unknown or ill-typed field by finding its key.
// Call them only after a parse has failed. Thread-safe.
#ifndef PARAPLAN_CLIENT_JSON_ERROR_H_
#define PARAPLAN_CLIENT_JSON_ERROR_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace paraplan::cli {

struct TextPosition {
  int line = 1;    // 1-based
  int column = 1;  // 1-based, in bytes
};

// Where `text` first stops being valid JSON, or nullopt when it is valid.
std::optional<TextPosition> JsonSyntaxErrorPosition(absl::string_view text);

// "FILE:LINE[:COLUMN]: not a valid TYPE: DETAIL". `text` is what was parsed and
// `first_line` the line of FILE it starts on (1 for a whole file, N for line N of a
// JSON-lines file); `parser_message` is the protobuf parser's status message.
std::string DescribeJsonError(absl::string_view file, int first_line, absl::string_view text,
                              absl::string_view type_name, absl::string_view parser_message);

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_JSON_ERROR_H_
