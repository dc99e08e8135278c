// Per-layer costs of a transformer (GPT / Llama / MoE) on one GPU for one micro-batch.
//
// FLOPs and activation bytes follow Narayanan et al. SC'21 (eq. 3) and Korthikanti et
// al. 2022 (sec. 4, activations per layer s*b*h*(34 + 5*a*s/h) and its TP/SP/recompute
// variants), generalised to grouped-query attention, gated MLPs, context and expert
// parallelism by counting each stored tensor explicitly.
#include <algorithm>
#include <cmath>
#include <tuple>

#include "absl/status/status.h"
#include "estimator/workloads/model_costs.h"

namespace paraplan {

namespace {

struct Dims {
  double b, s, c, t, T, h, a, g, d, f, V, p;
  // Attention core widths: query/key and value channels per head, and the K/V heads
  // (d, d, g; MLA: nope + rope, v_head_dim, a).
  double dqk, dv, kv;
  double r;  // share of the token-hidden tensors this GPU holds (1/t with SP)
  bool gated, flash, sp;
  bool lowp;          // the linears run in FP8 / FP4 (Transformer Engine)
  bool bf16_linears;  // a low-precision workload's layer kept in BF16 (its linears at that rate)
  // Bytes per element of what a linear keeps of its input for backward: Transformer
  // Engine saves the quantised copy under FP8 / FP4 (1; MXFP8 1 + 1/32; NVFP4 1/2 + 1/16),
  // the 16-bit tensor otherwise (= p).
  double pin = 2;
  QuantRecipe recipe = QuantRecipe::kDefault;
  bool fp32_params;  // MixedPrecision::kFp32Params: each linear casts its fp32 weight
  bool dropout;    // dropout > 0: dropout kernels run and their masks are stored
  // The gated MLP's activation runs as separate eager ops (PyTorch FSDP's Hugging Face /
  // llm-foundry modules: down(silu(gate(x)) * up(x))), whose autograd keeps the
  // activation's output beside its input and the product; Megatron's fused SwiGLU and
  // torch.compile (torchtitan) keep input and product alone.
  bool eager_gated;
  // Flash attention runs cuDNN's kernel (Transformer Engine prefers its FusedAttention on
  // Hopper and later: dot_product_attention/utils.py, "Disabling FlashAttention to give
  // FusedAttention preference on Hopper+"; torchtitan asks SDPA for cuDNN first), not
  // FlashAttention-2 as DeepSpeed's and PyTorch FSDP's stacks do. The profile's cuDNN
  // rates equal FlashAttention-2's unless it states them.
  bool cudnn_attention;
  CollectiveAlgorithm tp_algorithm = CollectiveAlgorithm::kAuto;
  double norm_params;  // parameters of one norm: 2h (LayerNorm scale + bias) or h (RMSNorm)
  double norm_wgrad_kernels;  // backward kernels for the norm's parameter gradients
};

// One sub-block (attention core, attention, MLP, residual): forward / backward GPU time,
// memory-bound bytes, kernels launched, stored activations, FLOPs.
struct Part {
  double matmul_fwd_s = 0;
  double matmul_bwd_s = 0;
  double wgrad_s = 0;       // weight-gradient GEMMs (part of matmul_bwd_s)
  double mem_fwd_bytes = 0;
  double mem_bwd_bytes = 0;  // beyond twice the forward traffic (FP8 casts)
  double kernels_fwd = 0;    // every kernel the forward launches (GEMMs included)
  double kernels_bwd = 0;
  double act_bytes = 0;
  double flops_fwd = 0;
  double first_wgrad_s = 0;  // weight-gradient GEMM of the block's first linear
  double first_dgrad_s = 0;  // data-gradient GEMM of the block's first linear
};

// A linear layer: m tokens x k inputs -> n outputs, `batch` independent GEMMs. Backward
// = data-gradient + weight-gradient GEMMs, each the forward's FLOPs (Narayanan et al.
// SC'21: backward = 2x forward). Kernels: the GEMM forward, two backward and one
// bias/weight-gradient reduction or accumulation per GEMM. Under FP8 (Transformer
// Engine) the input is cast to FP8 before the forward GEMM (read 2 B, write 1 B per
// element, amax fused) and backward casts the output gradient and transposes both FP8
// operands for the weight-gradient GEMM (NVIDIA Transformer Engine, "Using FP8").
// Quantisation traffic of one linear (m x k input, n outputs) under a recipe, per GEMM of
// the batch: bytes forward, bytes backward beyond twice the forward's, kernels each way.
// From the recipes' definitions (Transformer Engine, "Using FP8 and FP4 with Transformer
// Engine"): delayed scaling casts X (read 2, write 1) and in backward dY, and transposes
// both FP8 operands for the weight gradient; current scaling first reads each tensor for
// its amax; blockwise re-quantises the transposes from BF16 (its 1 x 128 blocks lie
// along K); MXFP8 writes both orientations (1 + 1/32 bytes each) in one pass; NVFP4 adds
// the per-tensor amax pass, writes FP4 (1/2 + 1/16 bytes) both ways, and runs the random
// Hadamard transform over the weight-gradient inputs (read 2, write 2 again).
struct CastTraffic {
  double fwd_bytes = 0, bwd_bytes = 0, fwd_kernels = 0, bwd_kernels = 0;
};
CastTraffic Casts(QuantRecipe r, double m, double n, double k) {
  switch (r) {
    case QuantRecipe::kDefault:
      return {};
    case QuantRecipe::kDelayedScaling:
      return {3 * m * k, 3 * m * n + 2 * m * n + 2 * m * k, 1, 2};
    case QuantRecipe::kCurrentScaling:
      return {5 * m * k, 5 * m * n + 2 * m * n + 2 * m * k, 2, 3};
    case QuantRecipe::kBlockwise:
      return {3 * m * k, 6 * m * n + 3 * m * k, 1, 3};
    case QuantRecipe::kMxfp8: {
      const double both = 2 + 2 * QuantisedBytesPerElement(r);  // read 16-bit, write two orientations
      return {both * m * k, both * m * n, 1, 1};
    }
    case QuantRecipe::kNvfp4: {
      // amax pass (2), read 16-bit (2), both orientations, Hadamard pass (read 2, write 2).
      const double bytes = 2 + 2 + 2 * QuantisedBytesPerElement(r) + 4;
      return {bytes * m * k, bytes * m * n, 3, 3};
    }
  }
  return {};
}

void Linear(const Hardware& hw, const Dims& x, double m, double n, double k, double batch,
            Part* part) {
  const double fwd = hw.GroupedMatmulTime(m, n, k, batch, x.p, x.bf16_linears);
  const double dgrad = hw.GroupedMatmulTime(m, k, n, batch, x.p, x.bf16_linears);
  const double wgrad = hw.GroupedMatmulTime(k, n, m, batch, x.p, x.bf16_linears);
  if (part->matmul_fwd_s == 0) {
    part->first_wgrad_s = wgrad;
    part->first_dgrad_s = dgrad;
  }
  part->matmul_fwd_s += fwd;
  part->matmul_bwd_s += dgrad + wgrad;
  part->wgrad_s += wgrad;
  part->flops_fwd += 2 * m * n * k * batch;
  part->kernels_fwd += batch;
  part->kernels_bwd += 3 * batch;
  if (x.fp32_params) {
    // torch.autocast casts the fp32 weight to a 16-bit copy before the GEMM (read 4,
    // write p) and its backward casts the weight gradient back into the fp32 .grad
    // (read p, write 4): one kernel and the same bytes each way (mem_bwd_bytes counts
    // beyond twice the forward traffic).
    const double w = (4 + x.p) * n * k * batch;
    part->mem_fwd_bytes += w;
    part->mem_bwd_bytes -= w;
    part->kernels_fwd += batch;
    part->kernels_bwd += batch;
  }
  if (x.lowp && !x.bf16_linears) {
    const CastTraffic c = Casts(x.recipe, m, n, k);
    part->mem_fwd_bytes += c.fwd_bytes * batch;
    part->mem_bwd_bytes += c.bwd_bytes * batch;
    part->kernels_fwd += c.fwd_kernels * batch;
    part->kernels_bwd += c.bwd_kernels * batch;
  }
}

// A memory-bound kernel moving `bytes` forward; its backward moves twice as much in two
// kernels (reads the output gradient and the saved input, writes the input gradient).
void MemoryBound(double bytes, double kernels, Part* part) {
  part->mem_fwd_bytes += bytes;
  part->kernels_fwd += kernels;
  part->kernels_bwd += 2 * kernels;
}

// Whether Megatron-LM's fused scale-mask-softmax kernel runs for these scores
// (megatron/model/fused_softmax.py, FusedScaleMaskSoftmax.is_kernel_available): 16-bit
// input, 16 < keys <= 4096, queries and keys multiples of 4, and the attention batches
// b x heads-per-GPU a multiple of the kernel's batches per 128-thread block (4 for keys
// > 128: one warp per row; 8 for 32 < keys <= 128: two rows per warp; csrc
// scaled_masked_softmax.h, get_batch_per_block) — e.g. 16 heads at TP 8 and micro-batch 1
// gives 2 batches, and Megatron falls back to PyTorch's unfused softmax. FP8 runs keep
// attention in BF16 (Transformer Engine), so the same rule applies.
bool FusedSoftmaxRuns(const Dims& x) {
  constexpr double kMaxKeys = 4096;  // Megatron-LM 2023 / Megatron-DeepSpeed (2,048 before)
  const double q_len = x.s / x.c;
  const double batches = x.b * x.a / x.t;
  const double per_block = x.s > 128 ? 4 : 8;
  const auto multiple = [](double v, double of) { return std::fmod(v, of) == 0; };
  return x.p == 2 && x.s > 16 && x.s <= kMaxKeys && multiple(q_len, 4) && multiple(x.s, 4) &&
         multiple(batches, per_block);
}

// Attention core (scores, softmax, dropout, context).
// `window`: keys a query attends to at most (0 = the whole causal prefix).
Part AttentionCore(const Dims& x, const Hardware& hw, double window) {
  Part core;
  const double heads = x.a / x.t;
  const double q_len = x.s / x.c;  // queries per GPU; keys span the whole sequence
  const double scores = x.b * heads * q_len * x.s;
  if (x.flash) {
    // FlashAttention-2 (Dao 2023): causal mask halves the work (s / 2 keys per query on
    // average; a window of w keeps w - w^2 / 2s, its kernels skipping masked blocks);
    // backward recomputes the scores (2.5x forward matmul FLOPs); no s^2 tensor is
    // stored. Its own efficiency curve, forward and backward (attention_efficiency_fwd /
    // _bwd). Kernels: one forward; backward = dot(dO, O) preprocessing, the main kernel
    // and the dQ conversion.
    const double keys = window > 0 && window < x.s ? window - window * window / (2 * x.s) : x.s / 2;
    const double flops = 2 * x.b * heads * q_len * keys * (x.dqk + x.dv);
    core.matmul_fwd_s = flops / hw.attention_fwd_flops_per_s(x.cudnn_attention) + hw.kernel_gap_s();
    core.matmul_bwd_s = 2.5 * flops / hw.attention_bwd_flops_per_s(x.cudnn_attention) + 3 * hw.kernel_gap_s();
    core.flops_fwd = flops;
    core.kernels_fwd = 1;
    core.kernels_bwd = 3;
    core.act_bytes = x.b * heads * q_len * 4;  // log-sum-exp statistics (fp32)
    return core;
  }
  // Q K^T and P V as batched GEMMs (16-bit even under FP8), each with data- and
  // weight-side gradients in backward.
  for (const auto& [m, n, k] : {std::tuple{q_len, x.s, x.dqk}, std::tuple{q_len, x.dv, x.s}}) {
    core.matmul_fwd_s += hw.BatchedMatmulTime(m, n, k, x.b * heads, x.p);
    core.matmul_bwd_s += hw.BatchedMatmulTime(m, k, n, x.b * heads, x.p) +
                         hw.BatchedMatmulTime(k, n, m, x.b * heads, x.p);
    core.flops_fwd += 2 * m * n * k * x.b * heads;
    core.kernels_fwd += 1;
    core.kernels_bwd += 2;
  }
  // Fused scale-mask-softmax: read + write the scores; dropout: read, write, mask.
  // Stored: softmax output, dropout mask, dropout output (Korthikanti: 5as/h term);
  // without dropout only the softmax output.
  if (x.dropout) {
    MemoryBound(2 * scores * x.p + 2 * scores * x.p + scores, 2, &core);
    core.act_bytes = scores * x.p + scores + scores * x.p;
  } else {
    MemoryBound(2 * scores * x.p, 1, &core);
    core.act_bytes = scores * x.p;
  }
  if (!FusedSoftmaxRuns(x) && x.p < 4) {
    // Megatron's fallback (forward_torch_softmax, softmax in fp32 as query-key layer
    // scaling forces): cast to fp32, scale, masked_fill_, softmax, cast back — five
    // kernels forward and five backward where the fused kernel takes one each. Bytes per
    // score beyond the fused kernel's (read p, write p): forward (p+4) + 8 + 8 + 8 + (4+p)
    // - 2p = 32; backward (p+4) + 12 + 8 + 8 + (4+p) - 3p = 34 - p. The fp32 softmax
    // output is what its backward keeps (4 bytes, not p).
    core.mem_fwd_bytes += 32 * scores;
    core.mem_bwd_bytes += (34 - x.p - 2 * 32) * scores;  // mem_bwd_bytes: beyond 2x forward
    core.kernels_fwd += 4;
    core.kernels_bwd += 4;
    core.act_bytes += (4 - x.p) * scores;
  }
  return core;
}

// Attention block: QKV and output projections, norms and residual/dropout.
Part AttentionBlock(const Dims& x, const Hardware& hw) {
  Part part;
  const double qkv_out = (x.a + 2 * x.g) * x.d / x.t;
  Linear(hw, x, x.T, qkv_out, x.h, 1, &part);
  Linear(hw, x, x.T, x.h, x.a * x.d / x.t, 1, &part);
  const double e = x.T * x.h;
  const double context = x.T * x.a * x.d / x.t;  // = e / t when head_dim = hidden / heads
  // Norm (read + write), bias-dropout-add (read x, residual; write out, mask) and the
  // copy that lays the attention context out for the projection (permute).
  // Kernels (Megatron-LM eager): norm 1, bias add + dropout + residual add 3 (2 without
  // dropout), copy 1.
  const double mask = x.dropout ? e * x.r : 0;
  MemoryBound(2 * e * x.r * x.p + (3 * e * x.r * x.p + mask) + 2 * context * x.p, x.dropout ? 5 : 4,
              &part);
  part.kernels_bwd += x.norm_wgrad_kernels;
  // Stored: norm input, QKV input, Q and K, V, projection input, dropout mask (the two
  // linear inputs quantised under FP8 / FP4: pin).
  part.act_bytes = e * x.r * x.p + e * x.r * x.pin + x.T * (x.a + x.g) * x.d / x.t * x.p +
                   x.T * x.g * x.d / x.t * x.p + context * x.pin + mask;
  return part;
}

// MLP of `tokens` tokens with hidden f, sharded `shard` ways (per GPU f / shard), its
// input stored at `input_share` of the hidden (1/t under SP for the dense MLP; experts
// store the whole permuted rows their GEMMs read).
Part MlpBlock(const Dims& x, const Hardware& hw, double tokens, double f, double groups, double shard,
              double input_share) {
  Part part;
  const double up = x.gated ? 2 * f / shard : f / shard;
  // `groups` independent GEMMs (local experts, one after another) share the tokens.
  const double per_group = tokens / groups;
  Linear(hw, x, per_group, up, x.h, groups, &part);
  Linear(hw, x, per_group, x.h, f / shard, groups, &part);
  const double inner = tokens * f / shard;
  // Activation function: read input(s), write output.
  MemoryBound((x.gated ? 3 : 2) * inner * x.p, 1, &part);
  // Stored: MLP input, activation-function input(s), its output (the two linear inputs
  // quantised under FP8 / FP4: pin); eager gated, also silu's output (measured on an
  // H100, scripts/microbench/autograd_memory.py: a Llama 3 block keeps 40.5 bytes per
  // token and hidden unit eager, 34.0 compiled, the 7 between them silu's 3.5h output).
  part.act_bytes = tokens * x.h * input_share * x.pin + (x.gated ? 2 : 1) * inner * x.p + inner * x.pin +
                   (x.eager_gated ? inner * x.p : 0);
  return part;
}

// `from` run in the same sub-block after `into` (its first linear stays `into`'s).
void AddPart(const Part& from, Part* into) {
  into->matmul_fwd_s += from.matmul_fwd_s;
  into->matmul_bwd_s += from.matmul_bwd_s;
  into->wgrad_s += from.wgrad_s;
  into->mem_fwd_bytes += from.mem_fwd_bytes;
  into->mem_bwd_bytes += from.mem_bwd_bytes;
  into->kernels_fwd += from.kernels_fwd;
  into->kernels_bwd += from.kernels_bwd;
  into->act_bytes += from.act_bytes;
  into->flops_fwd += from.flops_fwd;
}

// Multi-head latent attention (DeepSeek-V2 sec. 2.1; Megatron-Core MLASelfAttention):
// the down projections (the query latent, and the key/value latent with the rope key all
// heads share) run whole on every TP rank over the tokens its group holds; the up
// projections and the output projection are split by heads over TP, as QKV and the
// output projection are. `up` receives the up projections alone (recompute module
// mla_up_proj), with the Q, K and V they produce as its stored bytes.
Part MlaBlock(const Dims& x, const Hardware& hw, const MlaSpec& m, Part* up) {
  Part part;
  const double heads = x.a / x.t, ql = static_cast<double>(m.q_lora_rank),
               kvl = static_cast<double>(m.kv_lora_rank), rope = static_cast<double>(m.qk_rope_head_dim),
               nope = static_cast<double>(m.qk_nope_head_dim);
  if (ql > 0) Linear(hw, x, x.T, ql, x.h, 1, &part);
  Linear(hw, x, x.T, kvl + rope, x.h, 1, &part);
  Linear(hw, x, x.T, heads * x.dqk, ql > 0 ? ql : x.h, 1, up);
  Linear(hw, x, x.T, heads * (nope + x.dv), kvl, 1, up);
  up->act_bytes = x.T * heads * (2 * x.dqk + x.dv) * x.p;
  AddPart(*up, &part);
  Linear(hw, x, x.T, x.h, heads * x.dv, 1, &part);
  const double e = x.T * x.h;
  const double context = x.T * heads * x.dv;
  const double mask = x.dropout ? e * x.r : 0;
  // Input norm, the latents' norms, rope on the queries and the shared key, K assembled
  // from its nope and rope parts, bias-dropout-add, the context's copy for the projection.
  MemoryBound(2 * e * x.r * x.p + 2 * x.T * (ql + kvl) * x.p + 2 * x.T * (heads + 1) * rope * x.p +
                  2 * x.T * heads * x.dqk * x.p + (3 * e * x.r * x.p + mask) + 2 * context * x.p,
              (ql > 0 ? 2 : 1) + 1 + 2 + 1 + (x.dropout ? 3 : 2) + 1, &part);
  part.kernels_bwd += x.norm_wgrad_kernels * (ql > 0 ? 3 : 2);
  // Stored: norm input, down-projection input, each latent before and after its norm,
  // Q, K, V, the projection's input, the dropout mask.
  part.act_bytes = e * x.r * x.p + e * x.r * x.pin + x.T * (ql + kvl) * (x.p + x.pin) + up->act_bytes +
                   context * x.pin + mask;
  return part;
}

// Parameters of one MLA block on one GPU: the down projections whole, the rest by heads.
double MlaParams(const Dims& x, const MlaSpec& m) {
  const double ql = static_cast<double>(m.q_lora_rank), kvl = static_cast<double>(m.kv_lora_rank);
  const double q = ql > 0 ? x.h * ql + ql * x.a * x.dqk / x.t : x.h * x.a * x.dqk / x.t;
  const double kv = x.h * (kvl + static_cast<double>(m.qk_rope_head_dim)) +
                    kvl * x.a * (static_cast<double>(m.qk_nope_head_dim) + x.dv) / x.t;
  return q + kv + x.a * x.dv * x.h / x.t + 2 * x.norm_params + ql + kvl;
}

// The residual half that surrounds the MLP: LayerNorm and bias-dropout-add.
Part MlpResidual(const Dims& x) {
  Part part;
  const double e = x.T * x.h;
  const double mask = x.dropout ? e * x.r : 0;
  // Kernels: norm 1, bias add + dropout + residual add 3 (2 without dropout).
  MemoryBound(2 * e * x.r * x.p + 3 * e * x.r * x.p + mask, x.dropout ? 4 : 3, &part);
  part.kernels_bwd += x.norm_wgrad_kernels;
  part.act_bytes = e * x.r * x.p + mask;  // norm input, dropout mask
  return part;
}

// Tensor-parallel collectives of one activation tensor (b*s/c x h) —
// Shoeybi et al. 2019 (Megatron-LM): all-reduce; with sequence parallelism an
// all-gather + reduce-scatter pair of the same volume (Korthikanti et al. 2022, 4.2.2).
struct TpCollectives {
  double all_reduce_s = 0;
  double all_gather_s = 0;
  double reduce_scatter_s = 0;
};

TpCollectives TpCosts(const Dims& x, const Collectives& coll, const GroupSpan& tp) {
  TpCollectives out;
  if (x.t <= 1) return out;
  const double bytes = x.T * x.h * x.p;
  out.all_reduce_s = coll.AllReduce(bytes, tp, x.tp_algorithm);
  out.all_gather_s = coll.AllGather(bytes, tp);
  out.reduce_scatter_s = coll.ReduceScatter(bytes, tp);
  return out;
}

// Share of the layers NVFP4 training keeps in BF16 (NVIDIA 2025, NVFP4 pre-training
// recipe: "~15 % of the network").
constexpr double kNvfp4HighPrecisionShare = 0.15;

// SMs the expert-parallel dispatch and combine kernels occupy while they run: DeepEP's
// default (deep_ep Buffer.num_sms = 24, DeepSeek-AI DeepEP README, normal kernels).
constexpr double kEpCommSms = 24;

// What the MLP half of a layer offers the selective recompute modules beyond its Part.
struct MlpExtras {
  bool moe = false;
  double act_out_bytes = 0;  // the experts' activation-function output (moe_act)
  double act_fwd_bytes = 0;  // memory traffic of recomputing it
  Part shared;               // shared experts (stored tensors beyond their input)
};

struct Recomputed {
  double saved_bytes = 0;  // activations no longer kept to backward
  double seconds = 0;      // forward work re-run in backward (incl. its communication)
  double kernels = 0;      // kernels it launches
  double regions = 0;      // checkpointed regions (host bookkeeping each)
};

// Megatron-Core's selective recompute (TransformerConfig.recompute_modules): each module
// keeps only its input and re-runs its forward in backward. core_attn: the attention core
// (Korthikanti et al. 2022 sec. 4.3; nothing stored to drop under flash attention);
// layernorm: both norms' outputs (the QKV and MLP inputs); mlp: a dense MLP; moe: the
// whole MoE block with its dispatch and combine; moe_act: the experts' activation
// function output; shared_experts: the shared experts; mla_up_proj: MLA's up
// projections (the Q, K and V they make; nothing without MLA).
Recomputed SelectiveRecompute(const Dims& x, const Hardware& hw, unsigned modules, const Part& core,
                              const Part* mla_up, const Part& mlp, const MlpExtras& extras, double ep_s) {
  if (modules == 0) modules = kRecomputeCoreAttn;
  Recomputed r;
  const double bw = hw.hbm_bytes_per_s();
  auto rerun = [&](const Part& p, double saved) {
    r.saved_bytes += saved;
    r.seconds += p.matmul_fwd_s + p.mem_fwd_bytes / bw;
    r.kernels += p.kernels_fwd;
    r.regions += 1;
  };
  const double e = x.T * x.h * x.r * x.p;  // one token-hidden tensor of this GPU
  if ((modules & kRecomputeCoreAttn) && !x.flash) rerun(core, core.act_bytes);
  if ((modules & kRecomputeMlaUpProj) && mla_up != nullptr) rerun(*mla_up, mla_up->act_bytes);
  if (modules & kRecomputeLayernorm) {
    Part norms;
    MemoryBound(2 * 2 * e, 2, &norms);
    rerun(norms, 2 * e);
  }
  const bool whole_mlp = extras.moe ? (modules & kRecomputeMoe) : (modules & kRecomputeMlp);
  if (whole_mlp) {
    rerun(mlp, mlp.act_bytes - e);
    r.seconds += ep_s / 2;  // the forward's dispatch and combine again
    return r;
  }
  if (extras.moe && (modules & kRecomputeMoeAct)) {
    Part act;
    MemoryBound(extras.act_fwd_bytes, 1, &act);
    rerun(act, extras.act_out_bytes);
  }
  if (extras.moe && (modules & kRecomputeSharedExperts) && extras.shared.kernels_fwd > 0) {
    rerun(extras.shared, extras.shared.act_bytes);
  }
  return r;
}

// Moving one MoE layer's tokens to their experts and back, forward and backward.
struct MoeDispatch {
  double seconds = 0;
  double calls_per_direction = 0;
  MoeDispatcher dispatcher = MoeDispatcher::kAllToAll;  // the one costed
};

// `sent_rows` token copies leave this GPU (its tokens x top_k x imbalance).
// All-to-all (GShard; Megatron-Core MoEAlltoAllTokenDispatcher): dispatch and combine
// each way; with expert-TP the received rows are all-gathered over it before the
// experts and reduce-scattered after. DeepEP: the same all-to-alls, one copy per node
// touched. All-gather (MoEAllGatherTokenDispatcher): every token of the expert grid is
// gathered to every rank of it, the outputs reduce-scattered back, whatever top_k is.
MoeDispatch Dispatch(const Dims& x, const Collectives& coll, const ModelShape& shape, double sent_rows,
                     double top_k, const GroupSpan& ep, const GroupSpan& etp_group) {
  MoeDispatch d;
  const int etp = shape.expert_tensor_parallel;
  const double bytes = sent_rows * x.h * x.p;
  if (shape.moe_dispatcher == MoeDispatcher::kAllGather) {
    const int grid = shape.expert_parallel * etp;
    if (grid <= 1) return d;
    const GroupSpan g = coll.Place(grid, 1);
    const double gathered = x.T * x.r * x.h * x.p * grid;  // each rank's own tokens, once
    d.seconds = 2 * (coll.AllGather(gathered, g) + coll.ReduceScatter(gathered, g));
    d.calls_per_direction = 2;
    return d;
  }
  d.dispatcher = shape.moe_dispatcher;
  double a2a = shape.moe_dispatcher == MoeDispatcher::kDeepEp ? coll.DedupAllToAll(bytes, top_k, ep)
                                                              : coll.AllToAll(bytes, ep);
  if (shape.weigh_deepep && shape.moe_dispatcher == MoeDispatcher::kAllToAll && !shape.moe_a2a_overlap) {
    const double dedup = coll.DedupAllToAll(bytes, top_k, ep);
    if (dedup < a2a) {
      a2a = dedup;
      d.dispatcher = MoeDispatcher::kDeepEp;
    }
  }
  d.seconds = 4 * a2a;
  d.calls_per_direction = shape.expert_parallel > 1 ? 2 : 0;
  if (etp > 1) {
    d.seconds += 2 * (coll.AllGather(bytes * etp, etp_group) + coll.ReduceScatter(bytes * etp, etp_group));
    d.calls_per_direction += 2;
  }
  return d;
}

// Launches are asynchronous: the host enqueues kernels while the GPU runs earlier ones
// (CUDA C++ Programming Guide, "Asynchronous Concurrent Execution"), so a phase takes
// the longer of the two. Returns the host-bound time beyond the GPU's.
double HostExcess(double kernels, double host_per_kernel_s, double gpu_s) {
  return std::max(0.0, kernels * host_per_kernel_s - gpu_s);
}

// The dimensions every sub-block of a layer reads, for one configuration's shape.
Dims LayerDims(const Workload& workload, const TransformerSpec& spec, const ModelShape& shape) {
  Dims x;
  x.b = shape.micro_batch_size;
  x.s = static_cast<double>(spec.seq_length);
  x.c = shape.context_parallel;
  x.t = shape.tensor_parallel;
  x.T = x.b * x.s / x.c;
  x.h = static_cast<double>(spec.hidden_size);
  x.a = spec.num_attention_heads;
  x.g = spec.num_kv_heads;
  x.d = static_cast<double>(spec.head_dim);  // resolved: hidden / heads unless given
  const bool mla = spec.mla.enabled();
  x.dqk = mla ? static_cast<double>(spec.mla.qk_nope_head_dim + spec.mla.qk_rope_head_dim) : x.d;
  x.dv = mla ? static_cast<double>(spec.mla.v_head_dim) : x.d;
  x.kv = mla ? x.a : x.g;
  x.f = static_cast<double>(spec.ffn_hidden_size);
  x.V = static_cast<double>(spec.vocab_size);
  x.p = BytesPerElement(workload.precision);
  x.sp = shape.sequence_parallel && shape.tensor_parallel > 1;
  x.r = x.sp ? 1.0 / x.t : 1.0;
  x.gated = spec.gated_mlp;
  x.flash = shape.flash_attention;
  x.lowp = LowPrecisionLinears(workload.precision);
  x.bf16_linears = false;
  x.recipe = ResolvedRecipe(workload);
  x.pin = x.lowp ? QuantisedBytesPerElement(x.recipe) : x.p;
  x.fp32_params = workload.mixed_precision == MixedPrecision::kFp32Params && x.p < 4;
  x.dropout = spec.dropout > 0;
  x.eager_gated = spec.gated_mlp && shape.framework == Framework::kPytorchFsdp;
  x.cudnn_attention = shape.framework != Framework::kPytorchFsdp && shape.framework != Framework::kDeepSpeed;
  x.tp_algorithm = shape.tp_algorithm;
  const bool rms = spec.normalization == Normalization::kRmsNorm;
  // LayerNorm learns a scale and a bias per channel, RMSNorm a scale only (Zhang &
  // Sennrich 2019); their gradients take one reduction kernel each.
  x.norm_params = rms ? x.h : 2 * x.h;
  x.norm_wgrad_kernels = rms ? 1 : 2;
  return x;
}

// Context parallelism (ring attention): each rank passes its K/V block around the
// ring, c - 1 steps forward and twice that backward (dK, dV); overlapped with the
// attention core (Liu et al. 2023, Ring Attention). Exposed seconds and calls a layer.
struct CpCosts {
  double exposed_s = 0, calls = 0;
};
CpCosts ContextParallel(const Dims& x, const Collectives& coll, const GroupSpan& cp, const Part& core, double ovl) {
  CpCosts out;
  if (x.c <= 1) return out;
  const double kv_bytes = x.T * x.kv * (x.dqk + x.dv) / x.t * x.p;
  const double step = coll.SendRecv(kv_bytes, cp.level);
  const double fwd = (x.c - 1) * step;
  const double bwd = 2 * (x.c - 1) * step;
  out.exposed_s = std::max(0.0, fwd - ovl * core.matmul_fwd_s) + std::max(0.0, bwd - ovl * core.matmul_bwd_s);
  out.calls = 3 * (x.c - 1);
  return out;
}

// What every layer of one configuration shares: the system, the TP collectives, context
// parallelism's exposed time, and the host's time per kernel and per checkpoint.
struct LayerContext {
  const Hardware& hw;
  const ModelShape& shape;
  const TpCollectives& tpc;
  CpCosts cp;
  double ovl = 0;
  double host_kernel_s = 0;  // eager launches, or ~nothing beyond the GPU gap under graphs
  double checkpoint_s = 0;   // each checkpointed region (one per layer) per micro-batch
};

// One layer from its sub-blocks: the attention core, the attention's linears, the
// residual path and the MLP (dense or MoE, `extras`); `mla_up` the MLA up-projections
// (nullptr without MLA), `ep_s` the expert-parallel time, `moe_kernels` the router's and
// dispatcher's kernels forward, `ep_calls` the EP collectives per direction.
BlockCosts AssembleLayer(const LayerContext& L, const Dims& x, const Part& core, const Part& attn, const Part& resid,
                         const Part& mlp, const Part* mla_up, const MlpExtras& extras, double ep_s, double moe_kernels,
                         double ep_calls) {
  BlockCosts blk;
  const Part* parts[] = {&core, &attn, &resid, &mlp};
  double mem_fwd = 0, mem_bwd_extra = 0, matmul_fwd = 0, matmul_bwd = 0, kernels_fwd = moe_kernels,
         kernels_bwd = 2 * moe_kernels, wgrad = 0;
  for (const Part* q : parts) {
    mem_fwd += q->mem_fwd_bytes;
    mem_bwd_extra += q->mem_bwd_bytes;
    matmul_fwd += q->matmul_fwd_s;
    matmul_bwd += q->matmul_bwd_s;
    kernels_fwd += q->kernels_fwd;
    kernels_bwd += q->kernels_bwd;
    wgrad += q->wgrad_s;
  }
  const double mem_fwd_s = mem_fwd / L.hw.hbm_bytes_per_s();
  blk.fwd_s = matmul_fwd + mem_fwd_s;
  // Backward of a memory-bound op reads the output gradient and the saved input and
  // writes the input gradient: twice the forward traffic.
  blk.bwd_s = matmul_bwd + 2 * mem_fwd_s + mem_bwd_extra / L.hw.hbm_bytes_per_s();
  blk.wgrad_s = wgrad;
  // Two sub-blocks (attention, MLP), each a column- then a row-parallel linear.
  // Without SP: forward all-reduce after the row linear (blocking); backward
  // all-reduce of the column linear's input gradient, overlapped with its weight-
  // gradient GEMM (Megatron-LM async TP all-reduce).
  // With SP: forward all-gather before the column linear and reduce-scatter after the
  // row linear (blocking); backward all-gather of the output gradient (blocking),
  // all-gather of the saved sharded input overlapped with the data-gradient GEMM, and
  // reduce-scatter of the input gradient overlapped with the weight-gradient GEMM
  // (Korthikanti et al. 2022, sec. 4.2.2).
  // With tp_comm_overlap (Transformer Engine userbuffers) the forward collectives are
  // split into chunks pipelined with the adjacent GEMM, hidden as far as it lasts.
  const Part* subs[2] = {&attn, &mlp};
  double tp_calls_fwd = 0, tp_calls_bwd = 0;
  for (const Part* q : subs) {
    const double w = q->first_wgrad_s, dg = q->first_dgrad_s, f = q->matmul_fwd_s;
    auto fwd_exposed = [&](double comm) {
      return L.shape.tp_comm_overlap ? std::max(0.0, comm - L.ovl * 0.5 * f) : comm;
    };
    if (x.t <= 1) break;
    if (x.sp) {
      blk.tp_fwd_s += fwd_exposed(L.tpc.all_gather_s) + fwd_exposed(L.tpc.reduce_scatter_s);
      blk.tp_bwd_s += (L.shape.tp_comm_overlap ? std::max(0.0, L.tpc.all_gather_s - L.ovl * dg)
                                             : L.tpc.all_gather_s) +
                      std::max(0.0, L.tpc.all_gather_s - L.ovl * dg) +
                      std::max(0.0, L.tpc.reduce_scatter_s - L.ovl * w);
      tp_calls_fwd += 2;
      tp_calls_bwd += 3;
    } else {
      blk.tp_fwd_s += fwd_exposed(L.tpc.all_reduce_s);
      blk.tp_bwd_s += std::max(0.0, L.tpc.all_reduce_s - L.ovl * w);
      tp_calls_fwd += 1;
      tp_calls_bwd += 1;
    }
  }
  blk.cp_s = L.cp.exposed_s;
  blk.ep_s = ep_s;
  const double act_full = core.act_bytes + attn.act_bytes + resid.act_bytes + mlp.act_bytes;
  const double launched_fwd = kernels_fwd + tp_calls_fwd + ep_calls + L.cp.calls / 3;
  const double launched_bwd = kernels_bwd + tp_calls_bwd + ep_calls + 2 * L.cp.calls / 3;
  blk.kernels = launched_fwd + launched_bwd;
  const double host_fwd = L.host_kernel_s * launched_fwd;
  const double host_bwd = L.host_kernel_s * launched_bwd;
  const double gpu_fwd = blk.fwd_s + blk.tp_fwd_s + ep_s / 2 + L.cp.exposed_s / 3;
  const double gpu_bwd = blk.bwd_s + blk.tp_bwd_s + ep_s / 2 + 2 * L.cp.exposed_s / 3;
  // A layer's recompute runs inside its backward (the checkpoint's backward re-runs the
  // forward, then differentiates it), so the host launches both in one stretch.
  double host_recompute = 0;
  switch (L.shape.recompute) {
    case Recompute::kNone:
      blk.activation_bytes = act_full;
      break;
    case Recompute::kSelective: {
      const Recomputed r =
          SelectiveRecompute(x, L.hw, L.shape.recompute_modules, core, mla_up, mlp, extras, ep_s);
      blk.activation_bytes = act_full - r.saved_bytes;
      blk.recompute_s = r.seconds;
      host_recompute = r.kernels * L.host_kernel_s + r.regions * L.checkpoint_s;
      blk.kernels += r.kernels;
      break;
    }
    case Recompute::kFull:
      // Keep only the layer input; re-run the whole forward (with its collectives).
      blk.activation_bytes = x.T * x.h * x.r * x.p;
      blk.recompute_s = blk.fwd_s + blk.tp_fwd_s + ep_s / 2;
      blk.transient_bytes = act_full;
      host_recompute = host_fwd + L.checkpoint_s;
      blk.kernels += launched_fwd;
      break;
  }
  blk.host_s = HostExcess(1, host_fwd, gpu_fwd) +
               HostExcess(1, host_bwd + host_recompute, gpu_bwd + blk.recompute_s);
  blk.model_flops = 3 * (core.flops_fwd * (x.flash ? 2 : 1) + attn.flops_fwd + mlp.flops_fwd);
  return blk;
}

