#include "client/plan_table.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "client/csv.h"
#include "client/format.h"
#include "report/units.h"

namespace paraplan::cli {

namespace {


int Deg(int v) { return v > 0 ? v : 1; }
std::string YesNo(bool b) { return b ? "yes" : "no"; }
std::string TrueFalse(bool b) { return b ? "true" : "false"; }
std::string Num(double v) { return absl::StrFormat("%.9g", v); }

std::string CostText(const v1::Estimate& e) { return absl::StrFormat("%.4f", e.cost_per_iteration_usd()); }
std::string EnergyText(const v1::Estimate& e) { return absl::StrFormat("%.1f", e.energy_per_iteration_j() / 1e3); }

std::string Spatial(const v1::ParallelConfig& c) {
  // Spatial degree, the axes it splits (when more than one) and the first layer it
  // leaves whole (when it does not split them all); then filter and channel.
  std::string s = absl::StrCat(Deg(c.spatial_parallel()));
  if (c.spatial_axes() > 1) absl::StrAppend(&s, "[", c.spatial_axes(), "]");
  if (c.spatial_layers() > 0) absl::StrAppend(&s, "@", c.spatial_layers());
  return absl::StrCat(s, "/", Deg(c.filter_parallel()), "/", Deg(c.channel_parallel()));
}

// What lives on the host: "optimizer+weights", "expert_fc1+moe_act" (Megatron's
// fine-grained offload modules), or "none".
std::string Offload(const v1::ParallelConfig& c) {
  std::vector<std::string> parts;
  if (c.offload().optimizer()) parts.push_back("optimizer");
  if (c.offload().weights()) parts.push_back("weights");
  if (c.offload().activations()) parts.push_back("activations");
  parts.insert(parts.end(), c.offload_modules().begin(), c.offload_modules().end());
  return parts.empty() ? "none" : absl::StrJoin(parts, "+");
}

// "auto", "ring", "halving-doubling", ...
std::string Algorithm(v1::CollectiveAlgorithm a) {
  if (a == v1::ALGORITHM_UNSPECIFIED) return "auto";
  std::string name = v1::CollectiveAlgorithm_Name(a);
  if (name.rfind("ALGORITHM_", 0) == 0) name = name.substr(10);
  return absl::StrReplaceAll(absl::AsciiStrToLower(name), {{"_", "-"}});
}

// Expert tensor parallelism as run (0 = as TP); "-" without expert parallelism.
std::string ExpertTp(const v1::ParallelConfig& c) {
  if (c.expert_parallel() <= 1) return "-";
  return absl::StrCat(c.expert_tensor_parallel() > 0 ? c.expert_tensor_parallel() : Deg(c.tensor_parallel()));
}

// The token dispatcher; "-" without expert parallelism.
std::string Dispatcher(const v1::ParallelConfig& c) {
  if (c.expert_parallel() <= 1) return "-";
  switch (c.moe_dispatcher()) {
    case v1::MOE_DISPATCHER_DEEPEP:
      return "DeepEP";
    case v1::MOE_DISPATCHER_ALLGATHER:
      return "all-gather";
    default:
      return "all-to-all";
  }
}

// The first and last pipeline stages' decoder layers ("3/2"); "even" for an even split.
std::string StageEnds(const v1::ParallelConfig& c) {
  if (c.first_pipeline_stage_layers() <= 0 && c.last_pipeline_stage_layers() <= 0) return "even";
  return absl::StrCat(c.first_pipeline_stage_layers(), "/", c.last_pipeline_stage_layers());
}

std::string RankOrder(const v1::ParallelConfig& c) {
  return c.rank_order().empty() ? "tp-cp-ep-dp-pp" : c.rank_order();
}

// Decimals for iteration times so that the smallest shown keeps 4 significant digits
// (3 decimals from 1 s up; 0.009123 s shows as 0.009123, not 0.009).
int TimeDecimals(double smallest) {
  if (!(smallest > 0) || smallest >= 1) return 3;
  return std::min(6, 3 + static_cast<int>(std::ceil(-std::log10(smallest))));
}

int TimeDecimals(const v1::PlanResponse& r) {
  double smallest = 0;
  for (const v1::Estimate& e : r.plans()) {
    if (smallest == 0 || e.iteration_time_s() < smallest) smallest = e.iteration_time_s();
  }
  return TimeDecimals(smallest);
}

bool AnyTokens(const v1::PlanResponse& r) {
  for (const v1::Estimate& e : r.plans()) {
    if (e.tokens_per_s() > 0) return true;
  }
  return false;
}

// When a column is shown in the compact table.
enum class Show {
  kAlways,     // rank, GPUs, time, throughput, MFU, memory, bottleneck
  kIfDiffers,  // configuration: when the plans differ in it
  kWideOnly,   // only in the wide table (cost, energy unless ranked by them)
};

struct Column {
  std::string header;
  std::function<std::string(const v1::Estimate&, int rank)> cell;
  Show show;
  std::string quiet;  // a shared value not worth listing under the table ("" = list any)
};

std::vector<Column> Columns(const v1::PlanResponse& r, v1::Objective objective) {
  using E = const v1::Estimate&;
  const bool tokens = AnyTokens(r);
  const int decimals = TimeDecimals(r);
  auto cfg = [](auto f) { return [f](E e, int) { return f(e.config()); }; };
  using C = const v1::ParallelConfig&;
  return {
      {"#", [](E, int rank) { return absl::StrCat(rank); }, Show::kAlways, ""},
      {"GPUs", [](E e, int) { return absl::StrCat(e.num_gpus()); }, Show::kAlways, ""},
      {"TP", cfg([](C c) { return absl::StrCat(Deg(c.tensor_parallel())); }), Show::kIfDiffers, ""},
      {"PP", cfg([](C c) { return absl::StrCat(Deg(c.pipeline_parallel())); }), Show::kIfDiffers, ""},
      {"DP", cfg([](C c) { return absl::StrCat(Deg(c.data_parallel())); }), Show::kIfDiffers, ""},
      {"CP", cfg([](C c) { return absl::StrCat(Deg(c.context_parallel())); }), Show::kIfDiffers, ""},
      {"EP", cfg([](C c) { return absl::StrCat(Deg(c.expert_parallel())); }), Show::kIfDiffers, ""},
      {"ETP", cfg(ExpertTp), Show::kIfDiffers, "-"},
      {"dispatcher", cfg(Dispatcher), Show::kIfDiffers, "-"},
      {"v", cfg([](C c) { return absl::StrCat(Deg(c.virtual_pipeline_stages())); }), Show::kIfDiffers, ""},
      {"stage ends", cfg(StageEnds), Show::kIfDiffers, "even"},
      {"mbs", cfg([](C c) { return absl::StrCat(Deg(c.micro_batch_size())); }), Show::kIfDiffers, ""},
      {"spatial[axes]@cut/filter/channel", cfg(Spatial), Show::kIfDiffers, "1/1/1"},
      {"recompute", cfg([](C c) { return RecomputeText(c); }), Show::kIfDiffers, ""},
      {"SP", cfg([](C c) { return YesNo(c.sequence_parallel()); }), Show::kIfDiffers, ""},
      {"ZeRO", cfg([](C c) { return absl::StrCat(c.zero_stage()); }), Show::kIfDiffers, ""},
      {"flash", cfg([](C c) { return YesNo(c.flash_attention()); }), Show::kIfDiffers, ""},
      {"schedule", cfg([](C c) { return std::string(ScheduleText(c)); }), Show::kIfDiffers, ""},
      {"overlap grad", cfg([](C c) { return YesNo(c.overlap_grad_reduce()); }), Show::kIfDiffers, ""},
      {"overlap param", cfg([](C c) { return YesNo(c.overlap_param_gather()); }), Show::kIfDiffers, ""},
      {"offload", cfg([](C c) { return Offload(c); }), Show::kIfDiffers, "none"},
      {"DP algorithm", cfg([](C c) { return Algorithm(c.dp_algorithm()); }), Show::kIfDiffers, "auto"},
      {"rank order", cfg(RankOrder), Show::kIfDiffers, "tp-cp-ep-dp-pp"},
      {"CUDA graphs", cfg([](C c) { return YesNo(c.cuda_graphs()); }), Show::kIfDiffers, "no"},
      {"TP overlap", cfg([](C c) { return YesNo(c.tp_comm_overlap()); }), Show::kIfDiffers, "no"},
      {"A2A overlap", cfg([](C c) { return YesNo(c.moe_a2a_overlap()); }), Show::kIfDiffers, "no"},
      {"iter s", [decimals](E e, int) { return absl::StrFormat("%.*f", decimals, e.iteration_time_s()); },
       Show::kAlways, ""},
      {"tokens/s", [](E e, int) { return SiText(e.tokens_per_s()); }, tokens ? Show::kAlways : Show::kWideOnly, ""},
      {"samples/s", [](E e, int) { return SiText(e.samples_per_s()); }, tokens ? Show::kWideOnly : Show::kAlways,
       ""},
      {"MFU %", [](E e, int) { return absl::StrFormat("%.1f", 100 * e.mfu()); }, Show::kAlways, ""},
      {"mem GiB", [](E e, int) { return GibText(e.memory().total_bytes()); }, Show::kAlways, ""},
      {"$/iter", [](E e, int) { return CostText(e); },
       objective == v1::OBJECTIVE_COST ? Show::kAlways : Show::kWideOnly, ""},
      {"kJ/iter", [](E e, int) { return EnergyText(e); },
       objective == v1::OBJECTIVE_ENERGY ? Show::kAlways : Show::kWideOnly, ""},
      {"bottleneck", [](E e, int) { return e.bottleneck(); }, Show::kAlways, ""},
  };
}

// CSV: every column in machine units.
struct CsvColumn {
  const char* name;
  std::function<std::string(const v1::Estimate&)> cell;
};

std::vector<CsvColumn> CsvColumns() {
  using E = const v1::Estimate&;
  return {
      {"gpus", [](E e) { return absl::StrCat(e.num_gpus()); }},
      {"tensor_parallel", [](E e) { return absl::StrCat(Deg(e.config().tensor_parallel())); }},
      {"pipeline_parallel", [](E e) { return absl::StrCat(Deg(e.config().pipeline_parallel())); }},
      {"data_parallel", [](E e) { return absl::StrCat(Deg(e.config().data_parallel())); }},
      {"context_parallel", [](E e) { return absl::StrCat(Deg(e.config().context_parallel())); }},
      {"expert_parallel", [](E e) { return absl::StrCat(Deg(e.config().expert_parallel())); }},
      {"virtual_pipeline_stages", [](E e) { return absl::StrCat(Deg(e.config().virtual_pipeline_stages())); }},
      {"first_pipeline_stage_layers", [](E e) { return absl::StrCat(e.config().first_pipeline_stage_layers()); }},
      {"last_pipeline_stage_layers", [](E e) { return absl::StrCat(e.config().last_pipeline_stage_layers()); }},
      {"micro_batch_size", [](E e) { return absl::StrCat(Deg(e.config().micro_batch_size())); }},
      {"global_batch_size", [](E e) { return absl::StrCat(e.config().global_batch_size()); }},
      {"spatial_parallel", [](E e) { return absl::StrCat(Deg(e.config().spatial_parallel())); }},
      {"spatial_axes", [](E e) { return absl::StrCat(Deg(e.config().spatial_axes())); }},
      {"spatial_layers", [](E e) { return absl::StrCat(e.config().spatial_layers()); }},
      {"filter_parallel", [](E e) { return absl::StrCat(Deg(e.config().filter_parallel())); }},
      {"channel_parallel", [](E e) { return absl::StrCat(Deg(e.config().channel_parallel())); }},
      {"recompute", [](E e) { return std::string(RecomputeText(e.config().recompute())); }},
      {"recompute_modules", [](E e) { return absl::StrJoin(e.config().recompute_modules(), " "); }},
      {"sequence_parallel", [](E e) { return TrueFalse(e.config().sequence_parallel()); }},
      {"zero_stage", [](E e) { return absl::StrCat(e.config().zero_stage()); }},
      {"flash_attention", [](E e) { return TrueFalse(e.config().flash_attention()); }},
      {"pipeline_schedule",
       [](E e) {
         const std::string s = ScheduleText(e.config());
         return s == "-" ? std::string() : s;
       }},
      {"overlap_grad_reduce", [](E e) { return TrueFalse(e.config().overlap_grad_reduce()); }},
      {"overlap_param_gather", [](E e) { return TrueFalse(e.config().overlap_param_gather()); }},
      {"offload", [](E e) { return Offload(e.config()); }},
      {"dp_algorithm", [](E e) { return Algorithm(e.config().dp_algorithm()); }},
      {"rank_order", [](E e) { return RankOrder(e.config()); }},
      {"cuda_graphs", [](E e) { return TrueFalse(e.config().cuda_graphs()); }},
      {"tp_comm_overlap", [](E e) { return TrueFalse(e.config().tp_comm_overlap()); }},
      {"moe_a2a_overlap", [](E e) { return TrueFalse(e.config().moe_a2a_overlap()); }},
      {"iteration_time_s", [](E e) { return Num(e.iteration_time_s()); }},
      {"samples_per_s", [](E e) { return Num(e.samples_per_s()); }},
      {"tokens_per_s", [](E e) { return Num(e.tokens_per_s()); }},
      {"mfu", [](E e) { return Num(e.mfu()); }},
      {"memory_gib", [](E e) { return Num(e.memory().total_bytes() / kGiB); }},
      {"fits", [](E e) { return TrueFalse(e.memory().fits()); }},
      {"cost_per_iteration_usd", [](E e) { return Num(e.cost_per_iteration_usd()); }},
      {"energy_per_iteration_j", [](E e) { return Num(e.energy_per_iteration_j()); }},
      {"bottleneck", [](E e) { return e.bottleneck(); }},
  };
}

std::string Csv(const v1::PlanResponse& r) {
  const std::vector<CsvColumn> cols = CsvColumns();
  std::vector<std::string> header = {"rank", "profile"};
  for (const CsvColumn& c : cols) header.push_back(c.name);
  std::string out = CsvRecord(header);
  int rank = 0;
  for (const v1::Estimate& e : r.plans()) {
    std::vector<std::string> row = {absl::StrCat(++rank), absl::StrCat(e.profile_name(), "@", e.profile_version())};
    for (const CsvColumn& c : cols) row.push_back(c.cell(e));
    out += CsvRecord(row);
  }
  return out;
}

std::string ObjectiveText(v1::Objective o) {
  return o == v1::OBJECTIVE_COST ? "cost" : o == v1::OBJECTIVE_ENERGY ? "energy" : "time";
}

std::string PerGpuCount(const std::vector<GpuCountBest>& counts, v1::Objective objective, bool tokens) {
  std::vector<std::string> headers = {"GPUs", "iter s", tokens ? "tokens/s" : "samples/s", "MFU %", "mem GiB"};
  if (objective == v1::OBJECTIVE_COST) headers.push_back("$/iter");
  if (objective == v1::OBJECTIVE_ENERGY) headers.push_back("kJ/iter");
  headers.push_back("best plan");
  Table t(headers);
  double smallest = 0;
  for (const GpuCountBest& g : counts) {
    if (g.best && (smallest == 0 || g.best->iteration_time_s() < smallest)) smallest = g.best->iteration_time_s();
  }
  const int decimals = TimeDecimals(smallest);
  for (const GpuCountBest& g : counts) {
    std::vector<std::string> row = {absl::StrCat(g.gpus)};
    if (!g.best) {
      row.insert(row.end(), headers.size() - 2, "-");
      row.push_back(absl::StrCat(g.unsearched ? "no plan ranked" : "no plan fits", g.no_plan_reason.empty() ? "" : ": ",
                                 g.no_plan_reason));
    } else {
      const v1::Estimate& e = *g.best;
      row.insert(row.end(), {absl::StrFormat("%.*f", decimals, e.iteration_time_s()),
                             SiText(tokens ? e.tokens_per_s() : e.samples_per_s()),
                             absl::StrFormat("%.1f", 100 * e.mfu()), GibText(e.memory().total_bytes())});
      if (objective == v1::OBJECTIVE_COST) row.push_back(CostText(e));
      if (objective == v1::OBJECTIVE_ENERGY) row.push_back(EnergyText(e));
      row.push_back(ConfigSummary(e.config()));
    }
    t.Add(row);
  }
  return absl::StrCat("best plan per GPU count (by ", ObjectiveText(objective), "):\n", t.Render(), "\n");
}

}  // namespace

// Each distinct text of the plans' `texts(plan)` (a repeated string field), in order of
// first row, with the rows it applies to: "#1, #3", or "every plan" where it is all of
// several.
template <typename Texts>
std::vector<std::pair<std::string, std::string>> RowsOfEach(const v1::PlanResponse& r, Texts texts) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (int i = 0; i < r.plans_size(); ++i) {
    for (const std::string& q : texts(r.plans(i))) {
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == q; });
      if (it == groups.end()) it = groups.insert(groups.end(), {q, {}});
      it->second.push_back(absl::StrCat("#", i + 1));
    }
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [what, rows] : groups) {
    const bool every = static_cast<int>(rows.size()) == r.plans_size() && rows.size() > 1;
    out.emplace_back(what, every ? "every plan" : absl::StrJoin(rows, ", "));
  }
  return out;
}

