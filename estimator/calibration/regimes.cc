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
  return static_cast<int>(picked.size()) >= kMinCalibrationMeasurements && CountGroups(picked) >= kMinCalibrationGroups;
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
absl::StatusOr<std::optional<double>> CrossValidated(const SystemProfile& at,
                                                     const std::vector<CalibrationParam>& params,
                                                     absl::Span<const CalibrationSample> samples,
                                                     const std::vector<int>& members, int budget, const Interrupt& stop,
                                                     bool all_free = false) {
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

namespace {

// What the widest stratum's runs may take (see regimes.h), with what choosing needs.
struct WideCandidates {
  std::vector<std::vector<int>> members;  // per stratum, narrowest first: indexes into samples
  std::vector<TimeFit> fits;              // per stratum, on its own runs
  std::vector<int> network;               // indexes into params: the levels only the widest stratum crosses
  std::vector<CalibrationParam> network_params;
  std::optional<double> cv_own;  // the widest stratum's own fit, cross-validated on its runs
  NetworkOnTop on_base;          // the network on the base values
  NetworkOnTop nested;           // the network on the next narrower stratum's fit
  NetworkOnTop refined;          // the network on the pooled fit (fitted only where that fit qualifies)
  double base = 0, pooled = 0;   // the base profile's and the pooled fit's error on the wide runs
};

absl::StatusOr<WideCandidates> FitWideCandidates(const SystemProfile& at, const std::vector<CalibrationParam>& params,
                                                 absl::Span<const CalibrationSample> samples, const Strata& strata,
                                                 const TimeFit& pooled, int budget, const Interrupt& stop) {
  WideCandidates w;
  w.members.resize(strata.levels.size());
  for (size_t k = 0; k < strata.levels.size(); ++k) {
    for (size_t i = 0; i < samples.size(); ++i) {
      if (strata.level_of[i] == strata.levels[k]) w.members[k].push_back(static_cast<int>(i));
    }
  }
  const int narrow_level = strata.levels[strata.levels.size() - 2];
  for (size_t j = 0; j < params.size(); ++j) {
    if (NetworkLevelOf(at, params[j]) <= narrow_level) continue;
    w.network.push_back(static_cast<int>(j));
    w.network_params.push_back(params[j]);
  }
  for (const std::vector<int>& m : w.members) {
    if (absl::Status s = stop.Check(kRegimeWork); !s.ok()) return s;
    w.fits.push_back(FitOn(at, params, samples, m, budget));
  }
  const std::vector<int>& wide = w.members.back();
  absl::StatusOr<std::optional<double>> own = CrossValidated(at, params, samples, wide, budget, stop);
  if (!own.ok()) return own.status();
  w.cv_own = *own;
  absl::StatusOr<NetworkOnTop> on_base = FitNetworkOnTop(at, w.network_params, samples, wide, budget, stop);
  if (!on_base.ok()) return on_base.status();
  w.on_base = *std::move(on_base);
  absl::StatusOr<NetworkOnTop> nested =
      FitNetworkOnTop(w.fits[w.fits.size() - 2].profile, w.network_params, samples, wide, budget, stop);
  if (!nested.ok()) return nested.status();
  w.nested = *std::move(nested);
  w.base = MapeOf(samples, wide, at);
  w.pooled = MapeOf(samples, wide, pooled.profile);
  // The network refitted on the pooled fit matters only where the pooled fit qualifies.
  if (w.pooled <= w.base) {
    absl::StatusOr<NetworkOnTop> refined =
        FitNetworkOnTop(pooled.profile, w.network_params, samples, wide, budget, stop);
    if (!refined.ok()) return refined.status();
    w.refined = *std::move(refined);
  }
  return w;
}

enum class Wide { kBase, kPooled, kBaseNetwork, kNested, kOwn };

// Whether refitting the network on the pooled fit predicts the wide runs better.
bool Refines(const WideCandidates& w) {
  return w.refined.cv.has_value() && *w.refined.cv < w.pooled * (1 - kPromotionMargin);
}

// Whether the wide runs corroborate every value the next narrower stratum fitted: their
// own fit's estimate of it within kDisagreementRatio, or two of the narrow fit's standard
// deviations, of it. A value fitted only on small runs reaches the large ones only where
// the large runs agree; their not telling it apart (a wide deviation of their own) is not
// agreement.
bool WideRunsAgree(const std::vector<CalibrationParam>& params, const WideCandidates& w) {
  const TimeFit& narrow = w.fits[w.fits.size() - 2];
  const TimeFit& wide = w.fits.back();
  for (size_t j = 0; j < params.size(); ++j) {
    if (!narrow.selection.free[j]) continue;
    const double threshold = params[j].additive ? 10 * kDisagreementRatio : std::log1p(kDisagreementRatio);
    if (std::abs(narrow.u[j] - wide.u[j]) > std::max(threshold, 2 * narrow.stddev_u[j])) return false;
  }
  return true;
}

// In order of preference, a later candidate where it beats the one before by
// kPromotionMargin; the base values where none beats them. The narrower stratum's values
// are a candidate only where the wide runs agree with them.
Wide Choose(const std::vector<CalibrationParam>& params, const WideCandidates& w) {
  Wide choice = Wide::kBase;
  double score = w.base;
  auto consider = [&](Wide c, const std::optional<double>& error) {
    if (error.has_value() && *error < score * (1 - kPromotionMargin)) choice = c, score = *error;
  };
  if (w.pooled <= w.base) choice = Wide::kPooled, score = Refines(w) ? *w.refined.cv : w.pooled;
  consider(Wide::kBaseNetwork, w.on_base.cv);
  if (WideRunsAgree(params, w)) consider(Wide::kNested, w.nested.cv);
  consider(Wide::kOwn, w.cv_own);
  return choice;
}

std::string CvText(const std::optional<double>& cv) { return cv.has_value() ? Percent(*cv) : std::string("n/a"); }

// The network fitted on top of another fit, in words.
std::string NetworkWords(const WideCandidates& w, const NetworkOnTop& n) {
  std::vector<std::string> values;
  for (size_t m = 0; m < w.network.size(); ++m) {
    if (!n.fit.selection.free[m]) continue;
    const CalibrationParam& q = w.network_params[m];
    const double v = q.Value(n.fit.u[m]);
    values.push_back(absl::StrFormat("%s %.4g +- %.2g, base %.4g", q.name, v,
                                     (q.additive ? q.step : v) * n.fit.stddev_u[m], q.before));
  }
  return absl::StrJoin(values, "; ");
}

// "N measurements", or "B of N" when a fit on N runs took a subsample of B.
std::string OnRuns(size_t n, int budget) {
  return budget > 0 && n > static_cast<size_t>(budget) ? absl::StrCat(budget, " of ", n, " measurements")
                                                       : absl::StrCat(n, " measurements");
}

// Marks the network parameters `n` (fitted on the widest stratum's runs) fitted and
// records where their values came from.
void MarkNetwork(const WideCandidates& w, const NetworkOnTop& n, int budget, ScopedFit* out) {
  const std::string on = absl::StrCat(OnRuns(w.members.back().size(), budget), " of the widest regime");
  for (size_t m = 0; m < w.network.size(); ++m) {
    if (!n.fit.selection.free[m]) continue;
    out->fitted[w.network[m]] = true;
    out->applied[w.network[m]] = {n.fit.stddev_u[m], n.fit.selection.sensitivity[m], on};
  }
}

// Records that every parameter `fit` (on `runs` measurements) chose takes its value.
void TakeStats(const TimeFit& fit, size_t runs, int budget, ScopedFit* out) {
  for (size_t j = 0; j < out->applied.size(); ++j) {
    if (fit.selection.free[j]) out->applied[j] = {fit.stddev_u[j], fit.selection.sensitivity[j], OnRuns(runs, budget)};
  }
}

// Each narrower stratum's values as its regime's, and every parameter on which they and
// the values the wide runs got (coordinates `wide_u`, standard deviations `wide_sd`)
// differ beyond kDisagreementRatio and two standard deviations.
void AddNarrowRegimes(const SystemProfile& at, const std::vector<CalibrationParam>& params, const Strata& strata,
                      const WideCandidates& w, const std::vector<double>& wide_u, const std::vector<double>& wide_sd,
                      ScopedFit* out) {
  const std::string wide_name = RegimeName(at, strata.levels.back());
  for (size_t k = 0; k + 1 < w.fits.size(); ++k) {
    const TimeFit& fit = w.fits[k];
    const std::string name = RegimeName(at, strata.levels[k]);
    out->profile.calibration.regimes.push_back({name, FittedValues(params, fit)});
    for (size_t j = 0; j < params.size(); ++j) {
      if (!fit.selection.free[j]) continue;
      out->fitted[j] = true;
      const CalibrationParam& q = params[j];
      const double du = std::abs(fit.u[j] - wide_u[j]);
      const double threshold = q.additive ? 10 * kDisagreementRatio : std::log1p(kDisagreementRatio);
      const double noise = 2 * std::hypot(fit.stddev_u[j], wide_sd[j]);
      if (du <= std::max(threshold, noise)) continue;
      StratumDisagreement d;
      d.parameter = q.name;
      d.narrow_regime = name;
      d.narrow_value = q.Value(fit.u[j]);
      d.narrow_stddev = (q.additive ? q.step : d.narrow_value) * fit.stddev_u[j];
      d.wide_regime = wide_name;
      d.wide_value = q.Value(wide_u[j]);
      d.wide_stddev = (q.additive ? q.step : d.wide_value) * wide_sd[j];
      out->disagreements.push_back(d);
    }
  }
}

}  // namespace

absl::StatusOr<ScopedFit> FitByRegime(const SystemProfile& at, const std::vector<CalibrationParam>& params,
                                      absl::Span<const CalibrationSample> samples, const Strata& strata, int budget,
                                      const Interrupt& stop) {
  ScopedFit out;
  std::vector<int> all(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) all[i] = static_cast<int>(i);
  out.pooled = FitOn(at, params, samples, all, budget);
  out.fitted = out.pooled.selection.free;
  out.applied.resize(params.size());
  for (size_t j = 0; j < params.size(); ++j) {
    out.applied[j] = {out.pooled.stddev_u[j], out.pooled.selection.sensitivity[j], ""};
  }
  const int widest_level = static_cast<int>(at.network_levels.size()) - 1;
  const int widest = strata.levels.empty() ? widest_level : strata.levels.back();

  if (strata.levels.size() <= 1) {
    if (widest >= widest_level) {
      out.profile = out.pooled.profile;
      out.scope = "profile-wide: the measurements reach its widest regime";
    } else {
      out.profile = at;
      out.profile.calibration.regimes.push_back({RegimeName(at, widest), FittedValues(params, out.pooled)});
      out.scope = absl::StrCat("runs ", DescribeRegime(at, widest), " and narrower: no measurement spans ",
                               RegimeName(at, widest + 1), ", so wider runs keep the base values");
    }
    return out;
  }

  absl::StatusOr<WideCandidates> candidates = FitWideCandidates(at, params, samples, strata, out.pooled, budget, stop);
  if (!candidates.ok()) return candidates.status();
  const WideCandidates& w = *candidates;
  const Wide choice = Choose(params, w);
  const std::string measured = absl::StrCat("runs ", DescribeRegime(at, widest), " ", Percent(w.pooled),
                                            " with the pooled fit vs ", Percent(w.base), " before");
  if (choice == Wide::kPooled) {
    const bool refine = Refines(w);
    out.profile = refine ? w.refined.fit.profile : out.pooled.profile;
    if (refine) MarkNetwork(w, w.refined, budget, &out);
    out.scope = absl::StrCat(
        "profile-wide: the ", strata.levels.size(), " regimes measured agree (", measured, ")",
        refine ? absl::StrCat("; the network only those runs cross refitted on them (", NetworkWords(w, w.refined),
                              "; cross-validated ", Percent(*w.refined.cv), ")")
               : "");
    return out;
  }

  out.fitted.assign(params.size(), false);
  // Per parameter: the coordinate the wide runs get and its standard deviation (0 and 0
  // at the base value), against which the narrower strata's values are compared.
  std::vector<double> wide_u(params.size(), 0.0), wide_sd(params.size(), 0.0);
  auto take = [&](const TimeFit& fit) {
    for (size_t j = 0; j < params.size(); ++j) {
      if (fit.selection.free[j]) wide_u[j] = fit.u[j], wide_sd[j] = fit.stddev_u[j];
    }
  };
  std::string wide_words;
  if (choice == Wide::kOwn) {
    const TimeFit& own = w.fits.back();
    out.profile = own.profile;
    out.fitted = own.selection.free;
    take(own);
    TakeStats(own, w.members.back().size(), budget, &out);
    wide_words = absl::StrCat("their own fit (profile-wide; cross-validated ", CvText(w.cv_own),
                              "; the narrower values with the network fitted on them ", CvText(w.nested.cv), ")");
  } else if (choice == Wide::kBaseNetwork) {
    out.profile = w.on_base.fit.profile;
    MarkNetwork(w, w.on_base, budget, &out);  // levels no narrower stratum fits: nothing to compare
    wide_words = absl::StrCat("the base values with the network only they cross fitted on them (",
                              NetworkWords(w, w.on_base), "; profile-wide; cross-validated ", CvText(w.on_base.cv),
                              ", on the narrower values ", CvText(w.nested.cv), ", their own fit ",
                              CvText(w.cv_own), ")");
  } else if (choice == Wide::kNested) {
    out.profile = w.nested.fit.profile;
    take(w.fits[w.fits.size() - 2]);
    TakeStats(w.fits[w.fits.size() - 2], w.members[w.members.size() - 2].size(), budget, &out);
    MarkNetwork(w, w.nested, budget, &out);
    wide_words = absl::StrCat("the values of the runs ", DescribeRegime(at, strata.levels[strata.levels.size() - 2]),
                              ", with the network only they cross fitted on them (", NetworkWords(w, w.nested),
                              "; profile-wide; cross-validated ", CvText(w.nested.cv), ", their own fit ",
                              CvText(w.cv_own), ")");
  } else {
    out.profile = at;
    wide_words = absl::StrCat("the base values (neither their own fit, cross-validated ", CvText(w.cv_own),
                              ", nor the network fitted on the base values, ", CvText(w.on_base.cv),
                              ", or on the narrower ones, ", CvText(w.nested.cv), ", beats them out of sample)");
  }
  AddNarrowRegimes(at, params, strata, w, wide_u, wide_sd, &out);
  std::vector<std::string> names;
  for (size_t k = 0; k + 1 < strata.levels.size(); ++k) names.push_back(DescribeRegime(at, strata.levels[k]));
  out.scope = absl::StrCat("by regime (", measured, "): they keep ", wide_words, "; ", absl::StrJoin(names, ", "),
                           " keep their own");
  return out;
}

}  // namespace paraplan
