// Metrics: the Prometheus families paraplan exports, behind a small interface so that
// only metrics.cc includes prometheus-cpp (its core: registry and text format). Names
// follow Prometheus conventions (_total, _seconds, _ratio). Serving them is not done
// here: the daemon's HttpServer (http_server.h) answers GET /metrics with Text().
// Thread-safe (prometheus-cpp metrics are atomic; family lookups are guarded by the
// library).
#ifndef PARAPLAN_SERVER_METRICS_H_
#define PARAPLAN_SERVER_METRICS_H_

#include <memory>
#include <string>

namespace paraplan::server {

class Metrics {
 public:
  // The Content-Type of Text(): Prometheus text exposition format 0.0.4.
  static constexpr char kContentType[] = "text/plain; version=0.0.4; charset=utf-8";

  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // One finished unary RPC of `service` (full name, "paraplan.v1.Planner"): counted as
  // paraplan_rpc_requests_total / _duration_seconds (method = short name, as the shipped
  // dashboards use it) and under the gRPC ecosystem's names (go-grpc-prometheus,
  // java-grpc-prometheus): grpc_server_started_total, grpc_server_handled_total and
  // grpc_server_handling_seconds, labelled grpc_type="unary", grpc_service, grpc_method,
  // grpc_code.
  void RecordRpc(const std::string& service, const std::string& method, const std::string& code, double seconds);
  void RecordPlan(double enumerated, double feasible, double evaluated);
  void RecordIngest(const std::string& profile, const std::string& result);
  void ObservePredictionError(const std::string& profile, double abs_relative_error);
  void RecordMemoryPrediction(const std::string& profile, bool hit);
  void SetAccuracy(const std::string& profile, double mape, double bias);
  void RecordCalibration(const std::string& profile);
  void SetProfileVersion(const std::string& profile, int version);
  void SetCalibrationAge(const std::string& profile, double seconds);
  // Parameters whose regimes disagreed at the profile's last calibration (FitReport).
  void SetCalibrationDisagreements(const std::string& profile, int count);
  // Drops the per-profile gauges of a deleted profile (counters and histograms stay:
  // they only ever grow, as Prometheus expects).
  void ForgetProfile(const std::string& profile);
  // paraplan_build_info{version, api, fingerprint} 1: which build and API answer here.
  void SetBuildInfo(const std::string& version, const std::string& api, const std::string& fingerprint);
  // The exposition text (what /metrics serves): the families above, then the standard
  // process_* metrics of this process read from /proc at the scrape (CPU seconds,
  // resident and virtual memory, open file descriptors and their limit, start time),
  // named as Prometheus' client libraries name them.
  std::string Text() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace paraplan::server

#endif  // PARAPLAN_SERVER_METRICS_H_
