#include "estimator/system/collectives.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "estimator/testing/test_util.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

// A two-level cluster with exact numbers: 8 GPUs per node at 100 GB/s, 10 GB/s across,
// no latency, no per-call overhead, efficiency 1.
SystemProfile Simple() {
  SystemProfile p = testing::Profile("dgx-a100-80gb");
  p.network_levels[0].bandwidth_gbytes_per_s = 100;
  p.network_levels[0].latency_us = 0;
  p.network_levels[1].bandwidth_gbytes_per_s = 10;
  p.network_levels[1].latency_us = 0;
  p.calibration.network = {{"nvlink", 1.0, 1e-9, {}}, {"infiniband", 1.0, 1e-9, {}}};
  p.calibration.collective_overhead_us = 1e-9;
  return p;
}

TEST(Collectives, RingAllReduceOfOneGibOnTwoGpus) {
  const SystemProfile p = Simple();
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw);
  const GroupSpan g = c.Place(2, 1);
  EXPECT_EQ(g.level, 0);
  // 2 (P-1)/P N / B = 2 * 1/2 * 2^30 B / 100 GB/s = 10.74 ms.
  EXPECT_NEAR(c.AllReduce(1 << 30, g, CollectiveAlgorithm::kRing), 1073741824.0 / 100e9, 1e-9);
}

TEST(Collectives, GroupAcrossNodesUsesTheSlowerLevel) {
  const SystemProfile p = Simple();
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw);
  const GroupSpan g = c.Place(4, 8);  // one member per node
  EXPECT_EQ(g.level, 1);
  EXPECT_EQ(g.inner, 1);
  // 2 * 3/4 * 1 GB / 10 GB/s = 150 ms.
  EXPECT_NEAR(c.AllReduce(1e9, g, CollectiveAlgorithm::kRing), 0.15, 1e-9);
}

TEST(Collectives, HierarchicalAndRingAcrossNodes) {
  const SystemProfile p = Simple();
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw);
  const GroupSpan g = c.Place(32, 1);  // 4 nodes x 8 GPUs
  EXPECT_EQ(g.inner, 8);
  // RS in node 7/8 GB/100 + AR across 4 nodes on 1/8 GB: 2*3/4*0.125/10 + AG 7/8 GB/100.
  const double expected = 2 * 0.875 / 100 + 2 * 0.75 * 0.125 / 10;
  EXPECT_NEAR(c.AllReduce(1e9, g, CollectiveAlgorithm::kHierarchical), expected, 1e-9);
  // = 17.5 + 18.75 = 36.25 ms. A flat ring drives every GPU's own NIC share: 8 x 10
  // GB/s per node, capped by NVLink: 2 * 31/32 * 1 GB / 80 GB/s = 24.22 ms; auto (NCCL's
  // tuner) takes the cheaper, the ring.
  const double ring = 2 * 31.0 / 32 * 1e9 / 80e9;
  EXPECT_NEAR(c.AllReduce(1e9, g, CollectiveAlgorithm::kRing), ring, 1e-9);
  EXPECT_NEAR(c.AllReduce(1e9, g), std::min(ring, expected), 1e-9);
}

TEST(Collectives, AutoUsesRingsInsideOneNvlinkDomain) {
  SystemProfile p = Simple();
  p.network_levels[0].latency_us = 10;
  p.calibration.network = {{"nvlink", 1.0, 10, {}}, {"infiniband", 1.0, 10, {}}};
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw);
  // 8 B over 8 GPUs of one node: a tree would take 2*3 steps, but NCCL builds its trees
  // across nodes only: ring, 2*7 steps of 10 us.
  EXPECT_NEAR(c.AllReduce(8, c.Place(8, 1)), 14 * 10e-6 + 2 * 7.0 / 8 * 8 / 100e9, 1e-9);
}

TEST(Collectives, EveryCallPaysTheFixedOverhead) {
  SystemProfile p = Simple();
  p.calibration.collective_overhead_us = 40;
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw);
  const GroupSpan g = c.Place(2, 1);
  // 40 us + 2 * 1/2 * 1 MB / 100 GB/s = 40 + 10 us.
  EXPECT_NEAR(c.AllReduce(1e6, g, CollectiveAlgorithm::kRing), 50e-6, 1e-9);
  // All-gather: 40 us + 1/2 * 1 MB / 100 GB/s.
  EXPECT_NEAR(c.AllGather(1e6, g), 45e-6, 1e-9);
  EXPECT_NEAR(c.SendRecv(1e6, 0), 50e-6, 1e-9);
}

