#include "estimator/collectives.h"

#include "estimator/test_util.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

// A two-level cluster with exact numbers: 8 GPUs per node at 100 GB/s, 10 GB/s across,
// no latency, efficiency 1.
SystemProfile Simple() {
  SystemProfile p = testing::Profile("dgx-a100-80gb");
  p.network_levels[0].bandwidth_gbytes_per_s = 100;
  p.network_levels[0].latency_us = 0;
  p.network_levels[1].bandwidth_gbytes_per_s = 10;
  p.network_levels[1].latency_us = 0;
  p.calibration.network = {{"nvlink", 1.0, 1e-9}, {"infiniband", 1.0, 1e-9}};
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

TEST(Collectives, HierarchicalBeatsFlatRingWhenNodesHoldSeveralMembers) {
  const SystemProfile p = Simple();
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw);
  const GroupSpan g = c.Place(32, 1);  // 4 nodes x 8 GPUs
  EXPECT_EQ(g.inner, 8);
  // RS in node 7/8 GB/100 + AR across 4 nodes on 1/8 GB: 2*3/4*0.125/10 + AG 7/8 GB/100.
  const double expected = 2 * 0.875 / 100 + 2 * 0.75 * 0.125 / 10;
  EXPECT_NEAR(c.AllReduce(1e9, g, CollectiveAlgorithm::kHierarchical), expected, 1e-9);
  EXPECT_LE(c.AllReduce(1e9, g), c.AllReduce(1e9, g, CollectiveAlgorithm::kHierarchical) + 1e-12);
}

TEST(Collectives, HalvingDoublingHasLogLatency) {
  SystemProfile p = Simple();
  p.calibration.network = {{"nvlink", 1.0, 10}, {"infiniband", 1.0, 10}};
  const Hardware hw(p, Precision::kBf16);
  const Collectives c(hw);
  const GroupSpan g = c.Place(64, 8);
  // Tiny message: latency dominated; ring 2*63 steps, halving-doubling 2*6.
  EXPECT_NEAR(c.AllReduce(8, g, CollectiveAlgorithm::kRing), 126 * 10e-6, 1e-7);
  EXPECT_NEAR(c.AllReduce(8, g, CollectiveAlgorithm::kHalvingDoubling), 12 * 10e-6, 1e-7);
}

TEST(Collectives, SingleMemberGroupsCostNothing) {
  const Hardware hw(Simple(), Precision::kBf16);
  const Collectives c(hw);
  EXPECT_EQ(c.AllReduce(1e9, c.Place(1, 1)), 0);
  EXPECT_EQ(c.AllGather(1e9, c.Place(1, 1)), 0);
}

}  // namespace
}  // namespace paraplan
