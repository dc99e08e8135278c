// An attention layer's costs by hand: the kernel each framework runs, sliding windows and
// their context-parallel exchange, flash attention's memory, head dimensions, query and
// key norms, ring attention, the fused kernel's fixed work per query tile.

#include "estimator/system/collectives.h"
#include "estimator/system/hardware.h"
#include "estimator/testing/model_costs_on_a100.h"
#include "estimator/testing/test_util.h"
#include "estimator/workloads/model_costs.h"
#include "estimator/workloads/transformer_blocks.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::CostsOnA100;
using testing::Model;
using testing::Profile;

// Flash attention's core runs cuDNN's kernel under Megatron (Transformer Engine on
// Hopper), NeMo, torchtitan and any; FlashAttention-2 under DeepSpeed and PyTorch FSDP.
// On the H100 profile: cuDNN 0.56 / 0.54 of the 989 TFLOP/s peak at long sequences,
// FlashAttention-2 0.35 / 0.33. One Llama 3 8B layer at 8,192 tokens: 2 x 8,192 x 32 x
// 4,096 x 256 causal FLOPs forward, 2.5x backward.
TEST(TransformerCosts, AttentionKernelFollowsTheFramework) {
  const SystemProfile p = Profile("dgx-h100-80gb");
  const Hardware hw(p, Precision::kBf16);
  const Collectives coll(hw);
  const Workload w = Model("llama3-8b");
  ParallelConfig c = testing::Config(1, 1, 1, 1, 1);
  c.flash_attention = true;
  auto layer_fwd_bwd = [&](Framework f) {
    c.framework = f;
    absl::StatusOr<ModelCosts> m = ComputeModelCosts(w, ModelShape::Of(c.Normalized()), hw, coll);
    EXPECT_TRUE(m.ok()) << m.status();
    return m->layers[0].fwd_s + m->layers[0].bwd_s;
  };
  const double flops = 2.0 * 8192 * 4096 * 32 * (128 + 128);
  const double peak = 989e12 * p.accelerator.ClockScale();
  // 4,096 keys a query on average: each kernel at 4,096 / (4,096 + 280) forward and
  // 4,096 / (4,096 + 700) backward of its long-sequence rate.
  const double fwd_tiles = 1 + 280.0 / 4096, bwd_tiles = 1 + 700.0 / 4096;
  const double fa2 = flops / (0.35 * peak) * fwd_tiles + 2.5 * flops / (0.33 * peak) * bwd_tiles;
  const double cudnn = flops / (0.56 * peak) * fwd_tiles + 2.5 * flops / (0.54 * peak) * bwd_tiles;
  const double megatron = layer_fwd_bwd(Framework::kMegatron);
  EXPECT_NEAR(layer_fwd_bwd(Framework::kDeepSpeed) - megatron, fa2 - cudnn, 1e-9);
  EXPECT_NEAR(layer_fwd_bwd(Framework::kPytorchFsdp) - layer_fwd_bwd(Framework::kTorchtitan), fa2 - cudnn, 1e-9);
  EXPECT_DOUBLE_EQ(layer_fwd_bwd(Framework::kAny), megatron);
  // A profile that states no cuDNN rates (the A100's): the same kernel whatever the stack.
  const Hardware a100(Profile("dgx-a100-80gb"), Precision::kBf16);
  EXPECT_DOUBLE_EQ(a100.attention_fwd_flops_per_s(true), a100.attention_fwd_flops_per_s(false));
  EXPECT_DOUBLE_EQ(a100.attention_bwd_flops_per_s(true), a100.attention_bwd_flops_per_s(false));
}

