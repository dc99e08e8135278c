// Per-layer costs of a transformer (GPT / Llama / MoE) on one GPU for one micro-batch.
//
// FLOPs and activation bytes follow Narayanan et al. SC'21 (eq. 3) and Korthikanti et
// al. 2022 (sec. 4, activations per layer s*b*h*(34 + 5*a*s/h) and its TP/SP/recompute
// variants), generalised to grouped-query attention, gated MLPs, context and expert
// parallelism by counting each stored tensor explicitly.
#include <algorithm>

#include "absl/status/status.h"
#include "estimator/model_costs.h"

namespace paraplan {

namespace {

struct Dims {
  double b, s, c, t, T, h, a, g, d, f, V, p;
  double r;  // share of the token-hidden tensors this GPU holds (1/t with SP)
  bool gated, flash, sp;
};

// One attention or MLP sub-block: forward / backward matmul time, memory-bound bytes,
// kernels, stored activations, FLOPs.
struct Part {
  double matmul_fwd_s = 0;
  double matmul_bwd_s = 0;
  double mem_fwd_bytes = 0;
  double kernels_fwd = 0;  // memory-bound kernels (matmuls carry their own overhead)
  double act_bytes = 0;
  double flops_fwd = 0;
  double first_wgrad_s = 0;  // weight-gradient GEMM of the block's first linear
};

// Backward of a matmul = data-gradient + weight-gradient GEMMs, each the forward's
// FLOPs (Narayanan et al. SC'21: backward = 2x forward).
double MatmulFwdBwd(const Hardware& hw, double m, double n, double k, double batch, double p,
                    Part* part) {
  const double fwd = hw.MatmulTime(m, n, k, batch, p);
  part->matmul_fwd_s += fwd;
  const double dgrad = hw.MatmulTime(m, k, n, batch, p);
  const double wgrad = hw.MatmulTime(k, n, m, batch, p);
  part->matmul_bwd_s += dgrad + wgrad;
  part->flops_fwd += 2 * m * n * k * batch;
  return wgrad;
}

// Attention core (scores, softmax, dropout, context) without fused attention.
Part AttentionCore(const Dims& x, const Hardware& hw) {
  Part core;
  const double heads = x.a / x.t;
  const double q_len = x.s / x.c;  // queries per GPU; keys span the whole sequence
  const double scores = x.b * heads * q_len * x.s;
  if (x.flash) {
    // FlashAttention-2 (Dao 2023): causal mask halves the work; backward recomputes the
    // scores (2.5x forward matmul FLOPs); no s^2 tensor is stored.
    const double flops = 4 * x.b * heads * q_len * x.s * x.d * 0.5;
    core.matmul_fwd_s = flops / hw.matmul_flops_per_s() + hw.kernel_overhead_s();
    core.matmul_bwd_s = 2.5 * flops / hw.matmul_flops_per_s() + hw.kernel_overhead_s();
    core.flops_fwd = flops;
    core.act_bytes = x.b * heads * q_len * 4;  // log-sum-exp statistics (fp32)
    return core;
  }
  MatmulFwdBwd(hw, q_len, x.s, x.d, x.b * heads, x.p, &core);  // Q K^T
  MatmulFwdBwd(hw, q_len, x.d, x.s, x.b * heads, x.p, &core);  // P V
  // Fused scale-mask-softmax: read + write the scores; dropout: read, write, mask.
  core.mem_fwd_bytes = 2 * scores * x.p + 2 * scores * x.p + scores;
  core.kernels_fwd += 2;
  // Stored: softmax output, dropout mask, dropout output (Korthikanti: 5as/h term).
  core.act_bytes = scores * x.p + scores + scores * x.p;
  return core;
}

// Attention block: QKV and output projections, norms and residual/dropout.
Part AttentionBlock(const Dims& x, const Hardware& hw) {
  Part part;
  const double qkv_out = (x.a + 2 * x.g) * x.d / x.t;
  part.first_wgrad_s = MatmulFwdBwd(hw, x.T, qkv_out, x.h, 1, x.p, &part);
  MatmulFwdBwd(hw, x.T, x.h, x.a * x.d / x.t, 1, x.p, &part);
  const double e = x.T * x.h;
  // LayerNorm (read + write), bias-dropout-add (read x, residual; write out, mask) and
  // the copy that lays the attention context out for the projection (permute).
  part.mem_fwd_bytes = 2 * e * x.r * x.p + (3 * e * x.r * x.p + e * x.r) + 2 * e / x.t * x.p;
  part.kernels_fwd += 3;
  // Stored: LN input, QKV input, Q and K, V, projection input, dropout mask.
  part.act_bytes = e * x.r * x.p + e * x.r * x.p + x.T * (x.a + x.g) * x.d / x.t * x.p +
                   x.T * x.g * x.d / x.t * x.p + e / x.t * x.p + e * x.r;
  return part;
}

// Dense MLP of `tokens` tokens with hidden f (per GPU f / t).
Part MlpBlock(const Dims& x, const Hardware& hw, double tokens, double f, double groups) {
  Part part;
  const double up = x.gated ? 2 * f / x.t : f / x.t;
  // `groups` independent GEMMs (local experts) share the tokens evenly.
  const double per_group = tokens / groups;
  part.first_wgrad_s = MatmulFwdBwd(hw, per_group, up, x.h, groups, x.p, &part);
  MatmulFwdBwd(hw, per_group, x.h, f / x.t, groups, x.p, &part);
  const double inner = tokens * f / x.t;
  // Activation function: read input(s), write output.
  part.mem_fwd_bytes = (x.gated ? 3 : 2) * inner * x.p;
  part.kernels_fwd += 1;
  // Stored: MLP input, activation-function input(s), its output.
  part.act_bytes = tokens * x.h * x.r * x.p + (x.gated ? 2 : 1) * inner * x.p + inner * x.p;
  return part;
}

// The residual half that surrounds the MLP: LayerNorm and bias-dropout-add.
Part MlpResidual(const Dims& x) {
  Part part;
  const double e = x.T * x.h;
  part.mem_fwd_bytes = 2 * e * x.r * x.p + 3 * e * x.r * x.p + e * x.r;
  part.kernels_fwd = 2;
  part.act_bytes = e * x.r * x.p + e * x.r;  // LN input, dropout mask
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
  out.all_reduce_s = coll.AllReduce(bytes, tp);
  out.all_gather_s = coll.AllGather(bytes, tp);
  out.reduce_scatter_s = coll.ReduceScatter(bytes, tp);
  return out;
}

}  // namespace

absl::StatusOr<ModelCosts> TransformerCosts(const Workload& workload, const ModelShape& shape,
                                            const Hardware& hw, const Collectives& coll) {
  const TransformerSpec spec = workload.transformer.Resolved();
  Dims x;
  x.b = shape.micro_batch_size;
  x.s = static_cast<double>(spec.seq_length);
  x.c = shape.context_parallel;
  x.t = shape.tensor_parallel;
  x.T = x.b * x.s / x.c;
  x.h = static_cast<double>(spec.hidden_size);
  x.a = spec.num_attention_heads;
  x.g = spec.num_kv_heads;
  x.d = x.h / x.a;
  x.f = static_cast<double>(spec.ffn_hidden_size);
  x.V = static_cast<double>(spec.vocab_size);
  x.p = BytesPerElement(workload.precision);
  x.sp = shape.sequence_parallel && shape.tensor_parallel > 1;
  x.r = x.sp ? 1.0 / x.t : 1.0;
  x.gated = spec.gated_mlp;
  x.flash = shape.flash_attention;

  const GroupSpan tp = coll.Place(shape.tensor_parallel, 1);
  const GroupSpan cp = coll.Place(shape.context_parallel, shape.tensor_parallel);
  const GroupSpan ep =
      coll.Place(shape.expert_parallel, int64_t{shape.tensor_parallel} * shape.context_parallel);
  const double ovl = hw.overlap_efficiency();

  const Part core = AttentionCore(x, hw);
  const Part attn = AttentionBlock(x, hw);
  const Part resid = MlpResidual(x);
  const Part dense_mlp = MlpBlock(x, hw, x.T, x.f, 1);

  const TpCollectives tpc = TpCosts(x, coll, tp);
  // Context parallelism (ring attention): each rank passes its K/V block around the
  // ring, c - 1 steps forward and twice that backward (dK, dV); overlapped with the
  // attention core (Liu et al. 2023, Ring Attention).
  double cp_exposed = 0;
  if (x.c > 1) {
    const double kv_bytes = 2 * x.T * x.g * x.d / x.t * x.p;
    const double step = coll.SendRecv(kv_bytes, cp.level);
    const double fwd = (x.c - 1) * step;
    const double bwd = 2 * (x.c - 1) * step;
    cp_exposed = std::max(0.0, fwd - ovl * core.matmul_fwd_s) +
                 std::max(0.0, bwd - ovl * core.matmul_bwd_s);
  }

  auto make_layer = [&](const Part& mlp, double ep_s) {
    BlockCosts blk;
    const double mem_fwd = core.mem_fwd_bytes + attn.mem_fwd_bytes + resid.mem_fwd_bytes +
                           mlp.mem_fwd_bytes;
    const double kernels =
        core.kernels_fwd + attn.kernels_fwd + resid.kernels_fwd + mlp.kernels_fwd;
    const double mem_fwd_s = mem_fwd / hw.hbm_bytes_per_s() + kernels * hw.kernel_overhead_s();
    const double matmul_fwd = core.matmul_fwd_s + attn.matmul_fwd_s + mlp.matmul_fwd_s;
    const double matmul_bwd = core.matmul_bwd_s + attn.matmul_bwd_s + mlp.matmul_bwd_s;
    blk.fwd_s = matmul_fwd + mem_fwd_s;
    // Backward of a memory-bound op reads the output gradient and the saved input and
    // writes the input gradient: twice the forward traffic.
    blk.bwd_s = matmul_bwd + 2 * mem_fwd_s;
    // Two sub-blocks (attention, MLP), each a column- then a row-parallel linear.
    // Without SP: forward all-reduce after the row linear (blocking); backward
    // all-reduce of the column linear's input gradient, overlapped with its weight-
    // gradient GEMM (Megatron-LM async TP all-reduce).
    // With SP: forward all-gather before the column linear and reduce-scatter after the
    // row linear (blocking); backward all-gather of the output gradient (blocking),
    // all-gather of the saved sharded input overlapped with the data-gradient GEMM, and
    // reduce-scatter of the input gradient overlapped with the weight-gradient GEMM
    // (Korthikanti et al. 2022, sec. 4.2.2).
    const double wgrad[2] = {attn.first_wgrad_s, mlp.first_wgrad_s};
    blk.tp_fwd_s = 0;
    blk.tp_bwd_s = 0;
    for (double w : wgrad) {
      if (x.sp) {
        blk.tp_fwd_s += tpc.all_gather_s + tpc.reduce_scatter_s;
        blk.tp_bwd_s += tpc.all_gather_s + std::max(0.0, tpc.all_gather_s - ovl * w) +
                        std::max(0.0, tpc.reduce_scatter_s - ovl * w);
      } else {
        blk.tp_fwd_s += tpc.all_reduce_s;
        blk.tp_bwd_s += std::max(0.0, tpc.all_reduce_s - ovl * w);
      }
    }
    blk.cp_s = cp_exposed;
    blk.ep_s = ep_s;
    const double act_full = core.act_bytes + attn.act_bytes + resid.act_bytes + mlp.act_bytes;
    switch (shape.recompute) {
      case Recompute::kNone:
        blk.activation_bytes = act_full;
        break;
      case Recompute::kSelective:
        // Korthikanti et al. 2022 sec. 4.3: re-run the attention core only.
        if (!x.flash) {
          blk.recompute_s = core.matmul_fwd_s + core.mem_fwd_bytes / hw.hbm_bytes_per_s() +
                            core.kernels_fwd * hw.kernel_overhead_s();
          blk.activation_bytes = act_full - core.act_bytes;
        } else {
          blk.activation_bytes = act_full;
        }
        break;
      case Recompute::kFull:
        // Keep only the layer input; re-run the whole forward (with its collectives).
        blk.activation_bytes = x.T * x.h * x.r * x.p;
        blk.recompute_s = blk.fwd_s + blk.tp_fwd_s + ep_s / 2;
        blk.transient_bytes = act_full;
        break;
    }
    blk.model_flops = 3 * (core.flops_fwd * (x.flash ? 2 : 1) + attn.flops_fwd + mlp.flops_fwd);
    return blk;
  };

  const double attn_params = x.h * (x.a + 2 * x.g) * x.d / x.t + x.a * x.d * x.h / x.t + 4 * x.h;
  const double dense_mlp_params = x.h * x.f * (x.gated ? 3 : 2) / x.t;

  BlockCosts dense = make_layer(dense_mlp, 0);
  dense.params = attn_params + dense_mlp_params;

  BlockCosts moe;
  const bool is_moe = spec.is_moe();
  if (is_moe) {
    const double experts = spec.moe.num_experts;
    const double k = spec.moe.top_k;
    const double fe = static_cast<double>(spec.moe.expert_ffn_hidden_size);
    const double local_experts = experts / shape.expert_parallel;
    // Balanced routing: each GPU's experts see tokens * top_k in total.
    Part mlp = MlpBlock(x, hw, x.T * k, fe, local_experts);
    // Router: T x h x E matmul.
    MatmulFwdBwd(hw, x.T, experts, x.h, 1, x.p, &mlp);
    // Dispatch + combine all-to-all forward, and again backward (GShard / Megatron-Core).
    const double a2a = coll.AllToAll(x.T * k * x.h * x.r * x.p, ep);
    moe = make_layer(mlp, 4 * a2a);
    moe.expert_params = local_experts * x.h * fe * (x.gated ? 3 : 2) / x.t;
    moe.params = attn_params + x.h * experts + moe.expert_params;
  }

  ModelCosts out;
  const int interval = is_moe ? spec.moe.moe_layer_interval : 0;
  out.layers.reserve(spec.num_layers);
  for (int i = 0; i < spec.num_layers; ++i) {
    const bool moe_layer = is_moe && (i + 1) % interval == 0;
    out.layers.push_back(moe_layer ? moe : dense);
  }

  // First stage: vocabulary-parallel embedding lookup; its output is all-reduced (or
  // reduce-scattered with SP) over TP.
  {
    BlockCosts& pre = out.pre;
    const double e = x.T * x.h;
    pre.fwd_s = hw.MemoryTime(2 * e * x.p) + hw.MemoryTime(3 * e * x.r * x.p);  // lookup, dropout
    pre.bwd_s = 2 * pre.fwd_s;
    pre.tp_fwd_s = x.t > 1 ? (x.sp ? coll.ReduceScatter(e * x.p, tp) : coll.AllReduce(e * x.p, tp)) : 0;
    pre.activation_bytes = e * x.r;  // dropout mask
    pre.params = x.V * x.h / x.t;
  }
  // Last stage: final LayerNorm, LM head (vocabulary-parallel), fused cross-entropy.
  {
    BlockCosts& post = out.post;
    Part head;
    MatmulFwdBwd(hw, x.T, x.V / x.t, x.h, 1, x.p, &head);
    const double logits = x.T * x.V / x.t;
    const double e = x.T * x.h;
    // LN read+write; cross-entropy: read logits, upcast/softmax in fp32 (write + read).
    const double mem_fwd = 2 * e * x.r * x.p + logits * (x.p + 4 + 4);
    post.fwd_s = head.matmul_fwd_s + hw.MemoryTime(mem_fwd);
    post.bwd_s = head.matmul_bwd_s + hw.MemoryTime(logits * (4 + x.p) + 4 * e * x.r * x.p);
    if (x.t > 1) {
      const double bytes = e * x.p;
      post.tp_fwd_s = (x.sp ? coll.AllGather(bytes, tp) : 0) + 3 * coll.AllReduce(x.T * 4, tp);
      post.tp_bwd_s = x.sp ? coll.ReduceScatter(bytes, tp) : coll.AllReduce(bytes, tp);
    }
    post.activation_bytes = e * x.r * x.p + e * x.p + logits * 4;
    post.params = spec.tied_embeddings ? 0 : x.V * x.h / x.t;
    post.params += 2 * x.h;
    post.model_flops = 3 * head.flops_fwd;
  }

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
