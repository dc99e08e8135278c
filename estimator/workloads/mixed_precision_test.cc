// PyTorch-style mixed precision (fp32 parameters, 16-bit copies per step, gradients from
// backward on) against Megatron-LM's (16-bit weights, persistent fp32 gradients, fp32
// master in the optimizer): bytes per parameter, when gradients exist, the per-linear
// casts — hand-computed numbers.
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

// GPT, 4 layers, hidden 1024, 16 heads, sequence 512, vocabulary 51,200, untied head.
Workload SmallGpt(MixedPrecision mixed) {
  Workload w;
  w.transformer.num_layers = 4;
  w.transformer.hidden_size = 1024;
  w.transformer.num_attention_heads = 16;
  w.transformer.seq_length = 512;
  w.transformer.vocab_size = 51200;
  w.precision = Precision::kBf16;
  w.mixed_precision = mixed;
  return w;
}

// Parameters as the model counts them: per layer QKV 3h^2, projection h^2, MLP 8h^2,
// two LayerNorms 2 x 2h; word embedding V h; untied head V h; final LayerNorm 2h.
constexpr double kH = 1024, kV = 51200;
constexpr double kParams = 4 * (12 * kH * kH + 4 * kH) + 2 * kV * kH + 2 * kH;  // 155,207,680

MemoryBreakdown Memory(MixedPrecision mixed, const ParallelConfig& c) {
  absl::StatusOr<Estimate> e = EstimateIteration(SmallGpt(mixed), c, Profile("dgx-h100-80gb"));
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() ? e->memory : MemoryBreakdown{};
}

// Megatron-Core's precision-aware optimizer with BF16 moments (DeepSeek-V3's recipe):
// Adam's m and v 2 bytes each; under BF16 the fp32 master keeps only the 16 bits the
// BF16 weight lacks (store_param_remainders): 2 + 2 + 2 = 6 bytes a parameter where the
// default keeps 4 + 4 + 4. FP8 current scaling keeps a whole fp32 master: 4 + 2 + 2.
// PyTorch's fp32 parameters keep their master as the parameter: m + v = 2 + 2. The step
// moves 4 (norm) + 20 (Adam) + 4 (zeroing) = 28 bytes a parameter against 42.
TEST(MixedPrecision, Bf16MomentsAndMasterRemainders) {
  ParallelConfig one = Config(1, 1, 1, 1, 1);
  one.flash_attention = true;
  Workload w = SmallGpt(MixedPrecision::kMasterInOptimizer);
  absl::StatusOr<Estimate> fp32 = EstimateIteration(w, one, Profile("dgx-h100-80gb"));
  w.optimizer_moments = Precision::kBf16;
  absl::StatusOr<Estimate> bf16 = EstimateIteration(w, one, Profile("dgx-h100-80gb"));
  ASSERT_TRUE(fp32.ok() && bf16.ok());
  EXPECT_DOUBLE_EQ(bf16->memory.optimizer_bytes, 6 * kParams);
  EXPECT_DOUBLE_EQ(bf16->memory.weights_bytes, 2 * kParams);
  EXPECT_DOUBLE_EQ(bf16->memory.gradients_bytes, 4 * kParams);
  EXPECT_LT(bf16->time.optimizer_s, fp32->time.optimizer_s * 0.75);
  EXPECT_GT(bf16->time.optimizer_s, fp32->time.optimizer_s * 28 / 42 * 0.9);
  w.precision = Precision::kFp8;
  w.quant_recipe = QuantRecipe::kCurrentScaling;
  absl::StatusOr<Estimate> fp8 = EstimateIteration(w, one, Profile("dgx-h100-80gb"));
  ASSERT_TRUE(fp8.ok()) << fp8.status();
  EXPECT_DOUBLE_EQ(fp8->memory.optimizer_bytes, 8 * kParams);
  w = SmallGpt(MixedPrecision::kFp32Params);
  w.optimizer_moments = Precision::kBf16;
  absl::StatusOr<Estimate> torch = EstimateIteration(w, one, Profile("dgx-h100-80gb"));
  ASSERT_TRUE(torch.ok());
  EXPECT_DOUBLE_EQ(torch->memory.optimizer_bytes, 4 * kParams);
  EXPECT_DOUBLE_EQ(torch->memory.weights_bytes, 4 * kParams);
}

