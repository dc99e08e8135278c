#include "estimator/inputs/parallel_config.h"

#include <algorithm>
#include <iterator>

#include "absl/strings/str_cat.h"

namespace paraplan {

ParallelConfig ParallelConfig::Normalized() const {
  ParallelConfig c = *this;
  c.data_parallel = AtLeastOne(c.data_parallel);
  c.tensor_parallel = AtLeastOne(c.tensor_parallel);
  c.pipeline_parallel = AtLeastOne(c.pipeline_parallel);
  c.context_parallel = AtLeastOne(c.context_parallel);
  c.expert_parallel = AtLeastOne(c.expert_parallel);
  if (c.expert_tensor_parallel <= 0) c.expert_tensor_parallel = c.tensor_parallel;
  c.virtual_pipeline_stages = AtLeastOne(c.virtual_pipeline_stages);
  c.micro_batch_size = AtLeastOne(c.micro_batch_size);
  c.spatial_parallel = AtLeastOne(c.spatial_parallel);
  c.filter_parallel = AtLeastOne(c.filter_parallel);
  c.channel_parallel = AtLeastOne(c.channel_parallel);
  c.spatial_axes = AtLeastOne(c.spatial_axes);
  if (c.spatial_parallel == 1) {
    c.spatial_layers = 0;
    c.spatial_axes = 1;
  }
  if (c.pipeline_schedule == PipelineSchedule::kDefault) {
    c.pipeline_schedule = c.virtual_pipeline_stages > 1 ? PipelineSchedule::kInterleaved1F1B
                                                        : PipelineSchedule::k1F1B;
  }
  return c;
}

std::vector<int> ParallelConfig::PipelineChunkLayers(int num_layers) const {
  const int pp = AtLeastOne(pipeline_parallel);
  const int v = AtLeastOne(virtual_pipeline_stages);
  const int chunks = pp * v;
  std::vector<int> out(chunks);
  const int first = pp > 1 ? first_pipeline_stage_layers : 0;
  const int last = pp > 1 ? last_pipeline_stage_layers : 0;
  if (first <= 0 && last <= 0) {
    for (int k = 0; k < chunks; ++k) {
      out[k] = static_cast<int>(int64_t{k + 1} * num_layers / chunks - int64_t{k} * num_layers / chunks);
    }
    return out;
  }
  // Stage totals: the given ends, the rest split evenly over the stages left to it.
  std::vector<int> stage(pp);
  const int fixed_first = first > 0 ? first : -1, fixed_last = last > 0 ? last : -1;
  const int free_stages = pp - (fixed_first >= 0 ? 1 : 0) - (fixed_last >= 0 ? 1 : 0);
  const int rest = num_layers - std::max(0, fixed_first) - std::max(0, fixed_last);
  int free_index = 0;
  for (int s = 0; s < pp; ++s) {
    if (s == 0 && fixed_first >= 0) {
      stage[s] = fixed_first;
    } else if (s == pp - 1 && fixed_last >= 0) {
      stage[s] = fixed_last;
    } else {
      const int64_t i = free_index++;
      stage[s] = free_stages > 0 ? static_cast<int>((i + 1) * rest / free_stages - i * rest / free_stages) : 0;
    }
  }
  for (int s = 0; s < pp; ++s) {
    for (int j = 0; j < v; ++j) {
      // Even split of the stage's layers; the short chunks first, or last on the last stage.
      const int jj = s == pp - 1 && s > 0 ? v - 1 - j : j;
      const int64_t n = stage[s];
      out[int64_t{jj} * pp + s] = static_cast<int>((j + 1) * n / v - j * n / v);
    }
  }
  return out;
}

const char* RecomputeName(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "?";
}

namespace {

template <size_t N>
std::string ModuleBitsText(unsigned modules, const char* const (&names)[N]) {
  std::string s;
  for (unsigned i = 0; i < N; ++i) {
    if (modules & (1u << i)) absl::StrAppend(&s, s.empty() ? "" : ",", names[i]);
  }
  return s;
}

}  // namespace

std::string RecomputeModulesText(unsigned modules) { return ModuleBitsText(modules, kRecomputeModuleNames); }

std::string OffloadModulesText(unsigned modules) { return ModuleBitsText(modules, kOffloadModuleNames); }

const char* FrameworkName(Framework f) {
  switch (f) {
    case Framework::kAny:
      return "FRAMEWORK_UNSPECIFIED";
    case Framework::kMegatron:
      return "FRAMEWORK_MEGATRON";
    case Framework::kNemo:
      return "FRAMEWORK_NEMO";
    case Framework::kDeepSpeed:
      return "FRAMEWORK_DEEPSPEED";
    case Framework::kTorchtitan:
      return "FRAMEWORK_TORCHTITAN";
    case Framework::kPytorchFsdp:
      return "FRAMEWORK_PYTORCH_FSDP";
  }
  return "?";
}

const char* DispatcherName(MoeDispatcher d) {
  switch (d) {
    case MoeDispatcher::kAllToAll:
      return "alltoall";
    case MoeDispatcher::kAllGather:
      return "allgather";
    case MoeDispatcher::kDeepEp:
      return "deepep";
  }
  return "?";
}

const char* ScheduleName(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::kDefault:
      return "default";
    case PipelineSchedule::k1F1B:
      return "1f1b";
    case PipelineSchedule::kGPipe:
      return "gpipe";
    case PipelineSchedule::kInterleaved1F1B:
      return "interleaved";
    case PipelineSchedule::kZeroBubble:
      return "zero-bubble";
  }
  return "?";
}

