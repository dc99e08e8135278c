// Collective costs by topology and placement, against hand-computed numbers: taper
// that bites only under load, rail-optimised leaves, torus hop spacing and the
// dimension-wise algorithm, dragonfly global links, step-wise halving-doubling, and the
// algorithm each collective of an estimate reports.
#include <cmath>

#include "estimator/iteration/assemble.h"
#include "estimator/iteration/comm_schedule.h"
#include "estimator/iteration/estimate.h"
#include "estimator/system/collectives.h"
#include "estimator/system/placement.h"
#include "estimator/testing/test_util.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::ExactCluster;
using testing::Level;

constexpr double kGB = 1e9;

// Leaves of 64 GPUs (8 nodes) at 10 GB/s a GPU under a 4:1 tapered spine, 64 nodes.
SystemProfile Tapered() {
  return ExactCluster(64, {Level("leaf", 64, 10), Level("spine", 0, 10, Topology::kFatTree, 4)});
}

// The folded expert grid on 256 H100s (8 a node) at TP 4 PP 8 DP 8: with EP 8 and
// expert-TP 1 an EP group is one node (ranks 0-7) and the experts' 4 replicas sit 8
// ranks apart, one per node; with expert-TP = TP 4 the EP group strides 4 over 4 nodes
// (2 members a node) and leaves one replica.
TEST(Topology, FoldedExpertGroupsOn256Gpus) {
  const SystemProfile p = testing::Profile("dgx-h100-80gb");
  const Hardware hw(p, Precision::kBf16);
  const Collectives coll(hw);
  ParallelConfig c = testing::Config(4, 8, 8, 1, 64);
  c.expert_parallel = 8;
  c.expert_tensor_parallel = 1;
  const GroupSpan ep = coll.Place(c.expert_parallel, c.ExpertTensorParallel());
  EXPECT_EQ(ep.level, 0);
  DpGroups g = PlaceDataParallel(c, coll);
  EXPECT_EQ(g.expert.size, 4);
  EXPECT_EQ(g.expert.stride, 8);
  EXPECT_EQ(g.expert.level, 1);
  EXPECT_EQ(g.expert.inner, 1);
  c.expert_tensor_parallel = 4;
  const GroupSpan wide = coll.Place(c.expert_parallel, c.ExpertTensorParallel());
  EXPECT_EQ(wide.level, 1);
  EXPECT_EQ(wide.inner, 2);
  g = PlaceDataParallel(c, coll);
  EXPECT_EQ(g.expert.size, 1);
}

// TP 4 x CP 4 x DP 4 on nodes of 8, one pipeline stage: the cp x dp gradient group is 16
// ranks 4 apart whichever rank order names it, two to a node (a member's 4 cp ranks span
// two nodes), and the data-parallel time is the same.
// `c`'s gradient group on `p` in both rank orders: `size` ranks crossing `level`, `inner`
// of them in a domain below it.
void ExpectDenseGroupInBothOrders(const SystemProfile& p, ParallelConfig c, int size, int level, int inner) {
  const Hardware hw(p, Precision::kBf16);
  const Collectives coll(hw);
  for (RankOrder order : {RankOrder::kTpCpEpDpPp, RankOrder::kTpCpEpPpDp}) {
    c.rank_order = order;
    const DpGroups g = PlaceDataParallel(c.Normalized(), coll);
    EXPECT_EQ(g.dense.size, size);
    EXPECT_EQ(g.dense.level, level);
    EXPECT_EQ(g.dense.inner, inner) << static_cast<int>(order);
  }
}

TEST(Topology, ContextRanksAcrossNodesPlaceAlikeInBothRankOrders) {
  const SystemProfile p = testing::Profile("dgx-h100-80gb");
  ParallelConfig c = testing::Config(4, 1, 4, 1, 128);
  c.context_parallel = 4;
  c.zero_stage = 3;
  c.sequence_parallel = true;
  c.flash_attention = true;
  ExpectDenseGroupInBothOrders(p, c, 16, 1, 2);
  const Workload w = testing::Model("llama3-70b");
  c.rank_order = RankOrder::kTpCpEpDpPp;
  absl::StatusOr<Estimate> a = EstimateIteration(w, c, p);
  c.rank_order = RankOrder::kTpCpEpPpDp;
  absl::StatusOr<Estimate> b = EstimateIteration(w, c, p);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_DOUBLE_EQ(a->time.dp_comm_s, b->time.dp_comm_s);
  EXPECT_DOUBLE_EQ(a->iteration_time_s, b->iteration_time_s);
}

