// The flow-level simulation against the analytic collective costs: agreement within
// 10 % where the analytic model describes every shared link, and the slow-downs
// sharing causes (a tapered spine, two dimensions at once, other jobs' traffic) in
// the direction and size the physics says.
#include "sim/simulate.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <thread>

#include "absl/time/clock.h"
#include "estimator/catalog/presets.h"
#include "estimator/system/collectives.h"
#include "estimator/system/hardware.h"
#include "estimator/system/placement.h"
#include "estimator/testing/test_util.h"
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

// The same cluster with real per-level latencies and a per-call cost.
SystemProfile WithLatency(SystemProfile p, std::vector<double> latency_us, double overhead_us) {
  for (size_t i = 0; i < latency_us.size() && i < p.calibration.network.size(); ++i) {
    p.calibration.network[i].latency_us = latency_us[i];
  }
  p.calibration.collective_overhead_us = overhead_us;
  return p;
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

TEST(Simulate, TorusDimensionWiseAllReduceAgrees) {
  // 4 x 4 x 4 nodes; the 8 data-parallel groups (one GPU a node each) all-reduce
  // dimension by dimension, the buffer split over x, y and z at once.
  NetworkLevel t = Level("torus", 0, 10, Topology::kTorus3D);
  t.torus_dims = {4, 4, 4};
  const SystemProfile p = WithLatency(ExactCluster(64, {t}), {1, 5}, 35);
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw, JobLayout(512, 8, 64, Placement::kPacked));
  const double analytic = c.AllReduce(kBytes, c.Place(64, 8), CollectiveAlgorithm::kTorus2D);
  const double sim = Simulated(p, Op(CollectiveKind::kAllReduce, CollectiveAlgorithm::kTorus2D, DimensionGroups(512, 64, 8)));
  EXPECT_NEAR(sim / analytic, 1.0, 0.10) << sim << " vs " << analytic;
  // 4 x 4 nodes, the whole job in one group: reduce-scatter inside the node (8 members
  // a vertex, 7/8 N at 100 GB/s), then each member's N/8 along x and y, the vertex's 8
  // members sharing its links (2 x 10 GB/s / 8 a member, both directions), then the
  // mirror: 35 us + 2 (7 us + 7/8 N / 100 GB/s) + 12 x 5 us
  // + (3/2 N/8 + 3/2 N/32) / 2.5 GB/s / 2 dimensions = 17.4 ms.
  NetworkLevel t2 = Level("torus", 0, 10, Topology::kTorus2D);
  t2.torus_dims = {4, 4};
  const SystemProfile q = WithLatency(ExactCluster(16, {t2}), {1, 5}, 35);
  const double hand = 35e-6 + 2 * (7e-6 + 7.0 / 8 * kBytes / 100e9) + 60e-6 +
                      (1.5 * kBytes / 8 + 1.5 * kBytes / 32) / 2.5e9 / 2;
  const double sim2 = Simulated(q, Op(CollectiveKind::kAllReduce, CollectiveAlgorithm::kTorus2D, DimensionGroups(128, 128, 1)));
  EXPECT_NEAR(sim2 / hand, 1.0, 0.02) << sim2;
  // (The analytic TorusDims gives 6.4 ms here: it divides the buffer by the members a
  // vertex holds and also multiplies their ring rate by them.)
}

