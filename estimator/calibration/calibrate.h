// Calibration: fit a profile's efficiency parameters to measured iteration times.
//
// Robust least squares (Huber loss on log(predicted/measured)) with a weak prior pulling
// each parameter toward its value in the base profile. Every parameter has physical
// bounds, and only parameters the measurements identify are fitted: one must move the
// predictions enough and independently of the parameters already chosen (sensitivity of
// log(predicted) to each parameter, see select.h). Uses every usable
// measurement, subsampled by configuration shape when there are more than the solver
// budget (samples.h). Reports before/after error, a cross-validated error with
// folds grouped by configuration (the selection repeated inside each fold), an
// uncertainty per fitted parameter, and whether the result should replace the base.
// Returns the calibrated profile (same name; the caller assigns the version).
// Thread-safe (pure function of its arguments).
// Built as its own library target, `paraplan_calibrate` (it pulls in Ceres); link that
// target to use it.
#ifndef PARAPLAN_ESTIMATOR_CALIBRATION_CALIBRATE_H_
#define PARAPLAN_ESTIMATOR_CALIBRATION_CALIBRATE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "estimator/inputs/interrupt.h"
#include "estimator/inputs/parallel_config.h"
#include "estimator/inputs/system_profile.h"
#include "estimator/inputs/workload.h"

namespace paraplan {

struct CalibrationSample {
  Workload workload;
  ParallelConfig config;
  double measured_iteration_time_s = 0;
  double measured_peak_memory_gib = 0;  // 0 = unknown
  bool out_of_memory = false;
};

struct ParameterChange {
  std::string name;
  double before = 0;  // resolved value in the base profile
  // Resolved value in the calibrated profile: = before when not fitted, unless its
  // default derives from a fitted parameter (the small-GEMM size, FP8 efficiency).
  double after = 0;
  bool fitted = false;
  // Why it was fitted or kept, in words ("moves predictions by 0.1 % per 10 % change").
  std::string reason;
  // One standard deviation of `after`, 0 when not fitted: Gauss-Newton covariance scaled
  // by the residual variance (ordinary least-squares standard errors for the memory
  // parameters). Treats residuals as independent, so it is optimistic where the model's
  // own error dominates.
  double stddev = 0;
  // The physical range the fit may move it in (for the memory parameters, the range
  // their least-squares fit is clamped to).
  double lower_bound = 0;
  double upper_bound = 0;
  // Fitted and within 1 % of a bound (0.1 ms for iteration_overhead_s; for the memory
  // parameters: clamped): the data push past the physical range, so the parameter is
  // standing in for a cost the model lacks, and its stddev means little.
  bool at_bound = false;
  // RMS over the fitted measurements of the relative change in predicted iteration time
  // for a 10 % change of the parameter (for iteration_overhead_s: a 10 ms change), at
  // the fitted point. 0.012 = 1.2 %. 0 for the memory parameters.
  double sensitivity_ratio = 0;
  // In how many of the report's cv_folds the parameter was selected and fitted on the
  // fold's training data (how stable its identification is).
  int cv_folds_fitted = 0;
};

// Two strata of runs (regimes, see regimes.h) that want different values of one
// parameter: a term the model lacks at one scale, or a different machine.
struct StratumDisagreement {
  std::string parameter;
  std::string narrow_regime;  // "nvlink" (runs within one domain of it), "gpu"
  double narrow_value = 0;
  double narrow_stddev = 0;
  std::string wide_regime;
  double wide_value = 0;
  double wide_stddev = 0;
};

struct FitReport {
  // Usable measurements (timed, not out of memory, estimable with the base profile); the
  // MAPEs below are over all of them.
  int num_measurements = 0;
  double mape_before_ratio = 0;  // base profile, all usable measurements
  double mape_after_ratio = 0;   // calibrated profile, all usable measurements
  // Grouped cross-validation (see cv_method); 0 when !cv_valid.
  double cv_mape_ratio = 0;
  std::vector<ParameterChange> parameters;  // sorted by name

