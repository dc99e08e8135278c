#include "client/csv.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace paraplan::cli {

std::string CsvField(absl::string_view field) {
  if (field.find_first_of(",\"\r\n") == absl::string_view::npos) return std::string(field);
  return absl::StrCat("\"", absl::StrReplaceAll(field, {{"\"", "\"\""}}), "\"");
}

std::string CsvRecord(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    out += CsvField(fields[i]);
  }
  return out + "\r\n";
}

}  // namespace paraplan::cli
