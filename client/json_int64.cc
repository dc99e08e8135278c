#include "client/json_int64.h"

#include "client/json_fields.h"
#include "google/protobuf/descriptor.h"

namespace paraplan::cli {

namespace {

// "-12", "0", "18446744073709551615": what the printer writes for a 64-bit integer.
bool IsInteger(absl::string_view s) {
  if (!s.empty() && s[0] == '-') s.remove_prefix(1);
  if (s.empty() || s.size() > 20) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return s.size() == 1 || s[0] != '0';
}

}  // namespace

std::string Int64AsNumbers(absl::string_view json, const google::protobuf::Descriptor* type) {
  return RewriteFieldStrings(
      json, type,
      [](const google::protobuf::FieldDescriptor& f, absl::string_view raw) -> std::optional<std::string> {
        const auto t = f.cpp_type();
        if (t != google::protobuf::FieldDescriptor::CPPTYPE_INT64 &&
            t != google::protobuf::FieldDescriptor::CPPTYPE_UINT64) {
          return std::nullopt;
        }
        if (!IsInteger(raw)) return std::nullopt;
        return std::string(raw);
      });
}

}  // namespace paraplan::cli
