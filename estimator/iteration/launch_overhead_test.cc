// Kernel counts per layer, the host-bound launch floor, CUDA graphs and FP8 linears:
// hand-checkable numbers for the terms that dominate small, short-kernel jobs.
#include <cmath>

#include "estimator/iteration/estimate.h"
#include "estimator/system/collectives.h"
#include "estimator/system/hardware.h"
#include "estimator/testing/test_util.h"
#include "estimator/workloads/model_costs.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::Config;
using testing::Profile;

Workload Gpt(int layers, int64_t hidden, int heads, int64_t seq, int64_t vocab, Precision precision) {
  Workload w;
  w.transformer.num_layers = layers;
  w.transformer.hidden_size = hidden;
  w.transformer.num_attention_heads = heads;
  w.transformer.seq_length = seq;
  w.transformer.vocab_size = vocab;
  w.precision = precision;
  return w;
}

// GPT layer as Megatron-LM runs it: hidden 1024, 16 heads, sequence 1024.
Workload SmallGpt() { return Gpt(4, 1024, 16, 1024, 51200, Precision::kFp16); }

BlockCosts Layer(const Workload& w, const ParallelConfig& c, const SystemProfile& p) {
  const Hardware hw(p, w.precision);
  const Collectives coll(hw);
  absl::StatusOr<ModelCosts> m = ComputeModelCosts(w, ModelShape::Of(c.Normalized()), hw, coll);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? m->layers[0] : BlockCosts{};
}

// Forward, per micro-batch: 4 linear GEMMs (QKV, projection, FC1, FC2), Q K^T and P V,
// softmax and dropout, LayerNorm + bias/dropout/residual (3) + the context permute copy
// around attention, LayerNorm + bias/dropout/residual (3) around the MLP, GELU = 18.
// Backward: 3 per linear (data, weight gradient, bias reduction) = 12, 2 per batched
// GEMM = 4, 2 per memory-bound kernel = 2 x 12 = 24, LayerNorm gamma/beta = 4 -> 44.
TEST(KernelCount, GptLayerLaunchesWhatMegatronLaunches) {
  const SystemProfile p = Profile("dgx-a100-80gb");
  EXPECT_EQ(Layer(SmallGpt(), Config(1, 1, 1, 1, 1), p).kernels, 18 + 44);
  // Full recompute runs the forward again: + 18.
  EXPECT_EQ(Layer(SmallGpt(), Config(1, 1, 1, 1, 1, Recompute::kFull), p).kernels, 18 + 44 + 18);
  // TP 2: one all-reduce after each row-parallel linear forward, one in backward per
  // sub-block: + 2 + 2.
  EXPECT_EQ(Layer(SmallGpt(), Config(2, 1, 1, 1, 1), p).kernels, 18 + 44 + 4);
  // Sequence parallel: all-gather + reduce-scatter forward (4), backward all-gather of
  // the output gradient, of the saved input, reduce-scatter of the input gradient (6).
  ParallelConfig sp = Config(2, 1, 1, 1, 1);
  sp.sequence_parallel = true;
  EXPECT_EQ(Layer(SmallGpt(), sp, p).kernels, 18 + 44 + 10);
  // FlashAttention: one forward kernel instead of 4, three backward instead of 8.
  ParallelConfig flash = Config(1, 1, 1, 1, 1);
  flash.flash_attention = true;
  EXPECT_EQ(Layer(SmallGpt(), flash, p).kernels, (18 - 3) + (44 - 5));
}

// Megatron's fused softmax needs b x heads-per-GPU to be a multiple of 4 (4 rows per
// 128-thread block at 1,024 keys). 16 heads at TP 8: micro-batch 1 gives 2 attention
// batches and falls back to the unfused fp32 softmax (cast, scale, masked_fill, softmax,
// cast back: 5 kernels where the fused one is 1, forward and backward); micro-batch 2
// gives 4 and fuses. Kernel counts do not depend on the micro-batch otherwise. TP 4 at
// micro-batch 1 (4 batches) fuses too.
TEST(KernelCount, UnfusedSoftmaxWhereMegatronsKernelDoesNotApply) {
  const SystemProfile p = Profile("dgx-a100-80gb");
  const double fused = 18 + 44 + 4;  // TP layer with its all-reduces, as above
  EXPECT_EQ(Layer(SmallGpt(), Config(8, 1, 1, 2, 2), p).kernels, fused);
  EXPECT_EQ(Layer(SmallGpt(), Config(4, 1, 1, 1, 1), p).kernels, fused);
  const BlockCosts mbs1 = Layer(SmallGpt(), Config(8, 1, 1, 1, 1), p);
  EXPECT_EQ(mbs1.kernels, fused + 4 + 4);
  // Its backward keeps the fp32 softmax output: 2 more bytes per score than the fused
  // 16-bit output. Scores per GPU: 1 x 2 heads x 1024 x 1024 = 2 Mi; the fused
  // activations scale with the micro-batch, so mbs1 - mbs2 / 2 = 2 B x 2 Mi = 4 MiB.
  const BlockCosts mbs2 = Layer(SmallGpt(), Config(8, 1, 1, 2, 2), p);
  EXPECT_DOUBLE_EQ(mbs1.activation_bytes - mbs2.activation_bytes / 2, 4.0 * 1024 * 1024);
  // Keys beyond the kernel's 4,096: unfused at any batch.
  Workload long_seq = SmallGpt();
  long_seq.transformer.seq_length = 8192;
  EXPECT_EQ(Layer(long_seq, Config(4, 1, 1, 1, 1), p).kernels, fused + 8);
}