// gpt-oss-120b alternates a 128-token window with full attention (layer 0 windowed): a
// windowed layer's attention core does 128 - 128^2 / 8,192 = 126 keys a query where the
// full one does 2,048 (flash attention, 4,096 tokens).
TEST(TransformerCosts, SlidingWindowLayers) {
  const Workload w = Model("gpt-oss-120b");
  ParallelConfig c = testing::Config(1, 1, 1, 1, 1);
  c.flash_attention = true;
  absl::StatusOr<ModelCosts> m = CostsOnA100(w, c);
  ASSERT_TRUE(m.ok()) << m.status();
  const double T = 4096, H = 64, d = 64;
  const double full_core = 3 * 2 * 2 * T * 2048 * H * 2 * d;  // x3 fwd+bwd, x2 whole-square count
  const double window_core = 3 * 2 * 2 * T * 126 * H * 2 * d;
  EXPECT_NEAR(m->layers[1].model_flops - m->layers[0].model_flops, full_core - window_core, 1e-6 * full_core);
  EXPECT_LT(m->layers[0].fwd_s, m->layers[1].fwd_s);
}

// gpt-oss-120b (64 query heads and 8 K/V heads of 64; layer 0 windowed, layer 1 full) on
// 4,096 tokens at CP 2, 2,048 a rank. Transformer Engine refuses its ring under a window,
// so Megatron-Core's windowed layer trades sequence for heads by all-to-all: Q and O are
// 2,048 x 64 x 64 x 2 B = 16.8 MB on this rank, K and V 2,048 x 8 x 64 x 2 B = 2.1 MB
// each; four all-to-alls forward, four backward, the core waiting on them; each tensor
// copied twice around its all-to-all (read and write). Its one call per direction sees
// every key. The full layer keeps the ring.
TEST(TransformerCosts, SlidingWindowLayersExchangeByAllToAllUnderContextParallelism) {
  Workload w = Model("gpt-oss-120b");
  ASSERT_EQ(w.precision, Precision::kBf16);
  ParallelConfig c = testing::Config(1, 1, 1, 1, 1);
  c.flash_attention = true;
  c.context_parallel = 2;
  absl::StatusOr<ModelCosts> m = CostsOnA100(w, c);
  ASSERT_TRUE(m.ok()) << m.status();
  const Hardware hw(Profile("dgx-a100-80gb"), Precision::kBf16);
  const Collectives coll(hw);
  const GroupSpan cp = coll.Place(2, 1);
  const double qo = 2048.0 * 64 * 64 * 2, kv = 2048.0 * 8 * 64 * 2;
  const double pass = 2 * coll.AllToAll(qo, cp) + 2 * coll.AllToAll(kv, cp);
  EXPECT_NEAR(m->layers[0].cp_fwd_s, pass, 1e-12);
  EXPECT_NEAR(m->layers[0].cp_s, 2 * pass, 1e-12);
  const double ring = 3 * coll.SendRecv(2 * kv, cp.level);  // one K/V step forward, two backward
  EXPECT_LE(m->layers[1].cp_s, ring + 1e-12);
  const TransformerSpec spec = w.transformer.Resolved();
  const transformer::Dims x = transformer::LayerDims(w, spec, ModelShape::Of(c.Normalized()));
  EXPECT_EQ(x.window_cp, CpExchange::kAllToAll);
  const transformer::Part a2a = transformer::AttentionCore(x, hw, 128, CpExchange::kAllToAll);
  EXPECT_DOUBLE_EQ(a2a.mem_fwd_bytes, 2 * 2 * (2 * qo + 2 * kv));
  EXPECT_DOUBLE_EQ(a2a.mem_bwd_bytes + 2 * a2a.mem_fwd_bytes, 2 * 2 * (2 * qo + 2 * kv));
  EXPECT_DOUBLE_EQ(a2a.kernels_fwd, 1 + 8);
  EXPECT_DOUBLE_EQ(a2a.kernels_bwd, 3 + 8);
  EXPECT_LT(a2a.matmul_fwd_s, transformer::AttentionCore(x, hw, 128).matmul_fwd_s);  // one call, not two
  // TP 2 x CP 8: 4 K/V heads a TP rank do not split over 8 ranks, so K and V are gathered
  // (512 tokens a rank, 8 x 512 x 4 x 64 x 2 B each), forward and again backward, and
  // their gradients reduce-scattered.
  ParallelConfig wide = testing::Config(2, 1, 1, 1, 1);
  wide.flash_attention = true;
  wide.context_parallel = 8;
  absl::StatusOr<ModelCosts> g = CostsOnA100(w, wide);
  ASSERT_TRUE(g.ok()) << g.status();
  const GroupSpan cp8 = coll.Place(8, 2);
  const double gathered = 8 * 512.0 * 4 * 64 * 2;
  EXPECT_NEAR(g->layers[0].cp_fwd_s, 2 * coll.AllGather(gathered, cp8), 1e-12);
  EXPECT_NEAR(g->layers[0].cp_s, 4 * coll.AllGather(gathered, cp8) + 2 * coll.ReduceScatter(gathered, cp8), 1e-12);
  // torchtitan runs such a model through FlexAttention on every layer, whose context
  // parallelism gathers K and V once (2 x 2,048 x 8 x 64 x 2 B each), reduce-scatters
  // their gradients and keeps the gathered K / V: the other rank's 2,048 x 8 x 128 x 2 B.
  c.framework = Framework::kTorchtitan;
  absl::StatusOr<ModelCosts> titan = CostsOnA100(w, c);
  ASSERT_TRUE(titan.ok()) << titan.status();
  const double gathered2 = 2 * kv;
  const double fwd = 2 * coll.AllGather(gathered2, cp);
  for (int layer : {0, 1}) {
    EXPECT_NEAR(titan->layers[layer].cp_fwd_s, fwd, 1e-12) << layer;
    EXPECT_NEAR(titan->layers[layer].cp_s, fwd + 2 * coll.ReduceScatter(gathered2, cp), 1e-12) << layer;
  }
  const transformer::Dims xt = transformer::LayerDims(w, spec, ModelShape::Of(c.Normalized()));
  EXPECT_EQ(xt.full_cp, CpExchange::kGatherKept);
  EXPECT_DOUBLE_EQ(transformer::AttentionCore(xt, hw, 0, CpExchange::kGatherKept).act_bytes -
                       transformer::AttentionCore(xt, hw, 0).act_bytes,
                   2048.0 * 8 * 128 * 2);
}

