#include "client/json_fields.h"

#include <cctype>

#include "google/protobuf/descriptor.h"

namespace paraplan::cli {

namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

constexpr int kMaxDepth = 100;

// A recursive-descent reader of strict JSON that copies the text to `out_` and splices
// in the replacements. Any syntax error sets ok = false (the caller then discards out_).
class Walker {
 public:
  Walker(absl::string_view s, const FieldStringRewrite& rewrite) : s_(s), rewrite_(rewrite) {}

  bool Document(const Descriptor* type) {
    Space();
    if (!Value(nullptr, type, 0)) return false;
    Space();
    return i_ == s_.size();
  }
  std::string Result() {
    const absl::string_view rest = s_.substr(copied_);
    out_.append(rest.data(), rest.size());
    return std::move(out_);
  }

 private:
  void Space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool Peek(char c) const { return i_ < s_.size() && s_[i_] == c; }

  // A string token; `raw` is its content between the quotes.
  bool String(absl::string_view* raw) {
    if (!Peek('"')) return false;
    const size_t start = ++i_;
    while (i_ < s_.size() && s_[i_] != '"') {
      const unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c < 0x20) return false;
      if (c == '\\') {
        if (++i_ >= s_.size()) return false;
        const char e = s_[i_];
        if (e == 'u') {
          for (int k = 1; k <= 4; ++k) {
            if (i_ + k >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_ + k]))) return false;
          }
          i_ += 4;
        } else if (absl::string_view("\"\\/bfnrt").find(e) == absl::string_view::npos) {
          return false;
        }
      }
      ++i_;
    }
    if (i_ >= s_.size()) return false;
    *raw = s_.substr(start, i_ - start);
    ++i_;
    return true;
  }

  bool Literal(absl::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }

  bool Number() {
    const size_t start = i_;
    if (Peek('-')) ++i_;
    auto digits = [&] {
      const size_t d = i_;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
      return i_ > d;
    };
    if (Peek('0')) {
      ++i_;
    } else if (!digits()) {
      return false;
    }
    if (Peek('.')) {
      ++i_;
      if (!digits()) return false;
    }
    if (Peek('e') || Peek('E')) {
      ++i_;
      if (Peek('+') || Peek('-')) ++i_;
      if (!digits()) return false;
    }
    return i_ > start;
  }

  // A value at `field` (null = not a known field) whose message type, for an object,
  // is `type` (null = unknown). `element` = an array element or map value already.
  bool Value(const FieldDescriptor* field, const Descriptor* type, int depth, bool element = false) {
    if (depth > kMaxDepth) return false;
    if (i_ >= s_.size()) return false;
    const char c = s_[i_];
    if (c == '{') {
      if (field != nullptr && field->is_map() && !element) return Map(field, depth + 1);
      return Object(type, depth + 1);
    }
    if (c == '[') {
      ++i_;
      Space();
      if (Peek(']')) {
        ++i_;
        return true;
      }
      const bool repeated = field != nullptr && field->is_repeated() && !element;
      while (true) {
        if (!Value(repeated ? field : nullptr, repeated ? type : nullptr, depth + 1, /*element=*/true)) return false;
        Space();
        if (Peek(',')) {
          ++i_;
          Space();
          continue;
        }
        if (!Peek(']')) return false;
        ++i_;
        return true;
      }
    }
    if (c == '"') {
      const size_t start = i_;
      absl::string_view raw;
      if (!String(&raw)) return false;
      const bool scalar_place = field != nullptr && field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE &&
                                (element || !field->is_repeated());
      if (scalar_place) {
        if (std::optional<std::string> repl = rewrite_(*field, raw)) {
          out_.append(s_.data() + copied_, start - copied_);
          out_.append(*repl);
          copied_ = i_;
        }
      }
      return true;
    }
    if (c == 't') return Literal("true");
    if (c == 'f') return Literal("false");
    if (c == 'n') return Literal("null");
    return Number();
  }

  bool Object(const Descriptor* type, int depth) {
    return Members([&](absl::string_view key) {
      const FieldDescriptor* field = type == nullptr ? nullptr : FieldNamed(type, key);
      const Descriptor* sub = field != nullptr && field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE
                                  ? field->message_type()
                                  : nullptr;
      return Value(field, sub, depth);
    });
  }

  // A map field's object: keys are map keys, values are of the map's value field.
  bool Map(const FieldDescriptor* field, int depth) {
    const FieldDescriptor* value = field->message_type()->map_value();
    const Descriptor* sub =
        value->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE ? value->message_type() : nullptr;
    return Members([&](absl::string_view) { return Value(value, sub, depth, /*element=*/true); });
  }

  // An object's members, `{"key": value, ...}`, each value read by `member(key)`.
  template <typename Member>
  bool Members(Member member) {
    ++i_;  // '{'
    Space();
    if (Peek('}')) {
      ++i_;
      return true;
    }
    while (true) {
      absl::string_view key;
      if (!String(&key)) return false;
      Space();
      if (!Peek(':')) return false;
      ++i_;
      Space();
      if (!member(key)) return false;
      Space();
      if (Peek(',')) {
        ++i_;
        Space();
        continue;
      }
      if (!Peek('}')) return false;
      ++i_;
      return true;
    }
  }

  static const FieldDescriptor* FieldNamed(const Descriptor* type, absl::string_view key) {
    for (int k = 0; k < type->field_count(); ++k) {
      const FieldDescriptor* f = type->field(k);
      if (f->name() == key || f->json_name() == key) return f;
    }
    return nullptr;
  }

  absl::string_view s_;
  const FieldStringRewrite& rewrite_;
  size_t i_ = 0;
  size_t copied_ = 0;  // s_[0, copied_) is in out_
  std::string out_;
};

}  // namespace

std::string RewriteFieldStrings(absl::string_view json, const Descriptor* type, const FieldStringRewrite& rewrite) {
  Walker w(json, rewrite);
  if (!w.Document(type)) return std::string(json);
  return w.Result();
}

}  // namespace paraplan::cli
