// The input pipeline of one training iteration on one node: reading the node's samples
// (from node-local storage, or from the shared parallel file system whose aggregate
// bandwidth and file opens all the job's nodes share, each capped by its own client
// link) and decoding and augmenting them on host cores. Loader workers read and decode
// at once and prefetch ahead of the GPUs (PyTorch DataLoader's prefetch_factor, NVIDIA
// DALI, Chainer's MultithreadIterator), so a node's input time is the slowest of the
// three, and only what exceeds compute is exposed. Reading costs the storage energy per
// byte (profile.storage.*_joules_per_gbyte), charged to the iteration.
//
// Decoding by format (dataset.format; unspecified: tokens for a transformer; for a layer
// graph JPEG when a stored sample is smaller than its tensor at one byte per element,
// a compressed image, else HDF5, the usual container of scientific arrays): JPEG costs
// the input's pixels at the profile's per-core decode rate, HDF5 its bytes at the per-core
// read rate, tokens and raw tensors nothing. A sample is decoded by one core, and opened
// as a file of its own (tokens excepted: a few large files). Pure; thread-safe.
#ifndef PARAPLAN_ESTIMATOR_SYSTEM_INPUT_PIPELINE_H_
#define PARAPLAN_ESTIMATOR_SYSTEM_INPUT_PIPELINE_H_

#include "estimator/inputs/system_profile.h"
#include "estimator/inputs/workload.h"
#include "estimator/system/hardware.h"

namespace paraplan {

// The format a workload's samples are decoded as (see above).
DatasetFormat ResolvedFormat(const Workload& workload);

// What the input pipeline needs of the system and the dataset, prepared once.
struct InputSystem {
  double sample_bytes = 0;             // stored
  double tensor_bytes = 0;             // decoded, as the loader hands it over (float32)
  DatasetLocation location = DatasetLocation::kLocal;
  double local_bytes_per_s = 0;        // per node; 0 = not modelled
  double shared_bytes_per_s = 0;       // aggregate; 0 = no shared file system given
  double shared_node_bytes_per_s = 0;  // per node; 0 = no client limit
  double shared_files_per_s = 0;       // file opens, aggregate; 0 = not limited
  double decode_s_per_sample = 0;      // one core; 0 when offloaded or nothing to decode
  int cpu_cores = 0;                   // per node
  double loader_cores_per_process = 0; // cores one loading process keeps busy; 0 = unlimited
  double local_joules_per_byte = 0;    // energy to read a byte, node-local storage
  double shared_joules_per_byte = 0;   // the same from the shared file system

  // `hw` carries the calibrated decode and file-system rates of the configuration's regime.
  static InputSystem Of(const SystemProfile& profile, const Workload& workload, const Hardware& hw);
};

struct InputTime {
  double steady_s = 0;       // per iteration and node, in steady state
  double first_epoch_s = 0;  // the same while the first epoch runs (staged datasets)
  double read_joules = 0;    // the storage's energy for the node's reads, steady state
};

// `node_samples` samples are read and decoded on each of `nodes` nodes per iteration by
// `loaders` processes on `core_share` of the node's cores (the share of the node's
// processes that load: a spatial group's root loads for the whole group). Each process
// keeps at most loader_cores_per_process cores busy, when that is set.
InputTime InputPipelineTime(const InputSystem& in, double node_samples, double nodes, double core_share = 1,
                            double loaders = 1);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_SYSTEM_INPUT_PIPELINE_H_
