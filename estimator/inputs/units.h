// Units the estimator and the server convert with. The CLI and the report page, which
// carry no estimator code, have their own copy in report/units.h.
#ifndef PARAPLAN_ESTIMATOR_INPUTS_UNITS_H_
#define PARAPLAN_ESTIMATOR_INPUTS_UNITS_H_

namespace paraplan {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;  // bytes

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_INPUTS_UNITS_H_