TEST(TransformerCosts, FlashAttentionStoresNoScores) {
  ParallelConfig c = testing::Config(8, 1, 1, 1, 1);
  ParallelConfig f = c;
  f.flash_attention = true;
  absl::StatusOr<ModelCosts> plain = CostsOnA100(Model("llama3-8b"), c);
  absl::StatusOr<ModelCosts> flash = CostsOnA100(Model("llama3-8b"), f);
  ASSERT_TRUE(plain.ok() && flash.ok());
  const double s = 8192, a = 32, t = 8;
  // Llama applies no dropout: of Korthikanti's 5 a s / (h t) term only the softmax
  // output is stored — at 8,192 keys, past Megatron's fused kernel (<= 4,096), the
  // unfused fallback's fp32 output: 4 * a * s * s / t bytes per micro-batch.
  const double scores = 4 * a * s * s / t;
  EXPECT_NEAR(plain->layers[0].activation_bytes - flash->layers[0].activation_bytes, scores,
              0.01 * scores);
  // GPT-3 with dropout 0.1: softmax output, dropout mask and dropout output, the whole
  // 5 a s / (h t) term (a = 96, s = 2048).
  absl::StatusOr<ModelCosts> gpt_plain = CostsOnA100(Model("gpt3-175b"), c);
  absl::StatusOr<ModelCosts> gpt_flash = CostsOnA100(Model("gpt3-175b"), f);
  ASSERT_TRUE(gpt_plain.ok() && gpt_flash.ok());
  const double gpt_scores = 5 * 96 * 2048.0 * 2048.0 / 8;
  EXPECT_NEAR(gpt_plain->layers[0].activation_bytes - gpt_flash->layers[0].activation_bytes,
              gpt_scores, 0.01 * gpt_scores);
}

