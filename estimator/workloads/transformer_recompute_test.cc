// Unit tests of what selective recomputation drops and re-runs (transformer_recompute.h):
// Megatron-Core's recompute modules on a Qwen3 MoE layer by hand, which norms the
// layernorm module can drop under the Transformer Engine spec, the planner's bound on
// the light modules, and torchtitan's op-level checkpointing.
#include "estimator/inputs/validate.h"
#include "estimator/system/collectives.h"
#include "estimator/system/hardware.h"
#include "estimator/testing/model_costs_on_a100.h"
#include "estimator/testing/test_util.h"
#include "estimator/workloads/model_costs.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::Model;
using testing::Profile;

absl::StatusOr<ModelCosts> Costs(const Workload& w, const ParallelConfig& c) { return testing::CostsOnA100(w, c); }

// Qwen3-235B as the Megatron-MoE zoo folds it: TP 2 with SP, EP 32 x expert-TP 1, one
// 4,096-token micro-batch, flash attention.
ParallelConfig Qwen3Folded(Recompute rc) {
  ParallelConfig c = testing::Config(2, 1, 16, 1, 16, rc);
  c.sequence_parallel = true;
  c.flash_attention = true;
  c.expert_parallel = 32;
  c.expert_tensor_parallel = 1;
  return c;
}

// torchtitan's selective checkpointing ("op" policy) keeps, per Llama 3 8B block at 8,192
// tokens, the block's input (2 bytes per token and hidden unit), wq's output (2), wv's
// (0.5), the attention's (2, and its statistics), w1's (3.5 x 2) and w2's (2): 15.5
// (measured on an H100: 15.0, docs/microbench/h100_op_sac.jsonl). It re-runs wk and wo
// (half the attention linears), w3 (a third of the MLP's) and the memory-bound kernels.
TEST(TransformerRecompute, TorchtitanSelectiveKeepsEverySecondMatmul) {
  const Workload w = Model("llama3-8b");
  ParallelConfig c = testing::Config(1, 1, 1, 1, 1);
  c.flash_attention = true;
  c.framework = Framework::kTorchtitan;
  absl::StatusOr<ModelCosts> none = Costs(w, c);
  c.recompute = Recompute::kSelective;
  absl::StatusOr<ModelCosts> sac = Costs(w, c);
  ASSERT_TRUE(none.ok() && sac.ok());
  const double unit = 8192.0 * 4096, lse = 32 * 4 / 4096.0;
  EXPECT_NEAR(sac->layers[0].activation_bytes / unit, 15.5 + lse, 1e-9);
  EXPECT_NEAR(none->layers[0].activation_bytes / unit, 34 + lse, 1e-9);
  // Re-run: more than a third and less than half of the forward's time.
  const double fwd = none->layers[0].fwd_s;
  EXPECT_GT(sac->layers[0].recompute_s, fwd / 3);
  EXPECT_LT(sac->layers[0].recompute_s, fwd / 2);
  // Megatron-Core's selective under flash attention re-runs the fused core alone (its
  // forward kernel: about a sixth of the layer's forward FLOPs at 8 k tokens, under a
  // fifth of its time); Megatron-DeepSpeed's nothing.
  c.framework = Framework::kMegatron;
  const BlockCosts core = Costs(w, c)->layers[0];
  EXPECT_GT(core.recompute_s, 0);
  EXPECT_LT(core.recompute_s, fwd / 5);
  EXPECT_NEAR(core.activation_bytes / unit, 34, 1e-9);
  c.framework = Framework::kDeepSpeed;
  EXPECT_DOUBLE_EQ(Costs(w, c)->layers[0].recompute_s, 0);
  // A GPT block's six matmuls (wq, wk, wv, wo, w1, w2): it keeps the input 2, wq 2, wv 2
  // (every head has its own K / V), the attention 2 and w1 (4h wide) 8 = 16 bytes, and
  // re-runs w2 among the rest (GPT-3 175B, 2,048 tokens, 96 heads).
  const Workload gpt = Model("gpt3-175b");
  c.framework = Framework::kTorchtitan;
  absl::StatusOr<ModelCosts> g = Costs(gpt, c);
  ASSERT_TRUE(g.ok());
  EXPECT_NEAR(g->layers[0].activation_bytes / (2048.0 * 12288), 16 + 96 * 4 / 12288.0, 1e-9);
}

