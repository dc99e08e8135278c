// PARAPLAN_RETURN_IF_ERROR(expr): returns the absl::Status `expr` evaluates to when it
// is not OK. Abseil keeps its own macro internal; this is the one copy the project uses.
#ifndef PARAPLAN_ESTIMATOR_INPUTS_STATUS_MACROS_H_
#define PARAPLAN_ESTIMATOR_INPUTS_STATUS_MACROS_H_

#include "absl/status/status.h"

#define PARAPLAN_RETURN_IF_ERROR(expr)      \
  do {                                      \
    if (absl::Status _s = (expr); !_s.ok()) \
      return _s;                            \
  } while (0)

#endif  // PARAPLAN_ESTIMATOR_INPUTS_STATUS_MACROS_H_
