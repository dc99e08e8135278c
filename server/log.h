// Log: one structured line per event on stderr, logfmt style:
//   ts=2026-01-02T03:04:05.678Z level=info rpc=Plan code=OK duration_ms=90.7 service=... peer=...
// Filtering is the caller's (it holds the configured minimum level); WriteLogLine only
// formats and writes. Thread-safe: each line is written with one fwrite.
#ifndef PARAPLAN_SERVER_LOG_H_
#define PARAPLAN_SERVER_LOG_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paraplan::server {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

// "debug", "info", "warn" (or "warning"), "error", "off"; INVALID_ARGUMENT otherwise.
absl::StatusOr<LogLevel> ParseLogLevel(absl::string_view name);
absl::string_view LogLevelName(LogLevel level);

// Writes "ts=<now, RFC 3339 UTC> level=<level> <fields>\n" to stderr.
void WriteLogLine(LogLevel level, absl::string_view fields);

// `value` quoted for logfmt: inner quotes become ', newlines become spaces, at most
// `max_chars` characters.
std::string LogQuote(absl::string_view value, size_t max_chars = 300);

}  // namespace paraplan::server

#endif  // PARAPLAN_SERVER_LOG_H_
