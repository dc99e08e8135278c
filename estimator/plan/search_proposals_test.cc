// Unit tests of what the plan search proposes for the knobs frameworks added (search.h):
// torchtitan's selective recompute under fused attention, the MoE token dispatcher where
// experts span nodes, the all-to-all overlap where it runs, offloaded expert activations
// where nothing else fits, Megatron-Core's light recompute modules where a setting does not
// fit without them, pipeline end stages balanced against the embedding and the head, and
// ParaDL's strategies for layer graphs. The search's
// correctness (brute force), limits and errors: search_test.cc.
#include <functional>
#include <string>
#include <vector>

#include "estimator/inputs/validate.h"
#include "estimator/iteration/estimate.h"
#include "estimator/plan/search.h"
#include "estimator/plan/search_space.h"
#include "estimator/testing/test_util.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::Model;
using testing::Profile;

// A plan request for `w` on `gpus` GPUs at `global_batch`, ranking `top_k` plans.
PlanRequest Request(const Workload& w, int gpus, int global_batch, int top_k) {
  PlanRequest req;
  req.workload = w;
  req.gpus = {gpus};
  req.global_batch_size = global_batch;
  req.top_k = top_k;
  return req;
}

// Under fused attention Megatron's selective recompute stores what no recompute does, so
// the search skips it; torchtitan's is its per-op policy, which keeps less: the search
// offers it (Llama 3 70B on 64 H100s without pipeline stages, where plans with it are on
// the front).
TEST(Search, OffersTorchtitansSelectiveUnderFlash) {
  PlanRequest req = Request(testing::Model("llama3-70b"), 64, 512, 20);
  req.constraints.flash_attention = Flag::kOn;
  req.constraints.pipeline_parallel = {1};
  auto selective = [&](Framework f) {
    req.constraints.framework = f;
    absl::StatusOr<PlanResult> r = Plan(req, Profile("dgx-h100-80gb"));
    EXPECT_TRUE(r.ok()) << r.status();
    int n = 0;
    for (const Estimate& e : r->plans) n += e.config.recompute == Recompute::kSelective;
    return n;
  };
  EXPECT_GT(selective(Framework::kTorchtitan), 0);
  EXPECT_EQ(selective(Framework::kMegatron), 0);
}

// Under DeepSpeed the search proposes what its engines run: 1F1B on pipeline stages (its
// TrainSchedule), and no overlap flag where the engine reduces after the last micro-batch
// or gathers inside its step (OverlapsGradientReduction / OverlapsParameterGather): a
// plan says what will happen. Megatron keeps both overlaps on.
TEST(Search, DeepSpeedPlansRunItsScheduleWithoutOverlapsItIgnores) {
  PlanRequest req = Request(testing::Model("gpt3-175b"), 256, 512, 20);
  auto plans = [&](Framework f) {
    req.constraints.framework = f;
    absl::StatusOr<PlanResult> r = Plan(req, Profile("dgx-a100-80gb"));
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->plans : std::vector<Estimate>();
  };
  int staged = 0;
  for (const Estimate& e : plans(Framework::kDeepSpeed)) {
    const ParallelConfig& c = e.config;
    EXPECT_TRUE(c.pipeline_parallel == 1 || c.pipeline_schedule == PipelineSchedule::k1F1B) << c.ShortString();
    if (c.zero_stage <= 2) {
      EXPECT_EQ(c.overlap_grad_reduce, OverlapsGradientReduction(c)) << c.ShortString();
      EXPECT_FALSE(c.overlap_param_gather) << c.ShortString();
    }
    staged += c.pipeline_parallel > 1;
  }
  EXPECT_GT(staged, 0);
  for (const Estimate& e : plans(Framework::kMegatron)) {
    if (e.config.zero_stage == 1) {
      EXPECT_TRUE(e.config.overlap_param_gather) << e.config.ShortString();
    }
  }
}

