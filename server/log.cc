#include "server/log.h"

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace paraplan::server {

absl::StatusOr<LogLevel> ParseLogLevel(absl::string_view name) {
  if (name == "debug") return LogLevel::kDebug;
  if (name == "info") return LogLevel::kInfo;
  if (name == "warn" || name == "warning") return LogLevel::kWarn;
  if (name == "error") return LogLevel::kError;
  if (name == "off") return LogLevel::kOff;
  return absl::InvalidArgumentError(
      absl::StrCat("--log-level: \"", name.substr(0, 40), "\" is not debug, info, warn, error or off"));
}

absl::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
    case LogLevel::kOff:
      return "off";
  }
  return "info";
}

void WriteLogLine(LogLevel level, absl::string_view fields) {
  const std::string line =
      absl::StrCat("ts=", absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()),
                   " level=", LogLevelName(level), " ", fields, "\n");
  std::fwrite(line.data(), 1, line.size(), stderr);
}

std::string LogQuote(absl::string_view value, size_t max_chars) {
  std::string out = "\"";
  for (char c : value.substr(0, max_chars)) {
    if (c == '"') c = '\'';
    if (c == '\n' || c == '\r') c = ' ';
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

}  // namespace paraplan::server
