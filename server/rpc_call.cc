#include "server/rpc_call.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "server/http_api.h"
#include "server/metrics.h"
#include "server/rich_status.h"

namespace paraplan::server {

namespace {

// The caller's address: the gRPC peer, or for a call that the HTTP/JSON API forwards
// through the in-process channel (http_api.h), "http:" and the HTTP client's address.
std::string PeerOf(const grpc::ServerContext* ctx) {
  std::string peer = ctx->peer();
  if (peer == "unknown" || absl::StartsWith(peer, "inproc")) {  // no network peer: in-process
    const auto& md = ctx->client_metadata();
    if (auto it = md.find(kHttpPeerMetadata); it != md.end()) {
      return absl::StrCat("http:", absl::string_view(it->second.data(), it->second.size()));
    }
  }
  return peer;
}

// Server-side faults are logged at error level; the caller's mistakes at info.
bool IsServerFault(absl::StatusCode code) {
  return code == absl::StatusCode::kInternal || code == absl::StatusCode::kUnknown ||
         code == absl::StatusCode::kDataLoss || code == absl::StatusCode::kUnimplemented;
}

// A request body that does not parse never reaches a handler: gRPC answers INTERNAL
// with an empty message. This interceptor turns that into INVALID_ARGUMENT naming the
// method, counted and logged like any other refused call. Unary calls only: on a stream
// (health Watch, reflection) a receive with no message is the client's end of the
// stream, not a bad body, and the stream must end as its handler says.
class UnparsedRequestInterceptor final : public grpc::experimental::Interceptor {
 public:
  UnparsedRequestInterceptor(grpc::experimental::ServerRpcInfo* info, const RpcEnv& env) : info_(info), env_(env) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* m) override {
    using grpc::experimental::InterceptionHookPoints;
    if (m->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) && m->GetRecvMessage() == nullptr) {
      unparsed_ = true;
    }
    if (unparsed_ && m->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      const std::string method = info_->method() == nullptr ? "" : info_->method();
      const std::string message = absl::StrCat("request body is not a valid message for ", method);
      m->ModifySendStatus(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message));
      const std::string short_name = method.substr(method.rfind('/') + 1);
      // "/paraplan.v1.Planner/Estimate": the service between the slashes.
      const size_t slash = method.rfind('/');
      const std::string service = slash != std::string::npos && slash > 1 ? method.substr(1, slash - 1) : "";
      env_.metrics->RecordRpc(service, short_name, "INVALID_ARGUMENT", 0);
      if (LogLevel::kInfo >= env_.min_level) {
        WriteLogLine(LogLevel::kInfo, absl::StrCat("rpc=", short_name, " code=INVALID_ARGUMENT msg=", LogQuote(message)));
      }
    }
    m->Proceed();
  }

 private:
  grpc::experimental::ServerRpcInfo* info_;
  const RpcEnv& env_;
  bool unparsed_ = false;
};

}  // namespace

Rpc::Rpc(const RpcEnv& env, const char* service, const char* method, grpc::ServerContext* ctx)
    : env_(env), service_(service), method_(method), ctx_(ctx), start_(absl::Now()) {
  env_.in_flight->fetch_add(1);
  if (env_.auth->enabled()) {
    const auto& md = ctx_->client_metadata();
    auto it = md.find("authorization");
    const absl::string_view value = it == md.end() ? absl::string_view()
                                                   : absl::string_view(it->second.data(), it->second.size());
    auth_ = env_.auth->Check(value, RequiredRole(service_, method_));
  }
  // Every write attempt takes from its host's budget, authenticated or not (token
  // guessing is throttled too).
  absl::Duration retry;
  if (RequiredRole(service_, method_) >= Role::kWriter &&
      !env_.writes->Allow(ClientOfPeer(PeerOf(ctx_)), absl::Now(), &retry)) {
    auth_ = absl::ResourceExhaustedError(absl::StrFormat(
        "write rate limit: %g per second per client (burst %g); retry in %.1f s", env_.limits->write_rate_per_s,
        env_.limits->write_burst, absl::ToDoubleSeconds(retry)));
  }
}

grpc::Status Rpc::Done(const absl::Status& s) {
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start_);
  const std::string code = absl::StatusCodeToString(s.code());
  env_.metrics->RecordRpc(absl::StrCat("paraplan.v1.", service_), method_, code, seconds);
  const LogLevel level = IsServerFault(s.code()) ? LogLevel::kError : LogLevel::kInfo;
  if (level >= env_.min_level) {
    // "rpc=Plan code=OK" first: tests/cli and log queries match on it.
    std::string fields = absl::StrCat("rpc=", method_, " code=", code, " duration_ms=",
                                      absl::StrFormat("%.3f", seconds * 1e3), " service=paraplan.v1.", service_,
                                      " peer=", PeerOf(ctx_));
    if (!s.ok()) absl::StrAppend(&fields, " msg=", LogQuote(s.message()));
    WriteLogLine(level, fields);
  }
  return ToGrpc(s);
}

grpc::experimental::Interceptor* UnparsedRequestFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  if (info->type() != grpc::experimental::ServerRpcInfo::Type::UNARY) return nullptr;
  return new UnparsedRequestInterceptor(info, env_);
}

absl::Time SearchDeadline(const grpc::ServerContext* ctx, const Limits& lim) {
  if (ctx->deadline() >= std::chrono::system_clock::time_point::max() - std::chrono::hours(24 * 365)) {
    return absl::Now() + absl::Seconds(lim.plan_default_deadline_s);
  }
  const absl::Time client = absl::FromChrono(ctx->deadline());
  return client - std::max(absl::Milliseconds(20), (client - absl::Now()) / 10);
}

Interrupt CallInterrupt(const grpc::ServerContext* ctx, const CancelWatch& watch) {
  Interrupt stop;
  stop.cancelled = watch.flag();
  if (ctx->deadline() < std::chrono::system_clock::time_point::max() - std::chrono::hours(24 * 365)) {
    stop.deadline = absl::FromChrono(ctx->deadline());
  }
  return stop;
}

}  // namespace paraplan::server
