// Order statistics of the normal distribution: the quantile function and the expected
// largest of n independent draws (how far the slowest of n GPUs sits from the median one).
//
// Pure functions of their arguments; no state.
#ifndef PARAPLAN_ESTIMATOR_SYSTEM_ORDER_STATISTICS_H_
#define PARAPLAN_ESTIMATOR_SYSTEM_ORDER_STATISTICS_H_

#include <cstdint>

namespace paraplan {

// The standard normal quantile z with P(Z <= z) = p, for p in (0, 1).
double NormalQuantile(double p);

// E[max of n independent standard normal draws]: 0 for n <= 1, else Blom's (1958)
// approximation Phi^-1((n - 0.375) / (n + 0.25)), within 0.03 of the exact value
// (Harter 1961: 0.5642 for n = 2, 1.4236 for 8, 3.2414 for 1,000).
double ExpectedMaxOfNormals(int64_t n);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_SYSTEM_ORDER_STATISTICS_H_
