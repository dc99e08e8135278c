// Calibration: choose the measurements, fit times (fit.h) and memory overhead,
// cross-validate both with folds grouped by configuration, and decide promotion.
#include "estimator/calibration/calibrate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "estimator/calibration/fit.h"
#include "estimator/calibration/params.h"
#include "estimator/calibration/samples.h"
#include "estimator/calibration/regimes.h"
#include "estimator/calibration/select.h"
#include "estimator/inputs/measured_features.h"
#include "estimator/inputs/calibration_regime.h"
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
// A fitted coordinate this close to a bound counts as at the bound (see AtBound).
constexpr double kAtBoundTolerance = 0.01;

std::string Percent(double ratio) { return absl::StrFormat("%.2f %%", 100 * ratio); }

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

// One memory parameter's change: `after` from the fit where it is usable; `whose` names
// the runs it was fitted on ("" for all, or e.g. "torchtitan ").
ParameterChange MemoryChange(const char* name, double before, double upper, const MemoryFit& fit, double after,
                             double stddev, bool clamped, size_t num_peaks, const char* whose) {
  ParameterChange c{name, before, before, false, ""};
  c.upper_bound = upper;
  if (!fit.ok) {
    c.reason = absl::StrCat("needs measured peak memory from at least two differently sized ", whose, "runs");
    return c;
  }
  c.after = after;
  c.stddev = stddev;
  c.at_bound = clamped;
  c.fitted = true;
  c.reason = absl::StrCat("fitted on ", num_peaks, " measured peaks", *whose ? absl::StrCat(" of ", whose, "runs") : "");
  if (c.at_bound) absl::StrAppend(&c.reason, "; ended at its bound (clamped)");
  return c;
}

// The allocator's overhead share and fixed GiB from the runs under the default
// allocator; the expandable-segments share from torchtitan's (its launcher's setting).
void AddMemoryChanges(const MemoryFit& fit, size_t num_peaks, const MemoryFit& expandable, size_t num_expandable,
                      const Calibration& before, std::vector<ParameterChange>* out) {
  out->push_back(MemoryChange("memory_overhead_fraction", before.memory_overhead_fraction, 1.0, fit, fit.fraction,
                              fit.fraction_stddev, fit.fraction_clamped, num_peaks, ""));
  out->push_back(MemoryChange("memory_overhead_gib", before.memory_overhead_gib, 1e4, fit, fit.fixed_gib,
                              fit.fixed_stddev_gib, fit.fixed_clamped, num_peaks, ""));
  out->push_back(MemoryChange("expandable_segments_overhead_fraction", before.expandable_segments_overhead_fraction,
                              1.0, expandable, expandable.fraction, expandable.fraction_stddev,
                              expandable.fraction_clamped, num_expandable, "torchtitan "));
}

