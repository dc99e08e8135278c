// Muon by hand: which matrices its Newton-Schulz steps orthogonalise and how often, how
// the step is shared among ranks, the bytes it keeps, where it runs, and that the planner
// proposes only what runs it.
#include <string>

#include "estimator/inputs/validate.h"
#include "estimator/iteration/estimate.h"
#include "estimator/iteration/stage_costs.h"
#include "estimator/plan/search.h"
#include "estimator/system/hardware.h"
#include "estimator/testing/test_util.h"
#include "estimator/workloads/model_costs.h"
#include "estimator/workloads/muon.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using ::testing::HasSubstr;
using testing::Model;
using testing::Profile;

// Five steps of X X^T, A^2 and B X on the smaller side first: 2,048 x 7,168 as 7,168 x
// 2,048, and nothing for an empty matrix.
TEST(Muon, NewtonSchulzIsFiveStepsOfThreeGemms) {
  const Hardware hw(Profile("dgx-h100-80gb"), Precision::kBf16);
  const double step = hw.BatchedMatmulTime(2048, 2048, 7168, 1, 4) + hw.BatchedMatmulTime(2048, 2048, 2048, 1, 4) +
                      hw.BatchedMatmulTime(2048, 7168, 2048, 1, 4);
  EXPECT_DOUBLE_EQ(NewtonSchulzSeconds(hw, 2048, 7168), 5 * step);
  EXPECT_DOUBLE_EQ(NewtonSchulzSeconds(hw, 7168, 2048), 5 * step);
  EXPECT_EQ(NewtonSchulzSeconds(hw, 0, 7168), 0);
  // 5 x (4 m^2 n + 2 m^3) FLOPs: 8,192 x 8,192 at the 16-bit rate, within its efficiency.
  const double flops = 5 * (4.0 + 2.0) * 8192.0 * 8192.0 * 8192.0;
  const double s = NewtonSchulzSeconds(hw, 8192, 8192);
  EXPECT_GT(flops / s, 0.5 * 989e12);
  EXPECT_LT(flops / s, 989e12);
}

// Llama 3 8B's layer: Q and O 4,096 x 4,096, K and V 1,024 x 4,096, fc1 (gate and up)
// 28,672 x 4,096, fc2 4,096 x 14,336; no experts. Mixtral 8x7B's: the same attention, a
// router of 8 x 4,096, and 8 experts of Llama 3 8B's MLP.
TEST(Muon, TheLayersMatrices) {
  const Hardware hw(Profile("dgx-h100-80gb"), Precision::kBf16);
  auto ns = [&](double m, double n) { return NewtonSchulzSeconds(hw, m, n); };
  const double attention = 2 * ns(4096, 4096) + 2 * ns(1024, 4096);
  const double mlp = ns(28672, 4096) + ns(4096, 14336);
  const MuonStepTimes llama = MuonStepTimesOf(Model("llama3-8b").transformer.Resolved(), hw);
  EXPECT_NEAR(llama.dense_s_per_layer, attention + mlp, 1e-12);
  EXPECT_EQ(llama.experts_s_per_layer, 0);
  const MuonStepTimes mixtral = MuonStepTimesOf(Model("mixtral-8x7b").transformer.Resolved(), hw);
  EXPECT_NEAR(mixtral.dense_s_per_layer, attention + ns(8, 4096), 1e-12);
  EXPECT_NEAR(mixtral.experts_s_per_layer, 8 * mlp, 1e-12);
}

// Every TP rank orthogonalises whole matrices; under ZeRO 1 (layer-wise) the DP x CP ranks
// share the dense ones and the expert-DP ranks their EP rank's experts (1 / EP of them),
// at ZeRO 0 each rank does all it holds.
TEST(Muon, RanksShareTheStepUnderZero1) {
  ModelCosts m;
  m.muon = {2.0, 64.0};
  ParallelConfig c = testing::Config(2, 1, 8, 1, 64);
  c.context_parallel = 2;
  c.expert_parallel = 4;
  c.expert_tensor_parallel = 1;
  c.zero_stage = 1;
  // Experts fold over TP x CP x DP = 32 ranks: EP 4, expert-DP 8.
  EXPECT_DOUBLE_EQ(MuonStepS(m, c, 3), 3 * (2.0 / 16 + 64.0 / 4 / 8));
  c.zero_stage = 0;
  EXPECT_DOUBLE_EQ(MuonStepS(m, c, 3), 3 * (2.0 + 64.0 / 4));
}