  // First stage: vocabulary-parallel embedding lookup; its output is all-reduced (or
  // reduce-scattered with SP) over TP. Kernels (Megatron-LM VocabParallelEmbedding):
  // mask, lookup, position embedding and add, dropout forward; the embedding backward
  // (sort + segmented reduction) twice over.
BlockCosts EmbeddingCosts(const Dims& x, const Hardware& hw, const Collectives& coll, const GroupSpan& tp,
                          double host_kernel_s) {
  BlockCosts pre;
  const double e = x.T * x.h;
  pre.fwd_s = hw.MemoryTime(2 * e * x.p) + (x.dropout ? hw.MemoryTime(3 * e * x.r * x.p) : 0);
  pre.bwd_s = 2 * pre.fwd_s;
  pre.tp_fwd_s = x.t > 1 ? (x.sp ? coll.ReduceScatter(e * x.p, tp) : coll.AllReduce(e * x.p, tp, x.tp_algorithm)) : 0;
  pre.host_s = HostExcess(x.dropout ? 5 : 4, host_kernel_s, pre.fwd_s + pre.tp_fwd_s) +
               HostExcess(10, host_kernel_s, pre.bwd_s);
  pre.activation_bytes = x.dropout ? e * x.r : 0;  // dropout mask
  pre.params = x.V * x.h / x.t;
  pre.tensors = 2;  // word and position embeddings
  pre.weight_tensors = 2;
  return pre;
}

