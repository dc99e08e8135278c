#include "client/network_format.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "client/csv.h"
#include "client/format.h"
#include "client/input.h"
#include "client/json_enums.h"
#include "client/json_io.h"
#include "report/cell_text.h"

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
    t.Add({EnumText(v1::CollectiveKind_descriptor(), u.kind()), u.dimension(), AlgorithmText(u), u.level_name(),
           absl::StrCat(u.group_size(), u.stride() > 1 ? absl::StrCat(" /", u.stride()) : ""),
           absl::StrFormat("%.2f", u.bytes() / (1024.0 * 1024.0)), absl::StrFormat("%.0f", u.calls()),
           Ms(u.seconds_per_call()), Ms(c.simulated_alone_s()), Ratio(c.simulated_alone_s(), u.seconds_per_call()),
           Ms(c.simulated_contended_s())});
  }
  absl::StrAppend(&out, t.Render(), "\n");
  double change = r.analytic_iteration_time_s() > 0
                      ? 100 * (r.simulated_iteration_time_s() / r.analytic_iteration_time_s() - 1)
                      : 0;
  if (std::fabs(change) < 0.05) change = 0;  // "+0.0%", never "-0.0%"
  absl::StrAppend(&out, absl::StrFormat("iteration    analytic %s, simulated %s (%+.1f%%)\n",
                                        SecondsText(r.analytic_iteration_time_s()),
                                        SecondsText(r.simulated_iteration_time_s()), change));
  for (const std::string& n : r.notes()) absl::StrAppend(&out, "note: ", n, "\n");
  return out;
}

namespace {

std::string DesignName(const v1::CodesignDesign& d) { return absl::StrCat(d.profile(), "@", d.profile_version()); }

std::string Num(double v) { return absl::StrFormat("%.9g", v); }

// One record per design x workload, machine units; the design's totals on each.
std::string CodesignCsv(const v1::CodesignResponse& r) {
  std::string out = CsvRecord({"design", "rank", "fits_all", "weighted_time_s", "weighted_energy_j",
                               "weighted_cost_usd", "workload", "fits", "tensor_parallel", "pipeline_parallel",
                               "data_parallel", "context_parallel", "expert_parallel", "virtual_pipeline_stages",
                               "micro_batch_size", "global_batch_size", "config", "iteration_time_s",
                               "samples_per_s", "mfu", "energy_per_iteration_j", "cost_per_iteration_usd",
                               "time_to_train_s", "bottleneck", "infeasible_reason"});
  auto deg = [](int v) { return absl::StrCat(v > 0 ? v : 1); };
  for (const v1::CodesignDesign& d : r.designs()) {
    auto total = [&d](double v) { return d.fits_all() && std::isfinite(v) ? Num(v) : std::string(); };
    for (const v1::CodesignCell& c : d.cells()) {
      std::vector<std::string> row = {DesignName(d),
                                      absl::StrCat(d.rank()),
                                      d.fits_all() ? "true" : "false",
                                      total(d.weighted_time_s()),
                                      total(d.weighted_energy_j()),
                                      total(d.weighted_cost_usd()),
                                      c.workload(),
                                      c.fits() ? "true" : "false"};
      if (c.fits()) {
        const v1::Estimate& e = c.best();
        const v1::ParallelConfig& k = e.config();
        for (std::string v :
             {deg(k.tensor_parallel()), deg(k.pipeline_parallel()), deg(k.data_parallel()), deg(k.context_parallel()),
              deg(k.expert_parallel()), deg(k.virtual_pipeline_stages()), deg(k.micro_batch_size()),
              absl::StrCat(k.global_batch_size()), ConfigSummary(k), Num(e.iteration_time_s()), Num(e.samples_per_s()),
              Num(e.mfu()), Num(e.energy_per_iteration_j()), Num(e.cost_per_iteration_usd()),
              e.time_to_train_s() > 0 ? Num(e.time_to_train_s()) : std::string(), e.bottleneck(), std::string()}) {
          row.push_back(std::move(v));
        }
      } else {
        row.resize(row.size() + 16);
        row.push_back(c.infeasible_reason());
      }
      out += CsvRecord(row);
    }
  }
  return out;
}

}  // namespace

