// The CLI's connection to the server: one gRPC channel (plain or TLS), opened with a
// bounded wait, and one call per RPC the CLI makes, each with the CLI's deadline and
// bearer token. Outcomes are absl::Status with gRPC's code and message (the two share
// their codes), so the command code includes no gRPC header: this file's .cc is the one
// translation unit of the CLI that does. Not thread-safe (one command at a time).
#ifndef PARAPLAN_CLIENT_SERVER_LINK_H_
#define PARAPLAN_CLIENT_SERVER_LINK_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "grpc/health/v1/health.pb.h"
#include "paraplan/v1/network.pb.h"
#include "paraplan/v1/services.pb.h"

namespace grpc {
class Channel;
class ClientContext;
}  // namespace grpc

namespace paraplan::cli {

struct LinkOptions {
  std::string server;  // HOST:PORT
  double timeout_s = 30;
  std::string token;   // bearer token; empty = none
  std::string tls_ca, tls_cert, tls_key;  // PEM files; all empty = plain
};

class ServerLink {
 public:
  explicit ServerLink(LinkOptions options);
  ~ServerLink();

  // Opens the channel and waits up to min(timeout, max_wait_s) for it: UNAVAILABLE when
  // the server refuses or does not answer (a refusal is reported after a second), a
  // file error when a TLS file cannot be read.
  absl::Status Connect(double max_wait_s);

  absl::Status GetProfile(const v1::GetProfileRequest& r, v1::SystemProfile* out);
  absl::Status ListProfiles(const v1::ListProfilesRequest& r, v1::ListProfilesResponse* out);
  absl::Status UpdateProfile(const v1::UpdateProfileRequest& r, v1::SystemProfile* out);
  absl::Status CheckProfile(const v1::CheckProfileRequest& r, v1::SystemProfile* out);
  absl::Status DeleteProfile(const v1::DeleteProfileRequest& r, v1::DeleteProfileResponse* out);
  absl::Status ListProfileVersions(const v1::ListProfileVersionsRequest& r, v1::ListProfileVersionsResponse* out);
  absl::Status PromoteProfile(const v1::PromoteProfileRequest& r, v1::SystemProfile* out);
  absl::Status FitNetwork(const v1::FitNetworkRequest& r, v1::FitNetworkResponse* out);
  absl::Status FitGemm(const v1::FitGemmRequest& r, v1::FitGemmResponse* out);
  absl::Status Estimate(const v1::EstimateRequest& r, v1::EstimateResponse* out);
  absl::Status EstimateBatch(const v1::EstimateBatchRequest& r, v1::EstimateBatchResponse* out);
  // Which deadline a call gets: the whole timeout from the call (kPerCall), or what is
  // left of it since this link was made, i.e. since the command began (kCommand: the
  // calls that follow one answer, such as plan's per-count lines).
  enum class Budget { kPerCall, kCommand };
  absl::Status Plan(const v1::PlanRequest& r, v1::PlanResponse* out, Budget budget = Budget::kPerCall);
  // Seconds left of the timeout since the command began (negative once it has passed).
  double CommandTimeLeftS() const;
  absl::Status ListModels(v1::ListModelsResponse* out);
  absl::Status GetVersion(v1::GetVersionResponse* out);
  absl::Status IngestMeasurements(const v1::IngestMeasurementsRequest& r, v1::IngestMeasurementsResponse* out);
  absl::Status GetAccuracy(const v1::GetAccuracyRequest& r, v1::AccuracyReport* out);
  absl::Status Calibrate(const v1::CalibrateRequest& r, v1::CalibrateResponse* out);
  absl::Status StartCalibration(const v1::CalibrateRequest& r, v1::CalibrationOperation* out);
  absl::Status GetCalibration(const v1::GetCalibrationRequest& r, v1::CalibrationOperation* out);
  absl::Status Simulate(const v1::SimulateRequest& r, v1::SimulateResponse* out);
  absl::Status Codesign(const v1::CodesignRequest& r, v1::CodesignResponse* out);
  absl::Status Check(const grpc::health::v1::HealthCheckRequest& r, grpc::health::v1::HealthCheckResponse* out);

 private:
  // A call's context: the bearer token and the deadline of `budget`.
  std::unique_ptr<grpc::ClientContext> Context(Budget budget = Budget::kPerCall) const;

  LinkOptions options_;
  absl::Time made_;  // when the command began
  std::shared_ptr<grpc::Channel> channel_;
};

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_SERVER_LINK_H_