// With a host far slower than the GPU, every phase takes kernels x host time.
TEST(KernelCount, HostBoundLayerTakesItsLaunchTime) {
  SystemProfile p = Profile("dgx-a100-80gb");
  p.calibration.kernel_overhead_us = 1000;  // 1 ms per kernel: the GPU always waits
  p.calibration.recompute_overhead_us = 3000;
  const BlockCosts l = Layer(SmallGpt(), Config(1, 1, 1, 1, 1, Recompute::kFull), p);
  // 18 forward + 18 recompute + 44 backward kernels at 1 ms, and the layer's checkpoint
  // (one region) 3 ms.
  EXPECT_NEAR(l.TotalS(), 0.083, 1e-9);
  // Without recompute there is no checkpoint: 18 + 44 kernels.
  EXPECT_NEAR(Layer(SmallGpt(), Config(1, 1, 1, 1, 1), p).TotalS(), 0.062, 1e-9);
  // Selective recompute checkpoints the attention core: its 4 forward kernels (Q K^T,
  // softmax, dropout, P V) again and one region.
  EXPECT_NEAR(Layer(SmallGpt(), Config(1, 1, 1, 1, 1, Recompute::kSelective), p).TotalS(),
              0.062 + 0.004 + 0.003, 1e-9);
  // Under CUDA graphs a kernel costs the ~1 us GPU gap only: the GPU sets the pace.
  ParallelConfig graphs = Config(1, 1, 1, 1, 1, Recompute::kFull);
  graphs.cuda_graphs = true;
  const BlockCosts g = Layer(SmallGpt(), graphs, p);
  EXPECT_EQ(g.host_s, 0);
  EXPECT_NEAR(g.TotalS(), g.fwd_s + g.bwd_s + g.recompute_s, 1e-12);
  EXPECT_LT(g.TotalS(), 0.01);
}

// Nothing is charged when the GPU work outlasts the launches: a large layer.
TEST(KernelCount, GpuBoundLayerPaysNoHostTime) {
  Workload w = testing::Model("gpt3-175b");
  const BlockCosts l = Layer(w, Config(8, 1, 1, 1, 1), Profile("dgx-a100-80gb"));
  EXPECT_EQ(l.host_s, 0);
}

// An MoE layer's dispatcher brings the routed-token counts to the host every forward,
// so however GPU-bound, the GPU waits for the first launch after it: one kernel's host
// time (35 us) a layer. Under CUDA graphs too: Megatron-Core graphs a dropless MoE layer
// only up to the dispatch (attention, router, preprocessing), and the launch after it is
// eager. A dense layer pays nothing.
TEST(KernelCount, MoeDispatchSynchronisesTheHost) {
  const SystemProfile p = Profile("dgx-h100-80gb");
  const Workload w = testing::Model("mixtral-8x7b");
  const BlockCosts moe = Layer(w, Config(1, 1, 1, 1, 1), p);
  EXPECT_NEAR(moe.host_s, 35e-6, 1e-12);
  ParallelConfig graphs = Config(1, 1, 1, 1, 1);
  graphs.cuda_graphs = true;
  EXPECT_NEAR(Layer(w, graphs, p).host_s, 35e-6, 1e-12);
  EXPECT_EQ(Layer(testing::Model("llama3-8b"), Config(1, 1, 1, 1, 1), p).host_s, 0);
  ParallelConfig dense_graphs = Config(1, 1, 1, 1, 1);
  dense_graphs.cuda_graphs = true;
  EXPECT_EQ(Layer(testing::Model("llama3-8b"), dense_graphs, p).host_s, 0);
}

// Under CUDA graphs a host-bound MoE layer still launches its experts from the host: a
// Qwen3-30B-A3B layer with all 128 experts on one GPU at one 4 k sequence (32 tokens an
// expert) pays, beyond its GPU time, the 35 us launches of what follows the dispatch
// (128 experts x 2 linears: a GEMM forward, three kernels backward), where the graphed
// attention and router cost ~1 us a kernel. Eager, it pays more; graphed, far more than
// a dense layer's nothing.
TEST(KernelCount, GraphedMoeLayersLaunchTheirExpertsFromTheHost) {
  const SystemProfile p = Profile("dgx-h100-80gb");
  const Workload w = testing::Model("qwen3-30b-a3b");
  ParallelConfig graphs = Config(1, 1, 1, 1, 1);
  graphs.cuda_graphs = true;
  const BlockCosts eager = Layer(w, Config(1, 1, 1, 1, 1), p);
  const BlockCosts graphed = Layer(w, graphs, p);
  // The experts' launches alone: 128 x 2 x (1 + 3) x 35 us = 35.8 ms, against GPU work of
  // a few ms: most of it is exposed (26.3 ms graphed, 28.0 ms eager).
  EXPECT_GT(graphed.host_s, 0.02) << graphed.host_s << " " << eager.host_s;
  EXPECT_LT(graphed.host_s, eager.host_s);
  EXPECT_GT(graphed.host_s, 0.8 * eager.host_s);  // the attention's ~25 launches a pass are what graphs save
}

