// ParallelConfig: how one training job is split across GPUs (the "execution").
//
// Plain value type mirroring paraplan.v1.ParallelConfig. Degrees are >= 1 after
// Normalized(); NumGpus() is the product of the degrees that occupy distinct GPUs
// (expert parallelism reuses the data x context ranks, as in Megatron-LM).
#ifndef PARAPLAN_ESTIMATOR_INPUTS_PARALLEL_CONFIG_H_
#define PARAPLAN_ESTIMATOR_INPUTS_PARALLEL_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace paraplan {

enum class Recompute { kNone, kSelective, kFull };
// Megatron-Core's selective recompute modules (TransformerConfig.recompute_modules), as
// bits of ParallelConfig::recompute_modules.
enum RecomputeModule : unsigned {
  kRecomputeCoreAttn = 1u << 0,
  kRecomputeMlp = 1u << 1,
  kRecomputeMoe = 1u << 2,
  kRecomputeMoeAct = 1u << 3,
  kRecomputeLayernorm = 1u << 4,
  kRecomputeMlaUpProj = 1u << 5,
  kRecomputeSharedExperts = 1u << 6,
};
// Megatron's name of each module bit, in bit order.
inline constexpr const char* kRecomputeModuleNames[] = {"core_attn", "mlp",         "moe",           "moe_act",
                                                        "layernorm", "mla_up_proj", "shared_experts"};
// Megatron-Core's fine-grained activation offloading modules (--offload-modules;
// docs/user-guide/features/fine_grained_activation_offloading.md): each moves the
// activations it saves for backward to pinned host memory during forward and back before
// its backward, as bits of ParallelConfig::offload_modules. The fused grouped MLP is not
// among them (it needs Transformer Engine's op fuser).
enum OffloadModule : unsigned {
  kOffloadAttnNorm = 1u << 0,
  kOffloadQkvLinear = 1u << 1,
  kOffloadCoreAttn = 1u << 2,
  kOffloadAttnProj = 1u << 3,
  kOffloadMlpNorm = 1u << 4,
  kOffloadExpertFc1 = 1u << 5,
  kOffloadMoeAct = 1u << 6,
};
inline constexpr const char* kOffloadModuleNames[] = {"attn_norm", "qkv_linear", "core_attn", "attn_proj",
                                                      "mlp_norm",  "expert_fc1", "moe_act"};
// The training framework a configuration must run in (kAny: no restriction).
enum class Framework { kAny, kMegatron, kNemo, kDeepSpeed, kTorchtitan, kPytorchFsdp };
const char* FrameworkName(Framework f);
// Whether the stack is Megatron-Core's (unspecified, Megatron-LM, NeMo / Megatron-Bridge):
// its layers, DDP and schedules.
inline bool RunsMegatronCore(Framework f) {
  return f == Framework::kAny || f == Framework::kMegatron || f == Framework::kNemo;
}

// How tokens reach their experts (Megatron-Core's token dispatchers).
enum class MoeDispatcher { kAllToAll, kAllGather, kDeepEp };
enum class PipelineSchedule { kDefault, k1F1B, kGPipe, kInterleaved1F1B, kZeroBubble };
// kTorus2D is the dimension-wise torus algorithm (2-D or 3-D); kTopoHalvingDoubling is
// halving-doubling with its large-message steps kept inside the innermost domain
// (rank reordering for the topology, after Nguyen & Wahib, CCGrid'21).
enum class CollectiveAlgorithm { kAuto, kRing, kTree, kHalvingDoubling, kHierarchical, kTorus2D, kTopoHalvingDoubling };
enum class CollectiveKind { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kSendRecv };
// Where a job's nodes sit in the cluster: packed (consecutive nodes, filling each leaf
// before the next) or scattered (nodes spread evenly over the whole cluster, as a busy
// scheduler leaves them).
enum class Placement { kPacked, kScattered };
// Placement of parallel dimensions on ranks, innermost first.
enum class RankOrder { kTpCpEpDpPp, kTpCpEpPpDp };

