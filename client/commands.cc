#include "client/commands.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "client/compare.h"
#include "client/config_flags.h"
#include "client/format.h"
#include "client/input.h"
#include "client/json_io.h"
#include "client/launcher.h"
#include "client/layer_times.h"
#include "client/network_format.h"
#include "client/overrides.h"
#include "client/plan_table.h"
#include "client/server_link.h"
#include "client/version.h"
#include "report/report.h"

namespace paraplan::cli {

namespace {

constexpr int kOk = 0, kError = 1, kUsage = 2, kBadInput = 65, kUnavailable = 69, kCannotCreate = 73;
// Requests per EstimateBatch / IngestMeasurements call.
constexpr int kChunk = 1000;

// " PATH=VALUE ..." of each --set.
std::string SetList(const std::vector<Override>& sets) {
  std::string out;
  for (const Override& o : sets) absl::StrAppend(&out, " ", o.path, "=", o.value);
  return out;
}

// "with --set (not saved): PATH=VALUE ...", the line under a table made with --set.
std::string SetNote(const std::vector<Override>& sets) {
  return absl::StrCat("with --set (not saved):", SetList(sets), "\n");
}

// One run of one command. Each method returns the process exit code; a failure is
// reported on stderr once, where it happens, and its code kept in failed_.
class Cli {
 public:
  explicit Cli(const Args& a)
      : a_(a), link_(LinkOptions{a.server, a.timeout_s, a.token, a.tls_ca, a.tls_cert, a.tls_key}) {}
  int Run();

 private:
  int Profiles();
  int FitMicrobench();
  int PutLayerTimes();
  int Estimate();
  int EstimateBatch();
  int Compare();
  int PlanWhatIf(v1::PlanRequest req, const std::vector<Override>& sets);
  int PrintComparison(const Comparison& c);
  bool LoadEstimateRequest(const char* command, v1::EstimateRequest* req);
  int Plan();
  int PlanOutputs(const v1::PlanRequest& req, const v1::PlanResponse& r);
  int PrintPlan(const v1::PlanRequest& req, const v1::PlanResponse& r);
  // plan_labels / what_if: a what-if page (ReportInput).
  int WriteReport(const v1::PlanRequest& req, const v1::PlanResponse& r, const v1::SystemProfile& profile,
                  std::vector<std::string> plan_labels = {}, std::string what_if = "");
  bool PlanWorkload(const v1::PlanRequest& req, v1::Workload* w);
  int Ingest();
  int Calibrate();
  int Accuracy();
  int Models();
  int Health();
  int Version();
  int Simulate();
  int Codesign();

  bool Connect(double max_wait_s = 10);
  bool IsTransformer(const v1::EstimateRequest& req);
  int RpcFailed(const absl::Status& s);
  int Fail(int code, const std::string& message);
  int UsageError(const std::string& message);
  int BadInput(const absl::Status& s) { return Fail(kBadInput, std::string(s.message())); }
  int Print(const google::protobuf::Message& m, const std::string& table);
  bool LoadWorkload(v1::Workload* w, std::string* model);
  bool Int(const std::string& key, int min, int* out);
  bool LoadConfig(v1::ParallelConfig* c);
  // --objective; `quantile` (plan) also takes time@pNN and is set to NN / 100.
  bool ObjectiveFlag(v1::Objective* out, double* quantile = nullptr);
  bool ParseOverrides(std::vector<Override>* out);
  bool ApplyOverrides(const std::vector<Override>& sets, const std::string& profile, v1::SystemProfile* p,
                      v1::SystemProfile* stored = nullptr);
  void PrintSetNote();
  std::string ResolvedProfile(const std::string& reference);