// Llama-3-8B-shaped layer on H100, FlashAttention, TP 1, one 8k sequence: under FP8
// (delayed scaling) the four linears run at the FP8 rate (1,979 at the profile's 0.62 vs
// 989 at 0.69 TFLOP/s) and pay their inputs' quantisation at the memory-bound rate, as
// Transformer Engine runs it on a TN-only GPU: QKV and gate+up take theirs from the norm
// they fuse, which writes FP8 (1 byte an element where it wrote 2) and then its transpose
// (read 1, write 1): 1 byte an element; O and down cast and transpose in one kernel (read
// 2, write 1 + 1): 4 bytes. One kernel per linear; attention and every other kernel take
// exactly as long as in BF16.
TEST(Fp8, OnlyLinearLayersSpeedUp) {
  SystemProfile p = Profile("dgx-h100-80gb");
  p.accelerator.sm_count = 0;
  p.calibration.matmul_half_efficiency_gflop = 1e-9;
  Workload w = testing::Model("llama3-8b");
  ParallelConfig c = Config(1, 1, 1, 1, 1);
  c.flash_attention = true;
  const BlockCosts bf16 = Layer(w, c, p);
  w.precision = Precision::kFp8;
  const BlockCosts fp8 = Layer(w, c, p);
  const double T = 8192, h = 4096, kv = 1024, f = 14336;
  // QKV (h -> h + 2 kv), O (h -> h), gate+up (h -> 2f), down (f -> h).
  // Each at the small-K factor (k + d) / k of its depth k (h, h, h, f): d = 64 K-elements
  // in 16 bits, 128 in FP8 (a tile's pipeline holds the same bytes of K).
  auto linear_flops = [&](double d) {
    return 2 * T * (h * (h + 2 * kv) * (h + d) / h + h * h * (h + d) / h + h * 2 * f * (h + d) / h +
                    f * h * (f + d) / f);
  };
  const double saved = linear_flops(64) / (989e12 * 0.69) - linear_flops(128) / (1979e12 * 0.62);
  const double cast_bytes = T * (1 * h + 4 * h + 1 * h + 4 * f);
  const double hbm = 3350e9 * 0.70;
  const double gap = 1e-6;  // one cast kernel per linear
  EXPECT_NEAR(fp8.fwd_s, bf16.fwd_s - saved + cast_bytes / hbm, 4 * gap + 1e-9);
  EXPECT_NEAR(fp8.model_flops, bf16.model_flops, 1);
}

// multi_tensor_apply fills a list with at most 36 tensors or 320 x 65,536 elements.
TEST(OptimizerKernels, OneLaunchPerFullTensorListOrBlockList) {
  EXPECT_EQ(OptimizerKernelsPerPass(436, 1e6), 13);   // ceil(436 / 36)
  EXPECT_EQ(OptimizerKernelsPerPass(10, 1e9), 48);    // ceil(1e9 / 20,971,520)
  EXPECT_EQ(OptimizerKernelsPerPass(36, 20971520), 1);
  EXPECT_EQ(OptimizerKernelsPerPass(0, 0), 1);
}

// A tiny model whose optimizer step is launch-bound: 36 GPT layers of hidden 64 hold
// 36 x 12 tensors + 2 embeddings + the final LayerNorm's 2 (LM head tied) = 436 tensors,
// 13 launches a pass. FP16 makes one pass more than BF16 (the unscale check) and, with
// Megatron-LM's fp16 gradient buffer, casts each of the 436 gradient tensors to fp32 on
// its own launch (a third of an op's host time, measured); its step moves 12 bytes more a
// parameter. Host-bound, overhead plus optimizer time differ by exactly 13 launches at
// 35 us and 436 at 35 / 3.
TEST(OptimizerKernels, StepIsHostBoundForManySmallTensors) {
  Workload bf16 = Gpt(36, 64, 4, 128, 512, Precision::kBf16);
  bf16.transformer.tied_embeddings = true;
  Workload fp16 = bf16;
  fp16.precision = Precision::kFp16;
  const SystemProfile p = Profile("dgx-a100-80gb");
  const ParallelConfig c = Config(1, 1, 1, 1, 1);
  absl::StatusOr<Estimate> a = EstimateIteration(bf16, c, p);
  absl::StatusOr<Estimate> b = EstimateIteration(fp16, c, p);
  ASSERT_TRUE(a.ok() && b.ok());
  const double host_a = a->time.overhead_s + a->time.optimizer_s;
  const double host_b = b->time.overhead_s + b->time.optimizer_s;
  EXPECT_NEAR(host_b - host_a, (13 + 436.0 / 3) * 35e-6, 1e-12);
}

}  // namespace
}  // namespace paraplan
