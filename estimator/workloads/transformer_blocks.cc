#include "estimator/workloads/transformer_blocks.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace paraplan::transformer {

namespace {

// Quantisation traffic of one linear (m x k input, n outputs) under a recipe and the
// operands' origin `io`, per GEMM of the batch: bytes forward, bytes backward beyond
// twice the forward's, kernels each way. As Transformer Engine 2.x runs them
// (pytorch/csrc/quantizer.cpp, module/linear.py, layernorm_linear.py,
// csrc/extensions/normalization.cpp):
// - delayed and current scaling (per tensor): a cast reads 2 bytes and writes 1; current
//   scaling first reads the tensor for its amax (nvte_compute_amax) and computes the scale
//   (nvte_compute_scale_from_amax) in the same call. Where FP8 GEMMs are TN-only
//   (Hopper) the weight gradient needs the transposes: a tensor quantised whole writes
//   its transpose in the same kernel (cast-transpose: 1 byte more), one quantised on
//   this GPU's share of the rows and all-gathered in FP8 is transposed after the gather
//   (read 1, write 1, in backward: per-tensor FP8 gathers only row-wise data). An input
//   from a fused norm costs no cast: under delayed scaling the norm kernel writes FP8, 1
//   byte where it wrote 2 (then a transpose kernel where the rows are not gathered);
//   under current scaling it computes the amax as it normalises (FUSED_NORM_AMAX_FP8)
//   and the cast follows;
// - blockwise (1 x 128 blocks along each orientation's K) quantises X forward and dY
//   backward into both orientations in one kernel (cast/dispatch/quantize.cuh,
//   NVTE_BLOCK_SCALING_1D: quantize_transpose_vector_blockwise, read 2, write 1 + 1);
// - MXFP8 writes both orientations (1 + 1/32 bytes each) in one pass; it and NVFP4
//   quantise both orientations of this GPU's rows before a gather, and gather both;
// - NVFP4 runs three kernels as Transformer Engine 2.9-2.14 does on Blackwell
//   (NVFP4Quantizer::quantize_impl): one pass for the per-tensor amax of the input and of
//   its random Hadamard transform (nvte_hadamard_transform_amax, read 2), the row-wise
//   cast (read 2, write 1/2 + 1/16), and the column-wise cast for the weight gradient
//   with the Hadamard transform fused into it (nvte_hadamard_transform_cast_fusion_
//   columnwise, read 2, write 1/2 + 1/16).
// Kernels here are the host's launches: one quantize call from Python each (its amax,
// scale and cast kernels, or NVFP4's three, are launched from C++ within it, a few µs each
// beside the eager op's kernel_overhead_us), none where a fused norm's call quantises.
struct CastTraffic {
  double fwd_bytes = 0, bwd_bytes = 0, fwd_kernels = 0, bwd_kernels = 0;
};

// One per-tensor-scaled operand of `elements`, quantised on `share` of its rows.
struct PerTensorCast {
  double bytes = 0, kernels = 0;             // the cast, with a cast-transpose where fused
  double later_bytes = 0, later_kernels = 0;  // the transpose after an all-gather
};
PerTensorCast PerTensor(bool current, bool transposes, double elements, double share, bool norm_fused) {
  PerTensorCast c;
  const bool gathered = share < 1;
  if (norm_fused && !current) {
    c.bytes = -share * elements;  // the norm writes 1 byte an element for 2
    if (transposes && !gathered) c.bytes += 2 * elements;
  } else {
    const double amax = current && !norm_fused ? 2 : 0;
    c.bytes = (3 + amax) * share * elements + (transposes && !gathered ? elements : 0);
    c.kernels = norm_fused ? 0 : 1;
  }
  if (transposes && gathered) {
    c.later_bytes = 2 * elements;
    c.later_kernels = 1;
  }
  return c;
}

// A per-tensor recipe outside Transformer Engine (torchtitan's torchao, measured there
// slower than the model in its casts: docs/accuracy.md): each tensor cast whole (current
// scaling reading it for its amax first, in the same compiled kernel), and both FP8
// operands transposed for the weight gradient in one more pass where GEMMs are TN-only.
CastTraffic PerTensorOutsideTe(bool current, double m, double n, double k, bool any_layout) {
  const double cast = current ? 5 : 3, kernels = current ? 2 : 1;
  const double transposes = any_layout ? 0 : 2 * m * n + 2 * m * k;
  return {cast * m * k, cast * m * n + transposes, kernels, kernels + (any_layout ? 0 : 1)};
}

CastTraffic Casts(QuantRecipe r, double m, double n, double k, bool any_layout, const LinearIo& io, bool te) {
  switch (r) {
    case QuantRecipe::kDefault:
      return {};
    case QuantRecipe::kDelayedScaling:
    case QuantRecipe::kCurrentScaling: {
      const bool current = r == QuantRecipe::kCurrentScaling;
      if (!te) return PerTensorOutsideTe(current, m, n, k, any_layout);
      const PerTensorCast in = PerTensor(current, !any_layout, m * k, io.input_share, io.norm_fused);
      const PerTensorCast dy = PerTensor(current, !any_layout, m * n, io.grad_share, false);
      return {in.bytes, in.later_bytes + dy.bytes + dy.later_bytes, in.kernels,
              in.later_kernels + dy.kernels + dy.later_kernels};
    }
    case QuantRecipe::kBlockwise: {
      // Both orientations in one kernel (quantize_transpose_vector_blockwise): read 2,
      // write 1 + 1 (the 1 x 128 scales aside).
      constexpr double both = 4;
      return {both * m * k * io.input_share, both * m * n * io.grad_share, 1, 1};
    }
    case QuantRecipe::kMxfp8: {
      const double both = 2 + 2 * QuantisedBytesPerElement(r);  // read 16-bit, write two orientations
      return {both * m * k * io.input_share, both * m * n * io.grad_share, 1, 1};
    }
    case QuantRecipe::kNvfp4: {
      // amax pass (2), then each orientation reads the 16-bit tensor and writes FP4.
      const double bytes = 2 + 2 * (2 + QuantisedBytesPerElement(r));
      return {bytes * m * k * io.input_share, bytes * m * n * io.grad_share, 1, 1};
    }
  }
  return {};
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

}  // namespace

void Linear(const Hardware& hw, const Dims& x, double m, double n, double k, double batch,
            Part* part, const LinearIo& io) {
  const double fwd = hw.GroupedMatmulTime(m, n, k, batch, x.p, x.bf16_linears, x.p);
  const double dgrad = hw.GroupedMatmulTime(m, k, n, batch, x.p, x.bf16_linears, x.p);
  const double wgrad = hw.GroupedMatmulTime(k, n, m, batch, x.p, x.bf16_linears, x.wgrad_out_bytes);
  if (part->matmul_fwd_s == 0) {
    part->first_wgrad_s = wgrad;
    part->first_dgrad_s = dgrad;
  }
  part->last_fwd_s = fwd;
  part->last_dgrad_s = dgrad;
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
    const CastTraffic c = Casts(x.recipe, m, n, k, x.fp8_any_layout, x.te_modules ? io : LinearIo{}, x.te_modules);
    part->mem_fwd_bytes += c.fwd_bytes * batch;
    part->mem_bwd_bytes += c.bwd_bytes * batch;
    // A grouped linear (batch > 1: an MoE layer's local experts) quantises every expert's
    // slice in one call (Transformer Engine, pytorch/module/grouped_linear.py:
    // tex.split_quantize over m_splits, for the inputs forward and the output gradients
    // backward): the host issues the recipe's casts once, not once per expert.
    part->kernels_fwd += c.fwd_kernels;
    part->kernels_bwd += c.bwd_kernels;
  }
}

