#include "client/cli.h"

#include <time.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "client/config_flags.h"
#include "client/format.h"
#include "client/launcher.h"
#include "client/plan_table.h"
#include "report/report.h"

namespace paraplan::cli {

int Cli::Plan() {
  if (!a_.Has("profile") || !a_.Has("gpus") || !a_.Has("global-batch")) {
    return UsageError("plan needs --profile, --gpus and --global-batch");
  }
  if (a_.Has("emit") && !IsLauncher(a_.Get("emit"))) {
    return UsageError(absl::StrCat("--emit: unknown framework \"", a_.Get("emit"), "\"; valid: ", LauncherList()));
  }
  if (a_.Has("report") && a_.Get("report").empty()) return UsageError("--report needs a file name");
  const bool what_if = a_.flags.count("what-if") > 0;
  if (what_if && (a_.Has("emit") || a_.sets.empty())) {
    return UsageError("--what-if needs --set and does not take --emit");
  }
  v1::PlanRequest req;
  req.set_profile(a_.Get("profile"));
  std::string model;
  if (!LoadWorkload(req.mutable_workload(), &model)) return failed_;
  if (!model.empty()) {
    req.clear_workload();
    req.set_model(model);
  }
  for (absl::string_view part : absl::StrSplit(a_.Get("gpus"), ',')) {
    int n = 0;
    if (!absl::SimpleAtoi(part, &n) || n < 1) {
      return UsageError(absl::StrCat("--gpus: \"", a_.Get("gpus"), "\" is not a list of GPU counts (256,512,1024)"));
    }
    req.add_gpus(n);
  }
  int value = 0;
  if (!Int("global-batch", 1, &value)) return failed_;
  req.set_global_batch_size(value);
  value = 0;
  if (!Int("top", 0, &value)) return failed_;
  req.set_top_k(value);
  v1::Objective objective;
  double quantile = 0;
  if (!ObjectiveFlag(&objective, &quantile)) return failed_;
  req.set_objective(objective);
  req.set_objective_quantile(quantile);
  if (absl::Status s = ApplyConstraintFlags(a_, req.mutable_constraints()); !s.ok()) {
    return UsageError(std::string(s.message()));
  }
  v1::Framework framework;
  if (absl::Status s = FrameworkFlag(a_, &framework); !s.ok()) return UsageError(std::string(s.message()));
  // The plan emitted is one the launcher's framework runs, estimated as it runs it.
  if (!a_.Has("framework") && a_.Has("emit")) framework = LauncherFramework(a_.Get("emit"));
  req.set_framework(framework);
  if (what_if && req.gpus_size() != 1) return UsageError("--what-if: one GPU count in --gpus");
  std::vector<Override> sets;
  if (!ParseOverrides(&sets)) return failed_;
  if (!Connect()) return failed_;
  if (what_if) return PlanWhatIf(req, sets);
  if (!sets.empty() && !ApplyOverrides(sets, req.profile(), req.mutable_profile_override())) return failed_;
  v1::PlanResponse r;
  absl::Status s = link_.Plan(req, &r);
  if (!s.ok()) return RpcFailed(s);
  if (a_.Has("report") || a_.Has("emit")) return PlanOutputs(req, r);
  return PrintPlan(req, r);
}

// plan --what-if: the best plan on the stored profile beside the best plan on the profile
// as --set changes it, both on the version that answered the first.
int Cli::PlanWhatIf(v1::PlanRequest req, const std::vector<Override>& sets) {
  req.set_top_k(1);
  v1::PlanResponse today;
  absl::Status s = link_.Plan(req, &today);
  if (!s.ok()) return RpcFailed(s);
  if (today.plans_size() == 0) {
    return Fail(kError, absl::StrCat("--what-if: no plan fits the stored profile (",
                                     today.infeasible_reason().empty() ? "nothing fits" : today.infeasible_reason(),
                                     "); plan with --set alone shows the what-if's plans"));
  }
  Comparison c;
  c.given = today.plans(0);
  c.objective = req.objective();
  c.given_side = {"today", "the best plan today"};
  c.best_side = {"what-if", "the best plan with --set"};
  req.set_profile(absl::StrCat(c.given.profile_name(), "@", c.given.profile_version()));
  v1::SystemProfile stored;  // as read, for the report
  if (!ApplyOverrides(sets, req.profile(), req.mutable_profile_override(), &stored)) return failed_;
  v1::PlanResponse changed;
  s = link_.Plan(req, &changed, ServerLink::Budget::kCommand);  // the first plan's --timeout
  if (!s.ok()) return RpcFailed(s);
  if (changed.plans_size() > 0) {
    c.best = changed.plans(0);
  } else {
    c.no_plan_reason = changed.infeasible_reason();
  }
  if (a_.Has("report")) {
    v1::PlanResponse both;
    *both.add_plans() = c.given;
    if (c.best) *both.add_plans() = *c.best;
    both.set_infeasible_reason(c.no_plan_reason);
    req.clear_profile_override();
    if (const int code = WriteReport(req, both, stored, {c.given_side.label, c.best_side.label}, SetList(sets).substr(1));
        code != kOk) {
      return code;
    }
  }
  return PrintComparison(c);
}

// The plan on stdout in the --output asked for; exit 1 when no plan fits. The table
// names the profile version and, for several GPU counts, the best plan of each: a count
// without a plan among the ranked ones is asked for once more on its own, within what is
// left of --timeout; none is when the answer was truncated (the server's deadline, the
// same --timeout, came first).
int Cli::PrintPlan(const v1::PlanRequest& req, const v1::PlanResponse& r) {
  const bool none = r.plans_size() == 0;
  const std::string why = r.infeasible_reason().empty() ? "nothing fits" : r.infeasible_reason();
  if (a_.output == "json") {
    Print(r, "");
  } else {
    PlanTableOptions o;
    o.style = a_.output == "csv" ? TableStyle::kCsv : a_.output == "wide" ? TableStyle::kWide : TableStyle::kCompact;
    o.objective = req.objective();
    o.profile = none ? ResolvedProfile(req.profile()) : PlanProfile(r);
    if (req.gpus_size() > 1 && o.style != TableStyle::kCsv) {
      o.per_gpu_count = BestPerGpuCount(r, {req.gpus().begin(), req.gpus().end()});
      for (GpuCountBest& g : o.per_gpu_count) {
        if (g.best) continue;
        if (none && !r.truncated()) {
          g.no_plan_reason = why;
          continue;
        }
        if (r.truncated() || link_.CommandTimeLeftS() <= 0) {
          g.unsearched = true;
          g.no_plan_reason = r.truncated() ? "the search was truncated by the deadline (--timeout)"
                                           : "not asked on its own within --timeout";
          continue;
        }
        v1::PlanRequest one = req;
        one.clear_gpus();
        one.add_gpus(g.gpus);
        one.set_top_k(1);
        v1::PlanResponse best;
        const absl::Status s = link_.Plan(one, &best, ServerLink::Budget::kCommand);
        if (!s.ok()) {
          g.no_plan_reason = absl::StrCat("the search failed: ", s.message());
          g.unsearched = s.code() == absl::StatusCode::kDeadlineExceeded;
        } else if (best.plans_size() > 0) {
          g.best = best.plans(0);
        } else {
          g.no_plan_reason = best.infeasible_reason();
          g.unsearched = best.truncated();
        }
      }
    }
    std::fputs(FormatPlanTable(r, o).c_str(), stdout);
    PrintSetNote();
  }
  if (!none) return kOk;
  failed_ = kError;
  // The table says why; other outputs say it on stderr.
  if (a_.output == "json" || a_.output == "csv") std::fprintf(stderr, "paraplan: no plan fits (%s)\n", why.c_str());
  return kError;
}

// The workload the plan was made for: the request's, or the preset it named.
bool Cli::PlanWorkload(const v1::PlanRequest& req, v1::Workload* w) {
  if (req.has_workload()) {
    *w = req.workload();
    return true;
  }
  v1::ListModelsResponse models;
  absl::Status s = link_.ListModels(&models);
  if (!s.ok()) {
    RpcFailed(s);
    return false;
  }
  for (const v1::Workload& m : models.models()) {
    if (m.name() == req.model()) {
      *w = m;
      return true;
    }
  }
  Fail(kError, absl::StrCat("the server planned model \"", req.model(), "\" but does not list it (paraplan models)"));
  return false;
}

// --report FILE and --emit FRAMEWORK: both need the profile version that answered (the
// plans name it); the report also its measured accuracy, --emit the workload. With
// --emit the launcher arguments replace the table on stdout.
int Cli::PlanOutputs(const v1::PlanRequest& req, const v1::PlanResponse& r) {
  const std::string profile_ref = r.plans_size() > 0 && !r.plans(0).profile_name().empty()
                                      ? absl::StrCat(r.plans(0).profile_name(), "@", r.plans(0).profile_version())
                                      : req.profile();
  v1::GetProfileRequest get;
  get.set_name(profile_ref);
  v1::SystemProfile profile = req.profile_override();
  // With --set the plans were made on the profile sent, not the stored one.
  const absl::Status got = req.has_profile_override() ? absl::OkStatus() : link_.GetProfile(get, &profile);
  if (a_.Has("report")) {
    // The page names the profile as the plans do even if its details cannot be read.
    if (!got.ok()) profile.set_name(profile_ref);
    if (const int code = WriteReport(req, r, profile); code != kOk) return code;
  }
  if (!a_.Has("emit")) return PrintPlan(req, r);
  if (r.plans_size() == 0) {
    const std::string why = r.infeasible_reason().empty() ? "nothing fits" : r.infeasible_reason();
    // Say where the framework came from when the user did not name it.
    const std::string implied =
        a_.Has("framework") ? ""
                            : absl::StrCat(" (--emit ", a_.Get("emit"),
                                           " plans only what that launcher's framework runs; --framework overrides)");
    return Fail(kError, absl::StrCat("no plan fits (", why, "); nothing to --emit", implied));
  }
  if (!got.ok()) return RpcFailed(got);
  LaunchInput in;
  if (!PlanWorkload(req, &in.workload)) return failed_;
  in.config = r.plans(0).config();
  in.num_gpus = r.plans(0).num_gpus();
  in.gpus_per_node = profile.gpus_per_node();
  if (profile.network_levels_size() > 0) in.nvlink_domain = profile.network_levels(0).domain_size();
  in.profile = absl::StrCat(profile.name(), "@", profile.version());
  in.framework = req.framework();
  absl::StatusOr<std::string> text = LauncherArguments(a_.Get("emit"), in);
  if (!text.ok()) return Fail(kError, std::string(text.status().message()));
  std::fputs(text->c_str(), stdout);
  return kOk;
}

// Writes --report FILE: the plan, the profile (version 0 = only its reference is known)
// and the profile's measured accuracy, which is left out, with the reason, when it
// cannot be read.
int Cli::WriteReport(const v1::PlanRequest& req, const v1::PlanResponse& r, const v1::SystemProfile& profile,
                     std::vector<std::string> plan_labels, std::string what_if) {
  ReportInput in = PlanReportInput(req, r, profile);
  in.plan_labels = std::move(plan_labels);
  in.what_if = std::move(what_if);
  v1::GetAccuracyRequest acc_req;
  acc_req.set_profile(in.profile.substr(0, in.profile.find('@')));
  v1::AccuracyReport acc;
  const absl::Status s = link_.GetAccuracy(acc_req, &acc);
  if (s.ok()) {
    in.accuracy = acc;
  } else {
    in.accuracy_error = absl::StrCat(absl::StatusCodeToString(s.code()), ": ", s.message());
  }
  in.generated_at = UtcTimestamp(std::time(nullptr));
  const std::string path = a_.Get("report");
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << PlanReportHtml(in);
  file.close();
  if (!file) return Fail(kCannotCreate, absl::StrCat("cannot write the report to ", path));
  std::fprintf(stderr, "paraplan: wrote report %s\n", path.c_str());
  return kOk;
}

}  // namespace paraplan::cli