// The built-in, uncalibrated DGX A100 profile against nccl-tests all_reduce_perf on 2-8
// A100s of one node (vTrain's measured curves, 1 MiB - 1 GiB): within 25 % at every size.
// Without the per-call overhead the 1 MiB points would be 4x too fast.
TEST(Collectives, DefaultA100AllReduceFollowsNcclTests) {
  const Hardware hw(testing::Profile("dgx-a100-80gb"), Precision::kBf16);
  const Collectives c(hw);
  for (int gpus = 2; gpus <= 8; ++gpus) {
    std::ifstream in(std::string(PARAPLAN_SHARED_DATA_DIR) + "/nccl_tests_a100/all_reduce_" +
                     std::to_string(gpus) + "gpu.csv");
    ASSERT_TRUE(in.good()) << gpus;
    std::string line;
    std::getline(in, line);  // header
    int rows = 0;
    double worst = 0;
    while (std::getline(in, line)) {
      std::stringstream ss(line);
      std::string size, count, type, time_ns;
      std::getline(ss, size, ',');
      std::getline(ss, count, ',');
      std::getline(ss, type, ',');
      std::getline(ss, time_ns, ',');
      const double measured = std::stod(time_ns) * 1e-9;
      const double predicted = c.AllReduce(std::stod(size), c.Place(gpus, 1));
      worst = std::max(worst, std::abs(predicted / measured - 1));
      ++rows;
    }
    EXPECT_GT(rows, 1000) << gpus;
    EXPECT_LE(worst, 0.25) << gpus << " GPUs";
  }
}

TEST(Collectives, HalvingDoublingHasLogLatency) {
  SystemProfile p = Simple();
  p.calibration.network = {{"nvlink", 1.0, 10, {}}, {"infiniband", 1.0, 10, {}}};
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw);
  const GroupSpan g = c.Place(64, 8);
  // Tiny message: latency dominated; ring 2*63 steps, halving-doubling 2*6.
  EXPECT_NEAR(c.AllReduce(8, g, CollectiveAlgorithm::kRing), 126 * 10e-6, 1e-7);
  EXPECT_NEAR(c.AllReduce(8, g, CollectiveAlgorithm::kHalvingDoubling), 12 * 10e-6, 1e-7);
}

// Three levels (ABCI: 4 GPUs a node at 150 GB/s, racks of 136 at 6.25 GB/s a GPU, a
// 3:1 over-subscribed spine), default efficiency 0.8. 256 ranks span two racks of
// unequal shares (136 and 120): the hierarchical all-reduce reduce-scatters inside a
// rack (its 136 members over 34 nodes: a ring at 4 x 5 GB/s of node NICs, 5 us a step),
// all-reduces 1/136 of the data between the 2 racks (1 member a node: the spine's
// 6.25 / 3 x 0.8 GB/s, 7 us a step) and all-gathers inside the rack again.
TEST(Collectives, HierarchicalOverUnevenRacks) {
  const Hardware hw(testing::Profile("abci-v100-16gb"), Precision::kFp32);
  const Collectives c(hw);
  const GroupSpan g = c.Place(256, 1);
  ASSERT_EQ(g.level, 2);
  ASSERT_EQ(g.inner, 136);
  const double bytes = 102e6, call = 35e-6;
  const double in_rack = 135 * 5e-6 + 135.0 / 136 * bytes / 20e9;
  const double spine = 2 * 1 * 7e-6 + 2 * 0.5 * (bytes / 136) / (6.25e9 / 3 * 0.8);
  EXPECT_NEAR(c.AllReduce(bytes, g, CollectiveAlgorithm::kHierarchical), call + 2 * in_rack + spine, 1e-9);
  // A flat ring over both racks: 2 x 255 spine steps, bounded by the node NICs (20 GB/s).
  EXPECT_NEAR(c.AllReduce(bytes, g, CollectiveAlgorithm::kRing), call + 2 * 255 * 7e-6 + 2 * 255.0 / 256 * bytes / 20e9,
              1e-9);
}

