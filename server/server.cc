#include "server/server.h"

#include <grpc/grpc.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/support/server_interceptor.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "paraplan/v1/network.grpc.pb.h"
#include "paraplan/v1/services.grpc.pb.h"
#include "proto/version.h"
#include "server/auth.h"
#include "server/backend.h"
#include "server/http_api.h"
#include "server/http_server.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/rate_limit.h"
#include "server/rpc_call.h"
#include "store/store.h"

namespace paraplan::server {

namespace {

const char* const kServices[] = {"paraplan.v1.Planner", "paraplan.v1.Profiles", "paraplan.v1.Measurements",
                                 "paraplan.v1.Network"};


// GPUs a request's configuration occupies against the server's --max-gpus.
absl::Status CheckGpus(const v1::EstimateRequest& r, const Limits& lim) {
  const v1::ParallelConfig& c = r.config();
  int64_t gpus = 1;
  for (int64_t d : {c.data_parallel(), c.tensor_parallel(), c.pipeline_parallel(), c.context_parallel(),
                    c.spatial_parallel(), c.filter_parallel(), c.channel_parallel()}) {
    gpus *= std::max<int64_t>(1, std::min<int64_t>(d, int64_t{1} << 30));
    if (gpus > lim.max_gpus) break;
  }
  if (gpus > lim.max_gpus || r.num_gpus() > lim.max_gpus) {
    return absl::InvalidArgumentError(absl::StrCat("config: the degrees occupy more than the server's limit of ",
                                                   lim.max_gpus, " GPUs (--max-gpus)"));
  }
  return absl::OkStatus();
}

absl::Status CheckProfileSize(const v1::SystemProfile& p, const Limits& lim, const char* field = "profile") {
  if (p.ByteSizeLong() > static_cast<size_t>(lim.max_profile_bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": larger than ", lim.max_profile_bytes,
                                                   " bytes (--max-profile-bytes)"));
  }
  return absl::OkStatus();
}

class PlannerService final : public v1::Planner::Service {
 public:
  PlannerService(Backend* b, RpcEnv env) : b_(b), env_(env) {}
  grpc::Status Estimate(grpc::ServerContext* ctx, const v1::EstimateRequest* req,
                        v1::EstimateResponse* resp) override {
    Rpc rpc(env_, "Planner", "Estimate", ctx);
    if (!rpc.allowed()) return rpc.Denied();
    if (absl::Status s = CheckGpus(*req, *env_.limits); !s.ok()) return rpc.Done(s);
    if (absl::Status s = CheckProfileSize(req->profile_override(), *env_.limits, "profile_override"); !s.ok()) {
      return rpc.Done(s);
    }
    return rpc.Done(Assign(b_->Estimate(*req), resp->mutable_estimate()));
  }
  grpc::Status EstimateBatch(grpc::ServerContext* ctx, const v1::EstimateBatchRequest* req,
                             v1::EstimateBatchResponse* resp) override {
    Rpc rpc(env_, "Planner", "EstimateBatch", ctx);
    if (!rpc.allowed()) return rpc.Denied();
    if (req->requests_size() > env_.limits->max_batch) {
      return rpc.Done(absl::InvalidArgumentError(
          absl::StrCat("requests: at most ", env_.limits->max_batch, " per batch (--max-batch)")));
    }
    for (const v1::EstimateRequest& r : req->requests()) {
      if (ctx->IsCancelled()) return rpc.Done(absl::CancelledError("the client cancelled the batch"));
      v1::EstimateResult* out = resp->add_results();
      absl::Status gate = CheckGpus(r, *env_.limits);
      if (gate.ok()) gate = CheckProfileSize(r.profile_override(), *env_.limits, "profile_override");
      absl::StatusOr<v1::Estimate> e = gate.ok() ? b_->Estimate(r) : absl::StatusOr<v1::Estimate>(gate);
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
    if (!rpc.allowed()) return rpc.Denied();
    const Limits& lim = *env_.limits;
    if (req->gpus_size() > lim.max_plan_gpu_counts) {
      return rpc.Done(absl::InvalidArgumentError(absl::StrCat("gpus: at most ", lim.max_plan_gpu_counts,
                                                              " GPU counts per plan (--max-plan-gpu-counts)")));
    }
    if (absl::Status s = CheckProfileSize(req->profile_override(), lim, "profile_override"); !s.ok()) {
      return rpc.Done(s);
    }
    for (int g : req->gpus()) {
      if (g > lim.max_gpus) {
        return rpc.Done(absl::InvalidArgumentError(
            absl::StrCat("gpus: ", g, " exceeds the server's limit of ", lim.max_gpus, " GPUs (--max-gpus)")));
      }
    }
    // A bounded number of searches at once; the rest are told to come back.
    const SearchSlot slot(env_.plans, lim.max_concurrent_plans);
    if (absl::Status s = slot.status(lim.max_concurrent_plans); !s.ok()) return rpc.Done(s);
    const absl::Time deadline = SearchDeadline(ctx, lim);
    CancelWatch watch(ctx);
    absl::Status s = Assign(b_->Plan(*req, deadline, watch.flag()), resp);
    if (watch.Finish() && s.ok()) s = absl::CancelledError("the client cancelled the request");
    return rpc.Done(s);
  }
  grpc::Status ListModels(grpc::ServerContext* ctx, const v1::ListModelsRequest*,
                          v1::ListModelsResponse* resp) override {
    Rpc rpc(env_, "Planner", "ListModels", ctx);
    if (!rpc.allowed()) return rpc.Denied();
    *resp = b_->ListModels();
    return rpc.Done(absl::OkStatus());
  }
  grpc::Status GetVersion(grpc::ServerContext* ctx, const v1::GetVersionRequest*,
                          v1::GetVersionResponse* resp) override {
    Rpc rpc(env_, "Planner", "GetVersion", ctx);
    if (!rpc.allowed()) return rpc.Denied();
    resp->set_server_version(kVersion);
    resp->set_api_version(kApiVersion);
    resp->set_api_fingerprint(ApiFingerprint());
    resp->set_grpc_version(grpc::Version());
    resp->set_protobuf_version(google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION));
    return rpc.Done(absl::OkStatus());
  }

