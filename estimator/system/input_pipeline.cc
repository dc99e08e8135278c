#include "estimator/system/input_pipeline.h"

#include <algorithm>
#include <limits>

namespace paraplan {

InputSystem InputSystem::Of(const SystemProfile& profile, const DatasetSpec& dataset) {
  InputSystem in;
  in.sample_bytes = static_cast<double>(dataset.sample_bytes);
  in.location = dataset.location;
  in.local_bytes_per_s = profile.storage.read_gbytes_per_s * 1e9;
  in.shared_bytes_per_s = profile.storage.shared_fs_gbytes_per_s * 1e9;
  in.shared_node_bytes_per_s = profile.storage.shared_fs_node_gbytes_per_s * 1e9;
  in.decode_s_per_sample = dataset.decode_offloaded ? 0 : dataset.decode_core_ms_per_sample * 1e-3;
  in.cpu_cores = profile.host.cpu_cores;
  return in;
}

namespace {

// Seconds to read `bytes` on one node at `rate` (0 = not modelled).
double Read(double bytes, double rate) { return rate > 0 ? bytes / rate : 0; }

// One node's share of the shared file system: the aggregate split over the job's nodes,
// capped by the node's client link; without a shared file system, local storage.
double SharedRate(const InputSystem& in, double nodes) {
  if (in.shared_bytes_per_s <= 0) return in.local_bytes_per_s;
  const double share = in.shared_bytes_per_s / std::max(1.0, nodes);
  const double cap = in.shared_node_bytes_per_s > 0 ? in.shared_node_bytes_per_s
                                                    : std::numeric_limits<double>::infinity();
  return std::min(share, cap);
}

}  // namespace

InputTime InputPipelineTime(const InputSystem& in, double node_samples, double nodes) {
  InputTime t;
  const double bytes = node_samples * in.sample_bytes;
  const double decode = in.cpu_cores > 0 ? node_samples * in.decode_s_per_sample / in.cpu_cores : 0;
  const double local = Read(bytes, in.local_bytes_per_s);
  const double shared = Read(bytes, SharedRate(in, nodes));
  const double steady_read = in.location == DatasetLocation::kSharedFs ? shared : local;
  const double first_read = in.location == DatasetLocation::kLocal ? local : shared;
  t.steady_s = std::max(steady_read, decode);
  t.first_epoch_s = std::max(first_read, decode);
  return t;
}

}  // namespace paraplan
