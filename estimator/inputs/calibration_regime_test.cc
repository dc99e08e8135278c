#include "estimator/inputs/calibration_regime.h"

#include <string>

#include "estimator/inputs/validate.h"
#include "estimator/system/hardware.h"
#include "estimator/testing/test_util.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::Profile;

// dgx-a100-80gb: 8 GPUs per node on NVLink, InfiniBand between nodes.
TEST(CalibrationRegime, RegimeIsTheWidestLevelCrossed) {
  const SystemProfile p = Profile("dgx-a100-80gb");
  ASSERT_EQ(p.network_levels.size(), 2u);
  EXPECT_EQ(RegimeLevel(p, 1), -1);
  EXPECT_EQ(RegimeLevel(p, 2), 0);
  EXPECT_EQ(RegimeLevel(p, 8), 0);
  EXPECT_EQ(RegimeLevel(p, 9), 1);
  EXPECT_EQ(RegimeLevel(p, 4096), 1);
  EXPECT_EQ(RegimeName(p, -1), "gpu");
  EXPECT_EQ(RegimeName(p, 0), "nvlink");
  EXPECT_EQ(RegimeLevelOf(p, "infiniband"), 1);
  EXPECT_EQ(RegimeLevelOf(p, "ethernet"), -2);
  EXPECT_EQ(DescribeRegime(p, 0), "within one nvlink domain");
}

TEST(CalibrationRegime, FieldsByName) {
  Calibration c;
  *CalibrationField(c, "matmul_efficiency") = 0.8;
  *CalibrationField(c, "network.infiniband.latency_us") = 7;
  EXPECT_EQ(c.matmul_efficiency, 0.8);
  ASSERT_EQ(c.network.size(), 1u);
  EXPECT_EQ(c.network[0].level, "infiniband");
  EXPECT_EQ(c.network[0].latency_us, 7);
  EXPECT_EQ(CalibrationField(c, "network.infiniband.bogus"), nullptr);
  EXPECT_EQ(CalibrationField(c, "matmul"), nullptr);
}

// Values fitted on single-node runs apply to one GPU and one node, not across nodes.
TEST(CalibrationRegime, NarrowValuesStayInTheirRegime) {
  SystemProfile p = Profile("dgx-a100-80gb");
  p.calibration.regimes.push_back({"nvlink", {{"matmul_efficiency", 0.9}}, 100, 0.05, 8, 1e9});
  p.calibration.regimes.push_back({"infiniband", {}, 20, 0.1, 64, 1e9});
  EXPECT_EQ(CalibrationFor(p, 1).matmul_efficiency, 0.9);
  EXPECT_EQ(CalibrationFor(p, 8).matmul_efficiency, 0.9);
  EXPECT_EQ(CalibrationFor(p, 64).matmul_efficiency, 0);  // the default, 0.75
  EXPECT_EQ(ResolvedCalibration(p, 64).matmul_efficiency, CalibrationDefaults::kMatmulEfficiency);
  EXPECT_EQ(ResolvedCalibration(p, 8).matmul_efficiency, 0.9);
  // The interval's regime: its own where measured, else the nearest wider, else narrower.
  EXPECT_EQ(NearestMeasuredRegime(p, -1)->regime, "nvlink");
  EXPECT_EQ(NearestMeasuredRegime(p, 1)->regime, "infiniband");
  p.calibration.regimes.pop_back();
  EXPECT_EQ(NearestMeasuredRegime(p, 1)->regime, "nvlink");
  EXPECT_TRUE(ValidateProfile(p).ok());
}

TEST(CalibrationRegime, ValidationNamesTheField) {
  SystemProfile p = Profile("dgx-a100-80gb");
  p.calibration.regimes.push_back({"ethernet", {}, 1, 0, 8, 0});
  absl::Status s = ValidateProfile(p);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("profile.calibration.regimes[0].regime"), std::string::npos) << s;
  p.calibration.regimes[0] = {"nvlink", {{"matmul_efficiency", 2.0}}, 1, 0, 8, 0};
  s = ValidateProfile(p);
  EXPECT_NE(s.message().find("profile.calibration.regimes[0].values"), std::string::npos) << s;
  EXPECT_NE(s.message().find("matmul_efficiency"), std::string::npos) << s;
  p.calibration.regimes[0] = {"nvlink", {{"warp_speed", 1.0}}, 1, 0, 8, 0};
  s = ValidateProfile(p);
  EXPECT_NE(s.message().find("\"warp_speed\" is not a calibration parameter"), std::string::npos) << s;
  p.calibration.regimes[0] = {"nvlink", {}, 1, NAN, 8, 0};
  EXPECT_FALSE(ValidateProfile(p).ok());
  // An error of 1,100 % would make an interval's bound overflow at time@p99.9.
  p.calibration.regimes[0] = {"nvlink", {}, 1, 11, 8, 0};
  s = ValidateProfile(p);
  EXPECT_NE(s.message().find("profile.calibration.regimes[0].cv_mape_ratio"), std::string::npos) << s;
}

}  // namespace
}  // namespace paraplan
