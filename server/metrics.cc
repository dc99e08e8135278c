#include "server/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

namespace paraplan::server {

struct Metrics::Impl {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>& requests =
      prometheus::BuildCounter().Name("paraplan_rpc_requests_total").Help("RPCs by method and status code").Register(*registry);
  prometheus::Family<prometheus::Histogram>& duration =
      prometheus::BuildHistogram().Name("paraplan_rpc_duration_seconds").Help("RPC latency by method").Register(*registry);
  prometheus::Family<prometheus::Counter>& evaluated = prometheus::BuildCounter()
      .Name("paraplan_plan_candidates_evaluated_total").Help("Plan candidates timed").Register(*registry);
  prometheus::Family<prometheus::Counter>& candidates = prometheus::BuildCounter()
      .Name("paraplan_plan_candidates_total").Help("Plan candidates by kind (enumerated, feasible)").Register(*registry);
  prometheus::Family<prometheus::Counter>& ingested = prometheus::BuildCounter()
      .Name("paraplan_measurements_ingested_total").Help("Measurements by profile and result").Register(*registry);
  prometheus::Family<prometheus::Histogram>& error = prometheus::BuildHistogram()
      .Name("paraplan_prediction_error_ratio").Help("Absolute relative error of iteration-time predictions")
      .Register(*registry);
  prometheus::Family<prometheus::Counter>& memory = prometheus::BuildCounter()
      .Name("paraplan_memory_predictions_total").Help("Memory fit predictions checked against observed runs")
      .Register(*registry);
  prometheus::Family<prometheus::Gauge>& mape = prometheus::BuildGauge()
      .Name("paraplan_prediction_mape_ratio").Help("Mean absolute percentage error over all measurements (ratio)")
      .Register(*registry);
  prometheus::Family<prometheus::Gauge>& bias = prometheus::BuildGauge()
      .Name("paraplan_prediction_bias_ratio").Help("Median of predicted / measured iteration time").Register(*registry);
  prometheus::Family<prometheus::Counter>& calibrations = prometheus::BuildCounter()
      .Name("paraplan_calibrations_total").Help("Calibrations run").Register(*registry);
  prometheus::Family<prometheus::Gauge>& version = prometheus::BuildGauge()
      .Name("paraplan_profile_version").Help("Newest version of each profile").Register(*registry);
  prometheus::Family<prometheus::Gauge>& age = prometheus::BuildGauge()
      .Name("paraplan_calibration_age_seconds").Help("Seconds since the profile was last calibrated (or created)")
      .Register(*registry);
  prometheus::Family<prometheus::Gauge>& disagreements = prometheus::BuildGauge()
      .Name("paraplan_calibration_disagreements")
      .Help("Parameters whose regimes (one node, across nodes) wanted different values at the last calibration")
      .Register(*registry);
};

Metrics::Metrics() : impl_(std::make_unique<Impl>()) {}
Metrics::~Metrics() = default;

void Metrics::RecordRpc(const std::string& method, const std::string& code, double seconds) {
  static const prometheus::Histogram::BucketBoundaries kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                                   0.05,   0.1,   0.25,   0.5,   1,    2.5, 10};
  impl_->requests.Add({{"method", method}, {"code", code}}).Increment();
  impl_->duration.Add({{"method", method}}, kBuckets).Observe(seconds);
}

void Metrics::RecordPlan(double enumerated, double feasible, double evaluated) {
  impl_->evaluated.Add({}).Increment(evaluated);
  impl_->candidates.Add({{"kind", "enumerated"}}).Increment(enumerated);
  impl_->candidates.Add({{"kind", "feasible"}}).Increment(feasible);
}

void Metrics::RecordIngest(const std::string& profile, const std::string& result) {
  impl_->ingested.Add({{"profile", profile}, {"result", result}}).Increment();
}

void Metrics::ObservePredictionError(const std::string& profile, double e) {
  static const prometheus::Histogram::BucketBoundaries kBuckets = {0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1};
  impl_->error.Add({{"profile", profile}}, kBuckets).Observe(e);
}

void Metrics::RecordMemoryPrediction(const std::string& profile, bool hit) {
  impl_->memory.Add({{"profile", profile}, {"result", hit ? "hit" : "miss"}}).Increment();
}

void Metrics::SetAccuracy(const std::string& profile, double mape, double bias) {
  impl_->mape.Add({{"profile", profile}}).Set(mape);
  impl_->bias.Add({{"profile", profile}}).Set(bias);
}

void Metrics::RecordCalibration(const std::string& profile) {
  impl_->calibrations.Add({{"profile", profile}}).Increment();
}

void Metrics::SetProfileVersion(const std::string& profile, int version) {
  impl_->version.Add({{"profile", profile}}).Set(version);
}

void Metrics::SetCalibrationAge(const std::string& profile, double seconds) {
  impl_->age.Add({{"profile", profile}}).Set(seconds);
}

void Metrics::SetCalibrationDisagreements(const std::string& profile, int count) {
  impl_->disagreements.Add({{"profile", profile}}).Set(count);
}

void Metrics::ForgetProfile(const std::string& profile) {
  const prometheus::Labels labels = {{"profile", profile}};
  for (prometheus::Family<prometheus::Gauge>* f : {&impl_->mape, &impl_->bias, &impl_->version, &impl_->age,
                                                    &impl_->disagreements}) {
    if (f->Has(labels)) f->Remove(&f->Add(labels));
  }
}

std::string Metrics::Text() const {
  return prometheus::TextSerializer().Serialize(impl_->registry->Collect());
}

}  // namespace paraplan::server
