#include "client/cli.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "client/config_flags.h"
#include "client/format.h"
#include "client/input.h"
#include "client/json_io.h"
#include "client/network_format.h"

namespace paraplan::cli {

// The EstimateRequest of estimate and compare: --profile, the workload (--workload or
// --model), the configuration (--config and / or flags), --gpus.
bool Cli::LoadEstimateRequest(const char* command, v1::EstimateRequest* req) {
  if (!a_.Has("profile")) {
    UsageError(absl::StrCat(command, " needs --profile"));
    return false;
  }
  req->set_profile(a_.Get("profile"));
  std::string model;
  if (!LoadWorkload(req->mutable_workload(), &model)) return false;
  if (!model.empty()) {
    req->clear_workload();
    req->set_model(model);
  }
  if (!LoadConfig(req->mutable_config())) return false;
  v1::Framework framework;
  if (absl::Status s = FrameworkFlag(a_, &framework); !s.ok()) {
    UsageError(std::string(s.message()));
    return false;
  }
  req->set_framework(framework);
  int gpus = 0;
  if (!Int("gpus", 1, &gpus)) return false;
  req->set_num_gpus(gpus);
  return true;
}

// Whether the request's workload is a transformer: its own, or the preset's as the
// server lists it (a CNN preset is not; an unknown preset is left to the server).
bool Cli::IsTransformer(const v1::EstimateRequest& req) {
  if (req.has_workload()) return req.workload().has_transformer();
  v1::ListModelsResponse models;
  if (!link_.ListModels(&models).ok()) return false;
  for (const v1::Workload& w : models.models()) {
    if (w.name() == req.model()) return w.has_transformer();
  }
  return false;
}

int Cli::Estimate() {
  v1::EstimateRequest req;
  if (!LoadEstimateRequest("estimate", &req)) return failed_;
  std::vector<Override> sets;
  if (!ParseOverrides(&sets)) return failed_;
  if (!Connect()) return failed_;
  ApplyPlanDefaults(a_, IsTransformer(req), req.mutable_config());
  // --set: the profile as changed travels with this request only.
  if (!sets.empty() && !ApplyOverrides(sets, req.profile(), req.mutable_profile_override())) return failed_;
  v1::EstimateResponse r;
  absl::Status s = link_.Estimate(req, &r);
  return s.ok() ? Print(r.estimate(), FormatEstimate(r.estimate())) : RpcFailed(s);
}

// The given configuration (estimate) against the best plan for its GPU count and global
// batch, on the profile version that answered the estimate.
int Cli::Compare() {
  v1::EstimateRequest est;
  if (!LoadEstimateRequest("compare", &est)) return failed_;
  Comparison c;
  if (!ObjectiveFlag(&c.objective)) return failed_;
  std::vector<Override> sets;
  if (!ParseOverrides(&sets)) return failed_;
  if (!Connect()) return failed_;
  ApplyPlanDefaults(a_, IsTransformer(est), est.mutable_config());
  if (!sets.empty() && !ApplyOverrides(sets, est.profile(), est.mutable_profile_override())) return failed_;
  v1::EstimateResponse given;
  absl::Status s = link_.Estimate(est, &given);
  if (!s.ok()) return RpcFailed(s);
  c.given = given.estimate();

  v1::PlanRequest plan;
  plan.set_profile(absl::StrCat(c.given.profile_name(), "@", c.given.profile_version()));
  if (est.has_profile_override()) *plan.mutable_profile_override() = est.profile_override();
  if (est.has_workload()) {
    *plan.mutable_workload() = est.workload();
  } else {
    plan.set_model(est.model());
  }
  plan.add_gpus(c.given.num_gpus());
  plan.set_global_batch_size(c.given.config().global_batch_size());
  plan.set_top_k(1);
  plan.set_objective(c.objective);
  plan.set_framework(est.framework());
  // What the framework offers applies to the best plan too.
  plan.mutable_constraints()->set_cuda_graphs(est.config().cuda_graphs());
  plan.mutable_constraints()->set_tp_comm_overlap(est.config().tp_comm_overlap());
  plan.mutable_constraints()->set_moe_a2a_overlap(est.config().moe_a2a_overlap());
  v1::PlanResponse best;
  s = link_.Plan(plan, &best, ServerLink::Budget::kCommand);  // the estimate's --timeout
  if (!s.ok()) return RpcFailed(s);
  if (best.plans_size() > 0) {
    c.best = best.plans(0);
  } else {
    c.no_plan_reason = best.infeasible_reason();
  }
  return PrintComparison(c);
}

// A comparison on stdout in the --output asked for; exit 1 without its second side.
int Cli::PrintComparison(const Comparison& c) {
  if (a_.output == "json") {
    std::fputs(ComparisonJson(c, /*pretty=*/true).c_str(), stdout);
  } else if (a_.output == "csv") {
    std::fputs(ComparisonCsv(c).c_str(), stdout);
  } else {
    std::fputs(FormatComparison(c).c_str(), stdout);
    PrintSetNote();
  }
  if (!c.best) {
    failed_ = kError;
    if (a_.output != "table" && a_.output != "wide") {
      std::fprintf(stderr, "paraplan: no plan fits (%s)\n",
                   c.no_plan_reason.empty() ? "nothing fits" : c.no_plan_reason.c_str());
    }
    return kError;
  }
  return kOk;
}

// One JSON line per request line, in order; a line that cannot be parsed is answered
// here and never sent. The output is JSON lines whatever --output says.
int Cli::EstimateBatch() {
  if (a_.options.size() > 1) return UsageError("estimate --batch takes no other flags (each line names its inputs)");
  const std::string path = a_.Get("batch");
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return BadInput(text.status());
  const std::vector<NumberedLine> lines = NonBlankLines(*text);
  if (lines.empty()) return Fail(kBadInput, absl::StrCat(path, ": no requests (the file has no non-blank line)"));

  std::vector<v1::EstimateResult> results(lines.size());
  std::vector<size_t> sent;  // indexes into lines/results, in request order
  v1::EstimateBatchRequest all;
  for (size_t i = 0; i < lines.size(); ++i) {
    v1::EstimateRequest req;
    if (absl::Status s = LoadJsonLine(DisplayName(path), lines[i].number, lines[i].text, &req); !s.ok()) {
      results[i].mutable_error()->set_code(static_cast<int>(absl::StatusCode::kInvalidArgument));
      results[i].mutable_error()->set_message(std::string(s.message()));
      continue;
    }
    *all.add_requests() = std::move(req);
    sent.push_back(i);
  }
  if (!sent.empty()) {
    if (!Connect()) return failed_;
    for (size_t start = 0; start < sent.size(); start += kChunk) {
      const size_t end = std::min(sent.size(), start + kChunk);
      v1::EstimateBatchRequest chunk;
      for (size_t k = start; k < end; ++k) *chunk.add_requests() = all.requests(static_cast<int>(k));
      v1::EstimateBatchResponse resp;
      absl::Status s = link_.EstimateBatch(chunk, &resp);
      if (!s.ok()) return RpcFailed(s);
      for (size_t k = start; k < end; ++k) {
        const int j = static_cast<int>(k - start);
        if (j < resp.results_size()) {
          results[sent[k]] = resp.results(j);
        } else {
          results[sent[k]].mutable_error()->set_code(static_cast<int>(absl::StatusCode::kInternal));
          results[sent[k]].mutable_error()->set_message("the server returned fewer results than requests");
        }
      }
    }
  }
  for (const v1::EstimateResult& r : results) {
    // An Estimate line is the Estimate itself; an error line is {"error": {...}}, which
    // is also the JSON of an EstimateResult holding the error.
    std::printf("%s\n", (r.has_estimate() ? PrintJson(r.estimate(), false) : PrintJson(r, false)).c_str());
  }
  std::fflush(stdout);
  if (sent.empty()) return Fail(kBadInput, absl::StrCat(path, ": no line could be parsed"));
  return kOk;
}

int Cli::Simulate() {
  v1::EstimateRequest est;
  if (!LoadEstimateRequest("simulate", &est)) return failed_;
  v1::SimulateRequest req;
  req.set_profile(est.profile());
  if (est.has_workload()) *req.mutable_workload() = est.workload();
  req.set_model(est.model());
  *req.mutable_config() = est.config();
  if (a_.Has("background")) {
    double load = 0;
    if (!absl::SimpleAtod(a_.Get("background"), &load) || !(load >= 0 && load <= 1)) {
      return UsageError(absl::StrCat("--background: \"", a_.Get("background"), "\" is not a share in [0, 1]"));
    }
    req.set_background_load(load);
  }
  std::vector<Override> sets;
  if (!ParseOverrides(&sets)) return failed_;
  if (!Connect()) return failed_;
  if (!sets.empty() && !ApplyOverrides(sets, req.profile(), req.mutable_profile_override())) return failed_;
  v1::SimulateResponse r;
  absl::Status s = link_.Simulate(req, &r);
  return s.ok() ? Print(r, FormatSimulate(r)) : RpcFailed(s);
}

int Cli::Codesign() {
  if (!a_.Has("profiles") || !a_.Has("gpus")) return UsageError("codesign needs --profiles and --gpus");
  if (a_.Has("workloads") == (a_.Has("model") || a_.Has("global-batch"))) {
    return UsageError("give --workloads FILE.jsonl, or --model PRESET with --global-batch B");
  }
  v1::CodesignRequest req;
  for (absl::string_view p : absl::StrSplit(a_.Get("profiles"), ',', absl::SkipEmpty())) req.add_designs(std::string(p));
  if (req.designs_size() == 0) return UsageError("--profiles: give one or more profile names, A,B,...");
  int value = 0;
  if (!Int("gpus", 1, &value)) return failed_;
  req.set_gpus(value);
  v1::Objective objective;
  if (!ObjectiveFlag(&objective)) return failed_;
  req.set_objective(objective);
  if (a_.Has("model")) {
    if (!a_.Has("global-batch")) return UsageError("--model needs --global-batch");
    v1::CodesignWorkload* w = req.add_workloads();
    w->set_model(a_.Get("model"));
    value = 0;
    if (!Int("global-batch", 1, &value)) return failed_;
    w->set_global_batch_size(value);
  } else {
    absl::StatusOr<std::vector<v1::CodesignWorkload>> ws = ReadCodesignWorkloads(a_.Get("workloads"));
    if (!ws.ok()) return BadInput(ws.status());
    for (v1::CodesignWorkload& w : *ws) *req.add_workloads() = std::move(w);
  }
  std::vector<Override> sets;
  if (!ParseOverrides(&sets)) return failed_;
  if (!Connect()) return failed_;
  // --set: every design as changed alike, for this request only.
  for (int i = 0; i < req.designs_size() && !sets.empty(); ++i) {
    if (!ApplyOverrides(sets, req.designs(i), req.add_design_overrides())) return failed_;
  }
  v1::CodesignResponse r;
  absl::Status s = link_.Codesign(req, &r);
  if (!s.ok()) return RpcFailed(s);
  const TableStyle style =
      a_.output == "csv" ? TableStyle::kCsv : a_.output == "wide" ? TableStyle::kWide : TableStyle::kCompact;
  const int printed = Print(r, FormatCodesign(r, style));
  return printed != kOk ? printed : r.best_by_time().empty() ? kError : kOk;
}

}  // namespace paraplan::cli
