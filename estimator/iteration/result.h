// The predicted cost of one training iteration under one configuration: the time and
// memory breakdowns, the collectives it runs, and what follows from them (throughput,
// MFU, energy, money). Invariant: the fields of TimeBreakdown are the *exposed* parts
// of the iteration and sum to iteration_time_s. Plain data.
#ifndef PARAPLAN_ESTIMATOR_ITERATION_RESULT_H_
#define PARAPLAN_ESTIMATOR_ITERATION_RESULT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "estimator/inputs/parallel_config.h"

namespace paraplan {

struct TimeBreakdown {
  double compute_s = 0;
  double recompute_s = 0;
  double tp_comm_s = 0;
  double spatial_comm_s = 0;  // CNN halos, spatial batch-norm statistics, gathers at the cut
  double cp_comm_s = 0;
  double ep_comm_s = 0;
  double pp_comm_s = 0;
  double pipeline_bubble_s = 0;
  double dp_comm_s = 0;
  double optimizer_s = 0;
  double data_loading_s = 0;
  double overhead_s = 0;
  double offload_s = 0;

  double Sum() const;
};

struct MemoryBreakdown {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double buffers_bytes = 0;
  double overhead_bytes = 0;
  double total_bytes = 0;
  double capacity_bytes = 0;
  bool fits = false;
  double host_bytes = 0;
  // The peak is at the optimizer step (fp32 copies of a 16-bit gradient buffer's shard,
  // counted in gradients_bytes; activations freed), not during the backward.
  bool peak_at_optimizer_step = false;
};


// One collective an iteration runs on every rank: its parallel dimension, the algorithm
// used, where its group sits and how often it runs. `bytes` follows Collectives' usage:
// the full buffer for all-reduce / all-gather / reduce-scatter, what each rank sends for
// all-to-all and send-recv. Every group of the dimension runs it at the same time.
struct CollectiveUse {
  std::string dimension;  // "tp", "cp", "ep", "pp", "dp", "emb" (the end stages' embedding copies)
  CollectiveKind kind = CollectiveKind::kAllReduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;  // resolved, never kAuto
  int level = 0;           // outermost network level the group crosses
  std::string level_name;
  int group_size = 1;
  int64_t stride = 1;      // job ranks between consecutive members
  double bytes = 0;        // per call
  double calls = 0;        // per iteration on one rank
  double seconds_per_call = 0;  // analytic
  bool overlapped = false;      // runs beside compute
  // DeepEP's dispatch (kAllToAll, kHierarchical): bytes to the same local rank of each
  // other node and to each other rank of the node (Collectives::DedupAllToAll's flows), which
  // a replay sends instead of `bytes` / group_size to every member.
  double dedup_to_node_bytes = 0;
  double dedup_to_rank_bytes = 0;
};

// The range the measured time is expected in, with `confidence` (uncertainty.h).
struct PredictionInterval {
  double low_s = 0;
  double high_s = 0;
  double confidence = 0;
};

struct Estimate {
  ParallelConfig config;
  double iteration_time_s = 0;
  TimeBreakdown time;
  MemoryBreakdown memory;
  double samples_per_s = 0;
  double tokens_per_s = 0;
  double model_tflops_per_gpu = 0;
  double mfu = 0;
  double energy_per_iteration_j = 0;
  double cost_per_iteration_usd = 0;
  double time_to_train_s = 0;
  double energy_to_train_j = 0;
  double cost_to_train_usd = 0;
  std::string bottleneck;
  std::vector<std::string> warnings;
  std::string profile_name;
  int profile_version = 0;
  int num_gpus = 0;
  double memory_headroom_ratio = 0;
  std::vector<CollectiveUse> collectives;
  // Training FLOPs per token (6 x parameters plus attention): the model's size for the
  // calibration envelope.
  double model_flops_per_token = 0;
  PredictionInterval interval;
  // Inside what the profile's calibration measured (regime, GPU count, model size);
  // `envelope_notes` say why not.
  bool in_envelope = false;
  std::vector<std::string> envelope_notes;
  // Plans only: the configurations folded into this one (same time and memory, differing
  // only in rank order or overlap switches), each as what differs.
  std::vector<std::string> equivalents;
};

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_ITERATION_RESULT_H_
