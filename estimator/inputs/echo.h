// Echoing user-supplied strings in error messages: at most kMaxEchoedChars bytes, cut
// at a UTF-8 character boundary, so an error that quotes a request always fits in gRPC
// metadata. Pure functions; thread-safe.
#ifndef PARAPLAN_ESTIMATOR_INPUTS_ECHO_H_
#define PARAPLAN_ESTIMATOR_INPUTS_ECHO_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace paraplan {

// How much of a user-supplied string an error message repeats.
inline constexpr size_t kMaxEchoedChars = 100;

// `text` cut to at most `max_bytes` bytes at a UTF-8 character boundary, with "..."
// appended when cut; unchanged when it fits.
std::string Abbreviated(absl::string_view text, size_t max_bytes = kMaxEchoedChars);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_INPUTS_ECHO_H_