TEST(Simulate, TorusNeighbourLinkIsSharedByTheVertexGpus) {
  // Pipeline sends between neighbouring nodes of a 4 x 4 x 4 torus: the 8 GPUs of node
  // 0 send to their peers on node 1 over the one x+ link (10 GB/s): 8 N / 10 GB/s.
  // (The analytic SendRecv charges N / 10 GB/s: a neighbour "has its own link".)
  NetworkLevel t = Level("torus", 0, 10, Topology::kTorus3D);
  t.torus_dims = {4, 4, 4};
  const SystemProfile p = ExactCluster(64, {t});
  std::vector<std::vector<int64_t>> pairs;
  for (int r = 0; r < 8; ++r) pairs.push_back({r, 8 + r});
  const double sim = Simulated(p, Op(CollectiveKind::kSendRecv, CollectiveAlgorithm::kRing, pairs));
  EXPECT_NEAR(sim / (8 * kBytes / 10e9), 1.0, 0.01) << sim;
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

TEST(Simulate, LatencyAndCallCostAreChargedPerStepAndPerCall) {
  // 1 MiB over 8 nodes: 35 us + 2 x 7 x 5 us + 2 x 7/8 x 1 MiB / 10 GB/s = 288.5 us.
  const SystemProfile p = WithLatency(ExactCluster(8, {Level("ib", 0, 10)}), {1, 5}, 35);
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw);
  const double mib = 1024.0 * 1024;
  const double hand = 35e-6 + 14 * 5e-6 + 2 * 7.0 / 8 * mib / 10e9;
  EXPECT_NEAR(c.AllReduce(mib, c.Place(8, 8), CollectiveAlgorithm::kRing), hand, 1e-9);
  SimCollective ring = Op(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, {DimensionGroups(64, 8, 8)[0]});
  ring.bytes = mib;
  EXPECT_NEAR(Simulated(p, ring) / hand, 1.0, 0.02);
  // Tree: 2 ceil(log2 8) latencies and 2 N / B: 35 + 30 + 209.7 us.
  SimCollective tree = ring;
  tree.algorithm = CollectiveAlgorithm::kTree;
  const double tree_hand = 35e-6 + 6 * 5e-6 + 2 * mib / 10e9;
  EXPECT_NEAR(c.AllReduce(mib, c.Place(8, 8), CollectiveAlgorithm::kTree), tree_hand, 1e-9);
  EXPECT_NEAR(Simulated(p, tree) / tree_hand, 1.0, 0.02);
  // A pipeline send: one latency and N / B on top of the call.
  SimCollective send = Op(CollectiveKind::kSendRecv, CollectiveAlgorithm::kRing, {{0, 8}});
  send.bytes = mib;
  EXPECT_NEAR(Simulated(p, send) / (35e-6 + 5e-6 + mib / 10e9), 1.0, 0.02);
}

TEST(Simulate, SizeDependentEfficiencyFollowsTheCall) {
  // The network level's bus-bandwidth curve: 40 % at 1 MiB, 90 % from 64 MiB.
  SystemProfile p = ExactCluster(8, {Level("ib", 0, 10)});
  p.calibration.network[1].bandwidth_curve = {{1 << 20, 0.4}, {64 << 20, 0.9}};
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw);
  for (double bytes : {1024.0 * 1024, kBytes}) {
    SimCollective op = Op(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, {DimensionGroups(64, 8, 8)[0]});
    op.bytes = bytes;
    const double analytic = c.AllReduce(bytes, c.Place(8, 8), CollectiveAlgorithm::kRing);
    EXPECT_NEAR(analytic / (2 * 7.0 / 8 * bytes / (bytes > 1e8 ? 9e9 : 4e9)), 1.0, 1e-3);
    EXPECT_NEAR(Simulated(p, op) / analytic, 1.0, 0.02) << bytes;
  }
}

TEST(Simulate, FlowsOfDifferentLatencyShareALinkEqually) {
  // GPU 0 sends to its leaf (2 us away) and across the spine (50 us away) at once: pure
  // max-min gives each half the NIC; CM02's default RTT weighting would give the near
  // flow ~25x the far one's rate.
  SystemProfile p = ExactCluster(8, {Level("leaf", 16, 10), Level("spine", 0, 10)});
  p = WithLatency(p, {0, 2, 50}, 0);
  SimCollective near = Op(CollectiveKind::kSendRecv, CollectiveAlgorithm::kRing, {{0, 8}});
  SimCollective far = Op(CollectiveKind::kSendRecv, CollectiveAlgorithm::kRing, {{0, 16}});
  absl::StatusOr<std::vector<double>> both = SimulateConcurrent(p, {near, far});
  ASSERT_TRUE(both.ok()) << both.status();
  const double shared = 2 * kBytes / 10e9;  // 53.7 ms
  EXPECT_NEAR((*both)[0] / shared, 1.0, 0.01);
  EXPECT_NEAR((*both)[1] / shared, 1.0, 0.01);
}

