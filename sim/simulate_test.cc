// The flow-level simulation against the analytic collective costs: agreement within
// 10 % where the analytic model describes every shared link, and the slow-downs
// sharing causes (a tapered spine, two dimensions at once, other jobs' traffic) in
// the direction and size the physics says.
#include "sim/simulate.h"

#include <cmath>

#include "estimator/collectives.h"
#include "estimator/hardware.h"
#include "estimator/placement.h"
#include "estimator/presets.h"
#include "estimator/test_util.h"
#include "gtest/gtest.h"
#include "sim/collective_flows.h"
#include "sim/iteration.h"

namespace paraplan::sim {
namespace {

constexpr double kBytes = 256.0 * 1024 * 1024;

using testing::ExactCluster;
using testing::Level;

SimCollective Op(CollectiveKind kind, CollectiveAlgorithm algo, std::vector<std::vector<int64_t>> groups) {
  return {kind, algo, kBytes, std::move(groups)};
}

double Simulated(const SystemProfile& p, const SimCollective& op, const Background& bg = {}) {
  absl::StatusOr<std::vector<double>> t = SimulateConcurrent(p, {op}, bg);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? (*t)[0] : 0;
}

TEST(Simulate, RingAcrossNodesAgreesWithTheAnalyticCost) {
  const SystemProfile p = ExactCluster(8, {Level("ib", 0, 10)});
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw);
  // One GPU on each of 8 nodes: 2 x 7/8 x 256 MiB / 10 GB/s = 46.97 ms.
  const double hand = 2 * 7.0 / 8 * kBytes / 10e9;
  EXPECT_NEAR(c.AllReduce(kBytes, c.Place(8, 8), CollectiveAlgorithm::kRing), hand, 1e-6);
  const double sim = Simulated(p, Op(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, {DimensionGroups(64, 8, 8)[0]}));
  EXPECT_NEAR(sim / hand, 1.0, 0.10) << sim;
}

TEST(Simulate, MultiGpuNodesRingOverEveryNic) {
  // 2 nodes x 8 GPUs in one ring: NCCL's 8 channels leave each node through 8 NICs:
  // 2 x 15/16 x N / min(100, 8 x 10) GB/s.
  const SystemProfile p = ExactCluster(2, {Level("ib", 0, 10)});
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw);
  const double analytic = c.AllReduce(kBytes, c.Place(16, 1), CollectiveAlgorithm::kRing);
  EXPECT_NEAR(analytic, 2 * 15.0 / 16 * kBytes / 80e9, 1e-6);
  const double sim = Simulated(p, Op(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, DimensionGroups(16, 16, 1)));
  EXPECT_NEAR(sim / analytic, 1.0, 0.10) << sim;
}

TEST(Simulate, InsideOneNodeAllGatherAndHalvingDoublingAgree) {
  const SystemProfile p = ExactCluster(1, {Level("ib", 0, 10)});
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw);
  const GroupSpan g = c.Place(8, 1);
  const double ag = Simulated(p, Op(CollectiveKind::kAllGather, CollectiveAlgorithm::kRing, DimensionGroups(8, 8, 1)));
  EXPECT_NEAR(ag / (7.0 / 8 * kBytes / 100e9), 1.0, 0.10);
  EXPECT_NEAR(ag / c.AllGather(kBytes, g), 1.0, 0.10);
  const double hd =
      Simulated(p, Op(CollectiveKind::kAllReduce, CollectiveAlgorithm::kHalvingDoubling, DimensionGroups(8, 8, 1)));
  EXPECT_NEAR(hd / c.AllReduce(kBytes, g, CollectiveAlgorithm::kHalvingDoubling), 1.0, 0.10);
}

TEST(Simulate, TorusRingsAlongARowAgree) {
  NetworkLevel t = Level("torus", 0, 10, Topology::kTorus3D);
  t.torus_dims = {4, 4, 4};
  const SystemProfile p = ExactCluster(64, {t});
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw, JobLayout(512, 8, 64, Placement::kPacked));
  // The 8 rings of a row of 4 nodes (one per local rank) share the x links both ways.
  std::vector<std::vector<int64_t>> row;
  for (int r = 0; r < 8; ++r) row.push_back({r, 8 + r, 16 + r, 24 + r});
  const double sim = Simulated(p, Op(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, row));
  EXPECT_NEAR(sim / c.AllReduce(kBytes, c.Place(4, 8), CollectiveAlgorithm::kRing), 1.0, 0.10) << sim;
}

// 4 leaves of 2 nodes; every ring has one member per leaf, so all its traffic crosses
// the spine, every GPU's at once.
SystemProfile Leaves(double taper) {
  return ExactCluster(8, {Level("leaf", 16, 10), Level("spine", 0, 10, Topology::kFatTree, taper)});
}

