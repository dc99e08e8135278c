#include "client/server_link.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/input.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "paraplan/v1/network.grpc.pb.h"
#include "paraplan/v1/services.grpc.pb.h"

namespace paraplan::cli {

namespace {

absl::Status FromGrpc(const grpc::Status& s) {
  if (s.ok()) return absl::OkStatus();
  // gRPC and absl share the status codes.
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

}  // namespace

ServerLink::ServerLink(LinkOptions options) : options_(std::move(options)), made_(absl::Now()) {}

ServerLink::~ServerLink() = default;

absl::Status ServerLink::Connect(double max_wait_s) {
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (!options_.tls_ca.empty() || !options_.tls_cert.empty()) {
    grpc::SslCredentialsOptions ssl;
    for (const auto& [path, out] : {std::pair{&options_.tls_ca, &ssl.pem_root_certs},
                                    std::pair{&options_.tls_cert, &ssl.pem_cert_chain},
                                    std::pair{&options_.tls_key, &ssl.pem_private_key}}) {
      if (path->empty()) continue;
      absl::StatusOr<std::string> pem = ReadFile(*path);
      if (!pem.ok()) return pem.status();
      *out = *pem;
    }
    creds = grpc::SslCredentials(ssl);
  }
  // Reconnect every 100 ms instead of gRPC's backoff from 1 s, so that a refused
  // connection is retried (a server still starting) and then reported within a second.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 200);
  channel_ = grpc::CreateCustomChannel(options_.server, creds, args);
  // Connecting gets at most max_wait_s of the deadline: a server that is down should be
  // reported quickly even when a long search is allowed. A connection refused (or a name
  // that does not resolve) for a whole second is reported then, not after the wait,
  // which is for a server that is slow to answer.
  const double wait_s = std::min(options_.timeout_s, max_wait_s);
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::milliseconds(static_cast<int64_t>(wait_s * 1000));
  std::optional<std::chrono::steady_clock::time_point> failing_since;
  for (;;) {
    const grpc_connectivity_state state = channel_->GetState(/*try_to_connect=*/true);
    if (state == GRPC_CHANNEL_READY) return absl::OkStatus();
    const auto now = std::chrono::steady_clock::now();
    if (state == GRPC_CHANNEL_TRANSIENT_FAILURE) {
      if (!failing_since) failing_since = now;
      if (now - *failing_since >= std::chrono::seconds(1)) {
        return absl::UnavailableError(
            absl::StrFormat("server unavailable at %s (connection refused or unreachable)", options_.server));
      }
    } else {
      failing_since.reset();
    }
    if (now >= deadline) break;
    const auto step = std::min<std::chrono::steady_clock::duration>(deadline - now, std::chrono::milliseconds(100));
    channel_->WaitForStateChange(state, std::chrono::system_clock::now() + step);
  }
  return absl::UnavailableError(
      absl::StrFormat("server unavailable at %s (no connection within %g s)", options_.server, wait_s));
}

double ServerLink::CommandTimeLeftS() const {
  return options_.timeout_s - absl::ToDoubleSeconds(absl::Now() - made_);
}

std::unique_ptr<grpc::ClientContext> ServerLink::Context(Budget budget) const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  if (!options_.token.empty()) ctx->AddMetadata("authorization", absl::StrCat("Bearer ", options_.token));
  const double s = budget == Budget::kCommand ? std::max(0.0, CommandTimeLeftS()) : options_.timeout_s;
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(s * 1000)));
  return ctx;
}

// One call of `Service::Stub::Method` with a fresh context, the deadline of `budget`.
#define PARAPLAN_CALL_WITHIN(Service, Method, request, out, budget) \
  FromGrpc(Service::NewStub(channel_)->Method(Context(budget).get(), request, out))
#define PARAPLAN_CALL(Service, Method, request, out) PARAPLAN_CALL_WITHIN(Service, Method, request, out, Budget::kPerCall)

absl::Status ServerLink::GetProfile(const v1::GetProfileRequest& r, v1::SystemProfile* out) {
  return PARAPLAN_CALL(v1::Profiles, GetProfile, r, out);
}
absl::Status ServerLink::ListProfiles(const v1::ListProfilesRequest& r, v1::ListProfilesResponse* out) {
  return PARAPLAN_CALL(v1::Profiles, ListProfiles, r, out);
}
absl::Status ServerLink::UpdateProfile(const v1::UpdateProfileRequest& r, v1::SystemProfile* out) {
  return PARAPLAN_CALL(v1::Profiles, UpdateProfile, r, out);
}