// Four layers shaped as Qwen3-235B's attention and dense MLP width (hidden 4,096, 64
// heads over 4 K/V heads, FFN 12,288, 4,096 tokens, RMSNorm, no dropout); head_dim unset.
Workload Qwen3ShapedLayers() {
  Workload w;
  w.kind = Workload::Kind::kTransformer;
  w.precision = Precision::kBf16;
  TransformerSpec& t = w.transformer;
  t.num_layers = 4;
  t.hidden_size = 4096;
  t.num_attention_heads = 64;
  t.num_kv_heads = 4;
  t.ffn_hidden_size = 12288;
  t.gated_mlp = true;
  t.seq_length = 4096;
  t.vocab_size = 151936;
  t.normalization = Normalization::kRmsNorm;
  t.dropout = 0;
  return w;
}

// head_dim apart from hidden / heads (Qwen3: 64 heads of 128 over a hidden of 4,096):
// Q and the output projection are heads x head_dim wide, K and V kv_heads x head_dim.
TEST(TransformerCosts, HeadDimSetsTheAttentionWidths) {
  Workload w = Qwen3ShapedLayers();
  TransformerSpec& t = w.transformer;
  ParallelConfig c = testing::Config(1, 1, 1, 1, 1, Recompute::kSelective);
  c.sequence_parallel = false;
  t.head_dim = 128;
  absl::StatusOr<ModelCosts> wide = CostsOnA100(w, c);
  t.head_dim = 0;  // = 4096 / 64 = 64
  absl::StatusOr<ModelCosts> narrow = CostsOnA100(w, c);
  ASSERT_TRUE(wide.ok() && narrow.ok()) << wide.status() << narrow.status();
  // Hand count per layer: q 4096 x 64 x 128, k and v 4096 x 4 x 128 each, o 64 x 128 x
  // 4096, gated MLP 3 x 4096 x 12288, two RMSNorm scales 2 x 4096.
  EXPECT_DOUBLE_EQ(wide->layers[0].params, 4096.0 * 64 * 128 + 2 * 4096.0 * 4 * 128 + 64 * 128 * 4096.0 +
                                               3 * 4096.0 * 12288 + 2 * 4096.0);
  EXPECT_DOUBLE_EQ(narrow->layers[0].params, 4096.0 * 64 * 64 + 2 * 4096.0 * 4 * 64 + 64 * 64 * 4096.0 +
                                                 3 * 4096.0 * 12288 + 2 * 4096.0);
  // Stored per layer beyond the narrow heads (selective recompute: no scores), 2-byte
  // elements over 4,096 tokens: Q and K (64 + 4) x 64 more channels, V 4 x 64, the
  // attention context 64 x 64.
  const double tokens = 4096, more = 64;
  EXPECT_DOUBLE_EQ(wide->layers[0].activation_bytes - narrow->layers[0].activation_bytes,
                   2 * tokens * more * ((64 + 4) + 4 + 64));
}