// The same on a 72-GPU NVLink domain (GB300 NVL72, 4 a node): TP 8 x CP 2 x DP 8 is a
// gradient group of 16 ranks 8 apart, 9 of them in the first domain (ranks 0-64), in
// either order. Until stop 68 tp-cp-ep-pp-dp composed it from its cp group (both in a
// domain) and its dp group (4 a domain, 16 apart) as 8 a domain, and the ZeRO-3 gathers
// of Megatron-530B ran 12 % slower than the same placement named tp-cp-ep-dp-pp
// (property_sweep.py seed 70: 46 such pairs).
TEST(Topology, OneStagesRankOrdersPlaceAlikeOnAWideDomain) {
  ParallelConfig c = testing::Config(8, 1, 8, 1, 128);
  c.context_parallel = 2;
  ExpectDenseGroupInBothOrders(testing::Profile("gb300-nvl72"), c, 16, 1, 9);
}

TEST(Topology, TaperBitesOnlyWhenTheJobFillsTheLeaf) {
  const SystemProfile p = Tapered();
  const Hardware hw(p, Precision::kBf16);
  // The whole cluster: every leaf full, 64 rings (one member per leaf each) leave every
  // leaf at once: 10 / 4 GB/s each. 2 x 7/8 x 1 GB / 2.5 GB/s = 0.7 s.
  const Collectives full(hw, JobLayout(512, 8, 64, Placement::kPacked));
  const GroupSpan across = full.Place(8, 64);
  EXPECT_EQ(across.level, 2);
  EXPECT_EQ(across.inner, 1);
  EXPECT_NEAR(full.AllReduce(kGB, across, CollectiveAlgorithm::kRing), 2 * 7.0 / 8 / 2.5, 1e-9);
  // 64 GPUs scattered one node a leaf: the same ring shape crosses the spine, but only
  // 8 GPUs of the job share each leaf's 64 x 10 / 4 GB/s of uplinks: full 10 GB/s.
  const Collectives scattered(hw, JobLayout(64, 8, 64, Placement::kScattered));
  const GroupSpan s = scattered.Place(8, 8);
  EXPECT_EQ(s.level, 2);
  EXPECT_EQ(s.inner, 1);
  EXPECT_NEAR(scattered.AllReduce(kGB, s, CollectiveAlgorithm::kRing), 2 * 7.0 / 8 / 10, 1e-9);
  // Packed, the same 64 GPUs sit under one leaf and never reach the spine.
  const Collectives packed(hw, JobLayout(64, 8, 64, Placement::kPacked));
  const GroupSpan k = packed.Place(8, 8);
  EXPECT_EQ(k.level, 1);
  EXPECT_NEAR(packed.AllReduce(kGB, k, CollectiveAlgorithm::kRing), 2 * 7.0 / 8 / 10, 1e-9);
  // Without a layout, domains count as full (the profile-wide view): the taper applies.
  const Collectives plain(hw);
  EXPECT_NEAR(plain.AllReduce(kGB, plain.Place(8, 64), CollectiveAlgorithm::kRing), 0.7, 1e-9);
}

// A leaf of radix 32 under a 2:1 spine: 21 down ports.
SystemProfile Radix(bool rail) {
  NetworkLevel leaf = Level("leaf", 0, 25);
  leaf.switch_radix = 32;
  leaf.rail_optimized = rail;
  return ExactCluster(64, {leaf, Level("spine", 0, 25, Topology::kFatTree, 2)});
}

TEST(Topology, RadixAndRailsSetTheLeafDomain) {
  // floor(32 x 2/3) = 21 ports: 21 GPUs -> 2 whole nodes (16), or 21 nodes' rails (168).
  EXPECT_EQ(ResolvedDomainSize(Radix(false), 1), 16);
  EXPECT_EQ(ResolvedDomainSize(Radix(true), 1), 168);
  EXPECT_EQ(ResolvedDomainSize(Radix(true), 2), 512);
}