// The search weighs DeepEP against the all-to-all and keeps the faster, each plan at the
// time of estimating it directly; under DeepSpeed, which has no DeepEP, the all-to-all.
TEST(Search, ChoosesTheTokenDispatcherByItsCost) {
  PlanRequest req = Request(Model("qwen3-30b-a3b"), 32, 64, 5);
  req.constraints.tensor_parallel = {1};
  const SystemProfile p = Profile("dgx-h100-80gb");
  // Across nodes (EP 16) and inside one (EP 8), DeepEP sends fewer copies of each token.
  for (int ep : {16, 8}) {
    req.constraints.expert_parallel = {ep};
    absl::StatusOr<PlanResult> plan = Plan(req, p);
    ASSERT_TRUE(plan.ok()) << plan.status();
    ASSERT_FALSE(plan->plans.empty());
    const Estimate& best = plan->plans.front();
    EXPECT_EQ(best.config.moe_dispatcher, MoeDispatcher::kDeepEp) << "EP " << ep;
    for (MoeDispatcher d : {MoeDispatcher::kAllToAll, MoeDispatcher::kDeepEp}) {
      ParallelConfig c = best.config;
      c.moe_dispatcher = d;
      absl::StatusOr<Estimate> direct = EstimateIteration(req.workload, c, p);
      ASSERT_TRUE(direct.ok()) << direct.status();
      EXPECT_LE(best.iteration_time_s, direct->iteration_time_s);
      if (d == best.config.moe_dispatcher) {
        EXPECT_DOUBLE_EQ(direct->iteration_time_s, best.iteration_time_s);
      }
    }
  }
  req.constraints.expert_parallel = {16};
  req.constraints.framework = Framework::kDeepSpeed;
  absl::StatusOr<PlanResult> plan = Plan(req, p);
  ASSERT_TRUE(plan.ok());
  for (const Estimate& e : plan->plans) EXPECT_EQ(e.config.moe_dispatcher, MoeDispatcher::kAllToAll);
}

// Asked for the all-to-all overlap, every plan runs it where Megatron-Core does (EP > 1,
// no full recompute, virtual stages under a pipeline), each at the time and memory of
// estimating it directly; unasked, no plan has it. Refused under DeepSpeed.
TEST(Search, AppliesTheAllToAllOverlapWhereItRuns) {
  PlanRequest req = Request(Model("qwen3-30b-a3b"), 64, 256, 20);
  req.constraints.tensor_parallel = {1, 2};
  req.constraints.pipeline_parallel = {1, 2};
  const SystemProfile p = Profile("dgx-h100-80gb");
  absl::StatusOr<PlanResult> plain = Plan(req, p);
  ASSERT_TRUE(plain.ok()) << plain.status();
  for (const Estimate& e : plain->plans) EXPECT_FALSE(e.config.moe_a2a_overlap);
  req.constraints.moe_a2a_overlap = true;
  absl::StatusOr<PlanResult> plan = Plan(req, p);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_FALSE(plan->plans.empty());
  int overlapped = 0;
  for (const Estimate& e : plan->plans) {
    const ParallelConfig& c = e.config;
    const bool runs = c.expert_parallel > 1 && c.recompute != Recompute::kFull;
    EXPECT_EQ(c.moe_a2a_overlap, runs) << c.ShortString();
    if (c.moe_a2a_overlap) {
      ++overlapped;
      EXPECT_TRUE(c.pipeline_parallel == 1 || c.virtual_pipeline_stages > 1) << c.ShortString();
    }
    absl::StatusOr<Estimate> direct = EstimateIteration(req.workload, c, p);
    ASSERT_TRUE(direct.ok()) << direct.status() << c.ShortString();
    EXPECT_DOUBLE_EQ(direct->iteration_time_s, e.iteration_time_s) << c.ShortString();
    EXPECT_DOUBLE_EQ(direct->memory.total_bytes, e.memory.total_bytes) << c.ShortString();
  }
  EXPECT_GT(overlapped, 0);
  // The best with the overlap is at least as fast as the best without it.
  EXPECT_LE(plan->plans.front().iteration_time_s, plain->plans.front().iteration_time_s);
  req.constraints.framework = Framework::kDeepSpeed;
  absl::StatusOr<PlanResult> refused = Plan(req, p);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("constraints.moe_a2a_overlap"), std::string::npos) << refused.status();
}

