#include "client/json_io.h"

#include <cmath>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "client/input.h"
#include "client/json_enums.h"
#include "client/json_error.h"
#include "client/json_int64.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace paraplan::cli {

namespace {

using google::protobuf::FieldDescriptor;

// Element `i` of a repeated floating-point field (or the singular field, i < 0) set to 0
// where it is -0.
void ZeroIfNegativeZero(const google::protobuf::Reflection* r, google::protobuf::Message* m,
                        const FieldDescriptor* f, int i) {
  const bool dbl = f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE;
  const double v = dbl ? (i < 0 ? r->GetDouble(*m, f) : r->GetRepeatedDouble(*m, f, i))
                       : (i < 0 ? r->GetFloat(*m, f) : r->GetRepeatedFloat(*m, f, i));
  if (v != 0 || !std::signbit(v)) return;
  if (dbl) {
    i < 0 ? r->SetDouble(m, f, 0.0) : r->SetRepeatedDouble(m, f, i, 0.0);
  } else {
    i < 0 ? r->SetFloat(m, f, 0.0f) : r->SetRepeatedFloat(m, f, i, 0.0f);
  }
}

// -0 read as 0 in every floating-point field, nested ones included: no field of ours
// tells them apart, and JSON prints -0 as "-0", which reads back as 0 (protobuf then
// serializes the two differently).
void ZeroNegativeZeros(google::protobuf::Message* m) {
  const google::protobuf::Reflection* r = m->GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(*m, &fields);
  for (const FieldDescriptor* f : fields) {
    const auto type = f->cpp_type();
    const bool floating = type == FieldDescriptor::CPPTYPE_DOUBLE || type == FieldDescriptor::CPPTYPE_FLOAT;
    if (type != FieldDescriptor::CPPTYPE_MESSAGE && !floating) continue;
    const int n = f->is_repeated() ? r->FieldSize(*m, f) : 1;
    for (int i = 0; i < n; ++i) {
      const int index = f->is_repeated() ? i : -1;
      if (floating) {
        ZeroIfNegativeZero(r, m, f, index);
      } else {
        ZeroNegativeZeros(index < 0 ? r->MutableMessage(m, f) : r->MutableRepeatedMessage(m, f, index));
      }
    }
  }
}

absl::Status Loaded(absl::Status s, google::protobuf::Message* m) {
  if (s.ok()) ZeroNegativeZeros(m);
  return s;
}

}  // namespace

absl::Status LoadJsonFile(const std::string& path, google::protobuf::Message* m) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return Loaded(ParseJsonText(DisplayName(path), NormalizeEnumNames(*text, m->GetDescriptor()), m), m);
}

absl::Status LoadJsonLine(absl::string_view file, int line, absl::string_view text, google::protobuf::Message* m) {
  // An enum value that means nothing: refused here with the values it may take (protobuf's
  // own message names neither), naming the line.
  std::optional<std::string> bad;
  if (!JsonSyntaxErrorPosition(text)) bad = UnmappableEnumValue(text, m->GetDescriptor());
  if (bad) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ":", line, ": not a valid ", m->GetDescriptor()->name(), ": ", *bad));
  }
  const std::string normalized = NormalizeEnumNames(text, m->GetDescriptor());
  return Loaded(ParseJsonLine(file, line, normalized, m), m);
}

std::string PrintJson(const google::protobuf::Message& m, bool pretty) {
  return Int64AsNumbers(ToJson(m, pretty), m.GetDescriptor());
}

}  // namespace paraplan::cli
