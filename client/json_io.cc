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

// -0 read as 0 in every floating-point field, nested ones included: no field of ours
// tells them apart, and JSON prints -0 as "-0", which reads back as 0 (protobuf then
// serializes the two differently).
void ZeroNegativeZeros(google::protobuf::Message* m) {
  const google::protobuf::Reflection* r = m->GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(*m, &fields);
  for (const FieldDescriptor* f : fields) {
    const auto type = f->cpp_type();
    if (type == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (f->is_repeated()) {
        for (int i = 0; i < r->FieldSize(*m, f); ++i) ZeroNegativeZeros(r->MutableRepeatedMessage(m, f, i));
      } else {
        ZeroNegativeZeros(r->MutableMessage(m, f));
      }
    } else if (type == FieldDescriptor::CPPTYPE_DOUBLE) {
      if (f->is_repeated()) {
        for (int i = 0; i < r->FieldSize(*m, f); ++i) {
          if (r->GetRepeatedDouble(*m, f, i) == 0) r->SetRepeatedDouble(m, f, i, 0.0);
        }
      } else if (r->GetDouble(*m, f) == 0 && std::signbit(r->GetDouble(*m, f))) {
        r->SetDouble(m, f, 0.0);
      }
    } else if (type == FieldDescriptor::CPPTYPE_FLOAT) {
      if (f->is_repeated()) {
        for (int i = 0; i < r->FieldSize(*m, f); ++i) {
          if (r->GetRepeatedFloat(*m, f, i) == 0) r->SetRepeatedFloat(m, f, i, 0.0f);
        }
      } else if (r->GetFloat(*m, f) == 0 && std::signbit(r->GetFloat(*m, f))) {
        r->SetFloat(m, f, 0.0f);
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