TEST(Simulate, TreeHierarchicalAndHalvingDoublingAcrossNodesAgree) {
  // 8 nodes x 8 GPUs on a full-bisection switch, every member of the job in one group.
  const SystemProfile p = WithLatency(ExactCluster(8, {Level("ib", 0, 10)}), {1, 5}, 35);
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw);
  const GroupSpan all = c.Place(64, 1);
  const std::vector<std::vector<int64_t>> job = DimensionGroups(64, 64, 1);
  // Double binary tree per channel: 2 N / (8 NICs x 10 GB/s) = 6.7 ms.
  const double tree = Simulated(p, Op(CollectiveKind::kAllReduce, CollectiveAlgorithm::kTree, job));
  EXPECT_NEAR(tree / c.AllReduce(kBytes, all, CollectiveAlgorithm::kTree), 1.0, 0.10) << tree;
  // Hierarchical: 2 x 7/8 N / 100 GB/s inside + 2 x 7/8 N/8 / 10 GB/s across = 10.6 ms.
  const double hier = Simulated(p, Op(CollectiveKind::kAllReduce, CollectiveAlgorithm::kHierarchical, job));
  const double hier_hand = 35e-6 + 2 * (7 * 1e-6 + 7.0 / 8 * kBytes / 100e9) + 14 * 5e-6 + 2 * 7.0 / 8 * kBytes / 8 / 10e9;
  EXPECT_NEAR(c.AllReduce(kBytes, all, CollectiveAlgorithm::kHierarchical) / hier_hand, 1.0, 1e-6);
  EXPECT_NEAR(hier / hier_hand, 1.0, 0.10) << hier;
  // Halving-doubling, one GPU a node: every step on the member's own NIC.
  const SimCollective hd = Op(CollectiveKind::kAllReduce, CollectiveAlgorithm::kHalvingDoubling, {DimensionGroups(64, 8, 8)[0]});
  const double hd_hand = 35e-6 + 6 * 5e-6 + 2 * 7.0 / 8 * kBytes / 10e9;
  EXPECT_NEAR(c.AllReduce(kBytes, c.Place(8, 8), CollectiveAlgorithm::kHalvingDoubling) / hd_hand, 1.0, 1e-6);
  EXPECT_NEAR(Simulated(p, hd) / hd_hand, 1.0, 0.10);
  // Topology-aware order on 2 nodes x 8: three NVLink steps on N/2, N/4, N/8 first,
  // then N/16 across, and back.
  const SimCollective topo =
      Op(CollectiveKind::kAllReduce, CollectiveAlgorithm::kTopoHalvingDoubling, DimensionGroups(16, 16, 1));
  const double topo_hand = 35e-6 + 2 * (3 * 1e-6 + 7.0 / 8 * kBytes / 100e9 + 5e-6 + kBytes / 16 / 10e9);
  EXPECT_NEAR(c.AllReduce(kBytes, c.Place(16, 1), CollectiveAlgorithm::kTopoHalvingDoubling) / topo_hand, 1.0, 1e-6);
  EXPECT_NEAR(Simulated(p, topo) / topo_hand, 1.0, 0.10);
}

TEST(Simulate, AllToAllAcrossNodesAgrees) {
  // 64 GPUs exchange: 56/64 of each GPU's N leaves through its NIC, 7/64 over NVLink at
  // the same time: 35 us + 63 x 5 us + 56/64 x N / 10 GB/s = 23.8 ms.
  const SystemProfile p = WithLatency(ExactCluster(8, {Level("ib", 0, 10)}), {1, 5}, 35);
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw);
  const double hand = 35e-6 + 63 * 5e-6 + 56.0 / 64 * kBytes / 10e9;
  EXPECT_NEAR(c.AllToAll(kBytes, c.Place(64, 1)) / hand, 1.0, 1e-6);
  const double sim = Simulated(p, Op(CollectiveKind::kAllToAll, CollectiveAlgorithm::kRing, DimensionGroups(64, 64, 1)));
  EXPECT_NEAR(sim / hand, 1.0, 0.02) << sim;
}

// DeepEP's dispatch replayed as priced: DeepSeek-V3's routing (8 of 256 experts, within
// 4 of 8 groups) over 64 GPUs on 8 nodes sends each token once to 3.18 other nodes'
// same local rank (RDMA) and forwards it inside the node; the replay's flows carry the
// analytic per-peer bytes, and the NICs bound it as the analytic max(intra, inter) says.
TEST(Simulate, DeepEpDispatchAgrees) {
  const SystemProfile p = WithLatency(ExactCluster(8, {Level("ib", 0, 10)}), {1, 5}, 35);
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw);
  const GroupSpan g = c.Place(64, 1);
  const TokenSpread spread{8, 256, 8, 4};
  Collectives::DedupFlows f;
  const double analytic = c.DedupAllToAll(kBytes, spread, g, &f);
  const double tokens = kBytes / 8;
  EXPECT_NEAR(7 * f.to_node / tokens, 3.175, 0.001);
  SimCollective op = Op(CollectiveKind::kAllToAll, CollectiveAlgorithm::kHierarchical, DimensionGroups(64, 64, 1));
  op.dedup_to_node_bytes = f.to_node;
  op.dedup_to_rank_bytes = f.to_rank;
  const double sim = Simulated(p, op);
  EXPECT_NEAR(sim / analytic, 1.0, 0.03) << sim << " vs " << analytic;
  // Well below the plain all-to-all of every copy.
  EXPECT_LT(sim, 0.5 * Simulated(p, Op(CollectiveKind::kAllToAll, CollectiveAlgorithm::kRing, DimensionGroups(64, 64, 1))));
}