// Qwen3-235B on 256 GPUs, global batch 2,048, at the TP, PP and EP given.
PlanRequest Qwen3Request(int top_k, int tp, int pp, int ep) {
  PlanRequest req = Request(Model("qwen3-235b-a22b"), 256, 2048, top_k);
  req.constraints.tensor_parallel = {tp};
  req.constraints.pipeline_parallel = {pp};
  req.constraints.expert_parallel = {ep};
  return req;
}

// Each plan's numbers are those of estimating it directly, and the same configuration
// without what `strip` takes away does not fit: the search added it because it had to.
void ExpectDirectAndNeeded(const PlanRequest& req, const SystemProfile& p, const PlanResult& plan,
                           const std::function<void(ParallelConfig*)>& strip) {
  for (const Estimate& e : plan.plans) {
    absl::StatusOr<Estimate> direct = EstimateIteration(req.workload, e.config, p);
    ASSERT_TRUE(direct.ok()) << direct.status();
    EXPECT_DOUBLE_EQ(direct->iteration_time_s, e.iteration_time_s);
    EXPECT_DOUBLE_EQ(direct->memory.total_bytes, e.memory.total_bytes);
    EXPECT_TRUE(direct->memory.fits);
    ParallelConfig kept = e.config;
    strip(&kept);
    absl::StatusOr<Estimate> without = EstimateIteration(req.workload, kept, p);
    ASSERT_TRUE(without.ok()) << without.status();
    EXPECT_FALSE(without->memory.fits) << kept.ShortString() << ": " << without->memory.total_bytes / (1 << 30);
  }
}

// Qwen3-235B at TP 1, PP 8, CP 1, EP 32, two sequences a micro-batch, no recompute, the
// distributed optimizer, on 256 GB200s: more than the 186 GiB a GPU holds without
// offloading, so the search offers what the Megatron-MoE model zoo runs there, the
// experts' inputs offloaded (expert_fc1, moe_act), and each plan's numbers are those of
// estimating it directly. DeepSpeed has
// no such offloading: it offers none.
TEST(Search, OffloadsExpertActivationsWhereNothingElseFits) {
  PlanRequest req = Qwen3Request(3, 1, 8, 32);
  req.constraints.context_parallel = {1};
  req.constraints.micro_batch_size = {2};
  req.constraints.recompute = {Recompute::kNone};
  req.constraints.virtual_pipeline_stages = {1};
  req.constraints.zero_stage = {1};  // the distributed optimizer, as the zoo runs it
  const SystemProfile p = Profile("gb200-nvl72");
  absl::StatusOr<PlanResult> plan = Plan(req, p);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_FALSE(plan->plans.empty()) << plan->infeasible_reason;
  for (const Estimate& e : plan->plans) {
    EXPECT_EQ(e.config.offload_modules, kOffloadExpertFc1 | kOffloadMoeAct) << e.config.ShortString();
  }
  ExpectDirectAndNeeded(req, p, *plan, [](ParallelConfig* c) { c->offload_modules = 0; });
  req.constraints.framework = Framework::kDeepSpeed;
  plan = Plan(req, p);
  ASSERT_TRUE(plan.ok());
  for (const Estimate& e : plan->plans) EXPECT_EQ(e.config.offload_modules, 0u);
}