// NVLink SHARP: 8 GPUs at 100 GB/s reduce 1 GiB in the switch, sending and receiving it
// once (1 GiB / 100 GB/s) where a ring moves 2 x 7/8 of it; across nodes only when the
// InfiniBand level reduces in the network too.
TEST(Collectives, InNetworkReductionSendsTheBufferOnce) {
  SystemProfile p = Simple();
  p.network_levels[0].in_network_reduction = true;
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw);
  const double gib = 1 << 30;
  const GroupSpan node = c.Place(8, 1);
  EXPECT_NEAR(c.AllReduce(gib, node), gib / 100e9, 1e-9);
  EXPECT_NEAR(c.AllReduce(gib, node, CollectiveAlgorithm::kRing), 2 * 7.0 / 8 * gib / 100e9, 1e-9);
  const GroupSpan two_nodes = c.Place(16, 1);
  const double without = c.AllReduce(gib, two_nodes);
  p.network_levels[1].in_network_reduction = true;
  const Hardware hw2(p, Precision::kBf16);
  const Collectives c2(hw2);
  // Across nodes the ring's bandwidth is the node's 8 x 10 GB/s of NICs: 1 GiB / 80 GB/s.
  EXPECT_NEAR(c2.AllReduce(gib, two_nodes), gib / 80e9, 1e-9);
  EXPECT_GT(without, gib / 80e9 * 1.5);
}

// The Simple() cluster's collectives (8 GPUs a node at 100 GB/s, 10 GB/s across), kept
// with the profile and hardware they refer to.
struct SimpleNet {
  SystemProfile p = Simple();
  Hardware hw{p, Precision::kBf16};
  Collectives c{hw};
};

// DeepEP-style dispatch on 4 nodes of 8 (32 ranks), each token to 8 experts spread
// evenly: a token reaches 3 (1 - (3/4)^8) = 2.70 other nodes on average, so 2.70 / 8 of
// its copies cross the slow level where a plain all-to-all sends 24 / 32 of them; the
// forwarding inside a node (100 GB/s) stays below the 10 GB/s crossing.
TEST(Collectives, DedupAllToAllSendsOneCopyPerNode) {
  const SimpleNet net;
  const Collectives& c = net.c;
  const GroupSpan g = c.Place(32, 1);
  ASSERT_EQ(g.level, 1);
  ASSERT_EQ(g.inner, 8);
  const double bytes = 8e9;
  const double ratio = 3 * (1 - std::pow(0.75, 8)) / 8 / (24.0 / 32);
  EXPECT_NEAR(c.DedupAllToAll(bytes, {8}, g) / c.AllToAll(bytes, g), ratio, 1e-6);
  // One copy a token: the plain all-to-all.
  EXPECT_DOUBLE_EQ(c.DedupAllToAll(bytes, {1}, g), c.AllToAll(bytes, g));
  // Inside one node a token goes once to each rank its 8 copies touch: 8 x (1 - (7/8)^8)
  // = 5.25 of 8 ranks, i.e. 0.6564 of the copies' bytes (DeepEP's intranode dispatch,
  // is_token_in_rank).
  const GroupSpan node = c.Place(8, 1);
  EXPECT_NEAR(c.DedupAllToAll(bytes, {8}, node) / c.AllToAll(bytes * 0.656391, node), 1, 1e-6);
  // A token's 8 experts are distinct (top-k): of 128 experts, 16 a rank, a given rank is
  // missed with C(112, 8) / C(128, 8) = 0.33258, so 8 x 0.66742 = 5.339 ranks are hit
  // (0.66742 of the copies' bytes); 4 nodes of 32 experts each are missed with
  // C(96, 8) / C(128, 8) = 0.09275: 3 x 0.90725 = 2.722 other nodes.
  double miss_rank = 1, miss_node = 1;
  for (int i = 0; i < 8; ++i) miss_rank *= (112.0 - i) / (128 - i), miss_node *= (96.0 - i) / (128 - i);
  EXPECT_NEAR(miss_rank, 0.33258, 1e-5);
  EXPECT_NEAR(miss_node, 0.09275, 1e-5);
  EXPECT_NEAR(c.DedupAllToAll(bytes, {8, 128}, node) / c.AllToAll(bytes * (1 - miss_rank), node), 1, 1e-6);
  EXPECT_NEAR(c.DedupAllToAll(bytes, {8, 128}, g) / c.AllToAll(bytes, g), 3 * (1 - miss_node) / 8 / (24.0 / 32), 1e-6);
  // Wide top-k takes the factorials' ratio in closed form: 100 of 1,024 experts over 8
  // ranks, by the product as above.
  double miss_wide = 1;
  for (int i = 0; i < 100; ++i) miss_wide *= (896.0 - i) / (1024 - i);
  EXPECT_NEAR(c.DedupAllToAll(bytes, {100, 1024}, node) / c.AllToAll(bytes * (1 - miss_wide) * 8 / 100, node), 1, 1e-9);
}