TEST(Simulate, DragonflyGlobalLinksBoundRingsBetweenGroups) {
  // Groups of 2 nodes (16 GPUs); 4 global links of 25 GB/s per group. With 2 groups the
  // pair has all 4: the 16 two-member rings between them get 100 / 16 = 6.25 GB/s each
  // (below the 10 GB/s NIC): N / 6.25 GB/s, as the analytic model charges.
  NetworkLevel fly = Level("global", 0, 10, Topology::kDragonfly);
  fly.global_links_per_group = 4;
  fly.global_link_gbytes_per_s = 25;
  const SystemProfile two = ExactCluster(4, {Level("group", 16, 10), fly});
  const Hardware hw(two, Precision::kBf16);
  const Collectives c(hw, JobLayout(32, 8, 4, Placement::kPacked));
  const SimCollective op = Op(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, DimensionGroups(32, 2, 16));
  const double sim = Simulated(two, op);
  EXPECT_NEAR(sim / (kBytes / 6.25e9), 1.0, 0.05) << sim;
  EXPECT_NEAR(sim / c.AllReduce(kBytes, c.Place(2, 16), CollectiveAlgorithm::kRing), 1.0, 0.10);
  // 4 groups: a pair has max(1, 4 / 3) = 4/3 links' worth (33.3 GB/s); minimal routing
  // leaves it, per direction, to a ring edge's 16 flows (bidirectional rings, half the
  // data each way): 6 steps of N/4 / 2 at 33.3 / 16 GB/s.
  const SystemProfile four = ExactCluster(8, {Level("group", 16, 10), fly});
  const double sparse =
      Simulated(four, Op(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, DimensionGroups(64, 4, 16)));
  EXPECT_NEAR(sparse / (6 * kBytes / 4 / 2 / (4.0 / 3 * 25e9 / 16)), 1.0, 0.05) << sparse;
}

TEST(Simulate, RailOptimisedLeavesSendAcrossRailsThroughTheRailGpu) {
  // GPU 0 -> GPU 9 (local rank 1) leaves through GPU 1's NIC (PXN), which GPU 1 -> 17
  // also uses: the two sends share it. Without rails each has its own NIC.
  SystemProfile p = ExactCluster(3, {Level("leaf", 0, 10)});
  const SimCollective a = Op(CollectiveKind::kSendRecv, CollectiveAlgorithm::kRing, {{0, 9}});
  const SimCollective b = Op(CollectiveKind::kSendRecv, CollectiveAlgorithm::kRing, {{1, 17}});
  absl::StatusOr<std::vector<double>> plain = SimulateConcurrent(p, {a, b});
  p.network_levels[1].rail_optimized = true;
  absl::StatusOr<std::vector<double>> rails = SimulateConcurrent(p, {a, b});
  ASSERT_TRUE(plain.ok() && rails.ok());
  EXPECT_NEAR((*plain)[0] / (kBytes / 10e9), 1.0, 0.01);
  EXPECT_NEAR((*rails)[0] / (*plain)[0], 2.0, 0.05);
  EXPECT_NEAR((*rails)[1] / (*plain)[1], 2.0, 0.05);
}

TEST(Simulate, LongRingsAreReplayedInSixteenSteps) {
  // 256 nodes x 8: the 8 data-parallel rings of 256 members (one per local rank) each
  // leave every node through their own NIC. 510 ring steps are replayed as 16, with
  // their latency charged 510 times: 35 us + 510 x 5 us + 2 x 255/256 x N / 10 GB/s.
  // (4,096 GPUs take ~4 s: SimGrid's cost grows with the square of concurrent flows.)
  const SystemProfile p = WithLatency(ExactCluster(256, {Level("ib", 0, 10)}), {1, 5}, 35);
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw);
  const double hand = 35e-6 + 510 * 5e-6 + 2 * 255.0 / 256 * kBytes / 10e9;
  EXPECT_NEAR(c.AllReduce(kBytes, c.Place(256, 8), CollectiveAlgorithm::kRing) / hand, 1.0, 1e-6);
  const double sim = Simulated(p, Op(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, DimensionGroups(2048, 256, 8)));
  EXPECT_NEAR(sim / hand, 1.0, 0.02) << sim;
}

TEST(Simulate, IsDeterministic) {
  const SystemProfile p = Leaves(4);
  const SimCollective op = Op(CollectiveKind::kAllToAll, CollectiveAlgorithm::kRing, DimensionGroups(64, 16, 4));
  EXPECT_EQ(Simulated(p, op), Simulated(p, op));
}

