// TransformerMemo: a search's shapes that differ in their expert layout share attention,
// the dense layers, the embedding and the head; with the memo every shape's costs must
// be those computed without it, bit for bit, in any order and past the memo's bound.
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "estimator/system/collectives.h"
#include "estimator/system/hardware.h"
#include "estimator/testing/test_util.h"
#include "estimator/workloads/model_costs.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

static_assert(std::is_trivially_copyable_v<BlockCosts>, "compared byte for byte");

bool SameBlocks(const BlockCosts& a, const BlockCosts& b) { return std::memcmp(&a, &b, sizeof(BlockCosts)) == 0; }

// Every number the rest of the model reads from ModelCosts.
void ExpectSame(const ModelCosts& with, const ModelCosts& without, const std::string& what) {
  ASSERT_EQ(with.layers.size(), without.layers.size()) << what;
  for (size_t i = 0; i < with.layers.size(); ++i) {
    EXPECT_TRUE(SameBlocks(with.layers[i], without.layers[i])) << what << " layer " << i;
  }
  EXPECT_TRUE(SameBlocks(with.pre, without.pre)) << what;
  EXPECT_TRUE(SameBlocks(with.post, without.post)) << what;
  EXPECT_EQ(with.prefix_total_s, without.prefix_total_s) << what;
  EXPECT_EQ(with.moe_dispatcher, without.moe_dispatcher) << what;
  EXPECT_EQ(with.pp_send_bytes, without.pp_send_bytes) << what;
  EXPECT_EQ(with.model_flops_per_sample, without.model_flops_per_sample) << what;
  EXPECT_EQ(with.tokens_per_sample, without.tokens_per_sample) << what;
}

// DeepSeek-V3 (MLA, dense first layers, shared experts, MTP) and GPT-OSS-120B (sliding
// windows): shapes in an order where the expert layout changes between shapes that
// share the rest and the rest between shapes that share the layout.
TEST(TransformerMemo, SameCostsAsWithoutWhateverTheExpertLayout) {
  const SystemProfile p = testing::Profile("dgx-h100-80gb");
  for (const char* name : {"deepseek-v3", "gpt-oss-120b"}) {
    const Workload w = testing::Model(name);
    const Hardware hw(p, w.precision);
    const Collectives coll(hw);
    TransformerMemo memo;
    int shapes = 0;
    for (int ep : {1, 8, 32}) {
      for (int tp : {1, 2, 8}) {
        for (int etp : {1, tp}) {
          for (MoeDispatcher d : {MoeDispatcher::kAllToAll, MoeDispatcher::kDeepEp}) {
            for (bool a2a : {false, true}) {
              for (Recompute rc : {Recompute::kNone, Recompute::kFull}) {
                ModelShape s;
                s.tensor_parallel = tp;
                s.sequence_parallel = tp > 1;
                s.expert_parallel = ep;
                s.expert_tensor_parallel = etp;
                s.moe_dispatcher = d;
                s.moe_a2a_overlap = a2a;
                s.weigh_deepep = d == MoeDispatcher::kAllToAll && ep > 1;
                s.recompute = rc;
                s.flash_attention = true;
                s.micro_batch_size = 1 + (shapes / 7) % 2;  // 7: no loop above pairs with it
                const std::string what = std::string(name) + " shape " + std::to_string(shapes++);
                absl::StatusOr<ModelCosts> with = ComputeModelCosts(w, s, hw, coll, {}, &memo);
                absl::StatusOr<ModelCosts> without = ComputeModelCosts(w, s, hw, coll);
                ASSERT_EQ(with.ok(), without.ok()) << what;
                if (with.ok()) ExpectSame(*with, *without, what);
              }
            }
          }
        }
      }
    }
  }
}

// More shapes than the memo keeps (it is cleared at kMaxEntries): still the same costs,
// and a shape seen before the clearing is computed again, alike.
TEST(TransformerMemo, BoundedAndStillExact) {
  const SystemProfile p = testing::Profile("dgx-a100-80gb");
  const Workload w = testing::Model("mixtral-8x7b");
  const Hardware hw(p, w.precision);
  const Collectives coll(hw);
  TransformerMemo memo;
  const int n = static_cast<int>(TransformerMemo::kMaxEntries) + 40;
  for (int round = 0; round < 2; ++round) {
    for (int mbs = 1; mbs <= n; mbs += (round == 0 ? 1 : 97)) {
      ModelShape s;
      s.micro_batch_size = mbs;
      s.expert_parallel = round == 0 ? 1 : 8;
      absl::StatusOr<ModelCosts> with = ComputeModelCosts(w, s, hw, coll, {}, &memo);
      absl::StatusOr<ModelCosts> without = ComputeModelCosts(w, s, hw, coll);
      ASSERT_TRUE(with.ok() && without.ok()) << mbs;
      ExpectSame(*with, *without, "mbs " + std::to_string(mbs));
    }
  }
}

}  // namespace
}  // namespace paraplan
