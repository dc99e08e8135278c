// Units the CLI and the report page print with (the same as estimator/inputs/units.h:
// these binaries carry no estimator code).
#ifndef PARAPLAN_REPORT_UNITS_H_
#define PARAPLAN_REPORT_UNITS_H_

namespace paraplan::cli {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;  // bytes

}  // namespace paraplan::cli

#endif  // PARAPLAN_REPORT_UNITS_H_
