// The parameters calibration may fit: which profile field each one is, its physical
// range, and the coordinate the solver moves it in.
//
// Efficiencies, per-call overheads and latencies are positive and act multiplicatively,
// so the solver works in u = ln(theta / start): a unit of u is the same relative change
// for every parameter, and sensitivities are quoted per 10 % change. The per-iteration
// overhead is additive and may be 0, so it moves linearly, u = (theta - start) / step,
// with sensitivities quoted per `step` (10 ms). `start` is the base profile's resolved
// value clamped into the bounds. Plain data; thread-safe.
#ifndef PARAPLAN_ESTIMATOR_CALIBRATION_PARAMS_H_
#define PARAPLAN_ESTIMATOR_CALIBRATION_PARAMS_H_

#include <functional>
#include <string>
#include <vector>

#include "estimator/inputs/system_profile.h"

namespace paraplan {

struct CalibrationParam {
  std::string name;
  std::function<double&(Calibration&)> ref;  // the field on a resolved Calibration
  double lower = 0;
  double upper = 0;
  bool additive = false;  // linear coordinate (see above) instead of log
  double step = 0;        // additive only: the change sensitivities are quoted for
  std::string step_name;  // additive only: how that change reads ("" = in ms, a time)
  double before = 0;      // resolved value in the base profile
  double start = 0;       // `before` clamped into [lower, upper]
  // `ref` indexes network levels as IndexedCalibration / ResolvedCalibration lay them out.
  // Which measurements exercise it, for the reason when it is not identified ("" = all).
  std::string acts_on;

  double Value(double u) const;       // theta at coordinate u
  double Coordinate(double v) const;  // u of theta = v (clamped into the bounds)
  double LowerU() const { return Coordinate(lower); }
  double UpperU() const { return Coordinate(upper); }
  // Coordinate change of one sensitivity step: ln(1.1) (10 %) or 1 (one `step`).
  double StepU() const;
  // "10 % change", "10 ms" or `step_name`.
  std::string StepName() const;
};

// `base` with exactly one network calibration entry per network level, in level order
// (copied from the profile's own, 0 = default where it has none), so that a parameter
// can be written by level index while every other field keeps its "0 = physical
// default" meaning. The profile calibration starts from.
SystemProfile IndexedCalibration(const SystemProfile& base);

// The candidates for `base`, in a fixed order: matmul and memory-bound efficiencies,
// the small-GEMM half-efficiency size, overlap, per-iteration, per-kernel and
// per-collective overheads, fused-attention efficiencies, and each network level's
// efficiency and per-step latency (a level whose profile gives no latency has no
// latency candidate).
std::vector<CalibrationParam> CalibrationParams(const SystemProfile& base);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_CALIBRATION_PARAMS_H_
