// Calibration: fit a profile's efficiency parameters to measured iteration times.
//
// Robust least squares (Huber loss on log(predicted/measured)) with a prior pulling
// each parameter toward its specification default; only parameters that the samples
// exercise are fitted (e.g. inter-node network efficiency needs multi-node samples).
// Returns the calibrated profile (same name; the caller assigns the version) and a fit
// report with before/after error and a cross-validated error. Thread-safe.
// Built as its own library target, `paraplan_calibrate` (it pulls in Ceres); link that
// target to use it.
#ifndef PARAPLAN_ESTIMATOR_CALIBRATE_H_
#define PARAPLAN_ESTIMATOR_CALIBRATE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "estimator/parallel_config.h"
#include "estimator/system_profile.h"
#include "estimator/workload.h"

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
  double before = 0;
  double after = 0;
  bool fitted = false;
  std::string reason;
};

struct FitReport {
  int num_measurements = 0;
  double mape_before_ratio = 0;
  double mape_after_ratio = 0;
  double cv_mape_ratio = 0;
  std::vector<ParameterChange> parameters;
};

struct CalibrationResult {
  SystemProfile profile;
  FitReport report;
};

// FAILED_PRECONDITION when there are no usable samples.
absl::StatusOr<CalibrationResult> CalibrateProfile(const SystemProfile& base,
                                                   absl::Span<const CalibrationSample> samples);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_CALIBRATE_H_
