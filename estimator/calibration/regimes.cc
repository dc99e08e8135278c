#include "estimator/calibration/regimes.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "estimator/calibration/samples.h"
#include "estimator/calibration/select.h"
#include "estimator/inputs/calibration_regime.h"

namespace paraplan {

namespace {

bool Enough(absl::Span<const CalibrationSample> samples, const std::vector<int>& members) {
  std::vector<CalibrationSample> picked;
  for (int i : members) picked.push_back(samples[i]);
  return static_cast<int>(picked.size()) >= kMinCalibrationMeasurements &&
         CountGroups(picked) >= kMinCalibrationGroups;
}

TimeFit FitOn(const SystemProfile& at, const std::vector<CalibrationParam>& params,
              absl::Span<const CalibrationSample> samples, const std::vector<int>& members, int budget) {
  std::vector<CalibrationSample> picked;
  for (int i : members) picked.push_back(samples[i]);
  const Subsample sub = StratifiedSubsample(picked, budget);
  std::vector<const CalibrationSample*> ptrs;
  for (int i : sub.indices) ptrs.push_back(&picked[i]);
  return FitTimes(at, params, ptrs);
}

// Regime values: every parameter the fit chose, at its fitted value.
std::vector<RegimeValue> FittedValues(const std::vector<CalibrationParam>& params, const TimeFit& fit) {
  std::vector<RegimeValue> out;
  for (size_t j = 0; j < params.size(); ++j) {
    if (fit.selection.free[j]) out.push_back({params[j].name, params[j].Value(fit.u[j])});
  }
  return out;
}

constexpr char kRegimeWork[] = "calibration";

std::string Percent(double ratio) { return absl::StrFormat("%.2f %%", 100 * ratio); }

double MapeOf(absl::Span<const CalibrationSample> samples, const std::vector<int>& members,
              const SystemProfile& profile) {
  double sum = 0;
  for (int i : members) {
    const CalibrationSample& s = samples[i];
    const double p = std::exp(LogPredictedTime(s, profile));
    sum += std::isfinite(p) ? std::abs(p / s.measured_iteration_time_s - 1) : 1.0;
  }
  return members.empty() ? 0 : sum / members.size();
}

// Whether a fit on `members` alone beats `base_mape` (the base profile's error on them)
// by kPromotionMargin in grouped cross-validation among them.
absl::StatusOr<bool> OwnFitGeneralises(const SystemProfile& at, const std::vector<CalibrationParam>& params,
                                       absl::Span<const CalibrationSample> samples, const std::vector<int>& members,
                                       int budget, double base_mape, const Interrupt& stop) {
  std::vector<CalibrationSample> picked;
  for (int i : members) picked.push_back(samples[i]);
  const Folds folds = GroupedFolds(picked, kMaxCalibrationFolds);
  if (folds.num_folds < 2) return false;
  double sum = 0;
  for (int f = 0; f < folds.num_folds; ++f) {
    if (absl::Status s = stop.Check(kRegimeWork); !s.ok()) return s;
    std::vector<int> train, test;
    for (size_t i = 0; i < picked.size(); ++i) (folds.fold_of[i] == f ? test : train).push_back(static_cast<int>(i));
    const TimeFit fit = FitOn(at, params, picked, train, budget);
    sum += MapeOf(picked, test, fit.profile) * test.size();
  }
  return sum / picked.size() < base_mape * (1 - kPromotionMargin);
}

}  // namespace

Strata MakeStrata(absl::Span<const CalibrationSample> samples, const std::vector<int>& level) {
  std::map<int, std::vector<int>> by_level;
  for (size_t i = 0; i < samples.size(); ++i) by_level[level[i]].push_back(static_cast<int>(i));
  // Narrowest first: a regime without enough of its own joins the next wider one.
  std::vector<std::pair<int, std::vector<int>>> strata;
  std::vector<int> carry;
  for (auto& [l, members] : by_level) {
    members.insert(members.end(), carry.begin(), carry.end());
    carry.clear();
    if (Enough(samples, members)) {
      strata.emplace_back(l, std::move(members));
    } else {
      carry = std::move(members);
    }
  }
  if (!carry.empty()) {
    if (strata.empty()) {
      strata.emplace_back(by_level.rbegin()->first, std::move(carry));
    } else {  // the widest lacked runs: it joins the one below, which now reaches it
      strata.back().first = by_level.rbegin()->first;
      strata.back().second.insert(strata.back().second.end(), carry.begin(), carry.end());
    }
  }
  Strata out;
  out.level_of.assign(samples.size(), 0);
  for (const auto& [l, members] : strata) {
    out.levels.push_back(l);
    for (int i : members) out.level_of[i] = l;
  }
  return out;
}

absl::StatusOr<ScopedFit> FitByRegime(const SystemProfile& at, const std::vector<CalibrationParam>& params,
                                      absl::Span<const CalibrationSample> samples, const Strata& strata, int budget,
                                      const Interrupt& stop) {
  ScopedFit out;
  std::vector<int> all(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) all[i] = static_cast<int>(i);
  out.pooled = FitOn(at, params, samples, all, budget);
  out.fitted = out.pooled.selection.free;
  const int widest_level = static_cast<int>(at.network_levels.size()) - 1;
  const int widest = strata.levels.empty() ? widest_level : strata.levels.back();
  const std::string wide_name = RegimeName(at, widest);

  if (strata.levels.size() <= 1) {
    if (widest >= widest_level) {
      out.profile = out.pooled.profile;
      out.scope = "profile-wide: the measurements reach its widest regime";
    } else {
      out.profile = at;
      out.profile.calibration.regimes.push_back({wide_name, FittedValues(params, out.pooled)});
      out.scope = absl::StrCat("runs ", DescribeRegime(at, widest), " and narrower: no measurement spans ",
                               RegimeName(at, widest + 1), ", so wider runs keep the base values");
    }
    return out;
  }

  std::vector<std::vector<int>> members(strata.levels.size());
  for (size_t k = 0; k < strata.levels.size(); ++k) {
    for (size_t i = 0; i < samples.size(); ++i) {
      if (strata.level_of[i] == strata.levels[k]) members[k].push_back(static_cast<int>(i));
    }
  }
  // Agreement: the pooled values predict the widest stratum's runs no worse than the
  // base profile does (the narrow runs, usually the many, must not pull the wide ones).
  const double wide_base = MapeOf(samples, members.back(), at);
  const double wide_pooled = MapeOf(samples, members.back(), out.pooled.profile);
  if (wide_pooled <= wide_base) {
    out.profile = out.pooled.profile;
    out.scope = absl::StrCat("profile-wide: the ", strata.levels.size(), " regimes measured agree (runs ",
                             DescribeRegime(at, widest), " ", Percent(wide_pooled), " with the pooled fit vs ",
                             Percent(wide_base), " before)");
    return out;
  }
  // They disagree: one fit per stratum, narrowest first. The widest stratum keeps its own
  // fit where that beats the base profile out of sample on its runs, else the base
  // values; narrower ones keep theirs.
  std::vector<TimeFit> fits;
  for (const std::vector<int>& m : members) {
    if (absl::Status s = stop.Check(kRegimeWork); !s.ok()) return s;
    fits.push_back(FitOn(at, params, samples, m, budget));
  }
  absl::StatusOr<bool> own = OwnFitGeneralises(at, params, samples, members.back(), budget, wide_base, stop);
  if (!own.ok()) return own.status();
  const TimeFit& wide = fits.back();
  out.profile = *own ? wide.profile : at;
  out.fitted.assign(params.size(), false);
  if (*own) out.fitted = wide.selection.free;
  std::vector<std::string> names;
  for (size_t k = 0; k + 1 < fits.size(); ++k) {
    const std::string name = RegimeName(at, strata.levels[k]);
    out.profile.calibration.regimes.push_back({name, FittedValues(params, fits[k])});
    names.push_back(DescribeRegime(at, strata.levels[k]));
    for (size_t j = 0; j < params.size(); ++j) {
      if (!fits[k].selection.free[j]) continue;
      out.fitted[j] = true;
      const CalibrationParam& q = params[j];
      const bool wide_free = *own && wide.selection.free[j];
      const double wide_u = wide_free ? wide.u[j] : 0.0;
      const double du = std::abs(fits[k].u[j] - wide_u);
      const double threshold = q.additive ? 10 * kDisagreementRatio : std::log1p(kDisagreementRatio);
      const double noise = 2 * std::hypot(fits[k].stddev_u[j], wide_free ? wide.stddev_u[j] : 0.0);
      if (du <= std::max(threshold, noise)) continue;
      StratumDisagreement d;
      d.parameter = q.name;
      d.narrow_regime = name;
      d.narrow_value = q.Value(fits[k].u[j]);
      d.narrow_stddev = (q.additive ? q.step : d.narrow_value) * fits[k].stddev_u[j];
      d.wide_regime = wide_name;
      d.wide_value = q.Value(wide_u);
      d.wide_stddev = wide_free ? (q.additive ? q.step : d.wide_value) * wide.stddev_u[j] : 0.0;
      out.disagreements.push_back(d);
    }
  }
  out.scope = absl::StrCat("by regime, as the regimes disagree (runs ", DescribeRegime(at, widest), " ",
                           Percent(wide_pooled), " with the pooled fit vs ", Percent(wide_base),
                           " before): they keep ",
                           *own ? "their own fit (profile-wide)" : "the base values (their own fit does not beat them "
                                                                  "out of sample)",
                           "; ", absl::StrJoin(names, ", "), " keep their own");
  return out;
}

}  // namespace paraplan
