// ModelCosts: what one micro-batch costs on one GPU, block by block, for one "shape"
// of a configuration (the degrees that change per-layer work: tensor, context, expert,
// spatial/filter/channel parallelism, micro-batch size, recompute, sequence parallel,
// flash attention).
//
// This is the seam between workload kinds and the rest of the model: a transformer
// (transformer_costs.cc) and a CNN layer graph (layer_graph_costs.cc) each produce
// ModelCosts; pipeline staging, memory, data parallelism and search only read it.
// Values are per GPU and per micro-batch; times are exposed times (what overlaps is
// already subtracted). Computed once per shape and reused across the other degrees.
#ifndef PARAPLAN_ESTIMATOR_WORKLOADS_MODEL_COSTS_H_
#define PARAPLAN_ESTIMATOR_WORKLOADS_MODEL_COSTS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "estimator/inputs/interrupt.h"
#include "estimator/inputs/parallel_config.h"
#include "estimator/inputs/workload.h"
#include "estimator/system/collectives.h"
#include "estimator/system/hardware.h"
#include "estimator/workloads/muon.h"

namespace paraplan {

// The configuration degrees that change the work of one block.
// The framework's defaults where the workload leaves them. PyTorch-native stacks
// (torchtitan, PyTorch FSDP) keep fp32 parameters and compute with 16-bit copies (FSDP2's
// MixedPrecisionPolicy, autocast); Megatron-LM, NeMo and DeepSpeed keep fp32 masters in
// the optimizer. torchtitan's float8 scales tensor by tensor from this step's amax
// (torchao's tensorwise recipe: current scaling); Transformer Engine's default is
// delayed scaling.
MixedPrecision ResolvedMixedPrecision(const Workload& w, Framework f);

// Whether `c` overlaps its tensor-parallel collectives with the GEMMs: as stated, else the
// framework's default. NeMo's performance scripts run Transformer Engine's userbuffer
// overlap on every dense model at TP > 1 (Megatron-Bridge's Llama 3 / 3.1 recipes,
// recipes/llama/llama3.py CommOverlapConfig(tp_comm_overlap=True), and
// scripts/performance/configs/llama/*_llm_pretrain.py), but under NVFP4 ("tp_comm_overlap =
// False if precision == 'nvfp4'"); every MoE configuration they ship at TP > 1 runs without
// it (DeepSeek-V3's and Kimi-K2's recipes, Qwen3-235B-A22B's H100 script). Megatron-LM,
// DeepSpeed, torchtitan (async TP) and PyTorch FSDP leave it off. Needs sequence
// parallelism, as Transformer Engine's overlap does.
bool ResolvedTpCommOverlap(const Workload& w, const ParallelConfig& c);
QuantRecipe ResolvedRecipe(const Workload& w, Framework f);

// Bytes an element of what Transformer Engine's linears all-gather under sequence
// parallelism: their quantised input (and, backward, output gradient) where Megatron-Core's
// modules run FP8 / FP4 linears (the recipe's QuantisedBytesPerElement), 0 where they
// gather the 16-bit tensor (other precisions and frameworks).
double QuantisedSpGatherBytes(const Workload& w, Framework f);

struct ModelShape {
  int tensor_parallel = 1;
  int context_parallel = 1;
  int expert_parallel = 1;
  int expert_tensor_parallel = 1;  // resolved (never 0)
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllToAll;
  // The search's question: with the all-to-all dispatcher, take DeepEP instead wherever
  // its dispatch is faster (the two differ in nothing else); ModelCosts.moe_dispatcher
  // says which was taken. ModelShape::Of leaves it off.
  bool weigh_deepep = false;
  bool moe_a2a_overlap = false;
  int spatial_parallel = 1;
  int filter_parallel = 1;
  int channel_parallel = 1;
  int spatial_layers = 0;  // layers [0, spatial_layers) split spatially; 0 = all
  int spatial_axes = 1;
  int micro_batch_size = 1;
  Recompute recompute = Recompute::kNone;
  unsigned recompute_modules = 0;  // RecomputeModule bits under kSelective; 0 = core_attn
  unsigned offload_modules = 0;    // OffloadModule bits (fine-grained activation offloading)
  bool sequence_parallel = false;
  bool flash_attention = false;
  bool cuda_graphs = false;
  bool tp_comm_overlap = false;
  CollectiveAlgorithm tp_algorithm = CollectiveAlgorithm::kAuto;
  Framework framework = Framework::kAny;  // whose layer implementation stores what