TEST(Topology, RailOptimisedKeepsSameRankGpusOneHopApart) {
  // 16 GPUs of one local rank on 16 nodes, all-to-all of 1 GB each (every rank sends at
  // once). Rails: one leaf, 15/16 GB at 25 GB/s = 37.5 ms. Ordinary leaves (2 nodes):
  // 1/16 GB to the leaf-mate, 14/16 GB over the 2:1 spine at 12.5 GB/s = 70 ms.
  for (bool rail : {true, false}) {
    const SystemProfile p = Radix(rail);
    const Hardware hw(p, Precision::kBf16);
    const Collectives c(hw, JobLayout(512, 8, 64, Placement::kPacked));
    const GroupSpan g = c.Place(16, 8);
    EXPECT_EQ(g.level, rail ? 1 : 2);
    EXPECT_NEAR(c.AllToAll(kGB, g), rail ? 15.0 / 16 / 25 : 14.0 / 16 / 12.5, 1e-9) << rail;
  }
}

// 64 nodes on a 4 x 4 x 4 torus, 10 GB/s a link and direction.
SystemProfile Torus(double latency_us = 0) {
  NetworkLevel t = Level("torus", 0, 10, Topology::kTorus3D);
  t.torus_dims = {4, 4, 4};
  t.latency_us = latency_us;
  SystemProfile p = ExactCluster(64, {t});
  p.calibration.network[1].latency_us = latency_us > 0 ? latency_us : 1e-9;
  return p;
}

TEST(Topology, TorusRingsShareLinksWithInterleavedGroups) {
  const SystemProfile p = Torus();
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw, JobLayout(512, 8, 64, Placement::kPacked));
  // Four neighbours along x: the node's 8 GPUs (8 concurrent rings) share the x+ and x-
  // links: 2 x 10 / 8 = 2.5 GB/s a ring. 2 x 3/4 x 1 GB / 2.5 = 0.6 s.
  EXPECT_NEAR(c.AllReduce(kGB, c.Place(4, 8), CollectiveAlgorithm::kRing), 0.6, 1e-9);
  // Every other node along x: the interleaved groups share each link too: 1.2 s.
  EXPECT_NEAR(c.AllReduce(kGB, c.Place(2, 16), CollectiveAlgorithm::kRing), 2 * 0.5 / 1.25, 1e-9);
  // A stride of a whole row moves along y, one hop: as the x neighbours.
  EXPECT_NEAR(c.AllReduce(kGB, c.Place(4, 32), CollectiveAlgorithm::kRing), 0.6, 1e-9);
}

TEST(Topology, DimensionWiseTorusAlgorithmSavesLatencySteps) {
  const SystemProfile p = Torus(10);
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw, JobLayout(512, 8, 64, Placement::kPacked));
  const GroupSpan g = c.Place(64, 8);  // one GPU a node, the whole torus
  // Bandwidth: x, y, z rings at 2.5 GB/s on 1, 1/4, 1/16 GB: 2 x 3/4 x (1 + 1/4 + 1/16)
  // / 2.5 = 0.7875 s, shared by the three dimensions' links at once: 0.2625 s; latency
  // 2 x 3 steps a dimension x 10 us = 180 us.
  const double torus = 0.7875 / 3 + 18 * 10e-6;
  EXPECT_NEAR(c.AllReduce(kGB, g, CollectiveAlgorithm::kTorus2D), torus, 1e-7);
  // A flat ring: the same 2 x 63/64 x 1 GB / 2.5 GB/s, but 126 steps of 10 us.
  const double ring = 2 * 63.0 / 64 / 2.5 + 126 * 10e-6;
  EXPECT_NEAR(c.AllReduce(kGB, g, CollectiveAlgorithm::kRing), ring, 1e-7);
  CollectiveAlgorithm used = CollectiveAlgorithm::kAuto;
  c.AllReduce(kGB, g, CollectiveAlgorithm::kAuto, &used);
  EXPECT_EQ(used, CollectiveAlgorithm::kTorus2D);
}

