// Internal to the launcher emitters (launcher*.cc): the plan with every default resolved,
// and the small text builders they share. Not for other callers; see launcher.h.
//
// Contract: a Plan points into the LaunchInput it was resolved from (which must outlive
// it); its degrees are >= 1, its schedule and precision are never UNSPECIFIED, and its
// workload is a transformer. Each emitter is a pure function of the Plan.
#ifndef PARAPLAN_CLIENT_LAUNCHER_PLAN_H_
#define PARAPLAN_CLIENT_LAUNCHER_PLAN_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "paraplan/v1/types.pb.h"

namespace paraplan::cli::launcher {

struct Plan {
  const v1::ParallelConfig* c = nullptr;
  const v1::TransformerSpec* t = nullptr;
  std::string model, profile;
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, v = 1, mbs = 1, gbs = 1, zero = 0;
  int etp = 1;  // expert tensor parallelism, 0 resolved to tp
  int micro_batches = 1;  // per iteration and pipeline: gbs / (mbs * dp)
  int gpus = 1, per_node = 1, nodes = 1;
  int nvlink_domain = 0;  // LaunchInput's: GPUs one NVLink domain joins, 0 = one node
  int64_t ffn = 0;   // ffn_hidden_size, 0 resolved to 4 * hidden
  int kv_heads = 0;  // 0 resolved to the attention heads
  v1::Recompute recompute = v1::RECOMPUTE_NONE;
  v1::PipelineSchedule schedule = v1::SCHEDULE_1F1B;  // meaningless when pp == 1
  v1::Precision precision = v1::PRECISION_BF16;
  v1::QuantRecipe recipe = v1::QUANT_RECIPE_UNSPECIFIED;
  // The estimate kept and reduced gradients in 16 bits: MIXED_PRECISION_BF16_GRADS, stated
  // or FRAMEWORK_NEMO's default.
  bool grads_16bit = false;
  // Adam's moments in 2 bytes (Workload.optimizer_moments BF16 / FP16): Megatron-Core's
  // precision-aware optimizer; "bf16" or "fp16", empty for fp32.
  std::string moments_16bit;
  // The estimate ran Megatron-Core's precision-aware optimizer: 2-byte moments, or NeMo's
  // performance scripts' default for BF16 Adam short of ZeRO-3 (fp32 moments, the master
  // weights' remainders and decoupled gradients: model_costs.h precision_aware_by_default).
  bool precision_aware_optimizer = false;
  // The workload trains with Muon (OPTIMIZER_MUON): Megatron-Core's optimizer "muon",
  // layer-wise distributed under ZeRO 1.
  bool muon = false;
  // The estimate's loss was a fused cross-entropy (FRAMEWORK_NEMO: Megatron-Core's, as
  // NeMo's and Megatron-Bridge's model providers set cross_entropy_loss_fusion;
  // FRAMEWORK_PYTORCH_FSDP: flash-attn's), not Megatron-LM's op-by-op default.
  bool fused_cross_entropy = false;