TEST(MixedPrecision, BytesPerParameter) {
  ParallelConfig one = Config(1, 1, 1, 1, 1);
  one.flash_attention = true;
  const MemoryBreakdown megatron = Memory(MixedPrecision::kMasterInOptimizer, one);
  EXPECT_DOUBLE_EQ(megatron.weights_bytes, 2 * kParams);
  EXPECT_DOUBLE_EQ(megatron.gradients_bytes, 4 * kParams);
  EXPECT_DOUBLE_EQ(megatron.optimizer_bytes, 12 * kParams);
  const MemoryBreakdown torch = Memory(MixedPrecision::kFp32Params, one);
  EXPECT_DOUBLE_EQ(torch.weights_bytes, 4 * kParams);
  EXPECT_DOUBLE_EQ(torch.optimizer_bytes, 8 * kParams);
  // autocast's 16-bit copy of every weight, held from forward to backward.
  EXPECT_DOUBLE_EQ(torch.buffers_bytes - megatron.buffers_bytes, 2 * kParams);
  // One micro-batch, no DDP: gradients grow as activations are freed; at the peak the
  // larger of the two: here the fp32 gradients (621 MB) beat the activations...
  ASSERT_LT(torch.activations_bytes, 4 * kParams);
  EXPECT_DOUBLE_EQ(torch.gradients_bytes, 4 * kParams - torch.activations_bytes);
  // ... and at micro-batch 4 the activations beat the gradients: none on top.
  ParallelConfig four = Config(1, 1, 1, 4, 4);
  four.flash_attention = true;
  const MemoryBreakdown big = Memory(MixedPrecision::kFp32Params, four);
  ASSERT_GT(big.activations_bytes, 4 * kParams);
  EXPECT_EQ(big.gradients_bytes, 0);
}

// Left unstated, the framework decides: PyTorch-native stacks keep fp32 parameters,
// Megatron-style ones fp32 masters in the optimizer; a stated choice stands.
TEST(MixedPrecision, UnstatedFollowsTheFramework) {
  ParallelConfig c = Config(1, 1, 1, 1, 1);
  c.flash_attention = true;
  auto weights = [&](MixedPrecision mixed, Framework f) {
    c.framework = f;
    absl::StatusOr<Estimate> e = EstimateIteration(SmallGpt(mixed), c, Profile("dgx-h100-80gb"));
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? e->memory.weights_bytes / kParams : 0;
  };
  EXPECT_DOUBLE_EQ(weights(MixedPrecision::kDefault, Framework::kTorchtitan), 4);
  EXPECT_DOUBLE_EQ(weights(MixedPrecision::kDefault, Framework::kPytorchFsdp), 4);
  EXPECT_DOUBLE_EQ(weights(MixedPrecision::kDefault, Framework::kMegatron), 2);
  EXPECT_DOUBLE_EQ(weights(MixedPrecision::kDefault, Framework::kAny), 2);
  EXPECT_DOUBLE_EQ(weights(MixedPrecision::kMasterInOptimizer, Framework::kTorchtitan), 2);
  // torchtitan's float8 is tensorwise (current scaling), Transformer Engine's delayed.
  Workload w = SmallGpt(MixedPrecision::kDefault);
  w.precision = Precision::kFp8;
  EXPECT_EQ(ResolvedRecipe(w, Framework::kTorchtitan), QuantRecipe::kCurrentScaling);
  EXPECT_EQ(ResolvedRecipe(w, Framework::kMegatron), QuantRecipe::kDelayedScaling);
  w.quant_recipe = QuantRecipe::kMxfp8;
  EXPECT_EQ(ResolvedRecipe(w, Framework::kTorchtitan), QuantRecipe::kMxfp8);
}