std::string ParallelConfig::ShortString() const {
  std::string s = absl::StrCat("TP", tensor_parallel, " PP", pipeline_parallel, " DP",
                               data_parallel);
  if (context_parallel > 1) absl::StrAppend(&s, " CP", context_parallel);
  if (expert_parallel > 1) absl::StrAppend(&s, " EP", expert_parallel);
  if (expert_tensor_parallel > 0 && expert_tensor_parallel != tensor_parallel) {
    absl::StrAppend(&s, " ETP", expert_tensor_parallel);
  }
  if (moe_dispatcher != MoeDispatcher::kAllToAll) absl::StrAppend(&s, " ", DispatcherName(moe_dispatcher));
  if (moe_a2a_overlap) absl::StrAppend(&s, " a2a-overlap");
  if (virtual_pipeline_stages > 1) absl::StrAppend(&s, " v", virtual_pipeline_stages);
  if (first_pipeline_stage_layers > 0 || last_pipeline_stage_layers > 0) {
    absl::StrAppend(&s, " stages=", first_pipeline_stage_layers, "/", last_pipeline_stage_layers);
  }
  if (spatial_parallel > 1) {
    absl::StrAppend(&s, " SPATIAL", spatial_parallel);
    if (spatial_axes > 1) absl::StrAppend(&s, "x", spatial_axes, "axes");
    if (spatial_layers > 0) absl::StrAppend(&s, "@", spatial_layers, "layers");
  }
  if (filter_parallel > 1) absl::StrAppend(&s, " FILTER", filter_parallel);
  if (channel_parallel > 1) absl::StrAppend(&s, " CHANNEL", channel_parallel);
  absl::StrAppend(&s, " mbs", micro_batch_size, " ", RecomputeName(recompute));
  if (recompute == Recompute::kSelective && recompute_modules != 0) {
    absl::StrAppend(&s, "(", RecomputeModulesText(recompute_modules), ")");
  }
  if (sequence_parallel) absl::StrAppend(&s, " sp");
  if (zero_stage > 0) absl::StrAppend(&s, " zero", zero_stage);
  if (flash_attention) absl::StrAppend(&s, " flash");
  if (cuda_graphs) absl::StrAppend(&s, " cuda-graphs");
  if (tp_comm_overlap.value_or(false)) absl::StrAppend(&s, " tp-comm-overlap");
  if (pipeline_parallel > 1) absl::StrAppend(&s, " ", ScheduleName(pipeline_schedule));
  if (overlap_grad_reduce) absl::StrAppend(&s, " overlap-grad");
  if (overlap_param_gather) absl::StrAppend(&s, " overlap-param");
  if (offload.optimizer) absl::StrAppend(&s, " offload-opt");
  if (offload.weights) absl::StrAppend(&s, " offload-w");
  if (offload.activations) absl::StrAppend(&s, " offload-act");
  if (cpu_offload_layers > 0) absl::StrAppend(&s, " cpu-offload", cpu_offload_layers);
  if (offload_modules != 0) absl::StrAppend(&s, " offload(", OffloadModulesText(offload_modules), ")");
  if (fp8_param_gather.value_or(false)) absl::StrAppend(&s, " fp8-param-gather");
  if (rank_order == RankOrder::kTpCpEpPpDp) absl::StrAppend(&s, " order=tp-cp-ep-pp-dp");
  return s;
}

}  // namespace paraplan