  bool gqa() const { return kv_heads != t->num_attention_heads(); }
  // A head dimension other than hidden / heads (Megatron's --kv-channels).
  bool own_head_dim() const {
    return t->head_dim() > 0 && t->head_dim() * t->num_attention_heads() != t->hidden_size();
  }
  bool moe() const { return t->has_moe() && t->moe().num_experts() > 1; }
  // The expert grid (etp x ep ranks, innermost) leaves its node inside one NVLink domain
  // that spans nodes (GB200 / GB300 NVL72): there Megatron-Core's flex dispatcher reaches
  // the other nodes over NVLink only with its HybridEP backend ("Currently only hybridep
  // supports the MNNVL case": TransformerConfig.moe_flex_dispatcher_backend); DeepEP's
  // would go over the NICs, not the all-to-all that was estimated.
  bool mnnvl_experts() const {
    return nvlink_domain > per_node && int64_t{etp} * ep > per_node;
  }
  bool offload_any() const { return c->offload().optimizer() || c->offload().weights() || c->offload().activations(); }
  // Ranks are placed tp-cp-ep-pp-dp (innermost first) instead of the default
  // tp-cp-ep-dp-pp, and that makes a difference (pipeline and data parallel both > 1).
  bool pp_inside_dp() const { return c->rank_order() == "tp-cp-ep-pp-dp" && pp > 1 && dp > 1; }
  // A schedule the Megatron family (Megatron-LM, NeMo, DeepSpeed) cannot run.
  bool foreign_schedule() const {
    return pp > 1 && (schedule == v1::SCHEDULE_GPIPE || schedule == v1::SCHEDULE_ZERO_BUBBLE);
  }
  // The end stages' layer counts are given (uneven pipeline layout).
  bool stage_layers() const {
    return pp > 1 && (c->first_pipeline_stage_layers() > 0 || c->last_pipeline_stage_layers() > 0);
  }
  // Layers per virtual stage when the layers divide evenly over pp * v stages, else 0.
  int LayersPerVirtualStage() const {
    return !stage_layers() && t->num_layers() % (pp * v) == 0 ? t->num_layers() / (pp * v) : 0;
  }
};

const char* RecomputeName(v1::Recompute r);        // none | selective | full
const char* ScheduleName(v1::PipelineSchedule s);  // 1f1b | interleaved 1f1b | gpipe | zero-bubble
const char* Bool(bool b);                          // true | false

// Megatron-Core's model-parallel degrees, sequence parallelism and end-stage layer counts
// under its ModelParallelConfig / TransformerConfig names, which NeMo 1.x's `model:`
// section and Megatron-Bridge's `model.*` overrides both take: out->Add(prefix + name, value).
template <typename Out>
void AddCoreParallelism(const Plan& p, const std::string& prefix, Out* out) {
  out->Add(prefix + "tensor_model_parallel_size", p.tp);
  out->Add(prefix + "pipeline_model_parallel_size", p.pp);
  out->Add(prefix + "virtual_pipeline_model_parallel_size", p.v > 1 ? absl::StrCat(p.v) : "null");
  out->Add(prefix + "context_parallel_size", p.cp);
  out->Add(prefix + "expert_model_parallel_size", p.ep);
  if (p.moe()) out->Add(prefix + "expert_tensor_parallel_size", p.etp);
  if (p.stage_layers() && p.c->first_pipeline_stage_layers() > 0) {
    out->Add(prefix + "num_layers_in_first_pipeline_stage", p.c->first_pipeline_stage_layers());
  }
  if (p.stage_layers() && p.c->last_pipeline_stage_layers() > 0) {
    out->Add(prefix + "num_layers_in_last_pipeline_stage", p.c->last_pipeline_stage_layers());
  }
  out->Add(prefix + "sequence_parallel", Bool(p.c->sequence_parallel()));
}

// Per layer, 1 where the layer is an MoE layer / attends through a sliding window, as the
// contract defines them (types.proto MoeSpec: the first first_dense_layers dense, then
// every moe_layer_interval-th layer from the first; SlidingWindow: every
// layer_interval-th layer from layer 0) — the estimator's TransformerSpec::IsMoeLayer and
// IsWindowLayer.
std::vector<int> MoeLayers(const v1::TransformerSpec& t);
std::vector<int> WindowLayers(const v1::TransformerSpec& t);
// Megatron-Core's cp_comm_type a layer, where Transformer Engine cannot ring a windowed
// one (estimator/inputs/cp_exchange.h): "p2p" for full layers, "a2a" or "all_gather" for
// windowed ones; empty where every layer rings (no window, or CP 1).
std::vector<std::string> CpCommTypes(const Plan& p);
// A 0/1 layer pattern as the Python list expression Megatron's moe_freq_type evaluates:
// "[0]*3+[1]*58", "[1,0]*18"; the plain list when no shorter form fits.
std::string LayerPatternExpression(const std::vector<int>& bits);
// The shared experts as Megatron-Core builds them: one MLP as wide as all of them.
int64_t SharedExpertWidth(const v1::MoeSpec& m);

// Where the plan recomputes Megatron-Core's modules beyond core_attn under selective
// recompute and `framework` has no such modules: a note saying what its selective
// recompute does `instead`; "" otherwise.
std::string UnrunModulesNote(const Plan& p, const std::string& framework, const std::string& instead);

// The plan's CUDA graphs as Megatron-Core can run them (TransformerConfig.__post_init__,
// cuda_graph_impl / cuda_graph_modules): a dense model's whole layers ("local"), or under
// full recompute one graph of the iteration ("full_iteration": "full recompute is only
// supported with full iteration CUDA graph"); a MoE model's dropless layers only as their
// attention, router and preprocessing ("transformer_engine" with modules attn, moe_router,
// moe_preprocess, as Megatron-Bridge's MoE performance recipes run them: the experts'
// shapes follow the routing, "moe cuda graph is only supported with drop-padding MoE"),
// and none under full recompute. `note` says where that falls short of the estimate.
struct CudaGraphLaunch {
  std::string impl;                  // "" = no CUDA graphs emitted
  std::vector<std::string> modules;  // empty = whole layers
  std::string note;
};
CudaGraphLaunch MegatronCudaGraphs(const Plan& p);
// Hidden and attention dropout as the contract resolves it: absent = kDefaultDropout
// (Megatron-LM's 0.1).
double Dropout(const v1::TransformerSpec& t);

// "# TITLE for MODEL on PROFILE: N GPUs (M nodes x K)" and "# plan: TP.. PP.. ...".
std::string Header(const std::string& title, const Plan& p);

// "# note: ..." lines, in the order added.
class Notes {
 public:
  void Add(const std::string& text) { text_ += absl::StrCat("# note: ", text, "\n"); }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// A shell command line: "PROGRAM \" and then "    --flag [value] \" a line.
class CommandLine {
 public:
  void Add(std::string flag) { args_.push_back(std::move(flag)); }
  template <typename T>
  void Add(const std::string& flag, const T& value) {
    args_.push_back(absl::StrCat(flag, " ", value));
  }
  std::string Render(const std::string& program) const {
    std::string out = program;
    for (const std::string& a : args_) absl::StrAppend(&out, " \\\n    ", a);
    return absl::StrCat(out, "\n");
  }

 private:
  std::vector<std::string> args_;
};

// Megatron-Core's EP all-to-all overlap (moe_a2a_overlap): what the launch needs beyond
// the two flags (--overlap-moe-expert-parallel-comm --delay-wgrad-compute, the pairing the
// estimate assumes) as a note: CUDA_DEVICE_MAX_CONNECTIONS above 1, and with TP or CP on
// Hopper, Megatron-LM's warning that their communication then overlaps worse.
void A2aOverlapNote(const Plan& p, Notes* notes);

// The emitters (launcher_megatron.cc, launcher_configs.cc, launcher_bridge.cc).
std::string Megatron(const Plan& p);
std::string DeepSpeed(const Plan& p);
std::string Nemo(const Plan& p);
std::string Torchtitan(const Plan& p);
std::string MegatronBridge(const Plan& p);  // launcher_bridge.cc

}  // namespace paraplan::cli::launcher

#endif  // PARAPLAN_CLIENT_LAUNCHER_PLAN_H_
