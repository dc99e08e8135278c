#include "estimator/workloads/transformer_ends.h"

#include <algorithm>

namespace paraplan::transformer {

namespace {

// The loss as the stack computes it, per logit: bytes its memory-bound kernels move
// forward and backward, bytes kept from forward to backward and alive on top while it
// runs, kernels each way.
struct LossKernel {
  double fwd_bytes, bwd_bytes, kept_bytes, transient_bytes, kernels_fwd, kernels_bwd;
};
LossKernel LossKernelOf(const Dims& x) {
  if (x.fused_cross_entropy) {
    // flash-attn's fused cross-entropy (flash_attn/losses/cross_entropy.py; llm-foundry's
    // default loss_fn 'fused_crossentropy'): one kernel each way, fp32 math in registers.
    // Forward reads the 16-bit logits and keeps them (and a log-sum-exp a row) for
    // backward, which reads them again and writes their gradient (inplace_backward off).
    return {x.p, 2 * x.p, x.p, x.p, 1, 1};
  }
  // Megatron-LM's _VocabParallelCrossEntropy on output.float(), op by op: upcast p + 4,
  // max 4, subtract in place 8, exp 8, sum 4, divide in place 8 forward; backward
  // multiply in place 8 and the upcast's backward 4 + p. Measured on an H100
  // (scripts/microbench/cross_entropy.py, docs/microbench/h100_cross_entropy.csv): 59
  // bytes per logit at the device-copy rate, 47 at the memory-bound rate. It keeps the
  // fp32 softmax (4); while it runs, the 16-bit logits and their fp32 copy live beside
  // it (p + 4; torchtitan's F.cross_entropy on upcast logits kept 4.0 and held 12 at its
  // backward's peak on an H100: docs/microbench/h100_autograd_memory.jsonl).
  return {x.p + 36, 12 + x.p, 4, x.p + 4, 6, 2};
}

}  // namespace

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
  pre.host_fwd_s = HostExcess(x.dropout ? 5 : 4, host_kernel_s, pre.fwd_s + pre.tp_fwd_s);
  pre.host_s = pre.host_fwd_s + HostExcess(10, host_kernel_s, pre.bwd_s);
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
  const LossKernel loss = LossKernelOf(x);
  const double mem_fwd = 2 * e * x.r * x.p + logits * loss.fwd_bytes;  // + the final norm's read and write
  post.fwd_s = head.matmul_fwd_s + hw.MemoryTime(mem_fwd);
  post.bwd_s = head.matmul_bwd_s + hw.MemoryTime(logits * loss.bwd_bytes + 4 * e * x.r * x.p);
  double calls = 0;
  if (x.t > 1) {
    const double bytes = e * x.p;
    post.tp_fwd_s = (x.sp ? coll.AllGather(bytes, tp) : 0) + 3 * coll.AllReduce(x.T * 4, tp, x.tp_algorithm);
    post.tp_bwd_s = x.sp ? coll.ReduceScatter(bytes, tp) : coll.AllReduce(bytes, tp, x.tp_algorithm);
    calls = 4;
  }
  post.host_fwd_s = HostExcess(4 + loss.kernels_fwd + calls, host_kernel_s, post.fwd_s + post.tp_fwd_s);
  post.host_s =
      post.host_fwd_s + HostExcess(6 + loss.kernels_bwd + head.kernels_bwd, host_kernel_s, post.bwd_s + post.tp_bwd_s);
  post.wgrad_s = head.wgrad_s;
  post.activation_bytes = e * x.r * x.p + e * x.p + logits * loss.kept_bytes;
  post.transient_bytes = logits * loss.transient_bytes;
  post.params = spec.tied_embeddings ? 0 : x.V * x.h / x.t;
  post.params += x.norm_params;
  post.tensors = x.norm_wgrad_kernels + (spec.tied_embeddings ? 0 : 1);
  post.weight_tensors = spec.tied_embeddings ? 0 : 1;
  post.model_flops = 3 * head.flops_fwd;
  return post;
}

// Multi-token prediction on the last stage (DeepSeek-V3 sec. 2.2; Megatron-Core
// multi_token_prediction.py): each depth embeds the next tokens with the shared
// embedding, normalises both streams, projects their concatenation 2h -> h (eh_proj,
// column-parallel over TP), runs one transformer layer like the model's last and the
// shared LM head with its loss. Its parameters: the layer, two norms and the projection.
// `out`'s embedding (pre) and head (post) are set, without MTP.
void AddMultiTokenPrediction(const Dims& x, const TransformerSpec& spec, const Hardware& hw, ModelCosts* out) {
  if (spec.mtp_num_layers <= 0 || out->layers.empty()) return;
  const BlockCosts& last = out->layers.back();
  BlockCosts embed = out->pre;
  BlockCosts head = out->post;
  for (BlockCosts* shared : {&embed, &head}) {
    shared->params = shared->tensors = shared->weight_tensors = 0;
  }
  Part proj;
  Linear(hw, x, x.T, x.h / x.t, 2 * x.h, 1, &proj);
  BlockCosts depth = last;
  depth.Add(embed);
  depth.Add(head);
  depth.fwd_s += proj.matmul_fwd_s;
  depth.bwd_s += proj.matmul_bwd_s;
  depth.wgrad_s += proj.wgrad_s;
  depth.kernels += proj.kernels_fwd + proj.kernels_bwd;
  depth.activation_bytes += x.T * 2 * x.h * x.r * x.pin;  // the projection's input
  depth.model_flops += 3 * proj.flops_fwd;
  depth.params += 2 * x.h * x.h / x.t + 2 * x.norm_params;
  depth.tensors += 3;
  depth.weight_tensors += 1;
  for (int d = 0; d < spec.mtp_num_layers; ++d) out->post.Add(depth);
  out->mtp_layers = spec.mtp_num_layers;
}

}  // namespace paraplan::transformer
