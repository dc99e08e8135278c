#include "estimator/iteration/pipeline_schedule.h"

#include <algorithm>

namespace paraplan {

namespace {

// The share of the first stage's layers its first chunk holds under virtual stages: the
// first stage's deficit against whole chunks sits there (Megatron-Core's
// account_for_embedding_in_pipeline_split takes the embedding's slot from the first
// virtual stage: 7 layers over 8 chunks are 0 + 7 x 1); 1/v when they divide evenly.
double FirstChunkShare(int layers, int v) {
  if (v <= 1 || layers <= 0) return 1;
  const int per_chunk = (layers + v - 1) / v;
  return std::max(0, layers - (v - 1) * per_chunk) / static_cast<double>(layers);
}

}  // namespace

double InFlightMicroBatches(const ParallelConfig& c, int m, int first_stage_layers) {
  const int pp = c.pipeline_parallel;
  if (pp <= 1) return 1;
  switch (c.pipeline_schedule) {
    case PipelineSchedule::kGPipe:
      return m;  // all forwards before any backward (Huang et al. 2019)
    case PipelineSchedule::kInterleaved1F1B: {
      // Megatron-Core's get_pp_rank_microbatches: the first rank runs (p - 1) x 2 + (v - 1)
      // x p warm-up forwards, p micro-batches per chunk in turn, and one more before its
      // first backward: p micro-batches of every chunk, then p - 1 more of chunk 0 — with
      // even chunks p + (p - 1) / v stage micro-batches (Narayanan et al. SC'21,
      // Korthikanti et al. 2022 eq. 5). The all-to-all overlap warms up one chunk more
      // (overlap_moe_expert_parallel_comm), of chunk 0.
      const double chunk0 = FirstChunkShare(first_stage_layers, c.virtual_pipeline_stages);
      return std::min<double>(m, pp + (pp - 1.0 + (c.moe_a2a_overlap ? 1.0 : 0.0)) * chunk0);
    }
    default:
      return std::min(m, pp);  // 1F1B: the first stage keeps p micro-batches in flight
  }
}

double BubbleStages(const ParallelConfig& c, double wgrad_share) {
  const int pp = c.pipeline_parallel;
  if (pp <= 1) return 0;
  switch (c.pipeline_schedule) {
    case PipelineSchedule::kGPipe:
    case PipelineSchedule::k1F1B:
    case PipelineSchedule::kDefault:
      return pp - 1.0;  // (p-1)/m of the ideal time (Narayanan et al. SC'21)
    case PipelineSchedule::kInterleaved1F1B:
      return (pp - 1.0) / c.virtual_pipeline_stages;
    case PipelineSchedule::kZeroBubble:
      // ZB-H1 (Qi et al. 2023, sec. 3.1): backward is split into B (data gradients) and W
      // (weight gradients), W fills the bubble: (p-1)(T_F + T_B - T_W) against 1F1B's
      // (p-1)(T_F + T_B + T_W), with W = wgrad_share of the stage time.
      return (pp - 1.0) / c.virtual_pipeline_stages * std::max(0.0, 1.0 - 2.0 * wgrad_share);
  }
  return pp - 1.0;
}

}  // namespace paraplan
