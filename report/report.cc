#include "report/report.h"

#include <time.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/cell_text.h"
#include "report/html_escape.h"
#include "report/svg_chart.h"
#include "report/units.h"

namespace paraplan::cli {

namespace {


int Deg(int v) { return v > 0 ? v : 1; }

std::string E(const std::string& s) { return HtmlEscape(s); }

// "#1 TP8 PP8 DP16 CP2 v6" (degrees above 1 beyond TP/PP/DP) for the plan named "#1".
std::string PlanLabel(const std::string& name, const v1::Estimate& e) {
  const v1::ParallelConfig& c = e.config();
  std::string s = absl::StrCat(name, " TP", Deg(c.tensor_parallel()), " PP", Deg(c.pipeline_parallel()), " DP",
                               Deg(c.data_parallel()));
  if (Deg(c.context_parallel()) > 1) absl::StrAppend(&s, " CP", c.context_parallel());
  if (Deg(c.expert_parallel()) > 1) absl::StrAppend(&s, " EP", c.expert_parallel());
  if (Deg(c.spatial_parallel()) > 1) absl::StrAppend(&s, " spatial", c.spatial_parallel());
  if (Deg(c.filter_parallel()) > 1) absl::StrAppend(&s, " filter", c.filter_parallel());
  if (Deg(c.channel_parallel()) > 1) absl::StrAppend(&s, " channel", c.channel_parallel());
  if (Deg(c.virtual_pipeline_stages()) > 1) absl::StrAppend(&s, " v", c.virtual_pipeline_stages());
  return s;
}

std::string PlanLabel(int rank, const v1::Estimate& e) { return PlanLabel(absl::StrCat("#", rank), e); }

// What names the plan of `rank` (1-based): "#1", or its label on a what-if page.
std::string PlanName(const ReportInput& in, int rank) {
  const size_t i = static_cast<size_t>(rank - 1);
  return i < in.plan_labels.size() ? in.plan_labels[i] : absl::StrCat("#", rank);
}

// The switches of a configuration that the degree columns do not show.
std::string Options(const v1::ParallelConfig& c) {
  std::vector<std::string> o;
  if (c.flash_attention()) o.push_back("flash");
  if (c.overlap_grad_reduce()) o.push_back("overlap grad");
  if (c.overlap_param_gather()) o.push_back("overlap params");
  if (c.offload().optimizer()) o.push_back("offload optimizer");
  if (c.offload().weights()) o.push_back("offload weights");
  if (c.offload().activations()) o.push_back("offload activations");
  if (c.cuda_graphs()) o.push_back("CUDA graphs");
  if (c.tp_comm_overlap()) o.push_back("TP overlap");
  if (!c.rank_order().empty() && c.rank_order() != "tp-cp-ep-dp-pp")
    o.push_back(absl::StrCat("order ", c.rank_order()));
  return o.empty() ? "-" : absl::StrJoin(o, ", ");
}

// Report cells: the shared table texts, "-" for a time that is not known.
std::string Duration(double s) { return s > 0 ? SecondsText(s) : "-"; }

// An energy unit that keeps the numbers of `max_j` readable.
struct EnergyUnit {
  double joules;
  const char* name;
};
EnergyUnit EnergyUnitFor(double max_j) {
  if (max_j >= 1e6) return {1e6, "MJ"};
  if (max_j >= 1e3) return {1e3, "kJ"};
  return {1, "J"};
}

std::string Style() {
  return "<style>\n"
         "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:20px 28px;color:#222;"
         "max-width:1240px}\n"
         "h1{font-size:22px;margin:0 0 6px}h2{font-size:16px;margin:22px 0 6px}\n"
         "p{margin:3px 0}.muted{color:#666;fill:#666}.uncertainty{font-weight:600}\n"
         "table{border-collapse:collapse;font-size:12px;font-variant-numeric:tabular-nums}\n"
         "th,td{padding:3px 5px;border-bottom:1px solid #e2e2e2;text-align:right;white-space:nowrap}\n"
         "th{background:#f4f4f4}th.l,td.l{text-align:left}tr.hl td{background:#fff1b8}\n"
         "td.opt{white-space:normal;min-width:140px;max-width:190px;font-size:11px;color:#444}\n"
         ".chart{max-width:100%;height:auto;display:block}\n"
         ".chart text{font-size:12px;fill:#333}.chart .tick{fill:#666}.chart .axis-label{font-size:13px}\n"
         ".chart .grid{stroke:#e8e8e8}.chart .axis{stroke:#999}\n"
         ".chart .limit{stroke:#c0392b;stroke-width:2;stroke-dasharray:4 2}\n"
         ".chart .front{fill:none;stroke-width:1.5;stroke-dasharray:5 3}\n"
         ".chart g.row.hl rect{stroke:#000;stroke-width:1}.chart g.hl text{font-weight:700}\n"
         ".chart g.point.hl circle{stroke:#000;stroke-width:2.5}\n"
         ".pair{display:flex;flex-wrap:wrap;gap:12px 28px}.pair figure{margin:0}\n"
         "figcaption{font-size:13px;color:#444;margin-bottom:2px}\n"
         "ul.warnings{font-size:12px;margin:4px 0;padding-left:20px}\n"
         // The wide table scrolls inside its own box; the page itself never gets wider than
         // the window (an 800 px laptop split, a phone).
         ".scroll{overflow-x:auto;max-width:100%}\n"
         "@media (max-width:900px){body{margin:10px 12px}h1{font-size:18px}.pair{gap:10px}}\n"
         "</style>\n";
}

// Hovering a table row or a chart element highlights every element of the same plan.
std::string Script() {
  return "<script>\n"
         "(function () {\n"
         "  function mark(id, on) {\n"
         "    document.querySelectorAll('[data-plan=\"' + id + '\"]').forEach(function (e) {\n"
         "      e.classList.toggle('hl', on);\n"
         "    });\n"
         "  }\n"
         "  document.querySelectorAll('[data-plan]').forEach(function (e) {\n"
         "    var id = e.getAttribute('data-plan');\n"
         "    e.addEventListener('mouseenter', function () { mark(id, true); });\n"
         "    e.addEventListener('mouseleave', function () { mark(id, false); });\n"
         "  });\n"
         "  var root = document.documentElement;\n"
         "  document.body.setAttribute('data-overflows', root.scrollWidth > root.clientWidth ? '1' : '0');\n"
         "  document.body.setAttribute('data-ready', '1');\n"
         "})();\n"
         "</script>\n";
}

std::string PlansTable(const ReportInput& in, const EnergyUnit& eu) {
  const v1::PlanResponse& r = in.response;
  std::string out =
      "<div class=\"scroll\"><table id=\"plans\"><thead><tr><th>#</th><th>GPUs</th><th>TP</th><th>PP</th><th>DP</th><th>CP</th><th>EP</th>"
      "<th>v</th><th>mbs</th><th class=\"l\">recompute</th><th class=\"l\">SP</th><th>ZeRO</th>"
      "<th class=\"l\">schedule</th><th class=\"l\">options</th><th>iteration</th><th>tokens/s</th><th>MFU %</th>"
      "<th>GiB / cap.</th><th>$ / iter.</th>";
  absl::StrAppend(&out, "<th>", eu.name,
                  " / iter.</th><th>to train</th><th class=\"l\">bottleneck</th>"
                  "</tr></thead><tbody>\n");
  int rank = 0;
  for (const v1::Estimate& e : r.plans()) {
    const v1::ParallelConfig& c = e.config();
    ++rank;
    const std::string name = PlanName(in, rank);
    absl::StrAppend(&out, "<tr data-plan=\"", rank, "\"><td>", E(name.front() == '#' ? name.substr(1) : name),
                    "</td><td>", e.num_gpus(), "</td><td>",
                    Deg(c.tensor_parallel()), "</td><td>", Deg(c.pipeline_parallel()), "</td><td>",
                    Deg(c.data_parallel()), "</td><td>", Deg(c.context_parallel()), "</td><td>",
                    Deg(c.expert_parallel()), "</td><td>", Deg(c.virtual_pipeline_stages()), "</td><td>",
                    Deg(c.micro_batch_size()), "</td><td class=\"l\">", RecomputeText(c),
                    "</td><td class=\"l\">", c.sequence_parallel() ? "yes" : "no", "</td><td>", c.zero_stage(),
                    "</td><td class=\"l\">", ScheduleText(c), "</td><td class=\"l opt\">", E(Options(c)), "</td><td>",
                    E(Duration(e.iteration_time_s())), "</td><td>", E(SiText(e.tokens_per_s())), "</td><td>",
                    absl::StrFormat("%.1f", 100 * e.mfu()), "</td><td>",
                    absl::StrFormat("%.1f / %.0f", e.memory().total_bytes() / kGiB, e.memory().capacity_bytes() / kGiB),
                    "</td><td>", absl::StrFormat("%.4g", e.cost_per_iteration_usd()), "</td><td>",
                    absl::StrFormat("%.4g", e.energy_per_iteration_j() / eu.joules), "</td><td>",
                    E(Duration(e.time_to_train_s())), "</td><td class=\"l\">", E(e.bottleneck()), "</td></tr>\n");
  }
  return absl::StrCat(out, "</tbody></table></div>\n");
}

std::string TimeChart(const ReportInput& in) {
  const v1::PlanResponse& r = in.response;
  StackedBarChart ch;
  ch.title = "time breakdown per plan (exposed seconds per iteration)";
  ch.unit = "s";
  ch.segments = {{"compute", "#4e79a7"},         {"recompute", "#a0cbe8"},    {"TP comm", "#f28e2b"},
                 {"spatial comm", "#b07aa1"},    {"CP comm", "#ffbe7d"},      {"EP comm", "#8cd17d"},
                 {"PP comm", "#b6992d"},         {"pipeline bubble", "#f1ce63"}, {"DP comm", "#e15759"},
                 {"optimizer", "#76b7b2"},       {"data loading", "#59a14f"}, {"overhead", "#bab0ac"},
                 {"offload", "#d37295"}};
  int rank = 0;
  for (const v1::Estimate& e : r.plans()) {
    const v1::TimeBreakdown& t = e.time();
    ++rank;
    ch.rows.push_back(
        {absl::StrCat(rank),
         PlanLabel(PlanName(in, rank), e),
         {t.compute_s(), t.recompute_s(), t.tp_comm_s(), t.spatial_comm_s(), t.cp_comm_s(), t.ep_comm_s(),
          t.pp_comm_s(), t.pipeline_bubble_s(), t.dp_comm_s(), t.optimizer_s(), t.data_loading_s(), t.overhead_s(),
          t.offload_s()},
         0});
  }
  return StackedBarsSvg(ch);
}

std::string MemoryChart(const ReportInput& in) {
  const v1::PlanResponse& r = in.response;
  StackedBarChart ch;
  ch.title = "memory breakdown per plan (GiB per GPU) against the GPU capacity";
  ch.unit = "GiB";
  ch.limit_name = "GPU capacity";
  ch.segments = {{"weights", "#4e79a7"},     {"gradients", "#f28e2b"}, {"optimizer states", "#e15759"},
                 {"activations", "#76b7b2"}, {"buffers", "#59a14f"},   {"overhead", "#bab0ac"}};
  int rank = 0;
  for (const v1::Estimate& e : r.plans()) {
    const v1::MemoryBreakdown& m = e.memory();
    ++rank;
    ch.rows.push_back({absl::StrCat(rank),
                       PlanLabel(PlanName(in, rank), e),
                       {m.weights_bytes() / kGiB, m.gradients_bytes() / kGiB, m.optimizer_bytes() / kGiB,
                        m.activations_bytes() / kGiB, m.buffers_bytes() / kGiB, m.overhead_bytes() / kGiB},
                       m.capacity_bytes() / kGiB});
  }
  return StackedBarsSvg(ch);
}

// The rank (1-based) of the ranked plan with the same configuration and GPU count, or 0.
int RankOf(const v1::PlanResponse& r, const v1::Estimate& e) {
  const std::string key = e.config().SerializeAsString();
  for (int i = 0; i < r.plans_size(); ++i) {
    if (r.plans(i).num_gpus() == e.num_gpus() && r.plans(i).config().SerializeAsString() == key) return i + 1;
  }
  return 0;
}

// Time (x) against cost or energy (y): the Pareto front and the ranked plans.
std::string ParetoChart(const v1::PlanResponse& r, bool energy, const EnergyUnit& eu) {
  ScatterChart ch;
  ch.title = energy ? "Pareto front: iteration time against energy" : "Pareto front: iteration time against cost";
  ch.x_label = "iteration time (s)";
  ch.y_label = energy ? absl::StrCat("energy per iteration (", eu.name, ")") : "cost per iteration ($)";
  ch.series = {{"Pareto front", "#4e79a7", true, true}, {"ranked plans", "#e15759", false, false}};
  // Logarithmic axes when the values span more than a factor of 20 (the front reaches
  // from the fastest plans to the smallest, slowest ones).
  auto wide = [&](auto value) {
    double lo = 0, hi = 0;
    for (const auto* list : {&r.pareto(), &r.plans()}) {
      for (const v1::Estimate& e : *list) {
        const double v = value(e);
        if (!(v > 0)) return false;
        lo = lo == 0 ? v : std::min(lo, v);
        hi = std::max(hi, v);
      }
    }
    return lo > 0 && hi / lo > 20;
  };
  ch.log_x = wide([](const v1::Estimate& e) { return e.iteration_time_s(); });
  auto y_of = [&](const v1::Estimate& e) {
    return energy ? e.energy_per_iteration_j() / eu.joules : e.cost_per_iteration_usd();
  };
  auto tip = [&](const std::string& head, const v1::Estimate& e) {
    return absl::StrFormat("%s: %d GPUs, %s per iteration, $%.4g, %.4g %s", head, e.num_gpus(),
                           Duration(e.iteration_time_s()), e.cost_per_iteration_usd(),
                           e.energy_per_iteration_j() / eu.joules, eu.name);
  };
  ch.log_y = wide(y_of);
  for (const v1::Estimate& e : r.pareto()) {
    const int rank = RankOf(r, e);
    const std::string head = rank > 0 ? PlanLabel(rank, e) : absl::StrCat("Pareto ", PlanLabel(0, e).substr(3));
    ch.points.push_back({0, e.iteration_time_s(), y_of(e), rank > 0 ? absl::StrCat(rank) : "", "", tip(head, e)});
  }
  int rank = 0;
  for (const v1::Estimate& e : r.plans()) {
    ++rank;
    ch.points.push_back(
        {1, e.iteration_time_s(), y_of(e), absl::StrCat(rank), rank == 1 ? "#1" : "", tip(PlanLabel(rank, e), e)});
  }
  return ScatterSvg(ch);
}

std::string Warnings(const ReportInput& in) {
  const v1::PlanResponse& r = in.response;
  std::string out;
  int rank = 0;
  for (const v1::Estimate& e : r.plans()) {
    ++rank;
    for (const std::string& w : e.warnings()) {
      absl::StrAppend(&out, "<li data-plan=\"", rank, "\">", E(PlanLabel(PlanName(in, rank), e)), ": ", E(w),
                      "</li>\n");
    }
  }
  return out.empty() ? "" : absl::StrCat("<h2>Warnings</h2>\n<ul class=\"warnings\">\n", out, "</ul>\n");
}

}  // namespace

std::string UncertaintyText(const ReportInput& in) {
  if (!in.accuracy.has_value()) {
    return absl::StrCat("accuracy unknown: ", in.accuracy_error.empty() ? "not read" : in.accuracy_error);
  }
  const v1::AccuracyStats& s = in.accuracy->overall();
  if (s.count() <= 0) return "no measurements yet";
  return absl::StrFormat("uncertainty \u00b1%.1f %% (MAPE over %d measurement%s)", 100 * s.mape_ratio(), s.count(),
                         s.count() == 1 ? "" : "s");
}

namespace {

// The rest of a what-if page after its header `out`: the two plans side by side in the
// table and both charts, and the warnings (which name the fields --set changed).
std::string WhatIfBody(const ReportInput& in, const EnergyUnit& eu, std::string out) {
  const v1::PlanResponse& r = in.response;
  absl::StrAppend(&out, "<p class=\"muted\">", E(in.generated_at.empty() ? "" : absl::StrCat("generated ", in.generated_at)),
                  "</p>\n</header>\n<h2>What if: <span id=\"what-if\">", E(in.what_if),
                  "</span></h2>\n<p>The best plan on the stored profile (", E(PlanName(in, 1)),
                  ") beside the best plan on the profile so changed (", E(PlanName(in, 2)),
                  "), for this page only: nothing is saved.</p>\n");
  if (r.plans_size() < 2) {
    absl::StrAppend(&out, "<p id=\"infeasible\">With the change no plan fits: ",
                    E(r.infeasible_reason().empty() ? "nothing fits" : r.infeasible_reason()), "</p>\n");
  }
  absl::StrAppend(&out, PlansTable(in, eu), "<h2>Where the time goes</h2>\n", TimeChart(in), "\n",
                  "<h2>Memory per GPU</h2>\n", MemoryChart(in), "\n", Warnings(in), Script(), "</body>\n</html>\n");
  return out;
}

}  // namespace

ReportInput PlanReportInput(const v1::PlanRequest& request, const v1::PlanResponse& response,
                            const v1::SystemProfile& profile) {
  ReportInput in;
  in.response = response;
  in.workload = request.has_workload() ? request.workload().name() : request.model();
  const char* objective = request.objective() == v1::OBJECTIVE_COST     ? "cost"
                          : request.objective() == v1::OBJECTIVE_ENERGY ? "energy"
                                                                        : "time";
  in.request = absl::StrCat("GPUs ", absl::StrJoin(request.gpus(), ","), ", global batch ",
                            request.global_batch_size(), ", objective ", objective, ", top ",
                            request.top_k() > 0 ? request.top_k() : 10);
  if (profile.version() > 0) {
    in.profile = absl::StrCat(profile.name(), "@", profile.version());
    in.accelerator = absl::StrFormat("%s, %d per node, %.0f GiB", profile.accelerator().name(),
                                     profile.gpus_per_node(), profile.accelerator().memory_gib());
  } else {
    in.profile = profile.name();
  }
  return in;
}

std::string UtcTimestamp(int64_t unix_seconds) {
  const time_t t = static_cast<time_t>(unix_seconds);
  struct tm utc;
  char stamp[32];
  if (gmtime_r(&t, &utc) == nullptr || std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S UTC", &utc) == 0) {
    return "";
  }
  return stamp;
}

std::string PlanReportHtml(const ReportInput& in) {
  const v1::PlanResponse& r = in.response;
  double max_j = 0;
  for (const v1::Estimate& e : r.plans()) max_j = std::max(max_j, e.energy_per_iteration_j());
  for (const v1::Estimate& e : r.pareto()) max_j = std::max(max_j, e.energy_per_iteration_j());
  const EnergyUnit eu = EnergyUnitFor(max_j);
  const std::string title = absl::StrCat("paraplan plan report: ", in.workload, " on ", in.profile);

  std::string out = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
      E(title), "</title>\n", Style(), "</head>\n<body>\n<header>\n<h1>Plan report: ", E(in.workload),
      " on <span id=\"profile\">", E(in.profile), "</span></h1>\n<p>", E(in.request),
      in.accelerator.empty() ? "" : absl::StrCat("; ", E(in.accelerator)), "</p>\n");
  std::string accuracy = E(UncertaintyText(in));
  if (in.accuracy.has_value() && in.accuracy->overall().count() > 0) {
    absl::StrAppend(&accuracy,
                    E(absl::StrFormat("; median predicted / measured %.3f", in.accuracy->overall().bias_ratio())));
    if (r.plans_size() > 0) {
      const double t = r.plans(0).iteration_time_s(), u = in.accuracy->overall().mape_ratio();
      absl::StrAppend(&accuracy, E(absl::StrFormat("; best plan %s per iteration, likely %s to %s", Duration(t),
                                                   Duration(t * (1 - u)), Duration(t * (1 + u)))));
    }
  }
  absl::StrAppend(&out, "<p class=\"uncertainty\" id=\"accuracy\">Profile accuracy: ", accuracy, "</p>\n");
  if (!in.what_if.empty()) return WhatIfBody(in, eu, std::move(out));
  absl::StrAppend(
      &out, "<p class=\"muted\">",
      E(absl::StrFormat("%d candidates enumerated, %d feasible, %d evaluated in %.3f s%s; %d plans on the "
                        "Pareto front (time, cost, energy, memory)",
                        r.candidates_enumerated(), r.candidates_feasible(), r.candidates_evaluated(), r.search_time_s(),
                        r.truncated() ? ", TRUNCATED by the deadline (best found so far)" : "", r.pareto_size())),
      in.generated_at.empty() ? "" : absl::StrCat("; generated ", E(in.generated_at)), "</p>\n</header>\n");
  if (r.plans_size() == 0) {
    absl::StrAppend(&out, "<h2>No plan fits</h2>\n<p id=\"infeasible\">",
                    E(r.infeasible_reason().empty() ? "nothing fits" : r.infeasible_reason()), "</p>\n", Script(),
                    "</body>\n</html>\n");
    return out;
  }
  absl::StrAppend(&out, "<h2>Ranked plans</h2>\n", PlansTable(in, eu));
  absl::StrAppend(&out,
                  "<h2>Where the time goes</h2>\n<p class=\"muted\">Exposed time per iteration of the slowest "
                  "pipeline stage; the parts add up to the iteration time.</p>\n",
                  TimeChart(in), "\n");
  absl::StrAppend(&out,
                  "<h2>Memory per GPU</h2>\n<p class=\"muted\">Peak memory of the fullest GPU against its "
                  "capacity (dashed line).</p>\n",
                  MemoryChart(in), "\n");
  absl::StrAppend(&out,
                  "<h2>Pareto front</h2>\n<p class=\"muted\">Plans no other plan beats on time, cost, energy and "
                  "memory headroom together (dots; the dashed line joins those best in each 2-D view); rings "
                  "mark the ranked plans.</p>\n<div class=\"pair\">\n<figure><figcaption>time vs cost"
                  "</figcaption>",
                  ParetoChart(r, false, eu), "</figure>\n<figure><figcaption>time vs energy</figcaption>",
                  ParetoChart(r, true, eu), "</figure>\n</div>\n");
  absl::StrAppend(&out, Warnings(in), Script(), "</body>\n</html>\n");
  return out;
}

}  // namespace paraplan::cli
