// Regimes: which calibration applies to a configuration.
//
// A configuration's regime is the widest network level its GPUs cross when packed onto
// the profile's domains: "gpu" for one GPU, else the innermost level one of whose domains
// holds all its GPUs (the outermost level when none does). Calibration fits runs of each
// regime and stores what it learnt per regime (RegimeCalibration), so that a parameter
// fitted on single-node runs reaches multi-node predictions only where multi-node runs
// agree (issue 23). Calibration parameters are named as calibration reports them
// (`matmul_efficiency`, `network.infiniband.latency_us`, ...). Pure functions;
// thread-safe.
#ifndef PARAPLAN_ESTIMATOR_INPUTS_CALIBRATION_REGIME_H_
#define PARAPLAN_ESTIMATOR_INPUTS_CALIBRATION_REGIME_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "estimator/inputs/system_profile.h"

namespace paraplan {

inline constexpr char kSingleGpuRegime[] = "gpu";

// -1 for one GPU, else the index of the network level (see above).
int RegimeLevel(const SystemProfile& profile, int64_t num_gpus);
// "gpu" or the level's name.
std::string RegimeName(const SystemProfile& profile, int level);
// RegimeLevel of a regime's name; -2 when the profile has no such regime.
int RegimeLevelOf(const SystemProfile& profile, absl::string_view regime);
// "one GPU" / "within one nvlink domain" / "across infiniband", for messages.
std::string DescribeRegime(const SystemProfile& profile, int level);

// The field of `c` a calibration parameter names; network parameters find (or add) the
// entry of their level. nullptr for an unknown name.
double* CalibrationField(Calibration& c, absl::string_view parameter);

// The regime entry whose values apply at `level`: its own, else the nearest wider one
// with values, else none (the profile-wide calibration applies).
const RegimeCalibration* ApplicableRegime(const SystemProfile& profile, int level);
// The nearest entry that describes measurements at `level` or wider (for intervals):
// its own, else the nearest wider, else the widest narrower one; nullptr when none.
const RegimeCalibration* NearestMeasuredRegime(const SystemProfile& profile, int level);

// The profile's calibration (unresolved: 0 = default) with the overrides of the regime
// of `num_gpus` applied; the profile-wide calibration when num_gpus <= 0 or no regime
// entry carries values.
Calibration CalibrationFor(const SystemProfile& profile, int64_t num_gpus);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_INPUTS_CALIBRATION_REGIME_H_