void MemoryBound(double bytes, double kernels, Part* part) {
  part->mem_fwd_bytes += bytes;
  part->kernels_fwd += kernels;
  part->kernels_bwd += 2 * kernels;
}

namespace {

// Context parallelism's ring attention as Transformer Engine runs it (AttnFuncWithCPAndKVP2P,
// pytorch/attention/dot_product_attention/context_parallel.py): the core runs as c calls
// each way, one per K/V block (every rank does a full block each step: the rank holding
// the causal diagonal's far half sets the pace). Forward merges each block's output into
// the output by its log-sum-exp (flash_attn_fwd_out_correction, one fused kernel a step
// in the output's dtype: read the block's output and the output, write the output; the
// log-sum-exp's own merge is a head_dim-th of that); backward adds each block's dQ into
// dQ and its dK, dV into the blocks passed on around the ring (read two, write one).
// The ring's sends are ContextParallel's (transformer_costs.cc).
void RingAttentionSteps(const Dims& x, const Hardware& hw, Part* core) {
  const double rows = x.T * x.a / x.t;  // this GPU's queries x heads
  const double out = rows * x.dv, dq = rows * x.dqk;
  const double dkv = x.T * x.kv / x.t * (x.dqk + x.dv);
  const double fwd = x.c * 3 * x.p * out;
  const double bwd = x.c * 3 * x.p * (dq + dkv);
  core->mem_fwd_bytes += fwd;
  core->mem_bwd_bytes += bwd - 2 * fwd;  // backward does not differentiate the merges
  core->kernels_fwd += (x.c - 1) + 2 * x.c;
  core->kernels_bwd += 3 * (x.c - 1) + 2 * x.c;
  core->matmul_fwd_s += (x.c - 1) * hw.kernel_gap_s();
  core->matmul_bwd_s += 3 * (x.c - 1) * hw.kernel_gap_s();
}

// The other exchanges (AttnFuncWithCPAndQKVOA2A, AttnFuncWithCPAndKVAllGather, PyTorch's
// flex_cp_allgather): the core runs over each query's keys at once, so there is no merge.
// All-to-all: each of Q, K, V and O forward and dO, dQ, dK, dV backward is copied into
// its send layout before its all-to-all (movedim(...).contiguous()) and reordered into
// the sequence's chunk order after it (index_select): two copies a tensor, each reading
// and writing it. Transformer Engine's all-gather: the local queries run in two calls
// (the causal halves), and the gathered K / V are buffers (held while the forward runs:
// not kept). PyTorch's: one call, and the core keeps the gathered K / V for backward,
// c - 1 ranks' more than its own.
void OtherCpExchange(const Dims& x, CpExchange exchange, Part* core) {
  if (exchange == CpExchange::kAllGather) {
    core->kernels_fwd += 1;
    core->kernels_bwd += 3;
    return;
  }
  if (exchange == CpExchange::kGatherKept) {
    core->act_bytes += (x.c - 1) * x.T * x.kv / x.t * (x.dqk + x.dv) * x.p;
    return;
  }
  const double q = x.T * x.a / x.t * x.dqk, o = x.T * x.a / x.t * x.dv;
  const double kv = x.T * x.kv / x.t * (x.dqk + x.dv);
  const double bytes = 2 * 2 * x.p * (q + kv + o);  // per direction: the same tensors' sizes
  core->mem_fwd_bytes += bytes;
  core->mem_bwd_bytes -= bytes;  // backward moves as much, not the 2x of a saved input
  core->kernels_fwd += 2 * 4;
  core->kernels_bwd += 2 * 4;
}

}  // namespace

