// The plumbing every paraplan RPC handler of server.cc shares. Rpc wraps one handler's
// body: it counts the call in flight, checks the caller's role (auth.h) and the write
// rate limit (rate_limit.h), maps the status, records metrics and writes one log line.
// UnparsedRequestFactory turns a unary request body that does not parse into
// INVALID_ARGUMENT, counted and logged alike. SearchSlot bounds the searches and
// simulations running at once; CancelWatch, SearchDeadline and CallInterrupt carry the
// client's cancellation and deadline into long work. Internal to server/ (gRPC headers:
// server.h stays free of them). An Rpc, SearchSlot or CancelWatch lives on one
// handler's stack; what RpcEnv points to outlives every call.
#ifndef PARAPLAN_SERVER_RPC_CALL_H_
#define PARAPLAN_SERVER_RPC_CALL_H_

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_interceptor.h>

#include <atomic>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "estimator/inputs/interrupt.h"
#include "server/auth.h"
#include "server/log.h"
#include "server/rate_limit.h"
#include "server/server.h"

namespace paraplan::server {

// What every RPC wrapper needs from the running server.
struct RpcEnv {
  Metrics* metrics;
  LogLevel min_level;
  std::atomic<int>* in_flight;  // paraplan.v1 RPCs inside a handler now
  const Auth* auth;
  const Limits* limits;
  RateLimiter* writes;          // per client host, write RPCs only
  std::atomic<int>* plans;      // Plan searches running now
};

// Wraps one RPC body: counts it in flight, maps the status, records metrics (method
// label = short name, as the dashboards use it) and writes one structured log line.
class Rpc {
 public:
  Rpc(const RpcEnv& env, const char* service, const char* method, grpc::ServerContext* ctx);
  // Whether the caller may make this call; when not, return Denied() at once.
  bool allowed() const { return auth_.ok(); }
  grpc::Status Denied() { return Done(auth_); }
  ~Rpc() { env_.in_flight->fetch_sub(1); }
  Rpc(const Rpc&) = delete;
  Rpc& operator=(const Rpc&) = delete;

  grpc::Status Done(const absl::Status& s);

 private:
  const RpcEnv& env_;
  const char* service_;
  const char* method_;
  grpc::ServerContext* ctx_;
  absl::Time start_;
  absl::Status auth_;
};

// Installs the unparsed-request interceptor (rpc_call.cc) on every unary call.
class UnparsedRequestFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit UnparsedRequestFactory(RpcEnv env) : env_(env) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(grpc::experimental::ServerRpcInfo* info) override;

 private:
  RpcEnv env_;
};

template <typename T>
absl::Status Assign(absl::StatusOr<T> r, T* out) {
  if (!r.ok()) return r.status();
  *out = std::move(*r);
  return absl::OkStatus();
}

// Leave time to serialise and send the answer; a call without a deadline gets the
// server's default. The search checks the deadline between shapes, and one shape of a
// large model can take tens of ms on a loaded machine: keep a tenth of the time left
// (at least 20 ms).
absl::Time SearchDeadline(const grpc::ServerContext* ctx, const Limits& lim);

// One of the bounded number of searches and simulations that may run at once (Plan,
// Codesign, Simulate).
class SearchSlot {
 public:
  SearchSlot(std::atomic<int>* running, int limit) : running_(running), taken_(running->fetch_add(1) < limit) {
    if (!taken_) running_->fetch_sub(1);
  }
  ~SearchSlot() {
    if (taken_) running_->fetch_sub(1);
  }
  SearchSlot(const SearchSlot&) = delete;
  SearchSlot& operator=(const SearchSlot&) = delete;
  absl::Status status(int limit) const {
    return taken_ ? absl::OkStatus()
                  : absl::ResourceExhaustedError(absl::StrCat(
                        limit, " plan searches or simulations are running (--max-concurrent-plans); retry in "
                        "about 1 s"));
  }

 private:
  std::atomic<int>* running_;
  bool taken_;
};

// Sets `cancelled` when the client cancels the call, polling every 10 ms while it lives
// (the searches check the flag between shapes).
class CancelWatch {
 public:
  explicit CancelWatch(grpc::ServerContext* ctx)
      : thread_([this, ctx] {
          while (!done_.WaitForNotificationWithTimeout(absl::Milliseconds(10))) {
            if (ctx->IsCancelled()) cancelled_ = true;
          }
        }) {}
  ~CancelWatch() { Finish(); }
  CancelWatch(const CancelWatch&) = delete;
  CancelWatch& operator=(const CancelWatch&) = delete;
  const std::atomic<bool>* flag() const { return &cancelled_; }
  // Stops watching; whether the client cancelled.
  bool Finish() {
    if (!done_.HasBeenNotified()) {
      done_.Notify();
      thread_.join();
    }
    return cancelled_;
  }

 private:
  std::atomic<bool> cancelled_{false};
  absl::Notification done_;
  std::thread thread_;  // last: starts once the flag and notification exist
};

// What stops a call's long work: its client's deadline (none given: never) and its
// cancellation, as `watch` sees it.
Interrupt CallInterrupt(const grpc::ServerContext* ctx, const CancelWatch& watch);

}  // namespace paraplan::server

#endif  // PARAPLAN_SERVER_RPC_CALL_H_
