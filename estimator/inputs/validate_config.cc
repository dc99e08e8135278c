#include "estimator/inputs/validate.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "estimator/inputs/layer_graph.h"
#include "estimator/inputs/status_macros.h"
#include "estimator/inputs/validate_fields.h"

namespace paraplan {

using namespace validate;  // NOLINT: the shared field checks

namespace {

// Megatron-Core's expert grid: expert_tensor_parallel x expert_parallel ranks fold over
// the attention's tensor x context x data ranks (MoE parallel folding).
absl::Status ValidateExpertGrid(const TransformerSpec& t, const ParallelConfig& c) {
  const std::string p = "config.";
  const int etp = c.ExpertTensorParallel();
  if (etp != c.tensor_parallel && !t.is_moe()) {
    return Bad(p + "expert_tensor_parallel", "needs a mixture-of-experts model (moe.num_experts > 1)");
  }
  if (!t.is_moe()) return absl::OkStatus();
  const int64_t ranks = int64_t{c.tensor_parallel} * c.context_parallel * c.data_parallel;
  const int64_t grid = int64_t{c.expert_parallel} * etp;
  if (ranks % grid != 0) {
    return Bad(p + "expert_parallel",
               absl::StrCat("expert_parallel x expert_tensor_parallel = ", c.expert_parallel, " x ", etp,
                            " does not divide tensor_parallel x context_parallel x data_parallel = ", ranks));
  }
  if (t.moe.expert_ffn_hidden_size % etp != 0) {
    return Bad(p + "expert_tensor_parallel",
               absl::StrCat(etp, " does not divide moe.expert_ffn_hidden_size ", t.moe.expert_ffn_hidden_size));
  }
  // Tokens leave the attention sharded by sequence over its TP ranks; experts sharded
  // another way need that split (Megatron-Core requires sequence parallelism for it).
  if (etp != c.tensor_parallel && c.tensor_parallel > 1 && !c.sequence_parallel) {
    return Bad(p + "expert_tensor_parallel",
               absl::StrCat(etp, " differs from tensor_parallel ", c.tensor_parallel,
                            ": needs sequence_parallel (tokens reach the experts split by sequence)"));
  }
  return absl::OkStatus();
}

// Layers per pipeline chunk: every chunk needs one, except the first stage's first and
// the last stage's last, which may hold only the embedding or the loss once the stage
// counts are given.
absl::Status ValidateStageLayout(const ParallelConfig& c, int64_t layers) {
  const std::string p = "config.";
  const int first = c.first_pipeline_stage_layers, last = c.last_pipeline_stage_layers;
  const int64_t chunks = int64_t{c.pipeline_parallel} * c.virtual_pipeline_stages;
  if (first == 0 && last == 0) {
    if (chunks > layers) {
      return Bad(p + "pipeline_parallel",
                 absl::StrCat("pipeline_parallel x virtual_pipeline_stages = ", chunks, " exceeds the ", layers,
                              " layers (each model chunk needs a layer; first_pipeline_stage_layers and "
                              "last_pipeline_stage_layers let the end stages hold fewer)"));
    }
    return absl::OkStatus();
  }
  const std::string field = p + (first > 0 ? "first_pipeline_stage_layers" : "last_pipeline_stage_layers");
  if (c.pipeline_parallel == 1) return Bad(field, "needs pipeline_parallel > 1");
  if (int64_t{first} + last > layers) {
    return Bad(field, absl::StrCat("first ", first, " + last ", last, " exceeds the ", layers, " layers"));
  }
  if (c.pipeline_parallel == 2 && first > 0 && last > 0 && first + last != layers) {
    return Bad(field, absl::StrCat("with two stages first ", first, " + last ", last, " must equal the ", layers,
                                   " layers"));
  }
  const int inner_stages = c.pipeline_parallel - (first > 0 ? 1 : 0) - (last > 0 ? 1 : 0);
  const int64_t rest = layers - first - last;
  if (rest < int64_t{inner_stages} * c.virtual_pipeline_stages) {
    return Bad(field, absl::StrCat("leaves ", rest, " layers for ", inner_stages, " stages x ",
                                   c.virtual_pipeline_stages, " chunks; each of their chunks needs a layer"));
  }
  return absl::OkStatus();
}

// The degrees and switches as given, each within its range.
absl::Status ValidateConfigFields(const Workload& w, const ParallelConfig& raw) {
  const std::string p = "config.";
  for (auto [name, v] : {std::pair{"data_parallel", raw.data_parallel},
                         {"tensor_parallel", raw.tensor_parallel},
                         {"pipeline_parallel", raw.pipeline_parallel},
                         {"context_parallel", raw.context_parallel},
                         {"expert_parallel", raw.expert_parallel},
                         {"expert_tensor_parallel", raw.expert_tensor_parallel},
                         {"virtual_pipeline_stages", raw.virtual_pipeline_stages},
                         {"first_pipeline_stage_layers", raw.first_pipeline_stage_layers},
                         {"last_pipeline_stage_layers", raw.last_pipeline_stage_layers},
                         {"cpu_offload_layers", raw.cpu_offload_layers},
                         {"micro_batch_size", raw.micro_batch_size},
                         {"spatial_parallel", raw.spatial_parallel},
                         {"filter_parallel", raw.filter_parallel},
                         {"channel_parallel", raw.channel_parallel},
                         {"spatial_layers", raw.spatial_layers},
                         {"spatial_axes", raw.spatial_axes}}) {
    PARAPLAN_RETURN_IF_ERROR(NonNegative(p + name, v, kMaxDegree));
  }
  PARAPLAN_RETURN_IF_ERROR(Positive(p + "global_batch_size", raw.global_batch_size, int64_t{1} << 30));
  if (raw.recompute_modules != 0 && raw.recompute != Recompute::kSelective) {
    return Bad(p + "recompute_modules", "needs recompute RECOMPUTE_SELECTIVE");
  }
  if (raw.recompute_modules >= (1u << std::size(kRecomputeModuleNames))) {
    return Bad(p + "recompute_modules", "names a module Megatron-Core does not have");
  }
  if (raw.offload_modules >= (1u << std::size(kOffloadModuleNames))) {
    return Bad(p + "offload_modules", "names a module Megatron-Core does not offload");
  }
  if (raw.offload_modules != 0 && raw.offload.activations) {
    return Bad(p + "offload_modules", "moves activations as offload.activations does: state one of the two");
  }
  if (raw.offload_modules != 0 && raw.cpu_offload_layers > 0) {
    return Bad(p + "offload_modules", "cannot be combined with cpu_offload_layers (Megatron-Core refuses both)");
  }
  if (raw.offload_modules != 0 && raw.recompute == Recompute::kFull) {
    return Bad(p + "offload_modules", "has nothing to move under RECOMPUTE_FULL (a layer keeps only its input)");
  }
  if ((raw.offload_modules & (kOffloadExpertFc1 | kOffloadMoeAct)) && raw.recompute == Recompute::kSelective &&
      (raw.recompute_modules & kRecomputeMoe)) {
    return Bad(p + "offload_modules", "expert_fc1 and moe_act cannot be offloaded while recompute_modules re-runs "
                                      "the whole MoE layer (Megatron-Core refuses it)");
  }
  // Megatron-Core's check (TransformerConfig): the projection's input is the attention
  // core's output, offloaded with it.
  if ((raw.offload_modules & kOffloadAttnProj) && !(raw.offload_modules & kOffloadCoreAttn)) {
    return Bad(p + "offload_modules", "attn_proj needs core_attn offloaded too (Megatron-Core)");
  }
  if (raw.zero_stage < 0 || raw.zero_stage > 3) {
    return Bad(p + "zero_stage", absl::StrCat(raw.zero_stage, " must be 0, 1, 2 or 3"));
  }
  if (raw.fp8_param_gather.value_or(false) && (!LowPrecisionLinears(w.precision) || raw.zero_stage < 1)) {
    return Bad(p + "fp8_param_gather",
               "needs PRECISION_FP8 or PRECISION_FP4 and zero_stage >= 1 (ZeRO gathers the quantised weights)");
  }
  return absl::OkStatus();
}

// The batch and the pipeline schedule of the normalized configuration.
absl::Status ValidateBatchAndSchedule(const ParallelConfig& c) {
  const std::string p = "config.";
  if (c.NumGpus() > (int64_t{1} << 24)) {
    return Bad(p + "data_parallel", absl::StrCat("the degrees multiply to ", c.NumGpus(), " GPUs, above 2^24"));
  }
  const int64_t per_step = int64_t{c.data_parallel} * c.micro_batch_size;
  if (c.global_batch_size % per_step != 0) {
    return Bad(p + "global_batch_size",
               absl::StrCat(c.global_batch_size, " is not divisible by data_parallel x micro_batch_size = ",
                            per_step));
  }
  const int m = c.NumMicroBatches();
  if (c.virtual_pipeline_stages > 1) {
    if (c.pipeline_parallel == 1) {
      return Bad(p + "virtual_pipeline_stages", "needs pipeline_parallel > 1");
    }
    if (c.pipeline_schedule != PipelineSchedule::kInterleaved1F1B &&
        c.pipeline_schedule != PipelineSchedule::kZeroBubble) {
      return Bad(p + "virtual_pipeline_stages",
                 absl::StrCat(c.virtual_pipeline_stages, " needs SCHEDULE_INTERLEAVED_1F1B"));
    }
    if (c.pipeline_schedule == PipelineSchedule::kInterleaved1F1B && m % c.pipeline_parallel != 0) {
      return Bad(p + "global_batch_size",
                 absl::StrCat(m, " micro-batches is not a multiple of pipeline_parallel ",
                              c.pipeline_parallel, " (required by the interleaved schedule)"));
    }
  }
  if (c.pipeline_schedule == PipelineSchedule::kInterleaved1F1B && c.virtual_pipeline_stages == 1 &&
      c.pipeline_parallel > 1) {
    return Bad(p + "pipeline_schedule", "SCHEDULE_INTERLEAVED_1F1B needs virtual_pipeline_stages > 1");
  }
  return absl::OkStatus();
}

// What a transformer admits: heads, KV heads, sequence and experts divisible by their
// degrees, the stage layout, the expert grid, MoE-only switches.
}  // namespace

const char* A2aOverlapRefusedByWorkload(const Workload& w) {
  if (w.precision == Precision::kFp32) return "needs a 16-bit model (bf16 or fp16; FP8 and FP4 on top)";
  if (w.transformer.mtp_num_layers > 1) return "runs with at most one multi-token prediction layer";
  return nullptr;
}

namespace {

// Megatron-Core's combined 1F1B (overlap_moe_expert_parallel_comm) runs where its
// TransformerConfig lets it (transformer_config.py, __post_init__).
absl::Status ValidateA2aOverlap(const Workload& w, const ParallelConfig& c) {
  if (!c.moe_a2a_overlap) return absl::OkStatus();
  const std::string f = "config.moe_a2a_overlap";
  if (c.expert_parallel == 1) return Bad(f, "needs expert_parallel > 1 (there is no all-to-all to hide)");
  if (c.moe_dispatcher == MoeDispatcher::kAllGather) {
    return Bad(f, "runs with the all-to-all or DeepEP dispatcher, not all-gather");
  }
  if (c.recompute == Recompute::kFull) return Bad(f, "does not run with full recompute");
  if (c.recompute == Recompute::kSelective && (c.recompute_modules & kRecomputeMoe)) {
    return Bad(f, "does not run with moe among recompute_modules");
  }
  if (c.pipeline_parallel > 1 && c.virtual_pipeline_stages <= 1) {
    return Bad(f, "needs virtual_pipeline_stages > 1 with pipeline parallelism");
  }
  if (A2aOverlapMeetsFsdpPipeline(c)) {
    return Bad(f, "does not run with Megatron-FSDP (zero_stage 2 or 3) under pipeline parallelism");
  }
  if (const char* why = A2aOverlapRefusedByWorkload(w)) return Bad(f, why);
  return absl::OkStatus();
}

// Muon as Megatron-Core runs it (optimizer "muon"): without the distributed optimizer
// (ZeRO 0) or under its LayerWiseDistributedOptimizer, which gives each DP rank whole
// parameters (ZeRO 1); no gradient or parameter sharding beyond, no CPU-offloaded step
// (HybridDeviceOptimizer runs Adam). DeepSpeed, torchtitan and PyTorch FSDP runs are not
// modelled with it.
absl::Status ValidateMuonConfig(const Workload& w, const ParallelConfig& c) {
  if (w.optimizer != Optimizer::kMuon) return absl::OkStatus();
  if (c.zero_stage > 1) {
    return Bad("config.zero_stage", absl::StrCat(c.zero_stage, " with Muon: Megatron-Core runs it at ZeRO 0 or its "
                                                               "layer-wise ZeRO 1 (whole parameters a DP rank)"));
  }
  if (c.offload.optimizer) return Bad("config.offload.optimizer", "Muon's step is not offloaded (Adam only)");
  return absl::OkStatus();
}

absl::Status ValidateTransformerConfig(const Workload& w, const ParallelConfig& c) {
  const std::string p = "config.";
  const TransformerSpec t = w.transformer.Resolved();
  for (auto [name, degree] : {std::pair{"spatial_parallel", c.spatial_parallel},
                              {"filter_parallel", c.filter_parallel}, {"channel_parallel", c.channel_parallel}}) {
    if (degree > 1) {
      return Bad(p + name, "spatial, filter and channel parallelism apply to layer graphs (CNNs) only");
    }
  }
  if (t.num_attention_heads % c.tensor_parallel != 0) {
    return Bad(p + "tensor_parallel", absl::StrCat(c.tensor_parallel, " does not divide num_attention_heads ",
                                                   t.num_attention_heads));
  }
  if (t.num_kv_heads % c.tensor_parallel != 0) {
    return Bad(p + "tensor_parallel",
               absl::StrCat(c.tensor_parallel, " does not divide num_kv_heads ", t.num_kv_heads));
  }
  PARAPLAN_RETURN_IF_ERROR(ValidateMuonConfig(w, c));
  if (const FrameworkRefusal r = WorkloadRefusedByFramework(w, c.framework); r.field != nullptr) {
    return Bad(r.field, absl::StrCat(r.reason, FrameworkName(c.framework)));
  }
  // Stages need not hold equal layer counts (BLOOM-176B: 70 layers over 12 stages).
  PARAPLAN_RETURN_IF_ERROR(ValidateStageLayout(c, t.num_layers));
  if (c.cpu_offload_layers > 0 && c.cpu_offload_layers >= t.num_layers / c.pipeline_parallel) {
    return Bad(p + "cpu_offload_layers",
               absl::StrCat(c.cpu_offload_layers, " leaves no layer on the GPU of a stage of ",
                            t.num_layers / c.pipeline_parallel));
  }
  if (t.seq_length % c.context_parallel != 0) {
    return Bad(p + "context_parallel",
               absl::StrCat(c.context_parallel, " does not divide seq_length ", t.seq_length));
  }
  // Each CP rank holds two chunks of the sequence, one from each end, so that causal
  // attention's work balances (Megatron-Core's get_batch_on_this_cp_rank splits it in
  // 2 x cp; Transformer Engine's ring and PyTorch's context_parallel load balancer the same).
  if (c.context_parallel > 1 && t.seq_length % (2 * int64_t{c.context_parallel}) != 0) {
    return Bad(p + "context_parallel",
               absl::StrCat("2 x ", c.context_parallel, " does not divide seq_length ", t.seq_length,
                            ": each rank holds two chunks of the sequence"));
  }
  if (c.expert_parallel > 1) {
    if (!t.is_moe()) return Bad(p + "expert_parallel", "needs a mixture-of-experts model (moe.num_experts > 1)");
    if (t.moe.num_experts % c.expert_parallel != 0) {
      return Bad(p + "expert_parallel", absl::StrCat(c.expert_parallel, " does not divide num_experts ",
                                                     t.moe.num_experts));
    }
  }
  PARAPLAN_RETURN_IF_ERROR(ValidateExpertGrid(t, c));
  if (!t.is_moe() && (c.recompute_modules & (kRecomputeMoe | kRecomputeMoeAct | kRecomputeSharedExperts))) {
    return Bad(p + "recompute_modules", "moe, moe_act and shared_experts need a mixture-of-experts model");
  }
  if (!t.is_moe() && (c.offload_modules & (kOffloadExpertFc1 | kOffloadMoeAct))) {
    return Bad(p + "offload_modules", "expert_fc1 and moe_act need a mixture-of-experts model");
  }
  if (!t.is_moe() && c.moe_dispatcher != MoeDispatcher::kAllToAll) {
    return Bad(p + "moe_dispatcher", "needs a mixture-of-experts model (moe.num_experts > 1)");
  }
  return ValidateA2aOverlap(w, c);
}

// What a layer graph admits: no transformer degrees; filters, spatial axes and extents
// the split divides, layer by layer.
absl::Status ValidateLayerGraphConfig(const Workload& w, const ParallelConfig& c) {
  const std::string p = "config.";
  if (c.tensor_parallel > 1 || c.context_parallel > 1 || c.expert_parallel > 1 || c.expert_tensor_parallel > 1) {
    return Bad(p + "tensor_parallel", "tensor, context and expert parallelism apply to transformers only; "
                                      "use spatial, filter or channel parallelism for layer graphs");
  }
  if (c.recompute_modules != 0) return Bad(p + "recompute_modules", "applies to transformers only");
  if (c.cpu_offload_layers != 0) return Bad(p + "cpu_offload_layers", "applies to transformers only");
  if (c.offload_modules != 0) return Bad(p + "offload_modules", "applies to transformers only");
  if (c.moe_dispatcher != MoeDispatcher::kAllToAll || c.moe_a2a_overlap) {
    return Bad(p + (c.moe_a2a_overlap ? "moe_a2a_overlap" : "moe_dispatcher"),
               "applies to mixture-of-experts transformers only");
  }
  const int64_t layers = static_cast<int64_t>(w.layer_graph.layers.size());
  PARAPLAN_RETURN_IF_ERROR(ValidateStageLayout(c, layers));
  if (c.spatial_layers < 0 || c.spatial_layers > layers) {
    return Bad(p + "spatial_layers", absl::StrCat(c.spatial_layers, " is outside 0..", layers, " (the layer count)"));
  }
  const int first_axes = w.layer_graph.layers.empty() ? 0 : SpatialAxes(w.layer_graph.layers[0].input_shape);
  if (c.spatial_axes < 1 || c.spatial_axes > std::max(1, first_axes)) {
    return Bad(p + "spatial_axes", absl::StrCat(c.spatial_axes, " is outside 1..", std::max(1, first_axes),
                                                " (the spatial axes of the sample)"));
  }
  const std::vector<int> factors = SpatialFactors(c.spatial_parallel, c.spatial_axes);
  for (size_t i = 0; i < w.layer_graph.layers.size(); ++i) {
    const LayerSpec& l = w.layer_graph.layers[i];
    // Callers may check the config before (or without) the workload: no shape is
    // indexed before its size is known.
    if (l.output_shape.empty()) {
      return Bad(absl::StrCat("workload.layer_graph.layers[", i, "].output_shape"), "must not be empty");
    }
    if (l.output_shape[0] % c.filter_parallel != 0 && l.kind == LayerKind::kConv) {
      return Bad(p + "filter_parallel",
                 absl::StrCat(c.filter_parallel, " does not divide the ", l.output_shape[0],
                              " filters of layer \"", Abbreviated(l.name), "\""));
    }
    const bool split = c.spatial_layers <= 0 || static_cast<int64_t>(i) < c.spatial_layers;
    for (int a = 0; split && a < static_cast<int>(factors.size()); ++a) {
      if (a + 1 < static_cast<int>(l.output_shape.size()) && l.output_shape[a + 1] < factors[a]) {
        return Bad(p + "spatial_parallel",
                   absl::StrCat(c.spatial_parallel, " splits spatial axis ", a, " ", factors[a], " ways, more than the ",
                                l.output_shape[a + 1], " of layer \"", Abbreviated(l.name),
                                "\"; split fewer layers (spatial_layers)"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateConfig(const Workload& w, const ParallelConfig& raw) {
  PARAPLAN_RETURN_IF_ERROR(ValidateConfigFields(w, raw));
  const ParallelConfig c = raw.Normalized();
  PARAPLAN_RETURN_IF_ERROR(ValidateBatchAndSchedule(c));
  return w.kind == Workload::Kind::kTransformer ? ValidateTransformerConfig(w, c) : ValidateLayerGraphConfig(w, c);
}

FrameworkRefusal WorkloadRefusedByFramework(const Workload& w, Framework f) {
  const bool fsdp_or_deepspeed = f == Framework::kDeepSpeed || f == Framework::kPytorchFsdp;
  if (w.optimizer == Optimizer::kMuon && (fsdp_or_deepspeed || f == Framework::kTorchtitan)) {
    return {"workload.optimizer", "Muon is modelled as Megatron-Core runs it, not under "};
  }
  if (w.kind == Workload::Kind::kTransformer && w.transformer.mtp_num_layers > 0 && fsdp_or_deepspeed) {
    return {"workload.transformer.mtp_num_layers",
            "multi-token prediction runs under Megatron-Core and torchtitan (DeepSeek-V3's MTP module), not under "};
  }
  return {};
}

FrameworkRefusal RefusedByFramework(Framework f, const ParallelConfig& c) {
  if (f == Framework::kAny) return {};
  const PipelineSchedule s = c.pipeline_schedule;
  if (f == Framework::kMegatron || f == Framework::kNemo) {
    if (c.pipeline_parallel > 1 && s != PipelineSchedule::k1F1B && s != PipelineSchedule::kInterleaved1F1B) {
      return {"pipeline_schedule", "runs 1F1B or interleaved 1F1B only"};
    }
    // Megatron-Bridge's ConfigContainer asserts not use_tp_pp_dp_mapping under
    // Megatron-FSDP (training/config.py, _validate_and_apply_megatron_fsdp_v1_configs).
    if (c.zero_stage >= 2 && c.rank_order == RankOrder::kTpCpEpPpDp && c.pipeline_parallel > 1 &&
        c.data_parallel > 1) {
      return {"rank_order", "Megatron-FSDP (zero_stage 2 or 3) places pipeline stages outermost (tp-cp-ep-dp-pp)"};
    }
    // Megatron-Core's TransformerConfig refuses CPU offloading beside either.
    if (c.cpu_offload_layers > 0 && c.pipeline_parallel > 1) {
      return {"cpu_offload_layers", "CPU offloading does not run with pipeline parallelism"};
    }
    if (c.cpu_offload_layers > 0 && c.recompute != Recompute::kNone) {
      return {"cpu_offload_layers", "CPU offloading does not run with recomputation"};
    }
    return {};
  }
  // Fine-grained activation offloading, CPU offloading of layers (cpu_offloading_num_layers)
  // and the combined 1F1B are Megatron-Core's.
  if (c.offload_modules != 0) return {"offload_modules", "has no fine-grained activation offloading"};
  if (c.cpu_offload_layers > 0) return {"cpu_offload_layers", "has no CPU offloading of layers (Megatron-Core's)"};
  if (c.moe_a2a_overlap) return {"moe_a2a_overlap", "has no all-to-all overlap (Megatron-Core's combined 1F1B)"};
  // So are the recompute modules: elsewhere selective recompute re-runs the core attention
  // (Megatron-DeepSpeed's) or torchtitan's chosen ops, never a named module.
  if (c.recompute == Recompute::kSelective && (c.recompute_modules & ~unsigned{kRecomputeCoreAttn}) != 0) {
    return {"recompute_modules", "has no recompute modules (Megatron-Core's) beyond the core attention"};
  }
  // Both lay pipeline stages outermost: DeepSpeed's PipeModelDataParallelTopology (axes
  // pipe, data, model; runtime/pipe/topology.py), torchtitan's device mesh (pp, dp, cp, tp;
  // ParallelDims.build_mesh).
  if (c.rank_order == RankOrder::kTpCpEpPpDp && c.pipeline_parallel > 1 && c.data_parallel > 1) {
    return {"rank_order", "places pipeline stages outermost (tp-cp-ep-dp-pp)"};
  }
  if (f == Framework::kDeepSpeed) {
    if (c.context_parallel > 1) return {"context_parallel", "has no ring attention"};
    if (c.ExpertTensorParallel() != c.tensor_parallel) return {"expert_tensor_parallel", "experts follow TP"};
    if (c.virtual_pipeline_stages > 1) return {"virtual_pipeline_stages", "no interleaved schedule"};
    // Its pipeline engine runs one schedule, TrainSchedule's 1F1B (runtime/pipe/schedule.py).
    if (c.pipeline_parallel > 1 && s != PipelineSchedule::k1F1B) {
      return {"pipeline_schedule", "runs 1F1B only (its pipeline engine's TrainSchedule)"};
    }
    if (c.pipeline_parallel > 1 && c.zero_stage >= 2) return {"zero_stage", "2 and 3 do not run with pipeline stages"};
    // Its native MoE refuses ZeRO-3 and AutoEP's layers run it without AutoTP
    // (runtime/engine.py, _validate_zero3_moe_compatibility).
    if (c.zero_stage >= 3 && c.expert_parallel > 1 && c.tensor_parallel > 1) {
      return {"zero_stage", "3 with expert parallelism runs only as AutoEP, without tensor parallelism"};
    }
    if (c.moe_dispatcher == MoeDispatcher::kDeepEp) return {"moe_dispatcher", "has no DeepEP dispatcher"};
    return {};
  }
  if (c.zero_stage == 1) return {"zero_stage", "1 is not run"};
  if (f == Framework::kTorchtitan && c.zero_stage == 2) return {"zero_stage", "2 is not run: DDP or FSDP2"};
  // torchtitan runs zero-bubble as torch.distributed.pipelining's ZBVZeroBubble (what
  // `--emit torchtitan` names): two stages per rank, in a V.
  if (f == Framework::kTorchtitan && c.pipeline_parallel > 1 && s == PipelineSchedule::kZeroBubble &&
      c.virtual_pipeline_stages != 2) {
    return {"pipeline_schedule", "zero-bubble runs as ZBVZeroBubble, two stages per rank (virtual_pipeline_stages 2)"};
  }
  if (f == Framework::kPytorchFsdp &&
      (c.tensor_parallel > 1 || c.pipeline_parallel > 1 || c.context_parallel > 1 || c.expert_parallel > 1)) {
    return {"tensor_parallel", "runs data parallelism only"};
  }
  return {};
}

absl::Status ValidateFramework(Framework f, const ParallelConfig& raw) {
  const FrameworkRefusal r = RefusedByFramework(f, raw.Normalized());
  if (r.field == nullptr) return absl::OkStatus();
  return Bad(absl::StrCat("config.", r.field), absl::StrCat(r.reason, " (", FrameworkName(f), ")"));
}

absl::Status ValidateMeasured(double iteration_time_s, double peak_memory_gib) {
  PARAPLAN_RETURN_IF_ERROR(InRange("iteration_time_s", iteration_time_s, kMinMeasuredIterationS,
                                   kMaxMeasuredIterationS, /*zero_is_default=*/false));
  return InRange("peak_memory_gib", peak_memory_gib, 0, kMaxMeasuredMemoryGiB, /*zero_is_default=*/false);
}

absl::Status ValidateConfigForGpus(const Workload& w, const ParallelConfig& c, int64_t num_gpus) {
  PARAPLAN_RETURN_IF_ERROR(ValidateConfig(w, c));
  const int64_t product = c.Normalized().NumGpus();
  if (product != num_gpus) {
    return Bad("config", absl::StrCat("the parallel degrees multiply to ", product, " GPUs, not num_gpus ",
                                      num_gpus));
  }
  return absl::OkStatus();
}

}  // namespace paraplan
