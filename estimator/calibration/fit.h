// The time fit: robust nonlinear least squares over the identifiable parameters.
//
// Residual per measurement: ln(predicted / measured) under a Huber loss (delta 5 %),
// so one bad measurement cannot drag the fit. Prior per free parameter: its coordinate
// over ln(1.3) (or over 10 ms for the additive overhead), weighted like one 5 % miss,
// which keeps a weakly constrained parameter near its start. Selection and fit alternate:
// select at the start, fit, select again at the fitted point (a parameter may become
// (un)identifiable as the others move), and refit until the set is stable (at most
// kMaxFitRounds fits). Pure function; thread-safe.
#ifndef PARAPLAN_ESTIMATOR_CALIBRATION_FIT_H_
#define PARAPLAN_ESTIMATOR_CALIBRATION_FIT_H_

#include <vector>

#include "absl/types/span.h"
#include "estimator/calibration/calibrate.h"
#include "estimator/calibration/params.h"
#include "estimator/calibration/select.h"

namespace paraplan {

inline constexpr int kMaxFitRounds = 2;

struct TimeFit {
  SystemProfile profile;         // `at` with the free parameters at u
  std::vector<double> u;         // per parameter; 0 where not free
  Selection selection;           // the fitted set, sensitivities at the fitted point
  std::vector<double> stddev_u;  // per parameter, in its coordinate; 0 where not free
  int rounds = 0;                // fits run
};

// Fits `params` (coordinates relative to their start) on `samples`, starting from `at`
// (a profile whose calibration is resolved: every value explicit). `all_free`: every
// parameter is fitted whatever its sensitivity (the prior holds a weakly determined one
// near its start; selection still reports the sensitivities).
TimeFit FitTimes(const SystemProfile& at, const std::vector<CalibrationParam>& params,
                 absl::Span<const CalibrationSample* const> samples, bool all_free = false);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_CALIBRATION_FIT_H_