// Qwen3-235B on 256 H100s at TP 2, PP 4 and EP 16: no setting fits without recomputation, and
// Megatron-Core's output-discarding checkpoints of the norms and the experts' activation
// (recompute_modules layernorm, moe_act: the Megatron-MoE model zoo's choice) make some
// fit at a fraction of full recompute's cost. The search offers them only on a setting
// that does not fit without (each plan's same configuration without them is over the
// memory), its numbers are those of estimating it directly, and it is faster than the best
// plan full recompute gives. DeepSpeed has no recompute modules: it offers none.
TEST(Search, RecomputesLightModulesWhereTheSettingDoesNotFitWithout) {
  PlanRequest req = Qwen3Request(5, 2, 4, 16);
  req.constraints.framework = Framework::kMegatron;
  const SystemProfile p = Profile("dgx-h100-80gb");
  absl::StatusOr<PlanResult> plan = Plan(req, p);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_FALSE(plan->plans.empty()) << plan->infeasible_reason;
  for (const Estimate& e : plan->plans) {
    ASSERT_EQ(e.config.recompute, Recompute::kSelective) << e.config.ShortString();
    EXPECT_EQ(e.config.recompute_modules, kRecomputeLayernorm | kRecomputeMoeAct) << e.config.ShortString();
  }
  ExpectDirectAndNeeded(req, p, *plan, [](ParallelConfig* c) {
    c->recompute = Recompute::kNone;
    c->recompute_modules = 0;
  });
  req.constraints.recompute = {Recompute::kFull};
  absl::StatusOr<PlanResult> full = Plan(req, p);
  ASSERT_TRUE(full.ok() && !full->plans.empty());
  EXPECT_LT(plan->plans.front().iteration_time_s, full->plans.front().iteration_time_s);
  // Asked for selective recompute under fused attention (where the core attention has
  // nothing to drop), it plans the light modules rather than nothing.
  req.constraints.recompute = {Recompute::kSelective};
  req.constraints.flash_attention = Flag::kOn;
  absl::StatusOr<PlanResult> selective = Plan(req, p);
  ASSERT_TRUE(selective.ok()) << selective.status();
  ASSERT_FALSE(selective->plans.empty()) << selective->infeasible_reason;
  for (const Estimate& e : selective->plans) {
    EXPECT_EQ(e.config.recompute_modules & (kRecomputeLayernorm | kRecomputeMoeAct),
              kRecomputeLayernorm | kRecomputeMoeAct) << e.config.ShortString();
  }
  req.constraints.flash_attention = Flag::kAny;
  req.constraints.recompute = {};
  req.constraints.framework = Framework::kDeepSpeed;
  req.constraints.pipeline_parallel = {};
  plan = Plan(req, p);
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (const Estimate& e : plan->plans) EXPECT_EQ(e.config.recompute_modules, 0u) << e.config.ShortString();
}

// End stages balanced by hand: 10 layers of 1 s, no embedding cost, a 3 s head, 4 stages.
// The even split (2, 3, 2, 3 layers) leaves the last stage 3 + 3 = 6 s; Megatron-Core's
// first / last counts with the middle stages even: 3, 3, 3, 1 (+ 3) = 4 s, the best
// (4, 2, 2, 2 + 3 = 5; 2, 3, 3, 2 + 3 = 5). A head under half a layer balances nothing.
TEST(Search, BalancesEndStagesAgainstTheHead) {
  ModelCosts m;
  m.layers.resize(10);
  for (BlockCosts& l : m.layers) l.fwd_s = 1;
  m.post.fwd_s = 3;
  IndexLayers(&m);
  const EndLayers ends = BalancedEndLayers(m, 4);
  EXPECT_EQ(ends.first, 3);
  EXPECT_EQ(ends.last, 1);
  EXPECT_DOUBLE_EQ(SlowestStageS(m, 4, 1, 3, 1), 4);
  EXPECT_DOUBLE_EQ(SlowestStageS(m, 4, 1, 0, 0), 6);
  // With a cap, costing stops at the first stage that reaches it: the even split's stages
  // take 2, 3, 2, 6 s, so a cap of 2.5 stops at the second (3 s); above 6, all are costed.
  EXPECT_DOUBLE_EQ(SlowestStageS(m, 4, 1, 0, 0, 2.5), 3);
  EXPECT_DOUBLE_EQ(SlowestStageS(m, 4, 1, 0, 0, 7), 6);
  EXPECT_DOUBLE_EQ(SlowestStageS(m, 4, 1, 3, 1, 4), 4);
  m.post.fwd_s = 0.4;
  IndexLayers(&m);
  EXPECT_EQ(BalancedEndLayers(m, 4).first, 0);
}