struct OffloadSpec {
  bool optimizer = false;
  bool weights = false;
  bool activations = false;
  bool any() const { return optimizer || weights || activations; }
};

struct ParallelConfig {
  int data_parallel = 1;
  int tensor_parallel = 1;
  int pipeline_parallel = 1;
  int context_parallel = 1;
  int expert_parallel = 1;
  // Tensor parallelism inside each expert (Megatron-Core expert_tensor_parallel_size);
  // 0 = tensor_parallel. expert_parallel x expert_tensor_parallel divides
  // tensor_parallel x context_parallel x data_parallel.
  int expert_tensor_parallel = 0;
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllToAll;
  // The EP all-to-all hidden behind another micro-batch's compute (Megatron-Core's
  // combined 1F1B schedule).
  bool moe_a2a_overlap = false;
  bool sequence_parallel = false;
  int virtual_pipeline_stages = 1;
  // Layers on the first / last pipeline stage (over all its chunks); 0 = an even split
  // of what the other stages leave.
  int first_pipeline_stage_layers = 0;
  int last_pipeline_stage_layers = 0;
  int micro_batch_size = 1;
  int global_batch_size = 1;
  Recompute recompute = Recompute::kNone;
  // RecomputeModule bits re-run under kSelective; 0 = kRecomputeCoreAttn (Megatron's
  // default).
  unsigned recompute_modules = 0;
  // Layers per stage whose activations live on the host (Megatron-Core
  // cpu_offloading_num_layers; weights stay), streamed over the host link beside compute.
  int cpu_offload_layers = 0;
  // OffloadModule bits: what each layer moves to the host between its forward and its
  // backward (Megatron-Core --fine-grained-activation-offloading --offload-modules).
  unsigned offload_modules = 0;
  // FP8 / FP4 weights gathered by ZeRO, no 16-bit copy kept (Megatron fp8_param_gather,
  // fp4_param_gather under NVFP4). Unset: the framework's default (WeightBytesOf).
  std::optional<bool> fp8_param_gather;
  int zero_stage = 0;
  PipelineSchedule pipeline_schedule = PipelineSchedule::kDefault;
  bool overlap_grad_reduce = false;
  bool overlap_param_gather = false;
  OffloadSpec offload;
  int spatial_parallel = 1;
  int filter_parallel = 1;
  int channel_parallel = 1;
  // Spatial parallelism splits layers [0, spatial_layers) of a layer graph (0 = all)
  // along `spatial_axes` of their spatial axes (first axis first; 0 = 1).
  int spatial_layers = 0;
  int spatial_axes = 1;
  bool flash_attention = false;
  // Kernels replayed from CUDA graphs (or torch.compile with cudagraphs): the host's
  // per-kernel launch cost mostly disappears.
  bool cuda_graphs = false;
  // Tensor-parallel collectives overlapped with the neighbouring GEMMs (Transformer
  // Engine userbuffers); otherwise the forward TP collectives are exposed. Unset: the
  // framework's default (workloads/model_costs.h ResolvedTpCommOverlap), off where nothing
  // resolves it.
  std::optional<bool> tp_comm_overlap;
  CollectiveAlgorithm dp_algorithm = CollectiveAlgorithm::kAuto;
  RankOrder rank_order = RankOrder::kTpCpEpDpPp;
  // The framework whose implementation the costs follow where frameworks differ (set from
  // the request's framework; kAny = the generic form, e.g. ZeRO-3 as FSDP's per-layer
  // gathers). Not a searched dimension.
  Framework framework = Framework::kAny;
  // Algorithm of the tensor-parallel all-reduces (kAuto = the cheapest applicable).
  CollectiveAlgorithm tp_algorithm = CollectiveAlgorithm::kAuto;
  Placement placement = Placement::kPacked;

