// "Did you mean" for the CLI: the known words closest to a mistyped one.
//
// Contract: pure functions, no I/O. EditDistance is the Levenshtein distance (insert,
// delete, substitute; a swap of two neighbours counts 1, as in optimal string alignment)
// over bytes, ASCII case folded. ClosestWords returns at most `max` candidates within
// a distance that grows with the word (1 for up to 4 bytes, 2 up to 8, 3 beyond) or that
// start with the word (a prefix of 3+ bytes), closest first, ties in candidate order.
// DidYouMean formats them: "" (none), " (did you mean --gpus?)" or
// " (did you mean a, b or c?)", each candidate with `prefix` in front.
#ifndef PARAPLAN_CLIENT_SUGGEST_H_
#define PARAPLAN_CLIENT_SUGGEST_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace paraplan::cli {

int EditDistance(absl::string_view a, absl::string_view b);

std::vector<std::string> ClosestWords(absl::string_view word, const std::vector<std::string>& candidates,
                                      size_t max = 3);

std::string DidYouMean(absl::string_view word, const std::vector<std::string>& candidates,
                       absl::string_view prefix = "");

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_SUGGEST_H_
