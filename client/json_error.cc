#include "client/json_error.h"

#include <cstddef>
#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace paraplan::cli {

namespace {

// nlohmann-json's strict RFC 8259 parser, driven as SAX so that nothing is built: its
// parser keeps its own stack (a file of 100,000 '[' cannot exhaust ours) and checks what
// a hand-written scanner here used not to (UTF-8 in strings, surrogate pairs).
class FirstError : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::optional<size_t> offset;  // of the byte where the text stops being JSON

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  // `position` counts the bytes read, the offending one included.
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) override {
    offset = position == 0 ? 0 : position - 1;
    return false;
  }
};

TextPosition PositionOf(absl::string_view text, size_t offset) {
  TextPosition p;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

std::string CamelCase(absl::string_view snake) {
  std::string out;
  bool upper = false;
  for (char c : snake) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? absl::ascii_toupper(static_cast<unsigned char>(c)) : c;
    upper = false;
  }
  return out;
}

// Where "key" first appears as an object key in `text`.
std::optional<size_t> FindKey(absl::string_view text, absl::string_view key) {
  if (key.empty()) return std::nullopt;
  const std::string quoted = absl::StrCat("\"", key, "\"");
  for (size_t at = text.find(quoted); at != absl::string_view::npos; at = text.find(quoted, at + 1)) {
    size_t j = at + quoted.size();
    while (j < text.size() && absl::ascii_isspace(static_cast<unsigned char>(text[j]))) ++j;
    if (j < text.size() && text[j] == ':') return at;
  }
  return std::nullopt;
}

// The field a protobuf JSON error names: the last name before the first colon, as in
// "bogus: Cannot find field.", "(accelerator) bogus: Cannot find field." or
// "(gpus_per_node): invalid value ...".
absl::string_view FieldOf(absl::string_view message) {
  const size_t colon = message.find(':');
  if (colon == absl::string_view::npos) return {};
  absl::string_view path = message.substr(0, colon);
  if (!path.empty() && path.back() == ')') path.remove_suffix(1);
  size_t start = path.size();
  while (start > 0 && (absl::ascii_isalnum(static_cast<unsigned char>(path[start - 1])) || path[start - 1] == '_')) {
    --start;
  }
  return path.substr(start);
}

}  // namespace

std::optional<TextPosition> JsonSyntaxErrorPosition(absl::string_view text) {
  FirstError sax;
  nlohmann::json::sax_parse(text.begin(), text.end(), &sax);
  if (!sax.offset) return std::nullopt;
  return PositionOf(text, *sax.offset);
}

std::string DescribeJsonError(absl::string_view file, int first_line, absl::string_view text,
                              absl::string_view type_name, absl::string_view parser_message) {
  // The parser's message may go on to echo the text with a caret; its first line says it.
  absl::string_view detail = parser_message.substr(0, parser_message.find('\n'));
  std::string where = std::string(file);
  if (absl::StripAsciiWhitespace(text).empty()) {
    return absl::StrCat(where, ":", first_line, ": not a valid ", type_name, ": empty input");
  }
  if (std::optional<TextPosition> p = JsonSyntaxErrorPosition(text)) {
    return absl::StrCat(where, ":", first_line + p->line - 1, ":", p->column, ": not valid JSON: ",
                        detail.empty() ? "syntax error" : detail);
  }
  const absl::string_view field = FieldOf(detail);
  std::optional<size_t> at = FindKey(text, field);
  if (!at) at = FindKey(text, CamelCase(field));
  if (at) {
    absl::StrAppend(&where, ":", first_line + PositionOf(text, *at).line - 1);
  } else if (absl::StripAsciiWhitespace(text).find('\n') == absl::string_view::npos) {
    absl::StrAppend(&where, ":", first_line);  // one line: the line is known anyway
  }
  return absl::StrCat(where, ": not a valid ", type_name, ": ", detail);
}

}  // namespace paraplan::cli