  // A degree as the configuration counts it: 0 or less means 1.
  static constexpr int AtLeastOne(int v) { return v > 0 ? v : 1; }
  // Degrees <= 0 become 1; kDefault schedule becomes 1F1B or interleaved.
  ParallelConfig Normalized() const;
  // GPUs used: dp * tp * pp * cp * spatial * filter * channel (degrees <= 0 count as 1).
  // Inline, as the accessors below: each candidate's assembly reads them several times.
  int64_t NumGpus() const {
    return int64_t{AtLeastOne(data_parallel)} * AtLeastOne(tensor_parallel) * AtLeastOne(pipeline_parallel) *
           AtLeastOne(context_parallel) * AtLeastOne(spatial_parallel) * AtLeastOne(filter_parallel) *
           AtLeastOne(channel_parallel);
  }
  // Ranks inside one data-parallel replica's layer: tp * cp * spatial * filter * channel.
  int64_t InnerDegree() const {
    return int64_t{tensor_parallel} * context_parallel * spatial_parallel * filter_parallel *
           channel_parallel;
  }
  // expert_tensor_parallel, or tensor_parallel where it is 0.
  int ExpertTensorParallel() const { return expert_tensor_parallel > 0 ? expert_tensor_parallel : tensor_parallel; }
  // Replicas of each expert shard: tp * cp * dp / (ep * etp), at least 1 (normalized).
  int64_t ExpertDataParallel() const {
    const int64_t ranks = int64_t{tensor_parallel} * context_parallel * data_parallel;
    const int64_t grid = int64_t{expert_parallel} * ExpertTensorParallel();
    return grid > 0 && ranks >= grid ? ranks / grid : 1;
  }
  // Decoder layers of each model chunk, in chunk order (chunk k = virtual stage k / pp
  // on pipeline stage k % pp), for `num_layers` layers. Without first / last stage
  // counts: chunk k holds [k L / chunks, (k + 1) L / chunks). With them, the other
  // stages share the rest as evenly as that allows, and within a stage its chunks do;
  // the first stage's short chunk comes first (beside the embedding), the last stage's
  // last (beside the loss), as Megatron-Core's account-for-embedding / loss split does.
  // Counts may be negative when the stage counts exceed the layers (validation rejects).
  std::vector<int> PipelineChunkLayers(int num_layers) const;
  // Micro-batches per iteration per pipeline: global / (dp * micro).
  int NumMicroBatches() const {
    return static_cast<int>(global_batch_size /
                            (int64_t{AtLeastOne(data_parallel)} * AtLeastOne(micro_batch_size)));
  }
  // "TP8 PP8 DP16 CP1 ..." — compact human form for tables and logs.
  std::string ShortString() const;
};

// Whether the attention runs a fused (flash) kernel: flash_attention, or context
// parallelism, whose ring attention exists over fused kernels only (Megatron-Core's
// DotProductAttention asserts context_parallel_size == 1, "Context parallelism is only
// supported by TEDotProductAttention"; Transformer Engine disables its unfused backend
// under context parallelism; PyTorch's ring attention wraps SDPA's flash, efficient and
// cuDNN kernels).
inline bool RunsFusedAttention(const ParallelConfig& c) {
  return c.flash_attention || c.context_parallel > 1;
}

// Whether each tensor-parallel rank sends the whole activation at a pipeline-stage
// boundary, not its 1/t: under DeepSpeed's pipeline engine without sequence parallelism
// (deepspeed/runtime/pipe/engine.py, _exec_send_activations / _exec_send_grads: p2p.send
// of the stage's output tensors, which every TP rank holds whole). Megatron-LM splits
// them (its scatter-gather; under sequence parallelism the activation is split already).
inline bool SendsWholeStageActivation(Framework framework, bool sequence_parallel) {
  return framework == Framework::kDeepSpeed && !sequence_parallel;
}

