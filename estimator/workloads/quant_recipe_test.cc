// Low-precision linears by recipe (Transformer Engine's FP8 recipes and NVFP4): the
// weight copies each keeps, the quantisation traffic ordering, the layers NVFP4 keeps in
// BF16, and what the accelerator must offer — against hand counts and the BF16 model.
#include <cmath>
#include <optional>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "estimator/inputs/validate.h"
#include "estimator/iteration/estimate.h"
#include "estimator/system/collectives.h"
#include "estimator/system/hardware.h"
#include "estimator/testing/test_util.h"
#include "estimator/workloads/model_costs.h"
#include "estimator/workloads/transformer_blocks.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::Model;
using testing::Profile;

absl::StatusOr<ModelCosts> Costs(const Workload& w, const SystemProfile& p) {
  const Hardware hw(p, w.precision);
  const Collectives coll(hw);
  ParallelConfig c = testing::Config(1, 1, 1, 1, 1);
  c.flash_attention = true;
  return ComputeModelCosts(w, ModelShape::Of(c.Normalized()), hw, coll);
}

Workload Llama70b(Precision p, QuantRecipe r) {
  Workload w = Model("llama3-70b");
  w.precision = p;
  w.quant_recipe = r;
  return w;
}

// Weight bytes per parameter: the 16-bit weight and its quantised copies — both
// orientations on an H100 (FP8 2 + 1 + 1: Hopper's FP8 GEMMs are TN only), one for the
// per-tensor FP8 recipes where FP8 GEMMs take any layout (GB200: 2 + 1, Transformer
// Engine's is_non_tn_fp8_gemm_supported); MXFP8 2 + 2 x (1 + 1/32) and NVFP4
// 2 + 2 x (1/2 + 1/16) scale each orientation apart. FP8 parameter gather drops the
// 16-bit copy: 2 on an H100, 1 on a GB200.
TEST(QuantRecipe, WeightCopies) {
  const SystemProfile gb200 = Profile("gb200-nvl72");
  const SystemProfile h100 = Profile("dgx-h100-80gb");
  for (const auto& [profile, p, r, bytes] :
       {std::tuple{&h100, Precision::kFp8, QuantRecipe::kDelayedScaling, 4.0},
        {&h100, Precision::kFp8, QuantRecipe::kCurrentScaling, 4.0},
        {&gb200, Precision::kFp8, QuantRecipe::kDelayedScaling, 3.0},
        {&gb200, Precision::kFp8, QuantRecipe::kCurrentScaling, 3.0},
        {&gb200, Precision::kFp8, QuantRecipe::kBlockwise, 4.0},
        {&gb200, Precision::kFp8, QuantRecipe::kMxfp8, 4.0625},
        {&gb200, Precision::kFp4, QuantRecipe::kDefault, 3.125},
        {&gb200, Precision::kBf16, QuantRecipe::kDefault, 2.0}}) {
    absl::StatusOr<ModelCosts> m = Costs(Llama70b(p, r), *profile);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_DOUBLE_EQ(m->weight_bytes_per_param, bytes) << profile->name << " " << static_cast<int>(r);
  }
  ParallelConfig c = testing::Config(8, 1, 1, 1, 1);
  c.zero_stage = 1;
  c.fp8_param_gather = true;
  c = c.Normalized();
  for (const auto& [profile, bytes] : {std::pair{&h100, 2.0}, {&gb200, 1.0}}) {
    const Hardware hw(*profile, Precision::kFp8);
    const Collectives coll(hw);
    absl::StatusOr<ModelCosts> m =
        ComputeModelCosts(Llama70b(Precision::kFp8, QuantRecipe::kCurrentScaling), ModelShape::Of(c), hw, coll);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_DOUBLE_EQ(WeightBytesOf(*m, c).held, bytes) << profile->name;
  }
}