// Query / key norms (Qwen3; Megatron-Core --qk-layernorm): at TP 2, each GPU's 32 query
// and 2 key heads of 128 over 4,096 tokens are read and written once more forward and
// their inputs kept (2 bytes each); the norms learn a 128-wide scale each.
TEST(TransformerCosts, QkLayerNormKeepsTheNormInputs) {
  Workload w = Qwen3ShapedLayers();
  TransformerSpec& t = w.transformer;
  t.head_dim = 128;
  ParallelConfig c = testing::Config(2, 1, 1, 1, 1, Recompute::kSelective);
  c.sequence_parallel = false;
  c.flash_attention = true;
  absl::StatusOr<ModelCosts> plain = CostsOnA100(w, c);
  t.qk_layernorm = true;
  absl::StatusOr<ModelCosts> normed = CostsOnA100(w, c);
  ASSERT_TRUE(plain.ok() && normed.ok()) << plain.status() << normed.status();
  const BlockCosts& a = plain->layers[0];
  const BlockCosts& b = normed->layers[0];
  const double elements = 4096.0 * (32 + 2) * 128;
  EXPECT_DOUBLE_EQ(b.params - a.params, 2 * 128.0);
  EXPECT_DOUBLE_EQ(b.activation_bytes - a.activation_bytes, 2 * elements);
  // Forward: two norm kernels; backward: their two data-gradient kernels each way (read
  // output gradient and input, write input gradient) and one scale-gradient reduction each.
  EXPECT_DOUBLE_EQ(b.kernels - a.kernels, 2 + 2 * 2 + 2);
  EXPECT_DOUBLE_EQ(b.tensors - a.tensors, 2);
  // Read and write Q and K: 2 x 2 bytes per element at the A100's memory-bound rate;
  // backward twice that traffic.
  const Hardware hw(Profile("dgx-a100-80gb"), Precision::kBf16);
  const double fwd = 4 * elements / hw.hbm_bytes_per_s();
  EXPECT_NEAR(b.fwd_s - a.fwd_s, fwd, 1e-12);
  EXPECT_NEAR(b.bwd_s - a.bwd_s, 2 * fwd, 1e-12);
  EXPECT_DOUBLE_EQ(b.model_flops, a.model_flops);
  // MLA's latent norms are always counted: the flag changes nothing there.
  Workload mla = Model("deepseek-v3");
  ParallelConfig m = testing::Config(1, 1, 1, 1, 1, Recompute::kSelective);
  absl::StatusOr<ModelCosts> off = CostsOnA100(mla, m);
  mla.transformer.qk_layernorm = true;
  absl::StatusOr<ModelCosts> on = CostsOnA100(mla, m);
  ASSERT_TRUE(off.ok() && on.ok());
  EXPECT_DOUBLE_EQ(on->layers[0].activation_bytes, off->layers[0].activation_bytes);
  EXPECT_DOUBLE_EQ(on->layers[0].fwd_s, off->layers[0].fwd_s);
}

// Ring attention's steps (Transformer Engine's AttnFuncWithCPAndKVP2P) at CP 4, TP 2, one
// sequence of 4,096 (Qwen3's heads: 32 query and 2 K/V heads of 128 a GPU, 1,024 queries):
// the core runs 4 calls each way; forward merges each block's output into the output
// (read 2 + read 2 + write 2 bytes over 1,024 x 32 x 128 elements, 4 times), backward adds
// each block's dQ (the same elements) and dK, dV (1,024 x 2 x 256) once a step.
TEST(TransformerCosts, RingAttentionMergesEachBlock) {
  Workload w = Qwen3ShapedLayers();
  w.transformer.head_dim = 128;
  ParallelConfig c = testing::Config(2, 1, 1, 1, 1);
  c.context_parallel = 4;
  c.flash_attention = true;
  const TransformerSpec spec = w.transformer.Resolved();
  const transformer::Dims x = transformer::LayerDims(w, spec, ModelShape::Of(c.Normalized()));
  const Hardware hw(Profile("dgx-a100-80gb"), Precision::kBf16);
  const transformer::Part core = transformer::AttentionCore(x, hw, 0);
  const double out = 1024.0 * 32 * 128, dkv = 1024.0 * 2 * 256;
  EXPECT_DOUBLE_EQ(core.mem_fwd_bytes, 4 * 6 * out);
  EXPECT_DOUBLE_EQ(core.mem_bwd_bytes + 2 * core.mem_fwd_bytes, 4 * 6 * (out + dkv));
  EXPECT_DOUBLE_EQ(core.kernels_fwd, 4 + 4 + 4);       // attention, lse merge, output merge
  EXPECT_DOUBLE_EQ(core.kernels_bwd, 4 * 3 + 4 + 4);   // attention backward, dQ add, dK/dV add
  // Without context parallelism the core is one call each way and moves nothing else.
  c.context_parallel = 1;
  const transformer::Part whole =
      transformer::AttentionCore(transformer::LayerDims(w, spec, ModelShape::Of(c.Normalized())), hw, 0);
  EXPECT_EQ(whole.mem_fwd_bytes, 0);
  EXPECT_EQ(whole.kernels_fwd, 1);
  EXPECT_EQ(whole.kernels_bwd, 3);
}

