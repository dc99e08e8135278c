#include "server/adapter.h"

#include <algorithm>
#include <iterator>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "estimator/inputs/measured_features.h"

namespace paraplan::adapter {

namespace {

absl::Status BadEnum(absl::string_view field, int value) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", value, " is not a known value"));
}

// Proto values in the order of QuantRecipe's enumerators.
constexpr v1::QuantRecipe kRecipes[] = {v1::QUANT_RECIPE_UNSPECIFIED,     v1::QUANT_RECIPE_DELAYED_SCALING,
                                        v1::QUANT_RECIPE_CURRENT_SCALING, v1::QUANT_RECIPE_BLOCKWISE,
                                        v1::QUANT_RECIPE_MXFP8,           v1::QUANT_RECIPE_NVFP4};

// Proto values in the order of CollectiveAlgorithm's enumerators.
constexpr v1::CollectiveAlgorithm kAlgorithms[] = {
    v1::ALGORITHM_UNSPECIFIED, v1::ALGORITHM_RING,     v1::ALGORITHM_TREE,
    v1::ALGORITHM_HALVING_DOUBLING, v1::ALGORITHM_HIERARCHICAL, v1::ALGORITHM_TORUS_2D,
    v1::ALGORITHM_TOPO_HALVING_DOUBLING};

v1::CollectiveAlgorithm AlgorithmToProto(CollectiveAlgorithm a) { return kAlgorithms[static_cast<int>(a)]; }

absl::StatusOr<CollectiveAlgorithm> AlgorithmFromProto(absl::string_view field, v1::CollectiveAlgorithm a) {
  for (size_t i = 0; i < std::size(kAlgorithms); ++i) {
    if (kAlgorithms[i] == a) return static_cast<CollectiveAlgorithm>(i);
  }
  return BadEnum(field, a);
}

// The collective algorithms and placement a config or plan constraints pin; fields are
// named under `prefix` ("config." / "constraints.").
absl::Status NetworkChoicesFromProto(absl::string_view prefix, v1::CollectiveAlgorithm dp, v1::CollectiveAlgorithm tp,
                                     v1::Placement placement, CollectiveAlgorithm* dp_out,
                                     CollectiveAlgorithm* tp_out, Placement* placement_out) {
  absl::StatusOr<CollectiveAlgorithm> a = AlgorithmFromProto(absl::StrCat(prefix, "dp_algorithm"), dp);
  if (!a.ok()) return a.status();
  *dp_out = *a;
  a = AlgorithmFromProto(absl::StrCat(prefix, "tp_algorithm"), tp);
  if (!a.ok()) return a.status();
  *tp_out = *a;
  switch (placement) {
    case v1::PLACEMENT_UNSPECIFIED:
    case v1::PLACEMENT_PACKED:
      *placement_out = Placement::kPacked;
      return absl::OkStatus();
    case v1::PLACEMENT_SCATTERED:
      *placement_out = Placement::kScattered;
      return absl::OkStatus();
    default:
      return BadEnum(absl::StrCat(prefix, "placement"), placement);
  }
}

std::vector<int64_t> Ints(const google::protobuf::RepeatedField<int64_t>& r) {
  return std::vector<int64_t>(r.begin(), r.end());
}

absl::StatusOr<Recompute> FromProto(v1::Recompute r, absl::string_view field) {
  switch (r) {
    case v1::RECOMPUTE_UNSPECIFIED:
    case v1::RECOMPUTE_NONE:
      return Recompute::kNone;
    case v1::RECOMPUTE_SELECTIVE:
      return Recompute::kSelective;
    case v1::RECOMPUTE_FULL:
      return Recompute::kFull;
    default:
      return BadEnum(field, r);
  }
}

absl::StatusOr<Framework> FromProto(v1::Framework f, absl::string_view field) {
  if (f < v1::FRAMEWORK_UNSPECIFIED || f > v1::FRAMEWORK_PYTORCH_FSDP) return BadEnum(field, f);
  // The proto's values follow Framework's enumerators (kAny = unspecified).
  return static_cast<Framework>(f);
}

absl::StatusOr<MoeDispatcher> FromProto(v1::MoeDispatcher d, absl::string_view field) {
  switch (d) {
    case v1::MOE_DISPATCHER_UNSPECIFIED:
    case v1::MOE_DISPATCHER_ALLTOALL:
      return MoeDispatcher::kAllToAll;
    case v1::MOE_DISPATCHER_ALLGATHER:
      return MoeDispatcher::kAllGather;
    case v1::MOE_DISPATCHER_DEEPEP:
      return MoeDispatcher::kDeepEp;
    default:
      return BadEnum(field, d);
  }
}

v1::MoeDispatcher ToProto(MoeDispatcher d) {
  switch (d) {
    case MoeDispatcher::kAllToAll:
      return v1::MOE_DISPATCHER_ALLTOALL;
    case MoeDispatcher::kAllGather:
      return v1::MOE_DISPATCHER_ALLGATHER;
    case MoeDispatcher::kDeepEp:
      return v1::MOE_DISPATCHER_DEEPEP;
  }
  return v1::MOE_DISPATCHER_UNSPECIFIED;
}

absl::StatusOr<PipelineSchedule> FromProto(v1::PipelineSchedule s, absl::string_view field) {
  switch (s) {
    case v1::SCHEDULE_UNSPECIFIED:
      return PipelineSchedule::kDefault;
    case v1::SCHEDULE_1F1B:
      return PipelineSchedule::k1F1B;
    case v1::SCHEDULE_GPIPE:
      return PipelineSchedule::kGPipe;
    case v1::SCHEDULE_INTERLEAVED_1F1B:
      return PipelineSchedule::kInterleaved1F1B;
    case v1::SCHEDULE_ZERO_BUBBLE:
      return PipelineSchedule::kZeroBubble;
    default:
      return BadEnum(field, s);
  }
}

v1::Recompute ToProto(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return v1::RECOMPUTE_NONE;
    case Recompute::kSelective:
      return v1::RECOMPUTE_SELECTIVE;
    case Recompute::kFull:
      return v1::RECOMPUTE_FULL;
  }
  return v1::RECOMPUTE_UNSPECIFIED;
}