  static ModelShape Of(const ParallelConfig& normalized);
};

struct BlockCosts {
  double fwd_s = 0;           // forward compute
  double bwd_s = 0;           // backward compute
  double recompute_s = 0;     // forward work re-done in backward (incl. its comm)
  double tp_fwd_s = 0;        // exposed intra-layer (TP / filter / channel) comm
  double tp_bwd_s = 0;
  double spatial_fwd_s = 0;   // exposed comm among spatial ranks (CNN halos, statistics, cut)
  double spatial_bwd_s = 0;
  double cp_s = 0;            // exposed context-parallel comm, fwd + bwd
  double cp_fwd_s = 0;        // of which in forward
  double ep_s = 0;            // exposed expert-parallel all-to-all, fwd + bwd
  // Of the all-to-all, what moe_a2a_overlap hides (net of the SMs it takes) where a step
  // pairs one micro-batch's forward with another's backward; ep_s counts it hidden, and
  // the steps that run alone pay it back (Assemble: A2aPairedShare).
  double ep_paired_saving_s = 0;
  // Of the host-bound time, what such a paired step takes off by launching both micro-
  // batches' kernels as one stretch beside both passes' GPU work (host_s counts it off).
  double host_paired_saving_s = 0;
  double host_paired_saving_fwd_s = 0;  // of which in forward
  double host_s = 0;          // host-bound launch time beyond the GPU's, fwd + bwd + recompute
  double host_fwd_s = 0;      // of which in forward
  double wgrad_s = 0;         // weight-gradient GEMMs (part of bwd_s; zero-bubble's W)
  double kernels = 0;         // kernels launched (collectives included), fwd + bwd + recompute
  double activation_bytes = 0;  // kept from forward to backward, per micro-batch
  double offloaded_bytes = 0;   // of what it saves, moved to the host meanwhile (offload_modules)
  // Of what it keeps, what offloading expert_fc1 and moe_act would move (MoE layers; the
  // planner's bound on what that offloading can save).
  double expert_offloadable_bytes = 0;
  // Of what it keeps, what Megatron-Core's light recompute modules (layernorm, moe_act,
  // mla_up_proj) would drop beyond this shape's recompute (the planner's bound on them).
  double light_recompute_bytes = 0;
  double params = 0;            // parameters held (after TP/EP sharding)
  double tensors = 0;           // parameter tensors held (the optimizer launches per tensor list)
  double weight_tensors = 0;    // of which weight matrices (what DeepSpeed ZeRO-3 gathers one by one)
  double expert_params = 0;     // of which replicated only over the expert-DP group
  double expert_weight_tensors = 0;  // of the weight matrices, the experts' (their own ZeRO-3 group)
  double model_flops = 0;       // useful FLOPs (fwd + bwd, no recompute), this GPU
  // Extra working memory while its backward runs: a maximum, not a sum (last, so that the
  // sums above lie contiguous and Add / Between run as packed additions).
  double transient_bytes = 0;

