// Calibration by robust nonlinear least squares (Ceres Solver).
//
// Residual per measurement: log(predicted / measured) under a Huber loss (delta 5 %),
// so one bad measurement cannot drag the fit. Prior per parameter: (theta - spec) /
// (sigma * spec) scaled to the weight of a 5 % error, which keeps parameters that the
// data barely constrain near their specification values. Only parameters that the
// measurements exercise are free; the rest stay as they are.
#include "estimator/calibrate.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ceres/ceres.h"
#include "estimator/estimate.h"
#include "estimator/hardware.h"
#include "estimator/validate.h"

namespace paraplan {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kHuberDelta = 0.05;  // in log space: ~5 % relative error
constexpr double kPriorSigma = 0.3;   // a 30 % move costs as much as one 5 % miss
constexpr int kMaxSamples = 400;      // most recent samples used by one fit

// One fitted parameter: how to read and write it on a profile's calibration, its
// bounds, and the specification value the prior pulls toward.
struct Param {
  std::string name;
  std::function<double&(Calibration&)> ref;
  double lower;
  double upper;
  double spec = 0;
};

std::vector<Param> AllParams(const SystemProfile& profile) {
  std::vector<Param> p;
  p.push_back({"matmul_efficiency", [](Calibration& c) -> double& { return c.matmul_efficiency; }, 0.15, 1.0});
  p.push_back({"memory_bound_efficiency",
               [](Calibration& c) -> double& { return c.memory_bound_efficiency; }, 0.1, 1.0});
  p.push_back({"overlap_efficiency", [](Calibration& c) -> double& { return c.overlap_efficiency; }, 1e-6, 1.0});
  p.push_back({"iteration_overhead_s",
               [](Calibration& c) -> double& { return c.iteration_overhead_s; }, 1e-9, 60.0});
  for (size_t i = 0; i < profile.network_levels.size(); ++i) {
    p.push_back({absl::StrCat("network.", profile.network_levels[i].name, ".efficiency"),
                 [i](Calibration& c) -> double& { return c.network[i].efficiency; }, 0.05, 1.0});
  }
  return p;
}

// Why a parameter cannot be learned from these samples ("" = it can).
std::string Unidentified(const Param& p, const SystemProfile& profile,
                         absl::Span<const CalibrationSample> samples) {
  auto any = [&](auto pred) { return std::any_of(samples.begin(), samples.end(), pred); };
  if (p.name == "overlap_efficiency") {
    if (!any([](const CalibrationSample& s) {
          const ParallelConfig c = s.config.Normalized();
          return c.tensor_parallel > 1 || c.context_parallel > 1 ||
                 (c.data_parallel > 1 && (c.overlap_grad_reduce || c.overlap_param_gather));
        })) {
      return "no measurement overlaps communication with compute (TP, CP or overlapped DP)";
    }
  }
  if (p.name == "iteration_overhead_s" && samples.size() < 3) {
    return "needs at least 3 measurements to separate from the efficiencies";
  }
  for (size_t i = 0; i < profile.network_levels.size(); ++i) {
    if (p.name != absl::StrCat("network.", profile.network_levels[i].name, ".efficiency")) continue;
    const int64_t inner = i == 0 ? 1 : profile.network_levels[i - 1].domain_size;
    if (!any([&](const CalibrationSample& s) { return s.config.Normalized().NumGpus() > inner; })) {
      return i == 0 ? "no measurement uses more than one GPU"
                    : absl::StrCat("no measurement spans more than ", inner, " GPUs (one ",
                                   profile.network_levels[i - 1].name, " domain)");
    }
  }
  return "";
}

double Predict(const CalibrationSample& s, const SystemProfile& profile) {
  absl::StatusOr<Estimate> e = EstimateIteration(s.workload, s.config, profile);
  return e.ok() ? e->iteration_time_s : NAN;
}

double Mape(absl::Span<const CalibrationSample> samples, const SystemProfile& profile) {
  if (samples.empty()) return 0;
  double sum = 0;
  for (const CalibrationSample& s : samples) {
    const double p = Predict(s, profile);
    sum += std::isfinite(p) ? std::abs(p - s.measured_iteration_time_s) / s.measured_iteration_time_s : 1.0;
  }
  return sum / samples.size();
}

// Residual of one measurement: log(predicted / measured) for the profile with theta
// applied to the free parameters.
struct TimeResidual {
  const CalibrationSample* sample;
  const SystemProfile* base;
  const std::vector<Param>* params;
  bool operator()(double const* const* theta, double* residual) const {
    SystemProfile p = *base;
    // Numeric differentiation may step just outside the bounds; clamp (a calibration
    // value of 0 would also mean "use the default").
    for (size_t i = 0; i < params->size(); ++i) {
      const Param& q = (*params)[i];
      q.ref(p.calibration) = std::clamp(theta[0][i], q.lower, q.upper);
    }
    const double predicted = Predict(*sample, p);
    if (!std::isfinite(predicted) || predicted <= 0) return false;
    residual[0] = std::log(predicted / sample->measured_iteration_time_s);
    return true;
  }
};

struct PriorResidual {
  size_t index;
  double spec;
  double scale;
  bool operator()(double const* const* theta, double* residual) const {
    residual[0] = (theta[0][index] - spec) / scale;
    return true;
  }
};

// Fits the free parameters on `samples`, starting from (and regularised toward) `base`.
SystemProfile Fit(const SystemProfile& base, const std::vector<Param>& free,
                  absl::Span<const CalibrationSample> samples) {
  std::vector<double> theta(free.size());
  Calibration resolved = ResolvedCalibration(base);
  for (size_t i = 0; i < free.size(); ++i) theta[i] = free[i].ref(resolved);
  // Every fitted value is stored explicitly, so start from the resolved calibration.
  SystemProfile start = base;
  start.calibration = resolved;

  ceres::Problem problem;
  for (const CalibrationSample& s : samples) {
    auto* cost = new ceres::DynamicNumericDiffCostFunction<TimeResidual, ceres::CENTRAL>(
        new TimeResidual{&s, &start, &free});
    cost->AddParameterBlock(static_cast<int>(free.size()));
    cost->SetNumResiduals(1);
    problem.AddResidualBlock(cost, new ceres::HuberLoss(kHuberDelta), theta.data());
  }
  for (size_t i = 0; i < free.size(); ++i) {
    const double spec = free[i].spec;
    // Additive parameters (overhead) have no natural scale: use 10 ms.
    const double scale = (spec > 0 ? kPriorSigma * spec : 0.01) / kHuberDelta;
    auto* prior = new ceres::DynamicNumericDiffCostFunction<PriorResidual>(new PriorResidual{i, spec, scale});
    prior->AddParameterBlock(static_cast<int>(free.size()));
    prior->SetNumResiduals(1);
    problem.AddResidualBlock(prior, nullptr, theta.data());
  }
  for (size_t i = 0; i < free.size(); ++i) {
    problem.SetParameterLowerBound(theta.data(), static_cast<int>(i), free[i].lower);
    problem.SetParameterUpperBound(theta.data(), static_cast<int>(i), free[i].upper);
  }
  ceres::Solver::Options options;
  options.max_num_iterations = 50;
  options.linear_solver_type = ceres::DENSE_QR;
  options.logging_type = ceres::SILENT;
  options.num_threads = 1;
  ceres::Solver::Summary summary;
  ceres::Solve(options, &problem, &summary);

  SystemProfile out = start;
  for (size_t i = 0; i < free.size(); ++i) {
    // An additive parameter pinned at its lower bound is zero (the bound only keeps the
    // numeric derivative inside the valid range).
    const bool additive = free[i].spec == 0;
    free[i].ref(out.calibration) = additive && theta[i] <= 2 * free[i].lower ? 0 : theta[i];
  }
  return out;
}

// Memory overhead from measured peaks: peak = used * (1 + fraction) + fixed, fitted by
// least squares on the samples that report a peak (needs two distinct sizes).
void FitMemory(const SystemProfile& fitted, absl::Span<const CalibrationSample> samples,
               SystemProfile* out, std::vector<ParameterChange>* report,
               const Calibration& before) {
  std::vector<std::pair<double, double>> points;  // (used bytes, measured peak bytes)
  for (const CalibrationSample& s : samples) {
    if (s.measured_peak_memory_gib <= 0) continue;
    absl::StatusOr<Estimate> e = EstimateIteration(s.workload, s.config, fitted);
    if (!e.ok()) continue;
    const double used = e->memory.total_bytes - e->memory.overhead_bytes;
    points.emplace_back(used, s.measured_peak_memory_gib * kGiB);
  }
  ParameterChange frac{"memory_overhead_fraction", before.memory_overhead_fraction,
                       before.memory_overhead_fraction, false, ""};
  ParameterChange fixed{"memory_overhead_gib", before.memory_overhead_gib, before.memory_overhead_gib,
                        false, ""};
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (auto [x, y] : points) {
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double n = static_cast<double>(points.size());
  const double det = n * sxx - sx * sx;
  if (points.size() >= 2 && det > 1e-6 * n * sxx) {
    const double slope = (n * sxy - sx * sy) / det;
    const double intercept = (sy - slope * sx) / n;
    frac.after = std::clamp(slope - 1.0, 0.0, 1.0);
    fixed.after = std::clamp(intercept / kGiB, 0.0, 1e4);
    frac.fitted = fixed.fitted = true;
    frac.reason = fixed.reason = absl::StrCat("fitted on ", points.size(), " measured peaks");
    out->calibration.memory_overhead_fraction = frac.after;
    out->calibration.memory_overhead_gib = fixed.after;
  } else {
    frac.reason = fixed.reason = "needs measured peak memory from at least two differently sized runs";
  }
  report->push_back(frac);
  report->push_back(fixed);
}

}  // namespace

absl::StatusOr<CalibrationResult> CalibrateProfile(const SystemProfile& base,
                                                   absl::Span<const CalibrationSample> all) {
  if (absl::Status s = ValidateProfile(base); !s.ok()) return s;
  // Usable samples: valid, finite, positive time, not OOM; the most recent kMaxSamples.
  std::vector<CalibrationSample> samples;
  for (const CalibrationSample& s : all) {
    if (s.out_of_memory || !(s.measured_iteration_time_s > 0) ||
        !std::isfinite(s.measured_iteration_time_s)) {
      continue;
    }
    if (!std::isfinite(Predict(s, base))) continue;
    samples.push_back(s);
  }
  if (samples.size() > kMaxSamples) {
    samples.erase(samples.begin(), samples.end() - kMaxSamples);
  }
  if (samples.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("profile \"", base.name, "\" has no usable measurements to calibrate on"));
  }

