#include "client/json_enums.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/json_fields.h"
#include "google/protobuf/descriptor.h"

namespace paraplan::cli {

namespace {

// The prefix every value name of `e` starts with, up to and including its last '_'
// ("RECOMPUTE_"); "" when the names share none.
std::string CommonPrefix(const google::protobuf::EnumDescriptor& e) {
  if (e.value_count() == 0) return "";
  std::string prefix = e.value(0)->name();
  for (int i = 1; i < e.value_count(); ++i) {
    const std::string& n = e.value(i)->name();
    size_t k = 0;
    while (k < prefix.size() && k < n.size() && prefix[k] == n[k]) ++k;
    prefix.resize(k);
  }
  const size_t underscore = prefix.rfind('_');
  return underscore == std::string::npos ? "" : prefix.substr(0, underscore + 1);
}

}  // namespace

const google::protobuf::EnumValueDescriptor* EnumValueFromText(const google::protobuf::EnumDescriptor& e,
                                                               absl::string_view text) {
  if (const auto* v = e.FindValueByName(std::string(text))) return v;
  std::string upper = absl::AsciiStrToUpper(text);
  for (char& c : upper) {
    if (c == '-' || c == ' ') c = '_';
  }
  if (upper.empty()) return nullptr;
  if (const auto* v = e.FindValueByName(upper)) return v;
  const std::string prefix = CommonPrefix(e);
  if (prefix.empty()) return nullptr;
  return e.FindValueByName(absl::StrCat(prefix, upper));
}

std::string NormalizeEnumNames(absl::string_view json, const google::protobuf::Descriptor* type) {
  return RewriteFieldStrings(
      json, type,
      [](const google::protobuf::FieldDescriptor& f, absl::string_view raw) -> std::optional<std::string> {
        if (f.type() != google::protobuf::FieldDescriptor::TYPE_ENUM) return std::nullopt;
        const auto* v = EnumValueFromText(*f.enum_type(), raw);
        if (v == nullptr || v->name() == raw) return std::nullopt;
        return absl::StrCat("\"", v->name(), "\"");
      });
}

}  // namespace paraplan::cli

namespace paraplan::cli {

std::optional<std::string> UnmappableEnumValue(absl::string_view json, const google::protobuf::Descriptor* type) {
  std::optional<std::string> first;
  RewriteFieldStrings(
      json, type,
      [&first](const google::protobuf::FieldDescriptor& f, absl::string_view raw) -> std::optional<std::string> {
        if (first || f.type() != google::protobuf::FieldDescriptor::TYPE_ENUM) return std::nullopt;
        const google::protobuf::EnumDescriptor& e = *f.enum_type();
        if (EnumValueFromText(e, raw) != nullptr) return std::nullopt;
        // The names as they may be written: lower case, without the shared prefix.
        const std::string prefix = CommonPrefix(e);
        std::vector<std::string> names;
        for (int i = 0; i < e.value_count(); ++i) {
          const std::string& n = e.value(i)->name();
          if (absl::EndsWith(n, "_UNSPECIFIED")) continue;
          names.push_back(absl::AsciiStrToLower(n.substr(n.rfind(prefix, 0) == 0 ? prefix.size() : 0)));
        }
        first = absl::StrCat(f.name(), ": \"", raw, "\" is not one of ", absl::StrJoin(names, ", "));
        return std::nullopt;
      });
  return first;
}

}  // namespace paraplan::cli
