// The development protocol of issue 23: calibrate the built-in A100 profile on one
// cluster's 1,440 single-node runs (vTrain), then predict the same cluster's 26 runs on
// 64 GPUs, which the calibration never saw. Calibrating on small runs must never make
// the large ones worse.
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "estimator/inputs/measured_features.h"
#include "estimator/calibration/calibrate.h"
#include "estimator/iteration/estimate.h"
#include "estimator/system/hardware.h"
#include "estimator/testing/public_data.h"
#include "estimator/testing/test_util.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

std::vector<CalibrationSample> Samples(const std::string& file) {
  std::vector<CalibrationSample> out;
  for (const testing::Row& row : testing::Load(file)) {
    CalibrationSample s;
    s.workload = row.workload;
    s.config = row.config;
    s.measured_iteration_time_s = row.raw["iteration_time_s"];
    out.push_back(s);
  }
  return out;
}

struct Error {
  double mape = 0;
  std::map<std::string, std::vector<double>> ratios;  // by TP x PP
};

Error Predict(const std::vector<CalibrationSample>& samples, const SystemProfile& profile) {
  Error e;
  for (const CalibrationSample& s : samples) {
    absl::StatusOr<Estimate> est = EstimateIteration(s.workload, s.config, profile);
    const double ratio = est.ok() ? est->iteration_time_s / s.measured_iteration_time_s : 0;
    e.mape += std::abs(ratio - 1) / samples.size();
    e.ratios["TP" + std::to_string(s.config.tensor_parallel) + " PP" + std::to_string(s.config.pipeline_parallel)]
        .push_back(ratio);
  }
  return e;
}

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / v.size();
}

TEST(CalibrationTransfer, SingleNodeFitNeverWorsensSixtyFourGpuRuns) {
  const std::vector<CalibrationSample> small = Samples("vtrain_a100_single_node.jsonl");
  const std::vector<CalibrationSample> large = Samples("vtrain_a100_multi_node_64gpu.jsonl");
  ASSERT_EQ(small.size(), 1440u);
  ASSERT_EQ(large.size(), 26u);
  const SystemProfile base = testing::Profile("dgx-a100-80gb");
  absl::StatusOr<CalibrationResult> r = CalibrateProfile(base, small);
  ASSERT_TRUE(r.ok()) << r.status();
  const Error before = Predict(large, base);
  const Error after = Predict(large, r->profile);
  std::printf("single node: before %.2f %%, after %.2f %% in sample; %s\n", 100 * r->report.mape_before_ratio,
              100 * r->report.mape_after_ratio, r->report.promotion_reason.c_str());
  for (const ParameterChange& p : r->report.parameters) {
    if (p.fitted) std::printf("  %-40s %.4g -> %.4g\n", p.name.c_str(), p.before, p.after);
  }
  std::printf("64 GPUs: MAPE %.2f %% before, %.2f %% after\n", 100 * before.mape, 100 * after.mape);
  for (const auto& [group, ratios] : before.ratios) {
    std::printf("  %-10s %2zu runs: predicted/measured %.3f before, %.3f after\n", group.c_str(), ratios.size(),
                Mean(ratios), Mean(after.ratios.at(group)));
  }
  EXPECT_LE(after.mape, before.mape);
  // The 64-GPU runs lie outside what the single-node calibration measured: their 90 %
  // intervals must say so and cover the measured times.
  int covered = 0;
  for (const CalibrationSample& s : large) {
    absl::StatusOr<Estimate> e = EstimateIteration(s.workload, s.config, r->profile);
    ASSERT_TRUE(e.ok());
    EXPECT_FALSE(e->in_envelope);
    const bool in = e->interval.low_s <= s.measured_iteration_time_s && s.measured_iteration_time_s <= e->interval.high_s;
    if (!in) {
      std::printf("  outside: %s, predicted/measured %.3f\n", s.config.ShortString().c_str(),
                  e->iteration_time_s / s.measured_iteration_time_s);
    }
    covered += in;
  }
  std::printf("64 GPUs: %d of %zu measured times inside the stated 90 %% interval\n", covered, large.size());
  EXPECT_GE(covered, 0.85 * large.size());
}