// DeepSeek-V3 on 256 B200s at PP 16 (61 layers, the MTP layer, the LM head and the loss on
// the last stage): the plan's end stages are uneven, and it runs faster than the even
// split of the same configuration would.
TEST(Search, PlansDeepSeekV3StagesAroundItsHead) {
  PlanRequest req = Request(testing::Model("deepseek-v3"), 256, 4096, 1);
  req.constraints.framework = Framework::kNemo;
  req.constraints.pipeline_parallel = {16};
  const SystemProfile p = Profile("dgx-b200-180gb");
  absl::StatusOr<PlanResult> r = Plan(req, p);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->plans.empty());
  ParallelConfig c = r->plans[0].config;
  EXPECT_GT(c.first_pipeline_stage_layers + c.last_pipeline_stage_layers, 0);
  absl::StatusOr<Estimate> direct = EstimateIteration(req.workload, c, p);
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_NEAR(direct->iteration_time_s, r->plans[0].iteration_time_s, 1e-9);
  c.first_pipeline_stage_layers = c.last_pipeline_stage_layers = 0;
  absl::StatusOr<Estimate> even = EstimateIteration(req.workload, c, p);
  ASSERT_TRUE(even.ok()) << even.status();
  EXPECT_LT(r->plans[0].iteration_time_s, even->iteration_time_s);
}

TEST(Search, LayerGraphsExploreParaDLStrategies) {
  Workload cnn;
  cnn.name = "cnn";
  cnn.kind = Workload::Kind::kLayerGraph;
  cnn.layer_graph.layers = {
      testing::Layer("conv1", LayerKind::kConv, {3, 512, 512}, {64, 256, 256}, {7, 7}, {2, 2}),
      testing::Layer("relu1", LayerKind::kRelu, {64, 256, 256}, {64, 256, 256}, {}, {}),
      testing::Layer("conv2", LayerKind::kConv, {64, 256, 256}, {128, 256, 256}, {3, 3}, {1, 1}),
      testing::Layer("conv3", LayerKind::kConv, {128, 256, 256}, {128, 256, 256}, {3, 3}, {1, 1}),
      testing::Layer("pool", LayerKind::kPool, {128, 256, 256}, {128, 32, 32}, {8, 8}, {8, 8}),
      testing::Layer("fc", LayerKind::kFc, {128, 32, 32}, {1000}, {}, {}),
  };
  PlanRequest req = Request(cnn, 16, 16, 20);  // small batch: data parallelism alone cannot use 16 GPUs well
  // ABCI's nodes with a device-path implementation (NCCL halos, as DistConv or a PyTorch
  // port runs them): ChainerMN's host-staged tensors make every split slower than data
  // parallelism there, and the search is what this test is about.
  const SystemProfile abci = testing::DevicePathAbci();
  absl::StatusOr<PlanResult> plan = Plan(req, abci);
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
  absl::StatusOr<Estimate> again = EstimateIteration(cnn, plan->plans[0].config, abci);
  ASSERT_TRUE(again.ok());
  EXPECT_DOUBLE_EQ(again->iteration_time_s, plan->plans[0].iteration_time_s);
}

}  // namespace
}  // namespace paraplan
