#include "client/suggest.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace paraplan::cli {

int EditDistance(absl::string_view a, absl::string_view b) {
  const size_t n = a.size(), m = b.size();
  // Three rows: the one two back is needed for transpositions.
  std::vector<int> back2(m + 1), back(m + 1), row(m + 1);
  for (size_t j = 0; j <= m; ++j) back[j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= m; ++j) {
      const bool same = absl::ascii_tolower(static_cast<unsigned char>(a[i - 1])) ==
                        absl::ascii_tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({back[j] + 1, row[j - 1] + 1, back[j - 1] + (same ? 0 : 1)});
      if (i > 1 && j > 1 && absl::ascii_tolower(static_cast<unsigned char>(a[i - 1])) ==
                                absl::ascii_tolower(static_cast<unsigned char>(b[j - 2])) &&
          absl::ascii_tolower(static_cast<unsigned char>(a[i - 2])) ==
              absl::ascii_tolower(static_cast<unsigned char>(b[j - 1]))) {
        row[j] = std::min(row[j], back2[j - 2] + 1);
      }
    }
    std::swap(back2, back);
    std::swap(back, row);
  }
  return back[m];
}

std::vector<std::string> ClosestWords(absl::string_view word, const std::vector<std::string>& candidates,
                                      size_t max) {
  const int limit = word.size() <= 4 ? 1 : word.size() <= 8 ? 2 : 3;
  std::vector<std::pair<int, size_t>> scored;  // (distance, index)
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string& c = candidates[i];
    if (c == word) continue;
    const int d = EditDistance(word, c);
    const bool prefix = word.size() >= 3 && absl::StartsWithIgnoreCase(c, word);
    if (d <= limit || prefix) scored.push_back({prefix ? std::min(d, limit) : d, i});
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [d, i] : scored) {
    if (out.size() >= max) break;
    if (std::find(out.begin(), out.end(), candidates[i]) == out.end()) out.push_back(candidates[i]);
  }
  return out;
}

std::string DidYouMean(absl::string_view word, const std::vector<std::string>& candidates, absl::string_view prefix) {
  const std::vector<std::string> close = ClosestWords(word, candidates);
  if (close.empty()) return "";
  std::string out = " (did you mean ";
  for (size_t i = 0; i < close.size(); ++i) {
    if (i > 0) absl::StrAppend(&out, i + 1 == close.size() ? " or " : ", ");
    absl::StrAppend(&out, prefix, close[i]);
  }
  return absl::StrCat(out, "?)");
}

}  // namespace paraplan::cli