// A BF16 Muon step keeps the fp32 master and one fp32 momentum, 8 bytes a parameter for
// Adam's 12, sharded under ZeRO 1, but the embedding and the LM head take Adam
// (muon_scalar_optimizer): Llama 3 8B's 128,256 x 4,096 twice and its final RMSNorm's 4,096
// at 12. It adds its orthogonalisation to the step. ZeRO 2 and 3, an offloaded step, other
// frameworks and layer graphs are refused by name.
TEST(Muon, KeepsOneMomentumAndRunsWhereMegatronRunsIt) {
  ParallelConfig c = testing::Config(1, 1, 8, 1, 64);
  c.flash_attention = true;
  c.zero_stage = 1;
  Workload w = Model("llama3-8b");
  absl::StatusOr<Estimate> adam = EstimateIteration(w, c, Profile("dgx-h100-80gb"));
  w.optimizer = Optimizer::kMuon;
  absl::StatusOr<Estimate> muon = EstimateIteration(w, c, Profile("dgx-h100-80gb"));
  ASSERT_TRUE(adam.ok() && muon.ok()) << muon.status();
  const double params = adam->memory.optimizer_bytes / 12;  // this rank's shard
  const double adam_params = (2 * 128256.0 * 4096 + 4096) / 8;
  EXPECT_NEAR(muon->memory.optimizer_bytes, 8 * params + 4 * adam_params, 1);
  const Hardware hw(Profile("dgx-h100-80gb"), Precision::kBf16);
  const double ns = 32 * MuonStepTimesOf(w.transformer.Resolved(), hw).dense_s_per_layer / 8;
  EXPECT_GT(muon->time.optimizer_s, ns);
  EXPECT_LT(muon->time.optimizer_s, ns + adam->time.optimizer_s);
  c.zero_stage = 2;
  EXPECT_THAT(std::string(EstimateIteration(w, c, Profile("dgx-h100-80gb")).status().message()),
              HasSubstr("config.zero_stage"));
  c.zero_stage = 1;
  c.offload.optimizer = true;
  EXPECT_THAT(std::string(EstimateIteration(w, c, Profile("dgx-h100-80gb")).status().message()),
              HasSubstr("config.offload.optimizer"));
  c.offload.optimizer = false;
  c.framework = Framework::kTorchtitan;
  EXPECT_THAT(std::string(EstimateIteration(w, c, Profile("dgx-h100-80gb")).status().message()),
              HasSubstr("workload.optimizer"));
  Workload cnn = Model("resnet50");
  cnn.optimizer = Optimizer::kMuon;
  EXPECT_THAT(std::string(ValidateWorkload(cnn).message()), HasSubstr("workload.optimizer"));
}

// Every stage steps its own layers and the iteration waits for the longest: DeepSeek-V3
// (61 layers, one MTP depth) at PP 8 with 6 layers on each end stage holds 8, 8, 8, 8, 8
// and 9 on the middle ones and 6 + 1 on the last, so its Muon step is nine layers'
// (MuonStepS) whichever stage paces the pipeline; with four MTP depths the last stage's
// ten. Until stop 68 the step took the pacing stage's layers: a second MTP depth, which
// made the last stage the slowest, cut it from nine layers' to six (property_sweep.py
// --wide seed 101: one more MTP layer 8.5 % faster).
TEST(Muon, StepsOnTheStageOfTheMostLayers) {
  Workload w = Model("deepseek-v3");
  w.optimizer = Optimizer::kMuon;
  ParallelConfig c = testing::Config(1, 8, 2, 1, 16);
  c.expert_parallel = 2;
  c.first_pipeline_stage_layers = c.last_pipeline_stage_layers = 6;
  c.recompute = Recompute::kFull;
  c.flash_attention = true;
  const SystemProfile p = Profile("gb200-nvl72");
  double before = 0;
  for (int mtp : {1, 2, 4}) {
    w.transformer.mtp_num_layers = mtp;
    const ModelCosts m = testing::Bf16Costs(w, c.Normalized(), p);
    const StageCosts st = ComputeStageCosts(m, 8, 1, 6, 6);
    EXPECT_EQ(st.max_stage_layers, mtp < 4 ? 9 : 10) << mtp;
    absl::StatusOr<Estimate> e = EstimateIteration(w, c, p);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_GE(e->time.optimizer_s, MuonStepS(m, c.Normalized(), st.max_stage_layers)) << mtp;
    EXPECT_GE(e->time.optimizer_s, before) << mtp;
    before = e->time.optimizer_s;
  }
}

// The planner proposes Muon plans at ZeRO 0 or 1 only, none with an offloaded step, and
// none under a framework it does not run in.
TEST(Muon, PlansRunIt) {
  PlanRequest req;
  req.workload = Model("llama3-8b");
  req.workload.optimizer = Optimizer::kMuon;
  req.gpus = {16};
  req.global_batch_size = 256;
  req.top_k = 30;
  req.constraints.allow_offload = true;
  absl::StatusOr<PlanResult> r = Plan(req, Profile("dgx-h100-80gb"));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->plans.empty());
  for (const Estimate& e : r->plans) {
    EXPECT_LE(e.config.zero_stage, 1) << e.config.ShortString();
    EXPECT_FALSE(e.config.offload.optimizer) << e.config.ShortString();
  }
  req.constraints.framework = Framework::kTorchtitan;
  EXPECT_THAT(std::string(Plan(req, Profile("dgx-h100-80gb")).status().message()), HasSubstr("workload.optimizer"));
}

}  // namespace
}  // namespace paraplan