// Megatron-Core's recompute modules on a Qwen3-235B layer at TP 2 with SP, EP 32 x
// expert-TP 1, one 4,096-token micro-batch, flash attention: core_attn re-runs the fused
// core for its log-sum-exp (4,096 queries x 32 heads x 4 B); layernorm drops the
// pre-MLP norm's output, 2,048 x 4,096 x 2 B; moe_act the experts' SwiGLU output,
// 16,384 rows x 1,536 x 2 B; moe everything the MoE block kept but its input (one
// 2,048 x 4,096 tensor), and re-runs its dispatch and combine.
TEST(TransformerRecompute, RecomputeModules) {
  const Workload w = Model("qwen3-235b-a22b");
  ParallelConfig c = Qwen3Folded(Recompute::kSelective);
  absl::StatusOr<ModelCosts> base = Costs(w, c);
  c.recompute_modules = kRecomputeLayernorm;
  absl::StatusOr<ModelCosts> norm = Costs(w, c);
  c.recompute_modules = kRecomputeMoeAct;
  absl::StatusOr<ModelCosts> act = Costs(w, c);
  c.recompute_modules = kRecomputeMoe;
  absl::StatusOr<ModelCosts> moe = Costs(w, c);
  c.recompute = Recompute::kNone;
  absl::StatusOr<ModelCosts> kept = Costs(w, c);
  c.recompute = Recompute::kSelective;
  ASSERT_TRUE(base.ok() && norm.ok() && act.ok() && moe.ok() && kept.ok());
  const BlockCosts& b = base->layers[0];
  const BlockCosts& n = kept->layers[0];
  EXPECT_DOUBLE_EQ(n.activation_bytes - b.activation_bytes, 4096.0 * 32 * 4);
  EXPECT_GT(b.recompute_s, 0);
  EXPECT_LT(b.recompute_s, n.fwd_s / 4);
  // The pre-MLP norm alone is a module of its own (the input norm is fused into the QKV
  // projection): 2,048 tokens x 4,096 x 2 bytes.
  EXPECT_DOUBLE_EQ(n.activation_bytes - norm->layers[0].activation_bytes, 2048.0 * 4096 * 2);
  EXPECT_DOUBLE_EQ(n.activation_bytes - act->layers[0].activation_bytes, 16384.0 * 1536 * 2);
  EXPECT_GT(norm->layers[0].recompute_s, 0);
  EXPECT_GT(act->layers[0].recompute_s, 0);
  // moe keeps its input only: more saved than the other two together; its re-run costs
  // a forward's expert-parallel communication besides the compute.
  EXPECT_GT(n.activation_bytes - moe->layers[0].activation_bytes,
            (n.activation_bytes - norm->layers[0].activation_bytes) +
                (n.activation_bytes - act->layers[0].activation_bytes));
  EXPECT_GT(moe->layers[0].recompute_s, b.ep_s / 2);
  // The planner's bound on the light modules (layernorm, moe_act): by hand, the pre-MLP
  // norm's output (2,048 tokens x 4,096 x 2 bytes) and the experts' activation output
  // (16,384 rows x 1,536 x 2 bytes), what the two together drop, and no more.
  const double light = 2048.0 * 4096 * 2 + 16384.0 * 1536 * 2;
  EXPECT_DOUBLE_EQ(b.light_recompute_bytes, light);
  c.recompute_modules = kRecomputeLayernorm | kRecomputeMoeAct;
  absl::StatusOr<ModelCosts> both = Costs(w, c);
  ASSERT_TRUE(both.ok());
  EXPECT_DOUBLE_EQ(n.activation_bytes - both->layers[0].activation_bytes, light);
  EXPECT_EQ(both->layers[0].light_recompute_bytes, 0);
  EXPECT_DOUBLE_EQ(moe->layers[0].light_recompute_bytes, 2048.0 * 4096 * 2);  // moe_act is inside moe
  c.recompute = Recompute::kNone;
  c.recompute_modules = 0;
  absl::StatusOr<ModelCosts> none = Costs(w, c);
  ASSERT_TRUE(none.ok());
  EXPECT_DOUBLE_EQ(none->layers[0].light_recompute_bytes, light);
  c.recompute = Recompute::kFull;
  absl::StatusOr<ModelCosts> full = Costs(w, c);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->layers[0].light_recompute_bytes, 0);
}

