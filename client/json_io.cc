#include "client/json_io.h"

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "client/input.h"
#include "client/json_enums.h"
#include "client/json_error.h"
#include "client/json_int64.h"
#include "google/protobuf/message.h"

namespace paraplan::cli {

absl::Status LoadJsonFile(const std::string& path, google::protobuf::Message* m) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseJsonText(DisplayName(path), NormalizeEnumNames(*text, m->GetDescriptor()), m);
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
  return ParseJsonLine(file, line, normalized, m);
}

std::string PrintJson(const google::protobuf::Message& m, bool pretty) {
  return Int64AsNumbers(ToJson(m, pretty), m.GetDescriptor());
}

}  // namespace paraplan::cli