// A fused attention call does fixed work per query tile worth 280 keys forward and 700
// backward (attention_half_keys): causal over 4,096 tokens its queries see 2,048 keys on
// average, so cuDNN's kernel on the H100 profile (0.56 / 0.54 of 989 TFLOP/s at long
// sequences) runs at 2,048 / 2,328 of its forward rate and 2,048 / 2,748 of its backward
// one; split over CP 4, each query meets its keys in 4 calls.
TEST(TransformerCosts, FusedAttentionPaysItsFixedWorkPerQueryTile) {
  Workload w = Qwen3ShapedLayers();
  w.transformer.head_dim = 128;
  ParallelConfig c = testing::Config(2, 1, 1, 1, 1);
  c.flash_attention = true;
  const TransformerSpec spec = w.transformer.Resolved();
  const Hardware hw(Profile("dgx-h100-80gb"), Precision::kBf16);
  for (const int cp : {1, 4}) {
    c.context_parallel = cp;
    const transformer::Dims x = transformer::LayerDims(w, spec, ModelShape::Of(c.Normalized()));
    const transformer::Part core = transformer::AttentionCore(x, hw, 0);
    // 32 heads a GPU, 4,096 / cp queries, 2,048 keys each on average, head dim 128 + 128.
    const double flops = 2.0 * 32 * (4096.0 / cp) * 2048 * 256;
    EXPECT_DOUBLE_EQ(core.flops_fwd, flops);
    EXPECT_NEAR(core.matmul_fwd_s, flops / (0.56 * 989e12) * (1 + cp * 280.0 / 2048) + cp * 1e-6, 1e-12) << cp;
    EXPECT_NEAR(core.matmul_bwd_s, 2.5 * flops / (0.54 * 989e12) * (1 + cp * 700.0 / 2048) + 3 * cp * 1e-6, 1e-12)
        << cp;
  }
}