v1::PipelineSchedule ToProto(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::kDefault:
      return v1::SCHEDULE_UNSPECIFIED;
    case PipelineSchedule::k1F1B:
      return v1::SCHEDULE_1F1B;
    case PipelineSchedule::kGPipe:
      return v1::SCHEDULE_GPIPE;
    case PipelineSchedule::kInterleaved1F1B:
      return v1::SCHEDULE_INTERLEAVED_1F1B;
    case PipelineSchedule::kZeroBubble:
      return v1::SCHEDULE_ZERO_BUBBLE;
  }
  return v1::SCHEDULE_UNSPECIFIED;
}

absl::StatusOr<Precision> FromProto(v1::Precision p) {
  switch (p) {
    case v1::PRECISION_UNSPECIFIED:
    case v1::PRECISION_BF16:
      return Precision::kBf16;
    case v1::PRECISION_FP16:
      return Precision::kFp16;
    case v1::PRECISION_FP8:
      return Precision::kFp8;
    case v1::PRECISION_FP32:
      return Precision::kFp32;
    case v1::PRECISION_FP4:
      return Precision::kFp4;
    default:
      return BadEnum("workload.precision", p);
  }
}

v1::Precision ToProto(Precision p) {
  switch (p) {
    case Precision::kBf16:
      return v1::PRECISION_BF16;
    case Precision::kFp16:
      return v1::PRECISION_FP16;
    case Precision::kFp8:
      return v1::PRECISION_FP8;
    case Precision::kFp32:
      return v1::PRECISION_FP32;
    case Precision::kFp4:
      return v1::PRECISION_FP4;
  }
  return v1::PRECISION_UNSPECIFIED;
}

Flag FromProto(v1::PlanConstraints::Flag f) {
  switch (f) {
    case v1::PlanConstraints::FLAG_ON:
      return Flag::kOn;
    case v1::PlanConstraints::FLAG_OFF:
      return Flag::kOff;
    default:
      return Flag::kAny;
  }
}

}  // namespace

absl::StatusOr<Workload> FromProto(const v1::Workload& w) {
  Workload out;
  out.name = w.name();
  absl::StatusOr<Precision> precision = FromProto(w.precision());
  if (!precision.ok()) return precision.status();
  out.precision = *precision;
  const auto* recipe = std::find(std::begin(kRecipes), std::end(kRecipes), w.quant_recipe());
  if (recipe == std::end(kRecipes)) return BadEnum("workload.quant_recipe", w.quant_recipe());
  out.quant_recipe = static_cast<QuantRecipe>(recipe - std::begin(kRecipes));
  out.dataset.sample_bytes = w.dataset().sample_bytes();
  out.dataset.num_samples = w.dataset().num_samples();
  switch (w.dataset().location()) {
    case v1::DATASET_LOCATION_UNSPECIFIED:
    case v1::DATASET_LOCAL:
      out.dataset.location = DatasetLocation::kLocal;
      break;
    case v1::DATASET_SHARED_FS:
      out.dataset.location = DatasetLocation::kSharedFs;
      break;
    case v1::DATASET_STAGED:
      out.dataset.location = DatasetLocation::kStaged;
      break;
    default:
      return BadEnum("workload.dataset.location", w.dataset().location());
  }
  out.dataset.decode_core_ms_per_sample = w.dataset().decode_core_ms_per_sample();
  out.dataset.decode_offloaded = w.dataset().decode_offloaded();
  if (w.dataset().format() < v1::DATASET_FORMAT_UNSPECIFIED || w.dataset().format() > v1::DATASET_FORMAT_RAW) {
    return BadEnum("workload.dataset.format", w.dataset().format());
  }
  out.dataset.format = static_cast<DatasetFormat>(w.dataset().format());  // same order
  out.dataset.fraction = w.dataset().fraction() != 0 ? w.dataset().fraction() : 1;
  out.training_tokens = w.training_tokens();
  switch (w.optimizer()) {
    case v1::OPTIMIZER_UNSPECIFIED:
    case v1::OPTIMIZER_ADAM:
      out.optimizer = Optimizer::kAdam;
      break;
    case v1::OPTIMIZER_SGD_MOMENTUM:
      out.optimizer = Optimizer::kSgdMomentum;
      break;
    default:
      return BadEnum("workload.optimizer", w.optimizer());
  }
  switch (w.mixed_precision()) {
    case v1::MIXED_PRECISION_UNSPECIFIED:
      out.mixed_precision = MixedPrecision::kDefault;  // the framework's
      break;
    case v1::MIXED_PRECISION_MASTER_IN_OPTIMIZER:
      out.mixed_precision = MixedPrecision::kMasterInOptimizer;
      break;
    case v1::MIXED_PRECISION_FP32_PARAMS:
      out.mixed_precision = MixedPrecision::kFp32Params;
      break;
    default:
      return BadEnum("workload.mixed_precision", w.mixed_precision());
  }
  if (w.has_transformer()) {
    const v1::TransformerSpec& t = w.transformer();
    out.kind = Workload::Kind::kTransformer;
    TransformerSpec& s = out.transformer;
    s.num_layers = t.num_layers();
    s.hidden_size = t.hidden_size();
    s.num_attention_heads = t.num_attention_heads();
    s.num_kv_heads = t.num_kv_heads();
    s.head_dim = t.head_dim();
    s.mla.q_lora_rank = t.mla().q_lora_rank();
    s.mla.kv_lora_rank = t.mla().kv_lora_rank();
    s.mla.qk_nope_head_dim = t.mla().qk_nope_head_dim();
    s.mla.qk_rope_head_dim = t.mla().qk_rope_head_dim();
    s.mla.v_head_dim = t.mla().v_head_dim();
    s.sliding_window.tokens = t.sliding_window().tokens();
    s.sliding_window.layer_interval = t.sliding_window().layer_interval();
    s.ffn_hidden_size = t.ffn_hidden_size();
    s.seq_length = t.seq_length();
    s.vocab_size = t.vocab_size();
    s.gated_mlp = t.gated_mlp();
    s.tied_embeddings = t.tied_embeddings();
    switch (t.normalization()) {
      case v1::NORMALIZATION_UNSPECIFIED:
      case v1::NORMALIZATION_LAYERNORM:
        s.normalization = Normalization::kLayerNorm;
        break;
      case v1::NORMALIZATION_RMSNORM:
        s.normalization = Normalization::kRmsNorm;
        break;
      default:
        return BadEnum("workload.transformer.normalization", t.normalization());
    }
    s.dropout = t.has_dropout() ? t.dropout() : kDefaultDropout;
    s.moe.num_experts = t.moe().num_experts();
    s.moe.top_k = t.moe().top_k();
    s.moe.expert_ffn_hidden_size = t.moe().expert_ffn_hidden_size();
    s.moe.moe_layer_interval = t.moe().moe_layer_interval();
    s.moe.num_shared_experts = t.moe().num_shared_experts();
    s.moe.shared_expert_ffn_hidden_size = t.moe().shared_expert_ffn_hidden_size();
    s.moe.first_dense_layers = t.moe().first_dense_layers();
    s.moe.load_imbalance = t.moe().load_imbalance();
  } else if (w.has_layer_graph()) {
    out.kind = Workload::Kind::kLayerGraph;
    for (const v1::Layer& l : w.layer_graph().layers()) {
      LayerSpec& s = out.layer_graph.layers.emplace_back();
      s.name = l.name();
      s.kind = l.kind();
      s.input_shape = Ints(l.input_shape());
      s.output_shape = Ints(l.output_shape());
      s.kernel_shape = Ints(l.kernel_shape());
      s.stride = Ints(l.stride());
      s.padding = Ints(l.padding());
      s.dilation = Ints(l.dilation());
      s.groups = l.groups();
      s.inputs.assign(l.inputs().begin(), l.inputs().end());
      s.bias = l.has_bias() ? l.bias() : true;
    }
    out.layer_graph.sample_shape = Ints(w.layer_graph().sample_shape());
  } else {
    return absl::InvalidArgumentError("workload: give a transformer or a layer_graph");
  }
  return out;
}

