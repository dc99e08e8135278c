// Metamorphic checks of the planner over a spread of models and profiles
// (testing/property_scenarios.h): more memory or more degrees to choose from never give
// a slower best plan; the plans do not depend on the worker count or on how many are
// asked for; a plan reads as its configuration estimates alone.
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "estimator/iteration/estimate.h"
#include "estimator/plan/search.h"
#include "estimator/testing/property_scenarios.h"
#include "estimator/testing/test_util.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::Describe;
using testing::kTolerance;
using testing::RequestOf;
using testing::Scenario;
using testing::Scenarios;
using testing::WorkloadOf;

// The planner over more room: on GPUs with twice the memory every configuration that
// fitted still fits at the same time, so the best plan is never slower; and the best over
// every tensor-parallel degree is never slower than the best at any one of them.
TEST(PlannerProperties, MoreRoomNeverGivesASlowerBestPlan) {
  for (const Scenario& s : Scenarios()) {
    PlanRequest r = RequestOf(s, 1);
    const SystemProfile base = testing::Profile(s.profile);
    SystemProfile roomy = base;
    roomy.accelerator.memory_gib *= 2;
    auto a = Plan(r, base);
    auto b = Plan(r, roomy);
    ASSERT_TRUE(a.ok() && b.ok()) << s.model << ": " << a.status() << " / " << b.status();
    ASSERT_FALSE(a->plans.empty() || b->plans.empty()) << s.model << " on " << s.profile;
    EXPECT_LE(b->plans[0].iteration_time_s, a->plans[0].iteration_time_s * (1 + kTolerance))
        << s.model << " on " << s.profile;
    for (int tp : {1, 2, 8}) {
      r.constraints.tensor_parallel = {tp};
      auto held = Plan(r, base);
      ASSERT_TRUE(held.ok()) << s.model << ": " << held.status();
      if (held->plans.empty()) continue;  // nothing fits at that degree
      EXPECT_GE(held->plans[0].iteration_time_s, a->plans[0].iteration_time_s * (1 - kTolerance))
          << s.model << " on " << s.profile << " at TP " << tp;
    }
  }
}

// On a faster machine (links 1.5x, tensor cores and HBM 1.25x) every configuration runs
// no slower (MachineProperties), so the best plan the search finds is never slower: its
// pruning must not drop what the slower machine's search kept.
TEST(PlannerProperties, AFasterMachineNeverGivesASlowerBestPlan) {
  for (const Scenario& s : Scenarios()) {
    const PlanRequest r = RequestOf(s, 1);
    const SystemProfile base = testing::Profile(s.profile);
    SystemProfile fast = base;
    for (NetworkLevel& l : fast.network_levels) l.bandwidth_gbytes_per_s *= 1.5;
    Accelerator& a = fast.accelerator;
    for (double* peak : {&a.peak_tflops_bf16, &a.peak_tflops_fp16, &a.peak_tflops_fp8, &a.peak_tflops_fp4,
                         &a.peak_tflops_fp32, &a.memory_bandwidth_gbytes_per_s}) {
      *peak *= 1.25;
    }
    auto slow_plan = Plan(r, base);
    auto fast_plan = Plan(r, fast);
    ASSERT_TRUE(slow_plan.ok() && fast_plan.ok()) << s.model << ": " << slow_plan.status() << " / "
                                                  << fast_plan.status();
    ASSERT_FALSE(slow_plan->plans.empty() || fast_plan->plans.empty()) << s.model << " on " << s.profile;
    EXPECT_LE(fast_plan->plans[0].iteration_time_s, slow_plan->plans[0].iteration_time_s * (1 + kTolerance))
        << s.model << " on " << s.profile << ": " << Describe(slow_plan->plans[0].config) << " -> "
        << Describe(fast_plan->plans[0].config);
  }
}