// At head dimension 64 the softmax's share of each score doubles. cuDNN's kernel (Megatron,
// NeMo, torchtitan, unspecified) on the H100 profile, d0 = 70 forward and 37 backward,
// runs the forward at (128 + 70) / 128 x 64 / 134 = 0.7388 of its rate at 128 and the
// backward at 165 / 128 x 64 / 101 = 0.8168 (measured: 0.73-0.80 and 0.78-0.87 at 2 k-16 k
// tokens); FlashAttention-2 (DeepSpeed, PyTorch FSDP), 22 / 22, at 150 / 128 x 64 / 86 =
// 0.8721 both ways. Twice the heads of half the width are the same FLOPs, so the time is
// the ratio's inverse. An A100 has 2.89 of the H100's 7.49 TFLOP/s per SM on the same 16
// exponential units: cuDNN's backward d0 37 x 0.386 = 14.3.
TEST(TransformerCosts, FusedAttentionSlowsAtHeadDimension64) {
  const auto core = [](const char* profile, int heads, int64_t head_dim, Framework f) {
    Workload w = Qwen3ShapedLayers();
    w.transformer.num_attention_heads = heads;
    w.transformer.num_kv_heads = heads / 8;
    w.transformer.head_dim = head_dim;
    ParallelConfig c = testing::Config(1, 1, 1, 1, 1);
    c.flash_attention = true;
    c.framework = f;
    const TransformerSpec spec = w.transformer.Resolved();
    const Hardware hw(Profile(profile), Precision::kBf16);
    return transformer::AttentionCore(transformer::LayerDims(w, spec, ModelShape::Of(c.Normalized())), hw, 0);
  };
  const double gap = 1e-6;  // one kernel forward, three backward
  const auto fwd_ratio = [&](const transformer::Part& n, const transformer::Part& w) {
    return (n.matmul_fwd_s - gap) / (w.matmul_fwd_s - gap);
  };
  const auto bwd_ratio = [&](const transformer::Part& n, const transformer::Part& w) {
    return (n.matmul_bwd_s - 3 * gap) / (w.matmul_bwd_s - 3 * gap);
  };
  const Framework any = Framework::kAny, ds = Framework::kDeepSpeed;
  const transformer::Part wide = core("dgx-h100-80gb", 32, 128, any), narrow = core("dgx-h100-80gb", 64, 64, any);
  EXPECT_DOUBLE_EQ(narrow.flops_fwd, wide.flops_fwd);
  EXPECT_NEAR(fwd_ratio(narrow, wide), 128.0 * 134 / (198 * 64), 1e-9);
  EXPECT_NEAR(bwd_ratio(narrow, wide), 128.0 * 101 / (165 * 64), 1e-9);
  const transformer::Part fa_wide = core("dgx-h100-80gb", 32, 128, ds), fa_narrow = core("dgx-h100-80gb", 64, 64, ds);
  EXPECT_NEAR(fwd_ratio(fa_narrow, fa_wide), 128.0 * 86 / (150 * 64), 1e-9);
  EXPECT_NEAR(bwd_ratio(fa_narrow, fa_wide), 128.0 * 86 / (150 * 64), 1e-9);
  const double a100 = 37.0 * (312.0 / 108) / (989.0 / 132);
  EXPECT_NEAR(a100, 14.27, 0.01);
  EXPECT_NEAR(bwd_ratio(core("dgx-a100-80gb", 64, 64, any), core("dgx-a100-80gb", 32, 128, any)),
              128.0 * (64 + a100) / ((128 + a100) * 64), 1e-9);
  // Head dimension 80 runs padded: cuDNN at 128, 1.6x the FLOPs at the 128 rate (measured
  // 0.65-0.72 of it a useful FLOP); FlashAttention-2 at 96, 1.2x at 150 / 128 x 96 / 118.
  const auto per_flop = [&](const transformer::Part& n, const transformer::Part& w) {
    return fwd_ratio(n, w) * w.flops_fwd / n.flops_fwd;
  };
  EXPECT_NEAR(per_flop(core("dgx-h100-80gb", 48, 80, any), wide), 128.0 / 80, 1e-9);
  EXPECT_NEAR(per_flop(core("dgx-h100-80gb", 48, 80, ds), fa_wide), 96.0 / 80 * 128 * 118 / (150 * 96), 1e-9);
  EXPECT_DOUBLE_EQ(transformer::KernelHeadDim(64, true), 64);
  EXPECT_DOUBLE_EQ(transformer::KernelHeadDim(96, true), 128);
  EXPECT_DOUBLE_EQ(transformer::KernelHeadDim(96, false), 96);
  EXPECT_DOUBLE_EQ(transformer::KernelHeadDim(192, true), 192);
  // At 128 and wider nothing changes (MLA's 192 / 128 gains nothing), and d0 = 0 turns
  // the term off.
  EXPECT_DOUBLE_EQ(transformer::HeadDimRate(128, 70), 1);
  EXPECT_DOUBLE_EQ(transformer::HeadDimRate(160, 70), 1);
  EXPECT_DOUBLE_EQ(transformer::HeadDimRate(64, 0), 1);
}

}  // namespace
}  // namespace paraplan