 private:
  Backend* b_;
  RpcEnv env_;
};

// Simulate and Codesign: reads; both take a plan slot (a search, a simulation of seconds).
class NetworkService final : public v1::Network::Service {
 public:
  NetworkService(Backend* b, RpcEnv env) : b_(b), env_(env) {}
  grpc::Status Simulate(grpc::ServerContext* ctx, const v1::SimulateRequest* req,
                        v1::SimulateResponse* resp) override {
    Rpc rpc(env_, "Network", "Simulate", ctx);
    if (!rpc.allowed()) return rpc.Denied();
    const SearchSlot slot(env_.plans, env_.limits->max_concurrent_plans);
    if (absl::Status s = slot.status(env_.limits->max_concurrent_plans); !s.ok()) return rpc.Done(s);
    CancelWatch watch(ctx);
    return rpc.Done(Assign(b_->Simulate(*req, std::min(env_.limits->max_gpus, 1024), CallInterrupt(ctx, watch)), resp));
  }
  grpc::Status Codesign(grpc::ServerContext* ctx, const v1::CodesignRequest* req,
                        v1::CodesignResponse* resp) override {
    Rpc rpc(env_, "Network", "Codesign", ctx);
    if (!rpc.allowed()) return rpc.Denied();
    const Limits& lim = *env_.limits;
    if (req->gpus() > lim.max_gpus) {
      return rpc.Done(absl::InvalidArgumentError(
          absl::StrCat("gpus: ", req->gpus(), " exceeds the server's limit of ", lim.max_gpus, " GPUs (--max-gpus)")));
    }
    const SearchSlot slot(env_.plans, lim.max_concurrent_plans);
    if (absl::Status s = slot.status(lim.max_concurrent_plans); !s.ok()) return rpc.Done(s);
    CancelWatch watch(ctx);
    absl::Status s = Assign(b_->Codesign(*req, SearchDeadline(ctx, lim), watch.flag()), resp);
    if (watch.Finish() && s.ok()) s = absl::CancelledError("the client cancelled the request");
    return rpc.Done(s);
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
    if (!rpc.allowed()) return rpc.Denied();
    if (absl::Status s = CheckProfileSize(req->profile(), *env_.limits); !s.ok()) return rpc.Done(s);
    return rpc.Done(Assign(b_->CreateProfile(req->profile()), resp));
  }
  grpc::Status GetProfile(grpc::ServerContext* ctx, const v1::GetProfileRequest* req,
                          v1::SystemProfile* resp) override {
    Rpc rpc(env_, "Profiles", "GetProfile", ctx);
    if (!rpc.allowed()) return rpc.Denied();
    return rpc.Done(Assign(b_->GetProfile(req->name()), resp));
  }
  grpc::Status ListProfiles(grpc::ServerContext* ctx, const v1::ListProfilesRequest* req,
                            v1::ListProfilesResponse* resp) override {
    Rpc rpc(env_, "Profiles", "ListProfiles", ctx);
    if (!rpc.allowed()) return rpc.Denied();
    return rpc.Done(Assign(b_->ListProfiles(req->page_size(), req->page_token()), resp));
  }
  grpc::Status UpdateProfile(grpc::ServerContext* ctx, const v1::UpdateProfileRequest* req,
                             v1::SystemProfile* resp) override {
    Rpc rpc(env_, "Profiles", "UpdateProfile", ctx);
    if (!rpc.allowed()) return rpc.Denied();
    if (absl::Status s = CheckProfileSize(req->profile(), *env_.limits); !s.ok()) return rpc.Done(s);
    return rpc.Done(Assign(b_->UpdateProfile(req->profile(), req->create_if_missing()), resp));
  }
  grpc::Status CheckProfile(grpc::ServerContext* ctx, const v1::CheckProfileRequest* req,
                            v1::SystemProfile* resp) override {
    Rpc rpc(env_, "Profiles", "CheckProfile", ctx);
    if (!rpc.allowed()) return rpc.Denied();
    if (absl::Status s = CheckProfileSize(req->profile(), *env_.limits); !s.ok()) return rpc.Done(s);
    return rpc.Done(Assign(b_->CheckProfile(req->profile()), resp));
  }
  grpc::Status DeleteProfile(grpc::ServerContext* ctx, const v1::DeleteProfileRequest* req,
                             v1::DeleteProfileResponse* resp) override {
    Rpc rpc(env_, "Profiles", "DeleteProfile", ctx);
    if (!rpc.allowed()) return rpc.Denied();
    absl::StatusOr<int> n = b_->DeleteProfile(req->name());
    if (n.ok()) resp->set_versions_deleted(*n);
    return rpc.Done(n.status());
  }
  grpc::Status ListProfileVersions(grpc::ServerContext* ctx, const v1::ListProfileVersionsRequest* req,
                                   v1::ListProfileVersionsResponse* resp) override {
    Rpc rpc(env_, "Profiles", "ListProfileVersions", ctx);
    if (!rpc.allowed()) return rpc.Denied();
    return rpc.Done(Assign(b_->ListProfileVersions(req->name()), resp));
  }
  grpc::Status FitNetwork(grpc::ServerContext* ctx, const v1::FitNetworkRequest* req,
                          v1::FitNetworkResponse* resp) override {
    Rpc rpc(env_, "Profiles", "FitNetwork", ctx);
    if (!rpc.allowed()) return rpc.Denied();
    CancelWatch watch(ctx);
    return rpc.Done(Assign(b_->FitNetwork(*req, CallInterrupt(ctx, watch)), resp));
  }
  grpc::Status PromoteProfile(grpc::ServerContext* ctx, const v1::PromoteProfileRequest* req,
                              v1::SystemProfile* resp) override {
    Rpc rpc(env_, "Profiles", "PromoteProfile", ctx);
    if (!rpc.allowed()) return rpc.Denied();
    return rpc.Done(Assign(b_->PromoteProfile(req->name()), resp));
  }
  grpc::Status FitGemm(grpc::ServerContext* ctx, const v1::FitGemmRequest* req,
                       v1::FitGemmResponse* resp) override {
    Rpc rpc(env_, "Profiles", "FitGemm", ctx);
    if (!rpc.allowed()) return rpc.Denied();
    CancelWatch watch(ctx);
    return rpc.Done(Assign(b_->FitGemm(*req, CallInterrupt(ctx, watch)), resp));
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
    if (!rpc.allowed()) return rpc.Denied();
    if (req->measurements_size() > env_.limits->max_ingest) {
      return rpc.Done(absl::InvalidArgumentError(absl::StrCat("measurements: at most ", env_.limits->max_ingest,
                                                              " per request (--max-ingest)")));
    }
    return rpc.Done(Assign(b_->Ingest(*req), resp));
  }
  grpc::Status GetAccuracy(grpc::ServerContext* ctx, const v1::GetAccuracyRequest* req,
                           v1::AccuracyReport* resp) override {
    Rpc rpc(env_, "Measurements", "GetAccuracy", ctx);
    if (!rpc.allowed()) return rpc.Denied();
    return rpc.Done(Assign(b_->Accuracy(*req), resp));
  }
  grpc::Status Calibrate(grpc::ServerContext* ctx, const v1::CalibrateRequest* req,
                         v1::CalibrateResponse* resp) override {
    Rpc rpc(env_, "Measurements", "Calibrate", ctx);
    if (!rpc.allowed()) return rpc.Denied();
    CancelWatch watch(ctx);
    return rpc.Done(Assign(b_->Calibrate(req->profile(), req->dry_run(), CallInterrupt(ctx, watch)), resp));
  }
  grpc::Status StartCalibration(grpc::ServerContext* ctx, const v1::CalibrateRequest* req,
                                v1::CalibrationOperation* resp) override {
    Rpc rpc(env_, "Measurements", "StartCalibration", ctx);
    if (!rpc.allowed()) return rpc.Denied();
    return rpc.Done(Assign(b_->StartCalibration(*req), resp));
  }
  grpc::Status GetCalibration(grpc::ServerContext* ctx, const v1::GetCalibrationRequest* req,
                              v1::CalibrationOperation* resp) override {
    Rpc rpc(env_, "Measurements", "GetCalibration", ctx);
    if (!rpc.allowed()) return rpc.Denied();
    return rpc.Done(Assign(b_->GetCalibration(*req), resp));
  }

