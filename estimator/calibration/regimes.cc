#include "estimator/calibration/regimes.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/match.h"
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
              absl::Span<const CalibrationSample> samples, const std::vector<int>& members, int budget,
              bool all_free = false) {
  std::vector<CalibrationSample> picked;
  for (int i : members) picked.push_back(samples[i]);
  const Subsample sub = StratifiedSubsample(picked, budget);
  std::vector<const CalibrationSample*> ptrs;
  for (int i : sub.indices) ptrs.push_back(&picked[i]);
  return FitTimes(at, params, ptrs, all_free);
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

// Grouped cross-validated error on `members` of a fit from `at` over `params` (refitted
// on the other folds for each fold); nullopt with fewer than two folds.
absl::StatusOr<std::optional<double>> CrossValidated(const SystemProfile& at, const std::vector<CalibrationParam>& params,
                                                     absl::Span<const CalibrationSample> samples,
                                                     const std::vector<int>& members, int budget,
                                                     const Interrupt& stop, bool all_free = false) {
  std::vector<CalibrationSample> picked;
  for (int i : members) picked.push_back(samples[i]);
  const Folds folds = GroupedFolds(picked, kMaxCalibrationFolds);
  if (folds.num_folds < 2) return std::optional<double>();
  double sum = 0;
  for (int f = 0; f < folds.num_folds; ++f) {
    if (absl::Status s = stop.Check(kRegimeWork); !s.ok()) return s;
    std::vector<int> train, test;
    for (size_t i = 0; i < picked.size(); ++i) (folds.fold_of[i] == f ? test : train).push_back(static_cast<int>(i));
    const TimeFit fit = FitOn(at, params, picked, train, budget, all_free);
    sum += MapeOf(picked, test, fit.profile) * test.size();
  }
  return std::optional<double>(sum / picked.size());
}

// The network level a parameter belongs to (`network.<level>.<field>`), -1 for the others.
int NetworkLevelOf(const SystemProfile& at, const CalibrationParam& q) {
  for (size_t i = 0; i < at.network_levels.size(); ++i) {
    if (absl::StartsWith(q.name, absl::StrCat("network.", at.network_levels[i].name, "."))) return static_cast<int>(i);
  }
  return -1;
}

// The network levels only a stratum's runs cross, fitted on them on top of `from` (every
// one of those parameters free: the prior holds one the runs barely move, and one still
// below kMinSensitivity at the fitted point is put back), and the grouped
// cross-validated error of doing so.
struct NetworkOnTop {
  TimeFit fit;
  std::optional<double> cv;
};
absl::StatusOr<NetworkOnTop> FitNetworkOnTop(const SystemProfile& from, const std::vector<CalibrationParam>& network,
                                             absl::Span<const CalibrationSample> samples,
                                             const std::vector<int>& members, int budget, const Interrupt& stop) {
  NetworkOnTop out;
  absl::StatusOr<std::optional<double>> cv = CrossValidated(from, network, samples, members, budget, stop, true);
  if (!cv.ok()) return cv.status();
  out.cv = *cv;
  out.fit = FitOn(from, network, samples, members, budget, true);
  // What the runs barely move at the fitted point goes back to its start, unreported.
  bool reset = false;
  for (size_t j = 0; j < network.size(); ++j) {
    if (out.fit.selection.sensitivity[j] >= kMinSensitivity) continue;
    out.fit.selection.free[j] = false;
    out.fit.u[j] = out.fit.stddev_u[j] = 0;
    reset = true;
  }
  if (reset) out.fit.profile = WithParams(from, network, out.fit.u, out.fit.selection.free);
  return out;
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
  const std::vector<int>& wide_runs = members.back();
  const int narrow_level = strata.levels[strata.levels.size() - 2];
  std::vector<int> wide_only;  // indexes into params: the network levels only the widest stratum crosses
  std::vector<CalibrationParam> network_params;
  for (size_t j = 0; j < params.size(); ++j) {
    if (NetworkLevelOf(at, params[j]) > narrow_level) {
      wide_only.push_back(static_cast<int>(j));
      network_params.push_back(params[j]);
    }
  }
  // One fit per stratum, narrowest first, and the candidates for the widest stratum's
  // runs, each scored by its error on them (out of sample but for the pooled fit, of
  // which they are a minority):
  //   - pooled: one set of values everywhere, where it predicts the wide runs no worse
  //     than the base profile (the narrow runs, usually the many, must not pull the wide
  //     ones); with the network only the wide runs cross refitted on them where that
  //     predicts them better (the pooled fit weighs them by their share of all runs);
  //   - nested: the next narrower stratum's values (the GPU, its kernels and the inner
  //     levels, measured on the many small runs) with only the network levels the wide
  //     runs alone cross fitted on them (a cluster with half the NICs of its template);
  //   - own: every parameter fitted on the wide runs alone.
  // In that order of preference, a later one taken where it beats the one before by
  // kPromotionMargin; none beating the base profile leaves its values. Narrower strata
  // keep their own values unless the pooled fit is taken.
  std::vector<TimeFit> fits;
  for (const std::vector<int>& m : members) {
    if (absl::Status s = stop.Check(kRegimeWork); !s.ok()) return s;
    fits.push_back(FitOn(at, params, samples, m, budget));
  }
  const TimeFit& narrow = fits[fits.size() - 2];
  const TimeFit& wide = fits.back();
  absl::StatusOr<std::optional<double>> cv_own = CrossValidated(at, params, samples, wide_runs, budget, stop);
  if (!cv_own.ok()) return cv_own.status();
  absl::StatusOr<NetworkOnTop> nested = FitNetworkOnTop(narrow.profile, network_params, samples, wide_runs, budget, stop);
  if (!nested.ok()) return nested.status();
  absl::StatusOr<NetworkOnTop> refined =
      FitNetworkOnTop(out.pooled.profile, network_params, samples, wide_runs, budget, stop);
  if (!refined.ok()) return refined.status();

  const double wide_base = MapeOf(samples, wide_runs, at);
  const double wide_pooled = MapeOf(samples, wide_runs, out.pooled.profile);
  const bool refine = refined->cv.has_value() && *refined->cv < wide_pooled * (1 - kPromotionMargin);
  enum class Wide { kBase, kPooled, kNested, kOwn } choice = Wide::kBase;
  double score = wide_base;
  auto consider = [&](Wide c, const std::optional<double>& error) {
    if (error.has_value() && *error < score * (1 - kPromotionMargin)) choice = c, score = *error;
  };
  if (wide_pooled <= wide_base) choice = Wide::kPooled, score = refine ? *refined->cv : wide_pooled;
  consider(Wide::kNested, nested->cv);
  consider(Wide::kOwn, *cv_own);

  auto cv_text = [](const std::optional<double>& cv) { return cv.has_value() ? Percent(*cv) : std::string("n/a"); };
  // The network fitted on top of another fit, in words, and marked fitted.
  auto network_words = [&](const NetworkOnTop& n) {
    std::vector<std::string> values;
    for (size_t m = 0; m < wide_only.size(); ++m) {
      if (!n.fit.selection.free[m]) continue;
      const CalibrationParam& q = network_params[m];
      const double v = q.Value(n.fit.u[m]);
      values.push_back(absl::StrFormat("%s %.4g +- %.2g, base %.4g", q.name, v,
                                       (q.additive ? q.step : v) * n.fit.stddev_u[m], q.before));
    }
    return absl::StrJoin(values, "; ");
  };
  auto mark_network = [&](const NetworkOnTop& n) {
    for (size_t m = 0; m < wide_only.size(); ++m) {
      if (n.fit.selection.free[m]) out.fitted[wide_only[m]] = true;
    }
  };
  const std::string measured = absl::StrCat("runs ", DescribeRegime(at, widest), " ", Percent(wide_pooled),
                                            " with the pooled fit vs ", Percent(wide_base), " before");
  if (choice == Wide::kPooled) {
    out.profile = refine ? refined->fit.profile : out.pooled.profile;
    if (refine) mark_network(*refined);
    out.scope = absl::StrCat("profile-wide: the ", strata.levels.size(), " regimes measured agree (", measured, ")",
                             refine ? absl::StrCat("; the network only those runs cross refitted on them (",
                                                   network_words(*refined), "; cross-validated ",
                                                   Percent(*refined->cv), ")")
                                    : "");
    return out;
  }

  out.fitted.assign(params.size(), false);
  // Per parameter: the coordinate the wide runs get and its standard deviation (0 and 0
  // at the base value), against which the narrower strata's values are compared.
  std::vector<double> wide_u(params.size(), 0.0), wide_sd(params.size(), 0.0);
  std::string wide_words;
  if (choice == Wide::kOwn) {
    out.profile = wide.profile;
    out.fitted = wide.selection.free;
    for (size_t j = 0; j < params.size(); ++j) {
      if (wide.selection.free[j]) wide_u[j] = wide.u[j], wide_sd[j] = wide.stddev_u[j];
    }
    wide_words = absl::StrCat("their own fit (profile-wide; cross-validated ", cv_text(*cv_own),
                              "; the narrower values with the network fitted on them ", cv_text(nested->cv), ")");
  } else if (choice == Wide::kNested) {
    out.profile = nested->fit.profile;
    mark_network(*nested);
    for (size_t j = 0; j < params.size(); ++j) {
      if (narrow.selection.free[j]) wide_u[j] = narrow.u[j], wide_sd[j] = narrow.stddev_u[j];
    }
    wide_words = absl::StrCat("the values of the runs ", DescribeRegime(at, narrow_level),
                              ", with the network only they cross fitted on them (", network_words(*nested),
                              "; profile-wide; cross-validated ", cv_text(nested->cv), ", their own fit ",
                              cv_text(*cv_own), ")");
  } else {
    out.profile = at;
    wide_words = absl::StrCat("the base values (neither their own fit, cross-validated ", cv_text(*cv_own),
                              ", nor the narrower values with the network fitted on them, ", cv_text(nested->cv),
                              ", beats them out of sample)");
  }
  std::vector<std::string> names;
  for (size_t k = 0; k + 1 < fits.size(); ++k) {
    const std::string name = RegimeName(at, strata.levels[k]);
    out.profile.calibration.regimes.push_back({name, FittedValues(params, fits[k])});
    names.push_back(DescribeRegime(at, strata.levels[k]));
    for (size_t j = 0; j < params.size(); ++j) {
      if (!fits[k].selection.free[j]) continue;
      out.fitted[j] = true;
      const CalibrationParam& q = params[j];
      const double du = std::abs(fits[k].u[j] - wide_u[j]);
      const double threshold = q.additive ? 10 * kDisagreementRatio : std::log1p(kDisagreementRatio);
      const double noise = 2 * std::hypot(fits[k].stddev_u[j], wide_sd[j]);
      if (du <= std::max(threshold, noise)) continue;
      StratumDisagreement d;
      d.parameter = q.name;
      d.narrow_regime = name;
      d.narrow_value = q.Value(fits[k].u[j]);
      d.narrow_stddev = (q.additive ? q.step : d.narrow_value) * fits[k].stddev_u[j];
      d.wide_regime = wide_name;
      d.wide_value = q.Value(wide_u[j]);
      d.wide_stddev = (q.additive ? q.step : d.wide_value) * wide_sd[j];
      out.disagreements.push_back(d);
    }
  }
  out.scope = absl::StrCat("by regime (", measured, "): they keep ", wide_words, "; ",
                           absl::StrJoin(names, ", "), " keep their own");
  return out;
}

}  // namespace paraplan