namespace {

// Megatron-Core's module names (`names`, in bit order) as bits; a name it lacks is an
// error naming the field, the index and the names it has.
template <size_t N>
absl::StatusOr<unsigned> ModuleBits(const google::protobuf::RepeatedPtrField<std::string>& given,
                                    const char* const (&names)[N], absl::string_view field) {
  unsigned bits = 0;
  for (int i = 0; i < given.size(); ++i) {
    const auto* it = std::find(std::begin(names), std::end(names), given[i]);
    if (it == std::end(names)) {
      return absl::InvalidArgumentError(absl::StrCat(field, "[", i, "]: \"", given[i].substr(0, 64),
                                                     "\" is not one of ", absl::StrJoin(names, ", ")));
    }
    bits |= 1u << (it - std::begin(names));
  }
  return bits;
}

}  // namespace

absl::StatusOr<ParallelConfig> FromProto(const v1::ParallelConfig& c) {
  ParallelConfig out;
  out.data_parallel = c.data_parallel();
  out.tensor_parallel = c.tensor_parallel();
  out.pipeline_parallel = c.pipeline_parallel();
  out.context_parallel = c.context_parallel();
  out.expert_parallel = c.expert_parallel();
  out.expert_tensor_parallel = c.expert_tensor_parallel();
  absl::StatusOr<MoeDispatcher> dispatcher = FromProto(c.moe_dispatcher(), "config.moe_dispatcher");
  if (!dispatcher.ok()) return dispatcher.status();
  out.moe_dispatcher = *dispatcher;
  out.moe_a2a_overlap = c.moe_a2a_overlap();
  out.sequence_parallel = c.sequence_parallel();
  out.virtual_pipeline_stages = c.virtual_pipeline_stages();
  absl::StatusOr<unsigned> recompute_modules =
      ModuleBits(c.recompute_modules(), kRecomputeModuleNames, "config.recompute_modules");
  if (!recompute_modules.ok()) return recompute_modules.status();
  out.recompute_modules = *recompute_modules;
  absl::StatusOr<unsigned> offload_modules =
      ModuleBits(c.offload_modules(), kOffloadModuleNames, "config.offload_modules");
  if (!offload_modules.ok()) return offload_modules.status();
  out.offload_modules = *offload_modules;
  out.cpu_offload_layers = c.cpu_offload_layers();
  out.fp8_param_gather = c.fp8_param_gather();
  out.first_pipeline_stage_layers = c.first_pipeline_stage_layers();
  out.last_pipeline_stage_layers = c.last_pipeline_stage_layers();
  out.micro_batch_size = c.micro_batch_size();
  out.global_batch_size = c.global_batch_size();
  absl::StatusOr<Recompute> rc = FromProto(c.recompute(), "config.recompute");
  if (!rc.ok()) return rc.status();
  out.recompute = *rc;
  out.zero_stage = c.zero_stage();
  absl::StatusOr<PipelineSchedule> sched = FromProto(c.pipeline_schedule(), "config.pipeline_schedule");
  if (!sched.ok()) return sched.status();
  out.pipeline_schedule = *sched;
  out.overlap_grad_reduce = c.overlap_grad_reduce();
  out.overlap_param_gather = c.overlap_param_gather();
  out.offload.optimizer = c.offload().optimizer();
  out.offload.weights = c.offload().weights();
  out.offload.activations = c.offload().activations();
  out.spatial_parallel = c.spatial_parallel();
  out.filter_parallel = c.filter_parallel();
  out.channel_parallel = c.channel_parallel();
  out.flash_attention = c.flash_attention();
  out.cuda_graphs = c.cuda_graphs();
  out.tp_comm_overlap = c.tp_comm_overlap();
  out.spatial_layers = c.spatial_layers();
  out.spatial_axes = c.spatial_axes();
  if (absl::Status st = NetworkChoicesFromProto("config.", c.dp_algorithm(), c.tp_algorithm(), c.placement(),
                                                &out.dp_algorithm, &out.tp_algorithm, &out.placement);
      !st.ok()) {
    return st;
  }
  if (c.rank_order().empty() || c.rank_order() == "tp-cp-ep-dp-pp") {
    out.rank_order = RankOrder::kTpCpEpDpPp;
  } else if (c.rank_order() == "tp-cp-ep-pp-dp") {
    out.rank_order = RankOrder::kTpCpEpPpDp;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("config.rank_order: \"", c.rank_order().substr(0, 64),
                                                   "\" is not tp-cp-ep-dp-pp or tp-cp-ep-pp-dp"));
  }
  return out;
}

