// Codesign on designs whose answer is known by construction: an eighth of the inter-node
// bandwidth loses on time, a doubled price loses on cost at equal time, and weights
// decide between a cheap slow network and a dear fast one.
#include "estimator/plan/codesign.h"

#include "estimator/testing/test_util.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

SystemProfile Design(const std::string& name, double inter_node_gbps, double price) {
  SystemProfile p = testing::Profile("dgx-a100-80gb");
  p.name = name;
  p.version = 1;
  p.num_nodes = 16;
  p.network_levels[1].bandwidth_gbytes_per_s = inter_node_gbps;
  p.price_per_gpu_hour_usd = price;
  return p;
}

CodesignWorkload Work(const std::string& preset, double weight, int global_batch) {
  return {preset, testing::Model(preset), weight, global_batch};
}

// The 22B model at global batch 128 on 64 GPUs of each design.
CodesignRequest OneWorkload(std::vector<SystemProfile> designs) {
  CodesignRequest r;
  r.designs = std::move(designs);
  r.workloads = {Work("megatron-22b", 1, 128)};
  r.gpus = 64;
  return r;
}

TEST(Codesign, EighthOfTheInterNodeBandwidthLosesOnTime) {
  const CodesignRequest r = OneWorkload({Design("slow", 3.125, 5), Design("fast", 25, 5)});
  absl::StatusOr<CodesignResult> out = Codesign(r);
  ASSERT_TRUE(out.ok()) << out.status();
  const CodesignDesign& slow = out->designs[0];
  const CodesignDesign& fast = out->designs[1];
  ASSERT_TRUE(slow.fits_all && fast.fits_all);
  EXPECT_LT(fast.weighted_time_s, slow.weighted_time_s);
  EXPECT_EQ(fast.rank, 1);
  EXPECT_EQ(slow.rank, 2);
  EXPECT_EQ(out->best_by_time, "fast@1");
}

TEST(Codesign, DoubledPriceLosesOnCostAtEqualTime) {
  CodesignRequest r = OneWorkload({Design("dear", 25, 10), Design("cheap", 25, 5)});
  r.objective = Objective::kCost;
  absl::StatusOr<CodesignResult> out = Codesign(r);
  ASSERT_TRUE(out.ok()) << out.status();
  const CodesignDesign& dear = out->designs[0];
  const CodesignDesign& cheap = out->designs[1];
  EXPECT_DOUBLE_EQ(dear.weighted_time_s, cheap.weighted_time_s);
  // cost = GPUs x time x price: 64 x t / 3600 x $10 against x $5.
  EXPECT_NEAR(dear.weighted_cost_usd, 64 * dear.weighted_time_s / 3600 * 10, 1e-9 * dear.weighted_cost_usd);
  EXPECT_NEAR(dear.weighted_cost_usd / cheap.weighted_cost_usd, 2.0, 1e-9);
  EXPECT_EQ(cheap.rank, 1);
  EXPECT_EQ(out->best_by_cost, "cheap@1");
}

TEST(Codesign, WeightsChooseBetweenACheapSlowAndADearFastNetwork) {
  // 64 GPUs. The 22B model at a small batch waits on its gradients: a 16x slower
  // network makes the cheap design dear. The 8B model at a large batch hides them
  // behind compute: the cheap design costs less. The mix's weights pick the winner.
  CodesignRequest r;
  r.designs = {Design("cheap-slow", 1.5, 4), Design("dear-fast", 25, 5)};
  r.gpus = 64;
  r.objective = Objective::kCost;
  r.workloads = {Work("megatron-22b", 1, 128), Work("llama3-8b", 1, 4096)};
  absl::StatusOr<CodesignResult> out = Codesign(r);
  ASSERT_TRUE(out.ok()) << out.status();
  const CodesignCell& a_cheap = out->designs[0].cells[0];
  const CodesignCell& a_dear = out->designs[1].cells[0];
  const CodesignCell& b_cheap = out->designs[0].cells[1];
  const CodesignCell& b_dear = out->designs[1].cells[1];
  ASSERT_TRUE(a_cheap.fits && a_dear.fits && b_cheap.fits && b_dear.fits);
  EXPECT_GT(a_cheap.best.cost_per_iteration_usd, a_dear.best.cost_per_iteration_usd);
  EXPECT_LT(b_cheap.best.cost_per_iteration_usd, b_dear.best.cost_per_iteration_usd);
  // The weight at which both designs cost the same: w_a x (A_cheap - A_dear) =
  // w_b x (B_dear - B_cheap). Just above it one wins, just below the other.
  const double w_even = (b_dear.best.cost_per_iteration_usd - b_cheap.best.cost_per_iteration_usd) /
                        (a_cheap.best.cost_per_iteration_usd - a_dear.best.cost_per_iteration_usd);
  for (const auto& [factor, winner] : {std::pair{0.5, "cheap-slow@1"}, std::pair{2.0, "dear-fast@1"}}) {
    r.workloads[0].weight = w_even * factor;
    absl::StatusOr<CodesignResult> mix = Codesign(r);
    ASSERT_TRUE(mix.ok()) << mix.status();
    EXPECT_EQ(mix->best_by_cost, winner) << factor;
  }
}

TEST(Codesign, ADesignThatFitsNothingRanksLastWithTheReason) {
  SystemProfile tiny = Design("tiny", 25, 1);
  tiny.accelerator.memory_gib = 4;
  const CodesignRequest r = OneWorkload({tiny, Design("a100", 25, 5)});
  absl::StatusOr<CodesignResult> out = Codesign(r);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(out->designs[0].fits_all);
  EXPECT_FALSE(out->designs[0].cells[0].fits);
  EXPECT_NE(out->designs[0].cells[0].infeasible_reason, "");
  EXPECT_EQ(out->designs[0].rank, 2);
  EXPECT_EQ(out->best_by_time, "a100@1");
}

TEST(Codesign, CandidateCapTruncatesAndCancellationStops) {
  CodesignRequest r = OneWorkload({Design("a", 25, 5), Design("b", 12.5, 5)});
  absl::StatusOr<CodesignResult> whole = Codesign(r);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_FALSE(whole->truncated);
  r.max_candidates = 1;  // every search stops after its first shape
  absl::StatusOr<CodesignResult> capped = Codesign(r);
  ASSERT_TRUE(capped.ok()) << capped.status();
  EXPECT_TRUE(capped->truncated);
  r.max_candidates = 0;
  std::atomic<bool> cancelled{true};
  r.cancelled = &cancelled;
  EXPECT_EQ(Codesign(r).status().code(), absl::StatusCode::kCancelled);
}

TEST(Codesign, BadRequestsNameTheField) {
  CodesignRequest r = OneWorkload({Design("a", 25, 5)});
  r.workloads[0].weight = -1;
  EXPECT_NE(Codesign(r).status().message().find("workloads[0].weight"), std::string::npos);
  r.workloads[0].weight = 1;
  r.gpus = 0;
  EXPECT_NE(Codesign(r).status().message().find("gpus"), std::string::npos);
  r.gpus = 64;
  r.designs.clear();
  EXPECT_NE(Codesign(r).status().message().find("designs"), std::string::npos);
}

}  // namespace
}  // namespace paraplan
