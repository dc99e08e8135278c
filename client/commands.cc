#include "client/commands.h"

#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/ascii.h"
#include "client/format.h"
#include "google/protobuf/util/json_util.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "paraplan/v1/services.grpc.pb.h"

namespace paraplan::cli {

namespace {

constexpr int kOk = 0, kError = 1, kUsage = 2, kBadInput = 65, kUnavailable = 69;

// A failure with the exit code it maps to.
struct Failure {
  int code;
  std::string message;
};

class Cli {
 public:
  explicit Cli(const Args& a) : a_(a) {}
  int Run();

 private:
  int Profiles();
  int Estimate();
  int EstimateBatch();
  int Plan();
  int Ingest();
  int Calibrate();
  int Accuracy();
  int Models();
  int Health();

  bool Connect();
  std::unique_ptr<grpc::ClientContext> Context() const;
  int RpcFailed(const grpc::Status& s);
  int Fail(int code, const std::string& message);
  int Print(const google::protobuf::Message& m, const std::string& table);
  bool ReadFile(const std::string& path, std::string* out);
  bool ParseJson(const std::string& text, google::protobuf::Message* m, const std::string& where, bool lenient);
  bool LoadWorkload(v1::Workload* w, std::string* model);
  bool IntList(const std::string& key, google::protobuf::RepeatedField<int32_t>* out);

  const Args& a_;
  std::shared_ptr<grpc::Channel> channel_;
  int failed_ = 0;
};

std::string Json(const google::protobuf::Message& m, bool pretty) {
  google::protobuf::util::JsonPrintOptions o;
  o.preserve_proto_field_names = true;
  o.always_print_primitive_fields = true;
  o.add_whitespace = pretty;
  std::string s;
  (void)google::protobuf::util::MessageToJsonString(m, &s, o);
  return s;
}

int Cli::Fail(int code, const std::string& message) {
  std::fprintf(stderr, "paraplan: %s\n", message.c_str());
  failed_ = code;
  return code;
}

int Cli::RpcFailed(const grpc::Status& s) {
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE) {
    return Fail(kUnavailable, absl::StrCat("server unavailable at ", a_.server, ": ", s.error_message()));
  }
  static const char* kNames[] = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
                                 "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
                                 "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
                                 "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
  const int c = s.error_code();
  return Fail(kError, absl::StrCat("error: ", c >= 0 && c <= 16 ? kNames[c] : "UNKNOWN", ": ", s.error_message()));
}

bool Cli::Connect() {
  channel_ = grpc::CreateChannel(a_.server, grpc::InsecureChannelCredentials());
  const auto deadline = std::chrono::system_clock::now() + std::chrono::milliseconds(
                                                                 static_cast<int64_t>(std::min(a_.timeout_s, 10.0) * 1000));
  if (!channel_->WaitForConnected(deadline)) {
    Fail(kUnavailable, absl::StrCat("server unavailable at ", a_.server));
    return false;
  }
  return true;
}

std::unique_ptr<grpc::ClientContext> Cli::Context() const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() +
                    std::chrono::milliseconds(static_cast<int64_t>(a_.timeout_s * 1000)));
  return ctx;
}

int Cli::Print(const google::protobuf::Message& m, const std::string& table) {
  if (a_.output == "json") {
    std::printf("%s\n", Json(m, true).c_str());
  } else {
    std::printf("%s", table.c_str());
  }
  return kOk;
}

bool Cli::ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    Fail(kBadInput, absl::StrCat(path, ": cannot read file"));
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

bool Cli::ParseJson(const std::string& text, google::protobuf::Message* m, const std::string& where,
                    bool lenient) {
  google::protobuf::util::JsonParseOptions o;
  o.ignore_unknown_fields = lenient;
  auto s = google::protobuf::util::JsonStringToMessage(text, m, o);
  if (!s.ok()) {
    Fail(kBadInput, absl::StrCat(where, ": not a valid ", m->GetDescriptor()->name(), ": ", s.message().as_string()));
    return false;
  }
  return true;
}

bool Cli::LoadWorkload(v1::Workload* w, std::string* model) {
  if (a_.Has("workload")) {
    std::string text;
    return ReadFile(a_.Get("workload"), &text) && ParseJson(text, w, a_.Get("workload"), false);
  }
  if (a_.Has("model")) {
    *model = a_.Get("model");
    return true;
  }
  Fail(kUsage, "give --workload FILE or --model PRESET (see `paraplan models`)");
  return false;
}

