#include "server/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace paraplan::server {

namespace {

// One metric in the text format: HELP, TYPE and the sample.
void AppendMetric(std::string* out, const char* name, const char* type, const char* help, double value) {
  char line[256];
  std::snprintf(line, sizeof line, "# HELP %s %s\n# TYPE %s %s\n%s %.12g\n", name, help, name, type, name, value);
  *out += line;
}

// The process_* metrics of Prometheus' client libraries, from /proc (Linux; proc(5)):
// /proc/self/stat fields 14-15 (utime, stime, clock ticks), 22 (starttime, ticks after
// boot), 23 (vsize, bytes) and 24 (rss, pages); /proc/stat's btime; /proc/self/fd; the
// RLIMIT_NOFILE soft limit. Nothing where /proc cannot be read.
std::string ProcessMetricsText() {
  std::ifstream stat_file("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');  // the command name may hold spaces
  if (paren == std::string::npos) return "";
  std::istringstream fields(stat.substr(paren + 2));
  std::vector<std::string> f((std::istream_iterator<std::string>(fields)), std::istream_iterator<std::string>());
  if (f.size() < 22) return "";  // f[0] is field 3 (state)
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  double boot = 0;
  std::ifstream proc_stat("/proc/stat");
  for (std::string key; proc_stat >> key;) {
    if (key == "btime") {
      proc_stat >> boot;
      break;
    }
  }
  std::string out;
  AppendMetric(&out, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
               (std::stod(f[11]) + std::stod(f[12])) / ticks);
  AppendMetric(&out, "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
               boot + std::stod(f[19]) / ticks);
  AppendMetric(&out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", std::stod(f[20]));
  AppendMetric(&out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
               std::stod(f[21]) * page);
  std::error_code ec;
  double fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec); !ec && it != std::filesystem::end(it);
       it.increment(ec)) {
    ++fds;
  }
  AppendMetric(&out, "process_open_fds", "gauge", "Number of open file descriptors.", fds);
  struct rlimit limit {};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    AppendMetric(&out, "process_max_fds", "gauge", "Maximum number of open file descriptors.",
                 static_cast<double>(limit.rlim_cur));
  }
  return out;
}

}  // namespace

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
      .Name("paraplan_profile_version")
      .Help("Default version of each profile: the promoted one that requests naming no version use")
      .Register(*registry);
  prometheus::Family<prometheus::Counter>& grpc_started = prometheus::BuildCounter()
      .Name("grpc_server_started_total").Help("Total number of RPCs started on the server.").Register(*registry);
  prometheus::Family<prometheus::Counter>& grpc_handled = prometheus::BuildCounter()
      .Name("grpc_server_handled_total")
      .Help("Total number of RPCs completed on the server, regardless of success or failure.")
      .Register(*registry);
  prometheus::Family<prometheus::Histogram>& grpc_handling = prometheus::BuildHistogram()
      .Name("grpc_server_handling_seconds")
      .Help("Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.")
      .Register(*registry);
  prometheus::Family<prometheus::Gauge>& build = prometheus::BuildGauge()
      .Name("paraplan_build_info").Help("The paraplan build answering here (always 1)").Register(*registry);
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

void Metrics::RecordRpc(const std::string& service, const std::string& method, const std::string& code,
                        double seconds) {
  static const prometheus::Histogram::BucketBoundaries kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                                   0.05,   0.1,   0.25,   0.5,   1,    2.5, 10};
  impl_->requests.Add({{"method", method}, {"code", code}}).Increment();
  impl_->duration.Add({{"method", method}}, kBuckets).Observe(seconds);
  const prometheus::Labels call = {{"grpc_type", "unary"}, {"grpc_service", service}, {"grpc_method", method}};
  impl_->grpc_started.Add(call).Increment();
  prometheus::Labels handled = call;
  handled.emplace("grpc_code", code);
  impl_->grpc_handled.Add(handled).Increment();
  impl_->grpc_handling.Add(call, kBuckets).Observe(seconds);
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

void Metrics::SetBuildInfo(const std::string& version, const std::string& api, const std::string& fingerprint) {
  impl_->build.Add({{"version", version}, {"api", api}, {"fingerprint", fingerprint}}).Set(1);
}

std::string Metrics::Text() const {
  return prometheus::TextSerializer().Serialize(impl_->registry->Collect()) + ProcessMetricsText();
}

}  // namespace paraplan::server
