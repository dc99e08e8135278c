#include "estimator/iteration/pipeline_schedule.h"

#include <algorithm>
#include <cstdint>

namespace paraplan {

double InFlightMicroBatches(const ParallelConfig& c, int m, double chunk0_share, int stage) {
  const int pp = c.pipeline_parallel;
  if (pp <= 1) return 1;
  switch (c.pipeline_schedule) {
    case PipelineSchedule::kGPipe:
      return m;  // all forwards before any backward (Huang et al. 2019)
    case PipelineSchedule::kInterleaved1F1B: {
      // Megatron-Core's get_pp_rank_microbatches: rank i runs (p - i - 1) x 2 + (v - 1) x p
      // warm-up forwards, p micro-batches per chunk in turn, and one more before its first
      // backward (Narayanan et al. SC'21; Korthikanti et al. 2022 eq. 5 for the first
      // rank). The all-to-all overlap warms up one chunk more
      // (overlap_moe_expert_parallel_comm).
      const int v = std::max(1, c.virtual_pipeline_stages);
      const int64_t forwards = 2 * int64_t{pp - stage - 1} + int64_t{v - 1} * pp + 1 + (c.moe_a2a_overlap ? 1 : 0);
      const int64_t whole = int64_t{v} * pp;  // p of every chunk
      double held;
      if (forwards >= whole) {
        held = pp + static_cast<double>(forwards - whole) * chunk0_share;  // then chunk 0 again
      } else {
        const int64_t groups = forwards / pp, rest = forwards % pp;
        const double other = (1 - chunk0_share) / (v - 1);  // v > 1 here: forwards < v p
        held = groups >= 1 ? pp * chunk0_share + static_cast<double>((groups - 1) * pp + rest) * other
                           : static_cast<double>(rest) * chunk0_share;
      }
      return std::min<double>(m, held);
    }
    default:
      return std::min(m, pp - stage);  // 1F1B: stage i keeps p - i micro-batches in flight
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