  double TotalS() const {
    return fwd_s + bwd_s + recompute_s + tp_fwd_s + tp_bwd_s + spatial_fwd_s + spatial_bwd_s + cp_s + ep_s + host_s;
  }
  void Add(const BlockCosts& o) {
    AddSums(o);
    transient_bytes = transient_bytes > o.transient_bytes ? transient_bytes : o.transient_bytes;
  }
  // Adds every term but transient_bytes (the prefix sums keep it 0).
  void AddSums(const BlockCosts& o) {
    fwd_s += o.fwd_s;
    bwd_s += o.bwd_s;
    recompute_s += o.recompute_s;
    tp_fwd_s += o.tp_fwd_s;
    tp_bwd_s += o.tp_bwd_s;
    spatial_fwd_s += o.spatial_fwd_s;
    spatial_bwd_s += o.spatial_bwd_s;
    cp_s += o.cp_s;
    cp_fwd_s += o.cp_fwd_s;
    ep_s += o.ep_s;
    ep_paired_saving_s += o.ep_paired_saving_s;
    host_paired_saving_s += o.host_paired_saving_s;
    host_paired_saving_fwd_s += o.host_paired_saving_fwd_s;
    host_s += o.host_s;
    host_fwd_s += o.host_fwd_s;
    wgrad_s += o.wgrad_s;
    kernels += o.kernels;
    activation_bytes += o.activation_bytes;
    offloaded_bytes += o.offloaded_bytes;
    expert_offloadable_bytes += o.expert_offloadable_bytes;
    light_recompute_bytes += o.light_recompute_bytes;
    params += o.params;
    tensors += o.tensors;
    weight_tensors += o.weight_tensors;
    expert_params += o.expert_params;
    expert_weight_tensors += o.expert_weight_tensors;
    model_flops += o.model_flops;
  }
  // The sums of `to` less those of `from` (transient_bytes, a maximum, is left 0): with
  // prefix sums, the blocks between two layers.
  static BlockCosts Between(const BlockCosts& from, const BlockCosts& to);
};

// Launches are asynchronous: the host enqueues kernels while the GPU runs earlier ones
// (CUDA C++ Programming Guide, "Asynchronous Concurrent Execution"), so a phase takes
// the longer of the two. Returns the host-bound time beyond the GPU's.
inline double HostExcess(double kernels, double host_per_kernel_s, double gpu_s) {
  return std::max(0.0, kernels * host_per_kernel_s - gpu_s);
}

// Host time per kernel launched: an eager framework's per-call overhead, or under CUDA
// graphs only the GPU's gap between kernels.
inline double HostPerKernelS(const ModelShape& shape, const Hardware& hw) {
  return shape.cuda_graphs ? hw.kernel_gap_s() : hw.kernel_overhead_s();
}

// One optimizer step over a shard, per parameter.
struct OptimizerCosts {
  double state_bytes_per_param = 0;  // held: master weights (or their remainders), moments
  double bytes_per_param = 0;        // HBM traffic of one step
  int passes = 0;                    // multi-tensor passes over the shard
  // MixedPrecision::kBf16Grads: the step casts its shard of the 16-bit gradients to new
  // fp32 tensors (4 bytes a parameter, alive through the step, when the activations are
  // gone; kGradCast*).
  bool fp32_grad_copy_at_step = false;
};

// Transformer Engine FusedAdam's store_param_remainders under Megatron-Core's
// precision-aware optimizer, for BF16 weights with an fp32 master: it keeps the low 16 bits
// of each master weight beside the BF16 weight and writes both in its kernel (no separate
// copy to the 16-bit weights: 2 bytes less state, 6 less traffic, one pass less); 16-bit
// main gradients go to the kernel as they are (DistributedOptimizer's decoupled_grad under
// use_precision_aware_optimizer_no_fp8_or_ds_fp8): no fp32 copy at the step, the norm and
// Adam read 2 bytes each, not the copy's 4 (DecoupleGrads).
void StoreParamRemainders(OptimizerCosts* o);
// The precision-aware optimizer under Megatron-FSDP (ZeRO 2 / 3): the 16-bit gradients go
// to the step as they are (megatron_fsdp_use_decoupled_grad = use_precision_aware_optimizer,
// Megatron-LM training.py), but the main parameters stay fp32 (megatron_fsdp_main_params_dtype):
// no remainders.
void DecoupleGrads(OptimizerCosts* o);

struct ModelCosts {
  std::vector<BlockCosts> layers;  // partitioned over pipeline stages, in order
  // The layers indexed for stage sums in O(1) whatever a stage's layer count (IndexLayers;
  // ComputeModelCosts fills them): prefix[i] and prefix_total_s[i] sum layers [0, i)
  // (transient_bytes left 0: a stage takes the maximum of transient_bytes over its layers).
  std::vector<BlockCosts> prefix;
  std::vector<double> prefix_total_s;
  std::vector<double> transient_bytes;
  double max_layer_transient_bytes = 0;  // the largest of transient_bytes
  // The decoder layer holding the most parameters, its dense and expert parts (what ZeRO-3
  // gathers a layer at a time: the last layers of DeepSeek-V3, not its dense first ones).
  double max_layer_dense_params = 0;
  double max_layer_expert_params = 0;
  bool Indexed() const { return prefix.size() == layers.size() + 1; }
  BlockCosts pre;                  // on the first stage (embedding)
  BlockCosts post;                 // on the last stage (final norm, LM head, loss)
  double pp_send_bytes = 0;        // bytes one GPU sends at a stage boundary per micro-batch
  // The word embedding's copy on the last pipeline stage (with pp > 1), whose gradient
  // is all-reduced with the first stage's every iteration: where the LM head reuses it
  // (tied embeddings) or multi-token prediction embeds with it (Megatron-Core,
  // finalize_model_grads.py _allreduce_word_embedding_grads over the embedding group;
  // DeepSpeed's pipeline engine, ReduceTiedGrads). Parameters of one GPU; 0 otherwise.
  double stage_embedding_copy_params = 0;
  int mtp_layers = 0;              // multi-token prediction depths, on the last stage (in post)
  double tokens_per_sample = 1;    // 0 for non-sequence workloads
  double model_flops_per_sample = 0;  // useful FLOPs for one sample, whole model, fwd+bwd
  double weight_bytes_per_param = 0;
  double grad_bytes_per_param = 0;       // accumulation buffer
  double grad_reduce_bytes_per_param = 0;  // element size of the gradient all-reduce
  double param_gather_bytes_per_param = 0;
  // FP8 / FP4 linears: the quantised weight bytes ZeRO can gather instead of the 16-bit
  // ones (0 = none), and whether the framework does so unless told otherwise (WeightBytesOf).
  double quantised_gather_bytes_per_param = 0;
  bool quantised_gather_by_default = false;
  // MixedPrecision::kFp32Params: the step computes with 16-bit copies of the fp32 weights
  // (param_gather_bytes_per_param each, held from forward to backward: torch.autocast's
  // weight cache, or FSDP's gathered layers), and gradients exist only from backward to
  // the optimizer step.
  bool fp32_params = false;
  // 16-bit mixed precision with fp32 main gradients (Megatron-LM's DDP and distributed
  // optimizer): stacks that shard gradients may keep and reduce them in the 16-bit
  // compute dtype instead (GradientBytes).
  bool fp32_main_grads = false;
  // The optimizer step as the workload states it (OptimizerCostsOf: as a configuration
  // runs it).
  OptimizerCosts optimizer;
  // NeMo's performance scripts turn on Megatron-Core's precision-aware optimizer for every
  // BF16 Adam run, with the moments it is given (fp32 unless stated): NeMo 2's
  // scripts/performance/helpers.py set_primary_perf_configs and Megatron-Bridge's
  // scripts/performance/utils/overrides.py set_post_overrides (`if compute_dtype ==
  // "bf16"`), under Megatron-FSDP too since Bridge c807604ce (2026-06; before, "cannot
  // work with FSDP" turned it off there), where it hands the step decoupled gradients
  // (DecoupleGrads; training/config.py, _validate_and_apply_megatron_fsdp_v1_configs).
  // Where the workload's moments are fp32 the remainders and decoupled gradients
  // (StoreParamRemainders) apply by configuration (OptimizerCostsOf).
  bool precision_aware_by_default = false;
  // Optimizer::kMuon: its Newton-Schulz steps per decoder layer on one GPU doing all of
  // them (workloads/muon.h); the assembly shares them out (MuonStepS).
  MuonStepTimes muon;
  // Optimizer state of the embedding and LM head beyond optimizer.state_bytes_per_param:
  // under Muon they take Adam (muon_scalar_optimizer), whose second moment is 4 bytes more.
  double embedding_extra_state_bytes_per_param = 0;
  bool fp16 = false;  // the compute dtype is fp16 (else bf16 under 16-bit mixed precision)
  // The token dispatcher the MoE layers were costed with (ModelShape.weigh_deepep).
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllToAll;
  // Seconds a byte takes over the host link, either way (1 / its rate), and the share of
  // the compute beside a copy that hides it (Hardware's overlap_efficiency): the terms of
  // OffloadExposedS.
  double host_copy_s_per_byte = 0;
  double copy_overlap = 0;
};

// The critical path of `b`'s forward and backward (its recompute included), which work on
// other streams and engines runs beside: compute, the exposed collectives of the layers'
// own dimensions (tensor / spatial, context where exposed, half the expert all-to-all
// each way) and the host-bound stretches where the compute stream waits for its launches.
struct PassTimes {
  double fwd = 0, bwd = 0;
};
inline PassTimes CriticalPath(const BlockCosts& b) {
  const double ep_half = 0.5 * b.ep_s;
  return {b.fwd_s + b.tp_fwd_s + b.spatial_fwd_s + b.cp_fwd_s + ep_half + b.host_fwd_s,
          b.bwd_s + b.recompute_s + b.tp_bwd_s + b.spatial_bwd_s + (b.cp_s - b.cp_fwd_s) + ep_half +
              (b.host_s - b.host_fwd_s)};
}

// Fine-grained activation offloading (offload_modules): each micro-batch's saved tensors
// of `b` go out on a copy stream during its forward and come back during its backward,
// hidden behind that pass's critical path (CriticalPath: the copy engines run on while
// the compute stream waits for a collective or a launch) as far as it lasts. The copies'
// seconds per micro-batch beyond it. `beside`: what each pass waits for per micro-batch
// beyond CriticalPath(b) (other streams' exposed waits): the copies run beside it too.
// Under moe_a2a_overlap, `paired_share` of the steps pair one micro-batch's forward with
// another's backward (b counts every step paired): such a step's copies (the one's out,
// the other's back) hide behind the pair's whole length, as its host time is pooled
// (PairLayer); the steps that run alone also wait `alone` (what pairing took off b).
inline double OffloadExposedS(const BlockCosts& b, const ModelCosts& m, PassTimes beside = {},
                              PassTimes alone = {}, double paired_share = 0) {
  if (b.offloaded_bytes <= 0) return 0;
  const double copy = b.offloaded_bytes * m.host_copy_s_per_byte;
  const PassTimes pass = CriticalPath(b);
  const double apart = std::max(0.0, copy - m.copy_overlap * (pass.fwd + beside.fwd + alone.fwd)) +
                       std::max(0.0, copy - m.copy_overlap * (pass.bwd + beside.bwd + alone.bwd));
  if (!(paired_share > 0)) return apart;
  const double pooled = std::max(0.0, 2 * copy - m.copy_overlap * (pass.fwd + pass.bwd + beside.fwd + beside.bwd));
  return paired_share * pooled + (1 - paired_share) * apart;
}
// Whether `b`'s costs count its steps paired (moe_a2a_overlap took something off them).
inline bool Paired(const BlockCosts& b) { return b.ep_paired_saving_s > 0 || b.host_paired_saving_s > 0; }

// The optimizer's fp32 cast of a 16-bit gradient tensor (`main_grad.float()`) moves 2 + 4
// bytes a parameter and costs the host 11.5 us a tensor, a third of a Megatron op's launch
// (kernel_overhead_us, 35 us by default): measured on one H200
// (scripts/microbench/grad_cast.py, docs/microbench/h200_grad_cast.jsonl). There the cast
// streamed at half a plain copy's rate (12.6 bytes a parameter at the copy rate); that is
// the H200's elementwise kernels, not taken for every GPU.
inline constexpr double kGradCastBytesPerParam = 2 + 4;

// DeepSpeed's BF16_Optimizer (bf16 without ZeRO; DeepSpeedBf16Optimizer) adds every
// micro-batch's 16-bit gradients into its fp32 gradients after that micro-batch's backward
// (runtime/bf16_optimizer.py, update_hp_grads; its pipeline engine calls it after each
// backward pass): hp_grad.add_(lp.grad.to(float32)), the cast reading 2 and writing 4
// bytes a parameter, the add reading 4 + 4 and writing 4; two kernels a tensor, on the
// compute stream before the stage's next instruction.
inline constexpr double kHpGradAccumulateBytesPerParam = 2 + 4 + 4 + 4 + 4;
inline constexpr double kHpGradAccumulateKernelsPerTensor = 2;
inline constexpr double kGradCastLaunchShare = 1.0 / 3;

// Bytes per parameter of the gradients a configuration holds and reduces. Megatron-LM's
// DDP and distributed optimizer keep fp32 main gradients and reduce them in fp32 for
// bf16 (ModelCosts defaults). Two stacks keep them in the 16-bit compute dtype:
// DeepSpeed (engine.py: communication_data_type defaults to fp16 / bf16 at every stage;
// get_data_types accumulates in the model dtype under ZeRO, and bf16 without ZeRO in
// fp32; ZeRO's 2 bytes of gradients per parameter, Rajbhandari et al. SC'20 sec. 3.1),
// and Megatron-FSDP, the ZeRO-3 of Megatron-Core (megatron_fsdp_main_grads_dtype = None:
// "main gradients will match the dtype of the model compute parameters").
struct GradientBytes {
  double held = 0;     // accumulation buffer, per parameter
  double reduced = 0;  // element of the gradient all-reduce / reduce-scatter
};
GradientBytes GradientBytesOf(const ModelCosts& model, const ParallelConfig& c);

// Bytes per parameter of the weights a configuration holds and ZeRO gathers. With FP8 /
// FP4 parameter gather (the config's fp8_param_gather, or unset the framework's default:
// ModelCosts.quantised_gather_by_default) under ZeRO >= 1, the quantised weights are the
// parameters (Transformer Engine's quantised model init): no 16-bit copy is kept, and the
// gathers move the quantised bytes; under fp32 parameters (torchtitan's float8 FSDP
// all-gather) the fp32 weights stay and only the gathers shrink.
struct WeightBytes {
  double held = 0;
  double gathered = 0;
};
WeightBytes WeightBytesOf(const ModelCosts& model, const ParallelConfig& c);

// The optimizer step `c` runs: the workload's (ModelCosts.optimizer), with NeMo's
// precision-aware default (ModelCosts.precision_aware_by_default): remainders under the
// distributed optimizer, decoupled gradients alone under Megatron-FSDP.
OptimizerCosts OptimizerCostsOf(const ModelCosts& model, const ParallelConfig& c);

// Seconds of Muon's orthogonalisation on one GPU of a stage of `layers` decoder layers:
// each matrix orthogonalised whole by every TP rank (muon_tp_mode "duplicated"); under
// ZeRO 1 (LayerWiseDistributedOptimizer) each DP x CP rank takes a share of the dense
// matrices and each expert-DP rank of its EP rank's experts, else every rank all of them.
double MuonStepS(const ModelCosts& model, const ParallelConfig& c, int layers);
bool QuantisedParamGather(const ModelCosts& model, const ParallelConfig& c);

// Writes into `c` what it left to the framework and `model` resolved, so that plans and
// estimates say what they costed (and launchers emit it): fp8_param_gather for FP8 / FP4.
void EchoResolvedDefaults(const ModelCosts& model, ParallelConfig* c);

// Whether DeepSpeed runs its BF16_Optimizer: bf16 mixed precision without ZeRO (engine.py
// _do_optimizer_sanity_check; get_data_types accumulates the gradients in fp32 then). It
// holds fp32 gradients whole, partitions the fp32 master weights and the optimizer states
// over the data-parallel ranks (bf16_optimizer.py, fp32_groups_flat_partition),
// all-reduces the gradients after the backward and all-gathers the updated bf16 weights
// after its step: ZeRO-1's memory, an all-reduce and a gather.
bool DeepSpeedBf16Optimizer(const ModelCosts& model, const ParallelConfig& c);

// ceil(x) of a count by integer truncation: what std::ceil answers, in a few instructions
// where the baseline x86-64 target has no rounding instruction (the assembly runs it for
// every candidate); beyond 2^62, or NaN, std::ceil itself.
inline double CeilCount(double x) {
  if (!(x >= 0 && x < 0x1p62)) return std::ceil(x);
  const double t = static_cast<double>(static_cast<int64_t>(x));
  return t < x ? t + 1 : t;
}

// Kernels one optimizer pass launches over `tensors` tensors of `elements` elements in
// all: Apex / Megatron-LM multi_tensor_apply (csrc/multi_tensor_apply.cuh) launches a
// kernel whenever its argument list fills — 36 tensors of a depth-4 list (Adam: grad,
// param, m, v) or 320 blocks of 65,536-element chunks — so the count is the larger of
// the two quotients, at least one.
double OptimizerKernelsPerPass(double tensors, double elements);

// A search's memo of what a MoE transformer's shapes share whatever their expert layout
// (expert_parallel, expert_tensor_parallel, the dispatcher, the all-to-all overlap):
// attention, the dense layers, the embedding and the head, keyed by the rest of the
// shape and by the workload, hardware and collectives (by address: they must outlive
// the memo and not change while it is used). The MoE layers are built on it per shape.
// One per thread; at most kMaxEntries, then cleared (the search lists the shapes of one
// tensor and context degree together: fewer than that share a degree).
class TransformerMemo {
 public:
  static constexpr size_t kMaxEntries = 512;
  TransformerMemo();
  ~TransformerMemo();
  TransformerMemo(TransformerMemo&&) noexcept;
  TransformerMemo& operator=(TransformerMemo&&) noexcept;