ParameterChange TimeChange(const CalibrationParam& p, const ScopedFit& fit, size_t j, const std::string& fitted_on,
                           Calibration after) {
  ParameterChange c;
  c.name = p.name;
  c.before = p.before;
  c.lower_bound = p.lower;
  c.upper_bound = p.upper;
  const AppliedParam& applied = fit.applied[j];
  c.sensitivity_ratio = applied.sensitivity;
  c.fitted = fit.fitted[j];
  if (!c.fitted) {
    c.after = p.ref(after);
    c.reason = fit.pooled.selection.reason[j];
    // A default derived from another parameter (the small-GEMM size from the matmul
    // efficiency, FP8 from 16-bit) moves with it.
    if (std::abs(c.after - c.before) > 1e-12 * std::abs(c.before)) {
      absl::StrAppend(&c.reason, "; its default follows the fitted parameters");
    }
    return c;
  }
  c.after = p.ref(after);
  // Delta method: d theta = theta du (log coordinate) or step du (linear).
  c.stddev = (p.additive ? p.step : c.after) * applied.stddev_u;
  c.at_bound = AtBound(p, p.Coordinate(c.after));
  c.reason = absl::StrFormat("fitted on %s: %.4g +- %.2g; moves predictions by %s per %s",
                             applied.fitted_on.empty() ? fitted_on : applied.fitted_on, c.after, c.stddev,
                             Percent(c.sensitivity_ratio), p.StepName());
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

// What calibration needs to know of a measurement's scale.
struct Scale {
  int64_t gpus = 0;
  double parameters = 0;  // training FLOPs per token / 6
  int level = 0;          // RegimeLevel
  double base_ape = 0;    // the base profile's |predicted / measured - 1|
  unsigned features = 0;  // FeaturesOf the run (inputs/measured_features.h)
};

Strata StrataOf(absl::Span<const CalibrationSample> samples, const std::vector<Scale>& scale) {
  std::vector<int> level;
  for (const Scale& k : scale) level.push_back(k.level);
  return MakeStrata(samples, level);
}

// The whole regime-aware fit on the measurements `indices` of `usable`.
absl::StatusOr<ScopedFit> FitSubset(const SystemProfile& at, const std::vector<CalibrationParam>& params,
                                    const std::vector<CalibrationSample>& usable, const std::vector<Scale>& scale,
                                    const std::vector<int>& indices, const Interrupt& stop) {
  std::vector<CalibrationSample> picked;
  std::vector<Scale> picked_scale;
  for (int i : indices) {
    picked.push_back(usable[i]);
    picked_scale.push_back(scale[i]);
  }
  return FitByRegime(at, params, picked, StrataOf(picked, picked_scale), kSampleBudget, stop);
}

double Ape(const CalibrationSample& s, const SystemProfile& profile) {
  const double p = std::exp(LogPredictedTime(s, profile));
  return std::isfinite(p) ? std::abs(p - s.measured_iteration_time_s) / s.measured_iteration_time_s : 1.0;
}

double Mape(absl::Span<const CalibrationSample> samples, const SystemProfile& profile) {
  double sum = 0;
  for (const CalibrationSample& s : samples) sum += Ape(s, profile);
  return samples.empty() ? 0 : sum / samples.size();
}

// When the fit cannot lower the in-sample error by kPromotionMargin, no value of the
// parameters explains these runs: name the configuration groups whose residuals stay
// largest (at most kGapGroups), with their median predicted / measured. When it can, but
// groups stay more than kGapFactor off either way, those lack a term: name them too.
constexpr int kGapGroups = 3;
constexpr double kGapFactor = 2.0;

std::string ModelGap(const std::vector<CalibrationSample>& usable, const SystemProfile& fitted, double before,
                     double after) {
  const bool lowered = after < before * (1 - kPromotionMargin);
  std::map<std::string, std::vector<double>> ratios;
  for (const CalibrationSample& s : usable) {
    const double p = std::exp(LogPredictedTime(s, fitted));
    ratios[ConfigGroup(s)].push_back(std::isfinite(p) ? p / s.measured_iteration_time_s : 0);
  }
  std::vector<std::tuple<double, std::string, size_t, double>> groups;  // (MAPE, group, runs, median)
  for (auto& [group, v] : ratios) {
    double ape = 0;
    for (double x : v) ape += std::abs(x - 1) / v.size();
    std::sort(v.begin(), v.end());
    groups.emplace_back(ape, group, v.size(), v[v.size() / 2]);
  }
  std::sort(groups.rbegin(), groups.rend());
  std::vector<std::string> worst;
  for (size_t i = 0; i < groups.size() && worst.size() < kGapGroups; ++i) {
    const auto& [ape, group, runs, median] = groups[i];
    if (lowered && median > 1 / kGapFactor && median < kGapFactor) continue;
    worst.push_back(absl::StrFormat("%s (%d runs, median predicted/measured %.2f)", group, runs, median));
  }
  if (lowered) {
    if (worst.empty()) return "";
    return absl::StrCat("after the fit (", Percent(before), " -> ", Percent(after),
                        ") these configuration groups stay more than 2x off: the model lacks a term for them: ",
                        absl::StrJoin(worst, "; "));
  }
  return absl::StrCat("the fit cannot lower the error (", Percent(before), " -> ", Percent(after),
                      "): the model lacks a term for these runs; largest residuals: ", absl::StrJoin(worst, "; "));
}

// Hold out the largest-scale configuration groups (GPU count, then model size) until
// they hold kExtrapolationShare of the runs, fit on the rest, predict them.
constexpr double kExtrapolationShare = 0.2;

absl::Status CheckExtrapolation(const SystemProfile& at, const std::vector<CalibrationParam>& params,
                                const std::vector<CalibrationSample>& usable, const std::vector<Scale>& scale,
                                const Interrupt& stop, FitReport* r) {
  std::map<std::string, std::pair<int64_t, double>> group_scale;  // group -> (GPUs, size)
  for (size_t i = 0; i < usable.size(); ++i) {
    auto& g = group_scale[ConfigGroup(usable[i])];
    g = std::max(g, std::make_pair(scale[i].gpus, scale[i].parameters));
  }
  std::vector<std::pair<std::pair<int64_t, double>, std::string>> order;
  for (const auto& [group, k] : group_scale) order.push_back({k, group});
  std::sort(order.rbegin(), order.rend());
  std::set<std::string> held;
  size_t held_runs = 0;
  std::map<std::string, int> runs;
  for (const CalibrationSample& s : usable) ++runs[ConfigGroup(s)];
  for (const auto& [k, group] : order) {
    if (held_runs >= kExtrapolationShare * usable.size()) break;
    held.insert(group);
    held_runs += runs[group];
  }
  std::vector<int> train, test;
  for (size_t i = 0; i < usable.size(); ++i) {
    (held.count(ConfigGroup(usable[i])) ? test : train).push_back(static_cast<int>(i));
  }
  std::vector<CalibrationSample> rest;
  for (int i : train) rest.push_back(usable[i]);
  if (static_cast<int>(rest.size()) < kMinCalibrationMeasurements || CountGroups(rest) < kMinCalibrationGroups ||
      test.empty()) {
    r->extrapolation_method = "not enough smaller runs to hold the largest out";
    return absl::OkStatus();
  }
  absl::StatusOr<ScopedFit> fit = FitSubset(at, params, usable, scale, train, stop);
  if (!fit.ok()) return fit.status();
  double after = 0, before = 0;
  int64_t max_gpus = 0;
  for (int i : test) {
    after += Ape(usable[i], fit->profile) / test.size();
    before += scale[i].base_ape / test.size();
    max_gpus = std::max(max_gpus, scale[i].gpus);
  }
  r->extrapolation_valid = true;
  r->cv_extrapolation_mape_ratio = after;
  r->extrapolation_base_mape_ratio = before;
  r->extrapolation_method = absl::StrCat("the ", held.size(), " largest configuration groups (", test.size(),
                                         " runs, up to ", max_gpus, " GPUs) held out, fitted on the other ",
                                         train.size());
  return absl::OkStatus();
}

// Every regime the measurements cover gets an entry with what was measured there and
// the cross-validated error on it (0 when no CV ran); narrowest first.
void DescribeRegimes(const SystemProfile& base, const std::vector<Scale>& scale, const std::vector<double>& cv_ape,
                     std::vector<RegimeCalibration>* regimes) {
  std::map<int, RegimeCalibration> by_level;
  for (const RegimeCalibration& e : *regimes) by_level[RegimeLevelOf(base, e.regime)] = e;
  std::map<int, double> ape_sum;
  for (size_t i = 0; i < scale.size(); ++i) {
    RegimeCalibration& e = by_level[scale[i].level];
    e.regime = RegimeName(base, scale[i].level);
    ++e.num_measurements;
    e.max_gpus = std::max(e.max_gpus, scale[i].gpus);
    e.max_parameters = std::max(e.max_parameters, scale[i].parameters);
    e.measured_features |= scale[i].features;
    ape_sum[scale[i].level] += cv_ape[i];
  }
  regimes->clear();
  for (auto& [level, e] : by_level) {
    const bool cv = !cv_ape.empty() && cv_ape.front() >= 0;
    e.cv_mape_ratio = cv && e.num_measurements > 0 ? ape_sum[level] / e.num_measurements : 0;
    regimes->push_back(e);
  }
}

// The measurements calibration can use — finite positive time, not out of memory, and
// the base profile estimates them — with each one's scale.
struct Usable {
  std::vector<CalibrationSample> samples;
  std::vector<Scale> scale;
};

Usable UsableSamples(const SystemProfile& base, absl::Span<const CalibrationSample> all) {
  Usable u;
  for (const CalibrationSample& s : all) {
    if (s.out_of_memory || !ValidateMeasured(s.measured_iteration_time_s, s.measured_peak_memory_gib).ok()) {
      continue;
    }
    absl::StatusOr<Estimate> e = EstimateIteration(s.workload, s.config, base);
    if (!e.ok() || !(e->iteration_time_s > 0) || !std::isfinite(e->iteration_time_s)) continue;
    u.samples.push_back(s);
    u.scale.push_back({e->num_gpus, e->model_flops_per_token / 6, RegimeLevel(base, e->num_gpus),
                       std::abs(e->iteration_time_s / s.measured_iteration_time_s - 1),
                       FeaturesOf(s.workload, s.config)});
  }
  return u;
}

// Measured peaks against the model's memory before overhead (which no time parameter
// moves), split by allocator: the default one, and torchtitan's expandable segments.
struct Peaks {
  std::vector<PeakPoint> standard, expandable;
};

Peaks PeaksOf(const SystemProfile& at, const std::vector<CalibrationSample>& usable) {
  Peaks p;
  for (int i = 0; i < static_cast<int>(usable.size()); ++i) {
    if (usable[i].measured_peak_memory_gib <= 0) continue;
    absl::StatusOr<Estimate> e = EstimateIteration(usable[i].workload, usable[i].config, at);
    if (!e.ok()) continue;
    (usable[i].config.framework == Framework::kTorchtitan ? p.expandable : p.standard)
        .push_back({i, e->memory.total_bytes - e->memory.overhead_bytes, usable[i].measured_peak_memory_gib * kGiB});
  }
  return p;
}

// Grouped cross-validation: each fold repeats subsampling, strata, selection and fit on
// its training groups only; the memory fit is cross-validated on the same folds.
struct CrossValidation {
  std::vector<double> ape;          // per measurement, from the fold that held it out (-1: none)
  std::vector<int> folds_fitted;    // per time parameter
  int memory_folds_fitted = 0;
};

absl::StatusOr<CrossValidation> CrossValidate(const SystemProfile& at, const std::vector<CalibrationParam>& params,
                                              const Usable& u, const std::vector<PeakPoint>& peaks,
                                              const Interrupt& stop, FitReport* r) {
  const int n = static_cast<int>(u.samples.size());
  const Folds folds = GroupedFolds(u.samples, kMaxCalibrationFolds);
  r->cv_folds = folds.num_folds;
  r->cv_method = folds.method;
  CrossValidation cv{std::vector<double>(n, -1), std::vector<int>(params.size(), 0), 0};
  if (folds.num_folds < 2) return cv;
  double memory_sum = 0;
  int memory_tested = 0;
  for (int f = 0; f < folds.num_folds; ++f) {
    if (absl::Status s = stop.Check(kCalibrationWork); !s.ok()) return s;
    std::vector<int> train, test;
    for (int i = 0; i < n; ++i) (folds.fold_of[i] == f ? test : train).push_back(i);
    absl::StatusOr<ScopedFit> fold = FitSubset(at, params, u.samples, u.scale, train, stop);
    if (!fold.ok()) return fold.status();
    for (int i : test) cv.ape[i] = Ape(u.samples[i], fold->profile);
    for (size_t j = 0; j < params.size(); ++j) cv.folds_fitted[j] += fold->fitted[j] ? 1 : 0;

    std::vector<PeakPoint> fold_train;
    for (const PeakPoint& p : peaks) {
      if (folds.fold_of[p.sample] != f) fold_train.push_back(p);
    }
    const MemoryFit fold_memory = FitMemory(fold_train);
    if (!fold_memory.ok) continue;
    ++cv.memory_folds_fitted;
    for (const PeakPoint& p : peaks) {
      if (folds.fold_of[p.sample] != f) continue;
      memory_sum += std::abs(fold_memory.Predict(p.used_bytes) / p.peak_bytes - 1);
      ++memory_tested;
    }
  }
  r->cv_valid = true;
  double sum = 0;
  for (double a : cv.ape) sum += a;
  r->cv_mape_ratio = sum / n;
  r->memory_cv_valid = memory_tested > 0;
  r->memory_cv_mape_ratio = memory_tested > 0 ? memory_sum / memory_tested : 0;
  return cv;
}

// Promote only when the cross-validated error beats the current one by the margin and
// the largest runs held out do not get worse; say why in words.
void DecidePromotion(FitReport* r) {
  r->current_mape_ratio = r->mape_before_ratio;
  const double needed = r->current_mape_ratio * (1 - kPromotionMargin);
  const bool extrapolates =
      !r->extrapolation_valid || r->cv_extrapolation_mape_ratio <= r->extrapolation_base_mape_ratio;
  r->promote = r->cv_valid && r->cv_mape_ratio < needed && extrapolates;
  const std::string extrapolation =
      r->extrapolation_valid ? absl::StrCat("; largest runs held out ", Percent(r->cv_extrapolation_mape_ratio),
                                            " vs current ", Percent(r->extrapolation_base_mape_ratio))
                             : "";
  const std::string versus =
      absl::StrCat("cross-validated ", Percent(r->cv_mape_ratio), " vs current ", Percent(r->current_mape_ratio));
  if (!r->cv_valid) {
    r->promotion_reason = "not promoted: the cross-validated error could not be computed";
  } else if (r->promote) {
    r->promotion_reason = absl::StrCat("promoted: ", versus, extrapolation);
  } else if (r->cv_mape_ratio < needed) {
    r->promotion_reason =
        absl::StrCat("not promoted: ", versus, ", but the largest runs held out get worse", extrapolation);
  } else {
    r->promotion_reason = absl::StrCat("not promoted: ", versus, " (needs below ", Percent(needed), ")");
  }
}

}  // namespace