// FP8 casts of one linear (m x k input, n outputs) as Transformer Engine runs
// them, by hand, in bytes beyond the 16-bit linear's traffic and kernels, forward and
// backward (backward counted beyond twice the forward, as Part keeps it):
// - plain input, TN-only GPU: cast-transpose of X forward (read 2, write 1 + 1) and of dY
//   backward: 4mk, 4mn, one kernel each; where FP8 GEMMs take any layout 3mk, 3mn;
// - under SP at TP 4, a column-parallel linear fed by its fused norm (delayed scaling):
//   the norm writes X's quarter of the rows in FP8 (1 byte where 2: -mk / 4), the gathered
//   X is transposed in backward (2mk), dY cast-transposed whole (4mn);
// - a row-parallel linear's backward under SP: dY's quarter cast (3mn / 4), gathered,
//   then transposed (2mn);
// - current scaling adds each cast's amax read (2 bytes on what it casts; none for the
//   amax a fused norm computes), its amax and scale kernels launched within the same call.
// Kernels count the host's quantize calls: one a cast or transpose, none where the fused
// norm's call quantises;
// - blockwise (1 x 128) writes both orientations in one kernel: 4mk forward, 4mn
//   backward, on a GPU's quarter of the rows where SP gathers them (was 3mk forward and
//   6mn + 3mk backward in three kernels, its transposes re-quantised from BF16).
TEST(QuantRecipe, CastsAsTransformerEngineRunsThem) {
  const double m = 4096, n = 2048, k = 8192;
  struct Case {
    QuantRecipe r;
    bool any_layout;
    transformer::LinearIo io;
    double fwd, bwd, kf, kb;
  };
  const transformer::LinearIo plain{}, column{.input_share = 0.25, .norm_fused = true}, row{.grad_share = 0.25};
  const Case cases[] = {
      {QuantRecipe::kDelayedScaling, false, plain, 4 * m * k, 4 * m * n, 1, 1},
      {QuantRecipe::kDelayedScaling, true, plain, 3 * m * k, 3 * m * n, 1, 1},
      {QuantRecipe::kDelayedScaling, false, column, -m * k / 4, 2 * m * k + 4 * m * n, 0, 2},
      {QuantRecipe::kDelayedScaling, true, column, -m * k / 4, 3 * m * n, 0, 1},
      {QuantRecipe::kDelayedScaling, false, row, 4 * m * k, 3 * m * n / 4 + 2 * m * n, 1, 2},
      {QuantRecipe::kCurrentScaling, false, plain, 6 * m * k, 6 * m * n, 1, 1},
      {QuantRecipe::kCurrentScaling, false, column, 3 * m * k / 4, 2 * m * k + 6 * m * n, 0, 2},
      {QuantRecipe::kCurrentScaling, true, row, 5 * m * k, 5 * m * n / 4, 1, 1},
      {QuantRecipe::kBlockwise, false, plain, 4 * m * k, 4 * m * n, 1, 1},
      {QuantRecipe::kBlockwise, false, transformer::LinearIo{.input_share = 0.25, .grad_share = 0.25}, m * k, m * n, 1,
       1},
  };
  const SystemProfile h100 = Profile("dgx-h100-80gb");
  const Workload w = Llama70b(Precision::kFp8, QuantRecipe::kDelayedScaling);
  const Hardware hw(h100, w.precision);
  const ModelShape one_gpu = ModelShape::Of(testing::Config(1, 1, 1, 1, 1).Normalized());
  for (const Case& c : cases) {
    transformer::Dims x = transformer::LayerDims(w, w.transformer.Resolved(), one_gpu);
    x.recipe = c.r;
    x.fp8_any_layout = c.any_layout;
    transformer::Dims bf16 = x;
    bf16.lowp = false;
    transformer::Part q, ref;
    transformer::Linear(hw, x, m, n, k, 1, &q, c.io);
    transformer::Linear(hw, bf16, m, n, k, 1, &ref, c.io);
    const std::string what = absl::StrCat(static_cast<int>(c.r), " any ", c.any_layout, " in ", c.io.input_share,
                                          " grad ", c.io.grad_share);
    EXPECT_DOUBLE_EQ(q.mem_fwd_bytes - ref.mem_fwd_bytes, c.fwd) << what;
    EXPECT_DOUBLE_EQ(q.mem_bwd_bytes - ref.mem_bwd_bytes, c.bwd) << what;
    EXPECT_EQ(q.kernels_fwd - ref.kernels_fwd, c.kf) << what;
    EXPECT_EQ(q.kernels_bwd - ref.kernels_bwd, c.kb) << what;
  }
  // Outside Megatron-Core's modules (torchtitan's torchao): current scaling casts each
  // tensor whole (amax, then cast: 5 bytes, two kernels) and transposes both FP8 operands
  // in one more pass backward (read 1, write 1 each) on a TN-only GPU.
  transformer::Dims x = transformer::LayerDims(w, w.transformer.Resolved(), one_gpu);
  x.recipe = QuantRecipe::kCurrentScaling;
  x.fp8_any_layout = false;
  x.te_modules = false;
  transformer::Dims bf16 = x;
  bf16.lowp = false;
  transformer::Part q, ref;
  transformer::Linear(hw, x, m, n, k, 1, &q, column);
  transformer::Linear(hw, bf16, m, n, k, 1, &ref, column);
  EXPECT_DOUBLE_EQ(q.mem_fwd_bytes - ref.mem_fwd_bytes, 5 * m * k);
  EXPECT_DOUBLE_EQ(q.mem_bwd_bytes - ref.mem_bwd_bytes, 5 * m * n + 2 * m * n + 2 * m * k);
  EXPECT_EQ(q.kernels_fwd - ref.kernels_fwd, 2);
  EXPECT_EQ(q.kernels_bwd - ref.kernels_bwd, 3);
}