bool Cli::IntList(const std::string& key, google::protobuf::RepeatedField<int32_t>* out) {
  if (!a_.Has(key)) return true;
  for (absl::string_view part : absl::StrSplit(a_.Get(key), ',')) {
    int v = 0;
    if (!absl::SimpleAtoi(part, &v) || v < 0) {
      Fail(kUsage, absl::StrCat("--", key, ": \"", a_.Get(key), "\" is not a list of non-negative integers"));
      return false;
    }
    out->Add(v);
  }
  return true;
}

int Cli::Run() {
  if (a_.words.empty() || (a_.help && a_.words.empty())) {
    std::fprintf(a_.help ? stdout : stderr, "%s", Usage().c_str());
    return a_.help ? kOk : kUsage;
  }
  if (a_.help) {
    std::printf("%s", Usage().c_str());
    return kOk;
  }
  const std::string& cmd = a_.words[0];
  if (cmd == "profiles") return Profiles();
  if (cmd == "estimate") return a_.Has("batch") ? EstimateBatch() : Estimate();
  if (cmd == "plan") return Plan();
  if (cmd == "ingest") return Ingest();
  if (cmd == "calibrate") return Calibrate();
  if (cmd == "accuracy") return Accuracy();
  if (cmd == "models") return Models();
  if (cmd == "health") return Health();
  return Fail(kUsage, absl::StrCat("unknown command \"", cmd, "\"\n", Usage()));
}

int Cli::Profiles() {
  const std::string sub = a_.words.size() > 1 ? a_.words[1] : "";
  const std::string arg = a_.words.size() > 2 ? a_.words[2] : "";
  const bool needs_arg = sub == "show" || sub == "history" || sub == "put" || sub == "delete";
  if ((sub != "list" && !needs_arg) || (needs_arg && arg.empty())) {
    return Fail(kUsage, "usage: paraplan profiles list | show NAME[@VERSION] | history NAME | put FILE.json | "
                        "delete NAME");
  }
  v1::SystemProfile put;
  if (sub == "put") {
    std::string text;
    if (!ReadFile(arg, &text) || !ParseJson(text, &put, arg, false)) return failed_;
  }
  if (!Connect()) return failed_;
  auto stub = v1::Profiles::NewStub(channel_);
  if (sub == "list") {
    v1::ListProfilesResponse all;
    std::string token;
    do {
      v1::ListProfilesRequest req;
      req.set_page_size(200);
      req.set_page_token(token);
      v1::ListProfilesResponse resp;
      grpc::Status s = stub->ListProfiles(Context().get(), req, &resp);
      if (!s.ok()) return RpcFailed(s);
      for (const auto& p : resp.profiles()) *all.add_profiles() = p;
      token = resp.next_page_token();
    } while (!token.empty());
    std::vector<v1::SystemProfile> list(all.profiles().begin(), all.profiles().end());
    return Print(all, FormatProfileList(list));
  }
  if (sub == "show") {
    v1::GetProfileRequest req;
    req.set_name(arg);
    v1::SystemProfile p;
    grpc::Status s = stub->GetProfile(Context().get(), req, &p);
    return s.ok() ? Print(p, FormatProfile(p)) : RpcFailed(s);
  }
  if (sub == "history") {
    v1::ListProfileVersionsRequest req;
    req.set_name(arg);
    v1::ListProfileVersionsResponse r;
    grpc::Status s = stub->ListProfileVersions(Context().get(), req, &r);
    return s.ok() ? Print(r, FormatHistory(r)) : RpcFailed(s);
  }
  if (sub == "put") {
    v1::UpdateProfileRequest req;
    *req.mutable_profile() = put;
    req.set_create_if_missing(true);
    v1::SystemProfile p;
    grpc::Status s = stub->UpdateProfile(Context().get(), req, &p);
    return s.ok() ? Print(p, absl::StrCat(p.name(), "@", p.version(), "\n")) : RpcFailed(s);
  }
  v1::DeleteProfileRequest req;
  req.set_name(arg);
  v1::DeleteProfileResponse r;
  grpc::Status s = stub->DeleteProfile(Context().get(), req, &r);
  return s.ok() ? Print(r, absl::StrCat("deleted ", arg, " (", r.versions_deleted(), " versions)\n")) : RpcFailed(s);
}