absl::StatusOr<SystemProfile> FromProto(const v1::SystemProfile& p) {
  SystemProfile out;
  out.name = p.name();
  out.version = p.version();
  out.description = p.description();
  out.gpus_per_node = p.gpus_per_node();
  out.num_nodes = p.num_nodes();
  const v1::Accelerator& a = p.accelerator();
  out.accelerator = {a.name(),       a.peak_tflops_bf16(), a.peak_tflops_fp16(),
                     a.peak_tflops_fp8(), a.peak_tflops_fp32(), a.memory_gib(),
                     a.memory_bandwidth_gbytes_per_s(), a.busy_power_w(), a.idle_power_w(),
                     a.sm_count(),  a.peak_tflops_fp4(), a.power_limit_w()};
  for (int i = 0; i < p.network_levels_size(); ++i) {
    const v1::NetworkLevel& l = p.network_levels(i);
    NetworkLevel n;
    n.name = l.name();
    n.domain_size = l.domain_size();
    n.bandwidth_gbytes_per_s = l.bandwidth_gbytes_per_s();
    n.latency_us = l.latency_us();
    n.oversubscription = l.oversubscription() > 0 ? l.oversubscription() : 1;
    n.in_network_reduction = l.in_network_reduction();
    n.switch_radix = l.switch_radix();
    n.rail_optimized = l.rail_optimized();
    n.torus_dims.assign(l.torus_dims().begin(), l.torus_dims().end());
    n.global_links_per_group = l.global_links_per_group();
    n.global_link_gbytes_per_s = l.global_link_gbytes_per_s();
    switch (l.topology()) {
      case v1::TOPOLOGY_UNSPECIFIED:
      case v1::TOPOLOGY_SWITCH:
        n.topology = Topology::kSwitch;
        break;
      case v1::TOPOLOGY_FAT_TREE:
        n.topology = Topology::kFatTree;
        break;
      case v1::TOPOLOGY_TORUS_2D:
        n.topology = Topology::kTorus2D;
        break;
      case v1::TOPOLOGY_RING:
        n.topology = Topology::kRing;
        break;
      case v1::TOPOLOGY_DRAGONFLY:
        n.topology = Topology::kDragonfly;
        break;
      case v1::TOPOLOGY_TORUS_3D:
        n.topology = Topology::kTorus3D;
        break;
      default:
        return BadEnum(absl::StrCat("profile.network_levels[", i, "].topology"), l.topology());
    }
    out.network_levels.push_back(n);
  }
  out.host = {p.host().memory_gib(), p.host().pcie_gbytes_per_s(), p.host().cpu_cores(), p.host().cpu_power_w()};
  out.storage.read_gbytes_per_s = p.storage().read_gbytes_per_s();
  out.storage.shared_fs_gbytes_per_s = p.storage().shared_fs_gbytes_per_s();
  out.storage.shared_fs_node_gbytes_per_s = p.storage().shared_fs_node_gbytes_per_s();
  out.node_power_w = p.node_power_w();
  out.price_per_gpu_hour_usd = p.price_per_gpu_hour_usd();
  for (const v1::LayerTiming& t : p.layer_timings()) {
    out.layer_timings.push_back({t.workload(), t.layer(), t.forward_s_per_sample(), t.backward_s_per_sample()});
  }
  const v1::Calibration& c = p.calibration();
  Calibration& k = out.calibration;
  k.matmul_efficiency = c.matmul_efficiency();
  k.matmul_half_efficiency_gflop = c.matmul_half_efficiency_gflop();
  k.memory_bound_efficiency = c.memory_bound_efficiency();
  for (const v1::NetworkCalibration& n : c.network()) {
    NetworkCalibration nc{n.level(), n.efficiency(), n.latency_us(), {}, n.congestion()};
    for (const v1::BandwidthPoint& b : n.bandwidth_curve()) nc.bandwidth_curve.push_back({b.bytes(), b.efficiency()});
    k.network.push_back(std::move(nc));
  }
  k.matmul_efficiency_fp8 = c.matmul_efficiency_fp8();
  k.overlap_efficiency = c.overlap_efficiency();
  k.iteration_overhead_s = c.iteration_overhead_s();
  k.kernel_overhead_us = c.kernel_overhead_us();
  k.recompute_overhead_us = c.recompute_overhead_us();
  k.memory_overhead_fraction = c.memory_overhead_fraction();
  k.memory_overhead_gib = c.memory_overhead_gib();
  k.expandable_segments_overhead_fraction = c.expandable_segments_overhead_fraction();
  k.attention_efficiency_fwd = c.attention_efficiency_fwd();
  k.attention_efficiency_bwd = c.attention_efficiency_bwd();
  k.cudnn_attention_efficiency_fwd = c.cudnn_attention_efficiency_fwd();
  k.cudnn_attention_efficiency_bwd = c.cudnn_attention_efficiency_bwd();
  k.collective_overhead_us = c.collective_overhead_us();
  k.halo_host_staged = c.halo_host_staged();
  k.halo_exchange_latency_us = c.halo_exchange_latency_us();
  k.host_staging_efficiency = c.host_staging_efficiency();
  k.jpeg_decode_mpixels_per_core_s = c.jpeg_decode_mpixels_per_core_s();
  k.hdf5_read_gbytes_per_core_s = c.hdf5_read_gbytes_per_core_s();
  k.shared_fs_files_per_s = c.shared_fs_files_per_s();
  for (const v1::RegimeCalibration& r : c.regimes()) {
    RegimeCalibration g{r.regime(), {}, r.num_measurements(), r.cv_mape_ratio(), r.max_gpus(), r.max_parameters()};
    for (const v1::RegimeValue& v : r.values()) g.values.push_back({v.parameter(), v.value()});
    absl::StatusOr<unsigned> features = FeaturesFromNames(
        {r.measured_features().begin(), r.measured_features().end()},
        absl::StrCat("profile.calibration.regimes[", k.regimes.size(), "].measured_features"));
    if (!features.ok()) return features.status();
    g.measured_features = *features;
    k.regimes.push_back(std::move(g));
  }
  return out;
}

