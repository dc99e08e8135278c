// Per-layer costs of a transformer (GPT / Llama / MoE) on one GPU for one micro-batch.
//
// FLOPs and activation bytes follow Narayanan et al. SC'21 (eq. 3) and Korthikanti et
// al. 2022 (sec. 4, activations per layer s*b*h*(34 + 5*a*s/h) and its TP/SP/recompute
// variants), generalised to grouped-query attention, gated MLPs, context and expert
// parallelism by counting each stored tensor explicitly.
#include <algorithm>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "estimator/workloads/model_costs.h"
#include "estimator/workloads/transformer_blocks.h"
#include "estimator/workloads/transformer_comm.h"
#include "estimator/workloads/transformer_ends.h"
#include "estimator/workloads/transformer_layer.h"
#include "estimator/workloads/transformer_recompute.h"

namespace paraplan {

namespace {

using namespace transformer;  // NOLINT: the sub-blocks and collectives this file assembles

// SMs the expert-parallel dispatch and combine kernels occupy while they run: DeepEP's
// default (deep_ep Buffer.num_sms = 24, DeepSeek-AI DeepEP README, normal kernels).
constexpr double kEpCommSms = 24;

// What every layer kind of one model shares: its spec and shape, the rates and groups,
// the attention cores (full and, for sliding-window layers, windowed).
struct ModelContext {
  const TransformerSpec& spec;
  const ModelShape& shape;
  const Hardware& hw;
  const Collectives& coll;
  const LayerContext& layer;
  GroupSpan ep, etp_group;  // the expert grid: expert-TP innermost, then EP (Megatron-Core folding)
  Core core_full, core_window;
  bool windowed = false;
};

// The attention side and residual every layer kind shares, for one setting of the
// linears' precision: the attention block (MLA's, with its up projections apart), the
// MLP's residual half, and the attention's parameters and tensors.
struct AttentionSide {
  Part attn, mla_up, resid;
  bool mla = false;
  double params = 0, tensors = 0, norm_tensors = 0;
  double qk_norm_tensors = 0;  // the query and key norms' parameter tensors (not weight matrices)
};

AttentionSide AttentionSideOf(const ModelContext& m, const Dims& x) {
  AttentionSide a;
  a.mla = m.spec.mla.enabled();
  a.attn = a.mla ? MlaBlock(x, m.hw, m.spec.mla, &a.mla_up) : AttentionBlock(x, m.hw);
  a.resid = MlpResidual(x);
  a.params = a.mla ? MlaParams(x, m.spec.mla)
                   : x.h * (x.a + 2 * x.g) * x.d / x.t + x.a * x.d * x.h / x.t + 2 * x.norm_params;
  // Parameter tensors beyond the four linears: MLA adds a linear and a norm per latent.
  a.tensors = a.mla ? (m.spec.mla.q_lora_rank > 0 ? 4 : 2) : 0;
  a.norm_tensors = m.spec.normalization == Normalization::kRmsNorm ? 1 : 2;
  if (x.qk_norm) {
    // The query and key norms: each of its parameter vectors head_dim wide, replicated over TP.
    a.qk_norm_tensors = 2 * a.norm_tensors;
    a.params += a.qk_norm_tensors * x.d;
  }
  return a;
}

// One layer of `core` attention and `mlp`; `moe_kernels` the router's and dispatcher's
// kernels forward (Megatron-Core MoE token dispatcher), `ep_calls` the expert-parallel
// collectives per direction.
BlockCosts MakeLayer(const ModelContext& m, const Dims& x, const AttentionSide& a, const Core& core, const Part& mlp,
                     const MlpExtras& extras, double ep_s, double moe_kernels, double ep_calls,
                     PassTimes* host_launch = nullptr) {
  return AssembleLayer(m.layer, x, core, a.attn, a.resid, mlp, a.mla ? &a.mla_up : nullptr, extras, ep_s, moe_kernels,
                       ep_calls, host_launch);
}

// A dense layer. Parameter tensors: two norms (scale, and bias for LayerNorm), four
// linears' weights and biases (Megatron-LM's GPT layer), MLA's.
BlockCosts DenseLayer(const ModelContext& m, const Dims& x, const AttentionSide& a, const Core& core) {
  BlockCosts b = MakeLayer(m, x, a, core,
                            MlpBlock(x, m.hw, x.T, x.f, 1, x.t, x.r, {.input_share = x.r, .norm_fused = true},
                                     {.grad_share = x.r}),
                            MlpExtras{}, 0, 0, 0);
  b.params = a.params + x.h * x.f * (x.gated ? 3 : 2) / x.t;
  b.tensors = 2 * a.norm_tensors + 8 + a.tensors + a.qk_norm_tensors;
  b.weight_tensors = 4 + a.tensors / 2;
  return b;
}

// A MoE layer's MLP side on this GPU: the routed experts, the router, the permutes, the
// shared experts, and their dispatch.
struct MoeMlp {
  Part mlp;     // all of it, as one sub-block
  Part routed;  // the routed experts alone
  MlpExtras extras;
  MoeDispatch dispatch;
  double shared_f = 0, local_experts = 0, fe = 0;
};

MoeMlp MoeMlpOf(const ModelContext& m, const Dims& x) {
  const MoeSpec& moe = m.spec.moe;
  MoeMlp o;
  const double experts = moe.num_experts;
  const double k = moe.top_k;
  const int etp = m.shape.expert_tensor_parallel;
  o.fe = static_cast<double>(moe.expert_ffn_hidden_size);
  o.local_experts = experts / m.shape.expert_parallel;
  // Routing: each GPU dispatches its own tokens (T/t under SP, all T without) times
  // top_k; its expert-TP group pools what the EP all-to-all brings them, so each GPU's
  // experts see etp times its own share, with weights f/etp wide. Balanced, that is the
  // same token-expert work per GPU whatever the folding. The GPU of the busiest expert
  // sees load_imbalance times that, and every other waits for it (its GEMMs, what it
  // stores, what it receives in the all-to-all).
  const double sent_rows = x.T * x.r * k * moe.load_imbalance;
  const double rows = sent_rows * etp;
  o.routed = MlpBlock(x, m.hw, rows, o.fe, o.local_experts, etp, 1);
  o.mlp = o.routed;
  // Router: T x h x E matmul in 16 bits (or fp32) under any recipe (Megatron-Core
  // moe_utils.py router_gating_linear: torch.mm in router_dtype, outside Transformer
  // Engine's quantisation); it keeps its input, the pre-MLP norm's output (this GPU's
  // share under SP), which the shared experts read too.
  Dims router = x;
  router.bf16_linears = true;
  router.wgrad_out_bytes = x.p;  // a plain torch.mm: its .grad is written, then added to main_grad
  const double fwd_before = o.mlp.kernels_fwd, bwd_before = o.mlp.kernels_bwd;
  Linear(m.hw, router, x.T, experts, x.h, 1, &o.mlp);
  o.extras.router_kernels_fwd = o.mlp.kernels_fwd - fwd_before;
  o.extras.router_kernels_bwd = o.mlp.kernels_bwd - bwd_before;
  o.mlp.act_bytes += x.T * x.r * x.h * x.p;
  // Permute before dispatch and un-permute after combine (Megatron-Core moe_utils,
  // fused): each reads and writes the rows and keeps nothing for backward (a scatter-add).
  // The routing probabilities weight the experts' activation instead (experts.py,
  // weighted_bias_swiglu_impl), which keeps them: one fp32 value per routed row.
  MemoryBound(4 * sent_rows * x.h * x.p, 2, &o.mlp);
  o.mlp.act_bytes += rows * 4;
  // Shared experts: one dense MLP over every token, as wide as all of them together
  // (Megatron-Core's SharedExpertMLP), sharded over TP like the dense MLP. Its input is
  // the router's, stored once where its first linear keeps the 16-bit tensor; under a
  // low-precision recipe that linear keeps its quantised copy (pin) beside the router's
  // 16-bit one. Its TP collectives are taken to overlap the dispatch
  // (moe_shared_expert_overlap).
  o.shared_f = moe.num_shared_experts * static_cast<double>(moe.shared_expert_ffn_hidden_size);
  Part shared;
  if (o.shared_f > 0) {
    // TEColumnParallelLinear / TERowParallelLinear over the pre-MLP norm's output (its own
    // module in an MoE layer).
    shared = MlpBlock(x, m.hw, x.T, o.shared_f, 1, x.t, x.r, {.input_share = x.r}, {.grad_share = x.r});
    if (x.pin == x.p) shared.act_bytes -= x.T * x.h * x.r * x.p;
    AddPart(shared, &o.mlp);
  }
  const TokenSpread spread{k, experts, moe.router_num_groups, moe.router_group_topk};
  o.dispatch = Dispatch(x, m.coll, m.shape, sent_rows, spread, m.ep, m.etp_group);
  o.extras.moe = true;
  // The activation function's output as fc2 keeps it (quantised under FP8 / FP4: pin).
  // Recomputing moe_act drops it whole: under FP8 / FP4 Megatron-Core has fc2 keep the
  // 16-bit original and discards that (experts.py, set_save_original_input), so what is
  // saved against not recomputing is the quantised copy (until stop 69 the 16-bit
  // tensor was taken off the quantised one, so a busier busiest expert, with moe_act
  // also offloaded, held less).
  o.extras.act_out_bytes = rows * o.fe / etp * x.pin;
  o.extras.act_fwd_bytes = (x.gated ? 3 : 2) * rows * o.fe / etp * x.p;
  o.extras.rows = rows;
  o.extras.width = o.fe / etp;
  o.extras.shared = shared;
  return o;
}

// A paired step of the combined 1F1B: one host thread launches both micro-batches'
// kernels, forward and backward interleaved, so the pair takes the longer of the GPU's
// work (less the all-to-all `hidden` behind the other's compute) and the host's launches
// of both (`host_launch`), the host's time pooled over the two passes: a pass's
// host-bound stretch runs beside the other's GPU work. Takes both off `b` (ep_s and
// host_s count every step paired) and records them for the unpaired steps to pay back.
// What remains host-bound is placed so that each pass lasts its share of the pair as the
// host's launches divide it (where the host sets the pace, each pass its own launches),
// so that the streams beside each pass see windows that do not move between the passes
// as the GPU's work grows or shrinks.
// (Until stop 68 the hidden all-to-all came off a host-bound layer too, so a faster
// network, which hid less, made it slower; until stop 69 each pass's host-bound excess
// stayed apart, so a GPU-bound pass's growth hid more of the all-to-all while the other
// pass's host still set its length: more routing imbalance ran faster.)
void PairLayer(const PassTimes& host_launch, double hidden, BlockCosts* b) {
  const double launches = host_launch.fwd + host_launch.bwd;
  const double gpu = b->TotalS() - b->host_s;
  const double ep = std::min(hidden, std::max(0.0, gpu - launches));
  const double host = std::max(0.0, launches - (gpu - ep));
  b->ep_paired_saving_s = ep;
  b->ep_s -= ep;
  // The forward's GPU path once the hidden all-to-all is off (CriticalPath, half the
  // all-to-all each way), and its share of the pair's length.
  const double fwd_gpu = CriticalPath(*b).fwd - b->host_fwd_s;
  const double pair = gpu - ep + host;
  const double fwd_wall = launches > 0 ? pair * (host_launch.fwd / launches) : 0;
  const double host_fwd = std::clamp(fwd_wall - fwd_gpu, 0.0, host);
  b->host_paired_saving_s = b->host_s - host;
  b->host_paired_saving_fwd_s = b->host_fwd_s - host_fwd;
  b->host_s = host;
  b->host_fwd_s = host_fwd;
}

// A MoE layer of `core` attention.
BlockCosts MoeLayer(const ModelContext& m, const Dims& x, const AttentionSide& a, const MoeMlp& o, const Core& core) {
  const double ovl = m.layer.ovl;
  PassTimes host_launch;
  BlockCosts b =
      MakeLayer(m, x, a, core, o.mlp, o.extras, o.dispatch.seconds, 6, o.dispatch.calls_per_direction, &host_launch);
  if (m.shape.moe_a2a_overlap) {
    // Megatron-Core's combined 1F1B runs one micro-batch's forward of a layer beside
    // another's backward of it (TransformerLayerSchedulePlan.run,
    // model_chunk_schedule_plan.py), each of the four all-to-alls (a quarter of ep_s)
    // beside one stretch of the other's compute, hidden as far as that stretch lasts:
    // the backward's combine beside the forward's attention (pre-dispatch), the
    // forward's dispatch beside the MLP's backward, the backward's dispatch beside its
    // weight gradients and the forward MLP, the forward's combine beside the backward's
    // attention (with what it recomputes). Meanwhile the communication kernels hold
    // kEpCommSms of the GPU's SMs, and the compute beside them runs on the rest.
    const double bw = m.hw.hbm_bytes_per_s();
    const double mlp_f = o.mlp.matmul_fwd_s + o.mlp.mem_fwd_bytes / bw;
    const double mlp_b = o.mlp.matmul_bwd_s + (2 * o.mlp.mem_fwd_bytes + o.mlp.mem_bwd_bytes) / bw;
    const double attn_f = std::max(0.0, b.fwd_s - mlp_f);
    const double attn_b = std::max(0.0, b.bwd_s + b.recompute_s - mlp_b);
    const double a2a = b.ep_s / 4;
    const double hidden = std::min(a2a, ovl * attn_f) + std::min(a2a, ovl * std::max(0.0, mlp_b - o.mlp.wgrad_s)) +
                          std::min(a2a, ovl * (o.mlp.wgrad_s + mlp_f)) + std::min(a2a, ovl * attn_b);
    const double sm_share = m.hw.sm_count() > 0 ? std::min(1.0, kEpCommSms / m.hw.sm_count()) : 0;
    // Of that, the schedule hides ep_overlap_efficiency (measured: the zoo's Qwen3 pair).
    const double saving = m.hw.ep_overlap_efficiency() * (hidden - hidden * sm_share);
    PairLayer(host_launch, saving, &b);
  }
  // Useful FLOPs are the balanced ones: the busiest GPU's excess is waiting, not work.
  b.model_flops -= 3 * o.routed.flops_fwd * (1 - 1 / m.spec.moe.load_imbalance);
  const double mats = x.gated ? 3 : 2;
  const int etp = m.shape.expert_tensor_parallel;
  b.expert_params = o.local_experts * x.h * o.fe * mats / etp;
  b.params = a.params + x.h * m.spec.moe.num_experts + x.h * o.shared_f * mats / x.t + b.expert_params;
  // + router, experts' linears, the shared experts' two linears (weight and bias).
  b.tensors = 2 * a.norm_tensors + 4 + a.tensors + a.qk_norm_tensors + 1 + 4 * o.local_experts +
              (o.shared_f > 0 ? 4 : 0);
  b.weight_tensors = 2 + a.tensors / 2 + 1 + 2 * o.local_experts + (o.shared_f > 0 ? 2 : 0);
  b.expert_weight_tensors = 2 * o.local_experts;
  return b;
}

// The layer kinds (dense or MoE, full or windowed attention) for one setting of the
// linears' precision.
struct LayerKinds {
  BlockCosts dense, dense_window, moe, moe_window;
  MoeDispatcher dispatcher;  // the MoE layers'
};

// What every shape that differs only in its expert layout (expert_parallel,
// expert_tensor_parallel, the dispatcher, the all-to-all overlap) shares: the layer's
// dimensions, its TP and CP collectives, attention, the dense layers, the embedding and
// the head (without MTP). The MoE layers are built on it per shape.
struct SharedSide {
  Dims x;
  GroupSpan tp;
  TpCollectives tpc;
  double ovl = 0, host_kernel_s = 0, checkpoint_s = 0;
  Core core_full, core_window;
  bool windowed = false;
  AttentionSide a;
  BlockCosts dense, dense_window, pre, post;
};

// `shape`'s expert fields are not read (ModelContext's expert groups are left empty).
SharedSide SharedSideOf(const Workload& workload, const TransformerSpec& spec, const ModelShape& shape,
                        const Hardware& hw, const Collectives& coll) {
  SharedSide d;
  Dims& x = d.x;
  x = LayerDims(workload, spec, shape);
  x.fp8_any_layout = hw.fp8_any_layout();
  d.tp = coll.Place(shape.tensor_parallel, 1);
  const GroupSpan cp = coll.Place(shape.context_parallel, shape.tensor_parallel);
  d.ovl = hw.overlap_efficiency();
  d.host_kernel_s = HostPerKernelS(shape, hw);
  d.checkpoint_s = shape.cuda_graphs ? 0.0 : hw.recompute_overhead_s();
  d.core_full.part = AttentionCore(x, hw, 0, x.full_cp);
  d.core_full.cp = ContextParallel(x, coll, cp, d.core_full.part, d.ovl, x.full_cp);
  d.core_window = d.core_full;
  d.windowed = spec.sliding_window.tokens > 0 && spec.sliding_window.tokens < spec.seq_length;
  if (d.windowed) {
    d.core_window.part = AttentionCore(x, hw, static_cast<double>(spec.sliding_window.tokens), x.window_cp);
    d.core_window.cp = ContextParallel(x, coll, cp, d.core_window.part, d.ovl, x.window_cp);
  }
  d.tpc = TpCosts(x, coll, d.tp);
  const LayerContext layer{hw, shape, d.tpc, d.ovl, d.host_kernel_s, d.checkpoint_s};
  ModelContext m{spec, shape, hw, coll, layer, GroupSpan{}, GroupSpan{}, d.core_full, d.core_window};
  m.windowed = d.windowed;
  d.a = AttentionSideOf(m, x);
  d.dense = DenseLayer(m, x, d.a, d.core_full);
  d.dense_window = d.windowed ? DenseLayer(m, x, d.a, d.core_window) : d.dense;
  d.pre = EmbeddingCosts(x, hw, coll, d.tp, d.host_kernel_s);
  d.post = HeadCosts(x, spec, hw, coll, d.tp, d.host_kernel_s);
  return d;
}

LayerKinds KindsOf(const ModelContext& m, const SharedSide& d) {
  LayerKinds kinds;
  kinds.dense = d.dense;
  kinds.dense_window = d.dense_window;
  kinds.dispatcher = m.shape.moe_dispatcher;
  if (m.spec.is_moe()) {
    const MoeMlp o = MoeMlpOf(m, d.x);
    kinds.dispatcher = o.dispatch.dispatcher;
    kinds.moe = MoeLayer(m, d.x, d.a, o, d.core_full);
    kinds.moe_window = d.windowed ? MoeLayer(m, d.x, d.a, o, d.core_window) : kinds.moe;
  }
  return kinds;
}

// The part of a shape SharedSideOf reads, with the workload, hardware and collectives
// it was computed for.
struct SharedKey {
  const Workload* workload;
  const Hardware* hw;
  const Collectives* coll;
  int tp, cp, mbs;
  Recompute recompute;
  unsigned recompute_modules, offload_modules;
  bool sp, flash, cuda_graphs, tp_comm_overlap;
  CollectiveAlgorithm tp_algorithm;
  Framework framework;

