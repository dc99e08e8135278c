#include "estimator/iteration/uncertainty.h"

#include <cmath>

#include "estimator/iteration/estimate.h"
#include "estimator/testing/test_util.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::Profile;

TEST(Uncertainty, NormalQuantileMatchesTables) {
  EXPECT_NEAR(NormalQuantile(0.5), 0, 1e-9);
  EXPECT_NEAR(NormalQuantile(0.95), 1.644854, 1e-5);
  EXPECT_NEAR(NormalQuantile(0.975), 1.959964, 1e-5);
  EXPECT_NEAR(NormalQuantile(0.1), -1.281552, 1e-5);
}

// A built-in profile has seen no measurements: the 90 % interval spans the model's
// published-run error, 13.2 % MAPE = Laplace scale 0.132; P(|X| > t) = exp(-t / b) = 0.1
// at t = 0.132 ln 10 = 0.30394, factor exp(0.30394) = 1.3552.
TEST(Uncertainty, UncalibratedProfileIsOutsideTheEnvelope) {
  const Workload w = testing::Model("megatron-22b");
  ParallelConfig c = testing::Config(8, 1, 1, 1, 8);
  absl::StatusOr<Estimate> e = EstimateIteration(w, c, Profile("dgx-a100-80gb"));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_FALSE(e->in_envelope);
  ASSERT_EQ(e->envelope_notes.size(), 1u);
  EXPECT_NE(e->envelope_notes[0].find("not calibrated"), std::string::npos);
  EXPECT_DOUBLE_EQ(e->interval.confidence, 0.9);
  EXPECT_NEAR(e->interval.high_s / e->iteration_time_s, 1.3552, 2e-4);
  EXPECT_NEAR(e->iteration_time_s / e->interval.low_s, 1.3552, 2e-4);
}

// Calibrated on single-node runs of models up to 22 B: a node-sized run of that model is
// inside, with the regime's 4 % error (95th percentile: exp(0.04 ln 10) = 1.0965); 64
// GPUs or a larger model are outside and say why.
TEST(Uncertainty, EnvelopeFollowsWhatWasMeasured) {
  SystemProfile p = Profile("dgx-a100-80gb");
  const Workload w = testing::Model("megatron-22b");
  absl::StatusOr<Estimate> probe = EstimateIteration(w, testing::Config(8, 1, 1, 1, 8), p);
  ASSERT_TRUE(probe.ok());
  p.calibration.regimes.push_back({"nvlink", {}, 300, 0.04, 8, probe->model_flops_per_token / 6});
  const Uncertainty in = PredictionUncertainty(p, 8, probe->model_flops_per_token);
  EXPECT_TRUE(in.in_envelope);
  EXPECT_TRUE(in.notes.empty());
  EXPECT_NEAR(QuantileFactor(in.scale, 0.95), 1.0965, 2e-4);
  EXPECT_NEAR(QuantileFactor(in.scale, 0.05), 1 / 1.0965, 2e-4);
  EXPECT_DOUBLE_EQ(QuantileFactor(in.scale, 0.5), 1.0);

  const Uncertainty wide = PredictionUncertainty(p, 64, probe->model_flops_per_token);
  EXPECT_FALSE(wide.in_envelope);
  ASSERT_EQ(wide.notes.size(), 2u);
  EXPECT_EQ(wide.notes[0], "no measurement across infiniband; the nearest measured are within one nvlink domain");
  EXPECT_EQ(wide.notes[1], "64 GPUs, more than the 8 measured");
  EXPECT_DOUBLE_EQ(wide.scale, 0.132);

  const Uncertainty big = PredictionUncertainty(p, 8, 10 * probe->model_flops_per_token);
  EXPECT_FALSE(big.in_envelope);
  ASSERT_EQ(big.notes.size(), 1u);
  EXPECT_NE(big.notes[0].find("larger than the largest measured"), std::string::npos);
}

}  // namespace
}  // namespace paraplan
