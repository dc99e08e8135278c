// Calibration: choose the measurements, fit times (fit.h) and memory overhead,
// cross-validate both with folds grouped by configuration, and decide promotion.
#include "estimator/calibration/calibrate.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "estimator/calibration/fit.h"
#include "estimator/calibration/params.h"
#include "estimator/calibration/samples.h"
#include "estimator/calibration/select.h"
#include "estimator/inputs/units.h"
#include "estimator/inputs/validate.h"
#include "estimator/iteration/estimate.h"
#include "estimator/system/hardware.h"

namespace paraplan {

namespace {

constexpr char kCalibrationWork[] = "calibration";

// Every number of a report leaves the server in an answer: none may be NaN or Inf.
absl::Status CheckFinite(const FitReport& r) {
  auto bad = [](absl::string_view what) {
    return absl::InternalError(absl::StrCat("the fit's ", what, " is not a finite number"));
  };
  for (const auto& [what, v] : {std::pair<const char*, double>{"error before", r.mape_before_ratio},
                                {"error after", r.mape_after_ratio},
                                {"cross-validated error", r.cv_mape_ratio},
                                {"memory cross-validated error", r.memory_cv_mape_ratio}}) {
    if (!std::isfinite(v)) return bad(what);
  }
  for (const ParameterChange& p : r.parameters) {
    for (double v : {p.before, p.after, p.stddev, p.lower_bound, p.upper_bound, p.sensitivity_ratio}) {
      if (!std::isfinite(v)) return bad(absl::StrCat("figure for ", p.name));
    }
  }
  return absl::OkStatus();
}

// Measurements in one time fit: the solver evaluates every one for each parameter at
// each iteration, so this bounds the fit's time; more are subsampled by shape.
constexpr int kSampleBudget = 400;
constexpr int kMaxFolds = 5;
// A fitted coordinate this close to a bound counts as at the bound (see AtBound).
constexpr double kAtBoundTolerance = 0.01;

std::string Percent(double ratio) { return absl::StrFormat("%.2f %%", 100 * ratio); }

double Mape(absl::Span<const CalibrationSample> samples, const SystemProfile& profile) {
  if (samples.empty()) return 0;
  double sum = 0;
  for (const CalibrationSample& s : samples) {
    const double p = std::exp(LogPredictedTime(s, profile));
    sum += std::isfinite(p) ? std::abs(p - s.measured_iteration_time_s) / s.measured_iteration_time_s : 1.0;
  }
  return sum / samples.size();
}

std::vector<const CalibrationSample*> Pointers(absl::Span<const CalibrationSample> samples,
                                               const std::vector<int>& indices) {
  std::vector<const CalibrationSample*> out;
  for (int i : indices) out.push_back(&samples[i]);
  return out;
}

// Within kAtBoundTolerance of a bound in the parameter's coordinate: 1 % relative for
// a log coordinate, 1 % of a step (0.1 ms) for the additive overhead.
bool AtBound(const CalibrationParam& p, double u) {
  return u - p.LowerU() <= kAtBoundTolerance || p.UpperU() - u <= kAtBoundTolerance;
}

// Memory overhead from measured peaks: peak = used * (1 + fraction) + fixed, by least
// squares over (used bytes, measured peak bytes); needs two distinct sizes.
struct MemoryFit {
  bool ok = false;
  bool fraction_clamped = false;  // least squares wanted it outside [0, 1]
  bool fixed_clamped = false;     // ... outside [0, 1e4] GiB
  double fraction = 0;
  double fixed_gib = 0;
  double fraction_stddev = 0;
  double fixed_stddev_gib = 0;
  double Predict(double used_bytes) const { return used_bytes * (1 + fraction) + fixed_gib * kGiB; }
};

struct PeakPoint {
  int sample;         // index into the usable measurements
  double used_bytes;  // model's memory before overhead
  double peak_bytes;  // measured
};

MemoryFit FitMemory(const std::vector<PeakPoint>& points) {
  MemoryFit fit;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const PeakPoint& p : points) {
    sx += p.used_bytes;
    sy += p.peak_bytes;
    sxx += p.used_bytes * p.used_bytes;
    sxy += p.used_bytes * p.peak_bytes;
  }
  const double n = static_cast<double>(points.size());
  const double det = n * sxx - sx * sx;
  if (points.size() < 2 || det <= 1e-6 * n * sxx) return fit;
  const double slope = (n * sxy - sx * sy) / det;
  const double intercept = (sy - slope * sx) / n;
  fit.ok = true;
  fit.fraction = std::clamp(slope - 1.0, 0.0, 1.0);
  fit.fixed_gib = std::clamp(intercept / kGiB, 0.0, 1e4);
  fit.fraction_clamped = fit.fraction != slope - 1.0;
  fit.fixed_clamped = fit.fixed_gib != intercept / kGiB;
  double ss = 0;
  for (const PeakPoint& p : points) {
    const double r = p.peak_bytes - (slope * p.used_bytes + intercept);
    ss += r * r;
  }
  const double s2 = points.size() > 2 ? ss / (n - 2) : 0;
  fit.fraction_stddev = std::sqrt(n * s2 / det);
  fit.fixed_stddev_gib = std::sqrt(s2 * sxx / det) / kGiB;
  return fit;
}

void AddMemoryChanges(const MemoryFit& fit, size_t num_peaks, const Calibration& before,
                      std::vector<ParameterChange>* out) {
  ParameterChange frac{"memory_overhead_fraction", before.memory_overhead_fraction,
                       before.memory_overhead_fraction, false, ""};
  frac.upper_bound = 1.0;
  ParameterChange fixed{"memory_overhead_gib", before.memory_overhead_gib, before.memory_overhead_gib, false,
                        ""};
  fixed.upper_bound = 1e4;
  if (fit.ok) {
    frac.after = fit.fraction;
    fixed.after = fit.fixed_gib;
    frac.stddev = fit.fraction_stddev;
    fixed.stddev = fit.fixed_stddev_gib;
    frac.at_bound = fit.fraction_clamped;
    fixed.at_bound = fit.fixed_clamped;
    for (ParameterChange* c : {&frac, &fixed}) {
      c->fitted = true;
      c->reason = absl::StrCat("fitted on ", num_peaks, " measured peaks");
      if (c->at_bound) absl::StrAppend(&c->reason, "; ended at its bound (clamped)");
    }
  } else {
    frac.reason = fixed.reason = "needs measured peak memory from at least two differently sized runs";
  }
  out->push_back(frac);
  out->push_back(fixed);
}

ParameterChange TimeChange(const CalibrationParam& p, const TimeFit& fit, size_t j,
                           const std::string& fitted_on, Calibration after) {
  ParameterChange c;
  c.name = p.name;
  c.before = p.before;
  c.lower_bound = p.lower;
  c.upper_bound = p.upper;
  c.sensitivity_ratio = fit.selection.sensitivity[j];
  c.fitted = fit.selection.free[j];
  if (!c.fitted) {
    c.after = p.ref(after);
    c.reason = fit.selection.reason[j];
    // A default derived from another parameter (the small-GEMM size from the matmul
    // efficiency, FP8 from 16-bit) moves with it.
    if (std::abs(c.after - c.before) > 1e-12 * std::abs(c.before)) {
      absl::StrAppend(&c.reason, "; its default follows the fitted parameters");
    }
    return c;
  }
  c.after = p.Value(fit.u[j]);
  // Delta method: d theta = theta du (log coordinate) or step du (linear).
  c.stddev = (p.additive ? p.step : c.after) * fit.stddev_u[j];
  c.at_bound = AtBound(p, fit.u[j]);
  c.reason = absl::StrFormat("fitted on %s: %.4g +- %.2g; moves predictions by %s per %s", fitted_on, c.after,
                             c.stddev, Percent(c.sensitivity_ratio), p.StepName());
  if (c.at_bound) {
    const bool upper = std::abs(c.after - p.upper) < std::abs(c.after - p.lower);
    absl::StrAppend(&c.reason, "; at its ", upper ? "upper" : "lower", " bound ",
                    absl::StrFormat("%g", upper ? p.upper : p.lower));
    if (!upper && p.additive && p.lower == 0) {
      // An added cost cannot go below nothing: the measurements want less fixed time than
      // the model's other terms already charge.
      absl::StrAppend(&c.reason, ": the measurements show none of this cost, and would take time away; the "
                                 "model over-charges some fixed cost of these runs");
    } else {
      absl::StrAppend(&c.reason, ": the measurements push it past its physical range, so it stands in for a "
                                 "cost the model lacks");
    }
  }
  return c;
}

}  // namespace