// Under sequence parallelism the linears all-gather their inputs already quantised: by
// hand, a dense layer's forward at TP 4 waits for two all-gathers of T x h elements at 1
// byte (FP8) where BF16 gathers 2, and the same two reduce-scatters in 16 bits.
// torchtitan's torchao linears are not Transformer Engine's: they gather 16 bits.
TEST(QuantRecipe, SequenceParallelGathersAreQuantised) {
  const SystemProfile h100 = Profile("dgx-h100-80gb");
  auto tp_fwd = [&](Precision p, Framework f = Framework::kAny) {
    ParallelConfig c = testing::Config(4, 1, 1, 1, 1);
    c.flash_attention = true;
    c.sequence_parallel = true;
    c.tp_comm_overlap = false;
    c.framework = f;
    const Workload w = Llama70b(p, p == Precision::kFp8 ? QuantRecipe::kDelayedScaling : QuantRecipe::kDefault);
    const Hardware hw(h100, w.precision);
    absl::StatusOr<ModelCosts> m = ComputeModelCosts(w, ModelShape::Of(c.Normalized()), hw, Collectives(hw));
    EXPECT_TRUE(m.ok()) << m.status();
    return m->layers[0].tp_fwd_s;
  };
  const Hardware hw(h100, Precision::kBf16);
  const Collectives coll(hw);
  const GroupSpan tp = coll.Place(4, 1);
  const double th = 8192.0 * 8192;
  const double saved = 2 * (coll.AllGather(2 * th, tp) - coll.AllGather(th, tp));
  EXPECT_NEAR(tp_fwd(Precision::kBf16) - tp_fwd(Precision::kFp8), saved, 1e-12);
  EXPECT_GT(coll.AllGather(2 * th, tp), coll.AllGather(th, tp));
  EXPECT_DOUBLE_EQ(tp_fwd(Precision::kFp8, Framework::kTorchtitan), tp_fwd(Precision::kBf16, Framework::kTorchtitan));

  // The estimate's collectives say the same: Llama 3 70B's 80 dense layers, one 8,192-token
  // micro-batch, 4 all-gathers a layer, each of 8,192 x 8,192 one-byte elements; the
  // reduce-scatters of as many 16-bit ones.
  ParallelConfig c = testing::Config(4, 1, 1, 1, 1);
  c.flash_attention = true;
  c.sequence_parallel = true;
  absl::StatusOr<Estimate> e = EstimateIteration(Llama70b(Precision::kFp8, QuantRecipe::kDelayedScaling), c, h100);
  ASSERT_TRUE(e.ok()) << e.status();
  int gathers = 0;
  for (const CollectiveUse& u : e->collectives) {
    if (u.dimension != "tp") continue;
    if (u.kind == CollectiveKind::kAllGather) {
      ++gathers;
      EXPECT_DOUBLE_EQ(u.bytes, th);
      EXPECT_DOUBLE_EQ(u.calls, 80 * 4);
    } else {
      EXPECT_DOUBLE_EQ(u.bytes, 2 * th);
    }
  }
  EXPECT_EQ(gathers, 1);
}

