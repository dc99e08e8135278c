#include "client/json_error.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace paraplan::cli {

namespace {

// A strict JSON scanner that stops at the first error. Nesting is capped so that a
// hostile file cannot exhaust the stack.
class Scanner {
 public:
  explicit Scanner(absl::string_view text) : t_(text) {}

  // True when the whole text is one JSON value (with surrounding whitespace).
  bool Document() {
    Space();
    if (!Value(0)) return false;
    Space();
    return i_ == t_.size();
  }
  size_t offset() const { return i_; }

 private:
  static constexpr int kMaxDepth = 512;

  void Space() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) ++i_;
  }
  bool Eat(char c) {
    if (i_ < t_.size() && t_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool Literal(absl::string_view word) {
    if (t_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  bool Digits() {
    const size_t start = i_;
    while (i_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[i_]))) ++i_;
    return i_ > start;
  }
  bool Number() {
    Eat('-');
    if (Eat('0')) {
      // no leading zeros
    } else if (!Digits()) {
      return false;
    }
    if (Eat('.') && !Digits()) return false;
    if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
      ++i_;
      if (!Eat('+')) Eat('-');
      if (!Digits()) return false;
    }
    return true;
  }
  bool String() {
    if (!Eat('"')) return false;
    while (i_ < t_.size()) {
      const unsigned char c = static_cast<unsigned char>(t_[i_]);
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c < 0x20) return false;  // raw control character (e.g. a newline) inside a string
      if (c == '\\') {
        ++i_;
        if (i_ >= t_.size()) return false;
        const char e = t_[i_];
        if (e == 'u') {
          for (int k = 1; k <= 4; ++k) {
            if (i_ + k >= t_.size() || !std::isxdigit(static_cast<unsigned char>(t_[i_ + k]))) {
              i_ += k;
              return false;
            }
          }
          i_ += 4;
        } else if (absl::string_view("\"\\/bfnrt").find(e) == absl::string_view::npos) {
          return false;
        }
      }
      ++i_;
    }
    return false;
  }
  bool Value(int depth) {
    if (depth > kMaxDepth || i_ >= t_.size()) return false;
    switch (t_[i_]) {
      case '{':
        return Container(depth, '}', true);
      case '[':
        return Container(depth, ']', false);
      case '"':
        return String();
      case 't':
        return Literal("true");
      case 'f':
        return Literal("false");
      case 'n':
        return Literal("null");
      default:
        return Number();
    }
  }
  bool Container(int depth, char close, bool object) {
    ++i_;
    Space();
    if (Eat(close)) return true;
    while (true) {
      if (object) {
        if (!String()) return false;
        Space();
        if (!Eat(':')) return false;
        Space();
      }
      if (!Value(depth + 1)) return false;
      Space();
      if (Eat(close)) return true;
      if (!Eat(',')) return false;
      Space();
    }
  }

  absl::string_view t_;
  size_t i_ = 0;
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
  Scanner s(text);
  if (s.Document()) return std::nullopt;
  return PositionOf(text, s.offset());
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