  // Last stage: final LayerNorm, LM head (vocabulary-parallel), fused cross-entropy.
  // Kernels (Megatron-LM vocab_parallel_cross_entropy): LayerNorm, logits GEMM, max,
  // subtract, target mask / gather, exp, sum, log, mean (+ 3 all-reduces with TP);
  // backward: softmax minus one-hot, scale, GEMMs, LayerNorm backward.
BlockCosts HeadCosts(const Dims& x, const TransformerSpec& spec, const Hardware& hw, const Collectives& coll,
                     const GroupSpan& tp, double host_kernel_s) {
  BlockCosts post;
  Part head;
  // Megatron's output layer is a plain ColumnParallelLinear: BF16 under FP8 / FP4.
  Dims x16 = x;
  x16.bf16_linears = x.lowp;
  Linear(hw, x16, x.T, x.V / x.t, x.h, 1, &head);
  const double logits = x.T * x.V / x.t;
  const double e = x.T * x.h;
  // LN read+write. Cross-entropy bytes per logit, op by op (Megatron-LM
  // _VocabParallelCrossEntropy on output.float()): upcast p + 4, max 4, subtract in
  // place 8, exp 8, sum 4, divide in place 8 forward; backward multiply in place 8 and
  // the upcast's backward 4 + p. Measured on an H100 (scripts/microbench/cross_entropy.py,
  // docs/microbench/h100_cross_entropy.csv): 59 bytes per logit at the device-copy rate,
  // 47 at the memory-bound rate. PyTorch's F.cross_entropy on upcast logits takes 40 and
  // under autocast (bf16 in, fp32 math) about 25: frameworks differ, this is Megatron's.
  const double mem_fwd = 2 * e * x.r * x.p + logits * (x.p + 36);
  post.fwd_s = head.matmul_fwd_s + hw.MemoryTime(mem_fwd);
  post.bwd_s = head.matmul_bwd_s + hw.MemoryTime(logits * (12 + x.p) + 4 * e * x.r * x.p);
  double calls = 0;
  if (x.t > 1) {
    const double bytes = e * x.p;
    post.tp_fwd_s = (x.sp ? coll.AllGather(bytes, tp) : 0) + 3 * coll.AllReduce(x.T * 4, tp, x.tp_algorithm);
    post.tp_bwd_s = x.sp ? coll.ReduceScatter(bytes, tp) : coll.AllReduce(bytes, tp, x.tp_algorithm);
    calls = 4;
  }
  post.host_s = HostExcess(10 + calls, host_kernel_s, post.fwd_s + post.tp_fwd_s) +
                HostExcess(8 + head.kernels_bwd, host_kernel_s, post.bwd_s + post.tp_bwd_s);
  post.wgrad_s = head.wgrad_s;
  post.activation_bytes = e * x.r * x.p + e * x.p + logits * 4;
  // While the loss runs, the 16-bit logits and their fp32 copy live beside the fp32
  // softmax it keeps (Megatron-LM vocab_parallel_cross_entropy: logits.float(), then
  // the max-subtracted tensor exponentiated in place): p + 4 bytes per logit on top.
  post.transient_bytes = logits * (x.p + 4);
  post.params = spec.tied_embeddings ? 0 : x.V * x.h / x.t;
  post.params += x.norm_params;
  post.tensors = x.norm_wgrad_kernels + (spec.tied_embeddings ? 0 : 1);
  post.weight_tensors = spec.tied_embeddings ? 0 : 1;
  post.model_flops = 3 * head.flops_fwd;
  return post;
}

}  // namespace

absl::StatusOr<ModelCosts> TransformerCosts(const Workload& workload, const ModelShape& shape,
                                            const Hardware& hw, const Collectives& coll) {
  const TransformerSpec spec = workload.transformer.Resolved();
  const Dims x = LayerDims(workload, spec, shape);
  const bool rms = spec.normalization == Normalization::kRmsNorm;
  const bool mla = spec.mla.enabled();
  const GroupSpan tp = coll.Place(shape.tensor_parallel, 1);
  const GroupSpan cp = coll.Place(shape.context_parallel, shape.tensor_parallel);
  // The expert grid: expert-TP innermost, expert parallelism next (Megatron-Core folding).
  const int etp = shape.expert_tensor_parallel;
  const GroupSpan etp_group = coll.Place(etp, 1);
  const GroupSpan ep = coll.Place(shape.expert_parallel, etp);
  const double ovl = hw.overlap_efficiency();
  const double host_kernel_s = shape.cuda_graphs ? hw.kernel_gap_s() : hw.kernel_overhead_s();

  const Part core_full = AttentionCore(x, hw, 0);
  const bool windowed = spec.sliding_window.tokens > 0 && spec.sliding_window.tokens < spec.seq_length;
  const Part core_window = windowed ? AttentionCore(x, hw, static_cast<double>(spec.sliding_window.tokens)) : core_full;

  const TpCollectives tpc = TpCosts(x, coll, tp);
  const LayerContext ctx{hw, shape, tpc, ContextParallel(x, coll, cp, core_full, ovl), ovl, host_kernel_s,
                         shape.cuda_graphs ? 0.0 : hw.recompute_overhead_s()};
  const double norm_tensors = rms ? 1 : 2;
  // The layer kinds (dense or MoE, full or windowed attention) for one setting of the
  // linears' precision.
  struct LayerKinds {
    BlockCosts dense, dense_window, moe, moe_window;
    MoeDispatcher dispatcher;  // the MoE layers'
  };
  auto build_kinds = [&](const Dims& x) {
    Part mla_up;
    const Part attn = mla ? MlaBlock(x, hw, spec.mla, &mla_up) : AttentionBlock(x, hw);
    const Part resid = MlpResidual(x);
    const Part dense_mlp = MlpBlock(x, hw, x.T, x.f, 1, x.t, x.r);
    // moe_kernels: router softmax / top-k and the dispatcher's bookkeeping (Megatron-Core
    // MoE token dispatcher), forward; ep_calls: expert-parallel collectives per direction.
    auto make_layer = [&](const Part& core, const Part& mlp, const MlpExtras& extras, double ep_s, double moe_kernels,
                          double ep_calls) {
      return AssembleLayer(ctx, x, core, attn, resid, mlp, mla ? &mla_up : nullptr, extras, ep_s, moe_kernels,
                           ep_calls);
    };

    const double attn_params = mla ? MlaParams(x, spec.mla)
                                   : x.h * (x.a + 2 * x.g) * x.d / x.t + x.a * x.d * x.h / x.t + 2 * x.norm_params;
    const double dense_mlp_params = x.h * x.f * (x.gated ? 3 : 2) / x.t;

    // Parameter tensors: two norms (scale, and bias for LayerNorm), four linears' weights
    // and biases (Megatron-LM's GPT layer); MLA adds a linear and a norm per latent.
    const double attn_tensors = mla ? (spec.mla.q_lora_rank > 0 ? 4 : 2) : 0;
    auto dense_layer = [&](const Part& core) {
      BlockCosts b = make_layer(core, dense_mlp, MlpExtras{}, 0, 0, 0);
      b.params = attn_params + dense_mlp_params;
      b.tensors = 2 * norm_tensors + 8 + attn_tensors;
      b.weight_tensors = 4 + attn_tensors / 2;
      return b;
    };
    const BlockCosts dense = dense_layer(core_full);
    const BlockCosts dense_window = windowed ? dense_layer(core_window) : dense;

    BlockCosts moe, moe_window;
    MoeDispatcher dispatcher = shape.moe_dispatcher;
    const bool is_moe = spec.is_moe();
    if (is_moe) {
      const double experts = spec.moe.num_experts;
      const double k = spec.moe.top_k;
      const double fe = static_cast<double>(spec.moe.expert_ffn_hidden_size);
      const double local_experts = experts / shape.expert_parallel;
      // Routing: each GPU dispatches its own tokens (T/t under SP, all T without) times
      // top_k; its expert-TP group pools what the EP all-to-all brings them, so each GPU's
      // experts see etp times its own share, with weights f/etp wide. Balanced, that is the
      // same token-expert work per GPU whatever the folding. The GPU of the busiest expert
      // sees load_imbalance times that, and every other waits for it (its GEMMs, what it
      // stores, what it receives in the all-to-all).
      const double imbalance = spec.moe.load_imbalance;
      const double sent_rows = x.T * x.r * k * imbalance;
      const double rows = sent_rows * etp;
      const Part routed = MlpBlock(x, hw, rows, fe, local_experts, etp, 1);
      Part mlp = routed;
      // Router: T x h x E matmul; it keeps its input, the pre-MLP norm's output (this
      // GPU's share under SP), which the shared experts read too.
      Linear(hw, x, x.T, experts, x.h, 1, &mlp);
      mlp.act_bytes += x.T * x.r * x.h * x.p;
      // Permute before dispatch and un-permute after combine (Megatron-Core moe_utils,
      // fused): each reads and writes the rows; un-permute keeps the expert output for the
      // routing probabilities' gradient.
      MemoryBound(4 * sent_rows * x.h * x.p, 2, &mlp);
      mlp.act_bytes += sent_rows * x.h * x.p;
      // Shared experts: one dense MLP over every token, as wide as all of them together
      // (Megatron-Core's SharedExpertMLP), sharded over TP like the dense MLP. Its input is
      // the router's, stored once; its TP collectives are taken to overlap the dispatch
      // (moe_shared_expert_overlap).
      const double shared_f = spec.moe.num_shared_experts * static_cast<double>(spec.moe.shared_expert_ffn_hidden_size);
      Part shared;
      if (shared_f > 0) {
        shared = MlpBlock(x, hw, x.T, shared_f, 1, x.t, x.r);
        shared.act_bytes -= x.T * x.h * x.r * x.p;
        AddPart(shared, &mlp);
      }
      const MoeDispatch d = Dispatch(x, coll, shape, sent_rows, k, ep, etp_group);
      dispatcher = d.dispatcher;
      MlpExtras extras;
      extras.moe = true;
      extras.act_out_bytes = rows * fe / etp * x.p;
      extras.act_fwd_bytes = (x.gated ? 3 : 2) * rows * fe / etp * x.p;
      extras.shared = shared;
      auto moe_layer = [&](const Part& core) {
        BlockCosts b = make_layer(core, mlp, extras, d.seconds, 6, d.calls_per_direction);
        if (shape.moe_a2a_overlap) {
          // Megatron-Core's combined 1F1B runs one micro-batch's dispatch and combine
          // beside another's forward or backward compute, hidden as far as that lasts;
          // meanwhile the communication kernels hold kEpCommSms of the GPU's SMs, and the
          // compute beside them runs on the rest.
          const double hidden = std::min(b.ep_s, ovl * (b.fwd_s + b.bwd_s));
          const double sm_share = hw.sm_count() > 0 ? std::min(1.0, kEpCommSms / hw.sm_count()) : 0;
          b.ep_s = b.ep_s - hidden + hidden * sm_share;
        }
        // Useful FLOPs are the balanced ones: the busiest GPU's excess is waiting, not work.
        b.model_flops -= 3 * routed.flops_fwd * (1 - 1 / imbalance);
        const double mats = x.gated ? 3 : 2;
        b.expert_params = local_experts * x.h * fe * mats / etp;
        b.params = attn_params + x.h * experts + x.h * shared_f * mats / x.t + b.expert_params;
        // + router, experts' linears, the shared experts' two linears (weight and bias).
        b.tensors = 2 * norm_tensors + 4 + attn_tensors + 1 + 4 * local_experts + (shared_f > 0 ? 4 : 0);
        b.weight_tensors = 2 + attn_tensors / 2 + 1 + 2 * local_experts + (shared_f > 0 ? 2 : 0);
        return b;
      };
      moe = moe_layer(core_full);
      moe_window = windowed ? moe_layer(core_window) : moe;
    }
    return LayerKinds{dense, dense_window, moe, moe_window, dispatcher};
  };
  const LayerKinds kinds = build_kinds(x);
  // NVFP4 keeps about 15 % of the linear layers in BF16, most at the end of the network
  // (NVIDIA, "Pretraining Large Language Models with NVFP4", 2025, sec. 4): the last
  // layers here.
  const int high_precision_layers =
      x.recipe == QuantRecipe::kNvfp4 ? static_cast<int>(std::ceil(kNvfp4HighPrecisionShare * spec.num_layers)) : 0;
  LayerKinds high = kinds;
  if (high_precision_layers > 0) {
    Dims x16 = x;
    x16.bf16_linears = true;
    x16.pin = x.p;
    high = build_kinds(x16);
  }

  ModelCosts out;
  out.moe_dispatcher = kinds.dispatcher;
  out.layers.reserve(spec.num_layers);
  for (int i = 0; i < spec.num_layers; ++i) {
    const LayerKinds& k = i >= spec.num_layers - high_precision_layers ? high : kinds;
    const bool w = spec.IsWindowLayer(i);
    out.layers.push_back(spec.IsMoeLayer(i) ? (w ? k.moe_window : k.moe) : (w ? k.dense_window : k.dense));
  }

  out.pre = EmbeddingCosts(x, hw, coll, tp, host_kernel_s);
  out.post = HeadCosts(x, spec, hw, coll, tp, host_kernel_s);

  // Megatron-LM scatter-gather: each TP rank sends 1/t of the boundary activation.
  out.pp_send_bytes = x.T * x.h * x.p / x.t;
  out.tokens_per_sample = x.s;
  // Useful FLOPs per sample over the whole model (all GPUs of one model replica).
  double flops_mb = out.post.model_flops * x.t * x.c;
  for (const BlockCosts& l : out.layers) flops_mb += l.model_flops * x.t * x.c;
  out.model_flops_per_sample = flops_mb / x.b;
  return out;
}

}  // namespace paraplan
