// Calibration by regime: fit each regime's runs (one GPU, one node, across nodes; see
// inputs/calibration_regime.h) and decide how far a fitted value reaches.
//
// Runs are grouped into strata by regime; a regime with too few runs or configurations
// of its own (kMinCalibrationMeasurements / kMinCalibrationGroups) joins the next wider
// one (the widest joins the one below). Then:
//   - one stratum, and it is the profile's widest regime: the fit is profile-wide;
//   - one stratum narrower than that: the fit applies to that regime and narrower ones
//     only; wider configurations keep the base profile's values, since nothing measured
//     says they share them (single-node GEMMs at 0.90 of peak do not make a 512-GPU job
//     run so);
//   - several: the widest stratum's runs get, profile-wide, the candidate that predicts
//     them best (grouped cross-validation among them; the pooled fit in sample), in this
//     order of preference, a later one taken where it beats the one before by
//     kPromotionMargin, the base values where none beats them:
//       1. the pooled fit, where it predicts the widest stratum's runs no worse than the
//          base profile (the narrow runs, usually the many, must not pull the wide
//          ones), with the network levels only they cross refitted on them where that
//          helps;
//       2. the base values with only the network levels the wide runs alone cross
//          fitted on them, every one free (a cluster built like its template but with
//          half its NICs, whose single-node GEMM rate does not carry to many nodes:
//          vTrain's);
//       3. nested: the next narrower stratum's values with only those network levels
//          fitted on them (the same, where the single node's values do carry);
//       4. their own fit of every parameter.
//     Unless the pooled fit is taken, each narrower stratum keeps its own values, and
//     each parameter whose narrow and applied wide values differ by more than
//     kDisagreementRatio and two standard deviations is reported (a missing term or a
//     different machine, which the operator should know about).
// Pure functions; thread-safe.
#ifndef PARAPLAN_ESTIMATOR_CALIBRATION_REGIMES_H_
#define PARAPLAN_ESTIMATOR_CALIBRATION_REGIMES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "estimator/calibration/calibrate.h"
#include "estimator/calibration/fit.h"
#include "estimator/calibration/params.h"
#include "estimator/inputs/interrupt.h"

namespace paraplan {

// Strata disagree on a parameter when their fitted values differ by more than this
// (relative; for iteration_overhead_s, this many of its 10 ms steps x 0.1) and by more
// than two combined standard deviations.
inline constexpr double kDisagreementRatio = 0.05;

struct Strata {
  std::vector<int> level_of;  // per sample: its stratum, by the widest regime level in it
  std::vector<int> levels;    // strata, narrowest first
};
// `level` per sample: RegimeLevel of its configuration.
Strata MakeStrata(absl::Span<const CalibrationSample> samples, const std::vector<int>& level);

// Per parameter, the fit its profile-wide value came from: its standard deviation (in
// the parameter's coordinate), its sensitivity there, and which runs it was fitted on
// ("" = the pooled fit's, as the caller describes them).
struct AppliedParam {
  double stddev_u = 0;
  double sensitivity = 0;
  std::string fitted_on;
};

struct ScopedFit {
  SystemProfile profile;    // profile-wide values and the regimes' overrides (values only)
  TimeFit pooled;           // the fit on every sample
  std::vector<bool> fitted; // per parameter: fitted in some stratum that is applied
  std::vector<AppliedParam> applied;  // per parameter (the report's parameter table)
  std::vector<StratumDisagreement> disagreements;
  std::string scope;        // in words: where the fitted values apply
};

// `at`: the base profile with an indexed calibration and no regimes (IndexedCalibration);
// `samples` with their strata (`strata.level_of` indexes `samples`). `budget`: the most
// measurements one time fit takes (stratified subsample above). The strata are fitted
// on their own only when they disagree. CANCELLED / DEADLINE_EXCEEDED when `stop` asks
// (checked between fits).
absl::StatusOr<ScopedFit> FitByRegime(const SystemProfile& at, const std::vector<CalibrationParam>& params,
                                      absl::Span<const CalibrationSample> samples, const Strata& strata, int budget,
                                      const Interrupt& stop);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_CALIBRATION_REGIMES_H_
