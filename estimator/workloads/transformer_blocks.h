// The sub-blocks of one transformer layer on one GPU for one micro-batch, each costed on
// its own: linears (grouped for experts, with the low-precision recipes' casts),
// memory-bound kernels, the attention core (flash or unfused), the attention and MLP
// blocks, multi-head latent attention, the residual half. `Dims` holds what they read of
// the workload and the configuration's shape; `Part` what each returns: GPU seconds
// forward and backward, bytes moved by memory-bound kernels, kernels launched, stored
// activation bytes, FLOPs. transformer_costs.cc assembles them into layers. Internal to
// estimator/workloads: no caller outside it.
#ifndef PARAPLAN_ESTIMATOR_WORKLOADS_TRANSFORMER_BLOCKS_H_
#define PARAPLAN_ESTIMATOR_WORKLOADS_TRANSFORMER_BLOCKS_H_

#include <algorithm>

#include "estimator/inputs/cp_exchange.h"
#include "estimator/workloads/model_costs.h"

namespace paraplan::transformer {

struct Dims {
  double b, s, c, t, T, h, a, g, d, f, V, p;
  // Attention core widths: query/key and value channels per head, and the K/V heads
  // (d, d, g; MLA: nope + rope, v_head_dim, a).
  double dqk, dv, kv;
  double r;  // share of the token-hidden tensors this GPU holds (1/t with SP)
  bool gated, flash, sp;
  bool lowp;          // the linears run in FP8 / FP4 (Transformer Engine)
  // Megatron-Core's Transformer Engine modules quantise them (LinearIo applies, and the
  // sequence-parallel gathers move quantised bytes); elsewhere (torchtitan's torchao,
  // DeepSpeed, PyTorch FSDP) each linear casts its whole input and gathers 16 bits.
  bool te_modules = false;
  // Bytes an element its sequence-parallel all-gathers move where they are quantised
  // (QuantisedSpGatherBytes), 0 where they move the 16-bit tensor.
  double sp_gather_bytes = 0;
  bool bf16_linears;  // a low-precision workload's layer kept in BF16 (its linears at that rate)
  // Bytes per element of what a linear keeps of its input for backward: Transformer
  // Engine saves the quantised copy under FP8 / FP4 (1; MXFP8 1 + 1/32; NVFP4 1/2 + 1/16),
  // the 16-bit tensor otherwise (= p).
  double pin = 2;
  QuantRecipe recipe = QuantRecipe::kDefault;
  // FP8 GEMMs take any operand layout (Hardware::fp8_any_layout): the per-tensor recipes
  // write no transposes.
  bool fp8_any_layout = false;
  // Bytes per element the weight-gradient GEMM moves for its output: Megatron-Core's
  // Transformer Engine linears fuse the accumulation into the gradient buffer
  // (gradient_accumulation_fusion: the GEMM reads and writes main_grad, 4 + 4 bytes in
  // fp32, 2 + 2 under 16-bit gradient buffers); autograd's .grad (DeepSpeed, PyTorch FSDP,
  // torchtitan) is written fresh (= p). Memory-bound where an expert sees few tokens.
  double wgrad_out_bytes = 2;
  bool fp32_params;  // MixedPrecision::kFp32Params: each linear casts its fp32 weight
  bool dropout;    // dropout > 0: dropout kernels run and their masks are stored
  bool qk_norm;    // a norm over each head's query and key (TransformerSpec::qk_layernorm, no MLA)
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
  // Selective recompute's core_attn checkpoints the attention core under flash attention
  // too (Megatron-Core, attention.py: checkpoint_core_attention whenever recompute
  // granularity is selective and core_attn is a module), re-running the fused forward
  // and dropping its log-sum-exp; legacy Megatron-LM and Megatron-DeepSpeed skip the
  // checkpoint under flash (transformer.py: `if not self.use_flash_attn`), and
  // torchtitan's op-level policy keeps the attention's outputs.
  bool checkpoints_fused_core;
  // The loss is a fused cross-entropy, one kernel each way keeping the 16-bit logits:
  // flash-attn's (PyTorch FSDP as llm-foundry runs it: its default loss_fn) or Megatron-
  // Core's fused vocab-parallel one (NeMo: cross_entropy_loss_fusion defaults to True in
  // Megatron-Bridge's GPTModelProvider, and its performance recipes pick Transformer
  // Engine's kernel), not Megatron-LM's default op-by-op one on upcast logits.
  bool fused_cross_entropy;
  // The exchanges full and sliding-window layers' context parallelism runs (cp_exchange.h).
  CpExchange full_cp = CpExchange::kRing, window_cp = CpExchange::kRing;
  CollectiveAlgorithm tp_algorithm = CollectiveAlgorithm::kAuto;
  double norm_params;  // parameters of one norm: 2h (LayerNorm scale + bias) or h (RMSNorm)
  double norm_wgrad_kernels;  // backward kernels for the norm's parameter gradients
};

// Whether selective recompute of `modules` re-runs the attention core (and drops what it
// saves): core_attn without flash attention, or with it where the framework checkpoints
// the fused core (Dims::checkpoints_fused_core).
inline bool RecomputesCore(const Dims& x, unsigned modules) {
  return (modules & kRecomputeCoreAttn) != 0 && (!x.flash || x.checkpoints_fused_core);
}

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
  double last_fwd_s = 0;     // forward GEMM of the block's last linear
  double last_dgrad_s = 0;   // data-gradient GEMM of the block's last linear
};

