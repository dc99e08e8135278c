#include "estimator/system/order_statistics.h"

#include "gtest/gtest.h"

namespace paraplan {
namespace {

TEST(OrderStatistics, NormalQuantileMatchesTables) {
  EXPECT_NEAR(NormalQuantile(0.5), 0, 1e-9);
  EXPECT_NEAR(NormalQuantile(0.95), 1.644854, 1e-5);
  EXPECT_NEAR(NormalQuantile(0.975), 1.959964, 1e-5);
  EXPECT_NEAR(NormalQuantile(0.1), -1.281552, 1e-5);
}

// Against the integral E[max] = int x n phi(x) Phi(x)^(n-1) dx, evaluated numerically
// (step 5e-4 over [-12, 12]): 0.5642, 1.4236, 2.3437, 3.0439, 3.2482, 3.8694.
TEST(OrderStatistics, ExpectedMaxOfNormalsFollowsTheIntegral) {
  EXPECT_EQ(ExpectedMaxOfNormals(0), 0);
  EXPECT_EQ(ExpectedMaxOfNormals(1), 0);
  EXPECT_NEAR(ExpectedMaxOfNormals(2), 0.5642, 0.03);
  EXPECT_NEAR(ExpectedMaxOfNormals(8), 1.4236, 0.02);
  EXPECT_NEAR(ExpectedMaxOfNormals(64), 2.3437, 0.02);
  EXPECT_NEAR(ExpectedMaxOfNormals(512), 3.0439, 0.02);
  EXPECT_NEAR(ExpectedMaxOfNormals(1024), 3.2482, 0.02);
  EXPECT_NEAR(ExpectedMaxOfNormals(10752), 3.8694, 0.02);
}

}  // namespace
}  // namespace paraplan