  const Calibration before = ResolvedCalibration(base);
  std::vector<Param> params = AllParams(base);
  std::vector<Param> free;
  std::vector<ParameterChange> changes;
  for (Param& p : params) {
    Calibration spec = before;
    p.spec = p.ref(spec);
    const std::string why = Unidentified(p, base, samples);
    if (why.empty()) {
      free.push_back(p);
    } else {
      changes.push_back({p.name, p.spec, p.spec, false, why});
    }
  }

  CalibrationResult result;
  result.profile = Fit(base, free, samples);
  for (const Param& p : free) {
    Calibration fitted = result.profile.calibration;
    changes.push_back({p.name, p.spec, p.ref(fitted), true,
                       absl::StrCat("fitted on ", samples.size(), " measurements")});
  }
  FitMemory(result.profile, samples, &result.profile, &changes, before);

  FitReport& r = result.report;
  r.num_measurements = static_cast<int>(samples.size());
  r.mape_before_ratio = Mape(samples, base);
  r.mape_after_ratio = Mape(samples, result.profile);
  // Cross-validation: leave-one-out up to 20 samples, else 5-fold.
  const size_t n = samples.size();
  if (n >= 2) {
    const size_t folds = n <= 20 ? n : 5;
    double sum = 0;
    for (size_t f = 0; f < folds; ++f) {
      std::vector<CalibrationSample> train, test;
      for (size_t i = 0; i < n; ++i) (i % folds == f ? test : train).push_back(samples[i]);
      const SystemProfile fold = Fit(base, free, train);
      sum += Mape(test, fold) * test.size();
    }
    r.cv_mape_ratio = sum / n;
  } else {
    r.cv_mape_ratio = r.mape_after_ratio;
  }
  std::sort(changes.begin(), changes.end(),
            [](const ParameterChange& a, const ParameterChange& b) { return a.name < b.name; });
  r.parameters = std::move(changes);
  return result;
}

}  // namespace paraplan