absl::StatusOr<CalibrationResult> CalibrateProfile(const SystemProfile& base,
                                                   absl::Span<const CalibrationSample> all, const Interrupt& stop) {
  if (absl::Status s = ValidateProfile(base); !s.ok()) return s;
  const Usable u = UsableSamples(base, CanonicalOrder(all));
  const std::vector<CalibrationSample>& usable = u.samples;
  const int n = static_cast<int>(usable.size());
  const int groups = CountGroups(usable);
  if (n < kMinCalibrationMeasurements || groups < kMinCalibrationGroups) {
    return absl::FailedPreconditionError(absl::StrCat(
        "calibrating profile \"", base.name, "\" needs at least ", kMinCalibrationMeasurements,
        " measurements from ", kMinCalibrationGroups, " distinct configurations (model x TP x PP); have ", n,
        n == 1 ? " usable measurement" : " usable measurements", " from ", groups,
        groups == 1 ? " configuration" : " configurations"));
  }

  // Fitted values are written explicitly; the rest keep the base's own (0 = default). The
  // base's regimes are refitted from the measurements, not carried over.
  SystemProfile at = IndexedCalibration(base);
  at.calibration.regimes.clear();
  const std::vector<CalibrationParam> params = CalibrationParams(base);

  CalibrationResult result;
  FitReport& r = result.report;
  const Subsample sub = StratifiedSubsample(usable, kSampleBudget);
  if (absl::Status s = stop.Check(kCalibrationWork); !s.ok()) return s;
  absl::StatusOr<ScopedFit> fitted = FitByRegime(at, params, usable, StrataOf(usable, u.scale), kSampleBudget, stop);
  if (!fitted.ok()) return fitted.status();
  const ScopedFit& scoped = *fitted;
  result.profile = scoped.profile;
  r.scope = scoped.scope;
  r.disagreements = scoped.disagreements;
  const std::string fitted_on = sub.indices.size() == usable.size()
                                    ? absl::StrCat(n, " measurements")
                                    : absl::StrCat(sub.indices.size(), " of ", n, " measurements");
  std::vector<ParameterChange> changes;
  // The values as they apply to the widest runs measured.
  int64_t widest_gpus = 0;
  for (const Scale& k : u.scale) widest_gpus = std::max(widest_gpus, k.gpus);
  const Calibration after = ResolvedCalibration(result.profile, widest_gpus);
  for (size_t j = 0; j < params.size(); ++j)
    changes.push_back(TimeChange(params[j], scoped, j, fitted_on, after));

  const Peaks peaks = PeaksOf(at, usable);
  const MemoryFit memory = FitMemory(peaks.standard);
  if (memory.ok) {
    result.profile.calibration.memory_overhead_fraction = memory.fraction;
    result.profile.calibration.memory_overhead_gib = memory.fixed_gib;
  }
  const MemoryFit expandable = FitMemory(peaks.expandable);
  if (expandable.ok) result.profile.calibration.expandable_segments_overhead_fraction = expandable.fraction;
  AddMemoryChanges(memory, peaks.standard.size(), expandable, peaks.expandable.size(), ResolvedCalibration(base),
                   &changes);

  r.num_measurements = n;
  r.num_available = n;
  r.num_used = static_cast<int>(sub.indices.size());
  r.sampling_note = sub.note;
  r.num_groups = groups;
  r.num_peak_measurements = static_cast<int>(peaks.standard.size() + peaks.expandable.size());
  for (const Scale& k : u.scale) r.mape_before_ratio += k.base_ape / n;
  r.mape_after_ratio = Mape(usable, result.profile);
  r.model_gap = ModelGap(usable, result.profile, r.mape_before_ratio, r.mape_after_ratio);

  absl::StatusOr<CrossValidation> cv = CrossValidate(at, params, u, peaks.standard, stop, &r);
  if (!cv.ok()) return cv.status();
  if (absl::Status s = stop.Check(kCalibrationWork); !s.ok()) return s;
  if (absl::Status s = CheckExtrapolation(at, params, usable, u.scale, stop, &r); !s.ok()) return s;
  DescribeRegimes(base, u.scale, cv->ape, &result.profile.calibration.regimes);
  // `changes`: the time parameters in order, then the memory parameters (the default
  // allocator's two cross-validated on the folds; the expandable share on no fold).
  for (size_t j = 0; j < params.size(); ++j) changes[j].cv_folds_fitted = cv->folds_fitted[j];
  for (size_t j = params.size(); j < changes.size(); ++j) {
    changes[j].cv_folds_fitted = changes[j].name == "expandable_segments_overhead_fraction" ? 0 : cv->memory_folds_fitted;
  }
  DecidePromotion(&r);
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