// 16-bit gradients (Megatron's --grad-reduce-in-bf16; NeMo's performance recipes, so the
// default under NeMo): the buffer holds 2 bytes a parameter, the data-parallel
// reduce-scatter moves 2, the rest as MASTER_IN_OPTIMIZER. On 8 GPUs with the distributed
// optimizer (ZeRO 1): weights 2 and gradients 2 bytes of all 155,207,680 parameters,
// masters and moments 12 / 8.
TEST(MixedPrecision, SixteenBitGradients) {
  ParallelConfig c = Config(1, 1, 8, 1, 8);
  c.flash_attention = true;
  c.zero_stage = 1;
  const MemoryBreakdown m = Memory(MixedPrecision::kBf16Grads, c);
  EXPECT_DOUBLE_EQ(m.weights_bytes, 2 * kParams);
  EXPECT_DOUBLE_EQ(m.gradients_bytes, 2 * kParams);
  EXPECT_DOUBLE_EQ(m.optimizer_bytes, 12 * kParams / 8);
  const MemoryBreakdown fp32 = Memory(MixedPrecision::kMasterInOptimizer, c);
  EXPECT_DOUBLE_EQ(fp32.gradients_bytes, 4 * kParams);
  c.framework = Framework::kNemo;
  EXPECT_DOUBLE_EQ(Memory(MixedPrecision::kDefault, c).gradients_bytes, 2 * kParams);
  c.framework = Framework::kMegatron;  // Megatron-LM reduces bf16 gradients in fp32 unless told
  EXPECT_DOUBLE_EQ(Memory(MixedPrecision::kDefault, c).gradients_bytes, 4 * kParams);
  Workload fp16 = SmallGpt(MixedPrecision::kDefault);  // NeMo's fp16 recipes keep fp32 main gradients
  fp16.precision = Precision::kFp16;
  EXPECT_EQ(ResolvedMixedPrecision(fp16, Framework::kNemo), MixedPrecision::kMasterInOptimizer);
  fp16.precision = Precision::kFp8;
  EXPECT_EQ(ResolvedMixedPrecision(fp16, Framework::kNemo), MixedPrecision::kBf16Grads);
  const Hardware hw(Profile("dgx-h100-80gb"), Precision::kBf16);
  const Collectives coll(hw);
  absl::StatusOr<ModelCosts> costs =
      ComputeModelCosts(SmallGpt(MixedPrecision::kBf16Grads), ModelShape::Of(c.Normalized()), hw, coll);
  ASSERT_TRUE(costs.ok()) << costs.status();
  EXPECT_EQ(costs->grad_reduce_bytes_per_param, 2);
  EXPECT_TRUE(costs->optimizer.fp32_grad_copy_at_step);
  // Megatron-Bridge's DeepSeek-V3 recipe: the precision-aware optimizer with BF16 moments
  // and BF16 main gradients hands them to FusedAdam as they are (decoupled_grad): no fp32
  // copy at the step, the norm and Adam read 2 bytes; 6 bytes of state.
  Workload dsv3 = SmallGpt(MixedPrecision::kBf16Grads);
  dsv3.optimizer_moments = Precision::kBf16;
  absl::StatusOr<ModelCosts> aware = ComputeModelCosts(dsv3, ModelShape::Of(c.Normalized()), hw, coll);
  ASSERT_TRUE(aware.ok()) << aware.status();
  EXPECT_FALSE(aware->optimizer.fp32_grad_copy_at_step);
  EXPECT_EQ(aware->optimizer.state_bytes_per_param, 6);
  // 2 (norm) + (2 grad + 4 weight and remainder + 4 moments read, 8 written) + 2 (zeroing).
  EXPECT_EQ(aware->optimizer.bytes_per_param, 2 + 18 + 2);
  EXPECT_EQ(aware->grad_bytes_per_param, 2);
}

