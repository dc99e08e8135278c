// The input pipeline of one training iteration on one node: reading the node's samples
// (from node-local storage, or from the shared parallel file system whose aggregate
// bandwidth all the job's nodes share, each capped by its own client link) and decoding
// and augmenting them on the node's CPU cores. Loader workers read and decode at once
// and prefetch ahead of the GPUs (PyTorch DataLoader's prefetch_factor, NVIDIA DALI), so
// a node's input time is the slower of the two, and only what exceeds compute is
// exposed. Pure; thread-safe.
#ifndef PARAPLAN_ESTIMATOR_SYSTEM_INPUT_PIPELINE_H_
#define PARAPLAN_ESTIMATOR_SYSTEM_INPUT_PIPELINE_H_

#include "estimator/inputs/system_profile.h"
#include "estimator/inputs/workload.h"

namespace paraplan {

// What the input pipeline needs of the system and the dataset, prepared once.
struct InputSystem {
  double sample_bytes = 0;
  DatasetLocation location = DatasetLocation::kLocal;
  double local_bytes_per_s = 0;        // per node; 0 = not modelled
  double shared_bytes_per_s = 0;       // aggregate; 0 = no shared file system given
  double shared_node_bytes_per_s = 0;  // per node; 0 = no client limit
  double decode_s_per_sample = 0;      // one core; 0 when offloaded or not modelled
  int cpu_cores = 0;                   // per node

  static InputSystem Of(const SystemProfile& profile, const DatasetSpec& dataset);
};

struct InputTime {
  double steady_s = 0;       // per iteration and node, in steady state
  double first_epoch_s = 0;  // the same while the first epoch runs (staged datasets)
};

// `node_samples` samples are read and decoded on each of `nodes` nodes per iteration.
InputTime InputPipelineTime(const InputSystem& in, double node_samples, double nodes);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_SYSTEM_INPUT_PIPELINE_H_
