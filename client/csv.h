// CSV output (RFC 4180): fields separated by commas, records ended by CRLF; a field
// that holds a comma, a double quote, CR or LF is enclosed in double quotes, with each
// double quote inside doubled. Pure functions.
#ifndef PARAPLAN_CLIENT_CSV_H_
#define PARAPLAN_CLIENT_CSV_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace paraplan::cli {

std::string CsvField(absl::string_view field);

// One record, CRLF included.
std::string CsvRecord(const std::vector<std::string>& fields);

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_CSV_H_