// Under Megatron-Core's Transformer Engine spec a dense layer fuses both norms into the
// linears after them (TELayerNormColumnParallelLinear), so the layernorm module drops
// nothing there; with MLA the input norm is a module of its own (DeepSeek-V3's first,
// dense, layers: one norm, 2,048 tokens x 7,168 x 2 bytes at TP 1).
TEST(TransformerRecompute, LayernormRecomputeDropsOnlyNormsOfTheirOwn) {
  ParallelConfig c = testing::Config(8, 1, 16, 1, 16, Recompute::kSelective);
  c.sequence_parallel = true;
  c.flash_attention = true;
  c.recompute_modules = kRecomputeCoreAttn;
  // What adding `modules` drops from layer `layer`'s activations.
  auto dropped = [&](const Workload& w, int layer, unsigned modules) {
    absl::StatusOr<ModelCosts> base = Costs(w, c);
    ParallelConfig n = c;
    n.recompute_modules = kRecomputeCoreAttn | modules;
    absl::StatusOr<ModelCosts> more = Costs(w, n);
    EXPECT_TRUE(base.ok() && more.ok());
    return base->layers[layer].activation_bytes - more->layers[layer].activation_bytes;
  };
  const Workload gpt3 = Model("gpt3-175b");
  EXPECT_EQ(dropped(gpt3, 0, kRecomputeLayernorm), 0);
  absl::StatusOr<ModelCosts> gpt3_costs = Costs(gpt3, c);
  ASSERT_TRUE(gpt3_costs.ok());
  EXPECT_EQ(gpt3_costs->layers[0].light_recompute_bytes, 0);  // nothing light to add: the planner skips it
  c = testing::Config(1, 1, 16, 1, 16, Recompute::kSelective);
  c.flash_attention = true;
  c.recompute_modules = kRecomputeCoreAttn;
  c.expert_parallel = 16;
  const Workload dsv3 = Model("deepseek-v3");
  EXPECT_DOUBLE_EQ(dropped(dsv3, 0, kRecomputeLayernorm), 4096.0 * 7168 * 2);
  absl::StatusOr<ModelCosts> dsv3_costs = Costs(dsv3, c);
  ASSERT_TRUE(dsv3_costs.ok());
  EXPECT_DOUBLE_EQ(dsv3_costs->layers[0].light_recompute_bytes,
                   dropped(dsv3, 0, kRecomputeLayernorm | kRecomputeMlaUpProj));
}

// Under context parallelism both recomputes re-run the ring's forward exchange with the
// core: full re-runs the whole forward, the exposed exchange included, so it never costs
// less than selective's core alone (Llama 3 8B, 2 k tokens over CP 4, where the ring outlasts
// the core it hides behind; Megatron-Core). Selective's re-run launches the core's 12
// kernels (4 attention calls, one a K/V block, 4 output and 4 log-sum-exp merges) and the
// ring's 3 forward sends again.
TEST(TransformerRecompute, RecomputeUnderContextParallelismRerunsTheRing) {
  Workload w = Model("llama3-8b");
  w.transformer.seq_length = 2048;
  ParallelConfig c = testing::Config(1, 1, 1, 1, 1, Recompute::kSelective);
  c.context_parallel = 4;
  c.flash_attention = true;
  absl::StatusOr<ModelCosts> selective = Costs(w, c);
  c.recompute = Recompute::kFull;
  absl::StatusOr<ModelCosts> full = Costs(w, c);
  ASSERT_TRUE(selective.ok() && full.ok());
  const BlockCosts& f = full->layers[0];
  ASSERT_GT(f.cp_fwd_s, 0);
  EXPECT_DOUBLE_EQ(f.recompute_s, f.fwd_s + f.tp_fwd_s + f.cp_fwd_s);
  EXPECT_GT(selective->layers[0].recompute_s, f.cp_fwd_s);
  EXPECT_GE(f.recompute_s, selective->layers[0].recompute_s);
  c.recompute = Recompute::kNone;
  absl::StatusOr<ModelCosts> none = Costs(w, c);
  ASSERT_TRUE(none.ok());
  EXPECT_DOUBLE_EQ(selective->layers[0].kernels - none->layers[0].kernels, 12 + 3);
}

