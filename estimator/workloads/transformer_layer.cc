#include "estimator/workloads/transformer_layer.h"

#include <algorithm>

namespace paraplan::transformer {

namespace {

// Exposed TP collectives of a layer's two sub-blocks (attention, MLP), each a column-
// then a row-parallel linear, and the calls they launch per direction.
// Without SP: forward all-reduce after the row linear (blocking); backward all-reduce of
// the column linear's input gradient, overlapped with its weight-gradient GEMM
// (Megatron-LM async TP all-reduce).
// With SP: forward all-gather before the column linear and reduce-scatter after the row
// linear (blocking); backward all-gather of the output gradient (blocking), all-gather
// of the saved sharded input overlapped with the column linear's data-gradient GEMM, and
// reduce-scatter of the input gradient overlapped with its weight-gradient GEMM
// (Korthikanti et al. 2022, sec. 4.2.2).
// With tp_comm_overlap (Transformer Engine userbuffers) the forward collectives are split
// into chunks pipelined with the adjacent GEMM, hidden as far as it lasts; the
// reduce-scatter after the row linear runs as a kernel on kUbPipelineSms of the GPU's SMs
// beside that GEMM, which runs on the rest (TE's "pipeline" method with set_sm_margin), so
// the row linear's forward takes SMs / (SMs - kUbPipelineSms) of its time. Backward, the
// output gradient's all-gather is exchanged in a ring beside the row linear's own
// data-gradient GEMM (module/base.py initialize_ub: proj_dgrad and fc2_dgrad by
// "ring_exchange"; qkv_dgrad / fc1_dgrad and qkv_wgrad / fc1_wgrad "bulk"): each of the
// three backward collectives has a GEMM of its own to hide behind.
struct TpExposure {
  double fwd_s = 0, bwd_s = 0, calls_fwd = 0, calls_bwd = 0;
  double attn_fwd_s = 0, attn_calls_fwd = 0;  // of the forward, the attention sub-block's
};
// Transformer Engine's default for its pipelined reduce-scatter overlap (module/base.py
// initialize_ub get_default_config: "num_sm": 16 for the "pipeline" method of proj_fprop
// and fc2_fprop; Megatron-Bridge's tuned H100 configurations give them 16-24).
constexpr double kUbPipelineSms = 16;

// `quantised_attn` / `quantised_mlp`: the sub-block's gathers are Transformer Engine's,
// in the recipe's bytes (TpCollectives): QKV's and the dense MLP's; MLA's down
// projections and an MoE layer's token path gather 16-bit tensors.
TpExposure TensorParallelExposure(const LayerContext& L, const Dims& x, const Part& attn, const Part& mlp,
                                  bool quantised_attn, bool quantised_mlp) {
  TpExposure out;
  if (x.t <= 1) return out;
  const double sms = L.hw.sm_count();
  const double sm_tax = L.shape.tp_comm_overlap && x.sp && sms > 2 * kUbPipelineSms
                            ? kUbPipelineSms / (sms - kUbPipelineSms)
                            : 0;
  const Part* subs[2] = {&attn, &mlp};
  for (const Part* q : subs) {
    const double w = q->first_wgrad_s, dg = q->first_dgrad_s, f = q->matmul_fwd_s;
    const double ag = (q == &attn ? quantised_attn : quantised_mlp) ? L.tpc.all_gather_quantised_s : L.tpc.all_gather_s;
    auto fwd_exposed = [&](double comm) {
      return L.shape.tp_comm_overlap ? std::max(0.0, comm - L.ovl * 0.5 * f) : comm;
    };
    const double fwd_before = out.fwd_s, calls_before = out.calls_fwd;
    if (x.sp) {
      out.fwd_s += fwd_exposed(ag) + fwd_exposed(L.tpc.reduce_scatter_s) + sm_tax * q->last_fwd_s;
      out.bwd_s += (L.shape.tp_comm_overlap ? std::max(0.0, ag - L.ovl * q->last_dgrad_s) : ag) +
                   std::max(0.0, ag - L.ovl * dg) +
                   std::max(0.0, L.tpc.reduce_scatter_s - L.ovl * w);
      out.calls_fwd += 2;
      out.calls_bwd += 3;
    } else {
      out.fwd_s += fwd_exposed(L.tpc.all_reduce_s);
      out.bwd_s += std::max(0.0, L.tpc.all_reduce_s - L.ovl * w);
      out.calls_fwd += 1;
      out.calls_bwd += 1;
    }
    if (q == &attn) {
      out.attn_fwd_s = out.fwd_s - fwd_before;
      out.attn_calls_fwd = out.calls_fwd - calls_before;
    }
  }
  return out;
}

// The exposed collectives of a layer's forward before its token dispatch (the attention's
// TP collectives, the context-parallel ring): GPU time the host launches beside, and calls.
struct PreDispatchComm {
  double seconds = 0, calls = 0;
};

// Host-bound time of a layer's forward beyond its GPU time. Every token dispatcher brings
// the routed-token counts to the host once per MoE layer forward (they size the expert
// GEMMs and the all-to-all splits: Megatron-Core's alltoall dispatcher synchronises at
// cuda_sync_point, DeepEP's dispatch waits on the GPU's received counts, the all-gather
// dispatcher calls .cpu()), so the host cannot run ahead across it: the part before the
// dispatch (attention, router) and the part after (experts, combine) each take the
// longer of host and GPU, and the GPU waits for the first launch after it — an eager one
// under CUDA graphs too, which cover a dropless MoE layer only up to the dispatch
// (EagerMoeKernels).
double DispatchSplitExcess(const LayerContext& L, const Part& core, const Part& attn, const Part& resid, bool moe,
                           double moe_kernels, double host_fwd, double gpu_fwd, const PreDispatchComm& comm) {
  if (!moe) return HostExcess(1, host_fwd, gpu_fwd);
  const Part* before[] = {&core, &attn, &resid};
  double kernels = moe_kernels + comm.calls, gpu = comm.seconds;
  for (const Part* q : before) {
    kernels += q->kernels_fwd;
    gpu += q->matmul_fwd_s + q->mem_fwd_bytes / L.hw.hbm_bytes_per_s();
  }
  const double host_before = std::min(host_fwd, kernels * L.host_kernel_s), gpu_before = std::min(gpu_fwd, gpu);
  return HostExcess(1, host_before, gpu_before) + HostExcess(1, host_fwd - host_before, gpu_fwd - gpu_before) +
         L.hw.kernel_overhead_s();
}

// The kernels of a MoE layer that stay eager under CUDA graphs, forward and backward:
// Megatron-Core graphs a dropless MoE layer's attention, router and preprocessing only
// (cuda_graph_modules attn, moe_router, moe_preprocess: "moe cuda graph is only supported
// with drop-padding MoE", TransformerConfig.__post_init__), so the dispatch, the experts,
// the shared experts, the un-permute and the combine are launched from the host: the MLP
// side's kernels but the router's GEMM, and the expert-parallel collectives. The router's
// and the dispatcher's own kernels (`moe_kernels`: scores, top-k, aux loss, the token
// counts) run before the dispatch, inside the graphed moe_router / moe_preprocess, where
// DispatchSplitExcess places them.
struct EagerKernels {
  double fwd = 0, bwd = 0;
};
EagerKernels EagerMoeKernels(const LayerContext& L, const Part& mlp, const MlpExtras& extras, double ep_calls) {
  if (!extras.moe || !L.shape.cuda_graphs) return {};
  return {mlp.kernels_fwd - extras.router_kernels_fwd + ep_calls, mlp.kernels_bwd - extras.router_kernels_bwd + ep_calls};
}

}  // namespace

// One layer from its sub-blocks: the attention core, the attention's linears, the
// residual path and the MLP (dense or MoE, `extras`); `mla_up` the MLA up-projections
// (nullptr without MLA), `ep_s` the expert-parallel time, `moe_kernels` the router's and
// dispatcher's kernels forward, `ep_calls` the EP collectives per direction.
BlockCosts AssembleLayer(const LayerContext& L, const Dims& x, const Core& attention, const Part& attn, const Part& resid,
                         const Part& mlp, const Part* mla_up, const MlpExtras& extras, double ep_s, double moe_kernels,
                         double ep_calls, PassTimes* host_launch) {
  const Part& core = attention.part;
  const CpCosts& cp = attention.cp;
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
  const TpExposure tp = TensorParallelExposure(L, x, attn, mlp, mla_up == nullptr, !extras.moe);
  blk.tp_fwd_s = tp.fwd_s;
  blk.tp_bwd_s = tp.bwd_s;
  blk.cp_s = cp.exposed_s;
  blk.cp_fwd_s = cp.fwd_exposed_s;
  blk.ep_s = ep_s;
  const double act_full = core.act_bytes + attn.act_bytes + resid.act_bytes + mlp.act_bytes;
  const double launched_fwd = kernels_fwd + tp.calls_fwd + ep_calls + cp.calls_fwd;
  const double launched_bwd = kernels_bwd + tp.calls_bwd + ep_calls + cp.calls_bwd;
  blk.kernels = launched_fwd + launched_bwd;
  const EagerKernels eager = EagerMoeKernels(L, mlp, extras, ep_calls);
  const double eager_extra_s = std::max(0.0, L.hw.kernel_overhead_s() - L.host_kernel_s);  // 0 in eager mode
  const double host_fwd = L.host_kernel_s * launched_fwd + eager_extra_s * eager.fwd;
  const double host_bwd = L.host_kernel_s * launched_bwd + eager_extra_s * eager.bwd;
  const double gpu_fwd = blk.fwd_s + blk.tp_fwd_s + ep_s / 2 + cp.fwd_exposed_s;
  const double gpu_bwd = blk.bwd_s + blk.tp_bwd_s + ep_s / 2 + (cp.exposed_s - cp.fwd_exposed_s);
  // A layer's recompute runs inside its backward (the checkpoint's backward re-runs the
  // forward, then differentiates it), so the host launches both in one stretch.
  double host_recompute = 0;
  const bool op_sac_shape = L.shape.framework == Framework::kTorchtitan && !extras.moe && mla_up == nullptr &&
                            L.shape.recompute_modules == 0;
  switch (L.shape.recompute) {
    case Recompute::kNone:
      blk.activation_bytes = act_full;
      break;
    case Recompute::kSelective: {
      const Recomputed r = op_sac_shape ? OpLevelSac(x, L.hw, core, attn, resid, mlp)
                                  : SelectiveRecompute(x, L.hw, L.shape.recompute_modules, core, mla_up, mlp,
                                                       extras, {ep_s, ep_calls, cp.fwd_exposed_s, cp.calls_fwd});
      blk.activation_bytes = act_full - r.saved_bytes;
      // What it re-runs exists again while its backward runs, one layer at a time (as a
      // fully recomputed layer's whole forward does).
      blk.transient_bytes = r.saved_bytes;
      blk.recompute_s = r.seconds;
      host_recompute = r.kernels * L.host_kernel_s + r.regions * L.checkpoint_s;
      blk.kernels += r.kernels;
      break;
    }
    case Recompute::kFull:
      // Keep only the layer input; re-run the whole forward (with its collectives: the
      // context-parallel ring's exposed forward exchange too).
      blk.activation_bytes = x.T * x.h * x.r * x.p;
      blk.recompute_s = blk.fwd_s + blk.tp_fwd_s + ep_s / 2 + cp.fwd_exposed_s;
      blk.transient_bytes = act_full;
      host_recompute = host_fwd + L.checkpoint_s;
      blk.kernels += launched_fwd;
      break;
  }
  unsigned recomputed = 0;
  if (L.shape.recompute == Recompute::kSelective) {
    recomputed = L.shape.recompute_modules == 0 ? kRecomputeCoreAttn : L.shape.recompute_modules;
    if (mla_up == nullptr) recomputed &= ~kRecomputeMlaUpProj;
  }
  if (L.shape.recompute == Recompute::kNone || (L.shape.recompute == Recompute::kSelective && !op_sac_shape)) {
    blk.light_recompute_bytes = std::min(blk.activation_bytes, LightRecomputeBytes(x, recomputed, mla_up, extras));
  }
  if (extras.moe && L.shape.recompute != Recompute::kFull) {
    blk.expert_offloadable_bytes = std::min(
        blk.activation_bytes,
        OffloadedBytes(x, kOffloadExpertFc1 | kOffloadMoeAct, recomputed, core, extras.rows, extras.width,
                       mla_up != nullptr));
  }
  if (L.shape.offload_modules != 0) {
    blk.offloaded_bytes =
        std::min(blk.activation_bytes, OffloadedBytes(x, L.shape.offload_modules, recomputed, core, extras.rows,
                                                      extras.width, mla_up != nullptr));
    blk.activation_bytes -= blk.offloaded_bytes;
    blk.expert_offloadable_bytes = std::min(blk.expert_offloadable_bytes, blk.activation_bytes);
  }
  blk.host_fwd_s = DispatchSplitExcess(L, core, attn, resid, extras.moe, moe_kernels, host_fwd, gpu_fwd,
                                       {tp.attn_fwd_s + cp.fwd_exposed_s, tp.attn_calls_fwd + cp.calls_fwd});
  blk.host_s = blk.host_fwd_s + HostExcess(1, host_bwd + host_recompute, gpu_bwd + blk.recompute_s);
  if (host_launch != nullptr) *host_launch = {host_fwd, host_bwd + host_recompute};
  blk.model_flops = 3 * (core.flops_fwd * (x.flash ? 2 : 1) + attn.flops_fwd + mlp.flops_fwd);
  return blk;
}
}  // namespace paraplan::transformer