// NVFP4's casts of one linear (m x k input, n outputs) as Transformer Engine 2.9-2.14 runs
// them on Blackwell, by hand: the amax of the input and of its Hadamard transform in one
// read (2 bytes an element), the row-wise cast and the column-wise cast with the Hadamard
// transform fused into it (each read 2, write 1/2 + 1/16): 7.125 bytes an element of the
// input forward and of the output gradient backward, beyond the 16-bit layer's traffic;
// three kernels each way, launched from one quantize call. (9.125 while the transform was
// taken as its own pass.)
TEST(QuantRecipe, Nvfp4CastsTheHadamardTransformInTheColumnwisePass) {
  const SystemProfile gb200 = Profile("gb200-nvl72");
  const Workload w = Llama70b(Precision::kFp4, QuantRecipe::kNvfp4);
  const Hardware hw(gb200, w.precision);
  const transformer::Dims x =
      transformer::LayerDims(w, w.transformer.Resolved(), ModelShape::Of(testing::Config(1, 1, 1, 1, 1).Normalized()));
  ASSERT_TRUE(x.lowp && x.recipe == QuantRecipe::kNvfp4);
  transformer::Dims bf16 = x;
  bf16.lowp = false;
  const double m = 8192, n = 10240, k = 8192;
  transformer::Part fp4, ref;
  transformer::Linear(hw, x, m, n, k, 1, &fp4);
  transformer::Linear(hw, bf16, m, n, k, 1, &ref);
  EXPECT_DOUBLE_EQ(fp4.mem_fwd_bytes - ref.mem_fwd_bytes, 7.125 * m * k);
  EXPECT_DOUBLE_EQ(fp4.mem_bwd_bytes - ref.mem_bwd_bytes, 7.125 * m * n);
  EXPECT_EQ(fp4.kernels_fwd - ref.kernels_fwd, 1);  // one quantize call launching the three
  EXPECT_EQ(fp4.kernels_bwd - ref.kernels_bwd, 1);
  // Under SP at TP 4 a GPU quantises its quarter of the rows before the gather.
  const transformer::LinearIo sp{.input_share = 0.25, .grad_share = 0.25};
  transformer::Part fp4_sp, ref_sp;
  transformer::Linear(hw, x, m, n, k, 1, &fp4_sp, sp);
  transformer::Linear(hw, bf16, m, n, k, 1, &ref_sp, sp);
  EXPECT_DOUBLE_EQ(fp4_sp.mem_fwd_bytes - ref_sp.mem_fwd_bytes, 7.125 * m * k / 4);
  EXPECT_DOUBLE_EQ(fp4_sp.mem_bwd_bytes - ref_sp.mem_bwd_bytes, 7.125 * m * n / 4);
}

// Current scaling reads every tensor once more for its amax than delayed scaling does;
// the GEMMs are the same, so only the memory-bound time grows.
TEST(QuantRecipe, CurrentScalingAddsAnAmaxPass) {
  const SystemProfile h100 = Profile("dgx-h100-80gb");
  absl::StatusOr<ModelCosts> delayed = Costs(Llama70b(Precision::kFp8, QuantRecipe::kDelayedScaling), h100);
  absl::StatusOr<ModelCosts> current = Costs(Llama70b(Precision::kFp8, QuantRecipe::kCurrentScaling), h100);
  ASSERT_TRUE(delayed.ok() && current.ok());
  EXPECT_GT(current->layers[0].fwd_s, delayed->layers[0].fwd_s);
  EXPECT_DOUBLE_EQ(current->layers[0].model_flops, delayed->layers[0].model_flops);
}

// A grouped linear quantises all its experts' slices in one call (Transformer Engine's
// split_quantize): current scaling's casts add the same launches to an MoE layer whether
// it holds 128 experts or 32 — by hand, its four quantised linears (QKV, projection, the
// experts' fc1 and fc2; the router's GEMM stays in 16 bits), each one quantize call a
// tensor from the host (its amax, scale and cast-transpose kernels launched within it):
// QKV's input quantised by the norm it fuses (no call), the other three inputs one each,
// every output gradient one: 3 + 4 = 7 — while their bytes grow with the rows, not the
// experts.
TEST(QuantRecipe, GroupedLinearsQuantiseInOneCall) {
  const SystemProfile h100 = Profile("dgx-h100-80gb");
  auto extra = [&](int experts) {
    Workload w = Model("qwen3-30b-a3b");
    w.transformer.moe.num_experts = experts;
    w.precision = Precision::kBf16;
    absl::StatusOr<ModelCosts> bf16 = Costs(w, h100);
    w.precision = Precision::kFp8;
    w.quant_recipe = QuantRecipe::kCurrentScaling;
    absl::StatusOr<ModelCosts> fp8 = Costs(w, h100);
    EXPECT_TRUE(bf16.ok() && fp8.ok());
    return fp8->layers[0].kernels - bf16->layers[0].kernels;
  };
  EXPECT_EQ(extra(128), 7);
  EXPECT_EQ(extra(32), 7);
}

