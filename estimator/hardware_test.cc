#include "estimator/hardware.h"

#include "estimator/test_util.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::Profile;

TEST(Hardware, LargeMatmulRunsAtCalibratedPeak) {
  SystemProfile p = Profile("dgx-a100-80gb");
  p.calibration.matmul_efficiency = 0.5;
  p.calibration.kernel_overhead_us = 1e-9;
  p.calibration.matmul_half_efficiency_gflop = 1e-9;
  const Hardware hw(p, Precision::kBf16);
  // 2 * 8192^3 FLOPs at 0.5 * 312 TFLOP/s = 7.05 ms.
  EXPECT_NEAR(hw.MatmulTime(8192, 8192, 8192, 1, 2), 2.0 * 8192 * 8192 * 8192 / 156e12, 1e-6);
}

TEST(Hardware, SmallMatmulsAreLessEfficient) {
  const Hardware hw(Profile("dgx-a100-80gb"), Precision::kBf16);
  const double big = 2.0 * 8192 * 8192 * 8192 / hw.MatmulTime(8192, 8192, 8192, 1, 2);
  const double small = 2.0 * 256 * 256 * 256 / hw.MatmulTime(256, 256, 256, 1, 2);
  EXPECT_LT(small, 0.5 * big);
}

TEST(Hardware, MemoryBoundOpsRunAtHbmRate) {
  SystemProfile p = Profile("dgx-a100-80gb");
  p.calibration.memory_bound_efficiency = 1.0;
  p.calibration.kernel_overhead_us = 1e-9;
  const Hardware hw(p, Precision::kBf16);
  EXPECT_NEAR(hw.MemoryTime(2039e9), 1.0, 1e-6);  // 2,039 GB at 2,039 GB/s
}

TEST(Hardware, Fp8FallsBackWhenUnsupported) {
  const SystemProfile a100 = Profile("dgx-a100-80gb");
  EXPECT_EQ(a100.accelerator.PeakTflops(Precision::kFp8), 312);
  EXPECT_EQ(Profile("dgx-h100-80gb").accelerator.PeakTflops(Precision::kFp8), 1979);
}

}  // namespace
}  // namespace paraplan