// Group-limited routing (DeepSeek-V3: 256 experts in 8 groups of 32; the router picks 4
// groups, then the token's 8 experts among their 128). EP 64 over 8 nodes of 8 puts one
// group on each node: another node is missed when its group is not picked (1/2) or is
// picked and the 8 copies avoid its 32 of the 128, C(96, 8) / C(128, 8) = 0.09275; so
// 7 x (1 - 0.5 - 0.5 x 0.09275) = 3.175 other nodes, where an unlimited token reaches
// 7 (1 - C(224, 8) / C(256, 8)) = 4.65. Inside one node of 8 ranks (a group each) a rank
// is hit with the same 0.4536. With 128 experts in 4 groups of 32 over the node's 8 ranks
// (a group on 2 ranks, 2 groups picked, 8 copies among their 64), a rank is hit when its
// group is picked (1/2) and the copies do not avoid its 16: 1 - C(48, 8) / C(64, 8).
TEST(Collectives, GroupLimitedRoutingTouchesFewerNodes) {
  const SimpleNet net;
  const Collectives& c = net.c;
  const GroupSpan g = c.Place(64, 1);
  ASSERT_EQ(g.level, 1);
  ASSERT_EQ(g.inner, 8);
  const double bytes = 8e9;
  double miss_node = 1, avoid_group = 1, avoid_half = 1;
  for (int i = 0; i < 8; ++i) {
    miss_node *= (224.0 - i) / (256 - i);
    avoid_group *= (96.0 - i) / (128 - i);
    avoid_half *= (48.0 - i) / (64 - i);
  }
  EXPECT_NEAR(avoid_group, 0.09275, 1e-5);
  const double hit_group = 1 - 0.5 - 0.5 * avoid_group;
  const double unlimited = c.DedupAllToAll(bytes, {8, 256}, g);
  EXPECT_NEAR(c.DedupAllToAll(bytes, {8, 256, 8, 4}, g) / unlimited, 7 * hit_group / (7 * (1 - miss_node)), 1e-6);
  const GroupSpan node = c.Place(8, 1);
  EXPECT_NEAR(c.DedupAllToAll(bytes, {8, 256, 8, 4}, node) / c.AllToAll(bytes * hit_group, node), 1, 1e-6);
  const double hit = 0.5 * (1 - avoid_half);
  EXPECT_NEAR(c.DedupAllToAll(bytes, {8, 128, 4, 2}, node) / c.AllToAll(bytes * hit, node), 1, 1e-6);
  // One group, picked by every token (Kimi-K2's n_group 1): no limit.
  EXPECT_DOUBLE_EQ(c.DedupAllToAll(bytes, {8, 256, 1, 1}, g), unlimited);
  // Picking every group: no limit either.
  EXPECT_NEAR(c.DedupAllToAll(bytes, {8, 256, 8, 8}, g), unlimited, 1e-12);
}