// NeMo's performance scripts run BF16 Adam under Megatron-Core's precision-aware optimizer
// with fp32 moments (helpers.py set_primary_perf_configs; Megatron-Bridge's
// set_post_overrides). On 8 GPUs under ZeRO 1: the master weights
// kept as 2-byte remainders beside the BF16 weights, 2 + 4 + 4 = 10 bytes of state a
// parameter (sharded 8 ways) where Megatron-LM keeps 12; the 16-bit gradients go to the
// kernel as they are, so the step moves 2 (norm) + 2 + 4 + 8 read + 4 + 8 written (Adam) +
// 2 (zeroing) = 30 bytes a parameter against Megatron-LM's 46 under 16-bit gradients (4 + 28
// + 6 + 4, the fp32 cast 6 less the 2 its zeroing saves). Under Megatron-FSDP (ZeRO 2 and
// 3) the main parameters stay fp32 (12 bytes of state) and the gradients alone go to the
// step as they are: no fp32 copy, 46 - 6 - 4 = 36 bytes a parameter.
TEST(MixedPrecision, NemoRunsBf16AdamPrecisionAware) {
  ParallelConfig c = Config(1, 1, 8, 1, 8);
  c.flash_attention = true;
  c.zero_stage = 1;
  c.framework = Framework::kNemo;
  const Workload w = SmallGpt(MixedPrecision::kDefault);
  absl::StatusOr<Estimate> nemo = EstimateIteration(w, c, Profile("dgx-h100-80gb"));
  c.framework = Framework::kMegatron;
  absl::StatusOr<Estimate> megatron = EstimateIteration(SmallGpt(MixedPrecision::kBf16Grads), c, Profile("dgx-h100-80gb"));
  ASSERT_TRUE(nemo.ok() && megatron.ok());
  EXPECT_DOUBLE_EQ(nemo->memory.optimizer_bytes, 10 * kParams / 8);
  EXPECT_DOUBLE_EQ(nemo->memory.weights_bytes, 2 * kParams);
  EXPECT_DOUBLE_EQ(nemo->memory.gradients_bytes, 2 * kParams);
  EXPECT_FALSE(nemo->memory.peak_at_optimizer_step);
  EXPECT_DOUBLE_EQ(megatron->memory.optimizer_bytes, 12 * kParams / 8);
  EXPECT_NEAR(nemo->time.optimizer_s / megatron->time.optimizer_s, 30.0 / 46, 0.01);
  for (int zero : {2, 3}) {
    c.zero_stage = zero;
    c.framework = Framework::kNemo;
    absl::StatusOr<Estimate> fsdp = EstimateIteration(w, c, Profile("dgx-h100-80gb"));
    c.framework = Framework::kMegatron;
    absl::StatusOr<Estimate> plain = EstimateIteration(SmallGpt(MixedPrecision::kBf16Grads), c, Profile("dgx-h100-80gb"));
    ASSERT_TRUE(fsdp.ok() && plain.ok());
    EXPECT_DOUBLE_EQ(fsdp->memory.optimizer_bytes, 12 * kParams / 8);
    EXPECT_DOUBLE_EQ(fsdp->memory.gradients_bytes, 2 * kParams / 8);
    EXPECT_FALSE(fsdp->memory.peak_at_optimizer_step);
    EXPECT_NEAR(fsdp->time.optimizer_s / plain->time.optimizer_s, 36.0 / 46, 0.01) << zero;
  }
  c.framework = Framework::kNemo;
  Workload fp8 = w;  // the scripts turn it on for BF16 runs only
  fp8.precision = Precision::kFp8;
  c.zero_stage = 1;
  absl::StatusOr<Estimate> low = EstimateIteration(fp8, c, Profile("dgx-h100-80gb"));
  ASSERT_TRUE(low.ok());
  EXPECT_DOUBLE_EQ(low->memory.optimizer_bytes, 12 * kParams / 8);
}