double KernelHeadDim(double head_dim, bool cudnn) {
  constexpr double kRef = CalibrationDefaults::kAttentionReferenceHeadDim;
  if (cudnn) return head_dim > 64 && head_dim < kRef ? kRef : head_dim;
  return head_dim > 0 ? std::ceil(head_dim / 32) * 32 : head_dim;
}

double HeadDimRate(double head_dim, double softmax_head_dim) {
  constexpr double kRef = CalibrationDefaults::kAttentionReferenceHeadDim;
  if (!(head_dim > 0) || !(softmax_head_dim > 0) || head_dim >= kRef) return 1;
  return (kRef + softmax_head_dim) / kRef * head_dim / (head_dim + softmax_head_dim);
}

Part AttentionCore(const Dims& x, const Hardware& hw, double window, CpExchange exchange) {
  Part core;
  const double heads = x.a / x.t;
  const double q_len = x.s / x.c;  // queries per GPU; keys span the whole sequence
  // Calls a query's keys are split over: the ring's c blocks, else one.
  const double calls = exchange == CpExchange::kRing ? x.c : 1;
  const double scores = x.b * heads * q_len * x.s;
  if (x.flash) {
    // FlashAttention-2 (Dao 2023): causal mask halves the work (s / 2 keys per query on
    // average; a window of w keeps w - w^2 / 2s, its kernels skipping masked blocks);
    // backward recomputes the scores (2.5x forward matmul FLOPs); no s^2 tensor is
    // stored. Its own efficiency curve, forward and backward (attention_efficiency_fwd /
    // _bwd), less each call's fixed work per query tile (attention_half_keys_fwd / _bwd:
    // a call whose queries see K keys on average runs at K / (K + half) of it; under
    // context parallelism each query meets its keys in c calls), and at a head dimension
    // other than the 128 those rates were measured at, the head dimension the kernel
    // computes at (KernelHeadDim: padded) and the softmax's share of each score there
    // (attention_softmax_head_dim_fwd / _bwd). Kernels: one forward; backward = dot(dO, O)
    // preprocessing, the main kernel and the dQ conversion.
    const double keys = window > 0 && window < x.s ? window - window * window / (2 * x.s) : x.s / 2;
    const double flops = 2 * x.b * heads * q_len * keys * (x.dqk + x.dv);
    const double dqk = KernelHeadDim(x.dqk, x.cudnn_attention), dv = KernelHeadDim(x.dv, x.cudnn_attention);
    const double padded = (dqk + dv) / (x.dqk + x.dv);
    const double head_dim = (dqk + dv) / 2;
    // Time per useful FLOP over the kernel's long-sequence rate at head dimension 128.
    const double fwd_slowdown = padded * (1 + calls * hw.attention_half_keys_fwd() / keys) /
                                HeadDimRate(head_dim, hw.attention_softmax_head_dim_fwd(x.cudnn_attention));
    const double bwd_slowdown = padded * (1 + calls * hw.attention_half_keys_bwd() / keys) /
                                HeadDimRate(head_dim, hw.attention_softmax_head_dim_bwd(x.cudnn_attention));
    core.matmul_fwd_s = flops / hw.attention_fwd_flops_per_s(x.cudnn_attention) * fwd_slowdown + hw.kernel_gap_s();
    core.matmul_bwd_s =
        2.5 * flops / hw.attention_bwd_flops_per_s(x.cudnn_attention) * bwd_slowdown + 3 * hw.kernel_gap_s();
    core.flops_fwd = flops;
    core.kernels_fwd = 1;
    core.kernels_bwd = 3;
    core.act_bytes = x.b * heads * q_len * 4;  // log-sum-exp statistics (fp32)
    if (x.c > 1 && exchange == CpExchange::kRing) RingAttentionSteps(x, hw, &core);
    if (x.c > 1 && exchange != CpExchange::kRing) OtherCpExchange(x, exchange, &core);
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

Part AttentionBlock(const Dims& x, const Hardware& hw) {
  Part part;
  const double qkv_out = (x.a + 2 * x.g) * x.d / x.t;
  // Megatron-Core's TELayerNormColumnParallelLinear and TERowParallelLinear.
  Linear(hw, x, x.T, qkv_out, x.h, 1, &part, {.input_share = x.r, .norm_fused = true});
  Linear(hw, x, x.T, x.h, x.a * x.d / x.t, 1, &part, {.grad_share = x.r});
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
  if (x.qk_norm) {
    // Query and key norms over head_dim (Megatron-Core SelfAttention q_layernorm /
    // k_layernorm, one TENorm kernel each way per tensor): each reads and writes this
    // GPU's Q or K and keeps its input for backward (TE's norm saves input and rstd);
    // rope and the attention core keep the normalised copies counted above.
    const double qk = x.T * (x.a + x.g) * x.d / x.t;
    MemoryBound(2 * qk * x.p, 2, &part);
    part.kernels_bwd += 2 * x.norm_wgrad_kernels;
    part.act_bytes += qk * x.p;
  }
  return part;
}

Part MlpBlock(const Dims& x, const Hardware& hw, double tokens, double f, double groups, double shard,
              double input_share, const LinearIo& up_io, const LinearIo& down_io) {
  Part part;
  const double up = x.gated ? 2 * f / shard : f / shard;
  // `groups` independent GEMMs (local experts, one after another) share the tokens.
  const double per_group = tokens / groups;
  Linear(hw, x, per_group, up, x.h, groups, &part, up_io);
  Linear(hw, x, per_group, x.h, f / shard, groups, &part, down_io);
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

double MlaParams(const Dims& x, const MlaSpec& m) {
  const double ql = static_cast<double>(m.q_lora_rank), kvl = static_cast<double>(m.kv_lora_rank);
  const double q = ql > 0 ? x.h * ql + ql * x.a * x.dqk / x.t : x.h * x.a * x.dqk / x.t;
  const double kv = x.h * (kvl + static_cast<double>(m.qk_rope_head_dim)) +
                    kvl * x.a * (static_cast<double>(m.qk_nope_head_dim) + x.dv) / x.t;
  return q + kv + x.a * x.dv * x.h / x.t + 2 * x.norm_params + ql + kvl;
}

double OffloadedBytes(const Dims& x, unsigned offload, unsigned recomputed, const Part& core, double expert_rows,
                      double expert_width, bool mla) {
  constexpr double kMinOffloadedTensorElements = 1 << 20;  // min_offloaded_tensor_size
  double bytes = 0;
  auto move = [&](double elements, double bytes_per_element) {
    if (elements >= kMinOffloadedTensorElements) bytes += elements * bytes_per_element;
  };
  const double e = x.T * x.h * x.r;  // one token-hidden tensor of this GPU, in elements
  const bool moe = expert_rows > 0;
  if ((offload & kOffloadAttnNorm) && mla) move(e, x.p);
  if ((offload & kOffloadQkvLinear) && !(mla && (recomputed & kRecomputeLayernorm))) move(e, x.pin);
  if (offload & kOffloadCoreAttn) {
    if (!(recomputed & kRecomputeMlaUpProj)) {
      move(x.T * x.a / x.t * x.dqk, x.p);   // Q
      move(x.T * x.kv / x.t * x.dqk, x.p);  // K
      move(x.T * x.kv / x.t * x.dv, x.p);   // V
    }
    if (!RecomputesCore(x, recomputed)) bytes += core.act_bytes;
  }
  if (offload & kOffloadAttnProj) move(x.T * x.a / x.t * x.dv, x.pin);
  if ((offload & kOffloadMlpNorm) && moe) move(e, x.p);
  if (offload & kOffloadExpertFc1) move(expert_rows * x.h, x.pin);
  if (offload & kOffloadMoeAct) move(expert_rows * expert_width * (x.gated ? 2 : 1), x.p);
  return bytes;
}

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
  x.recipe = ResolvedRecipe(workload, shape.framework);
  x.te_modules = x.lowp && RunsMegatronCore(shape.framework);
  x.sp_gather_bytes = QuantisedSpGatherBytes(workload, shape.framework);
  x.pin = x.lowp ? QuantisedBytesPerElement(x.recipe) : x.p;
  const MixedPrecision mixed = ResolvedMixedPrecision(workload, shape.framework);
  x.fp32_params = mixed == MixedPrecision::kFp32Params && x.p < 4;
  // Megatron-Core's gradient buffer: 16-bit under kBf16Grads, else fp32; read and written.
  const double grad_buffer_bytes = mixed == MixedPrecision::kBf16Grads ? x.p : 4;
  x.wgrad_out_bytes =
      RunsMegatronCore(shape.framework) && mixed != MixedPrecision::kFp32Params ? 2 * grad_buffer_bytes : x.p;
  x.dropout = spec.dropout > 0;
  x.qk_norm = spec.qk_layernorm && !mla;
  x.eager_gated = spec.gated_mlp && shape.framework == Framework::kPytorchFsdp;
  x.cudnn_attention = shape.framework != Framework::kPytorchFsdp && shape.framework != Framework::kDeepSpeed;
  x.checkpoints_fused_core = RunsMegatronCore(shape.framework);
  const CpExchanges cp_exchanges =
      CpExchangesOf(spec, shape.tensor_parallel, shape.context_parallel, shape.framework);
  x.full_cp = cp_exchanges.full;
  x.window_cp = cp_exchanges.window;
  x.fused_cross_entropy = shape.framework == Framework::kPytorchFsdp || shape.framework == Framework::kNemo;
  x.tp_algorithm = shape.tp_algorithm;
  const bool rms = spec.normalization == Normalization::kRmsNorm;
  // LayerNorm learns a scale and a bias per channel, RMSNorm a scale only (Zhang &
  // Sennrich 2019); their gradients take one reduction kernel each.
  x.norm_params = rms ? x.h : 2 * x.h;
  x.norm_wgrad_kernels = rms ? 1 : 2;
  return x;
}

}  // namespace paraplan::transformer