absl::Status ServerLink::CheckProfile(const v1::CheckProfileRequest& r, v1::SystemProfile* out) {
  return PARAPLAN_CALL(v1::Profiles, CheckProfile, r, out);
}
absl::Status ServerLink::DeleteProfile(const v1::DeleteProfileRequest& r, v1::DeleteProfileResponse* out) {
  return PARAPLAN_CALL(v1::Profiles, DeleteProfile, r, out);
}
absl::Status ServerLink::ListProfileVersions(const v1::ListProfileVersionsRequest& r,
                                             v1::ListProfileVersionsResponse* out) {
  return PARAPLAN_CALL(v1::Profiles, ListProfileVersions, r, out);
}
absl::Status ServerLink::PromoteProfile(const v1::PromoteProfileRequest& r, v1::SystemProfile* out) {
  return PARAPLAN_CALL(v1::Profiles, PromoteProfile, r, out);
}
absl::Status ServerLink::FitNetwork(const v1::FitNetworkRequest& r, v1::FitNetworkResponse* out) {
  return PARAPLAN_CALL(v1::Profiles, FitNetwork, r, out);
}
absl::Status ServerLink::FitGemm(const v1::FitGemmRequest& r, v1::FitGemmResponse* out) {
  return PARAPLAN_CALL(v1::Profiles, FitGemm, r, out);
}
absl::Status ServerLink::Estimate(const v1::EstimateRequest& r, v1::EstimateResponse* out) {
  return PARAPLAN_CALL(v1::Planner, Estimate, r, out);
}
absl::Status ServerLink::EstimateBatch(const v1::EstimateBatchRequest& r, v1::EstimateBatchResponse* out) {
  return PARAPLAN_CALL(v1::Planner, EstimateBatch, r, out);
}
absl::Status ServerLink::Plan(const v1::PlanRequest& r, v1::PlanResponse* out, Budget budget) {
  return PARAPLAN_CALL_WITHIN(v1::Planner, Plan, r, out, budget);
}
absl::Status ServerLink::ListModels(v1::ListModelsResponse* out) {
  return PARAPLAN_CALL(v1::Planner, ListModels, v1::ListModelsRequest(), out);
}
absl::Status ServerLink::GetVersion(v1::GetVersionResponse* out) {
  return PARAPLAN_CALL(v1::Planner, GetVersion, v1::GetVersionRequest(), out);
}
absl::Status ServerLink::IngestMeasurements(const v1::IngestMeasurementsRequest& r,
                                            v1::IngestMeasurementsResponse* out) {
  return PARAPLAN_CALL(v1::Measurements, IngestMeasurements, r, out);
}
absl::Status ServerLink::GetAccuracy(const v1::GetAccuracyRequest& r, v1::AccuracyReport* out) {
  return PARAPLAN_CALL(v1::Measurements, GetAccuracy, r, out);
}
absl::Status ServerLink::Calibrate(const v1::CalibrateRequest& r, v1::CalibrateResponse* out) {
  return PARAPLAN_CALL(v1::Measurements, Calibrate, r, out);
}
absl::Status ServerLink::StartCalibration(const v1::CalibrateRequest& r, v1::CalibrationOperation* out) {
  return PARAPLAN_CALL(v1::Measurements, StartCalibration, r, out);
}
absl::Status ServerLink::GetCalibration(const v1::GetCalibrationRequest& r, v1::CalibrationOperation* out) {
  return PARAPLAN_CALL(v1::Measurements, GetCalibration, r, out);
}
absl::Status ServerLink::Simulate(const v1::SimulateRequest& r, v1::SimulateResponse* out) {
  return PARAPLAN_CALL(v1::Network, Simulate, r, out);
}
absl::Status ServerLink::Codesign(const v1::CodesignRequest& r, v1::CodesignResponse* out) {
  return PARAPLAN_CALL(v1::Network, Codesign, r, out);
}
absl::Status ServerLink::Check(const grpc::health::v1::HealthCheckRequest& r,
                               grpc::health::v1::HealthCheckResponse* out) {
  return PARAPLAN_CALL(grpc::health::v1::Health, Check, r, out);
}

#undef PARAPLAN_CALL

}  // namespace paraplan::cli
