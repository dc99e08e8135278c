#include "client/cli.h"

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/config_flags.h"
#include "client/format.h"
#include "client/input.h"
#include "client/json_io.h"
#include "client/version.h"

namespace paraplan::cli {

std::string SetList(const std::vector<Override>& sets) {
  std::string out;
  for (const Override& o : sets) absl::StrAppend(&out, " ", o.path, "=", o.value);
  return out;
}

std::string SetNote(const std::vector<Override>& sets) {
  return absl::StrCat("with --set (not saved):", SetList(sets), "\n");
}

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

int RunCommand(const Args& args) { return Cli(args).Run(); }

}  // namespace paraplan::cli