int Cli::Estimate() {
  if (!a_.Has("profile") || !a_.Has("config")) {
    return Fail(kUsage, "usage: paraplan estimate --profile NAME (--workload FILE | --model PRESET) --config FILE");
  }
  v1::EstimateRequest req;
  req.set_profile(a_.Get("profile"));
  std::string model, text;
  if (!LoadWorkload(req.mutable_workload(), &model)) return failed_;
  if (!model.empty()) {
    req.clear_workload();
    req.set_model(model);
  }
  if (!ReadFile(a_.Get("config"), &text) || !ParseJson(text, req.mutable_config(), a_.Get("config"), false)) {
    return failed_;
  }
  if (a_.Has("gpus")) {
    int gpus = 0;
    if (!absl::SimpleAtoi(a_.Get("gpus"), &gpus) || gpus <= 0) return Fail(kUsage, "--gpus: not a positive integer");
    req.set_num_gpus(gpus);
  }
  if (!Connect()) return failed_;
  v1::EstimateResponse r;
  grpc::Status s = v1::Planner::NewStub(channel_)->Estimate(Context().get(), req, &r);
  return s.ok() ? Print(r.estimate(), FormatEstimate(r.estimate())) : RpcFailed(s);
}

int Cli::EstimateBatch() {
  std::string text;
  if (!ReadFile(a_.Get("batch"), &text)) return failed_;
  struct Line {
    bool ok;
    v1::RpcError error;
  };
  std::vector<Line> lines;
  v1::EstimateBatchRequest batch;
  int n = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++n;
    if (absl::StripAsciiWhitespace(raw).empty()) continue;
    v1::EstimateRequest req;
    google::protobuf::util::JsonParseOptions o;
    o.ignore_unknown_fields = true;
    auto st = google::protobuf::util::JsonStringToMessage(std::string(raw), &req, o);
    Line line{st.ok(), {}};
    if (st.ok()) {
      *batch.add_requests() = req;
    } else {
      line.error.set_code(static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
      line.error.set_message(absl::StrCat(a_.Get("batch"), ":", n, ": ", st.message().as_string()));
    }
    lines.push_back(line);
  }
  if (lines.empty()) return Fail(kBadInput, absl::StrCat(a_.Get("batch"), ": no requests"));
  if (batch.requests_size() == 0) {
    for (const Line& l : lines) std::printf("{\"error\": %s}\n", Json(l.error, false).c_str());
    failed_ = kBadInput;
    return kBadInput;
  }
  if (!Connect()) return failed_;
  auto stub = v1::Planner::NewStub(channel_);
  std::vector<v1::EstimateResult> results;
  constexpr int kChunk = 1000;
  for (int start = 0; start < batch.requests_size(); start += kChunk) {
    v1::EstimateBatchRequest chunk;
    for (int i = start; i < std::min(batch.requests_size(), start + kChunk); ++i) *chunk.add_requests() = batch.requests(i);
    v1::EstimateBatchResponse resp;
    grpc::Status s = stub->EstimateBatch(Context().get(), chunk, &resp);
    if (!s.ok()) return RpcFailed(s);
    results.insert(results.end(), resp.results().begin(), resp.results().end());
  }
  size_t next = 0;
  for (const Line& l : lines) {
    if (!l.ok) {
      std::printf("{\"error\": %s}\n", Json(l.error, false).c_str());
    } else if (next < results.size()) {
      const v1::EstimateResult& r = results[next++];
      if (r.has_estimate()) {
        std::printf("%s\n", Json(r.estimate(), false).c_str());
      } else {
        std::printf("{\"error\": %s}\n", Json(r.error(), false).c_str());
      }
    }
  }
  return kOk;
}

