#include "estimator/iteration/uncertainty.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "estimator/inputs/calibration_regime.h"
#include "estimator/inputs/measured_features.h"

namespace paraplan {

namespace {

double Scale(double mape) { return mape; }  // Laplace: b = E|X|

}  // namespace

double UncalibratedMapeRatio(unsigned features) {
  return (features & kFeatureLayerGraph) != 0 ? kUncalibratedCnnMapeRatio : kUncalibratedMapeRatio;
}

Uncertainty PredictionUncertainty(const SystemProfile& profile, int64_t num_gpus, double model_flops_per_token,
                                  unsigned features) {
  Uncertainty u;
  const int level = RegimeLevel(profile, num_gpus);
  const RegimeCalibration* r = NearestMeasuredRegime(profile, level);
  const double floor = UncalibratedMapeRatio(features);
  if (r == nullptr) {
    u.notes.push_back(absl::StrFormat(
        "profile \"%s\" is not calibrated on measurements: the interval is the model's error on published runs "
        "(%s%.1f %%)",
        profile.name, (features & kFeatureLayerGraph) != 0 ? "of CNNs: " : "", 100 * floor));
    u.scale = Scale(floor);
    return u;
  }
  const int measured_level = RegimeLevelOf(profile, r->regime);
  if (measured_level != level) {
    u.notes.push_back(absl::StrCat("no measurement ", DescribeRegime(profile, level), "; the nearest measured are ",
                                   DescribeRegime(profile, measured_level)));
  }
  if (num_gpus > r->max_gpus) {
    u.notes.push_back(absl::StrCat(num_gpus, " GPUs, more than the ", r->max_gpus, " measured"));
  }
  const double parameters = model_flops_per_token / 6;
  if (parameters > r->max_parameters * 1.01) {
    u.notes.push_back(absl::StrFormat("a model of %.3g parameters, larger than the largest measured (%.3g)",
                                      parameters, r->max_parameters));
  }
  // Features no measurement exercised, in any regime (calibrations from before they were
  // recorded say nothing).
  unsigned measured = 0;
  for (const RegimeCalibration& g : profile.calibration.regimes) measured |= g.measured_features;
  if (measured != 0 && (features & ~measured) != 0) {
    u.notes.push_back(absl::StrCat("no measurement used ", DescribeFeatures(features & ~measured)));
  }
  u.in_envelope = u.notes.empty();
  const double mape = r->cv_mape_ratio > 0 ? r->cv_mape_ratio : floor;
  u.scale = Scale(u.in_envelope ? mape : std::max(mape, floor));
  return u;
}

double QuantileFactor(double scale, double quantile) {
  const double x = quantile >= 0.5 ? -std::log(2 * (1 - quantile)) : std::log(2 * quantile);
  return std::exp(scale * x);
}

}  // namespace paraplan