// Fine-grained offloading of the norms follows the same rule as their recompute
// (transformer_layer.py: attn_norm and mlp_norm only where the norm is not an IdentityOp):
// Qwen3's MoE layer, TP 2 with SP (2,048 tokens a GPU), moves its pre-MLP norm's input,
// 2,048 x 4,096 x 2 bytes, and nothing for attn_norm (fused into the QKV projection); the
// QKV linear's input still leaves with layernorm recomputed, that norm not being re-run.
TEST(TransformerRecompute, NormOffloadingFollowsTheSeparateNorms) {
  const Workload w = Model("qwen3-235b-a22b");
  ParallelConfig c = Qwen3Folded(Recompute::kNone);
  auto moved = [&](unsigned offload) {
    ParallelConfig o = c;
    o.offload_modules = offload;
    absl::StatusOr<ModelCosts> m = Costs(w, o);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? m->layers[0].offloaded_bytes : -1;
  };
  const double e = 2048.0 * 4096 * 2;
  EXPECT_EQ(moved(kOffloadAttnNorm), 0);
  EXPECT_DOUBLE_EQ(moved(kOffloadMlpNorm), e);
  c.recompute = Recompute::kSelective;
  c.recompute_modules = kRecomputeLayernorm;
  EXPECT_DOUBLE_EQ(moved(kOffloadQkvLinear), e);
  // A dense layer fuses its pre-MLP norm into fc1: nothing to move.
  ParallelConfig dense = testing::Config(8, 1, 16, 1, 16);
  dense.sequence_parallel = true;
  dense.flash_attention = true;
  dense.offload_modules = kOffloadMlpNorm;
  absl::StatusOr<ModelCosts> gpt3 = Costs(Model("gpt3-175b"), dense);
  ASSERT_TRUE(gpt3.ok());
  EXPECT_EQ(gpt3->layers[0].offloaded_bytes, 0);
}

// Under FP8 fc2 keeps the SwiGLU output quantised (1 byte); recomputing moe_act has it
// keep the 16-bit original instead and drops that (Megatron-Core experts.py,
// set_save_original_input): against not recomputing, the quantised copy is saved, by
// hand 16,384 rows x 1,536 x 1 byte for the Qwen3 layer above (until stop 69 the 16-bit
// size came off, 2 bytes a row-element, so an FP8 layer with moe_act also offloaded held
// less as its busiest expert grew, property_sweep.py --wide seed 115).
TEST(TransformerRecompute, MoeActUnderFp8SavesTheQuantisedOutput) {
  Workload w = Model("qwen3-235b-a22b");
  w.precision = Precision::kFp8;
  w.quant_recipe = QuantRecipe::kCurrentScaling;
  ParallelConfig c = Qwen3Folded(Recompute::kNone);
  absl::StatusOr<ModelCosts> kept = Costs(w, c);
  c.recompute = Recompute::kSelective;
  c.recompute_modules = kRecomputeMoeAct;
  absl::StatusOr<ModelCosts> act = Costs(w, c);
  ASSERT_TRUE(kept.ok() && act.ok()) << kept.status() << act.status();
  EXPECT_DOUBLE_EQ(kept->layers[0].activation_bytes - act->layers[0].activation_bytes, 16384.0 * 1536 * 1);
}

}  // namespace
}  // namespace paraplan
