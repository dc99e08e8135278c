// The pipeline schedule's two figures a candidate's assembly needs: how many micro-batches
// of activations a stage holds at once, and the bubble, for 1F1B, interleaved
// 1F1B (Megatron-Core's warm-up order), GPipe and zero-bubble (ZB-H1).
//
// Pure functions of a normalized ParallelConfig; no state.
#ifndef PARAPLAN_ESTIMATOR_ITERATION_PIPELINE_SCHEDULE_H_
#define PARAPLAN_ESTIMATOR_ITERATION_PIPELINE_SCHEDULE_H_

#include "estimator/inputs/parallel_config.h"

namespace paraplan {

// Micro-batches, in whole stage micro-batches (all its chunks), whose activations
// pipeline stage `stage` (0 = first) holds at once under `config`'s schedule with `m`
// micro-batches: GPipe m; 1F1B (and ZB-H1) p - stage. Interleaved: Megatron-Core's
// warm-up (get_pp_rank_microbatches), 2 (p - stage - 1) + (v - 1) p forwards and one more
// before the first backward, taken p micro-batches of a chunk at a time from chunk 0;
// `chunk0_share` is chunk 0's share of the stage's activations, the other chunks share
// the rest evenly. The first stage: p micro-batches of every chunk and p - 1 more of
// chunk 0 (1 / v for even chunks; nearly 0 for Llama 3.1 405B at PP 16, v 8 with the
// embedding's slot accounted, where chunk 0 is the embedding alone: 16, where the
// even-chunk formula says 17.9); the last stage at p 8, v 3: 17 chunks, 5.7 stage
// micro-batches with even chunks.
double InFlightMicroBatches(const ParallelConfig& config, int m, double chunk0_share, int stage = 0);

// Bubble of the schedule as a multiple of one micro-batch's stage time; `wgrad_share`
// is the share of that time spent in weight-gradient GEMMs.
double BubbleStages(const ParallelConfig& config, double wgrad_share);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_ITERATION_PIPELINE_SCHEDULE_H_