// Where a linear's FP8 operands come from, as Transformer Engine quantises them
// (pytorch/module/linear.py, layernorm_linear.py). Under sequence parallelism a
// column-parallel linear quantises this GPU's share of the input rows and all-gathers
// them in FP8, and a row-parallel linear's backward does so with the output gradient
// (`input_share`, `grad_share`: 1/t there, 1 otherwise); Megatron-Core's QKV and first
// MLP linear take their input from the norm they fuse (TELayerNormColumnParallelLinear),
// whose kernel writes it quantised (`norm_fused`).
struct LinearIo {
  double input_share = 1;
  double grad_share = 1;
  bool norm_fused = false;
};

// A linear layer: m tokens x k inputs -> n outputs, `batch` independent GEMMs. Backward
// = data-gradient + weight-gradient GEMMs, each the forward's FLOPs (Narayanan et al.
// SC'21: backward = 2x forward). Kernels: the GEMM forward, two backward and one
// bias/weight-gradient reduction or accumulation per GEMM. Under FP8 / FP4 (Transformer
// Engine) the input is quantised before the forward GEMM and the output gradient before
// the backward ones, by the recipe and `io` (transformer_blocks.cc, Casts). The `batch`
// GEMMs run as Hardware::GroupedMatmulTime says (local experts over 4 streams).
void Linear(const Hardware& hw, const Dims& x, double m, double n, double k, double batch,
            Part* part, const LinearIo& io = {});

// A memory-bound kernel moving `bytes` forward; its backward moves twice as much in two
// kernels (reads the output gradient and the saved input, writes the input gradient).
void MemoryBound(double bytes, double kernels, Part* part);

// The head dimension a fused attention kernel computes at for `head_dim`: FlashAttention-2
// instantiates multiples of 32 (flash-attn's hdim32 ... hdim256 kernels: 80 runs as 96);
// cuDNN's runs 65-127 as 128 (measured on an H100: 80 and 96 at 0.65-0.72 and 0.76-0.82 of
// the 128 rate a useful FLOP, 80 / 128 and 96 / 128 padded:
// docs/microbench/h100_attention_head_dim.jsonl).
double KernelHeadDim(double head_dim, bool cudnn);

