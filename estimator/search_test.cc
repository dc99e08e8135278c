#include "estimator/search.h"

#include <tuple>

#include "estimator/estimate.h"
#include "estimator/test_util.h"
#include "estimator/validate.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::Model;
using testing::Profile;

Workload SmallModel() {
  Workload w = Model("llama3-8b");
  w.name = "small";
  w.transformer.num_layers = 8;
  w.transformer.seq_length = 2048;
  return w;
}

// The brute force: every configuration of the same space, estimated one by one with
// EstimateIteration, no pruning, no reuse.
std::vector<Estimate> BruteForce(const Workload& w, const SystemProfile& p, int gpus, int gbs) {
  std::vector<Estimate> out;
  const Recompute rcs[] = {Recompute::kNone, Recompute::kSelective, Recompute::kFull};
  for (int tp = 1; tp <= gpus; ++tp) {
    for (int cp = 1; cp <= gpus; ++cp) {
      for (int pp = 1; pp <= gpus; ++pp) {
        if (int64_t{tp} * cp * pp > gpus || gpus % (tp * cp * pp) != 0) continue;
        const int dp = gpus / (tp * cp * pp);
        for (int mbs = 1; mbs <= gbs; ++mbs) {
          for (int v = 1; v <= 8; ++v) {
            for (Recompute rc : rcs) {
              for (int sp = 0; sp < 2; ++sp) {
                for (int flash = 0; flash < 2; ++flash) {
                  for (int zero = 0; zero < 4; ++zero) {
                    for (int sched = 0; sched < 4; ++sched) {
                      for (int flags = 0; flags < 8; ++flags) {
                        ParallelConfig c;
                        c.tensor_parallel = tp;
                        c.context_parallel = cp;
                        c.pipeline_parallel = pp;
                        c.data_parallel = dp;
                        c.micro_batch_size = mbs;
                        c.global_batch_size = gbs;
                        c.virtual_pipeline_stages = v;
                        c.recompute = rc;
                        c.sequence_parallel = sp;
                        c.flash_attention = flash;
                        c.zero_stage = zero;
                        c.pipeline_schedule = static_cast<PipelineSchedule>(sched + 1);
                        c.overlap_grad_reduce = flags & 1;
                        c.overlap_param_gather = flags & 2;
                        c.rank_order = flags & 4 ? RankOrder::kTpCpEpPpDp : RankOrder::kTpCpEpDpPp;
                        if (!ValidateConfig(w, c).ok()) continue;
                        absl::StatusOr<Estimate> e = EstimateIteration(w, c, p);
                        if (e.ok() && e->memory.fits) out.push_back(*e);
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}

TEST(Search, BestPlanEqualsBruteForce) {
  const SystemProfile p = Profile("dgx-a100-80gb");
  const Workload w = SmallModel();
  PlanRequest req;
  req.workload = w;
  req.gpus = {8};
  req.global_batch_size = 16;
  req.top_k = 5;
  absl::StatusOr<PlanResult> plan = Plan(req, p);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_FALSE(plan->plans.empty());
  std::vector<Estimate> all = BruteForce(w, p, 8, 16);
  ASSERT_FALSE(all.empty());
  std::sort(all.begin(), all.end(),
            [](const Estimate& a, const Estimate& b) { return a.iteration_time_s < b.iteration_time_s; });
  // The brute force sees configurations the planner counts as duplicates (flash with
  // selective, SP with TP 1, ZeRO with DP 1), so compare times, not configurations.
  for (size_t i = 0; i < plan->plans.size(); ++i) {
    EXPECT_NEAR(plan->plans[i].iteration_time_s, all[0].iteration_time_s,
                all[std::min(i, all.size() - 1)].iteration_time_s - all[0].iteration_time_s + 1e-9);
  }
  EXPECT_NEAR(plan->plans[0].iteration_time_s, all[0].iteration_time_s, 1e-9 * all[0].iteration_time_s);
  // The planner's k-th plan is never better than the brute force's k-th.
  std::vector<double> distinct;
  for (const Estimate& e : all) {
    if (distinct.empty() || e.iteration_time_s > distinct.back() * (1 + 1e-12)) distinct.push_back(e.iteration_time_s);
  }
  EXPECT_GE(plan->candidates_feasible, static_cast<int64_t>(distinct.size()) / 4);
  for (size_t i = 1; i < plan->plans.size(); ++i) {
    EXPECT_GE(plan->plans[i].iteration_time_s, plan->plans[i - 1].iteration_time_s);
  }
}

TEST(Search, IsDeterministic) {
  PlanRequest req;
  req.workload = SmallModel();
  req.gpus = {8, 16};
  req.global_batch_size = 64;
  req.top_k = 10;
  absl::StatusOr<PlanResult> a = Plan(req, Profile("dgx-a100-80gb"));
  absl::StatusOr<PlanResult> b = Plan(req, Profile("dgx-a100-80gb"));
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->plans.size(), b->plans.size());
  for (size_t i = 0; i < a->plans.size(); ++i) {
    EXPECT_EQ(a->plans[i].config.ShortString(), b->plans[i].config.ShortString());
    EXPECT_EQ(a->plans[i].iteration_time_s, b->plans[i].iteration_time_s);
  }
  EXPECT_EQ(a->candidates_evaluated, b->candidates_evaluated);
  EXPECT_FALSE(a->pareto.empty());
}

TEST(Search, ConstraintsAreHonoured) {
  PlanRequest req;
  req.workload = Model("gpt3-175b");
  req.gpus = {512};
  req.global_batch_size = 512;
  req.constraints.tensor_parallel = {4};
  req.constraints.max_pipeline_parallel = 16;
  req.constraints.recompute = {Recompute::kFull};
  absl::StatusOr<PlanResult> plan = Plan(req, Profile("dgx-a100-80gb"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_FALSE(plan->plans.empty());
  for (const Estimate& e : plan->plans) {
    EXPECT_EQ(e.config.tensor_parallel, 4);
    EXPECT_LE(e.config.pipeline_parallel, 16);
    EXPECT_EQ(e.config.recompute, Recompute::kFull);
    EXPECT_TRUE(e.memory.fits);
  }
}

TEST(Search, ExplainsWhenNothingFits) {
  PlanRequest req;
  req.workload = Model("gpt3-175b");
  req.gpus = {8};
  req.global_batch_size = 8;
  absl::StatusOr<PlanResult> plan = Plan(req, Profile("abci-v100-16gb"));
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->plans.empty());
  EXPECT_NE(plan->infeasible_reason.find("GiB short"), std::string::npos) << plan->infeasible_reason;
}

TEST(Search, DeadlineTruncates) {
  PlanRequest req;
  req.workload = Model("gpt3-175b");
  req.gpus = {4096};
  req.global_batch_size = 1536;
  req.deadline = absl::Now() - absl::Seconds(1);
  absl::StatusOr<PlanResult> plan = Plan(req, Profile("dgx-a100-80gb"));
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->truncated);
}

TEST(Search, RejectsBadRequests) {
  PlanRequest req;
  req.workload = Model("gpt3-175b");
  req.global_batch_size = 8;
  EXPECT_EQ(Plan(req, Profile("dgx-a100-80gb")).status().code(), absl::StatusCode::kInvalidArgument);
  req.gpus = {1 << 30};
  EXPECT_EQ(Plan(req, Profile("dgx-a100-80gb")).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace paraplan

namespace paraplan {
namespace {

TEST(Search, LayerGraphsExploreParaDLStrategies) {
  Workload cnn;
  cnn.name = "cnn";
  cnn.kind = Workload::Kind::kLayerGraph;
  cnn.layer_graph.layers = {
      {"conv1", "conv", {3, 512, 512}, {64, 256, 256}, {7, 7}, {2, 2}},
      {"relu1", "relu", {64, 256, 256}, {64, 256, 256}, {}, {}},
      {"conv2", "conv", {64, 256, 256}, {128, 256, 256}, {3, 3}, {1, 1}},
      {"conv3", "conv", {128, 256, 256}, {128, 256, 256}, {3, 3}, {1, 1}},
      {"pool", "pool", {128, 256, 256}, {128, 32, 32}, {8, 8}, {8, 8}},
      {"fc", "fc", {128, 32, 32}, {1000}, {}, {}},
  };
  PlanRequest req;
  req.workload = cnn;
  req.gpus = {16};
  req.global_batch_size = 16;  // small batch: data parallelism alone cannot use 16 GPUs well
  req.top_k = 20;
  absl::StatusOr<PlanResult> plan = Plan(req, Profile("abci-v100-16gb"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_FALSE(plan->plans.empty()) << plan->infeasible_reason;
  bool hybrid = false;
  for (const Estimate& e : plan->plans) {
    EXPECT_EQ(e.config.NumGpus(), 16);
    EXPECT_TRUE(ValidateConfig(cnn, e.config).ok()) << e.config.ShortString();
    hybrid |= e.config.spatial_parallel * e.config.filter_parallel * e.config.channel_parallel > 1;
  }
  EXPECT_TRUE(hybrid);  // the space includes spatial / filter / channel splits
  // The same search on the estimator one by one gives the same time for the best plan.
  absl::StatusOr<Estimate> again = EstimateIteration(cnn, plan->plans[0].config, Profile("abci-v100-16gb"));
  ASSERT_TRUE(again.ok());
  EXPECT_DOUBLE_EQ(again->iteration_time_s, plan->plans[0].iteration_time_s);
}

}  // namespace
}  // namespace paraplan