TEST(Simulate, RefusesTooLargeSimulations) {
  const SystemProfile p = ExactCluster(1024, {Level("ib", 0, 10)});
  // 8,192 GPUs: over the 4,096-host limit.
  absl::StatusOr<std::vector<double>> hosts =
      SimulateConcurrent(p, {Op(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, DimensionGroups(8192, 8192, 1))});
  EXPECT_EQ(hosts.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(hosts.status().message().find("4096"), std::string::npos) << hosts.status();
  // An all-to-all over 2,048 GPUs: 4.2 million flows.
  absl::StatusOr<std::vector<double>> flows =
      SimulateConcurrent(p, {Op(CollectiveKind::kAllToAll, CollectiveAlgorithm::kRing, DimensionGroups(2048, 2048, 1))});
  EXPECT_EQ(flows.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(flows.status().message().find("2000000"), std::string::npos) << flows.status();
}

// An interrupted replay ends at once: the simulation process is killed, not waited for.
TEST(Simulate, StopsWhenInterrupted) {
  const SystemProfile p = ExactCluster(512, {Level("ib", 0, 10)});
  // 4,096 GPUs in 8 rings of 512: ~4 s of SimGrid work.
  const SimCollective op = Op(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, DimensionGroups(4096, 512, 8));
  Interrupt past;
  past.deadline = absl::Now() - absl::Seconds(1);
  EXPECT_EQ(SimulateConcurrent(p, {op}, {}, 4096, past).status().code(), absl::StatusCode::kDeadlineExceeded);
  std::atomic<bool> cancelled{false};
  std::thread client([&] {
    absl::SleepFor(absl::Milliseconds(100));
    cancelled = true;
  });
  Interrupt stop;
  stop.cancelled = &cancelled;
  absl::StatusOr<std::vector<double>> t = SimulateConcurrent(p, {op}, {}, 4096, stop);
  client.join();
  EXPECT_EQ(t.status().code(), absl::StatusCode::kCancelled) << t.status();
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

TEST(Simulate, IterationRunsTheReductionBesideThePipelineSends) {
  // TP 8 in the node, PP 2 and DP 4 across nodes: the overlapped DP reduction shares the
  // NICs with the pipeline's sends; both slow down, and the iteration follows.
  SystemProfile p = WithLatency(ExactCluster(8, {Level("ib", 0, 25)}), {1, 5}, 35);
  ParallelConfig cfg;
  cfg.tensor_parallel = 8;
  cfg.pipeline_parallel = 2;
  cfg.data_parallel = 4;
  cfg.micro_batch_size = 1;
  cfg.global_batch_size = 32;
  cfg.overlap_grad_reduce = true;
  absl::StatusOr<Estimate> e = EstimateIteration(*FindModelPreset("megatron-22b"), cfg, p);
  ASSERT_TRUE(e.ok()) << e.status();
  absl::StatusOr<IterationSimulation> s = SimulateIteration(p, *e, JobLayout(64, 8, 8, Placement::kPacked));
  ASSERT_TRUE(s.ok()) << s.status();
  const CollectiveComparison* dp = nullptr;
  const CollectiveComparison* pp = nullptr;
  for (const CollectiveComparison& c : s->collectives) {
    if (c.use.dimension == "dp") dp = &c;
    if (c.use.dimension == "pp") pp = &c;
  }
  ASSERT_TRUE(dp != nullptr && pp != nullptr);
  EXPECT_NEAR(dp->simulated_alone_s / dp->use.seconds_per_call, 1.0, 0.10);
  EXPECT_NEAR(pp->simulated_alone_s / pp->use.seconds_per_call, 1.0, 0.10);
  EXPECT_GT(dp->simulated_contended_s, dp->simulated_alone_s);
  EXPECT_GT(pp->simulated_contended_s, pp->simulated_alone_s);
  EXPECT_NEAR(s->simulated_iteration_s / s->analytic_iteration_s, 1.0, 0.10);
  for (const std::string& n : s->notes) std::printf("%s\n", n.c_str());
  std::printf("iteration: analytic %.2f ms, simulated %.2f ms\n", 1e3 * s->analytic_iteration_s,
              1e3 * s->simulated_iteration_s);
}

TEST(Simulate, IterationRefusesJobsOverTheLimit) {
  const SystemProfile p = ExactCluster(1024, {Level("ib", 0, 25)});
  Estimate e;
  absl::StatusOr<IterationSimulation> s = SimulateIteration(p, e, JobLayout(8192, 8, 1024, Placement::kPacked));
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("4096"), std::string::npos) << s.status();
}

}  // namespace
}  // namespace paraplan::sim
