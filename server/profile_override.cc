#include "server/profile_override.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/descriptor.h"

namespace paraplan::server {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

bool ServerAssigned(const FieldDescriptor* f) {
  if (f->containing_type() != v1::SystemProfile::descriptor()) return false;
  for (const char* name : {"name", "version", "created_at", "origin", "promoted", "is_default", "fit_report"}) {
    if (f->name() == name) return true;
  }
  return false;
}

// One value of a scalar field as text (index -1: a singular field).
std::string ValueText(const Message& m, const FieldDescriptor* f, int i) {
  const Reflection* r = m.GetReflection();
  const bool rep = i >= 0;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return absl::StrFormat("%g", rep ? r->GetRepeatedDouble(m, f, i) : r->GetDouble(m, f));
    case FieldDescriptor::CPPTYPE_FLOAT:
      return absl::StrFormat("%g", rep ? r->GetRepeatedFloat(m, f, i) : r->GetFloat(m, f));
    case FieldDescriptor::CPPTYPE_INT32:
      return absl::StrCat(rep ? r->GetRepeatedInt32(m, f, i) : r->GetInt32(m, f));
    case FieldDescriptor::CPPTYPE_INT64:
      return absl::StrCat(rep ? r->GetRepeatedInt64(m, f, i) : r->GetInt64(m, f));
    case FieldDescriptor::CPPTYPE_UINT32:
      return absl::StrCat(rep ? r->GetRepeatedUInt32(m, f, i) : r->GetUInt32(m, f));
    case FieldDescriptor::CPPTYPE_UINT64:
      return absl::StrCat(rep ? r->GetRepeatedUInt64(m, f, i) : r->GetUInt64(m, f));
    case FieldDescriptor::CPPTYPE_BOOL:
      return (rep ? r->GetRepeatedBool(m, f, i) : r->GetBool(m, f)) ? "true" : "false";
    case FieldDescriptor::CPPTYPE_ENUM: {
      const int v = rep ? r->GetRepeatedEnumValue(m, f, i) : r->GetEnumValue(m, f);
      const google::protobuf::EnumValueDescriptor* e = f->enum_type()->FindValueByNumber(v);
      return e != nullptr ? e->name() : absl::StrCat(v);
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string s = rep ? r->GetRepeatedString(m, f, i) : r->GetString(m, f);
      if (s.size() > 40) s = absl::StrCat(s.substr(0, 40), "...");
      return absl::StrCat("\"", s, "\"");
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  return "";
}

void Diff(const Message& a, const Message& b, const std::string& prefix, std::vector<std::string>* out) {
  const google::protobuf::Descriptor* d = a.GetDescriptor();
  const Reflection* ra = a.GetReflection();
  const Reflection* rb = b.GetReflection();
  for (int k = 0; k < d->field_count(); ++k) {
    const FieldDescriptor* f = d->field(k);
    if (ServerAssigned(f)) continue;
    const std::string path = absl::StrCat(prefix, f->name());
    const bool message = f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
    if (!f->is_repeated()) {
      if (message) {
        if (ra->HasField(a, f) || rb->HasField(b, f)) {
          Diff(ra->GetMessage(a, f), rb->GetMessage(b, f), absl::StrCat(path, "."), out);
        }
        continue;
      }
      const std::string va = ValueText(a, f, -1), vb = ValueText(b, f, -1);
      if (va != vb) out->push_back(absl::StrCat(path, " ", va, " -> ", vb));
      continue;
    }
    const int na = ra->FieldSize(a, f), nb = rb->FieldSize(b, f);
    if (na != nb) {
      out->push_back(absl::StrCat(path, ": ", na, " -> ", nb, " entries"));
      continue;
    }
    for (int i = 0; i < na; ++i) {
      const std::string item = absl::StrCat(path, "[", i, "]");
      if (message) {
        Diff(ra->GetRepeatedMessage(a, f, i), rb->GetRepeatedMessage(b, f, i), absl::StrCat(item, "."), out);
        continue;
      }
      const std::string va = ValueText(a, f, i), vb = ValueText(b, f, i);
      if (va != vb) out->push_back(absl::StrCat(item, " ", va, " -> ", vb));
    }
  }
}

}  // namespace

std::vector<std::string> ProfileDifferences(const v1::SystemProfile& stored, const v1::SystemProfile& changed) {
  std::vector<std::string> out;
  Diff(stored, changed, "", &out);
  return out;
}

std::string OverrideWarning(const v1::SystemProfile& stored, const v1::SystemProfile& changed) {
  std::vector<std::string> diffs = ProfileDifferences(stored, changed);
  const std::string head = absl::StrCat("profile_override: ", stored.name(), "@", stored.version(),
                                        " as changed for this request only, not stored");
  if (diffs.empty()) return absl::StrCat(head, " (no field differs from the stored version)");
  const size_t more = diffs.size() > kMaxListedDifferences ? diffs.size() - kMaxListedDifferences : 0;
  diffs.resize(std::min<size_t>(diffs.size(), kMaxListedDifferences));
  return absl::StrCat(head, ": ", absl::StrJoin(diffs, "; "), more > 0 ? absl::StrCat("; and ", more, " more") : "");
}

std::string UnstoredOverrideWarning(const v1::SystemProfile& used) {
  return absl::StrCat("profile_override: \"", used.name(),
                      "\" is not a stored profile version; the request's own profile was used as given, not stored");
}

}  // namespace paraplan::server
