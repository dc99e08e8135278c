// The pipeline schedule's two figures a candidate's assembly needs: how many micro-batches
// of activations the first stage holds at once, and the bubble, for 1F1B, interleaved
// 1F1B (Megatron-Core's warm-up order), GPipe and zero-bubble (ZB-H1).
//
// Pure functions of a normalized ParallelConfig; no state.
#ifndef PARAPLAN_ESTIMATOR_ITERATION_PIPELINE_SCHEDULE_H_
#define PARAPLAN_ESTIMATOR_ITERATION_PIPELINE_SCHEDULE_H_

#include "estimator/inputs/parallel_config.h"

namespace paraplan {

// Micro-batches, in whole first-stage micro-batches, whose activations the first pipeline
// stage holds at once under `config`'s schedule with `m` micro-batches. Interleaved:
// Megatron-Core's warm-up, p micro-batches of every chunk and p - 1 more of chunk 0, whose
// share of the stage's activations is `chunk0_share` (1 / v for even chunks; nearly 0 for
// Llama 3.1 405B at PP 16, v 8 with the embedding's slot accounted, where chunk 0 is the
// embedding alone: 16, where the even-chunk formula says 17.9).
double InFlightMicroBatches(const ParallelConfig& config, int m, double chunk0_share);

// Bubble of the schedule as a multiple of one micro-batch's stage time; `wgrad_share`
// is the share of that time spent in weight-gradient GEMMs.
double BubbleStages(const ParallelConfig& config, double wgrad_share);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_ITERATION_PIPELINE_SCHEDULE_H_