// fp16 under Megatron-LM keeps its gradient buffer in fp16 (arguments.py upgrades it to
// fp32 only for bf16); the optimizer casts it to new fp32 tensors before the step. One
// GPU, full recompute, micro-batch 1: the activations are smaller than those 4 bytes a
// parameter, so the peak is the step's: weights 2, gradients 2 + 4, masters and moments
// 12 bytes of all 155,207,680 parameters, no activations. Without recompute at
// micro-batch 8 the backward's activations are the larger: gradients 2, no step peak.
TEST(MixedPrecision, Fp16GradientsPeakAtTheStepWhenActivationsAreSmall) {
  Workload fp16 = SmallGpt(MixedPrecision::kDefault);
  fp16.precision = Precision::kFp16;
  EXPECT_EQ(ResolvedMixedPrecision(fp16, Framework::kAny), MixedPrecision::kBf16Grads);
  EXPECT_EQ(ResolvedMixedPrecision(fp16, Framework::kMegatron), MixedPrecision::kBf16Grads);
  EXPECT_EQ(ResolvedMixedPrecision(fp16, Framework::kDeepSpeed), MixedPrecision::kMasterInOptimizer);
  ParallelConfig c = Config(1, 1, 1, 1, 1, Recompute::kFull);
  c.flash_attention = true;
  absl::StatusOr<Estimate> e = EstimateIteration(fp16, c, Profile("dgx-h100-80gb"));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(e->memory.peak_at_optimizer_step);
  EXPECT_DOUBLE_EQ(e->memory.weights_bytes, 2 * kParams);
  EXPECT_DOUBLE_EQ(e->memory.gradients_bytes, (2 + 4) * kParams);
  EXPECT_DOUBLE_EQ(e->memory.optimizer_bytes, 12 * kParams);
  EXPECT_EQ(e->memory.activations_bytes, 0);
  c = Config(1, 1, 1, 8, 8);
  c.flash_attention = true;
  e = EstimateIteration(fp16, c, Profile("dgx-h100-80gb"));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_FALSE(e->memory.peak_at_optimizer_step);
  EXPECT_DOUBLE_EQ(e->memory.gradients_bytes, 2 * kParams);
  EXPECT_GT(e->memory.activations_bytes, 4 * kParams);
}

TEST(MixedPrecision, GradientsPersistWithAccumulationOrDdp) {
  // Two micro-batches: the first backward's gradients wait beside the second's
  // activations.
  ParallelConfig accumulate = Config(1, 1, 1, 1, 2);
  accumulate.flash_attention = true;
  EXPECT_DOUBLE_EQ(Memory(MixedPrecision::kFp32Params, accumulate).gradients_bytes, 4 * kParams);
  // DDP (ZeRO 0, DP 2) keeps persistent fp32 buckets.
  ParallelConfig ddp = Config(1, 1, 2, 1, 2);
  ddp.flash_attention = true;
  EXPECT_DOUBLE_EQ(Memory(MixedPrecision::kFp32Params, ddp).gradients_bytes, 4 * kParams);
  // FSDP (ZeRO 3, DP 2): shards of 4 + 4 + 8 bytes; two layers gathered in 16 bits
  // (2 x 12,587,008 parameters x 2 bytes) instead of autocast's whole-model copy.
  ParallelConfig fsdp = ddp;
  fsdp.zero_stage = 3;
  const MemoryBreakdown m = Memory(MixedPrecision::kFp32Params, fsdp);
  EXPECT_DOUBLE_EQ(m.weights_bytes, 4 * kParams / 2);
  EXPECT_DOUBLE_EQ(m.optimizer_bytes, 8 * kParams / 2);
  const MemoryBreakdown megatron = Memory(MixedPrecision::kMasterInOptimizer, fsdp);
  EXPECT_DOUBLE_EQ(m.buffers_bytes, megatron.buffers_bytes);  // both gather 16-bit weights
  // ... plus the four pipeline send / receive buffers of one s x b x h activation.
  EXPECT_DOUBLE_EQ(megatron.buffers_bytes, 2 * (12 * kH * kH + 4 * kH) * 2 + 4 * 512 * kH * 2);
}