// Whether ZeRO 0-2's gradient reduction overlaps the backward: overlap_grad_reduce, except
// under DeepSpeed, which reduces after the backward unless ZeRO 1 or 2 runs without
// pipeline stages (overlap_comm's bucket hooks): its pipeline engine reduces and steps
// after the last micro-batch (deepspeed/runtime/pipe/schedule.py, TrainSchedule:
// ReduceTiedGrads, ReduceGrads, OptimizerStep at the final step), and without ZeRO its
// engine all-reduces once backward() has returned (engine.py, allreduce_gradients:
// buffered_allreduce_fallback).
inline bool OverlapsGradientReduction(const ParallelConfig& c) {
  if (c.framework != Framework::kDeepSpeed) return c.overlap_grad_reduce;
  return c.overlap_grad_reduce && c.pipeline_parallel <= 1 && (c.zero_stage == 1 || c.zero_stage == 2);
}
// Whether ZeRO 1-2's all-gather of the updated parameters overlaps the next forward:
// overlap_param_gather (Megatron's distributed optimizer), never under DeepSpeed, whose
// ZeRO 1 / 2 optimizer gathers them inside step() (runtime/zero/stage_1_and_2.py:
// all_gather_dp_groups).
inline bool OverlapsParameterGather(const ParallelConfig& c) {
  return c.overlap_param_gather && c.framework != Framework::kDeepSpeed;
}

// Whether ZeRO 0-2's overlapped gradient reduction and parameter gather run model chunk by
// model chunk (an interleaved schedule under Megatron-Core's DDP: each virtual stage is
// its own DDP module). Its schedule starts a chunk's gradient sync once that chunk's last
// micro-batch has run backward (pipeline_parallel/schedules.py, backward_step_helper:
// grad_sync_func, with align_grad_reduce) and a chunk's parameter gather while the chunk
// before runs its first forwards (forward_step_helper: param_sync_func, chunks 0 and 1 at
// the start), where a single module reduces in its last micro-batch's backward only.
inline bool SyncsPerModelChunk(const ParallelConfig& c) {
  return c.virtual_pipeline_stages > 1 && c.pipeline_schedule == PipelineSchedule::kInterleaved1F1B &&
         RunsMegatronCore(c.framework);
}

// Whether ZeRO-2 / ZeRO-3 run as Megatron-FSDP (Megatron-Core's stacks:
// --use-megatron-fsdp with --data-parallel-sharding-strategy optim_grads / optim_grads_params,
// megatron/training/arguments.py; ZeRO-1 is the distributed optimizer), whose gradients
// are kept and reduced in the compute dtype (megatron_fsdp_main_grads_dtype None).
inline bool RunsMegatronFsdp(const ParallelConfig& c) { return c.zero_stage >= 2 && RunsMegatronCore(c.framework); }

// Whether moe_a2a_overlap meets Megatron-FSDP under pipeline stages, which Megatron-Core
// refuses (combined_1f1b.py asserts on FSDP-wrapped model chunks).
inline bool A2aOverlapMeetsFsdpPipeline(const ParallelConfig& c) {
  return c.moe_a2a_overlap && c.pipeline_parallel > 1 && RunsMegatronFsdp(c);
}

// Whether ZeRO-3 keeps each pipeline stage's weights gathered from its first micro-batch's
// forward to its last backward and reduce-scatters the accumulated gradients once, after
// it: torchtitan's FSDP2 under pipeline stages (its reshard_after_forward "default" is
// False with PP; torch.distributed.pipelining's stage.py, backward_maybe_with_nosync,
// turns off resharding and gradient sync for every backward but the last, then runs
// FSDP's post-backward). Else ZeRO-3 gathers every layer each pass and micro-batch.
inline bool ShardsOncePerIteration(const ParallelConfig& c) {
  return c.zero_stage >= 3 && c.framework == Framework::kTorchtitan && c.pipeline_parallel > 1;
}

const char* RecomputeName(Recompute r);
// "layernorm,moe_act": the module names of `modules`, comma-separated, in bit order.
std::string RecomputeModulesText(unsigned modules);
// "expert_fc1,moe_act": the same for OffloadModule bits.
std::string OffloadModulesText(unsigned modules);
const char* DispatcherName(MoeDispatcher d);
const char* ScheduleName(PipelineSchedule s);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_INPUTS_PARALLEL_CONFIG_H_