// The answer does not depend on how many workers searched: the same plans in the same
// order, the same Pareto front.
TEST(PlannerProperties, PlansDoNotDependOnTheWorkerCount) {
  for (const Scenario& s : Scenarios()) {
    PlanRequest r = RequestOf(s, 20);
    const SystemProfile profile = testing::Profile(s.profile);
    r.threads = 1;
    auto one = Plan(r, profile);
    ASSERT_TRUE(one.ok()) << one.status();
    for (int threads : {2, 3}) {
      r.threads = threads;
      auto many = Plan(r, profile);
      ASSERT_TRUE(many.ok()) << many.status();
      const std::string what = absl::StrCat(s.model, " on ", s.profile, ", ", threads, " workers");
      ASSERT_EQ(many->plans.size(), one->plans.size()) << what;
      for (size_t i = 0; i < one->plans.size(); ++i) {
        EXPECT_EQ(many->plans[i].config.ShortString(), one->plans[i].config.ShortString()) << what << " #" << i;
        EXPECT_EQ(many->plans[i].iteration_time_s, one->plans[i].iteration_time_s) << what << " #" << i;
      }
      ASSERT_EQ(many->pareto.size(), one->pareto.size()) << what;
      for (size_t i = 0; i < one->pareto.size(); ++i) {
        EXPECT_EQ(many->pareto[i].config.ShortString(), one->pareto[i].config.ShortString()) << what << " front #" << i;
      }
      EXPECT_EQ(many->candidates_evaluated, one->candidates_evaluated) << what;
    }
  }
}

// A plan reads as its configuration estimates on its own: the search's shared and cached
// work changes no figure.
TEST(PlannerProperties, PlansEstimateAsTheirConfigurations) {
  int plans = 0;
  for (const Scenario& s : Scenarios()) {
    const SystemProfile profile = testing::Profile(s.profile);
    auto plan = Plan(RequestOf(s, 40), profile);
    ASSERT_TRUE(plan.ok()) << plan.status();
    for (const std::vector<Estimate>* list : {&plan->plans, &plan->pareto}) {
      for (const Estimate& e : *list) {
        auto alone = EstimateIteration(WorkloadOf(s), e.config, profile);
        const std::string what = absl::StrCat(s.model, " on ", s.profile, " ", Describe(e.config));
        ASSERT_TRUE(alone.ok()) << what << ": " << alone.status();
        EXPECT_NEAR(e.iteration_time_s, alone->iteration_time_s, 1e-9 * alone->iteration_time_s) << what;
        EXPECT_NEAR(e.memory.total_bytes, alone->memory.total_bytes, 1e-9 * alone->memory.total_bytes) << what;
        EXPECT_NEAR(e.energy_per_iteration_j, alone->energy_per_iteration_j, 1e-9 * alone->energy_per_iteration_j)
            << what;
        EXPECT_EQ(e.bottleneck, alone->bottleneck) << what;
        ++plans;
      }
    }
  }
  EXPECT_GT(plans, 600);
}

// How many plans are asked for changes which are shown, not which is best: the first of
// 40 is the one plan asked for alone, and the first 10 of 40 are the 10.
TEST(PlannerProperties, AskingForMorePlansKeepsTheBest) {
  for (const Scenario& s : Scenarios()) {
    const SystemProfile profile = testing::Profile(s.profile);
    auto one = Plan(RequestOf(s, 1), profile);
    auto ten = Plan(RequestOf(s, 10), profile);
    auto many = Plan(RequestOf(s, 40), profile);
    ASSERT_TRUE(one.ok() && ten.ok() && many.ok()) << s.model;
    ASSERT_FALSE(one->plans.empty()) << s.model;
    const std::string what = absl::StrCat(s.model, " on ", s.profile);
    EXPECT_EQ(many->plans[0].config.ShortString(), one->plans[0].config.ShortString()) << what;
    EXPECT_EQ(many->plans[0].iteration_time_s, one->plans[0].iteration_time_s) << what;
    for (size_t i = 0; i < ten->plans.size(); ++i) {
      ASSERT_LT(i, many->plans.size()) << what;
      EXPECT_EQ(many->plans[i].config.ShortString(), ten->plans[i].config.ShortString()) << what << " #" << i;
    }
  }
}

}  // namespace
}  // namespace paraplan
