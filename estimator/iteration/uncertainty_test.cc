#include "estimator/iteration/uncertainty.h"

#include <cmath>

#include "estimator/inputs/measured_features.h"
#include "estimator/iteration/estimate.h"
#include "estimator/testing/test_util.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::Profile;

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

// A CNN on a profile never calibrated: the floor is the model's error on ParaDL's published
// CNN runs, 33.0 % = Laplace scale 0.33: factor exp(0.33 ln 10) = 2.1380 at 90 %.
TEST(Uncertainty, UncalibratedCnnGetsTheCnnError) {
  const SystemProfile p = Profile("abci-v100-16gb");
  const Uncertainty cnn = PredictionUncertainty(p, 4, 1e9, kFeatureLayerGraph | kFeatureCnnSplit);
  EXPECT_FALSE(cnn.in_envelope);
  ASSERT_EQ(cnn.notes.size(), 1u);
  EXPECT_NE(cnn.notes[0].find("published runs (of CNNs: 33.0 %)"), std::string::npos) << cnn.notes[0];
  EXPECT_NEAR(QuantileFactor(cnn.scale, 0.95), 2.1380, 2e-4);
  EXPECT_DOUBLE_EQ(PredictionUncertainty(p, 4, 1e9, kFeatureTransformer).scale, 0.132);
  // Through an estimate of a CNN workload.
  absl::StatusOr<Estimate> e = EstimateIteration(testing::Model("alexnet"), testing::Config(1, 1, 4, 1, 32), p);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_NEAR(e->interval.high_s / e->iteration_time_s, 2.1380, 2e-4);
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

// Calibrated on fp16 runs with tensor parallelism only: an FP8 run with context
// parallelism and ZeRO-3 lies outside the envelope, naming what no measurement used, with
// the wider interval; a calibration from before features were recorded (0) says nothing.
TEST(Uncertainty, FeaturesNoMeasurementUsedAreOutside) {
  SystemProfile p = Profile("dgx-a100-80gb");
  const Workload w = testing::Model("megatron-22b");
  absl::StatusOr<Estimate> probe = EstimateIteration(w, testing::Config(8, 1, 1, 1, 8), p);
  ASSERT_TRUE(probe.ok());
  RegimeCalibration g{"nvlink", {}, 300, 0.04, 8, probe->model_flops_per_token / 6};
  g.measured_features = kFeatureTransformer | kFeatureTensorParallel;
  p.calibration.regimes.push_back(g);
  const double flops = probe->model_flops_per_token;
  EXPECT_TRUE(PredictionUncertainty(p, 8, flops, kFeatureTransformer | kFeatureTensorParallel).in_envelope);
  const Uncertainty out = PredictionUncertainty(
      p, 8, flops, kFeatureTransformer | kFeatureContextParallel | kFeatureShardedWeights | kFeatureLowPrecision);
  EXPECT_FALSE(out.in_envelope);
  ASSERT_EQ(out.notes.size(), 1u);
  EXPECT_EQ(out.notes[0],
            "no measurement used context parallelism, weights sharded by ZeRO-3 / FSDP, FP8 / FP4 linears");
  EXPECT_DOUBLE_EQ(out.scale, 0.132);
  p.calibration.regimes[0].measured_features = 0;
  EXPECT_TRUE(PredictionUncertainty(p, 8, flops, kFeatureContextParallel).in_envelope);
  // Through an estimate: FeaturesOf the workload and configuration.
  ParallelConfig fp8 = testing::Config(8, 1, 1, 1, 8);
  fp8.zero_stage = 3;
  EXPECT_EQ(FeaturesOf(w, fp8), kFeatureTransformer | kFeatureTensorParallel | kFeatureShardedWeights);
  Workload moe = testing::Model("qwen3-30b-a3b");
  moe.precision = Precision::kFp8;
  ParallelConfig ep = testing::Config(1, 2, 1, 1, 8);
  ep.expert_parallel = 2;
  EXPECT_EQ(FeaturesOf(moe, ep), kFeatureTransformer | kFeaturePipelineParallel | kFeatureMoe |
                                     kFeatureExpertParallel | kFeatureLowPrecision);
}

}  // namespace
}  // namespace paraplan
