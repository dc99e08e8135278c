#include "client/network_format.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "client/format.h"
#include "client/input.h"
#include "client/json_io.h"

namespace paraplan::cli {

namespace {

std::string Ms(double s) { return s > 0 ? absl::StrFormat("%.3f", 1e3 * s) : "-"; }

std::string Ratio(double a, double b) { return a > 0 && b > 0 ? absl::StrFormat("%.2f", a / b) : "-"; }


}  // namespace

std::string FormatSimulate(const v1::SimulateResponse& r) {
  const v1::Estimate& e = r.analytic();
  std::string out = absl::StrCat("profile      ", e.profile_name(), "@", e.profile_version(), ", ", e.num_gpus(),
                                 " GPUs\nconfig       ", ConfigSummary(e.config()), "\n\n");
  Table t({"collective", "dim", "algorithm", "level", "group", "MiB", "calls", "analytic ms", "simulated ms",
           "sim/analytic", "contended ms"});
  for (const v1::SimulatedCollective& c : r.collectives()) {
    const v1::CollectiveUse& u = c.use();
    const bool direct = u.kind() == v1::COLLECTIVE_SEND_RECV || u.kind() == v1::COLLECTIVE_ALL_TO_ALL;
    t.Add({EnumText(v1::CollectiveKind_descriptor(), u.kind()), u.dimension(), direct ? "-" : EnumText(v1::CollectiveAlgorithm_descriptor(), u.algorithm()), u.level_name(),
           absl::StrCat(u.group_size(), u.stride() > 1 ? absl::StrCat(" /", u.stride()) : ""),
           absl::StrFormat("%.2f", u.bytes() / (1024.0 * 1024.0)), absl::StrFormat("%.0f", u.calls()),
           Ms(u.seconds_per_call()), Ms(c.simulated_alone_s()), Ratio(c.simulated_alone_s(), u.seconds_per_call()),
           Ms(c.simulated_contended_s())});
  }
  absl::StrAppend(&out, t.Render(), "\n");
  absl::StrAppend(&out, absl::StrFormat("iteration    analytic %s, simulated %s (%+.1f%%)\n",
                                        SecondsText(r.analytic_iteration_time_s()),
                                        SecondsText(r.simulated_iteration_time_s()),
                                        100 * (r.simulated_iteration_time_s() / r.analytic_iteration_time_s() - 1)));
  for (const std::string& n : r.notes()) absl::StrAppend(&out, "note: ", n, "\n");
  return out;
}

std::string FormatCodesign(const v1::CodesignResponse& r) {
  std::string out;
  if (r.designs_size() == 0) return "no designs\n";
  Table per({"design", "workload", "best plan", "iter s", "energy kJ", "cost $"});
  for (const v1::CodesignDesign& d : r.designs()) {
    for (const v1::CodesignCell& c : d.cells()) {
      const std::string design = absl::StrCat(d.profile(), "@", d.profile_version());
      if (!c.fits()) {
        per.Add({design, c.workload(), absl::StrCat("none fits: ", c.infeasible_reason().substr(0, 60)), "-", "-", "-"});
        continue;
      }
      const v1::Estimate& b = c.best();
      // Degrees and micro-batch: the first two parts of the summary.
      const std::vector<std::string> parts = absl::StrSplit(ConfigSummary(b.config()), ", ");
      per.Add({design, c.workload(), absl::StrCat(parts[0], parts.size() > 1 ? absl::StrCat(", ", parts[1]) : ""), absl::StrFormat("%.3f", b.iteration_time_s()),
               absl::StrFormat("%.1f", b.energy_per_iteration_j() / 1e3), absl::StrFormat("%.4f", b.cost_per_iteration_usd())});
    }
  }
  absl::StrAppend(&out, per.Render(), "\n");
  Table total({"rank", "design", "weighted s", "weighted kJ", "weighted $"});
  std::vector<const v1::CodesignDesign*> ranked;
  for (const v1::CodesignDesign& d : r.designs()) ranked.push_back(&d);
  std::sort(ranked.begin(), ranked.end(), [](auto* a, auto* b) { return a->rank() < b->rank(); });
  for (const v1::CodesignDesign* d : ranked) {
    auto num = [d](double v, int digits) {
      return d->fits_all() && std::isfinite(v) ? absl::StrFormat("%.*f", digits, v) : std::string("does not fit");
    };
    total.Add({absl::StrCat(d->rank()), absl::StrCat(d->profile(), "@", d->profile_version()),
               num(d->weighted_time_s(), 3), num(d->weighted_energy_j() / 1e3, 1), num(d->weighted_cost_usd(), 4)});
  }
  absl::StrAppend(&out, total.Render());
  if (r.best_by_time().empty()) {
    absl::StrAppend(&out, "no design fits every workload\n");
  } else {
    absl::StrAppend(&out, "best by time: ", r.best_by_time(), "; by energy: ", r.best_by_energy(), "; by cost: ",
                    r.best_by_cost(), "\n");
  }
  if (r.truncated()) absl::StrAppend(&out, "warning: a search hit the deadline; its plan may not be the best\n");
  return out;
}

absl::StatusOr<std::vector<v1::CodesignWorkload>> ReadCodesignWorkloads(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  std::vector<v1::CodesignWorkload> out;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    ++line_no;
    absl::string_view t = absl::StripAsciiWhitespace(line);
    if (t.empty() || t.front() == '#') continue;
    v1::CodesignWorkload w;
    if (absl::Status s = LoadJsonLine(path, line_no, t, &w); !s.ok()) return s;
    out.push_back(std::move(w));
  }
  if (out.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no workloads"));
  return out;
}

}  // namespace paraplan::cli