// DeepEP's / HybridEP's kernels receive no faster than their SMs move tokens
// (ep_dispatch_gbytes_per_s, its own tokens counted). Inside a node of 8 at 100 GB/s, each
// rank receives 8 x (1 - (7/8)^8) = 5.25 of a token's copies' worth (0.6564 of 8 GB of
// copies): with the kernels at 50 GB/s that takes 5.25 GB / 50 GB/s, where the link alone
// took the 7 peers' share at 100; at 200 the link bounds it again. Across 4 nodes the
// forwarding inside a node (8 x each peer's share through the kernels) shows only where
// it outlasts the 10 GB/s crossing.
TEST(Collectives, DeepEpKernelsReceiveAtTheirOwnRate) {
  const SimpleNet unlimited;
  auto at = [](double gbytes_per_s) {
    SystemProfile p = Simple();
    p.calibration.ep_dispatch_gbytes_per_s = gbytes_per_s;
    return p;
  };
  const double bytes = 8e9;  // 8 copies of 1 GB of tokens
  const GroupSpan node = unlimited.c.Place(8, 1);
  const double to_rank = 1e9 * (1 - std::pow(7.0 / 8, 8));
  {
    const SystemProfile p = at(50);
    const Hardware hw(p, Precision::kBf16);
    const Collectives c(hw);
    EXPECT_NEAR(c.DedupAllToAll(bytes, {8}, node), 8 * to_rank / 50e9, 1e-9);
    EXPECT_NEAR(unlimited.c.DedupAllToAll(bytes, {8}, node), 7 * to_rank / 100e9, 1e-9);
  }
  {
    const SystemProfile p = at(200);
    const Hardware hw(p, Precision::kBf16);
    const Collectives c(hw);
    EXPECT_DOUBLE_EQ(c.DedupAllToAll(bytes, {8}, node), unlimited.c.DedupAllToAll(bytes, {8}, node));
  }
  // 32 ranks: a rank is hit by 1 - (31/32)^8 of the tokens, and forwards to each of its
  // node's peers its node's 4 ranks' worth: to_rank x 32 / 8; another node receives
  // 1 - (3/4)^8 of them over the crossing, 3 x 0.9 GB / 10 GB/s = 0.27 s.
  const GroupSpan g = unlimited.c.Place(32, 1);
  const double per_peer = 1e9 * (1 - std::pow(31.0 / 32, 8)) * 32 / 8;
  const double crossing = 3 * 1e9 * (1 - std::pow(0.75, 8)) / 10e9;
  EXPECT_NEAR(unlimited.c.DedupAllToAll(bytes, {8}, g), crossing, 1e-9);
  for (double rate : {50.0, 20.0}) {
    const SystemProfile p = at(rate);
    const Hardware hw(p, Precision::kBf16);
    const Collectives c(hw);
    EXPECT_NEAR(c.DedupAllToAll(bytes, {8}, g), std::max(crossing, 8 * per_peer / (rate * 1e9)), 1e-9) << rate;
  }
}

// A ring with one member per node runs 4 of NCCL's channels where a ring inside or across
// whole nodes runs 24: it holds a sixth of the SMs (its interference with the work beside
// it). With k members a node it runs 4k (their NICs' rings), up to 24: no step from one
// member a node to two.
TEST(Collectives, RingsOfFewRanksPerNodeHoldFewSms) {
  const Hardware hw(Simple(), Precision::kBf16);
  const Collectives c(hw);
  const GroupSpan per_node = c.Place(32, 8);  // every 8th rank: one per node
  ASSERT_EQ(per_node.level, 1);
  ASSERT_EQ(per_node.inner, 1);
  EXPECT_DOUBLE_EQ(c.SmShare(per_node), 4.0 / 24);
  EXPECT_DOUBLE_EQ(c.SmShare(c.Place(64, 4)), 8.0 / 24);   // 2 members a node
  EXPECT_DOUBLE_EQ(c.SmShare(c.Place(32, 2)), 16.0 / 24);  // 4 members a node
  EXPECT_DOUBLE_EQ(c.SmShare(c.Place(64, 1)), 1.0);        // whole nodes
  EXPECT_DOUBLE_EQ(c.SmShare(c.Place(8, 1)), 1.0);         // inside a node
  EXPECT_DOUBLE_EQ(c.SmShare(c.Place(1, 1)), 1.0);
}

TEST(Collectives, SingleMemberGroupsCostNothing) {
  const Hardware hw(Simple(), Precision::kBf16);
  const Collectives c(hw);
  EXPECT_EQ(c.AllReduce(1e9, c.Place(1, 1)), 0);
  EXPECT_EQ(c.AllGather(1e9, c.Place(1, 1)), 0);
}

}  // namespace
}  // namespace paraplan
