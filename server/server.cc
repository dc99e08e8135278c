#include "server/server.h"

#include <grpc/grpc.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "paraplan/v1/services.grpc.pb.h"
#include "server/backend.h"
#include "server/log.h"
#include "server/metrics.h"
#include "store/store.h"

namespace paraplan::server {

namespace {

const char* const kServices[] = {"paraplan.v1.Planner", "paraplan.v1.Profiles", "paraplan.v1.Measurements"};

// absl and gRPC share the canonical code numbering.
grpc::Status ToGrpc(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

// Server-side faults are logged at error level; the caller's mistakes at info.
bool IsServerFault(absl::StatusCode code) {
  return code == absl::StatusCode::kInternal || code == absl::StatusCode::kUnknown ||
         code == absl::StatusCode::kDataLoss || code == absl::StatusCode::kUnimplemented;
}

// What every RPC wrapper needs from the running server.
struct RpcEnv {
  Metrics* metrics;
  LogLevel min_level;
  std::atomic<int>* in_flight;  // paraplan.v1 RPCs inside a handler now
};

// Wraps one RPC body: counts it in flight, maps the status, records metrics (method
// label = short name, as the dashboards use it) and writes one structured log line.
class Rpc {
 public:
  Rpc(const RpcEnv& env, const char* service, const char* method, grpc::ServerContext* ctx)
      : env_(env), service_(service), method_(method), ctx_(ctx), start_(absl::Now()) {
    env_.in_flight->fetch_add(1);
  }
  ~Rpc() { env_.in_flight->fetch_sub(1); }
  Rpc(const Rpc&) = delete;
  Rpc& operator=(const Rpc&) = delete;

  grpc::Status Done(const absl::Status& s) {
    const double seconds = absl::ToDoubleSeconds(absl::Now() - start_);
    const std::string code = absl::StatusCodeToString(s.code());
    env_.metrics->RecordRpc(method_, code, seconds);
    const LogLevel level = IsServerFault(s.code()) ? LogLevel::kError : LogLevel::kInfo;
    if (level >= env_.min_level) {
      // "rpc=Plan code=OK" first: tests/cli and log queries match on it.
      std::string fields = absl::StrCat("rpc=", method_, " code=", code, " duration_ms=",
                                        absl::StrFormat("%.3f", seconds * 1e3), " service=paraplan.v1.", service_,
                                        " peer=", ctx_->peer());
      if (!s.ok()) absl::StrAppend(&fields, " msg=", LogQuote(s.message()));
      WriteLogLine(level, fields);
    }
    return ToGrpc(s);
  }

 private:
  const RpcEnv& env_;
  const char* service_;
  const char* method_;
  grpc::ServerContext* ctx_;
  absl::Time start_;
};

template <typename T>
absl::Status Assign(absl::StatusOr<T> r, T* out) {
  if (!r.ok()) return r.status();
  *out = std::move(*r);
  return absl::OkStatus();
}

class PlannerService final : public v1::Planner::Service {
 public:
  PlannerService(Backend* b, RpcEnv env) : b_(b), env_(env) {}
  grpc::Status Estimate(grpc::ServerContext* ctx, const v1::EstimateRequest* req,
                        v1::EstimateResponse* resp) override {
    Rpc rpc(env_, "Planner", "Estimate", ctx);
    return rpc.Done(Assign(b_->Estimate(*req), resp->mutable_estimate()));
  }
  grpc::Status EstimateBatch(grpc::ServerContext* ctx, const v1::EstimateBatchRequest* req,
                             v1::EstimateBatchResponse* resp) override {
    Rpc rpc(env_, "Planner", "EstimateBatch", ctx);
    if (req->requests_size() > 10000) {
      return rpc.Done(absl::InvalidArgumentError("requests: at most 10000 per batch"));
    }
    for (const v1::EstimateRequest& r : req->requests()) {
      if (ctx->IsCancelled()) return rpc.Done(absl::CancelledError("the client cancelled the batch"));
      v1::EstimateResult* out = resp->add_results();
      absl::StatusOr<v1::Estimate> e = b_->Estimate(r);
      if (e.ok()) {
        *out->mutable_estimate() = std::move(*e);
      } else {
        out->mutable_error()->set_code(static_cast<int>(e.status().code()));
        out->mutable_error()->set_message(std::string(e.status().message()));
      }
    }
    return rpc.Done(absl::OkStatus());
  }
  grpc::Status Plan(grpc::ServerContext* ctx, const v1::PlanRequest* req, v1::PlanResponse* resp) override {
    Rpc rpc(env_, "Planner", "Plan", ctx);
    absl::Time deadline = absl::InfiniteFuture();
    if (ctx->deadline() < std::chrono::system_clock::time_point::max() - std::chrono::hours(24 * 365)) {
      // Leave time to serialise and send the answer.
      deadline = absl::FromChrono(ctx->deadline()) - absl::Milliseconds(20);
    }
    std::atomic<bool> cancelled{false};
    absl::Notification done;
    std::thread watch([&] {
      while (!done.WaitForNotificationWithTimeout(absl::Milliseconds(10))) {
        if (ctx->IsCancelled()) cancelled = true;
      }
    });
    absl::Status s = Assign(b_->Plan(*req, deadline, &cancelled), resp);
    done.Notify();
    watch.join();
    if (s.ok() && cancelled) s = absl::CancelledError("the client cancelled the request");
    return rpc.Done(s);
  }
  grpc::Status ListModels(grpc::ServerContext* ctx, const v1::ListModelsRequest*,
                          v1::ListModelsResponse* resp) override {
    Rpc rpc(env_, "Planner", "ListModels", ctx);
    *resp = b_->ListModels();
    return rpc.Done(absl::OkStatus());
  }

 private:
  Backend* b_;
  RpcEnv env_;
};

class ProfilesService final : public v1::Profiles::Service {
 public:
  ProfilesService(Backend* b, RpcEnv env) : b_(b), env_(env) {}
  grpc::Status CreateProfile(grpc::ServerContext* ctx, const v1::CreateProfileRequest* req,
                             v1::SystemProfile* resp) override {
    Rpc rpc(env_, "Profiles", "CreateProfile", ctx);
    return rpc.Done(Assign(b_->CreateProfile(req->profile()), resp));
  }
  grpc::Status GetProfile(grpc::ServerContext* ctx, const v1::GetProfileRequest* req,
                          v1::SystemProfile* resp) override {
    Rpc rpc(env_, "Profiles", "GetProfile", ctx);
    return rpc.Done(Assign(b_->GetProfile(req->name()), resp));
  }
  grpc::Status ListProfiles(grpc::ServerContext* ctx, const v1::ListProfilesRequest* req,
                            v1::ListProfilesResponse* resp) override {
    Rpc rpc(env_, "Profiles", "ListProfiles", ctx);
    return rpc.Done(Assign(b_->ListProfiles(req->page_size(), req->page_token()), resp));
  }
  grpc::Status UpdateProfile(grpc::ServerContext* ctx, const v1::UpdateProfileRequest* req,
                             v1::SystemProfile* resp) override {
    Rpc rpc(env_, "Profiles", "UpdateProfile", ctx);
    return rpc.Done(Assign(b_->UpdateProfile(req->profile(), req->create_if_missing()), resp));
  }
  grpc::Status DeleteProfile(grpc::ServerContext* ctx, const v1::DeleteProfileRequest* req,
                             v1::DeleteProfileResponse* resp) override {
    Rpc rpc(env_, "Profiles", "DeleteProfile", ctx);
    absl::StatusOr<int> n = b_->DeleteProfile(req->name());
    if (n.ok()) resp->set_versions_deleted(*n);
    return rpc.Done(n.status());
  }
  grpc::Status ListProfileVersions(grpc::ServerContext* ctx, const v1::ListProfileVersionsRequest* req,
                                   v1::ListProfileVersionsResponse* resp) override {
    Rpc rpc(env_, "Profiles", "ListProfileVersions", ctx);
    return rpc.Done(Assign(b_->ListProfileVersions(req->name()), resp));
  }
  grpc::Status FitNetwork(grpc::ServerContext* ctx, const v1::FitNetworkRequest* req,
                          v1::FitNetworkResponse* resp) override {
    Rpc rpc(env_, "Profiles", "FitNetwork", ctx);
    return rpc.Done(Assign(b_->FitNetwork(*req), resp));
  }
  grpc::Status PromoteProfile(grpc::ServerContext* ctx, const v1::PromoteProfileRequest* req,
                              v1::SystemProfile* resp) override {
    Rpc rpc(env_, "Profiles", "PromoteProfile", ctx);
    return rpc.Done(Assign(b_->PromoteProfile(req->name()), resp));
  }
  grpc::Status FitGemm(grpc::ServerContext* ctx, const v1::FitGemmRequest* req,
                       v1::FitGemmResponse* resp) override {
    Rpc rpc(env_, "Profiles", "FitGemm", ctx);
    return rpc.Done(Assign(b_->FitGemm(*req), resp));
  }

 private:
  Backend* b_;
  RpcEnv env_;
};

class MeasurementsService final : public v1::Measurements::Service {
 public:
  MeasurementsService(Backend* b, RpcEnv env) : b_(b), env_(env) {}
  grpc::Status IngestMeasurements(grpc::ServerContext* ctx, const v1::IngestMeasurementsRequest* req,
                                  v1::IngestMeasurementsResponse* resp) override {
    Rpc rpc(env_, "Measurements", "IngestMeasurements", ctx);
    return rpc.Done(Assign(b_->Ingest(*req), resp));
  }
  grpc::Status GetAccuracy(grpc::ServerContext* ctx, const v1::GetAccuracyRequest* req,
                           v1::AccuracyReport* resp) override {
    Rpc rpc(env_, "Measurements", "GetAccuracy", ctx);
    return rpc.Done(Assign(b_->Accuracy(*req), resp));
  }
  grpc::Status Calibrate(grpc::ServerContext* ctx, const v1::CalibrateRequest* req,
                         v1::CalibrateResponse* resp) override {
    Rpc rpc(env_, "Measurements", "Calibrate", ctx);
    return rpc.Done(Assign(b_->Calibrate(req->profile(), req->dry_run()), resp));
  }

 private:
  Backend* b_;
  RpcEnv env_;
};

class Running final : public RunningServer {
 public:
  int port() const override { return port_; }
  int metrics_port() const override { return metrics_->port(); }
  Metrics& metrics() override { return *metrics_; }
  absl::Status CheckIntegrity() override { return store_->CheckIntegrity(); }
  void Shutdown(absl::Duration grace) override {
    if (stopped_.exchange(true)) return;
    if (server_ != nullptr) {  // null when StartServer failed part-way
      grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService();
      if (health != nullptr) health->Shutdown();  // every service answers NOT_SERVING
      const absl::Time deadline = absl::Now() + grace;
      std::atomic<bool> drained{false};
      absl::Notification begun;
      std::thread stopper([&] {
        begun.Notify();
        server_->Shutdown(absl::ToChronoTime(deadline));  // stops accepting, waits for open calls
        drained = true;
      });
      begun.WaitForNotification();
      // Server::Shutdown also waits for streams that never end by themselves (health
      // Watch, reflection): once no paraplan RPC has been in a handler for kIdle, cancel
      // those instead of waiting out the grace period. kIdle covers a call accepted just
      // before shutdown that has not entered its handler yet, and the flush of the last
      // responses after their handlers returned.
      constexpr absl::Duration kIdle = absl::Milliseconds(200);
      absl::Time idle_since = absl::Now();
      while (!drained && absl::Now() < deadline && absl::Now() - idle_since < kIdle) {
        absl::SleepFor(absl::Milliseconds(10));
        if (in_flight_.load() > 0) idle_since = absl::Now();
      }
      if (!drained && absl::Now() < deadline) grpc_server_cancel_all_calls(server_->c_server());
      stopper.join();
      server_->Wait();
    }
    stop_gauges_.Notify();
    if (gauges_.joinable()) gauges_.join();
  }
  ~Running() override { Shutdown(absl::Seconds(5)); }

  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<PlannerService> planner_;
  std::unique_ptr<ProfilesService> profiles_;
  std::unique_ptr<MeasurementsService> measurements_;
  std::unique_ptr<grpc::Server> server_;
  std::thread gauges_;
  absl::Notification stop_gauges_;
  std::atomic<bool> stopped_{false};
  std::atomic<int> in_flight_{0};
  int port_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<RunningServer>> StartServer(const ServerOptions& options) {
  auto r = std::make_unique<Running>();
  absl::StatusOr<std::unique_ptr<store::Store>> store = store::Store::Open(options.db_path);
  if (!store.ok()) return store.status();
  r->store_ = std::move(*store);
  absl::StatusOr<std::unique_ptr<Metrics>> metrics = Metrics::Create(options.metrics_listen);
  if (!metrics.ok()) return metrics.status();
  r->metrics_ = std::move(*metrics);
  BackendOptions bo;
  bo.auto_calibrate_after = options.auto_calibrate_after;
  r->backend_ = std::make_unique<Backend>(r->store_.get(), r->metrics_.get(), bo);
  if (absl::Status s = r->backend_->Start(); !s.ok()) return s;
  const RpcEnv env{r->metrics_.get(), options.log_level, &r->in_flight_};
  r->planner_ = std::make_unique<PlannerService>(r->backend_.get(), env);
  r->profiles_ = std::make_unique<ProfilesService>(r->backend_.get(), env);
  r->measurements_ = std::make_unique<MeasurementsService>(r->backend_.get(), env);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, grpc::InsecureServerCredentials(), &r->port_);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.RegisterService(r->planner_.get());
  builder.RegisterService(r->profiles_.get());
  builder.RegisterService(r->measurements_.get());
  r->server_ = builder.BuildAndStart();
  if (r->server_ == nullptr || r->port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options.listen));
  }
  grpc::HealthCheckServiceInterface* health = r->server_->GetHealthCheckService();
  if (health != nullptr) {
    health->SetServingStatus("", true);
    for (const char* s : kServices) health->SetServingStatus(s, true);
  }
  Running* raw = r.get();
  r->gauges_ = std::thread([raw] {
    while (!raw->stop_gauges_.WaitForNotificationWithTimeout(absl::Seconds(5))) raw->backend_->RefreshGauges();
  });
  return std::unique_ptr<RunningServer>(std::move(r));
}

}  // namespace paraplan::server