// The configurations folded into the rows (same time and memory as the row): one line
// per alternative, naming the rows it applies to, or "every plan".
std::string EquivalentsText(const v1::PlanResponse& r) {
  std::string out;
  for (const auto& [what, rows] : RowsOfEach(r, [](const v1::Estimate& e) { return e.equivalents(); })) {
    absl::StrAppend(&out, "equally fast and large with ", what, ": ", rows, "\n");
  }
  return out;
}

// The plans' warnings, each once, with the rows it applies to.
std::string PlanWarningsText(const v1::PlanResponse& r) {
  std::string out;
  for (const auto& [what, rows] : RowsOfEach(r, [](const v1::Estimate& e) { return e.warnings(); })) {
    absl::StrAppend(&out, "warning (", rows, "): ", what, "\n");
  }
  return out;
}

std::string PlanProfile(const v1::PlanResponse& r) {
  if (r.plans_size() == 0 || r.plans(0).profile_name().empty()) return "";
  return absl::StrCat(r.plans(0).profile_name(), "@", r.plans(0).profile_version());
}

std::vector<GpuCountBest> BestPerGpuCount(const v1::PlanResponse& r, const std::vector<int32_t>& gpus) {
  std::vector<GpuCountBest> out;
  for (int32_t n : gpus) {
    GpuCountBest g;
    g.gpus = n;
    for (const v1::Estimate& e : r.plans()) {
      if (e.num_gpus() == n) {
        g.best = e;
        break;
      }
    }
    out.push_back(std::move(g));
  }
  return out;
}