int Cli::Plan() {
  if (!a_.Has("profile") || !a_.Has("gpus") || !a_.Has("global-batch")) {
    return Fail(kUsage,
                "usage: paraplan plan --profile NAME (--workload FILE | --model PRESET) --gpus N[,N...] "
                "--global-batch B [--top K] [--objective time|cost|energy] (see --help for constraints)");
  }
  v1::PlanRequest req;
  req.set_profile(a_.Get("profile"));
  std::string model;
  if (!LoadWorkload(req.mutable_workload(), &model)) return failed_;
  if (!model.empty()) {
    req.clear_workload();
    req.set_model(model);
  }
  if (!IntList("gpus", req.mutable_gpus())) return failed_;
  int value = 0;
  if (!absl::SimpleAtoi(a_.Get("global-batch"), &value)) return Fail(kUsage, "--global-batch: not an integer");
  req.set_global_batch_size(value);
  if (a_.Has("top")) {
    if (!absl::SimpleAtoi(a_.Get("top"), &value)) return Fail(kUsage, "--top: not an integer");
    req.set_top_k(value);
  }
  const std::string objective = a_.Get("objective", "time");
  if (objective == "time") {
    req.set_objective(v1::OBJECTIVE_TIME);
  } else if (objective == "cost") {
    req.set_objective(v1::OBJECTIVE_COST);
  } else if (objective == "energy") {
    req.set_objective(v1::OBJECTIVE_ENERGY);
  } else {
    return Fail(kUsage, "--objective must be time, cost or energy");
  }
  v1::PlanConstraints* k = req.mutable_constraints();
  if (!IntList("tp", k->mutable_tensor_parallel()) || !IntList("pp", k->mutable_pipeline_parallel()) ||
      !IntList("dp", k->mutable_data_parallel()) || !IntList("cp", k->mutable_context_parallel()) ||
      !IntList("ep", k->mutable_expert_parallel()) || !IntList("mbs", k->mutable_micro_batch_size()) ||
      !IntList("vpp", k->mutable_virtual_pipeline_stages()) || !IntList("zero", k->mutable_zero_stage())) {
    return failed_;
  }
  const std::pair<const char*, void (v1::PlanConstraints::*)(int32_t)> caps[] = {
      {"max-tp", &v1::PlanConstraints::set_max_tensor_parallel},
      {"max-pp", &v1::PlanConstraints::set_max_pipeline_parallel},
      {"max-cp", &v1::PlanConstraints::set_max_context_parallel},
      {"max-mbs", &v1::PlanConstraints::set_max_micro_batch_size}};
  for (const auto& [key, setter] : caps) {
    if (!a_.Has(key)) continue;
    if (!absl::SimpleAtoi(a_.Get(key), &value) || value < 0) {
      return Fail(kUsage, absl::StrCat("--", key, ": not a non-negative integer"));
    }
    (k->*setter)(value);
  }
  if (a_.Has("recompute")) {
    for (absl::string_view r : absl::StrSplit(a_.Get("recompute"), ',')) {
      if (r == "none") k->add_recompute(v1::RECOMPUTE_NONE);
      else if (r == "selective") k->add_recompute(v1::RECOMPUTE_SELECTIVE);
      else if (r == "full") k->add_recompute(v1::RECOMPUTE_FULL);
      else return Fail(kUsage, "--recompute: a list of none, selective, full");
    }
  }
  double headroom = 0;
  if (a_.Has("headroom") && !absl::SimpleAtod(a_.Get("headroom"), &headroom)) {
    return Fail(kUsage, "--headroom: not a number");
  }
  k->set_memory_headroom_ratio(headroom);
  k->set_allow_offload(a_.flags.count("allow-offload") > 0);
  if (!Connect()) return failed_;
  v1::PlanResponse r;
  grpc::Status s = v1::Planner::NewStub(channel_)->Plan(Context().get(), req, &r);
  return s.ok() ? Print(r, FormatPlan(r)) : RpcFailed(s);
}

