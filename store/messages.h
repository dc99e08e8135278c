// Error messages both store implementations share, so that they say the same words: a
// caller's string is repeated at most 100 bytes long (cut at a UTF-8 character
// boundary, so that any error fits in gRPC metadata).
#ifndef PARAPLAN_STORE_MESSAGES_H_
#define PARAPLAN_STORE_MESSAGES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace paraplan::store {

// `text` as an error message repeats it: at most 100 bytes, then "...".
std::string Shown(absl::string_view text);

// NOT_FOUND: profile "NAME" not found.
absl::Status ProfileNotFound(absl::string_view name);
// NOT_FOUND: profile "NAME" has no version V (latest is L) — without the parenthesis
// when latest is 0.
absl::Status VersionNotFound(absl::string_view name, int version, int latest);
// ALREADY_EXISTS: profile "NAME" exists; UpdateProfile writes a new version.
absl::Status ProfileExists(absl::string_view name);
// ALREADY_EXISTS: measurement "ID" is already stored.
absl::Status MeasurementExists(absl::string_view id);

}  // namespace paraplan::store

#endif  // PARAPLAN_STORE_MESSAGES_H_
