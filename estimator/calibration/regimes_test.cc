// The calibration by regime (regimes.h) on synthetic runs (synthetic_runs.h): what runs
// within one node may teach wider ones, and what the widest runs take when the regimes
// want different values.
#include <cstdio>
#include <string>
#include <vector>

#include "estimator/calibration/calibrate.h"
#include "estimator/testing/synthetic_runs.h"
#include "estimator/system/hardware.h"
#include "estimator/testing/test_util.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::FourNodes;
using testing::Print;
using testing::Profile;
using testing::SmallModels;
using testing::Truth;

TEST(Calibrate, SingleNodeDataLeavesInterNodeAlone) {
  const std::vector<CalibrationSample> samples = SmallModels(Truth(), 0.01);
  ASSERT_GE(samples.size(), 5u);
  absl::StatusOr<CalibrationResult> r = CalibrateProfile(Profile("dgx-a100-80gb"), samples);
  ASSERT_TRUE(r.ok()) << r.status();
  bool seen = false;
  for (const ParameterChange& p : r->report.parameters) {
    if (p.name == "network.infiniband.efficiency") {
      seen = true;
      EXPECT_FALSE(p.fitted);
      EXPECT_EQ(p.before, p.after);
      EXPECT_NE(p.reason.find("span more than 8 GPUs"), std::string::npos) << p.reason;
    }
  }
  EXPECT_TRUE(seen);
}


// One node and four nodes of the same cluster, calibrated together. Where only the
// network between nodes differs from the template (half its efficiency), the four-node
// runs keep the single-node values and fit that level alone: nothing disagrees. Where
// the four-node runs' GPUs differ (a different machine), the network cannot explain
// them: they keep their own fit, and the report names the parameter the regimes
// disagree on.
TEST(Calibrate, WideRunsFitOnlyTheirNetworkUnlessTheirGpusDiffer) {
  SystemProfile gpu = Profile("dgx-a100-80gb");
  gpu.calibration = ResolvedCalibration(gpu);
  gpu.calibration.matmul_efficiency = 0.9;
  SystemProfile slow_network = gpu;
  slow_network.calibration.network[1].efficiency *= 0.5;
  SystemProfile slow_gpu = gpu;
  slow_gpu.calibration.matmul_efficiency = 0.5;

  std::vector<CalibrationSample> samples = SmallModels(gpu, 0.01);
  std::vector<CalibrationSample> wide = FourNodes(slow_network);
  samples.insert(samples.end(), wide.begin(), wide.end());
  absl::StatusOr<CalibrationResult> r = CalibrateProfile(Profile("dgx-a100-80gb"), samples);
  ASSERT_TRUE(r.ok()) << r.status();
  std::printf("slow network: %s\n", r->report.scope.c_str());
  Print(r->report);
  EXPECT_NE(r->report.scope.find("the network only "), std::string::npos);
  EXPECT_TRUE(r->report.disagreements.empty());
  for (const NetworkCalibration& n : r->profile.calibration.network) {
    if (n.level == "infiniband") {
      EXPECT_NEAR(n.efficiency, slow_network.calibration.network[1].efficiency, 0.1);
    }
  }

  samples = SmallModels(gpu, 0.01);
  wide = FourNodes(slow_gpu);
  samples.insert(samples.end(), wide.begin(), wide.end());
  r = CalibrateProfile(Profile("dgx-a100-80gb"), samples);
  ASSERT_TRUE(r.ok()) << r.status();
  std::printf("slow GPUs: %s\n", r->report.scope.c_str());
  EXPECT_NE(r->report.scope.find("their own fit (profile-wide"), std::string::npos);
  bool matmul = false;
  for (const StratumDisagreement& d : r->report.disagreements) {
    std::printf("  %s: %s %.3f, %s %.3f\n", d.parameter.c_str(), d.narrow_regime.c_str(), d.narrow_value,
                d.wide_regime.c_str(), d.wide_value);
    if (d.parameter == "matmul_efficiency") {
      matmul = true;
      EXPECT_NEAR(d.narrow_value, 0.9, 0.05);
      EXPECT_NEAR(d.wide_value, 0.5, 0.05);
    }
  }
  EXPECT_TRUE(matmul);
}

// A cluster built like its template (GPUs at the template's values) but with half its
// NICs, whose single-node runs show faster GEMMs than the template states (vTrain's: 0.90
// of peak against 0.75): the wide runs keep the base values with only the InfiniBand
// level fitted on them, the single-node regime keeps its own values, and the report
// names the matmul efficiency the two regimes disagree on. Neither the pooled fit nor the
// single-node values with the network fitted on them predict the wide runs: both carry
// the single node's GEMM rate to four nodes.
TEST(Calibrate, WideRunsOnTheTemplatesGpusFitOnlyTheNetworkOnTheBaseValues) {
  SystemProfile base = Profile("dgx-a100-80gb");
  base.calibration = ResolvedCalibration(base);
  SystemProfile half_nics = base;
  half_nics.calibration.network[1].efficiency *= 0.5;
  SystemProfile fast_node = base;
  fast_node.calibration.matmul_efficiency = 0.9;

  std::vector<CalibrationSample> samples = SmallModels(fast_node, 0.01);
  const std::vector<CalibrationSample> wide = FourNodes(half_nics);
  samples.insert(samples.end(), wide.begin(), wide.end());
  absl::StatusOr<CalibrationResult> r = CalibrateProfile(Profile("dgx-a100-80gb"), samples);
  ASSERT_TRUE(r.ok()) << r.status();
  std::printf("half the NICs: %s\n", r->report.scope.c_str());
  Print(r->report);
  EXPECT_NE(r->report.scope.find("the base values with the network only they cross fitted on them"), std::string::npos);
  const Calibration applied = ResolvedCalibration(r->profile);
  EXPECT_NEAR(applied.matmul_efficiency, base.calibration.matmul_efficiency, 1e-9);
  for (const NetworkCalibration& n : applied.network) {
    if (n.level == "infiniband") {
      EXPECT_NEAR(n.efficiency, half_nics.calibration.network[1].efficiency, 0.08);
    }
    if (n.level == "nvlink") {
      EXPECT_NEAR(n.efficiency, base.calibration.network[0].efficiency, 0.08);
    }
  }
  bool matmul = false;
  for (const StratumDisagreement& d : r->report.disagreements) {
    if (d.parameter != "matmul_efficiency") continue;
    matmul = true;
    EXPECT_NEAR(d.narrow_value, 0.9, 0.05);
    EXPECT_NEAR(d.wide_value, base.calibration.matmul_efficiency, 1e-9);
  }
  EXPECT_TRUE(matmul);
}

}  // namespace
}  // namespace paraplan