  const Args& a_;
  ServerLink link_;
  std::vector<Override> sets_;  // --set, once parsed
  int failed_ = 0;
};

int Cli::Fail(int code, const std::string& message) {
  std::fprintf(stderr, "paraplan: %s\n", message.c_str());
  failed_ = code;
  return code;
}

int Cli::UsageError(const std::string& message) {
  return Fail(kUsage, absl::StrCat(message, "\n", absl::StripTrailingAsciiWhitespace(a_.short_usage)));
}

int Cli::RpcFailed(const absl::Status& s) {
  if (s.code() == absl::StatusCode::kUnavailable) {
    return Fail(kUnavailable, absl::StrCat("server unavailable at ", a_.server, ": ", s.message()));
  }
  // The CLI never cancels its own calls: a cancelled call is one the server dropped as it
  // shut down (accepted by the transport, never given to a handler) — unavailable too.
  if (s.code() == absl::StatusCode::kCancelled) {
    return Fail(kUnavailable, absl::StrCat("server at ", a_.server, " cancelled the call (shutting down?): ",
                                           s.message()));
  }
  // gRPC and absl share the status codes (and absl names them as gRPC does).
  const std::string name = absl::StatusCodeToString(s.code());
  std::fprintf(stderr, "error: %s: %s\n", name.c_str(), std::string(s.message()).c_str());
  if (!sets_.empty() && absl::StartsWith(s.message(), "profile_override")) {
    std::fprintf(stderr, "paraplan: (the profile as changed by --set%s)\n", SetList(sets_).c_str());
  }
  failed_ = kError;
  return kError;
}

bool Cli::Connect(double max_wait_s) {
  const absl::Status s = link_.Connect(max_wait_s);
  if (s.ok()) return true;
  if (s.code() == absl::StatusCode::kUnavailable) {
    Fail(kUnavailable, std::string(s.message()));
  } else {
    BadInput(s);  // a TLS file that cannot be read
  }
  return false;
}

int Cli::Print(const google::protobuf::Message& m, const std::string& table) {
  if (a_.output == "json") {
    std::string json = PrintJson(m, /*pretty=*/true);
    if (json.empty() || json.back() != '\n') json += '\n';
    std::fputs(json.c_str(), stdout);
  } else {
    std::fputs(table.c_str(), stdout);
  }
  return kOk;
}

bool Cli::LoadWorkload(v1::Workload* w, std::string* model) {
  if (a_.Has("workload") && a_.Has("model")) {
    UsageError("give --workload FILE or --model PRESET, not both");
    return false;
  }
  if (a_.Has("workload")) {
    if (absl::Status s = LoadJsonFile(a_.Get("workload"), w); !s.ok()) {
      BadInput(s);
      return false;
    }
    return true;
  }
  if (a_.Has("model")) {
    *model = a_.Get("model");
    return true;
  }
  UsageError("give --workload FILE or --model PRESET (see `paraplan models`)");
  return false;
}

bool Cli::Int(const std::string& key, int min, int* out) {
  if (!a_.Has(key)) return true;
  if (!absl::SimpleAtoi(a_.Get(key), out) || *out < min) {
    UsageError(absl::StrCat("--", key, ": \"", a_.Get(key), "\" is not an integer >= ", min));
    return false;
  }
  return true;
}

// The ParallelConfig of estimate and compare: --config FILE, then the configuration
// flags over it (config_flags.h).
bool Cli::LoadConfig(v1::ParallelConfig* c) {
  if (a_.Has("config")) {
    if (absl::Status s = LoadJsonFile(a_.Get("config"), c); !s.ok()) {
      BadInput(s);
      return false;
    }
  } else if (!a_.Has("global-batch")) {
    UsageError(HasConfigFlags(a_) ? "without --config, give the global batch too (--global-batch B)"
                                  : "give the configuration: --config FILE, or flags such as --tp 8 --pp 4 --dp 8 "
                                    "--global-batch 1024");
    return false;
  }
  if (absl::Status s = ApplyConfigFlags(a_, c); !s.ok()) {
    UsageError(std::string(s.message()));
    return false;
  }
  return true;
}

bool Cli::ObjectiveFlag(v1::Objective* out, double* quantile) {
  std::string objective = a_.Get("objective", "time");
  // time@pNN: rank by the NN-th percentile of the predicted time (plan only).
  if (absl::StartsWith(objective, "time@p") && quantile != nullptr) {
    double percent = 0;
    if (!absl::SimpleAtod(objective.substr(6), &percent) || !(percent > 0 && percent <= 99.9)) {
      UsageError("--objective time@pNN needs NN in (0, 99.9], e.g. time@p90");
      return false;
    }
    *quantile = percent / 100;
    objective = "time";
  }
  if (objective == "time") {
    *out = v1::OBJECTIVE_TIME;
  } else if (objective == "cost") {
    *out = v1::OBJECTIVE_COST;
  } else if (objective == "energy") {
    *out = v1::OBJECTIVE_ENERGY;
  } else {
    UsageError(quantile != nullptr ? "--objective must be time, time@pNN, cost or energy"
                                   : "--objective must be time, cost or energy");
    return false;
  }
  return true;
}

// --set PATH=VALUE, each checked for its shape (no RPC).
bool Cli::ParseOverrides(std::vector<Override>* out) {
  for (const std::string& text : a_.sets) {
    absl::StatusOr<Override> o = ParseOverride(text);
    if (!o.ok()) {
      UsageError(std::string(o.status().message()));
      return false;
    }
    out->push_back(*std::move(o));
  }
  sets_ = *out;
  return true;
}

// The profile `reference` as the server has it, changed by `sets` (a path it does not
// have is a usage error); `stored`, when given, receives the profile as read.
bool Cli::ApplyOverrides(const std::vector<Override>& sets, const std::string& reference, v1::SystemProfile* p,
                         v1::SystemProfile* stored) {
  v1::GetProfileRequest get;
  get.set_name(reference);
  const absl::Status s = link_.GetProfile(get, p);
  if (!s.ok()) {
    RpcFailed(s);
    return false;
  }
  if (stored != nullptr) *stored = *p;
  for (const Override& o : sets) {
    if (absl::Status applied = ApplyOverride(o, p); !applied.ok()) {
      UsageError(std::string(applied.message()));
      return false;
    }
  }
  return true;
}

// After a plan or compare table: the --set note (JSON and CSV carry the server's
// warning in each estimate instead).
void Cli::PrintSetNote() {
  if (!sets_.empty() && (a_.output == "table" || a_.output == "wide")) std::fputs(SetNote(sets_).c_str(), stdout);
}

// NAME@VERSION of the version the server answers for `reference`, or `reference`.
std::string Cli::ResolvedProfile(const std::string& reference) {
  v1::GetProfileRequest get;
  get.set_name(reference);
  v1::SystemProfile p;
  if (!link_.GetProfile(get, &p).ok()) return reference;
  return absl::StrCat(p.name(), "@", p.version());
}

int Cli::Run() {
  if (a_.version) return Version();
  if (a_.help) {
    std::fputs(a_.usage.c_str(), stdout);
    return kOk;
  }
  const std::string& cmd = a_.words[0];
  if (cmd == "profiles") return Profiles();
  if (cmd == "estimate") return a_.Has("batch") ? EstimateBatch() : Estimate();
  if (cmd == "plan") return Plan();
  if (cmd == "compare") return Compare();
  if (cmd == "ingest") return Ingest();
  if (cmd == "calibrate") return Calibrate();
  if (cmd == "accuracy") return Accuracy();
  if (cmd == "models") return Models();
  if (cmd == "health") return Health();
  if (cmd == "simulate") return Simulate();
  if (cmd == "codesign") return Codesign();
  return UsageError(absl::StrCat("unknown command \"", cmd, "\""));  // ParseArgs lets none through
}

// profiles put-layer-times NAME[@V] FILE.csv: the profile's next version with the rows
// merged into its layer_timings (the server validates and versions it like any put).
int Cli::PutLayerTimes() {
  absl::StatusOr<std::string> text = ReadFile(a_.words[3]);
  if (!text.ok()) return BadInput(text.status());
  absl::StatusOr<std::vector<v1::LayerTiming>> rows = ParseLayerTimes(*text);
  if (!rows.ok()) return BadInput(absl::InvalidArgumentError(absl::StrCat(a_.words[3], ": ", rows.status().message())));
  if (!Connect()) return failed_;
  v1::GetProfileRequest get;
  get.set_name(a_.words[2]);
  v1::SystemProfile p;
  absl::Status s = link_.GetProfile(get, &p);
  if (!s.ok()) return RpcFailed(s);
  const int replaced = MergeLayerTimes(*rows, &p);
  v1::UpdateProfileRequest req;
  *req.mutable_profile() = p;
  v1::SystemProfile out;
  s = link_.UpdateProfile(req, &out);
  if (!s.ok()) return RpcFailed(s);
  return Print(out, absl::StrCat(out.name(), "@", out.version(), ": ", rows->size(), " layer times (", replaced,
                                 " replaced), ", out.layer_timings_size(), " stored\n"));
}

// profiles fit-network / fit-gemm: the files are read here and sent whole; the server
// parses and fits them (one parser for every client).
int Cli::FitMicrobench() {
  const bool network = a_.words[1] == "fit-network";
  const std::string profile = a_.words[2];
  std::vector<v1::MicrobenchFile> files;
  for (size_t i = 3; i < a_.words.size(); ++i) {
    absl::StatusOr<std::string> text = ReadFile(a_.words[i]);
    if (!text.ok()) return BadInput(text.status());
    v1::MicrobenchFile f;
    f.set_name(a_.words[i]);
    f.set_content(*std::move(text));
    files.push_back(std::move(f));
  }
  if (files.empty()) return UsageError("give at least one nccl-tests output file");
  const bool dry = a_.flags.count("dry-run") > 0;
  int ranks = 0;
  if (!Int("ranks", 1, &ranks)) return failed_;
  if (!Connect()) return failed_;
  if (network) {
    v1::FitNetworkRequest req;
    req.set_profile(profile);
    for (v1::MicrobenchFile& f : files) *req.add_files() = std::move(f);
    req.set_level(a_.Get("level"));
    req.set_collective(a_.Get("collective"));
    req.set_ranks(ranks);
    req.set_dry_run(dry);
    v1::FitNetworkResponse r;
    absl::Status s = link_.FitNetwork(req, &r);
    return s.ok() ? Print(r, FormatFitNetwork(r)) : RpcFailed(s);
  }
  v1::FitGemmRequest req;
  req.set_profile(profile);
  *req.mutable_csv() = std::move(files[0]);
  req.set_dry_run(dry);
  v1::FitGemmResponse r;
  absl::Status s = link_.FitGemm(req, &r);
  return s.ok() ? Print(r, FormatFitGemm(r)) : RpcFailed(s);
}

int Cli::Profiles() {
  // ParseArgs has checked the subcommand and its one argument.
  const std::string& sub = a_.words[1];
  const std::string arg = a_.words.size() > 2 ? a_.words[2] : "";
  if (sub == "fit-network" || sub == "fit-gemm") return FitMicrobench();
  if (sub == "put-layer-times") return PutLayerTimes();
  v1::SystemProfile put;
  if (sub == "put") {
    if (absl::Status s = LoadJsonFile(arg, &put); !s.ok()) return BadInput(s);
  }
  std::vector<Override> sets;
  if (!ParseOverrides(&sets)) return failed_;
  if (!Connect()) return failed_;
  if (sub == "list") {
    v1::ListProfilesResponse all;
    std::string token;
    do {
      v1::ListProfilesRequest req;
      req.set_page_size(200);
      req.set_page_token(token);
      v1::ListProfilesResponse resp;
      absl::Status s = link_.ListProfiles(req, &resp);
      if (!s.ok()) return RpcFailed(s);
      for (const auto& p : resp.profiles()) *all.add_profiles() = p;
      token = resp.next_page_token();
    } while (!token.empty());
    std::vector<v1::SystemProfile> list(all.profiles().begin(), all.profiles().end());
    return Print(all, FormatProfileList(list));
  }
  if (sub == "show") {
    v1::SystemProfile p;
    if (!sets.empty()) {
      // The profile as --set changes it, for this output only.
      if (!ApplyOverrides(sets, arg, &p)) return failed_;
      return Print(p, absl::StrCat(FormatProfile(p), SetNote(sets)));
    }
    v1::GetProfileRequest req;
    req.set_name(arg);
    absl::Status s = link_.GetProfile(req, &p);
    return s.ok() ? Print(p, FormatProfile(p)) : RpcFailed(s);
  }
  if (sub == "history") {
    v1::ListProfileVersionsRequest req;
    req.set_name(arg);
    v1::ListProfileVersionsResponse r;
    absl::Status s = link_.ListProfileVersions(req, &r);
    return s.ok() ? Print(r, FormatHistory(r)) : RpcFailed(s);
  }
  if (sub == "promote") {
    v1::PromoteProfileRequest req;
    req.set_name(arg);
    v1::SystemProfile p;
    absl::Status s = link_.PromoteProfile(req, &p);
    return s.ok() ? Print(p, absl::StrCat(p.name(), "@", p.version(), " is now the default version of ", p.name(),
                                          "\n"))
                  : RpcFailed(s);
  }
  if (sub == "put") {
    // A file named like a built-in would become the version every plan on it uses: ask
    // for that explicitly.
    v1::ListProfileVersionsRequest history;
    history.set_name(put.name());
    v1::ListProfileVersionsResponse versions;
    if (!put.name().empty() && a_.flags.count("new-version") == 0 &&
        link_.ListProfileVersions(history, &versions).ok()) {
      for (const v1::SystemProfile& v : versions.versions()) {
        if (v.origin() != "builtin") continue;
        return UsageError(absl::StrCat(
            DisplayName(arg), " names the built-in profile ", put.name(), ": putting it writes ", put.name(), "@",
            versions.versions(versions.versions_size() - 1).version() + 1,
            ", the version every plan on ", put.name(), " then uses. Give --new-version to do that, or rename the "
            "profile in the file (\"name\") to keep the built-in as it is."));
      }
    }
    v1::UpdateProfileRequest req;
    *req.mutable_profile() = put;
    req.set_create_if_missing(true);
    v1::SystemProfile p;
    absl::Status s = link_.UpdateProfile(req, &p);
    return s.ok() ? Print(p, absl::StrCat(p.name(), "@", p.version(), "\n")) : RpcFailed(s);
  }
  v1::DeleteProfileRequest req;
  req.set_name(arg);
  v1::DeleteProfileResponse r;
  absl::Status s = link_.DeleteProfile(req, &r);
  return s.ok() ? Print(r, absl::StrCat("deleted ", arg, " (", r.versions_deleted(), " versions)\n")) : RpcFailed(s);
}

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
  v1::PlanResponse best;
  s = link_.Plan(plan, &best);
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
  s = link_.Plan(req, &changed);
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
// without a plan among the ranked ones is asked for once more on its own.
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
        if (none) {
          g.no_plan_reason = why;
          continue;
        }
        v1::PlanRequest one = req;
        one.clear_gpus();
        one.add_gpus(g.gpus);
        one.set_top_k(1);
        v1::PlanResponse best;
        const absl::Status s = link_.Plan(one, &best);
        if (!s.ok()) {
          g.no_plan_reason = absl::StrCat("the search failed: ", s.message());
        } else if (best.plans_size() > 0) {
          g.best = best.plans(0);
        } else {
          g.no_plan_reason = best.infeasible_reason();
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
    return Fail(kError, absl::StrCat("no plan fits (", why, "); nothing to --emit"));
  }
  if (!got.ok()) return RpcFailed(got);
  LaunchInput in;
  if (!PlanWorkload(req, &in.workload)) return failed_;
  in.config = r.plans(0).config();
  in.num_gpus = r.plans(0).num_gpus();
  in.gpus_per_node = profile.gpus_per_node();
  in.profile = absl::StrCat(profile.name(), "@", profile.version());
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

// Lines that cannot be parsed are rejected here (reason names the line) and never sent;
// the report lists every line in file order.
int Cli::Ingest() {
  const std::string path = a_.words[1];
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return BadInput(text.status());
  const std::vector<NumberedLine> lines = NonBlankLines(*text);
  if (lines.empty()) return Fail(kBadInput, absl::StrCat(path, ": no measurements (the file has no non-blank line)"));

  v1::IngestMeasurementsResponse report;  // one result per line, in order
  std::vector<int> sent;                  // indexes into report.results
  v1::IngestMeasurementsRequest all;
  for (const NumberedLine& line : lines) {
    v1::IngestResult* r = report.add_results();
    v1::Measurement m;
    if (absl::Status s = LoadJsonLine(DisplayName(path), line.number, line.text, &m); !s.ok()) {
      r->set_status(v1::IngestResult::STATUS_REJECTED);
      r->set_reason(std::string(s.message()));
      report.set_rejected(report.rejected() + 1);
      continue;
    }
    r->set_id(m.id());
    sent.push_back(report.results_size() - 1);
    *all.add_measurements() = std::move(m);
  }
  if (sent.empty()) {
    for (const v1::IngestResult& r : report.results()) std::fprintf(stderr, "rejected  %s\n", r.reason().c_str());
    return Fail(kBadInput, absl::StrCat(path, ": no line could be parsed as a Measurement"));
  }
  if (!Connect()) return failed_;
  for (size_t start = 0; start < sent.size(); start += kChunk) {
    const size_t end = std::min(sent.size(), start + kChunk);
    v1::IngestMeasurementsRequest chunk;
    for (size_t k = start; k < end; ++k) *chunk.add_measurements() = all.measurements(static_cast<int>(k));
    v1::IngestMeasurementsResponse resp;
    absl::Status s = link_.IngestMeasurements(chunk, &resp);
    if (!s.ok()) return RpcFailed(s);
    for (size_t k = start; k < end; ++k) {
      const int j = static_cast<int>(k - start);
      v1::IngestResult* r = report.mutable_results(sent[k]);
      if (j < resp.results_size()) {
        *r = resp.results(j);
      } else {
        r->set_status(v1::IngestResult::STATUS_REJECTED);
        r->set_reason("no result from the server");
        report.set_rejected(report.rejected() + 1);
      }
    }
    report.set_accepted(report.accepted() + resp.accepted());
    report.set_duplicates(report.duplicates() + resp.duplicates());
    report.set_rejected(report.rejected() + resp.rejected());
    report.set_calibration_triggered(report.calibration_triggered() || resp.calibration_triggered());
  }
  Print(report, FormatIngest(report));
  if (report.rejected() == 0) return kOk;
  failed_ = kError;
  return kError;  // the report names every rejected line
}

int Cli::Calibrate() {
  if (!a_.Has("profile")) return UsageError("calibrate needs --profile");
  if (!Connect()) return failed_;
  v1::CalibrateRequest req;
  req.set_profile(a_.Get("profile"));
  req.set_dry_run(a_.flags.count("dry-run") > 0);
  v1::CalibrateResponse r;
  absl::Status s = link_.Calibrate(req, &r);
  if (!s.ok()) return RpcFailed(s);
  std::string head;
  if (!r.stored()) {
    head = absl::StrCat("dry run: nothing stored (", r.report().promotion_reason(), ")\n");
  } else if (r.profile().is_default()) {
    head = absl::StrCat("new version ", r.profile().name(), "@", r.profile().version(), " is the default: ",
                        r.report().promotion_reason(), "\n");
  } else {
    head = absl::StrCat("new version ", r.profile().name(), "@", r.profile().version(), " stored as a candidate, ",
                        r.report().promotion_reason(), "; the default stays (`paraplan profiles promote ",
                        r.profile().name(), "@", r.profile().version(), "` to use it)\n");
  }
  return Print(r, absl::StrCat(head, FormatFitReport(r.report())));
}

int Cli::Accuracy() {
  if (!a_.Has("profile")) return UsageError("accuracy needs --profile");
  v1::GetAccuracyRequest req;
  req.set_profile(a_.Get("profile"));
  req.set_label_key(a_.Get("label"));
  int recent = 0;
  if (!Int("recent", 0, &recent)) return failed_;
  req.set_recent(recent);
  if (!Connect()) return failed_;
  v1::AccuracyReport r;
  absl::Status s = link_.GetAccuracy(req, &r);
  return s.ok() ? Print(r, FormatAccuracy(r)) : RpcFailed(s);
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

int Cli::Models() {
  if (!Connect()) return failed_;
  v1::ListModelsResponse r;
  absl::Status s = link_.ListModels(&r);
  return s.ok() ? Print(r, FormatModels(r)) : RpcFailed(s);
}

int Cli::Health() {
  if (!Connect()) return failed_;
  grpc::health::v1::HealthCheckRequest req;
  req.set_service(a_.words.size() > 1 ? a_.words[1] : "");
  grpc::health::v1::HealthCheckResponse r;
  absl::Status s = link_.Check(req, &r);
  if (!s.ok()) return RpcFailed(s);
  Print(r, grpc::health::v1::HealthCheckResponse::ServingStatus_Name(r.status()) + "\n");
  return r.status() == grpc::health::v1::HealthCheckResponse::SERVING ? kOk : kUnavailable;
}

// --version: the CLI's version, then the server's when it answers (exit 0 either way:
// the CLI's version is known). The server gets 3 s to connect.
int Cli::Version() {
  std::printf("paraplan %s (API %s, %s)\n", kCliVersion, kApiVersion, ApiFingerprint().c_str());
  std::fflush(stdout);
  if (!Connect(/*max_wait_s=*/3)) {
    std::printf("server %s: not reachable, version unknown\n", a_.server.c_str());
    return kOk;
  }
  v1::GetVersionResponse v;
  const absl::Status s =
      link_.GetVersion(&v);
  if (!s.ok()) {
    const std::string code = absl::StatusCodeToString(s.code());
    std::printf("server %s: version unknown (%s: %s)\n", a_.server.c_str(), code.c_str(),
                std::string(s.message()).c_str());
    return kOk;
  }
  std::printf("server %s: paraplan-server %s (API %s, %s; gRPC %s, protobuf %s)\n", a_.server.c_str(),
              v.server_version().c_str(), v.api_version().c_str(), v.api_fingerprint().c_str(),
              v.grpc_version().c_str(), v.protobuf_version().c_str());
  if (v.api_version() != kApiVersion || v.api_fingerprint() != ApiFingerprint()) {
    std::printf("note: the server was built from other .proto files than this CLI\n");
  }
  return kOk;
}

}  // namespace

int RunCommand(const Args& args) { return Cli(args).Run(); }

}  // namespace paraplan::cli