// Calibrated on both, the strata (one node, across nodes) want different values (matmul
// efficiency 0.90 on one node, which would make the 64-GPU runs faster than they ran):
// the 64-GPU runs keep the base values with only what they alone cross fitted on them,
// the InfiniBand level (regimes.h, candidate 2), and the report names the disagreement.
// That cluster's nodes have half the NICs of the DGX template (vTrain's own validation
// configs, config/validation/multi/*.json: inter_node_bandwidth 800 Gb/s per 8-GPU node,
// i.e. four HDR links, not eight), so the fitted efficiency must come out near half the
// template's 0.8, and the 64-GPU runs must get better.
TEST(CalibrationTransfer, BothScalesFitTheNetworkOnlyTheWideRunsCross) {
  std::vector<CalibrationSample> both = Samples("vtrain_a100_single_node.jsonl");
  const std::vector<CalibrationSample> large = Samples("vtrain_a100_multi_node_64gpu.jsonl");
  both.insert(both.end(), large.begin(), large.end());
  const SystemProfile base = testing::Profile("dgx-a100-80gb");
  absl::StatusOr<CalibrationResult> r = CalibrateProfile(base, both);
  ASSERT_TRUE(r.ok()) << r.status();
  std::printf("scope: %s\n%s\n", r->report.scope.c_str(), r->report.promotion_reason.c_str());
  std::printf("extrapolation: %s\n", r->report.extrapolation_method.c_str());
  for (const StratumDisagreement& d : r->report.disagreements) {
    std::printf("  %s: %s %.4g +- %.2g, %s %.4g +- %.2g\n", d.parameter.c_str(), d.narrow_regime.c_str(),
                d.narrow_value, d.narrow_stddev, d.wide_regime.c_str(), d.wide_value, d.wide_stddev);
  }
  for (const RegimeCalibration& g : r->profile.calibration.regimes) {
    std::printf("  regime %s: %d runs, up to %lld GPUs, cv %.2f %%, %zu values\n", g.regime.c_str(),
                g.num_measurements, static_cast<long long>(g.max_gpus), 100 * g.cv_mape_ratio, g.values.size());
  }
  const Error before = Predict(large, base);
  const Error after = Predict(large, r->profile);
  std::printf("64 GPUs (in sample): MAPE %.2f %% before, %.2f %% after\n", 100 * before.mape, 100 * after.mape);
  ASSERT_EQ(r->profile.calibration.regimes.size(), 2u);
  EXPECT_EQ(r->profile.calibration.regimes[0].regime, "nvlink");
  EXPECT_EQ(r->profile.calibration.regimes[0].num_measurements, 1440);
  EXPECT_EQ(r->profile.calibration.regimes[1].regime, "infiniband");
  EXPECT_EQ(r->profile.calibration.regimes[1].max_gpus, 64);
  // What the runs exercised: fp16 GPT with TP, PP and DP, nothing else.
  EXPECT_EQ(FeatureNames(r->profile.calibration.regimes[0].measured_features),
            (std::vector<std::string>{"transformer", "tensor_parallel", "pipeline_parallel"}));
  EXPECT_TRUE(r->report.extrapolation_valid);
  EXPECT_LT(after.mape, 0.75 * before.mape);
  // The 64-GPU runs keep the template's GEMM rate; the single node's 0.90 is its regime's.
  EXPECT_NEAR(ResolvedCalibration(r->profile).matmul_efficiency, ResolvedCalibration(base).matmul_efficiency, 1e-9);
  double infiniband = 0;
  for (const NetworkCalibration& n : r->profile.calibration.network) {
    if (n.level == "infiniband") infiniband = n.efficiency;
  }
  EXPECT_GT(infiniband, 0.3);
  EXPECT_LT(infiniband, 0.55);
  // The GPU keeps what the single-node runs measured.
  const Error single_after = Predict(Samples("vtrain_a100_single_node.jsonl"), r->profile);
  std::printf("single node (in sample): MAPE %.2f %% after\n", 100 * single_after.mape);
  EXPECT_LT(single_after.mape, 0.08);
}

}  // namespace
}  // namespace paraplan