std::string FormatCodesign(const v1::CodesignResponse& r, TableStyle style) {
  if (style == TableStyle::kCsv) return CodesignCsv(r);
  std::string out;
  if (r.designs_size() == 0) return "no designs\n";
  const bool wide = style == TableStyle::kWide;
  bool train = false;  // a column for time to train when some best plan knows it
  for (const v1::CodesignDesign& d : r.designs()) {
    for (const v1::CodesignCell& c : d.cells()) train = train || (c.fits() && c.best().time_to_train_s() > 0);
  }
  std::vector<std::string> headers = {"design", "workload", "best plan", "iter s", "energy kJ", "cost $"};
  if (wide) {
    headers.insert(headers.end(), {"samples/s", "MFU %", "bottleneck"});
    if (train) headers.push_back("time to train");
  }
  Table per(headers);
  for (const v1::CodesignDesign& d : r.designs()) {
    for (const v1::CodesignCell& c : d.cells()) {
      const std::string design = DesignName(d);
      if (!c.fits()) {
        const std::string reason = wide ? c.infeasible_reason() : c.infeasible_reason().substr(0, 60);
        std::vector<std::string> row = {design, c.workload(), absl::StrCat("none fits: ", reason), "-", "-", "-"};
        if (wide) row.resize(headers.size(), "-");
        per.Add(std::move(row));
        continue;
      }
      const v1::Estimate& b = c.best();
      std::string plan = ConfigSummary(b.config());
      if (!wide) {
        // Degrees and micro-batch: the first two parts of the summary.
        const std::vector<std::string> parts = absl::StrSplit(plan, ", ");
        plan = absl::StrCat(parts[0], parts.size() > 1 ? absl::StrCat(", ", parts[1]) : "");
      }
      std::vector<std::string> row = {design,
                                      c.workload(),
                                      plan,
                                      absl::StrFormat("%.3f", b.iteration_time_s()),
                                      absl::StrFormat("%.1f", b.energy_per_iteration_j() / 1e3),
                                      absl::StrFormat("%.4f", b.cost_per_iteration_usd())};
      if (wide) {
        row.insert(row.end(), {absl::StrFormat("%.1f", b.samples_per_s()), absl::StrFormat("%.1f", 100 * b.mfu()),
                               b.bottleneck()});
        if (train) row.push_back(b.time_to_train_s() > 0 ? SecondsText(b.time_to_train_s()) : "-");
      }
      per.Add(std::move(row));
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
    total.Add({absl::StrCat(d->rank()), DesignName(*d), num(d->weighted_time_s(), 3),
               num(d->weighted_energy_j() / 1e3, 1), num(d->weighted_cost_usd(), 4)});
  }
  absl::StrAppend(&out, total.Render());
  if (r.best_by_time().empty()) {
    absl::StrAppend(&out, "no design fits every workload\n");
  } else {
    absl::StrAppend(&out, "best by time: ", r.best_by_time(), "; by energy: ", r.best_by_energy(), "; by cost: ",
                    r.best_by_cost(), "\n");
  }
  if (r.truncated()) absl::StrAppend(&out, "warning: a search hit the deadline; its plan may not be the best\n");
  for (const v1::CodesignDesign& d : r.designs()) {
    for (const std::string& w : d.warnings()) absl::StrAppend(&out, "warning: ", w, "\n");
  }
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
    if (absl::Status s = LoadJsonLine(DisplayName(path), line_no, t, &w); !s.ok()) return s;
    if (w.global_batch_size() <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(DisplayName(path), ":", line_no,
                                                     ": global_batch_size: give the workload's global batch (a "
                                                     "positive integer)"));
    }
    out.push_back(std::move(w));
  }
  if (out.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no workloads"));
  return out;
}

}  // namespace paraplan::cli