// NVFP4 runs every transformer layer at the FP4 rate, the last as the first (Megatron's
// first_last_layers_bf16 is off unless set), faster than FP8's; the LM head stays BF16
// either way.
TEST(QuantRecipe, Nvfp4RunsEveryLayerAndKeepsTheHeadInBf16) {
  const SystemProfile gb200 = Profile("gb200-nvl72");
  absl::StatusOr<ModelCosts> fp4 = Costs(Llama70b(Precision::kFp4, QuantRecipe::kDefault), gb200);
  absl::StatusOr<ModelCosts> fp8 = Costs(Llama70b(Precision::kFp8, QuantRecipe::kMxfp8), gb200);
  absl::StatusOr<ModelCosts> bf16 = Costs(Llama70b(Precision::kBf16, QuantRecipe::kDefault), gb200);
  ASSERT_TRUE(fp4.ok() && fp8.ok() && bf16.ok());
  for (int i : {0, 40, 79}) {
    EXPECT_DOUBLE_EQ(fp4->layers[i].fwd_s, fp4->layers[0].fwd_s) << i;
    EXPECT_LT(fp4->layers[i].fwd_s + fp4->layers[i].bwd_s, fp8->layers[i].fwd_s + fp8->layers[i].bwd_s) << i;
    EXPECT_LT(fp4->layers[i].fwd_s, bf16->layers[i].fwd_s) << i;
  }
  EXPECT_DOUBLE_EQ(fp4->post.fwd_s, bf16->post.fwd_s);
}

// fp8_param_gather: the FP8 weight and its transpose stay (1 + 1 bytes), the BF16 copy
// goes, and ZeRO gathers one byte a parameter (WeightBytesOf; ModelCosts keeps the
// 16-bit figures for configurations that do not).
TEST(QuantRecipe, Fp8ParamGather) {
  const SystemProfile h100 = Profile("dgx-h100-80gb");
  const Workload w = Llama70b(Precision::kFp8, QuantRecipe::kDefault);
  const Hardware hw(h100, w.precision);
  const Collectives coll(hw);
  ParallelConfig c = testing::Config(8, 1, 8, 1, 8);
  c.zero_stage = 1;
  c.fp8_param_gather = true;
  absl::StatusOr<ModelCosts> m = ComputeModelCosts(w, ModelShape::Of(c.Normalized()), hw, coll);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_DOUBLE_EQ(WeightBytesOf(*m, c).held, 2);
  EXPECT_DOUBLE_EQ(WeightBytesOf(*m, c).gathered, 1);
  EXPECT_TRUE(ValidateConfig(w, c).ok());
  // NVFP4 (fp4_param_gather): the 4-bit weight and its transpose, each 1/2 + 1/16 bytes
  // an element with its FP8 block scales, and ZeRO gathers 0.5625 bytes a parameter.
  const Workload fp4 = Llama70b(Precision::kFp4, QuantRecipe::kNvfp4);
  const Hardware hw4(h100, fp4.precision);
  absl::StatusOr<ModelCosts> m4 = ComputeModelCosts(fp4, ModelShape::Of(c.Normalized()), hw4, coll);
  ASSERT_TRUE(m4.ok()) << m4.status();
  EXPECT_DOUBLE_EQ(WeightBytesOf(*m4, c).held, 2 * 0.5625);
  EXPECT_DOUBLE_EQ(WeightBytesOf(*m4, c).gathered, 0.5625);
  EXPECT_TRUE(ValidateConfig(fp4, c).ok());
  c.fp8_param_gather = false;  // said off: the 16-bit weight and its gathers
  EXPECT_DOUBLE_EQ(WeightBytesOf(*m, c).held, 4);
  EXPECT_DOUBLE_EQ(WeightBytesOf(*m, c).gathered, 2);
  c.fp8_param_gather = true;
  // torchtitan (fp32 parameters, float8 FSDP all-gather): the 4-byte weights stay, 1 byte
  // a parameter is gathered.
  ParallelConfig titan = c;
  titan.framework = Framework::kTorchtitan;
  absl::StatusOr<ModelCosts> mt = ComputeModelCosts(w, ModelShape::Of(titan.Normalized()), hw, coll);
  ASSERT_TRUE(mt.ok()) << mt.status();
  EXPECT_DOUBLE_EQ(WeightBytesOf(*mt, titan).held, 4);
  EXPECT_DOUBLE_EQ(WeightBytesOf(*mt, titan).gathered, 1);
  c.zero_stage = 0;
  EXPECT_NE(std::string(ValidateConfig(w, c).message()).find("config.fp8_param_gather"), std::string::npos);
  EXPECT_NE(std::string(ValidateConfig(Llama70b(Precision::kBf16, QuantRecipe::kDefault), c).message())
                .find("config.fp8_param_gather"),
            std::string::npos);
}

