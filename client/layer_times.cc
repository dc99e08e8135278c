#include "client/layer_times.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace paraplan::cli {

absl::StatusOr<std::vector<v1::LayerTiming>> ParseLayerTimes(const std::string& csv) {
  std::vector<v1::LayerTiming> rows;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(csv, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = absl::StrSplit(line, ',');
    for (std::string& s : f) s = std::string(absl::StripAsciiWhitespace(s));
    if (rows.empty() && f.size() == 4 && f[0] == "workload") continue;  // header
    if (f.size() != 4) {
      return absl::InvalidArgumentError(absl::StrCat(
          "line ", line_no, ": ", f.size(), " columns; want workload,layer,forward_ms,backward_ms"));
    }
    if (f[0].empty() || f[1].empty()) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line_no, ": ", f[0].empty() ? "workload" : "layer",
                                                     " must not be empty"));
    }
    double ms[2];
    for (int i = 0; i < 2; ++i) {
      if (!absl::SimpleAtod(f[2 + i], &ms[i]) || !std::isfinite(ms[i]) || ms[i] < 0) {
        return absl::InvalidArgumentError(absl::StrCat("line ", line_no, ": ", i == 0 ? "forward_ms" : "backward_ms",
                                                       " \"", f[2 + i], "\" is not a time in milliseconds >= 0"));
      }
    }
    v1::LayerTiming t;
    t.set_workload(f[0]);
    t.set_layer(f[1]);
    t.set_forward_s_per_sample(ms[0] * 1e-3);
    t.set_backward_s_per_sample(ms[1] * 1e-3);
    rows.push_back(t);
  }
  if (rows.empty()) return absl::InvalidArgumentError("no rows: want workload,layer,forward_ms,backward_ms lines");
  return rows;
}

int MergeLayerTimes(const std::vector<v1::LayerTiming>& rows, v1::SystemProfile* profile) {
  int replaced = 0;
  for (const v1::LayerTiming& row : rows) {
    bool found = false;
    for (v1::LayerTiming& t : *profile->mutable_layer_timings()) {
      if (t.workload() == row.workload() && t.layer() == row.layer()) {
        t = row;
        found = true;
        ++replaced;
        break;
      }
    }
    if (!found) *profile->add_layer_timings() = row;
  }
  return replaced;
}

}  // namespace paraplan::cli