absl::StatusOr<PlanRequest> FromProto(const v1::PlanRequest& r, const Workload& workload) {
  PlanRequest out;
  out.workload = workload;
  out.gpus.assign(r.gpus().begin(), r.gpus().end());
  out.global_batch_size = r.global_batch_size();
  out.top_k = r.top_k() == 0 ? 10 : r.top_k();
  absl::StatusOr<Framework> framework = FromProto(r.framework(), "framework");
  if (!framework.ok()) return framework.status();
  out.constraints.framework = *framework;
  switch (r.objective()) {
    case v1::OBJECTIVE_UNSPECIFIED:
    case v1::OBJECTIVE_TIME:
      out.objective = Objective::kTime;
      break;
    case v1::OBJECTIVE_COST:
      out.objective = Objective::kCost;
      break;
    case v1::OBJECTIVE_ENERGY:
      out.objective = Objective::kEnergy;
      break;
    default:
      return BadEnum("objective", r.objective());
  }
  out.objective_quantile = r.objective_quantile();
  const v1::PlanConstraints& k = r.constraints();
  PlanConstraints& c = out.constraints;
  c.tensor_parallel.assign(k.tensor_parallel().begin(), k.tensor_parallel().end());
  c.pipeline_parallel.assign(k.pipeline_parallel().begin(), k.pipeline_parallel().end());
  c.data_parallel.assign(k.data_parallel().begin(), k.data_parallel().end());
  c.context_parallel.assign(k.context_parallel().begin(), k.context_parallel().end());
  c.expert_parallel.assign(k.expert_parallel().begin(), k.expert_parallel().end());
  c.micro_batch_size.assign(k.micro_batch_size().begin(), k.micro_batch_size().end());
  c.virtual_pipeline_stages.assign(k.virtual_pipeline_stages().begin(), k.virtual_pipeline_stages().end());
  c.zero_stage.assign(k.zero_stage().begin(), k.zero_stage().end());
  for (int i = 0; i < k.recompute_size(); ++i) {
    absl::StatusOr<Recompute> rc = FromProto(static_cast<v1::Recompute>(k.recompute(i)),
                                             absl::StrCat("constraints.recompute[", i, "]"));
    if (!rc.ok()) return rc.status();
    c.recompute.push_back(*rc);
  }
  for (int i = 0; i < k.pipeline_schedule_size(); ++i) {
    absl::StatusOr<PipelineSchedule> s = FromProto(static_cast<v1::PipelineSchedule>(k.pipeline_schedule(i)),
                                                   absl::StrCat("constraints.pipeline_schedule[", i, "]"));
    if (!s.ok()) return s.status();
    c.pipeline_schedule.push_back(*s);
  }
  c.max_tensor_parallel = k.max_tensor_parallel();
  c.max_pipeline_parallel = k.max_pipeline_parallel();
  c.max_context_parallel = k.max_context_parallel();
  c.max_micro_batch_size = k.max_micro_batch_size();
  c.memory_headroom_ratio = k.memory_headroom_ratio();
  c.allow_offload = k.allow_offload();
  c.cuda_graphs = k.cuda_graphs();
  c.tp_comm_overlap = k.tp_comm_overlap();
  if (absl::Status st = NetworkChoicesFromProto("constraints.", k.dp_algorithm(), k.tp_algorithm(), k.placement(),
                                                &c.dp_algorithm, &c.tp_algorithm, &c.placement);
      !st.ok()) {
    return st;
  }
  c.sequence_parallel = FromProto(k.sequence_parallel());
  c.flash_attention = FromProto(k.flash_attention());
  c.overlap_grad_reduce = FromProto(k.overlap_grad_reduce());
  return out;
}

v1::Workload ToProto(const Workload& w) {
  v1::Workload out;
  out.set_name(w.name);
  out.set_precision(ToProto(w.precision));
  out.set_quant_recipe(kRecipes[static_cast<int>(w.quant_recipe)]);
  if (w.dataset.sample_bytes > 0 || w.dataset.num_samples > 0 || w.dataset.format != DatasetFormat::kUnspecified) {
    out.mutable_dataset()->set_sample_bytes(w.dataset.sample_bytes);
    out.mutable_dataset()->set_num_samples(w.dataset.num_samples);
    out.mutable_dataset()->set_location(w.dataset.location == DatasetLocation::kSharedFs ? v1::DATASET_SHARED_FS
                                        : w.dataset.location == DatasetLocation::kStaged ? v1::DATASET_STAGED
                                                                                         : v1::DATASET_LOCAL);
    out.mutable_dataset()->set_decode_core_ms_per_sample(w.dataset.decode_core_ms_per_sample);
    out.mutable_dataset()->set_decode_offloaded(w.dataset.decode_offloaded);
    out.mutable_dataset()->set_format(static_cast<v1::DatasetFormat>(w.dataset.format));
    out.mutable_dataset()->set_fraction(w.dataset.fraction);
  }
  out.set_training_tokens(w.training_tokens);
  out.set_optimizer(w.optimizer == Optimizer::kSgdMomentum ? v1::OPTIMIZER_SGD_MOMENTUM : v1::OPTIMIZER_ADAM);
  if (w.mixed_precision == MixedPrecision::kFp32Params) out.set_mixed_precision(v1::MIXED_PRECISION_FP32_PARAMS);
  if (w.mixed_precision == MixedPrecision::kMasterInOptimizer) {
    out.set_mixed_precision(v1::MIXED_PRECISION_MASTER_IN_OPTIMIZER);
  }
  if (w.kind == Workload::Kind::kTransformer) {
    const TransformerSpec& s = w.transformer;
    v1::TransformerSpec* t = out.mutable_transformer();
    t->set_num_layers(s.num_layers);
    t->set_hidden_size(s.hidden_size);
    t->set_num_attention_heads(s.num_attention_heads);
    t->set_num_kv_heads(s.num_kv_heads);
    t->set_head_dim(s.head_dim);
    if (s.mla.enabled()) {
      v1::MlaSpec* m = t->mutable_mla();
      m->set_q_lora_rank(s.mla.q_lora_rank);
      m->set_kv_lora_rank(s.mla.kv_lora_rank);
      m->set_qk_nope_head_dim(s.mla.qk_nope_head_dim);
      m->set_qk_rope_head_dim(s.mla.qk_rope_head_dim);
      m->set_v_head_dim(s.mla.v_head_dim);
    }
    if (s.sliding_window.tokens > 0) {
      t->mutable_sliding_window()->set_tokens(s.sliding_window.tokens);
      t->mutable_sliding_window()->set_layer_interval(s.sliding_window.layer_interval);
    }
    t->set_ffn_hidden_size(s.ffn_hidden_size);
    t->set_seq_length(s.seq_length);
    t->set_vocab_size(s.vocab_size);
    t->set_gated_mlp(s.gated_mlp);
    t->set_tied_embeddings(s.tied_embeddings);
    t->set_normalization(s.normalization == Normalization::kRmsNorm ? v1::NORMALIZATION_RMSNORM
                                                                    : v1::NORMALIZATION_LAYERNORM);
    t->set_dropout(s.dropout);
    if (s.moe.num_experts > 0) {
      t->mutable_moe()->set_num_experts(s.moe.num_experts);
      t->mutable_moe()->set_top_k(s.moe.top_k);
      t->mutable_moe()->set_expert_ffn_hidden_size(s.moe.expert_ffn_hidden_size);
      t->mutable_moe()->set_moe_layer_interval(s.moe.moe_layer_interval);
      t->mutable_moe()->set_num_shared_experts(s.moe.num_shared_experts);
      t->mutable_moe()->set_shared_expert_ffn_hidden_size(s.moe.shared_expert_ffn_hidden_size);
      t->mutable_moe()->set_first_dense_layers(s.moe.first_dense_layers);
      t->mutable_moe()->set_load_imbalance(s.moe.load_imbalance);
    }
  } else {
    v1::LayerGraph* g = out.mutable_layer_graph();
    for (const LayerSpec& l : w.layer_graph.layers) {
      v1::Layer* p = g->add_layers();
      p->set_name(l.name);
      p->set_kind(l.kind);
      for (int64_t v : l.input_shape) p->add_input_shape(v);
      for (int64_t v : l.output_shape) p->add_output_shape(v);
      for (int64_t v : l.kernel_shape) p->add_kernel_shape(v);
      for (int64_t v : l.stride) p->add_stride(v);
      for (int64_t v : l.padding) p->add_padding(v);
      for (int64_t v : l.dilation) p->add_dilation(v);
      p->set_groups(l.groups);
      for (const std::string& in : l.inputs) p->add_inputs(in);
      p->set_bias(l.bias);
    }
    for (int64_t v : w.layer_graph.sample_shape) g->add_sample_shape(v);
  }
  return out;
}

