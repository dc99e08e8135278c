// The field checks validate_workload.cc, validate_profile.cc and validate_config.cc
// share: each returns INVALID_ARGUMENT "<field>: <value> <reason>" (validate.h's form) or
// OK, and the bounds that keep every product and quotient of the inputs finite.
// Internal to estimator/inputs.
#ifndef PARAPLAN_ESTIMATOR_INPUTS_VALIDATE_FIELDS_H_
#define PARAPLAN_ESTIMATOR_INPUTS_VALIDATE_FIELDS_H_

#include <cmath>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace paraplan::validate {

inline absl::Status Bad(absl::string_view field, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", why));
}

// Upper bounds that keep every product in range and reject absurd requests.
inline constexpr int64_t kMaxDim = int64_t{1} << 24;
inline constexpr int kMaxDegree = 1 << 20;

inline absl::Status Positive(absl::string_view field, int64_t v, int64_t max = kMaxDim) {
  if (v <= 0) return Bad(field, absl::StrCat(v, " must be positive"));
  if (v > max) return Bad(field, absl::StrCat(v, " exceeds the limit ", max));
  return absl::OkStatus();
}

inline absl::Status NonNegative(absl::string_view field, int64_t v, int64_t max = kMaxDim) {
  if (v < 0) return Bad(field, absl::StrCat(v, " must not be negative"));
  if (v > max) return Bad(field, absl::StrCat(v, " exceeds the limit ", max));
  return absl::OkStatus();
}

inline absl::Status Finite(absl::string_view field, double v, bool positive) {
  if (!std::isfinite(v)) return Bad(field, "must be a finite number");
  if (positive ? v <= 0 : v < 0) {
    return Bad(field, absl::StrFormat("%g must be %s", v, positive ? "positive" : "non-negative"));
  }
  return absl::OkStatus();
}

// A finite value in [min, max]; with `zero_is_default`, 0 (the field's default) too.
// The lower bounds keep every time and rate finite: 5e-324 is a positive efficiency,
// and a time divided by it is infinite.
inline absl::Status InRange(absl::string_view field, double v, double min, double max, bool zero_is_default) {
  if (!std::isfinite(v)) return Bad(field, "must be a finite number");
  if (zero_is_default && v == 0) return absl::OkStatus();
  if (v < min || v > max) {
    return Bad(field, absl::StrFormat("%g is outside [%g, %g]%s", v, min, max,
                                      zero_is_default ? " (or 0 = default)" : ""));
  }
  return absl::OkStatus();
}

// An achieved share of a peak: below 1% the hardware is not doing the work at all.
inline constexpr double kMinEfficiency = 0.01;
// A network's achieved share of its link rate, as low as the bandwidth-curve fit of
// small messages goes (microbench.cc clamps there).
inline constexpr double kMinNetworkEfficiency = 0.001;
// Rates (GB/s, TFLOP/s) and capacities (GiB): a thousandth of a unit up to far beyond
// any machine, so that no product or quotient of them overflows.
inline constexpr double kMinRate = 1e-3;
inline constexpr double kMaxRate = 1e7;

}  // namespace paraplan::validate

#endif  // PARAPLAN_ESTIMATOR_INPUTS_VALIDATE_FIELDS_H_