 private:
  struct Table;  // transformer_costs.cc
  std::unique_ptr<Table> table_;
  friend absl::StatusOr<ModelCosts> TransformerCosts(const Workload&, const ModelShape&, const Hardware&,
                                                     const Collectives&, TransformerMemo*);
};

// Layer costs for the workload under `shape`. Tensor-like groups are innermost in the
// rank space (stride 1), then context, then expert groups, whatever the rank order.
// INVALID_ARGUMENT if the shape does not apply to the workload. A layer graph's costs
// are per layer (up to 100,000, ~5 us each): they stop with CANCELLED /
// DEADLINE_EXCEEDED when `stop` asks, checked every kLayersPerInterruptCheck layers.
// `memo` (a transformer's; optional) saves recomputing what shapes share: the same
// answer with it or without.
absl::StatusOr<ModelCosts> ComputeModelCosts(const Workload& workload, const ModelShape& shape,
                                             const Hardware& hw, const Collectives& coll,
                                             const Interrupt& stop = {}, TransformerMemo* memo = nullptr);

// Implementations per workload kind.
absl::StatusOr<ModelCosts> TransformerCosts(const Workload& workload, const ModelShape& shape,
                                            const Hardware& hw, const Collectives& coll,
                                            TransformerMemo* memo = nullptr);
inline constexpr int kLayersPerInterruptCheck = 4096;
absl::StatusOr<ModelCosts> LayerGraphCosts(const Workload& workload, const ModelShape& shape,
                                           const Hardware& hw, const Collectives& coll,
                                           const Interrupt& stop = {});

// Fills ModelCosts' prefix sums from its layers (after the layers change, again).
void IndexLayers(ModelCosts* costs);

// `costs` (of a shape without offload_modules) as they are with offload_modules
// expert_fc1 and moe_act: each layer's expert_offloadable_bytes moved to the host, its
// times unchanged; what ComputeModelCosts gives for that shape, without recomputing it.
ModelCosts WithExpertOffload(ModelCosts costs);

// Per-parameter byte counts of mixed-precision training (Megatron-LM: 2-byte weights,
// fp32 main gradients, fp32 master weights + Adam moments = 18 bytes/param).
// SGD with momentum keeps one fp32 moment instead of Adam's two. PyTorch autocast / FSDP
// (MixedPrecision::kFp32Params): fp32 weights and gradients + Adam moments = 16.
// FP8 / FP4 linears keep quantised copies of the weights beside them (`recipe`, resolved;
// one orientation or two: QuantisedOrientations). 2-byte Adam moments (`moments` kBf16 /
// kFp16: Megatron-Core's precision-aware optimizer) keep 2 + 2 bytes, and under the
// master-in-optimizer modes of BF16 training the master weights only the 16 bits the BF16
// weights lack (Transformer Engine FusedAdam's store_param_remainders).
void SetPrecisionBytes(Precision precision, QuantRecipe recipe, Optimizer optimizer, MixedPrecision mixed,
                       Precision moments, bool fp8_any_layout, ModelCosts* costs);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_WORKLOADS_MODEL_COSTS_H_
