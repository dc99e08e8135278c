// The CLI's command runner, shared by the files that implement its commands: one Cli
// runs one command (commands.cc: the plumbing, flags, --set, run, models / health /
// --version; commands_profiles.cc: profiles, ingest, calibrate, accuracy;
// commands_estimate.cc: estimate, compare, simulate, codesign; commands_plan.cc: plan,
// its what-if, launchers and report). Each command method returns the process exit code
// (commands.h); a failure is reported on stderr once, where it happens. Internal to the
// paraplan binary; no gRPC header (server_link.h carries the calls).
#ifndef PARAPLAN_CLIENT_CLI_H_
#define PARAPLAN_CLIENT_CLI_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "client/args.h"
#include "client/compare.h"
#include "client/overrides.h"
#include "client/server_link.h"

namespace paraplan::cli {

// How often `calibrate` asks after the operation it waits for.
inline constexpr int kCalibrationPollMs = 250;
inline constexpr int kOk = 0, kError = 1, kUsage = 2, kBadInput = 65, kUnavailable = 69, kCannotCreate = 73;
// Requests per EstimateBatch / IngestMeasurements call.
inline constexpr int kChunk = 1000;

// " PATH=VALUE ..." of each --set.
std::string SetList(const std::vector<Override>& sets);
// "with --set (not saved): PATH=VALUE ...", the line under a table made with --set.
std::string SetNote(const std::vector<Override>& sets);

// One run of one command; a failure's exit code is kept in failed_.
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
  int CalibrationOutcome(const v1::CalibrationOperation& op);
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

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_CLI_H_
