#include <cmath>

#include "estimator/collectives.h"
#include "estimator/hardware.h"
#include "estimator/model_costs.h"
#include "estimator/test_util.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::Model;
using testing::Profile;

absl::StatusOr<ModelCosts> Costs(const Workload& w, const ParallelConfig& c) {
  static const SystemProfile p = Profile("dgx-a100-80gb");
  static const Hardware hw(p, Precision::kBf16);
  static const Collectives coll(hw);
  return ComputeModelCosts(w, ModelShape::Of(c.Normalized()), hw, coll);
}

double TotalParams(const ModelCosts& m, double tp) {
  double n = m.pre.params + m.post.params;
  for (const BlockCosts& l : m.layers) n += l.params;
  return n * tp;
}

TEST(TransformerCosts, Gpt3FlopsMatchNarayananFormula) {
  Workload w = Model("gpt3-175b");
  w.transformer.tied_embeddings = false;
  ParallelConfig c = testing::Config(8, 1, 1, 1, 1);
  absl::StatusOr<ModelCosts> m = Costs(w, c);
  ASSERT_TRUE(m.ok());
  const double B = 1536, s = 2048, l = 96, h = 12288, V = 51200;
  // Narayanan et al. SC'21 eq. 3: 72 B s l h^2 (1 + s/(6h) + V/(16 l h)).
  const double expected = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  EXPECT_NEAR(m->model_flops_per_sample * B / expected, 1.0, 0.005);
}

// Korthikanti et al. 2022, sec. 4: activation bytes per layer.
TEST(TransformerCosts, ActivationMemoryMatchesKorthikantiClosedForms) {
  Workload w = Model("megatron-22b");
  const double s = 2048, b = 4, h = 6144, a = 64, t = 8;
  const double sbh = s * b * h;
  struct Case {
    bool sp;
    Recompute rc;
    double expected;
  } cases[] = {
      {false, Recompute::kNone, sbh * (10 + 24 / t + 5 * a * s / (h * t))},
      {true, Recompute::kNone, sbh / t * (34 + 5 * a * s / h)},
      {true, Recompute::kSelective, sbh / t * 34},
      {false, Recompute::kSelective, sbh * (10 + 24 / t)},
      {false, Recompute::kFull, 2 * sbh},
      {true, Recompute::kFull, 2 * sbh / t},
  };
  for (const Case& k : cases) {
    ParallelConfig c = testing::Config(8, 1, 1, 4, 4, k.rc);
    c.sequence_parallel = k.sp;
    absl::StatusOr<ModelCosts> m = Costs(w, c);
    ASSERT_TRUE(m.ok());
    EXPECT_NEAR(m->layers[0].activation_bytes / k.expected, 1.0, 1e-9)
        << "sp=" << k.sp << " recompute=" << RecomputeName(k.rc);
  }
}

TEST(TransformerCosts, ParameterCountsOfPresets) {
  // Llama 3 8B: 8.03e9 parameters; Mixtral 8x7B: 46.7e9 (model cards).
  absl::StatusOr<ModelCosts> llama = Costs(Model("llama3-8b"), testing::Config(1, 1, 1, 1, 1));
  ASSERT_TRUE(llama.ok());
  EXPECT_NEAR(TotalParams(*llama, 1) / 8.03e9, 1.0, 0.01);
  absl::StatusOr<ModelCosts> mixtral = Costs(Model("mixtral-8x7b"), testing::Config(1, 1, 1, 1, 1));
  ASSERT_TRUE(mixtral.ok());
  EXPECT_NEAR(TotalParams(*mixtral, 1) / 46.7e9, 1.0, 0.01);
}

TEST(TransformerCosts, ExpertParallelismShardsExperts) {
  ParallelConfig one = testing::Config(1, 1, 8, 1, 8);
  ParallelConfig eight = one;
  eight.expert_parallel = 8;
  absl::StatusOr<ModelCosts> a = Costs(Model("mixtral-8x7b"), one);
  absl::StatusOr<ModelCosts> b = Costs(Model("mixtral-8x7b"), eight);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NEAR(b->layers[0].expert_params * 8, a->layers[0].expert_params, 1);
  EXPECT_GT(b->layers[0].ep_s, 0);
  EXPECT_EQ(a->layers[0].ep_s, 0);
}

TEST(TransformerCosts, TensorParallelismAddsCommunication) {
  absl::StatusOr<ModelCosts> t1 = Costs(Model("llama3-70b"), testing::Config(1, 1, 1, 1, 1));
  absl::StatusOr<ModelCosts> t8 = Costs(Model("llama3-70b"), testing::Config(8, 1, 1, 1, 1));
  ASSERT_TRUE(t1.ok() && t8.ok());
  EXPECT_EQ(t1->layers[0].tp_fwd_s, 0);
  EXPECT_GT(t8->layers[0].tp_fwd_s, 0);
  EXPECT_LT(t8->layers[0].fwd_s, t1->layers[0].fwd_s / 4);
}

TEST(TransformerCosts, FlashAttentionStoresNoScores) {
  ParallelConfig c = testing::Config(8, 1, 1, 1, 1);
  ParallelConfig f = c;
  f.flash_attention = true;
  absl::StatusOr<ModelCosts> plain = Costs(Model("llama3-8b"), c);
  absl::StatusOr<ModelCosts> flash = Costs(Model("llama3-8b"), f);
  ASSERT_TRUE(plain.ok() && flash.ok());
  const double s = 8192, a = 32, t = 8;
  // The 5 a s / (h t) term of s b h: 5 * a * s * s / t bytes per micro-batch.
  const double scores = 5 * a * s * s / t;
  EXPECT_NEAR(plain->layers[0].activation_bytes - flash->layers[0].activation_bytes, scores,
              0.01 * scores);
}

}  // namespace
}  // namespace paraplan