// Where gradients live in 16 bits: Megatron-LM's distributed optimizer keeps fp32 main
// gradients (4 bytes each, whole at ZeRO 1); Megatron-FSDP (ZeRO 3, main gradients in the
// compute dtype) and DeepSpeed under ZeRO (gradients in the model dtype) keep 2 bytes, a
// shard of them under ZeRO 3; DeepSpeed without ZeRO accumulates bf16 gradients in fp32;
// PyTorch FSDP with fp32 parameters keeps fp32 shards.
TEST(MixedPrecision, GradientBytesFollowTheStack) {
  ParallelConfig c = Config(1, 1, 2, 1, 2);
  c.flash_attention = true;
  c.zero_stage = 1;
  EXPECT_DOUBLE_EQ(Memory(MixedPrecision::kMasterInOptimizer, c).gradients_bytes, 4 * kParams);
  c.framework = Framework::kDeepSpeed;
  EXPECT_DOUBLE_EQ(Memory(MixedPrecision::kMasterInOptimizer, c).gradients_bytes, 2 * kParams);
  c.zero_stage = 0;
  EXPECT_DOUBLE_EQ(Memory(MixedPrecision::kMasterInOptimizer, c).gradients_bytes, 4 * kParams);  // bf16, no ZeRO
  c.zero_stage = 3;
  EXPECT_DOUBLE_EQ(Memory(MixedPrecision::kMasterInOptimizer, c).gradients_bytes, 2 * kParams / 2);
  c.framework = Framework::kMegatron;
  EXPECT_DOUBLE_EQ(Memory(MixedPrecision::kMasterInOptimizer, c).gradients_bytes, 2 * kParams / 2);
  ParallelConfig fsdp = Config(1, 1, 2, 1, 4);  // two micro-batches: gradients accumulate
  fsdp.flash_attention = true;
  fsdp.zero_stage = 3;
  EXPECT_DOUBLE_EQ(Memory(MixedPrecision::kFp32Params, fsdp).gradients_bytes, 4 * kParams / 2);
}

// Each of a layer's four linears casts its fp32 weight to 16 bits before its GEMM (read
// 4, write 2 bytes per weight) and casts the weight gradient back (read 2, write 4): one
// kernel and 6 bytes per weight each way, 12 h^2 weights per layer.
TEST(MixedPrecision, EachLinearCastsItsWeight) {
  const SystemProfile p = Profile("dgx-h100-80gb");
  const ParallelConfig c = Config(1, 1, 1, 1, 1);
  const Hardware hw(p, Precision::kBf16);
  const Collectives coll(hw);
  auto layer = [&](MixedPrecision mixed) {
    absl::StatusOr<ModelCosts> m = ComputeModelCosts(SmallGpt(mixed), ModelShape::Of(c.Normalized()), hw, coll);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? m->layers[0] : BlockCosts{};
  };
  const BlockCosts megatron = layer(MixedPrecision::kMasterInOptimizer);
  const BlockCosts torch = layer(MixedPrecision::kFp32Params);
  EXPECT_EQ(torch.kernels - megatron.kernels, 4 + 4);
  const double cast_s = 6 * 12 * kH * kH / hw.hbm_bytes_per_s();
  EXPECT_NEAR(torch.fwd_s - megatron.fwd_s, cast_s, 1e-12);
  // Beside their weight-gradient GEMMs, which write autograd's 16-bit .grad here and
  // accumulate into Megatron's fp32 buffer there (WeightGradientsAccumulateIntoTheBuffer).
  EXPECT_NEAR((torch.bwd_s - torch.wgrad_s) - (megatron.bwd_s - megatron.wgrad_s), cast_s, 1e-12);
}