v1::ParallelConfig ToProto(const ParallelConfig& c) {
  v1::ParallelConfig out;
  out.set_data_parallel(c.data_parallel);
  out.set_tensor_parallel(c.tensor_parallel);
  out.set_pipeline_parallel(c.pipeline_parallel);
  out.set_context_parallel(c.context_parallel);
  out.set_expert_parallel(c.expert_parallel);
  if (c.expert_tensor_parallel > 0 && c.expert_tensor_parallel != c.tensor_parallel) {
    out.set_expert_tensor_parallel(c.expert_tensor_parallel);
  }
  if (c.moe_dispatcher != MoeDispatcher::kAllToAll) out.set_moe_dispatcher(ToProto(c.moe_dispatcher));
  out.set_moe_a2a_overlap(c.moe_a2a_overlap);
  out.set_sequence_parallel(c.sequence_parallel);
  out.set_virtual_pipeline_stages(c.virtual_pipeline_stages);
  for (unsigned i = 0; i < std::size(kRecomputeModuleNames); ++i) {
    if (c.recompute_modules & (1u << i)) out.add_recompute_modules(kRecomputeModuleNames[i]);
  }
  for (unsigned i = 0; i < std::size(kOffloadModuleNames); ++i) {
    if (c.offload_modules & (1u << i)) out.add_offload_modules(kOffloadModuleNames[i]);
  }
  out.set_first_pipeline_stage_layers(c.first_pipeline_stage_layers);
  out.set_cpu_offload_layers(c.cpu_offload_layers);
  out.set_fp8_param_gather(c.fp8_param_gather);
  out.set_last_pipeline_stage_layers(c.last_pipeline_stage_layers);
  out.set_micro_batch_size(c.micro_batch_size);
  out.set_global_batch_size(c.global_batch_size);
  out.set_recompute(ToProto(c.recompute));
  out.set_zero_stage(c.zero_stage);
  out.set_pipeline_schedule(ToProto(c.pipeline_schedule));
  out.set_overlap_grad_reduce(c.overlap_grad_reduce);
  out.set_overlap_param_gather(c.overlap_param_gather);
  if (c.offload.any()) {
    out.mutable_offload()->set_optimizer(c.offload.optimizer);
    out.mutable_offload()->set_weights(c.offload.weights);
    out.mutable_offload()->set_activations(c.offload.activations);
  }
  out.set_spatial_parallel(c.spatial_parallel);
  out.set_filter_parallel(c.filter_parallel);
  out.set_channel_parallel(c.channel_parallel);
  out.set_flash_attention(c.flash_attention);
  out.set_cuda_graphs(c.cuda_graphs);
  out.set_tp_comm_overlap(c.tp_comm_overlap);
  out.set_spatial_layers(c.spatial_layers);
  out.set_spatial_axes(c.spatial_axes);
  out.set_dp_algorithm(AlgorithmToProto(c.dp_algorithm));
  out.set_tp_algorithm(AlgorithmToProto(c.tp_algorithm));
  if (c.placement == Placement::kScattered) out.set_placement(v1::PLACEMENT_SCATTERED);
  out.set_rank_order(c.rank_order == RankOrder::kTpCpEpDpPp ? "tp-cp-ep-dp-pp" : "tp-cp-ep-pp-dp");
  return out;
}