TEST(Simulate, TaperedSpineSlowsCrossingRingsFourfold) {
  const SimCollective op = Op(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, DimensionGroups(64, 4, 16));
  const double open = Simulated(Leaves(1), op);
  const double tapered = Simulated(Leaves(4), op);
  EXPECT_NEAR(tapered / open, 4.0, 0.4);
  // The analytic model charges the taper the same way when the job fills the leaves.
  const SystemProfile p = Leaves(4);
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw, JobLayout(64, 8, 8, Placement::kPacked));
  EXPECT_NEAR(tapered / c.AllReduce(kBytes, c.Place(4, 16), CollectiveAlgorithm::kRing), 1.0, 0.10);
}

TEST(Simulate, TwoDimensionsOnTheSameNicsShareThem) {
  // A DP ring (one GPU per node) beside a quarter-size ring of another dimension on the
  // same NICs (as many flows per NIC): each alone, then together.
  const SystemProfile p = ExactCluster(8, {Level("ib", 0, 10)});
  const SimCollective dp = Op(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, DimensionGroups(64, 8, 8));
  SimCollective other = dp;
  other.bytes = kBytes / 4;
  const double dp_alone = Simulated(p, dp);
  const double other_alone = Simulated(p, other);
  absl::StatusOr<std::vector<double>> both = SimulateConcurrent(p, {dp, other});
  ASSERT_TRUE(both.ok()) << both.status();
  // Max-min sharing is work-conserving: while both run each gets half, so the shorter
  // is delayed by its own length — the analytic contention term min(a, d) — and the
  // longer by the shorter's.
  EXPECT_NEAR((*both)[1] / (other_alone + std::min(other_alone, dp_alone)), 1.0, 0.10);
  EXPECT_NEAR((*both)[0] / (dp_alone + other_alone), 1.0, 0.10);
  // An all-to-all has 7 flows a NIC to the ring's 2: per-flow fairness gives it 7/9.
  SimCollective a2a = Op(CollectiveKind::kAllToAll, CollectiveAlgorithm::kRing, DimensionGroups(64, 8, 8));
  a2a.bytes = kBytes / 4;
  const double a2a_alone = Simulated(p, a2a);
  absl::StatusOr<std::vector<double>> mixed = SimulateConcurrent(p, {dp, a2a});
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  EXPECT_NEAR((*mixed)[1] / a2a_alone, 9.0 / 7, 0.05);
}

TEST(Simulate, BackgroundTrafficSlowsACollective) {
  // One ring across the 4:1 spine (40 GB/s of uplink a leaf); 15 other GPUs of leaf 0
  // stream to leaf 1: 17 flows share the uplink, 2.35 GB/s each instead of the ring's
  // 5 GB/s a direction.
  const SystemProfile p = Leaves(4);
  const SimCollective op = Op(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, {{0, 16, 32, 48}});
  const double quiet = Simulated(p, op);
  Background across, inside;
  for (int i = 1; i < 16; ++i) across.flows.push_back({i, 16 + i});
  EXPECT_NEAR(Simulated(p, op, across) / quiet, 5.0 / (40.0 / 17), 0.25);
  // Traffic that stays inside leaf 0 (other nodes' NICs, the leaf's switch) costs nothing.
  for (int i = 1; i < 8; ++i) inside.flows.push_back({i, 8 + i});
  EXPECT_NEAR(Simulated(p, op, inside) / quiet, 1.0, 0.02);
}

TEST(Simulate, RefusesGpusOutsideTheCluster) {
  const SystemProfile p = ExactCluster(2, {Level("ib", 0, 10)});
  absl::StatusOr<std::vector<double>> t =
      SimulateConcurrent(p, {Op(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, {{0, 99}})});
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Simulate, IterationReplaysEveryCollectiveOfAnEstimate) {
  SystemProfile p = ExactCluster(4, {Level("ib", 0, 25)});
  ParallelConfig cfg;
  cfg.tensor_parallel = 8;
  cfg.data_parallel = 4;
  cfg.micro_batch_size = 1;
  cfg.global_batch_size = 16;
  cfg.overlap_grad_reduce = true;
  const Workload w = *FindModelPreset("megatron-22b");
  absl::StatusOr<Estimate> e = EstimateIteration(w, cfg, p);
  ASSERT_TRUE(e.ok()) << e.status();
  absl::StatusOr<IterationSimulation> s = SimulateIteration(p, *e, JobLayout(32, 8, 4, Placement::kPacked));
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->collectives.size(), e->collectives.size());
  for (const CollectiveComparison& c : s->collectives) {
    EXPECT_GT(c.simulated_alone_s, 0) << c.use.dimension;
    EXPECT_NEAR(c.simulated_alone_s / c.use.seconds_per_call, 1.0, 0.15) << c.use.dimension;
  }
  EXPECT_NEAR(s->simulated_iteration_s / s->analytic_iteration_s, 1.0, 0.10);
}

}  // namespace
}  // namespace paraplan::sim
