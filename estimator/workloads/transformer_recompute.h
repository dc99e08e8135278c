// What activation recomputation re-runs and what it saves, for one transformer layer on
// one GPU for one micro-batch: Megatron-Core's selective recompute modules and
// torchtitan's op-level selective checkpointing, from the layer's sub-block Parts
// (transformer_blocks.h). transformer_costs.cc applies them. Pure functions. Internal to
// estimator/workloads.
#ifndef PARAPLAN_ESTIMATOR_WORKLOADS_TRANSFORMER_RECOMPUTE_H_
#define PARAPLAN_ESTIMATOR_WORKLOADS_TRANSFORMER_RECOMPUTE_H_

#include "estimator/system/hardware.h"
#include "estimator/workloads/transformer_blocks.h"

namespace paraplan::transformer {

// What the MLP half of a layer offers the selective recompute modules beyond its Part.
struct MlpExtras {
  bool moe = false;
  double act_out_bytes = 0;  // the experts' activation-function output (moe_act)
  double act_fwd_bytes = 0;  // memory traffic of recomputing it
  double rows = 0;           // token-expert rows this GPU's experts take (expert_fc1 / moe_act offload)
  double width = 0;          // their FFN width on this GPU (fe / expert TP)
  Part shared;               // shared experts (stored tensors beyond their input)
  // The router's GEMM kernels, forward and backward: the part of the MLP side that CUDA
  // graphs cover in a dropless MoE layer (EagerMoeKernels, transformer_costs.cc).
  double router_kernels_fwd = 0, router_kernels_bwd = 0;
};

struct Recomputed {
  double saved_bytes = 0;  // activations no longer kept to backward
  double seconds = 0;      // forward work re-run in backward (incl. its communication)
  double kernels = 0;      // kernels it launches
  double regions = 0;      // checkpointed regions (host bookkeeping each)
};

// The layer's norms that are modules of their own under Megatron-Core's Transformer Engine
// layer spec (gpt_layer_specs.py): the input norm with MLA (its down-projections are plain
// linears; otherwise TELayerNormColumnParallelLinear fuses it into the QKV projection),
// the pre-MLP norm in an MoE layer (TENorm before the router; a dense MLP fuses it into
// fc1). Only these does the layernorm module re-run (transformer_layer.py: not an
// IdentityOp).
double SeparateNorms(const Part* mla_up, const MlpExtras& extras);

// The collectives a re-run forward repeats: the expert-parallel dispatch and combine
// (ep_s both ways, ep_calls each way) and context parallelism's exposed forward exchange
// with its calls. The calls are host launches too.
struct RerunComm {
  double ep_s = 0, ep_calls = 0, cp_fwd_s = 0, cp_calls_fwd = 0;
};

// Megatron-Core's selective recompute (TransformerConfig.recompute_modules): each module
// keeps only its input and re-runs its forward in backward. core_attn: the attention core
// (Korthikanti et al. 2022 sec. 4.3; under flash attention only where the framework
// checkpoints the fused core, RecomputesCore: its forward again, with context
// parallelism's forward exchange, for its log-sum-exp);
// layernorm: the outputs of the norms that are modules of their own (SeparateNorms: the
// MLP input in an MoE layer, the attention input with MLA); mlp: a dense MLP; moe: the
// whole MoE block with its dispatch and combine; moe_act: the experts' activation
// function output; shared_experts: the shared experts; mla_up_proj: MLA's up
// projections (the Q, K and V they make; nothing without MLA).
Recomputed SelectiveRecompute(const Dims& x, const Hardware& hw, unsigned modules, const Part& core,
                              const Part* mla_up, const Part& mlp, const MlpExtras& extras, const RerunComm& comm);

// What adding the light modules (layernorm, moe_act, mla_up_proj: the output-discarding
// ones) to `modules` (0 = none recomputed) would drop beyond what `modules` drops: the
// plan search's bound on what they can save (SelectiveRecompute's terms).
double LightRecomputeBytes(const Dims& x, unsigned modules, const Part* mla_up, const MlpExtras& extras);

// torchtitan's selective activation checkpointing (activation_checkpoint.py, the "op"
// policy its Llama configurations use): each block is a checkpointed region that keeps
// the outputs of its compute-intensive ops (matmuls, attention) except every second
// matmul, and recomputes everything else from the block's input in backward. In a
// Llama block the matmuls run wq, wk, wv, wo, w1, w3, w2: it keeps wq's, wv's, the
// attention's, w1's and w2's outputs, and re-runs wk and wo (half the attention linears'
// FLOPs for any head grouping), w3 (a third of a gated MLP's) and every memory-bound
// kernel; with two MLP linears (w1, w2) it keeps w1's output and re-runs w2 (half the
// MLP's). Three matmuls re-run either way, where the kernel counts here launch four (QKV,
// projection, the MLP's two). Dense layers; MoE layers keep Megatron's reading of
// selective.
Recomputed OpLevelSac(const Dims& x, const Hardware& hw, const Part& core, const Part& attn, const Part& resid,
                      const Part& mlp);

}  // namespace paraplan::transformer

#endif  // PARAPLAN_ESTIMATOR_WORKLOADS_TRANSFORMER_RECOMPUTE_H_