// Unstated, fp8_param_gather is the framework's: NeMo's mixed-precision presets gather
// the quantised weights under delayed and current scaling, MXFP8 and NVFP4 (not
// blockwise), with a distributed optimizer (ZeRO >= 1); Megatron-LM and the rest do not.
// Estimates echo what they costed.
TEST(QuantRecipe, Fp8ParamGatherIsNemosDefault) {
  const SystemProfile h100 = Profile("dgx-h100-80gb");
  const SystemProfile b200 = Profile("dgx-b200-180gb");  // MXFP8 runs on Blackwell only
  for (const auto& [framework, recipe, zero, gathers] :
       {std::tuple{Framework::kNemo, QuantRecipe::kCurrentScaling, 1, true},
        {Framework::kNemo, QuantRecipe::kDelayedScaling, 1, true},
        {Framework::kNemo, QuantRecipe::kMxfp8, 1, true},
        {Framework::kNemo, QuantRecipe::kBlockwise, 1, false},
        {Framework::kNemo, QuantRecipe::kCurrentScaling, 0, false},
        {Framework::kMegatron, QuantRecipe::kCurrentScaling, 1, false},
        {Framework::kAny, QuantRecipe::kCurrentScaling, 1, false}}) {
    ParallelConfig c = testing::Config(8, 1, 8, 1, 8);
    c.zero_stage = zero;
    c.framework = framework;
    const Workload w = Llama70b(Precision::kFp8, recipe);
    const SystemProfile& gpu = recipe == QuantRecipe::kMxfp8 ? b200 : h100;
    const Hardware hw(gpu, Precision::kFp8);
    const Collectives coll(hw);
    absl::StatusOr<ModelCosts> m = ComputeModelCosts(w, ModelShape::Of(c.Normalized()), hw, coll);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(QuantisedParamGather(*m, c), gathers) << static_cast<int>(framework) << " " << static_cast<int>(recipe);
    absl::StatusOr<Estimate> e = EstimateIteration(w, c, gpu);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_EQ(e->config.fp8_param_gather, std::optional<bool>(gathers));
  }
}

// Transformer Engine keeps a linear's input for backward as its FP8 copy: Llama 3 70B
// (8,192 tokens, TP 1) stores the QKV, projection and MLP inputs (8,192 wide each) and
// the down projection's input (28,672) in 1 byte instead of 2; the SwiGLU's inputs, the
// norms' inputs, Q, K, V stay BF16.
TEST(QuantRecipe, Fp8KeepsQuantisedLinearInputs) {
  const SystemProfile h100 = Profile("dgx-h100-80gb");
  absl::StatusOr<ModelCosts> fp8 = Costs(Llama70b(Precision::kFp8, QuantRecipe::kDefault), h100);
  absl::StatusOr<ModelCosts> bf16 = Costs(Llama70b(Precision::kBf16, QuantRecipe::kDefault), h100);
  ASSERT_TRUE(fp8.ok() && bf16.ok());
  const double T = 8192;
  EXPECT_DOUBLE_EQ(bf16->layers[0].activation_bytes - fp8->layers[0].activation_bytes,
                   T * (3 * 8192 + 28672) * (2 - 1));
}

// FP4 needs FP4 tensor cores (Hopper has none); recipes match their precision.
TEST(QuantRecipe, Validation) {
  const Workload fp4 = Llama70b(Precision::kFp4, QuantRecipe::kDefault);
  const absl::Status hopper = ValidateWorkloadOnProfile(fp4, Profile("dgx-h100-80gb"));
  EXPECT_EQ(hopper.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(hopper.message()).find("workload.precision"), std::string::npos) << hopper;
  EXPECT_TRUE(ValidateWorkloadOnProfile(fp4, Profile("gb200-nvl72")).ok());
  absl::StatusOr<Estimate> e = EstimateIteration(fp4, testing::Config(8, 1, 1, 1, 8), Profile("dgx-h100-80gb"));
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  for (const auto& [p, r] : {std::pair{Precision::kFp8, QuantRecipe::kNvfp4}, {Precision::kFp4, QuantRecipe::kMxfp8},
                             {Precision::kBf16, QuantRecipe::kMxfp8}}) {
    const absl::Status s = ValidateWorkload(Llama70b(p, r));
    EXPECT_NE(std::string(s.message()).find("workload.quant_recipe"), std::string::npos) << s;
  }
}

}  // namespace
}  // namespace paraplan
