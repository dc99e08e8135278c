#include "client/overrides.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/json_enums.h"
#include "client/suggest.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace paraplan::cli {

namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Fields a request must not change: the server assigns them, or they name the profile.
bool Assigned(const FieldDescriptor* f) {
  if (f->containing_type() != v1::SystemProfile::descriptor()) return false;
  const std::string& n = f->name();
  return n == "name" || n == "version" || n == "created_at" || n == "origin" || n == "promoted" ||
         n == "is_default" || n == "fit_report";
}

// How a path segment shows a field: network_levels as "network".
std::string SegmentName(const FieldDescriptor* f) {
  if (f->containing_type() == v1::SystemProfile::descriptor() && f->name() == "network_levels") return "network";
  return f->name();
}

const FieldDescriptor* FieldNamed(const Descriptor* d, absl::string_view seg) {
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->name() == seg || f->json_name() == seg || SegmentName(f) == seg) return f;
  }
  return nullptr;
}

// The field that keys the elements of a repeated message ("name", "level"), or null.
const FieldDescriptor* KeyField(const FieldDescriptor* repeated) {
  const Descriptor* d = repeated->message_type();
  for (const char* key : {"name", "level"}) {
    const FieldDescriptor* f = d->FindFieldByName(key);
    if (f != nullptr && f->type() == FieldDescriptor::TYPE_STRING && !f->is_repeated()) return f;
  }
  return nullptr;
}

// Leaf paths under `m` (of type `d`), each prefixed with `prefix`.
void Collect(const Message* m, const Descriptor* d, const std::string& prefix, std::vector<std::string>* out) {
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (Assigned(f)) continue;
    const std::string path = absl::StrCat(prefix, SegmentName(f));
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
      if (!f->is_repeated()) out->push_back(path);
      continue;
    }
    if (!f->is_repeated()) {
      const Message* sub = m != nullptr ? &m->GetReflection()->GetMessage(*m, f) : nullptr;
      Collect(sub, f->message_type(), path + ".", out);
      continue;
    }
    const FieldDescriptor* key = KeyField(f);
    if (m == nullptr || key == nullptr) continue;
    const Reflection* r = m->GetReflection();
    for (int k = 0; k < r->FieldSize(*m, f); ++k) {
      const Message& e = r->GetRepeatedMessage(*m, f, k);
      Collect(&e, f->message_type(), absl::StrCat(path, ".", e.GetReflection()->GetString(e, key), "."), out);
    }
  }
}

std::vector<std::string> FieldNames(const Descriptor* d) {
  std::vector<std::string> names;
  for (int i = 0; i < d->field_count(); ++i) {
    if (!Assigned(d->field(i))) names.push_back(SegmentName(d->field(i)));
  }
  return names;
}

std::vector<std::string> NetworkLevelNames(const v1::SystemProfile& p) {
  std::vector<std::string> names;
  for (const v1::NetworkLevel& l : p.network_levels()) names.push_back(l.name());
  return names;
}

absl::Status SetValue(const Override& o, const FieldDescriptor* f, Message* m) {
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat("--set ", o.path, ": \"", o.value, "\" is not ", what));
  };
  const Reflection* r = m->GetReflection();
  const std::string& v = o.value;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT: {
      double d = 0;
      if (!absl::SimpleAtod(v, &d) || !std::isfinite(d)) return bad("a number");
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
        r->SetDouble(m, f, d);
      } else {
        r->SetFloat(m, f, static_cast<float>(d));
      }
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_INT32: {
      int32_t i = 0;
      if (!absl::SimpleAtoi(v, &i)) return bad("an integer");
      r->SetInt32(m, f, i);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      int64_t i = 0;
      if (!absl::SimpleAtoi(v, &i)) return bad("an integer");
      r->SetInt64(m, f, i);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      uint32_t i = 0;
      if (!absl::SimpleAtoi(v, &i)) return bad("a non-negative integer");
      r->SetUInt32(m, f, i);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      uint64_t i = 0;
      if (!absl::SimpleAtoi(v, &i)) return bad("a non-negative integer");
      r->SetUInt64(m, f, i);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      const std::string b = absl::AsciiStrToLower(v);
      if (b == "true" || b == "on" || b == "yes" || b == "1") {
        r->SetBool(m, f, true);
      } else if (b == "false" || b == "off" || b == "no" || b == "0") {
        r->SetBool(m, f, false);
      } else {
        return bad("true or false");
      }
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      const auto* e = EnumValueFromText(*f->enum_type(), v);
      if (e == nullptr) {
        std::vector<std::string> names;
        for (int i = 0; i < f->enum_type()->value_count(); ++i) names.push_back(f->enum_type()->value(i)->name());
        return bad(absl::StrCat("one of ", absl::StrJoin(names, ", ")));
      }
      r->SetEnum(m, f, e);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_STRING:
      r->SetString(m, f, v);
      return absl::OkStatus();
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat("--set ", o.path, ": not a value"));
}

}  // namespace