// A fused attention kernel's rate at `head_dim` over its rate at the 128 its efficiency
// was measured at, its softmax worth `softmax_head_dim` units of head dimension a score:
// (128 + d0) / 128 x d / (d + d0) below 128; 1 from 128 up (MLA's 192 / 128 heads measure
// 3 % slower forward and 13 % backward on cuDNN, not faster: h100_mla_attention.jsonl) and
// where either is 0. Head dimension 64 at cuDNN's forward d0 = 70: 0.72.
double HeadDimRate(double head_dim, double softmax_head_dim);

// Attention core (scores, softmax, dropout, context).
// `window`: keys a query attends to at most (0 = the whole causal prefix); `exchange`:
// how context parallelism runs it (x.c > 1).
Part AttentionCore(const Dims& x, const Hardware& hw, double window, CpExchange exchange = CpExchange::kRing);

// Attention block: QKV and output projections, norms and residual/dropout.
Part AttentionBlock(const Dims& x, const Hardware& hw);

// MLP of `tokens` tokens with hidden f, sharded `shard` ways (per GPU f / shard), its
// input stored at `input_share` of the hidden (1/t under SP for the dense MLP; experts
// store the whole permuted rows their GEMMs read).
Part MlpBlock(const Dims& x, const Hardware& hw, double tokens, double f, double groups, double shard,
              double input_share, const LinearIo& up_io = {}, const LinearIo& down_io = {});

// `from` run in the same sub-block after `into` (its first linear stays `into`'s).
void AddPart(const Part& from, Part* into);

// Multi-head latent attention (DeepSeek-V2 sec. 2.1; Megatron-Core MLASelfAttention):
// the down projections (the query latent, and the key/value latent with the rope key all
// heads share) run whole on every TP rank over the tokens its group holds; the up
// projections and the output projection are split by heads over TP, as QKV and the
// output projection are. `up` receives the up projections alone (recompute module
// mla_up_proj), with the Q, K and V they produce as its stored bytes.
Part MlaBlock(const Dims& x, const Hardware& hw, const MlaSpec& m, Part* up);

// Parameters of one MLA block on one GPU: the down projections whole, the rest by heads.
double MlaParams(const Dims& x, const MlaSpec& m);

// The residual half that surrounds the MLP: LayerNorm and bias-dropout-add.
Part MlpResidual(const Dims& x);

// Megatron-Core's fine-grained activation offloading (ParallelConfig::offload_modules,
// OffloadModule bits): the bytes of one layer's saved tensors, per micro-batch on this
// GPU, that the named modules move to the host between forward and backward. Each module
// offloads what autograd saves inside it (its input, transformer_config.py
// offload_modules): attn_norm its input; qkv_linear the norm's output it reads (nothing
// when selective recompute re-runs that norm); core_attn Q, K, V and the core's own saved
// tensors (those kept: not under core_attn recompute, nor MLA's Q, K, V under
// mla_up_proj); attn_proj the core's output; mlp_norm its input; expert_fc1 the routed
// rows the experts receive (`expert_rows` x hidden, quantised as the linears keep them);
// moe_act the activation's input (`expert_rows` x (2 if gated) `expert_width`). A tensor
// under min_offloaded_tensor_size (2^20 elements, Megatron-Core's default) stays.
// `recomputed`: RecomputeModule bits in force (0 without selective recompute;
// mla_up_proj only with MLA). The norms are modules of their own only where the
// Transformer Engine spec keeps them apart (the input norm beside MLA, `mla`; the pre-MLP
// norm in an MoE layer, `expert_rows` > 0): Megatron-Core offloads (attn_norm, mlp_norm)
// and recomputes only those (transformer_layer.py: not an IdentityOp); fused into the
// linear after it, the input norm's output stays the QKV linear's input.
double OffloadedBytes(const Dims& x, unsigned offload, unsigned recomputed, const Part& core, double expert_rows,
                      double expert_width, bool mla);

// The dimensions every sub-block of a layer reads, for one configuration's shape.
Dims LayerDims(const Workload& workload, const TransformerSpec& spec, const ModelShape& shape);

}  // namespace paraplan::transformer

#endif  // PARAPLAN_ESTIMATOR_WORKLOADS_TRANSFORMER_BLOCKS_H_