  static SharedKey Of(const Workload& w, const ModelShape& s, const Hardware& hw, const Collectives& coll) {
    return {&w,          &hw,         &coll, s.tensor_parallel, s.context_parallel, s.micro_batch_size, s.recompute,
            s.recompute_modules, s.offload_modules, s.sequence_parallel, s.flash_attention, s.cuda_graphs,
            s.tp_comm_overlap, s.tp_algorithm, s.framework};
  }
  auto Tie() const {
    return std::tie(workload, hw, coll, tp, cp, mbs, recompute, recompute_modules, offload_modules, sp, flash,
                    cuda_graphs, tp_comm_overlap, tp_algorithm, framework);
  }
  bool operator==(const SharedKey& o) const { return Tie() == o.Tie(); }
  template <typename H>
  friend H AbslHashValue(H h, const SharedKey& k) {
    return H::combine(std::move(h), k.workload, k.hw, k.coll, k.tp, k.cp, k.mbs, k.recompute, k.recompute_modules,
                      k.offload_modules, k.sp, k.flash, k.cuda_graphs, k.tp_comm_overlap, k.tp_algorithm,
                      k.framework);
  }
};

}  // namespace

struct TransformerMemo::Table {
  absl::flat_hash_map<SharedKey, SharedSide> sides;
};

TransformerMemo::TransformerMemo() : table_(std::make_unique<Table>()) {}
TransformerMemo::~TransformerMemo() = default;
TransformerMemo::TransformerMemo(TransformerMemo&&) noexcept = default;
TransformerMemo& TransformerMemo::operator=(TransformerMemo&&) noexcept = default;

absl::StatusOr<ModelCosts> TransformerCosts(const Workload& workload, const ModelShape& shape,
                                            const Hardware& hw, const Collectives& coll, TransformerMemo* memo) {
  const TransformerSpec spec = workload.transformer.Resolved();
  std::optional<SharedSide> local;  // built only without a memo's entry
  const SharedSide* shared = nullptr;
  if (memo != nullptr && spec.is_moe()) {  // a dense model's shapes share no expert layout
    auto& sides = memo->table_->sides;
    const SharedKey key = SharedKey::Of(workload, shape, hw, coll);
    auto it = sides.find(key);
    if (it == sides.end()) {
      if (sides.size() >= TransformerMemo::kMaxEntries) sides.clear();
      it = sides.emplace(key, SharedSideOf(workload, spec, shape, hw, coll)).first;
    }
    shared = &it->second;
  } else {
    shared = &local.emplace(SharedSideOf(workload, spec, shape, hw, coll));
  }
  const SharedSide& d = *shared;
  const Dims& x = d.x;
  const LayerContext layer{hw, shape, d.tpc, d.ovl, d.host_kernel_s, d.checkpoint_s};
  const int etp = shape.expert_tensor_parallel;
  ModelContext m{spec,          shape,         hw, coll, layer, coll.Place(shape.expert_parallel, etp),
                 coll.Place(etp, 1), d.core_full, d.core_window};
  m.windowed = d.windowed;

  const LayerKinds kinds = KindsOf(m, d);
  // Every transformer layer runs the recipe, NVFP4 included: Megatron-LM's
  // --first-last-layers-bf16 and Megatron-Bridge's first_last_layers_bf16 are off unless
  // set (bf16_with_nvfp4_mixed leaves them; NVIDIA's NVFP4 paper kept ~15 % of a 12B
  // model's layers in BF16, a training choice the API does not state). The embedding and
  // the LM head stay BF16 (HeadCosts).
  ModelCosts out;
  out.moe_dispatcher = kinds.dispatcher;
  out.layers.reserve(spec.num_layers);
  for (int i = 0; i < spec.num_layers; ++i) {
    const bool w = spec.IsWindowLayer(i);
    out.layers.push_back(spec.IsMoeLayer(i) ? (w ? kinds.moe_window : kinds.moe)
                                            : (w ? kinds.dense_window : kinds.dense));
  }

  out.pre = d.pre;
  out.post = d.post;
  AddMultiTokenPrediction(x, spec, hw, &out);
  if (spec.tied_embeddings || spec.mtp_num_layers > 0) out.stage_embedding_copy_params = d.pre.params;

  // Each TP rank sends 1/t of the boundary activation (Megatron-LM's scatter-gather, or
  // sequence-parallel already), or all of it (DeepSpeed's pipeline engine).
  out.pp_send_bytes = x.T * x.h * x.p / (SendsWholeStageActivation(shape.framework, shape.sequence_parallel) ? 1 : x.t);
  out.tokens_per_sample = x.s;
  // Useful FLOPs per sample over the whole model (all GPUs of one model replica).
  double flops_mb = out.post.model_flops * x.t * x.c;
  for (const BlockCosts& l : out.layers) flops_mb += l.model_flops * x.t * x.c;
  out.model_flops_per_sample = flops_mb / x.b;
  return out;
}

}  // namespace paraplan