int Cli::Ingest() {
  if (a_.words.size() < 2) return Fail(kUsage, "usage: paraplan ingest FILE.jsonl");
  const std::string path = a_.words[1];
  std::string text;
  if (!ReadFile(path, &text)) return failed_;
  v1::IngestMeasurementsRequest req;
  std::vector<std::string> local_errors;  // per line, "" when sent
  int n = 0, parsed = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++n;
    if (absl::StripAsciiWhitespace(raw).empty()) continue;
    v1::Measurement m;
    google::protobuf::util::JsonParseOptions o;
    o.ignore_unknown_fields = true;
    auto st = google::protobuf::util::JsonStringToMessage(std::string(raw), &m, o);
    if (!st.ok()) {
      local_errors.push_back(absl::StrCat(path, ":", n, ": ", st.message().as_string()));
      continue;
    }
    ++parsed;
    local_errors.push_back("");
    *req.add_measurements() = m;
  }
  if (parsed == 0) {
    for (const std::string& e : local_errors) std::fprintf(stderr, "rejected  %s\n", e.c_str());
    return Fail(kBadInput, absl::StrCat(path, ": no valid measurement"));
  }
  if (!Connect()) return failed_;
  auto stub = v1::Measurements::NewStub(channel_);
  v1::IngestMeasurementsResponse all;
  constexpr int kChunk = 1000;
  for (int start = 0; start < req.measurements_size(); start += kChunk) {
    v1::IngestMeasurementsRequest chunk;
    for (int i = start; i < std::min(req.measurements_size(), start + kChunk); ++i) {
      *chunk.add_measurements() = req.measurements(i);
    }
    v1::IngestMeasurementsResponse resp;
    grpc::Status s = stub->IngestMeasurements(Context().get(), chunk, &resp);
    if (!s.ok()) return RpcFailed(s);
    for (const auto& r : resp.results()) *all.add_results() = r;
    all.set_accepted(all.accepted() + resp.accepted());
    all.set_duplicates(all.duplicates() + resp.duplicates());
    all.set_rejected(all.rejected() + resp.rejected());
    all.set_calibration_triggered(all.calibration_triggered() || resp.calibration_triggered());
  }
  int local_rejected = 0;
  for (const std::string& e : local_errors) local_rejected += !e.empty();
  all.set_rejected(all.rejected() + local_rejected);
  std::string table;
  Table t({"id", "result", "predicted s", "detail"});
  int next = 0;
  for (const std::string& e : local_errors) {
    if (!e.empty()) {
      t.Add({"-", "rejected", "-", e});
      continue;
    }
    const v1::IngestResult& r = all.results(next++);
    const char* result = r.status() == v1::IngestResult::STATUS_ACCEPTED    ? "accepted"
                         : r.status() == v1::IngestResult::STATUS_DUPLICATE ? "duplicate"
                                                                            : "rejected";
    t.Add({r.id(), result,
           r.status() == v1::IngestResult::STATUS_ACCEPTED ? absl::StrFormat("%.3f", r.predicted_iteration_time_s())
                                                           : "-",
           r.reason()});
  }
  table = absl::StrCat(t.Render(), "\n", all.accepted(), " accepted, ", all.duplicates(), " duplicate, ",
                       all.rejected(), " rejected", all.calibration_triggered() ? "; calibration ran" : "", "\n");
  return Print(all, table);
}

int Cli::Calibrate() {
  if (!a_.Has("profile")) return Fail(kUsage, "usage: paraplan calibrate --profile NAME");
  if (!Connect()) return failed_;
  v1::CalibrateRequest req;
  req.set_profile(a_.Get("profile"));
  v1::CalibrateResponse r;
  grpc::Status s = v1::Measurements::NewStub(channel_)->Calibrate(Context().get(), req, &r);
  if (!s.ok()) return RpcFailed(s);
  return Print(r, absl::StrCat("new version ", r.profile().name(), "@", r.profile().version(), "\n",
                               FormatFitReport(r.report())));
}

int Cli::Accuracy() {
  if (!a_.Has("profile")) return Fail(kUsage, "usage: paraplan accuracy --profile NAME [--label KEY] [--recent N]");
  v1::GetAccuracyRequest req;
  req.set_profile(a_.Get("profile"));
  req.set_label_key(a_.Get("label"));
  int recent = 0;
  if (a_.Has("recent") && (!absl::SimpleAtoi(a_.Get("recent"), &recent) || recent < 0)) {
    return Fail(kUsage, "--recent: not a non-negative integer");
  }
  req.set_recent(recent);
  if (!Connect()) return failed_;
  v1::AccuracyReport r;
  grpc::Status s = v1::Measurements::NewStub(channel_)->GetAccuracy(Context().get(), req, &r);
  return s.ok() ? Print(r, FormatAccuracy(r)) : RpcFailed(s);
}

int Cli::Models() {
  if (!Connect()) return failed_;
  v1::ListModelsResponse r;
  grpc::Status s = v1::Planner::NewStub(channel_)->ListModels(Context().get(), v1::ListModelsRequest(), &r);
  return s.ok() ? Print(r, FormatModels(r)) : RpcFailed(s);
}

int Cli::Health() {
  if (!Connect()) return failed_;
  grpc::health::v1::HealthCheckRequest req;
  req.set_service(a_.words.size() > 1 ? a_.words[1] : "");
  grpc::health::v1::HealthCheckResponse r;
  grpc::Status s = grpc::health::v1::Health::NewStub(channel_)->Check(Context().get(), req, &r);
  if (!s.ok()) return RpcFailed(s);
  const std::string status = grpc::health::v1::HealthCheckResponse::ServingStatus_Name(r.status());
  Print(r, status + "\n");
  return r.status() == grpc::health::v1::HealthCheckResponse::SERVING ? kOk : kUnavailable;
}

}  // namespace

int RunCommand(const Args& args) { return Cli(args).Run(); }

}  // namespace paraplan::cli