absl::StatusOr<Override> ParseOverride(absl::string_view text) {
  const size_t eq = text.find('=');
  if (eq == absl::string_view::npos || eq == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--set \"", text, "\": give PATH=VALUE, e.g. --set accelerator.memory_gib=40"));
  }
  Override o{std::string(absl::StripAsciiWhitespace(text.substr(0, eq))),
             std::string(absl::StripAsciiWhitespace(text.substr(eq + 1)))};
  if (o.value.empty()) return absl::InvalidArgumentError(absl::StrCat("--set ", o.path, ": no value after '='"));
  return o;
}

std::vector<std::string> OverridePaths(const v1::SystemProfile& profile) {
  std::vector<std::string> out;
  Collect(&profile, v1::SystemProfile::descriptor(), "", &out);
  return out;
}

absl::Status ApplyOverride(const Override& o, v1::SystemProfile* profile) {
  const std::vector<std::string> segs = absl::StrSplit(o.path, '.');
  Message* m = profile;
  std::string done;  // the path resolved so far, as written
  auto fail = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat("--set ", o.path, ": ", what));
  };
  for (size_t i = 0; i < segs.size(); ++i) {
    const std::string& seg = segs[i];
    const Descriptor* d = m->GetDescriptor();
    const FieldDescriptor* f = seg.empty() ? nullptr : FieldNamed(d, seg);
    const std::string where = done.empty() ? "a system profile" : done;
    if (f == nullptr) {
      // The closest complete paths under what resolved; else the fields there are.
      std::vector<std::string> under;
      for (const std::string& p : OverridePaths(*profile)) {
        if (done.empty() || p.rfind(done + ".", 0) == 0) under.push_back(p);
      }
      std::string hint = DidYouMean(o.path, under);
      if (hint.empty()) hint = absl::StrCat(" (", where, " has ", absl::StrJoin(FieldNames(d), ", "), ")");
      return fail(absl::StrCat("no field \"", seg, "\" in ", where, hint));
    }
    if (Assigned(f)) {
      return fail(absl::StrCat(f->name(), f->name() == "name" ? " names the profile" : " is assigned by the server",
                               "; it cannot be overridden"));
    }
    const std::string here = done.empty() ? SegmentName(f) : absl::StrCat(done, ".", SegmentName(f));
    const Reflection* r = m->GetReflection();
    const bool last = i + 1 == segs.size();
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
      if (f->is_repeated()) return fail(absl::StrCat(here, " is a list; --set changes single values"));
      if (!last) return fail(absl::StrCat(here, " is a value, not a message: nothing after it"));
      return SetValue(o, f, m);
    }
    if (!f->is_repeated()) {
      if (last) {
        return fail(absl::StrCat(here, " is a message; name one of its fields: ",
                                 absl::StrJoin(FieldNames(f->message_type()), ", ")));
      }
      m = r->MutableMessage(m, f);
      done = here;
      continue;
    }
    // A repeated message: the next segment picks the element.
    const FieldDescriptor* key = KeyField(f);
    std::vector<std::string> keys;
    for (int k = 0; k < r->FieldSize(*m, f); ++k) {
      const Message& e = r->GetRepeatedMessage(*m, f, k);
      keys.push_back(key != nullptr ? e.GetReflection()->GetString(e, key) : absl::StrCat(k));
    }
    const bool levels = f->message_type() == v1::NetworkLevel::descriptor() ||
                        f->message_type() == v1::NetworkCalibration::descriptor();
    if (last) {
      return fail(absl::StrCat(here, " is a list; name ", levels ? "a network level" : "an element", " (",
                               keys.empty() ? "it is empty" : absl::StrJoin(keys, ", "), ") and a field"));
    }
    const std::string& want = segs[++i];
    int found = -1;
    for (size_t k = 0; k < keys.size(); ++k) {
      if (keys[k] == want) found = static_cast<int>(k);
    }
    if (found < 0 && key != nullptr && key->name() == "level") {
      // Calibrating a level the profile has but has not calibrated yet: a new entry.
      const std::vector<std::string> names = NetworkLevelNames(*profile);
      if (std::find(names.begin(), names.end(), want) != names.end()) {
        Message* e = r->AddMessage(m, f);
        e->GetReflection()->SetString(e, key, want);
        found = r->FieldSize(*m, f) - 1;
      } else {
        keys = names;
      }
    }
    if (found < 0) {
      return fail(absl::StrCat(levels ? absl::StrCat("no network level \"", want, "\"")
                                      : absl::StrCat("no element \"", want, "\" in ", here),
                               DidYouMean(want, keys), " (", levels ? "levels: " : "there are: ",
                               keys.empty() ? "none" : absl::StrJoin(keys, ", "), ")"));
    }
    m = r->MutableRepeatedMessage(m, f, found);
    done = absl::StrCat(here, ".", want);
    if (i + 1 == segs.size()) return fail(absl::StrCat(done, " is a message; name one of its fields: ",
                                                       absl::StrJoin(FieldNames(f->message_type()), ", ")));
  }
  return fail("empty path");
}

}  // namespace paraplan::cli