v1::Calibration ToProto(const Calibration& k) {
  v1::Calibration c;
  c.set_matmul_efficiency(k.matmul_efficiency);
  c.set_matmul_half_efficiency_gflop(k.matmul_half_efficiency_gflop);
  c.set_memory_bound_efficiency(k.memory_bound_efficiency);
  for (const NetworkCalibration& n : k.network) {
    v1::NetworkCalibration* p = c.add_network();
    p->set_level(n.level);
    p->set_efficiency(n.efficiency);
    p->set_latency_us(n.latency_us);
    p->set_congestion(n.congestion);
    for (const BandwidthPoint& b : n.bandwidth_curve) {
      v1::BandwidthPoint* q = p->add_bandwidth_curve();
      q->set_bytes(b.bytes);
      q->set_efficiency(b.efficiency);
    }
  }
  c.set_overlap_efficiency(k.overlap_efficiency);
  c.set_iteration_overhead_s(k.iteration_overhead_s);
  c.set_kernel_overhead_us(k.kernel_overhead_us);
  c.set_recompute_overhead_us(k.recompute_overhead_us);
  c.set_memory_overhead_fraction(k.memory_overhead_fraction);
  c.set_memory_overhead_gib(k.memory_overhead_gib);
  c.set_expandable_segments_overhead_fraction(k.expandable_segments_overhead_fraction);
  c.set_attention_efficiency_fwd(k.attention_efficiency_fwd);
  c.set_attention_efficiency_bwd(k.attention_efficiency_bwd);
  c.set_cudnn_attention_efficiency_fwd(k.cudnn_attention_efficiency_fwd);
  c.set_cudnn_attention_efficiency_bwd(k.cudnn_attention_efficiency_bwd);
  c.set_collective_overhead_us(k.collective_overhead_us);
  c.set_halo_host_staged(k.halo_host_staged);
  for (const RegimeCalibration& g : k.regimes) {
    v1::RegimeCalibration* r = c.add_regimes();
    r->set_regime(g.regime);
    r->set_num_measurements(g.num_measurements);
    r->set_cv_mape_ratio(g.cv_mape_ratio);
    r->set_max_gpus(g.max_gpus);
    r->set_max_parameters(g.max_parameters);
    for (const std::string& f : FeatureNames(g.measured_features)) r->add_measured_features(f);
    for (const RegimeValue& v : g.values) {
      v1::RegimeValue* w = r->add_values();
      w->set_parameter(v.parameter);
      w->set_value(v.value);
    }
  }
  c.set_halo_exchange_latency_us(k.halo_exchange_latency_us);
  c.set_host_staging_efficiency(k.host_staging_efficiency);
  c.set_jpeg_decode_mpixels_per_core_s(k.jpeg_decode_mpixels_per_core_s);
  c.set_hdf5_read_gbytes_per_core_s(k.hdf5_read_gbytes_per_core_s);
  c.set_shared_fs_files_per_s(k.shared_fs_files_per_s);
  c.set_matmul_efficiency_fp8(k.matmul_efficiency_fp8);
  return c;
}

v1::SystemProfile ToProto(const SystemProfile& p) {
  v1::SystemProfile out;
  out.set_name(p.name);
  out.set_version(p.version);
  out.set_description(p.description);
  out.set_gpus_per_node(p.gpus_per_node);
  out.set_num_nodes(p.num_nodes);
  v1::Accelerator* a = out.mutable_accelerator();
  a->set_name(p.accelerator.name);
  a->set_peak_tflops_bf16(p.accelerator.peak_tflops_bf16);
  a->set_peak_tflops_fp16(p.accelerator.peak_tflops_fp16);
  a->set_peak_tflops_fp8(p.accelerator.peak_tflops_fp8);
  a->set_peak_tflops_fp32(p.accelerator.peak_tflops_fp32);
  a->set_memory_gib(p.accelerator.memory_gib);
  a->set_memory_bandwidth_gbytes_per_s(p.accelerator.memory_bandwidth_gbytes_per_s);
  a->set_busy_power_w(p.accelerator.busy_power_w);
  a->set_idle_power_w(p.accelerator.idle_power_w);
  a->set_sm_count(p.accelerator.sm_count);
  a->set_peak_tflops_fp4(p.accelerator.peak_tflops_fp4);
  a->set_power_limit_w(p.accelerator.power_limit_w);
  static const v1::Topology kTopologies[] = {v1::TOPOLOGY_SWITCH, v1::TOPOLOGY_FAT_TREE, v1::TOPOLOGY_TORUS_2D,
                                             v1::TOPOLOGY_RING, v1::TOPOLOGY_DRAGONFLY, v1::TOPOLOGY_TORUS_3D};
  for (const NetworkLevel& l : p.network_levels) {
    v1::NetworkLevel* n = out.add_network_levels();
    n->set_name(l.name);
    n->set_domain_size(l.domain_size);
    n->set_bandwidth_gbytes_per_s(l.bandwidth_gbytes_per_s);
    n->set_latency_us(l.latency_us);
    n->set_topology(kTopologies[static_cast<int>(l.topology)]);
    n->set_oversubscription(l.oversubscription);
    n->set_in_network_reduction(l.in_network_reduction);
    n->set_switch_radix(l.switch_radix);
    n->set_rail_optimized(l.rail_optimized);
    for (int d : l.torus_dims) n->add_torus_dims(d);
    n->set_global_links_per_group(l.global_links_per_group);
    n->set_global_link_gbytes_per_s(l.global_link_gbytes_per_s);
  }
  out.mutable_host()->set_memory_gib(p.host.memory_gib);
  out.mutable_host()->set_pcie_gbytes_per_s(p.host.pcie_gbytes_per_s);
  out.mutable_storage()->set_read_gbytes_per_s(p.storage.read_gbytes_per_s);
  out.mutable_storage()->set_shared_fs_gbytes_per_s(p.storage.shared_fs_gbytes_per_s);
  out.mutable_storage()->set_shared_fs_node_gbytes_per_s(p.storage.shared_fs_node_gbytes_per_s);
  out.mutable_host()->set_cpu_cores(p.host.cpu_cores);
  out.mutable_host()->set_cpu_power_w(p.host.cpu_power_w);
  out.set_node_power_w(p.node_power_w);
  out.set_price_per_gpu_hour_usd(p.price_per_gpu_hour_usd);
  for (const LayerTiming& t : p.layer_timings) {
    v1::LayerTiming* q = out.add_layer_timings();
    q->set_workload(t.workload);
    q->set_layer(t.layer);
    q->set_forward_s_per_sample(t.forward_s_per_sample);
    q->set_backward_s_per_sample(t.backward_s_per_sample);
  }
  *out.mutable_calibration() = ToProto(p.calibration);
  return out;
}