// Megatron-Core's linears accumulate weight gradients into the gradient buffer (TE's
// fuse_wgrad_accumulation): each weight-gradient GEMM reads and writes main_grad, 8
// bytes an element in fp32 and 4 in 16 bits. 64 experts of 4096 -> 1536 (gated) at 128
// tokens each (4,096 tokens, top-2) are memory-bound either way, so the fp32 buffer costs
// 16 rounds of 4 experts x 4 bytes x (4096 x 3072 + 1536 x 4096) more: 2.06 ms at
// 3,350 GB/s x 0.70; the attention's GEMMs (4,096 tokens deep) are compute-bound, and the
// router's torch.mm writes its .grad in 16 bits under both.
TEST(MixedPrecision, WeightGradientsAccumulateIntoTheBuffer) {
  Workload w;
  w.transformer.num_layers = 2;
  w.transformer.hidden_size = 4096;
  w.transformer.num_attention_heads = 32;
  w.transformer.seq_length = 4096;
  w.transformer.vocab_size = 32000;
  w.transformer.gated_mlp = true;
  w.transformer.moe.num_experts = 64;
  w.transformer.moe.top_k = 2;
  w.transformer.moe.expert_ffn_hidden_size = 1536;
  w.precision = Precision::kBf16;
  ParallelConfig c = Config(1, 1, 1, 1, 1);
  c.flash_attention = true;
  c.framework = Framework::kMegatron;
  const Hardware hw(Profile("dgx-h100-80gb"), Precision::kBf16);
  const Collectives coll(hw);
  auto layer = [&](MixedPrecision mixed, Framework f) {
    w.mixed_precision = mixed;
    c.framework = f;
    absl::StatusOr<ModelCosts> m = ComputeModelCosts(w, ModelShape::Of(c.Normalized()), hw, coll);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? m->layers[1] : BlockCosts{};
  };
  const BlockCosts fp32 = layer(MixedPrecision::kMasterInOptimizer, Framework::kMegatron);
  const BlockCosts bf16 = layer(MixedPrecision::kBf16Grads, Framework::kMegatron);
  const double extra_s = 16 * 4 * 4 * (4096.0 * 3072 + 1536.0 * 4096) / (3350e9 * 0.70);
  ASSERT_NEAR(extra_s, 2.06e-3, 0.01e-3);
  EXPECT_NEAR(fp32.wgrad_s - bf16.wgrad_s, extra_s, 1e-9);
  EXPECT_NEAR(fp32.bwd_s - bf16.bwd_s, extra_s, 1e-9);
  EXPECT_DOUBLE_EQ(fp32.fwd_s, bf16.fwd_s);
  // DeepSpeed's autograd writes each weight gradient fresh in 16 bits: 4 bytes less than
  // the 16-bit buffer's read and write.
  const BlockCosts deepspeed = layer(MixedPrecision::kMasterInOptimizer, Framework::kDeepSpeed);
  EXPECT_NEAR(bf16.wgrad_s - deepspeed.wgrad_s, extra_s / 2, 1e-9);
}

// DeepSpeed's BF16_Optimizer (bf16, ZeRO 0) adds each micro-batch's 16-bit gradients into
// its fp32 ones after that micro-batch's backward: 2 + 4 bytes for the cast, 4 + 4 + 4 for
// the add, every parameter, every micro-batch. Llama 3 8B (8,030,261,248 parameters) on
// one H100: 144.5 GB, 61.6 ms a micro-batch at 3,350 GB/s x 0.70 (two launches a tensor,
// a few hundred tensors: less host time than that); two micro-batches more cost twice
// that. Megatron's fused accumulation (no such pass) and DeepSpeed under ZeRO 1
// (its partitioned reduction instead) do not pay it.
TEST(MixedPrecision, DeepSpeedBf16OptimizerAddsEachMicroBatchIntoFp32) {
  const SystemProfile h100 = Profile("dgx-h100-80gb");
  auto optimizer_s = [&](Framework f, int zero, int gbs) {
    ParallelConfig c = Config(1, 1, 1, 1, gbs);
    c.flash_attention = true;
    c.framework = f;
    c.zero_stage = zero;
    absl::StatusOr<Estimate> e = EstimateIteration(testing::Model("llama3-8b"), c, h100);
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? e->time.optimizer_s : 0.0;
  };
  const double per_micro_batch = 8030261248.0 * 18 / (3350e9 * 0.70) + 1e-6;
  ASSERT_NEAR(per_micro_batch, 61.6e-3, 0.1e-3);
  EXPECT_NEAR(optimizer_s(Framework::kDeepSpeed, 0, 4) - optimizer_s(Framework::kDeepSpeed, 0, 2),
              2 * per_micro_batch, 1e-9);
  EXPECT_DOUBLE_EQ(optimizer_s(Framework::kDeepSpeed, 1, 4), optimizer_s(Framework::kDeepSpeed, 1, 2));
  EXPECT_DOUBLE_EQ(optimizer_s(Framework::kMegatron, 0, 4), optimizer_s(Framework::kMegatron, 0, 2));
}

}  // namespace
}  // namespace paraplan