 private:
  Backend* b_;
  RpcEnv env_;
};

class Running final : public RunningServer {
 public:
  int port() const override { return port_; }
  int metrics_port() const override { return http_ == nullptr ? 0 : http_->port(); }
  int http_port() const override { return api_ == nullptr ? 0 : api_->port(); }
  Metrics& metrics() override { return *metrics_; }
  absl::Status CheckIntegrity() override { return store_->CheckIntegrity(); }
  void Shutdown(absl::Duration grace) override {
    if (stopped_.exchange(true)) return;
    if (server_ != nullptr) {  // null when StartServer failed part-way
      grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService();
      if (health != nullptr) health->Shutdown();  // every service answers NOT_SERVING
      const absl::Time deadline = absl::Now() + grace;
      // HTTP/JSON first: its calls ride the in-process channel, which the gRPC shutdown
      // closes at once. Take no more HTTP requests and give those running until the
      // deadline; past it the gRPC shutdown below ends their calls.
      absl::Notification api_stopped;
      std::thread api_stopper([&] {
        if (api_ != nullptr) api_->Stop();
        api_stopped.Notify();
      });
      api_stopped.WaitForNotificationWithDeadline(deadline);
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
      api_stopper.join();
    }
    stop_gauges_.Notify();
    if (gauges_.joinable()) gauges_.join();
    if (backend_ != nullptr) backend_->Stop();  // background calibration: drop the queue, finish the run
    if (http_ != nullptr) http_->Stop();  // last: /metrics stays up for the drain
  }
  ~Running() override { Shutdown(absl::Seconds(5)); }

  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<HttpServer> http_;  // after metrics_: its handlers use it
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<PlannerService> planner_;
  std::unique_ptr<ProfilesService> profiles_;
  std::unique_ptr<MeasurementsService> measurements_;
  std::unique_ptr<NetworkService> network_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<HttpServer> api_;  // HTTP/JSON: forwards to server_ in-process
  std::thread gauges_;
  std::atomic<Backend*> gauges_backend_{nullptr};  // backend_ once started: /metrics refreshes it
  absl::Notification stop_gauges_;
  std::atomic<bool> stopped_{false};
  std::atomic<int> in_flight_{0};
  int port_ = 0;
  Auth auth_;
  Limits limits_;
  std::unique_ptr<RateLimiter> writes_;
  std::atomic<int> plans_{0};
};

// The plain-HTTP endpoints on --metrics-listen; further routes (JSON, say) go here too,
// under the handler contract in http_server.h.
// With tokens configured, /metrics needs "Authorization: Bearer TOKEN" of any role
// (reader or above; none with allow_anonymous_reads), checked by the same Auth as the
// RPCs; else 401 with a WWW-Authenticate challenge (RFC 6750). /healthz stays open for
// probes.
void AddHttpRoutes(HttpServer& http, Running* r) {
  http.Handle("GET", "/metrics", [r](const HttpRequest& req) {
    const absl::Status auth = r->auth_.Check(req.Header("authorization").value_or(""), Role::kReader);
    if (!auth.ok()) {
      const bool presented = req.Header("authorization").has_value();
      HttpResponse denied{401, "text/plain; charset=utf-8",
                          presented ? "invalid or unknown bearer token\n"
                                    : "missing bearer token (header \"Authorization: Bearer TOKEN\")\n"};
      denied.headers.emplace_back("WWW-Authenticate",
                                  presented ? "Bearer realm=\"paraplan\", error=\"invalid_token\""
                                            : "Bearer realm=\"paraplan\"");
      return denied;
    }
    // Gauges of shared state (accuracy, profile version) as the store holds them now,
    // whichever server wrote it: replicas on one PostgreSQL database agree.
    if (Backend* b = r->gauges_backend_.load(); b != nullptr) b->RefreshGauges();
    return HttpResponse{200, Metrics::kContentType, r->metrics_->Text()};
  });
  // 503 once draining, like grpc.health.v1, so that probes see the end coming.
  http.Handle("GET", "/healthz", [r](const HttpRequest&) {
    return r->stopped_ ? HttpResponse{503, "text/plain; charset=utf-8", "draining\n"}
                       : HttpResponse{200, "text/plain; charset=utf-8", "ok\n"};
  });
}

// Insecure (the loopback quick start) or TLS from the options' PEM files.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> Credentials(const ServerOptions& o) {
  if (o.tls_cert_file.empty() != o.tls_key_file.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (o.tls_cert_file.empty()) {
    if (!o.tls_client_ca_file.empty()) return absl::InvalidArgumentError("--tls-client-ca needs --tls-cert and --tls-key");
    if (!o.tokens_file.empty() && !IsLoopback(o.listen)) {
      return absl::InvalidArgumentError(absl::StrCat("--tokens-file on the non-loopback address ", o.listen,
                                                     " needs TLS (--tls-cert, --tls-key): tokens would travel in clear"));
    }
    return grpc::InsecureServerCredentials();
  }
  absl::StatusOr<std::string> cert = ReadPem(o.tls_cert_file, "--tls-cert");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPem(o.tls_key_file, "--tls-key");
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions ssl(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  ssl.pem_key_cert_pairs.push_back({*key, *cert});
  if (!o.tls_client_ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadPem(o.tls_client_ca_file, "--tls-client-ca");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
    ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

// The HTTP/JSON API on --http-listen (http_api.h), calling `server` in-process. Tokens
// would travel in clear on it, so with tokens it must listen on loopback.
absl::Status StartHttpApi(const ServerOptions& o, grpc::Server* server, std::unique_ptr<HttpServer>* out) {
  if (o.http_listen.empty()) return absl::OkStatus();
  if (!o.tokens_file.empty() && !IsLoopback(o.http_listen)) {
    return absl::InvalidArgumentError(absl::StrCat("--tokens-file with the non-loopback --http-listen ", o.http_listen,
                                                   ": the HTTP API has no TLS; listen on loopback behind a TLS proxy"));
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  HttpServerOptions ho;
  ho.workers = 8;
  ho.max_body_bytes = static_cast<size_t>(o.max_message_bytes);
  *out = std::make_unique<HttpServer>(ho);
  AddApiRoutes(**out, server->InProcessChannel(args));
  if (absl::Status s = (*out)->Start(o.http_listen); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("HTTP API listener: ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<RunningServer>> StartServer(const ServerOptions& options) {
  auto r = std::make_unique<Running>();
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> creds = Credentials(options);
  if (!creds.ok()) return creds.status();
  if (!options.tokens_file.empty()) {
    absl::StatusOr<Auth> auth = Auth::FromTokensFile(options.tokens_file, options.allow_anonymous_reads);
    if (!auth.ok()) return auth.status();
    r->auth_ = *std::move(auth);
  }
  absl::StatusOr<std::unique_ptr<store::Store>> store = store::Store::Open(options.db_path);
  if (!store.ok()) return store.status();
  r->store_ = std::move(*store);
  r->metrics_ = std::make_unique<Metrics>();
  r->metrics_->SetBuildInfo(kVersion, kApiVersion, ApiFingerprint());
  if (!options.metrics_listen.empty()) {
    r->http_ = std::make_unique<HttpServer>();
    AddHttpRoutes(*r->http_, r.get());
    if (absl::Status s = r->http_->Start(options.metrics_listen); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("metrics listener: ", s.message()));
    }
  }
  BackendOptions bo;
  bo.auto_calibrate_after = options.auto_calibrate_after;
  bo.max_plan_candidates = options.limits.max_plan_candidates;
  bo.max_ingest = options.limits.max_ingest;
  r->backend_ = std::make_unique<Backend>(r->store_.get(), r->metrics_.get(), bo);
  if (absl::Status s = r->backend_->Start(); !s.ok()) return s;
  r->gauges_backend_ = r->backend_.get();
  r->limits_ = options.limits;
  r->writes_ = std::make_unique<RateLimiter>(options.limits.write_rate_per_s, options.limits.write_burst);
  const RpcEnv env{r->metrics_.get(), options.log_level, &r->in_flight_, &r->auth_,
                   &r->limits_, r->writes_.get(), &r->plans_};
  r->planner_ = std::make_unique<PlannerService>(r->backend_.get(), env);
  r->profiles_ = std::make_unique<ProfilesService>(r->backend_.get(), env);
  r->measurements_ = std::make_unique<MeasurementsService>(r->backend_.get(), env);
  r->network_ = std::make_unique<NetworkService>(r->backend_.get(), env);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, *creds, &r->port_);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  grpc::ResourceQuota quota("paraplan-rpc");
  quota.SetMaxThreads(options.limits.max_rpc_threads);
  builder.SetResourceQuota(quota);
  {
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
    interceptors.push_back(std::make_unique<UnparsedRequestFactory>(env));
    builder.experimental().SetInterceptorCreators(std::move(interceptors));
  }
  builder.RegisterService(r->planner_.get());
  builder.RegisterService(r->profiles_.get());
  builder.RegisterService(r->measurements_.get());
  builder.RegisterService(r->network_.get());
  r->server_ = builder.BuildAndStart();
  if (r->server_ == nullptr || r->port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options.listen));
  }
  if (absl::Status s = StartHttpApi(options, r->server_.get(), &r->api_); !s.ok()) return s;
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