v1::CollectiveUse ToProto(const CollectiveUse& u) {
  v1::CollectiveUse q;
  q.set_dimension(u.dimension);
  q.set_kind(static_cast<v1::CollectiveKind>(static_cast<int>(u.kind) + 1));
  q.set_algorithm(AlgorithmToProto(u.algorithm));
  q.set_level(u.level);
  q.set_level_name(u.level_name);
  q.set_group_size(u.group_size);
  q.set_stride(u.stride);
  q.set_bytes(u.bytes);
  q.set_calls(u.calls);
  q.set_seconds_per_call(u.seconds_per_call);
  q.set_overlapped(u.overlapped);
  return q;
}

v1::Estimate ToProto(const Estimate& e) {
  v1::Estimate out;
  *out.mutable_config() = ToProto(e.config);
  out.set_iteration_time_s(e.iteration_time_s);
  v1::TimeBreakdown* t = out.mutable_time();
  t->set_compute_s(e.time.compute_s);
  t->set_recompute_s(e.time.recompute_s);
  t->set_tp_comm_s(e.time.tp_comm_s);
  t->set_spatial_comm_s(e.time.spatial_comm_s);
  t->set_cp_comm_s(e.time.cp_comm_s);
  t->set_ep_comm_s(e.time.ep_comm_s);
  t->set_pp_comm_s(e.time.pp_comm_s);
  t->set_pipeline_bubble_s(e.time.pipeline_bubble_s);
  t->set_dp_comm_s(e.time.dp_comm_s);
  t->set_optimizer_s(e.time.optimizer_s);
  t->set_data_loading_s(e.time.data_loading_s);
  t->set_overhead_s(e.time.overhead_s);
  t->set_offload_s(e.time.offload_s);
  v1::MemoryBreakdown* m = out.mutable_memory();
  m->set_weights_bytes(e.memory.weights_bytes);
  m->set_gradients_bytes(e.memory.gradients_bytes);
  m->set_optimizer_bytes(e.memory.optimizer_bytes);
  m->set_activations_bytes(e.memory.activations_bytes);
  m->set_buffers_bytes(e.memory.buffers_bytes);
  m->set_overhead_bytes(e.memory.overhead_bytes);
  m->set_total_bytes(e.memory.total_bytes);
  m->set_capacity_bytes(e.memory.capacity_bytes);
  m->set_fits(e.memory.fits);
  m->set_host_bytes(e.memory.host_bytes);
  out.set_samples_per_s(e.samples_per_s);
  out.set_tokens_per_s(e.tokens_per_s);
  out.set_model_tflops_per_gpu(e.model_tflops_per_gpu);
  out.set_mfu(e.mfu);
  out.set_energy_per_iteration_j(e.energy_per_iteration_j);
  out.set_cost_per_iteration_usd(e.cost_per_iteration_usd);
  out.set_time_to_train_s(e.time_to_train_s);
  out.set_energy_to_train_j(e.energy_to_train_j);
  out.set_cost_to_train_usd(e.cost_to_train_usd);
  out.set_bottleneck(e.bottleneck);
  for (const std::string& w : e.warnings) out.add_warnings(w);
  for (const CollectiveUse& u : e.collectives) *out.add_collectives() = ToProto(u);
  out.set_profile_name(e.profile_name);
  out.set_profile_version(e.profile_version);
  out.set_num_gpus(e.num_gpus);
  out.set_memory_headroom_ratio(e.memory_headroom_ratio);
  out.mutable_interval()->set_low_s(e.interval.low_s);
  out.mutable_interval()->set_high_s(e.interval.high_s);
  out.mutable_interval()->set_confidence(e.interval.confidence);
  out.set_in_envelope(e.in_envelope);
  for (const std::string& n : e.envelope_notes) out.add_envelope_notes(n);
  for (const std::string& q : e.equivalents) out.add_equivalents(q);
  return out;
}

v1::FitReport ToProto(const FitReport& r) {
  v1::FitReport out;
  out.set_num_measurements(r.num_measurements);
  out.set_mape_before_ratio(r.mape_before_ratio);
  out.set_mape_after_ratio(r.mape_after_ratio);
  out.set_cv_mape_ratio(r.cv_mape_ratio);
  for (const ParameterChange& p : r.parameters) {
    v1::ParameterChange* c = out.add_parameters();
    c->set_name(p.name);
    c->set_before(p.before);
    c->set_after(p.after);
    c->set_fitted(p.fitted);
    c->set_reason(p.reason);
    c->set_stddev(p.stddev);
    c->set_lower_bound(p.lower_bound);
    c->set_upper_bound(p.upper_bound);
    c->set_at_bound(p.at_bound);
    c->set_sensitivity_ratio(p.sensitivity_ratio);
    c->set_cv_folds_fitted(p.cv_folds_fitted);
  }
  out.set_num_available(r.num_available);
  out.set_num_used(r.num_used);
  out.set_sampling_note(r.sampling_note);
  out.set_num_groups(r.num_groups);
  out.set_cv_valid(r.cv_valid);
  out.set_cv_folds(r.cv_folds);
  out.set_cv_method(r.cv_method);
  out.set_num_peak_measurements(r.num_peak_measurements);
  out.set_memory_cv_valid(r.memory_cv_valid);
  out.set_memory_cv_mape_ratio(r.memory_cv_mape_ratio);
  out.set_current_mape_ratio(r.current_mape_ratio);
  out.set_promote(r.promote);
  out.set_promotion_reason(r.promotion_reason);
  out.set_extrapolation_valid(r.extrapolation_valid);
  out.set_cv_extrapolation_mape(r.cv_extrapolation_mape_ratio);
  out.set_extrapolation_base_mape(r.extrapolation_base_mape_ratio);
  out.set_extrapolation_method(r.extrapolation_method);
  out.set_scope(r.scope);
  out.set_model_gap(r.model_gap);
  for (const StratumDisagreement& d : r.disagreements) {
    v1::StratumDisagreement* x = out.add_disagreements();
    x->set_parameter(d.parameter);
    x->set_narrow_regime(d.narrow_regime);
    x->set_narrow_value(d.narrow_value);
    x->set_narrow_stddev(d.narrow_stddev);
    x->set_wide_regime(d.wide_regime);
    x->set_wide_value(d.wide_value);
    x->set_wide_stddev(d.wide_stddev);
  }
  return out;
}

absl::StatusOr<Framework> FrameworkFromProto(v1::Framework f) { return FromProto(f, "framework"); }

}  // namespace paraplan::adapter