std::string FormatPlanTable(const v1::PlanResponse& r, const PlanTableOptions& o) {
  if (o.style == TableStyle::kCsv) return Csv(r);
  std::string out = absl::StrCat("profile ", o.profile.empty() ? "(unknown)" : o.profile, "\n\n");
  if (!o.per_gpu_count.empty()) {
    bool tokens = AnyTokens(r);
    for (const GpuCountBest& g : o.per_gpu_count) tokens |= g.best && g.best->tokens_per_s() > 0;
    absl::StrAppend(&out, PerGpuCount(o.per_gpu_count, o.objective, tokens || r.plans_size() == 0));
  }
  if (r.plans_size() == 0) {
    absl::StrAppend(&out, "no plan: ", r.infeasible_reason().empty() ? "nothing fits" : r.infeasible_reason(), "\n");
  } else {
    const std::vector<Column> columns = Columns(r, o.objective);
    std::vector<std::vector<std::string>> cells(columns.size());  // per column, per plan
    for (size_t c = 0; c < columns.size(); ++c) {
      for (int i = 0; i < r.plans_size(); ++i) cells[c].push_back(columns[c].cell(r.plans(i), i + 1));
    }
    std::vector<size_t> shown;
    std::vector<std::string> shared;  // "TP 8" for the columns left out because all plans agree
    for (size_t c = 0; c < columns.size(); ++c) {
      const bool same = std::all_of(cells[c].begin(), cells[c].end(), [&](const std::string& v) { return v == cells[c][0]; });
      bool show = o.style == TableStyle::kWide;
      if (!show) {
        switch (columns[c].show) {
          case Show::kAlways:
            show = true;
            break;
          case Show::kIfDiffers:
            show = !same;
            if (same && cells[c][0] != "-" && cells[c][0] != columns[c].quiet) {
              shared.push_back(absl::StrCat(columns[c].header, " ", cells[c][0]));
            }
            break;
          case Show::kWideOnly:
            break;
        }
      }
      if (show) shown.push_back(c);
    }
    std::vector<std::string> headers;
    for (size_t c : shown) headers.push_back(columns[c].header);
    Table t(headers);
    for (int i = 0; i < r.plans_size(); ++i) {
      std::vector<std::string> row;
      for (size_t c : shown) row.push_back(cells[c][static_cast<size_t>(i)]);
      t.Add(row);
    }
    absl::StrAppend(&out, t.Render());
    if (!shared.empty()) absl::StrAppend(&out, "in every plan: ", absl::StrJoin(shared, ", "), "\n");
    absl::StrAppend(&out, EquivalentsText(r), PlanWarningsText(r));
  }
  absl::StrAppend(&out, absl::StrFormat(
                            "\n%d candidates enumerated, %d feasible, %d evaluated in %.3f s%s; %d plans on the Pareto "
                            "front (time, cost, energy, memory)\n",
                            r.candidates_enumerated(), r.candidates_feasible(), r.candidates_evaluated(),
                            r.search_time_s(),
                            r.truncated() ? ", TRUNCATED by the deadline (best found so far)" : ", search complete",
                            r.pareto_size()));
  return out;
}

}  // namespace paraplan::cli
