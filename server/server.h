// The paraplan gRPC server: Planner, Profiles and Measurements services over one
// Backend, plus grpc.health.v1, reflection, Prometheus metrics and one log line per RPC.
//
// StartServer() opens the store, seeds built-in profiles (never overwriting a stored
// version), loads the accuracy metrics from the store and starts serving; the returned
// handle reports the bound ports (useful with port 0) and drains on Shutdown(): health
// turns NOT_SERVING, new calls are refused, in-flight paraplan RPCs get until the grace
// period ends; long-lived streams (health Watch, reflection) are cancelled as soon as
// no paraplan RPC is left, so they do not hold the drain for the whole grace period.
// No gRPC headers here so main() and tests stay light. Thread-safe.
#ifndef PARAPLAN_SERVER_SERVER_H_
#define PARAPLAN_SERVER_SERVER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/log.h"

namespace paraplan::server {

class Metrics;

struct ServerOptions {
  std::string listen = "127.0.0.1:50051";
  std::string db_path = "paraplan.db";
  std::string metrics_listen = "127.0.0.1:9464";  // empty = no HTTP endpoint; port 0 = any
  int auto_calibrate_after = 20;                   // 0 = never automatically
  int max_message_bytes = 16 * 1024 * 1024;        // larger requests: RESOURCE_EXHAUSTED
  LogLevel log_level = LogLevel::kInfo;            // one line per RPC at info
};

class RunningServer {
 public:
  virtual ~RunningServer() = default;
  virtual int port() const = 0;
  // The bound /metrics port; 0 when metrics_listen was empty.
  virtual int metrics_port() const = 0;
  virtual Metrics& metrics() = 0;
  // Marks NOT_SERVING, lets in-flight RPCs finish until `grace` elapses, then stops.
  virtual void Shutdown(absl::Duration grace) = 0;
  // Store integrity check (PRAGMA integrity_check).
  virtual absl::Status CheckIntegrity() = 0;
};

absl::StatusOr<std::unique_ptr<RunningServer>> StartServer(const ServerOptions& options);

}  // namespace paraplan::server

#endif  // PARAPLAN_SERVER_SERVER_H_
