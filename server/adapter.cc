#include "server/adapter.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "estimator/inputs/echo.h"
#include "server/adapter_internal.h"

namespace paraplan::adapter {

using internal::AlgorithmFromProto;
using internal::AlgorithmToProto;
using internal::BadEnum;
using internal::FromProto;
using internal::ToProto;

namespace {

// Proto values in the order of QuantRecipe's enumerators.
constexpr v1::QuantRecipe kRecipes[] = {v1::QUANT_RECIPE_UNSPECIFIED,     v1::QUANT_RECIPE_DELAYED_SCALING,
                                        v1::QUANT_RECIPE_CURRENT_SCALING, v1::QUANT_RECIPE_BLOCKWISE,
                                        v1::QUANT_RECIPE_MXFP8,           v1::QUANT_RECIPE_NVFP4};

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

absl::StatusOr<TransformerSpec> TransformerFromProto(const v1::TransformerSpec& t) {
  TransformerSpec s;
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
  s.mtp_num_layers = t.mtp_num_layers();
  s.qk_layernorm = t.qk_layernorm();
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
  s.moe.router_num_groups = t.moe().router_num_groups();
  s.moe.router_group_topk = t.moe().router_group_topk();
  return s;
}

absl::StatusOr<LayerGraphSpec> LayerGraphFromProto(const v1::LayerGraph& g) {
  LayerGraphSpec graph;
  for (const v1::Layer& l : g.layers()) {
    LayerSpec& s = graph.layers.emplace_back();
    s.name = l.name();
    if (!LayerKindNamed(l.kind(), &s.kind)) {
      return absl::InvalidArgumentError(
          absl::StrCat("workload.layer_graph.layers[", graph.layers.size() - 1, "].kind: \"", Abbreviated(l.kind(), 40),
                       "\" is not one of ", absl::StrJoin(kLayerKindNames, ", ")));
    }
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
  graph.sample_shape = Ints(g.sample_shape());
  return graph;
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
    case v1::OPTIMIZER_MUON:
      out.optimizer = Optimizer::kMuon;
      break;
    default:
      return BadEnum("workload.optimizer", w.optimizer());
  }
  if (w.optimizer_moments() != v1::PRECISION_UNSPECIFIED) {  // its range: ValidateWorkload
    absl::StatusOr<Precision> moments = FromProto(w.optimizer_moments());
    if (!moments.ok()) return BadEnum("workload.optimizer_moments", w.optimizer_moments());
    out.optimizer_moments = *moments;
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
    case v1::MIXED_PRECISION_BF16_GRADS:
      out.mixed_precision = MixedPrecision::kBf16Grads;
      break;
    default:
      return BadEnum("workload.mixed_precision", w.mixed_precision());
  }
  if (w.has_transformer()) {
    out.kind = Workload::Kind::kTransformer;
    absl::StatusOr<TransformerSpec> spec = TransformerFromProto(w.transformer());
    if (!spec.ok()) return spec.status();
    out.transformer = *std::move(spec);
  } else if (w.has_layer_graph()) {
    out.kind = Workload::Kind::kLayerGraph;
    absl::StatusOr<LayerGraphSpec> graph = LayerGraphFromProto(w.layer_graph());
    if (!graph.ok()) return graph.status();
    out.layer_graph = *std::move(graph);
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
  if (c.has_fp8_param_gather()) out.fp8_param_gather = c.fp8_param_gather();
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
  if (c.has_tp_comm_overlap()) out.tp_comm_overlap = c.tp_comm_overlap();
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
  if (k.has_tp_comm_overlap()) c.tp_comm_overlap = k.tp_comm_overlap();
  c.moe_a2a_overlap = k.moe_a2a_overlap();
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
  out.set_optimizer(w.optimizer == Optimizer::kSgdMomentum ? v1::OPTIMIZER_SGD_MOMENTUM
                    : w.optimizer == Optimizer::kMuon      ? v1::OPTIMIZER_MUON
                                                           : v1::OPTIMIZER_ADAM);
  if (w.optimizer_moments != Precision::kFp32) out.set_optimizer_moments(ToProto(w.optimizer_moments));
  if (w.mixed_precision == MixedPrecision::kFp32Params) out.set_mixed_precision(v1::MIXED_PRECISION_FP32_PARAMS);
  if (w.mixed_precision == MixedPrecision::kBf16Grads) out.set_mixed_precision(v1::MIXED_PRECISION_BF16_GRADS);
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
    t->set_mtp_num_layers(s.mtp_num_layers);
    t->set_qk_layernorm(s.qk_layernorm);
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
      t->mutable_moe()->set_router_num_groups(s.moe.router_num_groups);
      t->mutable_moe()->set_router_group_topk(s.moe.router_group_topk);
    }
  } else {
    v1::LayerGraph* g = out.mutable_layer_graph();
    for (const LayerSpec& l : w.layer_graph.layers) {
      v1::Layer* p = g->add_layers();
      p->set_name(l.name);
      p->set_kind(LayerKindName(l.kind));
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
  if (c.fp8_param_gather.has_value()) out.set_fp8_param_gather(*c.fp8_param_gather);
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
  if (c.tp_comm_overlap.has_value()) out.set_tp_comm_overlap(*c.tp_comm_overlap);
  out.set_spatial_layers(c.spatial_layers);
  out.set_spatial_axes(c.spatial_axes);
  out.set_dp_algorithm(AlgorithmToProto(c.dp_algorithm));
  out.set_tp_algorithm(AlgorithmToProto(c.tp_algorithm));
  if (c.placement == Placement::kScattered) out.set_placement(v1::PLACEMENT_SCATTERED);
  out.set_rank_order(c.rank_order == RankOrder::kTpCpEpDpPp ? "tp-cp-ep-dp-pp" : "tp-cp-ep-pp-dp");
  return out;
}


absl::StatusOr<Framework> FrameworkFromProto(v1::Framework f) { return FromProto(f, "framework"); }

}  // namespace paraplan::adapter
