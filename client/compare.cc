#include "client/compare.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "client/csv.h"
#include "client/format.h"
#include "client/json_io.h"
#include "report/units.h"

namespace paraplan::cli {

namespace {


// One compared quantity: its table label and text, its CSV name and value.
struct Metric {
  std::string label;  // table
  std::string name;   // CSV
  std::function<double(const v1::Estimate&)> value;
  std::function<std::string(double)> text;
  bool ratio = true;       // best/given is meaningful
  bool skip_zero = false;  // left out of the table when 0 on both sides
};

std::string Fixed(double v, int digits) { return absl::StrFormat("%.*f", digits, v); }

std::vector<Metric> Metrics() {
  using E = const v1::Estimate&;
  auto seconds = [](double v) { return Fixed(v, 4); };
  auto gib = [](double v) { return Fixed(v, 1); };
  std::vector<Metric> m = {
      {"iteration s", "iteration_time_s", [](E e) { return e.iteration_time_s(); },
       [](double v) { return Fixed(v, 3); }},
  };
  struct Part {
    const char *label, *name;
    double (v1::TimeBreakdown::*get)() const;
  };
  const Part parts[] = {{"compute", "compute_s", &v1::TimeBreakdown::compute_s},
                        {"recompute", "recompute_s", &v1::TimeBreakdown::recompute_s},
                        {"tensor-parallel comm", "tp_comm_s", &v1::TimeBreakdown::tp_comm_s},
                        {"spatial comm (halos, cut)", "spatial_comm_s", &v1::TimeBreakdown::spatial_comm_s},
                        {"context-parallel comm", "cp_comm_s", &v1::TimeBreakdown::cp_comm_s},
                        {"expert-parallel comm", "ep_comm_s", &v1::TimeBreakdown::ep_comm_s},
                        {"pipeline comm", "pp_comm_s", &v1::TimeBreakdown::pp_comm_s},
                        {"pipeline bubble", "pipeline_bubble_s", &v1::TimeBreakdown::pipeline_bubble_s},
                        {"data-parallel comm", "dp_comm_s", &v1::TimeBreakdown::dp_comm_s},
                        {"optimizer", "optimizer_s", &v1::TimeBreakdown::optimizer_s},
                        {"data loading", "data_loading_s", &v1::TimeBreakdown::data_loading_s},
                        {"overhead", "overhead_s", &v1::TimeBreakdown::overhead_s},
                        {"offload", "offload_s", &v1::TimeBreakdown::offload_s}};
  for (const Part& p : parts) {
    m.push_back({absl::StrCat("  ", p.label), p.name, [get = p.get](E e) { return (e.time().*get)(); }, seconds,
                 true, true});
  }
  m.push_back({"memory GiB", "memory_gib", [](E e) { return e.memory().total_bytes() / kGiB; }, gib});
  struct MemoryPart {
    const char *label, *name;
    double (v1::MemoryBreakdown::*get)() const;
  };
  const MemoryPart memory[] = {{"weights", "weights_gib", &v1::MemoryBreakdown::weights_bytes},
                               {"gradients", "gradients_gib", &v1::MemoryBreakdown::gradients_bytes},
                               {"optimizer states", "optimizer_gib", &v1::MemoryBreakdown::optimizer_bytes},
                               {"activations", "activations_gib", &v1::MemoryBreakdown::activations_bytes},
                               {"buffers", "buffers_gib", &v1::MemoryBreakdown::buffers_bytes},
                               {"overhead", "overhead_gib", &v1::MemoryBreakdown::overhead_bytes},
                               {"offloaded to host", "host_gib", &v1::MemoryBreakdown::host_bytes}};
  for (const MemoryPart& p : memory) {
    m.push_back({absl::StrCat("  ", p.label), p.name, [get = p.get](E e) { return (e.memory().*get)() / kGiB; }, gib,
                 true, true});
  }
  m.push_back({"fits", "fits", [](E e) { return e.memory().fits() ? 1.0 : 0.0; },
               [](double v) { return std::string(v > 0 ? "yes" : "NO"); }, false});
  m.push_back({"tokens/s", "tokens_per_s", [](E e) { return e.tokens_per_s(); }, SiText, true, true});
  m.push_back({"samples/s", "samples_per_s", [](E e) { return e.samples_per_s(); }, SiText});
  m.push_back({"MFU %", "mfu", [](E e) { return e.mfu(); }, [](double v) { return Fixed(100 * v, 1); }});
  m.push_back({"TFLOP/s per GPU", "model_tflops_per_gpu", [](E e) { return e.model_tflops_per_gpu(); },
               [](double v) { return Fixed(v, 1); }});
  m.push_back({"$/iter", "cost_per_iteration_usd", [](E e) { return e.cost_per_iteration_usd(); },
               [](double v) { return Fixed(v, 4); }});
  m.push_back({"kJ/iter", "energy_per_iteration_j", [](E e) { return e.energy_per_iteration_j(); },
               [](double v) { return Fixed(v / 1e3, 1); }});
  return m;
}

std::string Ratio(double given, double best) { return given > 0 ? Fixed(best / given, 3) : "-"; }

std::string ObjectiveText(v1::Objective o) {
  return o == v1::OBJECTIVE_COST ? "cost" : o == v1::OBJECTIVE_ENERGY ? "energy" : "time";
}

// The closing line: what the best plan gains, by the objective it was ranked by.
std::string Verdict(const Comparison& c) {
  const v1::Estimate& g = c.given;
  const v1::Estimate& b = *c.best;
  double gv = g.iteration_time_s(), bv = b.iteration_time_s();
  const char* what = "iteration time";
  if (c.objective == v1::OBJECTIVE_COST) {
    gv = g.cost_per_iteration_usd();
    bv = b.cost_per_iteration_usd();
    what = "cost per iteration";
  } else if (c.objective == v1::OBJECTIVE_ENERGY) {
    gv = g.energy_per_iteration_j();
    bv = b.energy_per_iteration_j();
    what = "energy per iteration";
  }
  if (!(gv > 0)) return "";
  const std::string& given = c.given_side.noun;
  const std::string& best = c.best_side.noun;
  if (!g.memory().fits()) {
    return absl::StrFormat("%s does not fit in GPU memory; %s does, at %.3fx its %s\n", given, best, bv / gv, what);
  }
  if (std::abs(bv - gv) <= gv * 5e-4) {
    return absl::StrFormat("%s is as good as %s (%s ratio %.3f)\n", given, best, what, bv / gv);
  }
  return absl::StrFormat("%s takes %.3fx the %s of %s (%.1f%% %s)\n", best, bv / gv, what, given,
                         100 * std::abs(1 - bv / gv), bv < gv ? "less" : "more");
}

// A side's label as a CSV column or JSON key.
std::string Key(const Comparison::Side& s) { return absl::StrReplaceAll(s.label, {{"-", "_"}}); }

// Rows of cells: the first column left-aligned, the others right-aligned (numbers and
// the few words among them alike), no trailing spaces.
std::string Render(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string pad(width[i] - row[i].size(), ' ');
      line += i == 0 ? row[i] + pad : absl::StrCat("  ", pad, row[i]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string Indent(const std::string& json) { return absl::StrReplaceAll(json, {{"\n", "\n "}}); }

}  // namespace

std::string FormatComparison(const Comparison& c) {
  const v1::Estimate& g = c.given;
  std::string out = absl::StrCat("profile ", g.profile_name(), "@", g.profile_version(), ", ", g.num_gpus(),
                                 " GPUs, global batch ", g.config().global_batch_size(), ", best by ",
                                 ObjectiveText(c.objective), "\n");
  const std::string& gl = c.given_side.label;
  const std::string& bl = c.best_side.label;
  const size_t pad = std::max(gl.size(), bl.size()) + 2;
  absl::StrAppend(&out, gl, std::string(pad - gl.size(), ' '), ConfigSummary(g.config()), "\n");
  if (c.best) absl::StrAppend(&out, bl, std::string(pad - bl.size(), ' '), ConfigSummary(c.best->config()), "\n");
  absl::StrAppend(&out, "\n");
  std::vector<std::vector<std::string>> t = {{"", gl}};
  if (c.best) t[0].insert(t[0].end(), {bl, absl::StrCat(bl, "/", gl)});
  for (const Metric& m : Metrics()) {
    const double gv = m.value(g);
    const double bv = c.best ? m.value(*c.best) : 0;
    if (m.skip_zero && gv == 0 && bv == 0) continue;
    std::vector<std::string> row = {m.label, m.text(gv)};
    if (c.best) row.insert(row.end(), {m.text(bv), m.ratio ? Ratio(gv, bv) : ""});
    t.push_back(row);
  }
  std::vector<std::string> bottleneck = {"bottleneck", g.bottleneck()};
  if (c.best) bottleneck.insert(bottleneck.end(), {c.best->bottleneck(), ""});
  t.push_back(bottleneck);
  absl::StrAppend(&out, Render(t), "\n");
  if (c.best) {
    absl::StrAppend(&out, Verdict(c));
  } else {
    absl::StrAppend(&out, "no plan fits: ", c.no_plan_reason.empty() ? "nothing fits" : c.no_plan_reason, "\n");
  }
  return out;
}

std::string ComparisonCsv(const Comparison& c) {
  std::string out = CsvRecord(
      {"metric", Key(c.given_side), Key(c.best_side), absl::StrCat(Key(c.best_side), "_over_", Key(c.given_side))});
  auto num = [](double v) { return absl::StrFormat("%.9g", v); };
  out += CsvRecord({"profile", absl::StrCat(c.given.profile_name(), "@", c.given.profile_version()),
                    c.best ? absl::StrCat(c.best->profile_name(), "@", c.best->profile_version()) : "", ""});
  out += CsvRecord({"gpus", absl::StrCat(c.given.num_gpus()), c.best ? absl::StrCat(c.best->num_gpus()) : "", ""});
  out += CsvRecord({"config", ConfigSummary(c.given.config()), c.best ? ConfigSummary(c.best->config()) : "", ""});
  for (const Metric& m : Metrics()) {
    const double gv = m.value(c.given);
    if (!m.ratio) {
      auto tf = [](double v) { return std::string(v > 0 ? "true" : "false"); };
      out += CsvRecord({m.name, tf(gv), c.best ? tf(m.value(*c.best)) : "", ""});
      continue;
    }
    const double bv = c.best ? m.value(*c.best) : 0;
    out += CsvRecord({m.name, num(gv), c.best ? num(bv) : "", c.best && gv > 0 ? num(bv / gv) : ""});
  }
  out += CsvRecord({"bottleneck", c.given.bottleneck(), c.best ? c.best->bottleneck() : "", ""});
  return out;
}

std::string ComparisonJson(const Comparison& c, bool pretty) {
  const std::string given = PrintJson(c.given, pretty);
  const std::string best = c.best ? PrintJson(*c.best, pretty) : "null";
  auto trim = [](std::string s) {
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  };
  const std::string g = Key(c.given_side), b = Key(c.best_side);
  if (!pretty) return absl::StrCat("{\"", g, "\":", trim(given), ",\"", b, "\":", trim(best), "}");
  return absl::StrCat("{\n \"", g, "\": ", Indent(trim(given)), ",\n \"", b, "\": ", Indent(trim(best)), "\n}\n");
}

}  // namespace paraplan::cli