absl::StatusOr<CalibrationResult> CalibrateProfile(const SystemProfile& base,
                                                   absl::Span<const CalibrationSample> all, const Interrupt& stop) {
  if (absl::Status s = ValidateProfile(base); !s.ok()) return s;
  // Usable: finite positive time, not OOM, and the base profile can estimate it.
  std::vector<CalibrationSample> usable;
  for (const CalibrationSample& s : all) {
    if (s.out_of_memory || !ValidateMeasured(s.measured_iteration_time_s, s.measured_peak_memory_gib).ok()) {
      continue;
    }
    if (!std::isfinite(LogPredictedTime(s, base))) continue;
    usable.push_back(s);
  }
  const int n = static_cast<int>(usable.size());
  const int groups = CountGroups(usable);
  if (n < kMinCalibrationMeasurements || groups < kMinCalibrationGroups) {
    return absl::FailedPreconditionError(absl::StrCat(
        "calibrating profile \"", base.name, "\" needs at least ", kMinCalibrationMeasurements,
        " measurements from ", kMinCalibrationGroups, " distinct configurations (model x TP x PP); have ", n,
        n == 1 ? " usable measurement" : " usable measurements", " from ", groups,
        groups == 1 ? " configuration" : " configurations"));
  }

  // Fitted values are written explicitly; the rest keep the base's own (0 = default).
  const SystemProfile at = IndexedCalibration(base);
  const std::vector<CalibrationParam> params = CalibrationParams(base);

  CalibrationResult result;
  FitReport& r = result.report;
  const Subsample sub = StratifiedSubsample(usable, kSampleBudget);
  const std::vector<const CalibrationSample*> fit_on = Pointers(usable, sub.indices);
  if (absl::Status s = stop.Check(kCalibrationWork); !s.ok()) return s;
  const TimeFit fit = FitTimes(at, params, fit_on);
  result.profile = fit.profile;
  const std::string fitted_on = sub.indices.size() == usable.size()
                                    ? absl::StrCat(n, " measurements")
                                    : absl::StrCat(sub.indices.size(), " of ", n, " measurements");
  std::vector<ParameterChange> changes;
  const Calibration after = ResolvedCalibration(result.profile);
  for (size_t j = 0; j < params.size(); ++j)
    changes.push_back(TimeChange(params[j], fit, j, fitted_on, after));

  // Memory: the model's memory before overhead does not depend on the time parameters.
  std::vector<PeakPoint> peaks;
  for (int i = 0; i < n; ++i) {
    if (usable[i].measured_peak_memory_gib <= 0) continue;
    absl::StatusOr<Estimate> e = EstimateIteration(usable[i].workload, usable[i].config, at);
    if (!e.ok()) continue;
    peaks.push_back(
        {i, e->memory.total_bytes - e->memory.overhead_bytes, usable[i].measured_peak_memory_gib * kGiB});
  }
  const MemoryFit memory = FitMemory(peaks);
  if (memory.ok) {
    result.profile.calibration.memory_overhead_fraction = memory.fraction;
    result.profile.calibration.memory_overhead_gib = memory.fixed_gib;
  }
  AddMemoryChanges(memory, peaks.size(), ResolvedCalibration(base), &changes);

  r.num_measurements = n;
  r.num_available = n;
  r.num_used = static_cast<int>(sub.indices.size());
  r.sampling_note = sub.note;
  r.num_groups = groups;
  r.num_peak_measurements = static_cast<int>(peaks.size());
  r.mape_before_ratio = Mape(usable, base);
  r.mape_after_ratio = Mape(usable, result.profile);

  // Grouped cross-validation: each fold repeats subsampling, selection and fit on its
  // training groups only.
  const Folds folds = GroupedFolds(usable, kMaxFolds);
  r.cv_folds = folds.num_folds;
  r.cv_method = folds.method;
  std::vector<int> folds_fitted(params.size(), 0);
  int memory_folds_fitted = 0;
  if (folds.num_folds >= 2) {
    double sum = 0, memory_sum = 0;
    int memory_tested = 0;
    for (int f = 0; f < folds.num_folds; ++f) {
      if (absl::Status s = stop.Check(kCalibrationWork); !s.ok()) return s;
      std::vector<CalibrationSample> train, test;
      for (int i = 0; i < n; ++i) (folds.fold_of[i] == f ? test : train).push_back(usable[i]);
      const Subsample fold_sub = StratifiedSubsample(train, kSampleBudget);
      const TimeFit fold_fit = FitTimes(at, params, Pointers(train, fold_sub.indices));
      sum += Mape(test, fold_fit.profile) * test.size();
      for (size_t j = 0; j < params.size(); ++j) folds_fitted[j] += fold_fit.selection.free[j] ? 1 : 0;

      std::vector<PeakPoint> fold_train;
      for (const PeakPoint& p : peaks) {
        if (folds.fold_of[p.sample] != f) fold_train.push_back(p);
      }
      const MemoryFit fold_memory = FitMemory(fold_train);
      if (!fold_memory.ok) continue;
      ++memory_folds_fitted;
      for (const PeakPoint& p : peaks) {
        if (folds.fold_of[p.sample] != f) continue;
        memory_sum += std::abs(fold_memory.Predict(p.used_bytes) / p.peak_bytes - 1);
        ++memory_tested;
      }
    }
    r.cv_valid = true;
    r.cv_mape_ratio = sum / n;
    r.memory_cv_valid = memory_tested > 0;
    r.memory_cv_mape_ratio = memory_tested > 0 ? memory_sum / memory_tested : 0;
  }
  // `changes`: the time parameters in order, then the two memory parameters.
  for (size_t j = 0; j < params.size(); ++j) changes[j].cv_folds_fitted = folds_fitted[j];
  for (size_t j = params.size(); j < changes.size(); ++j) changes[j].cv_folds_fitted = memory_folds_fitted;

  r.current_mape_ratio = r.mape_before_ratio;
  const double needed = r.current_mape_ratio * (1 - kPromotionMargin);
  r.promote = r.cv_valid && r.cv_mape_ratio < needed;
  if (!r.cv_valid) {
    r.promotion_reason = "not promoted: the cross-validated error could not be computed";
  } else if (r.promote) {
    r.promotion_reason = absl::StrCat("promoted: cross-validated ", Percent(r.cv_mape_ratio), " vs current ",
                                      Percent(r.current_mape_ratio));
  } else {
    r.promotion_reason =
        absl::StrCat("not promoted: cross-validated ", Percent(r.cv_mape_ratio), " vs current ",
                     Percent(r.current_mape_ratio), " (needs below ", Percent(needed), ")");
  }
  std::sort(changes.begin(), changes.end(),
            [](const ParameterChange& a, const ParameterChange& b) { return a.name < b.name; });
  r.parameters = std::move(changes);
  // A fit is stored as a profile version: it must be one every estimate can use.
  if (absl::Status s = ValidateProfile(result.profile); !s.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("calibrating profile \"", base.name,
                                                      "\": the fit left the physical range (", s.message(),
                                                      "); nothing stored"));
  }
  if (absl::Status s = CheckFinite(r); !s.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("calibrating profile \"", base.name, "\": ", s.message(), "; nothing stored"));
  }
  return result;
}

}  // namespace paraplan