TEST(Topology, DragonflyRingsLeaveAGroupOverItsGlobalLinks) {
  NetworkLevel global = Level("global", 0, 25, Topology::kDragonfly);
  global.global_links_per_group = 4;
  global.global_link_gbytes_per_s = 25;
  const SystemProfile p = ExactCluster(64, {Level("group", 64, 25), global});
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw, JobLayout(512, 8, 64, Placement::kPacked));
  // 8 groups; 64 rings (one member a group) leave each group over max(4/7 direct, 4/2
  // routed) = 2 links of 25 GB/s: 50/64 GB/s a ring. 2 x 7/8 / (50/64) = 2.24 s.
  EXPECT_NEAR(c.AllReduce(kGB, c.Place(8, 64), CollectiveAlgorithm::kRing), 2 * 7.0 / 8 / (50.0 / 64), 1e-9);
}

TEST(Topology, HalvingDoublingStepsRunOnTheLevelTheirDistanceCrosses) {
  const SystemProfile p = ExactCluster(64, {Level("ib", 0, 10)});
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw, JobLayout(16, 8, 64, Placement::kPacked));
  const GroupSpan g = c.Place(16, 1);  // two nodes of 8
  // Standard order: 1/2 GB to the other node at 10 GB/s, then 1/4, 1/8, 1/16 inside at
  // 100, each twice (reduce-scatter and all-gather): 0.1 + 0.005 + 0.0025 + 0.00125.
  EXPECT_NEAR(c.AllReduce(kGB, g, CollectiveAlgorithm::kHalvingDoubling), 0.10875, 1e-9);
  // Topology-aware: 1/2, 1/4, 1/8 inside, 1/16 across: 0.01 + 0.005 + 0.0025 + 0.0125.
  EXPECT_NEAR(c.AllReduce(kGB, g, CollectiveAlgorithm::kTopoHalvingDoubling), 0.03, 1e-9);
}

TEST(Topology, EstimateReportsEachCollectiveAndItsAlgorithm) {
  const SystemProfile p = testing::Profile("dgx-a100-80gb");
  const Workload w = testing::Model("megatron-22b");
  ParallelConfig cfg = testing::Config(8, 1, 4, 1, 64);
  cfg.dp_algorithm = CollectiveAlgorithm::kTree;
  absl::StatusOr<Estimate> e = EstimateIteration(w, cfg, p);
  ASSERT_TRUE(e.ok()) << e.status();
  const CollectiveUse* tp = nullptr;
  const CollectiveUse* dp = nullptr;
  for (const CollectiveUse& u : e->collectives) {
    if (u.dimension == "tp") tp = &u;
    if (u.dimension == "dp") dp = &u;
  }
  ASSERT_NE(tp, nullptr);
  ASSERT_NE(dp, nullptr);
  // TP: b x s x h x 2 bytes = 1 x 2048 x 6144 x 2, four a layer, 48 layers, 16 micro-batches.
  EXPECT_EQ(tp->kind, CollectiveKind::kAllReduce);
  EXPECT_DOUBLE_EQ(tp->bytes, 2048.0 * 6144 * 2);
  EXPECT_DOUBLE_EQ(tp->calls, 4.0 * 48 * 16);
  EXPECT_EQ(tp->level, 0);
  EXPECT_EQ(tp->algorithm, CollectiveAlgorithm::kRing);  // NCCL: rings inside NVLink
  // DP: pinned to the tree, one member a node over 4 nodes, reported as such.
  EXPECT_EQ(dp->algorithm, CollectiveAlgorithm::kTree);
  EXPECT_EQ(dp->group_size, 4);
  EXPECT_EQ(dp->stride, 8);
  EXPECT_EQ(dp->level_name, "infiniband");
  const Hardware hw(p, w.precision);
  const Collectives coll(hw);
  EXPECT_DOUBLE_EQ(dp->seconds_per_call, coll.AllReduce(dp->bytes, coll.Place(4, 8), CollectiveAlgorithm::kTree));
}

}  // namespace
}  // namespace paraplan
