#include "report/cell_text.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/units.h"

namespace paraplan::cli {

std::string SecondsText(double s) {
  if (s >= 3600 * 24) return absl::StrFormat("%.1f d", s / 86400);
  if (s >= 3600) return absl::StrFormat("%.1f h", s / 3600);
  if (s >= 1) return absl::StrFormat("%.3f s", s);
  return absl::StrFormat("%.2f ms", s * 1e3);
}

std::string GibText(double bytes) { return absl::StrFormat("%.1f", bytes / kGiB); }

std::string SiText(double v) {
  const char* units[] = {"", "k", "M", "G", "T", "P"};
  int u = 0;
  while (std::abs(v) >= 1000 && u < 5) {
    v /= 1000;
    ++u;
  }
  return absl::StrFormat("%.3g%s", v, units[u]);
}

const char* RecomputeText(v1::Recompute r) {
  switch (r) {
    case v1::RECOMPUTE_SELECTIVE:
      return "selective";
    case v1::RECOMPUTE_FULL:
      return "full";
    default:
      return "none";
  }
}

std::string RecomputeText(const v1::ParallelConfig& c) {
  std::string s = RecomputeText(c.recompute());
  if (c.recompute() == v1::RECOMPUTE_SELECTIVE && c.recompute_modules_size() > 0) {
    absl::StrAppend(&s, " (", absl::StrJoin(c.recompute_modules(), ", "), ")");
  }
  return s;
}

const char* ScheduleText(const v1::ParallelConfig& c) {
  if (c.pipeline_parallel() <= 1) return "-";
  switch (c.pipeline_schedule()) {
    case v1::SCHEDULE_GPIPE:
      return "gpipe";
    case v1::SCHEDULE_INTERLEAVED_1F1B:
      return "interleaved";
    case v1::SCHEDULE_ZERO_BUBBLE:
      return "zero-bubble";
    default:
      return c.virtual_pipeline_stages() > 1 ? "interleaved" : "1f1b";
  }
}

}  // namespace paraplan::cli