  // Measurements: `num_available` usable, `num_used` of them in the fit (at most the
  // solver budget); `sampling_note` says how they were chosen ("subsampled 400 of 1440,
  // stratified by ...", or "all 15 usable measurements").
  int num_available = 0;
  int num_used = 0;
  std::string sampling_note;
  // Distinct configuration groups (workload x TP x PP): the unit of cross-validation.
  int num_groups = 0;
  // Cross-validation: folds, and in words ("5-fold grouped by workload x TP x PP, 72
  // groups; parameter selection repeated inside each fold").
  bool cv_valid = false;
  int cv_folds = 0;
  std::string cv_method;
  // Memory-overhead fit on measured peaks, cross-validated with the same folds: mean
  // |predicted/measured - 1| of the peak on held-out measurements. Valid only when some
  // fold had held-out peaks and enough training peaks (two sizes) to fit on.
  int num_peak_measurements = 0;
  bool memory_cv_valid = false;
  double memory_cv_mape_ratio = 0;

  // Extrapolation check: the largest-scale configuration groups (by GPU count, then
  // model size) held out, everything fitted on the rest, the held-out runs predicted.
  // Valid when the rest still has enough runs to calibrate on.
  bool extrapolation_valid = false;
  double cv_extrapolation_mape_ratio = 0;  // calibrated on the rest
  double extrapolation_base_mape_ratio = 0;  // the base profile on the same runs
  std::string extrapolation_method;  // "held out 6 groups (240 runs) on 8 GPUs, models of 1.3e9 ..."

  // When the fit cannot lower the in-sample error by kPromotionMargin: that the model
  // lacks a term for these runs, naming the configuration groups whose residuals stay
  // largest ("" otherwise).
  std::string model_gap;

  // Where the fitted values apply (regimes.h), in words, and the strata that disagree.
  std::string scope;
  std::vector<StratumDisagreement> disagreements;

  // Promotion decision for the caller (e.g. the server): the base profile's error on the
  // same measurements (= mape_before_ratio), and whether the cross-validated error beats
  // it by the margin (kPromotionMargin relative) and, when the extrapolation check is
  // valid, the held-out large runs are predicted no worse than by the base profile.
  // Never promoted without a valid CV.
  double current_mape_ratio = 0;
  bool promote = false;
  // "promoted: cross-validated 6.10 % vs current 8.70 %" /
  // "not promoted: cross-validated 9.10 % vs current 8.70 % (needs below 8.53 %)".
  std::string promotion_reason;
};

struct CalibrationResult {
  SystemProfile profile;
  FitReport report;
};

// A calibration needs at least this many usable measurements from this many distinct
// configuration groups (workload x TP x PP); fewer is FAILED_PRECONDITION.
inline constexpr int kMinCalibrationMeasurements = 5;
inline constexpr int kMinCalibrationGroups = 3;
// Relative improvement of the cross-validated error over the current one needed to
// promote: cv < current * (1 - margin).
inline constexpr double kPromotionMargin = 0.02;
// Cross-validation folds (grouped by configuration) at most.
inline constexpr int kMaxCalibrationFolds = 5;

// INVALID_ARGUMENT for an invalid base profile; FAILED_PRECONDITION when the usable
// measurements are fewer than kMinCalibrationMeasurements or span fewer than
// kMinCalibrationGroups configuration groups, or when the fit leaves a parameter
// outside what ValidateProfile accepts or a figure of its report non-finite (nothing
// fit to store). Measurements outside ValidateMeasured's physical bounds are not used.
// CANCELLED / DEADLINE_EXCEEDED when `stop` asks: checked between the fit and each
// cross-validation fold (each well under a CPU-second at the sample budget).
absl::StatusOr<CalibrationResult> CalibrateProfile(const SystemProfile& base,
                                                   absl::Span<const CalibrationSample> samples,
                                                   const Interrupt& stop = {});

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_CALIBRATION_CALIBRATE_H_
