// Identifiability: which calibration parameters a set of measurements can determine.
//
// Decided by sensitivity, not by rules about coverage: the sensitivity matrix holds, per
// measurement and parameter, the change of ln(predicted iteration time) for one step of
// the parameter (10 %, or 10 ms for the additive overhead), by central differences. A
// parameter is free when its column's RMS, after projecting out the columns already
// chosen, is at least kMinSensitivity, and that independent part is at least
// kMinIndependentShare of the column (no near-collinear pairs). Parameters are chosen
// greedily, largest independent part first. Pure functions; thread-safe.
#ifndef PARAPLAN_ESTIMATOR_CALIBRATION_SELECT_H_
#define PARAPLAN_ESTIMATOR_CALIBRATION_SELECT_H_

#include <string>
#include <vector>

#include "absl/types/span.h"
#include "estimator/calibration/calibrate.h"
#include "estimator/calibration/params.h"

namespace paraplan {

// A 10 % change must move predictions by at least 0.5 % RMS, independently of the
// parameters already chosen: with a few-% measurement noise and tens of measurements
// that pins the parameter to a few %.
inline constexpr double kMinSensitivity = 0.005;
inline constexpr double kMinIndependentShare = 0.1;

// ln(predicted iteration time); NaN when the estimate fails.
double LogPredictedTime(const CalibrationSample& s, const SystemProfile& profile);

// `at` with params[i] set to params[i].Value(u[i]) for every i with write[i].
SystemProfile WithParams(const SystemProfile& at, const std::vector<CalibrationParam>& params,
                         absl::Span<const double> u, const std::vector<bool>& write);

// columns[j][i]: change of ln(predicted) of samples[i] per step of params[j] around u
// (free params at u, the rest at their value in `at`; steps clamped into the bounds).
std::vector<std::vector<double>> SensitivityColumns(const SystemProfile& at,
                                                    const std::vector<CalibrationParam>& params,
                                                    absl::Span<const double> u, const std::vector<bool>& free,
                                                    absl::Span<const CalibrationSample* const> samples);

struct Selection {
  std::vector<bool> free;
  std::vector<double> sensitivity;  // RMS of each column
  std::vector<std::string> reason;  // why not free ("" when free)
};

Selection SelectIdentifiable(const std::vector<CalibrationParam>& params,
                             const std::vector<std::vector<double>>& columns);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_CALIBRATION_SELECT_H_
