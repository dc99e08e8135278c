// The paraplan gRPC server: Planner, Profiles and Measurements services over one
// Backend, plus grpc.health.v1, reflection, Prometheus metrics and one log line per RPC.
//
// StartServer() opens the store, seeds built-in profiles (never overwriting a stored
// version), loads the accuracy metrics from the store and starts serving; the returned
// handle reports the bound ports (useful with port 0) and drains on Shutdown(): health
// turns NOT_SERVING, new calls are refused, in-flight paraplan RPCs get until the grace
// period ends; long-lived streams (health Watch, reflection) are cancelled as soon as
// no paraplan RPC is left, so they do not hold the drain for the whole grace period.
// Authentication (bearer tokens with roles) and TLS are optional (auth.h); with tokens,
// GET /metrics on the HTTP port needs one too (any role; 401 otherwise) unless
// allow_anonymous_reads, while /healthz stays open. With http_listen the same services
// answer HTTP/JSON on that port (http_api.h), through the gRPC services. No gRPC
// headers here so main() and tests stay light. Thread-safe.
#ifndef PARAPLAN_SERVER_SERVER_H_
#define PARAPLAN_SERVER_SERVER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/log.h"

namespace paraplan::server {

class Metrics;

// Bounds on what one client can ask of the server; each refusal is RESOURCE_EXHAUSTED
// or INVALID_ARGUMENT naming the limit (and a retry time where waiting helps).
struct Limits {
  int max_gpus = 1 << 20;            // GPUs of one configuration or plan
  int max_plan_gpu_counts = 64;      // GPU counts in one Plan request
  int max_concurrent_plans = 4;      // searches at once; more: RESOURCE_EXHAUSTED, retry
  int64_t max_plan_candidates = 200'000'000;  // per Plan (~1 min of search); then truncated
  int max_batch = 10000;             // requests in one EstimateBatch
  int max_ingest = 10000;            // measurements in one IngestMeasurements
  int max_profile_bytes = 1 << 20;   // a serialized SystemProfile
  double plan_default_deadline_s = 30;  // a Plan without a deadline gets this one
  double write_rate_per_s = 50;      // write RPCs per second per client host; 0 = off
  double write_burst = 100;
  // Threads gRPC may run calls on at once (its sync server otherwise grows one per
  // concurrent call without bound: 196 were seen under a fuzz); a call beyond them is
  // answered RESOURCE_EXHAUSTED. Each search or fit also holds one watcher thread.
  int max_rpc_threads = 128;
};

struct ServerOptions {
  std::string listen = "127.0.0.1:50051";
  // A SQLite file, or a postgresql:// (postgres://) URI: replicas share one PostgreSQL
  // database (store.h).
  std::string db_path = "paraplan.db";
  std::string metrics_listen = "127.0.0.1:9464";  // HTTP /metrics, /healthz; empty = none; port 0 = any
  // HTTP/JSON API (http_api.h); empty = none; port 0 = any. With tokens it must be a
  // loopback address (no TLS on this port: put a TLS proxy in front).
  std::string http_listen;
  int auto_calibrate_after = 20;                   // 0 = never automatically
  int max_message_bytes = 16 * 1024 * 1024;        // larger requests: RESOURCE_EXHAUSTED
  LogLevel log_level = LogLevel::kInfo;            // one line per RPC at info
  // Server TLS (PEM files); both or neither. With tls_client_ca_file, clients must
  // present a certificate it signed (mutual TLS).
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;
  // Bearer tokens ("TOKEN ROLE" lines, see auth.h); empty = no authentication. Tokens
  // need TLS unless `listen` is a loopback address.
  std::string tokens_file;
  bool allow_anonymous_reads = false;
  Limits limits;
};

class RunningServer {
 public:
  virtual ~RunningServer() = default;
  virtual int port() const = 0;
  // The bound /metrics port; 0 when metrics_listen was empty.
  virtual int metrics_port() const = 0;
  // The bound HTTP/JSON API port; 0 when http_listen was empty.
  virtual int http_port() const { return 0; }
  virtual Metrics& metrics() = 0;
  // Marks NOT_SERVING, lets in-flight RPCs finish until `grace` elapses, then stops.
  virtual void Shutdown(absl::Duration grace) = 0;
  // Store integrity check (SQLite: PRAGMA integrity_check; PostgreSQL: the schema version).
  virtual absl::Status CheckIntegrity() = 0;
};

absl::StatusOr<std::unique_ptr<RunningServer>> StartServer(const ServerOptions& options);

}  // namespace paraplan::server

#endif  // PARAPLAN_SERVER_SERVER_H_
