// Metrics: the Prometheus families paraplan exports, behind a small interface so that
// only metrics.cc includes prometheus-cpp. Names follow Prometheus conventions
// (_total, _seconds, _ratio). Thread-safe (prometheus-cpp metrics are atomic; family
// lookups are guarded by the library).
#ifndef PARAPLAN_SERVER_METRICS_H_
#define PARAPLAN_SERVER_METRICS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace paraplan::server {

class Metrics {
 public:
  // Serves /metrics on `listen` ("host:port"; port 0 = any free port); empty = no HTTP
  // exposer (metrics are still recorded, e.g. for tests that read Text()).
  // prometheus-cpp throws when it cannot bind; this returns UNAVAILABLE instead.
  static absl::StatusOr<std::unique_ptr<Metrics>> Create(const std::string& listen);
  ~Metrics();

  // The bound HTTP port; 0 when no exposer.
  int port() const;

  void RecordRpc(const std::string& method, const std::string& code, double seconds);
  void RecordPlan(double enumerated, double feasible, double evaluated);
  void RecordIngest(const std::string& profile, const std::string& result);
  void ObservePredictionError(const std::string& profile, double abs_relative_error);
  void RecordMemoryPrediction(const std::string& profile, bool hit);
  void SetAccuracy(const std::string& profile, double mape, double bias);
  void RecordCalibration(const std::string& profile);
  void SetProfileVersion(const std::string& profile, int version);
  void SetCalibrationAge(const std::string& profile, double seconds);
  // Drops the per-profile gauges of a deleted profile (counters and histograms stay:
  // they only ever grow, as Prometheus expects).
  void ForgetProfile(const std::string& profile);
  // The exposition text (what /metrics serves).
  std::string Text() const;

 private:
  struct Impl;
  explicit Metrics(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace paraplan::server

#endif  // PARAPLAN_SERVER_METRICS_H_
