#include "estimator/estimate.h"

#include "estimator/test_util.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::Config;
using testing::Model;
using testing::Profile;

double Sum(const TimeBreakdown& t) { return t.Sum(); }

TEST(Estimate, BreakdownSumsToIterationTime) {
  const SystemProfile p = Profile("dgx-a100-80gb");
  ParallelConfig configs[] = {Config(8, 8, 16, 1, 1536, Recompute::kSelective),
                              Config(4, 4, 8, 2, 512, Recompute::kFull), Config(1, 1, 8, 1, 64)};
  configs[0].sequence_parallel = true;
  configs[0].virtual_pipeline_stages = 3;
  configs[1].zero_stage = 3;
  configs[1].overlap_grad_reduce = true;
  configs[1].offload.optimizer = true;
  configs[2].zero_stage = 1;
  Workload w = Model("gpt3-175b");
  Workload small = Model("llama3-8b");
  small.dataset.sample_bytes = 1 << 20;
  const Workload* workloads[] = {&w, &w, &small};
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<Estimate> e = EstimateIteration(*workloads[i], configs[i], p);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_NEAR(Sum(e->time), e->iteration_time_s, 1e-12 * e->iteration_time_s);
    EXPECT_GT(e->iteration_time_s, 0);
    EXPECT_GT(e->energy_per_iteration_j, 0);
    EXPECT_GT(e->cost_per_iteration_usd, 0);
    EXPECT_FALSE(e->bottleneck.empty());
  }
}

TEST(Estimate, MoreDataParallelismNeverRaisesWeightMemoryUnderZero3) {
  const SystemProfile p = Profile("dgx-h100-80gb");
  double previous = 1e30;
  for (int dp : {1, 2, 4, 8, 16, 32}) {
    ParallelConfig c = Config(8, 1, dp, 1, 64);
    c.zero_stage = 3;
    absl::StatusOr<Estimate> e = EstimateIteration(Model("llama3-70b"), c, p);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_LE(e->memory.weights_bytes, previous);
    previous = e->memory.weights_bytes;
  }
}

TEST(Estimate, ZeroStagesShardExactlyTheirTerms) {
  const SystemProfile p = Profile("dgx-a100-80gb");
  auto memory = [&](int zero) {
    ParallelConfig c = Config(8, 1, 4, 1, 4);
    c.zero_stage = zero;
    return EstimateIteration(Model("llama3-8b"), c, p)->memory;
  };
  const MemoryBreakdown z0 = memory(0), z1 = memory(1), z2 = memory(2), z3 = memory(3);
  EXPECT_NEAR(z1.optimizer_bytes * 4, z0.optimizer_bytes, 1);
  EXPECT_EQ(z1.gradients_bytes, z0.gradients_bytes);
  EXPECT_EQ(z1.weights_bytes, z0.weights_bytes);
  EXPECT_NEAR(z2.gradients_bytes * 4, z0.gradients_bytes, 1);
  EXPECT_EQ(z2.weights_bytes, z0.weights_bytes);
  EXPECT_NEAR(z3.weights_bytes * 4, z0.weights_bytes, 1);
  // Megatron-LM: 18 bytes per parameter without sharding (2 + 4 + 12).
  const double params = z0.weights_bytes / 2;
  EXPECT_NEAR((z0.weights_bytes + z0.gradients_bytes + z0.optimizer_bytes) / params, 18, 1e-9);
}

TEST(Estimate, BubbleShareFallsAsMicroBatchesGrow) {
  const SystemProfile p = Profile("dgx-a100-80gb");
  double previous = 1;
  for (int gbs : {8, 16, 32, 64, 128}) {
    absl::StatusOr<Estimate> e = EstimateIteration(Model("gpt3-175b"), Config(8, 8, 1, 1, gbs), p);
    ASSERT_TRUE(e.ok());
    const double share = e->time.pipeline_bubble_s / e->iteration_time_s;
    EXPECT_LT(share, previous);
    previous = share;
  }
}

TEST(Estimate, ModelThatCannotFitIsReportedAsNotFitting) {
  absl::StatusOr<Estimate> e =
      EstimateIteration(Model("gpt3-175b"), Config(8, 1, 1, 1, 1), Profile("dgx-a100-80gb"));
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e->memory.fits);
  EXPECT_EQ(e->bottleneck, "memory");
  EXPECT_GT(e->memory.total_bytes, e->memory.capacity_bytes);
}

TEST(Estimate, OffloadMovesStateToHost) {
  const SystemProfile p = Profile("dgx-a100-80gb");
  ParallelConfig c = Config(8, 1, 1, 1, 1);
  ParallelConfig off = c;
  off.offload.optimizer = true;
  absl::StatusOr<Estimate> a = EstimateIteration(Model("llama3-8b"), c, p);
  absl::StatusOr<Estimate> b = EstimateIteration(Model("llama3-8b"), off, p);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(b->memory.optimizer_bytes, 0);
  EXPECT_NEAR(b->memory.host_bytes, a->memory.optimizer_bytes, 1);
  EXPECT_GT(b->time.offload_s, 0);
}

TEST(Estimate, TimeToTrainFollowsTheTokenBudget) {
  Workload w = Model("llama3-8b");
  w.training_tokens = 1e12;
  ParallelConfig c = Config(1, 1, 64, 1, 256);
  absl::StatusOr<Estimate> e = EstimateIteration(w, c, Profile("dgx-h100-80gb"));
  ASSERT_TRUE(e.ok());
  const double iterations = 1e12 / (256.0 * 8192);
  EXPECT_NEAR(e->time_to_train_s, iterations * e->iteration_time_s, 1e-6 * e->time_to_train_s);
  EXPECT_NEAR(e->cost_to_train_usd, iterations * e->cost_per_iteration_usd, 1e-6 * e->cost_to_train_usd);
}

TEST(Estimate, LayerGraphDataAndSpatialParallel) {
  Workload cnn;
  cnn.name = "tiny-cnn";
  cnn.kind = Workload::Kind::kLayerGraph;
  cnn.layer_graph.layers = {
      {"conv1", "conv", {3, 224, 224}, {64, 112, 112}, {7, 7}, {2, 2}},
      {"relu1", "relu", {64, 112, 112}, {64, 112, 112}, {}, {}},
      {"conv2", "conv", {64, 112, 112}, {128, 112, 112}, {3, 3}, {1, 1}},
      {"pool", "pool", {128, 112, 112}, {128, 56, 56}, {2, 2}, {2, 2}},
      {"fc", "fc", {128, 56, 56}, {1000}, {}, {}},
  };
  const SystemProfile p = Profile("abci-v100-16gb");
  ParallelConfig data = Config(1, 1, 4, 32, 128);
  absl::StatusOr<Estimate> d = EstimateIteration(cnn, data, p);
  ASSERT_TRUE(d.ok()) << d.status();
  ParallelConfig spatial = Config(1, 1, 1, 32, 32);
  spatial.spatial_parallel = 4;
  absl::StatusOr<Estimate> s = EstimateIteration(cnn, spatial, p);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_GT(s->time.tp_comm_s, 0);  // halo exchange
  EXPECT_LT(s->memory.activations_bytes, d->memory.activations_bytes);
  EXPECT_NEAR(s->time.Sum(), s->iteration_time_s, 1e-12);
  ParallelConfig filter = Config(1, 1, 1, 32, 32);
  filter.filter_parallel = 4;
  absl::StatusOr<Estimate> f = EstimateIteration(cnn, filter, p);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_LT(f->memory.weights_bytes, d->memory.weights_bytes);
}

}  // namespace
}  // namespace paraplan
