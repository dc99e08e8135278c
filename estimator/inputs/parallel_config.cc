#include "estimator/inputs/parallel_config.h"

#include "absl/strings/str_cat.h"

namespace paraplan {

namespace {
int AtLeastOne(int v) { return v > 0 ? v : 1; }
}  // namespace

ParallelConfig ParallelConfig::Normalized() const {
  ParallelConfig c = *this;
  c.data_parallel = AtLeastOne(c.data_parallel);
  c.tensor_parallel = AtLeastOne(c.tensor_parallel);
  c.pipeline_parallel = AtLeastOne(c.pipeline_parallel);
  c.context_parallel = AtLeastOne(c.context_parallel);
  c.expert_parallel = AtLeastOne(c.expert_parallel);
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

int64_t ParallelConfig::NumGpus() const {
  return int64_t{AtLeastOne(data_parallel)} * AtLeastOne(tensor_parallel) *
         AtLeastOne(pipeline_parallel) * AtLeastOne(context_parallel) *
         AtLeastOne(spatial_parallel) * AtLeastOne(filter_parallel) *
         AtLeastOne(channel_parallel);
}

int ParallelConfig::NumMicroBatches() const {
  const int64_t per_step = int64_t{AtLeastOne(data_parallel)} * AtLeastOne(micro_batch_size);
  return static_cast<int>(global_batch_size / per_step);
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
  if (virtual_pipeline_stages > 1) absl::StrAppend(&s, " v", virtual_pipeline_stages);
  if (spatial_parallel > 1) {
    absl::StrAppend(&s, " SPATIAL", spatial_parallel);
    if (spatial_axes > 1) absl::StrAppend(&s, "x", spatial_axes, "axes");
    if (spatial_layers > 0) absl::StrAppend(&s, "@", spatial_layers, "layers");
  }
  if (filter_parallel > 1) absl::StrAppend(&s, " FILTER", filter_parallel);
  if (channel_parallel > 1) absl::StrAppend(&s, " CHANNEL", channel_parallel);
  absl::StrAppend(&s, " mbs", micro_batch_size, " ", RecomputeName(recompute));
  if (sequence_parallel) absl::StrAppend(&s, " sp");
  if (zero_stage > 0) absl::StrAppend(&s, " zero", zero_stage);
  if (flash_attention) absl::StrAppend(&s, " flash");
  if (cuda_graphs) absl::StrAppend(&s, " cuda-graphs");
  if (tp_comm_overlap) absl::StrAppend(&s, " tp-comm-overlap");
  if (pipeline_parallel > 1) absl::StrAppend(&s, " ", ScheduleName(pipeline_schedule));
  if (overlap_grad_reduce) absl::StrAppend(&s, " overlap-grad");
  if (overlap_param_gather) absl::StrAppend(&s, " overlap-param");
  if (offload.optimizer) absl::StrAppend(&s, " offload-opt");
  if (offload.weights) absl::StrAppend(&s, " offload-w");
  if (offload.activations) absl::StrAppend(&s, " offload-act");
  if (rank_order == RankOrder::kTpCpEpPpDp) absl::StrAppend(&s, " order=tp-cp-ep-pp-dp");
  return s;
}

}  // namespace paraplan
