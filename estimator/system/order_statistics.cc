#include "estimator/system/order_statistics.h"

#include <cmath>

namespace paraplan {

double NormalQuantile(double p) {
  // Bisection on the normal CDF, 0.5 erfc(-z / sqrt 2): 60 halvings of [-40, 40].
  double lo = -40, hi = 40;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double ExpectedMaxOfNormals(int64_t n) {
  if (n <= 1) return 0;
  const double x = static_cast<double>(n);
  return NormalQuantile((x - 0.375) / (x + 0.25));
}

}  // namespace paraplan
