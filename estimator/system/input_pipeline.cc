#include "estimator/system/input_pipeline.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace paraplan {

namespace {

// Elements and pixels (the product of the spatial axes) of one input sample.
double InputElements(const Workload& w) {
  const std::vector<int64_t>& s = w.layer_graph.layers.empty() ? w.layer_graph.sample_shape
                                                               : w.layer_graph.layers[0].input_shape;
  if (s.empty()) return 0;
  return std::accumulate(s.begin(), s.end(), 1.0, [](double a, int64_t b) { return a * b; });
}

double InputPixels(const Workload& w) {
  const std::vector<int64_t>& s = w.layer_graph.layers.empty() ? w.layer_graph.sample_shape
                                                               : w.layer_graph.layers[0].input_shape;
  return s.size() > 1 ? InputElements(w) / static_cast<double>(s[0]) : InputElements(w);
}

}  // namespace

DatasetFormat ResolvedFormat(const Workload& w) {
  if (w.dataset.format != DatasetFormat::kUnspecified) return w.dataset.format;
  if (w.kind != Workload::Kind::kLayerGraph) return DatasetFormat::kTokens;
  const double elements = InputElements(w);
  if (w.dataset.sample_bytes > 0 && w.dataset.sample_bytes < elements) return DatasetFormat::kJpeg;
  return DatasetFormat::kHdf5;
}

InputSystem InputSystem::Of(const SystemProfile& profile, const Workload& workload, const Hardware& hw) {
  const DatasetSpec& dataset = workload.dataset;
  InputSystem in;
  in.sample_bytes = static_cast<double>(dataset.sample_bytes);
  in.tensor_bytes = workload.kind == Workload::Kind::kLayerGraph ? 4 * InputElements(workload) : 0;
  in.location = dataset.location;
  in.local_bytes_per_s = profile.storage.read_gbytes_per_s * 1e9;
  in.shared_bytes_per_s = profile.storage.shared_fs_gbytes_per_s * 1e9;
  in.shared_node_bytes_per_s = profile.storage.shared_fs_node_gbytes_per_s * 1e9;
  // Images and arrays are stored a file per sample; tokens in a few large files.
  in.shared_files_per_s = ResolvedFormat(workload) == DatasetFormat::kTokens ? 0 : hw.shared_fs_files_per_s();
  if (dataset.decode_offloaded) {
    in.decode_s_per_sample = 0;
  } else if (dataset.decode_core_ms_per_sample > 0) {
    in.decode_s_per_sample = dataset.decode_core_ms_per_sample * 1e-3;
  } else if (dataset.sample_bytes > 0) {
    switch (ResolvedFormat(workload)) {
      case DatasetFormat::kJpeg:
        in.decode_s_per_sample = hw.jpeg_pixels_per_core_s() > 0 ? InputPixels(workload) / hw.jpeg_pixels_per_core_s() : 0;
        break;
      case DatasetFormat::kHdf5:
        in.decode_s_per_sample = hw.hdf5_bytes_per_core_s() > 0 ? in.sample_bytes / hw.hdf5_bytes_per_core_s() : 0;
        break;
      default:
        break;
    }
  }
  in.cpu_cores = profile.host.cpu_cores;
  in.loader_cores_per_process = hw.loader_cores_per_process();
  auto joules = [](double stated) {
    return (stated > 0 ? stated : CalibrationDefaults::kStorageReadJoulesPerGbyte) * 1e-9;
  };
  in.local_joules_per_byte = joules(profile.storage.read_joules_per_gbyte);
  in.shared_joules_per_byte = joules(profile.storage.shared_fs_joules_per_gbyte);
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

InputTime InputPipelineTime(const InputSystem& in, double node_samples, double nodes, double core_share,
                            double loaders) {
  InputTime t;
  const double bytes = node_samples * in.sample_bytes;
  // Loader cores of the node, each decoding whole samples: rounds of one sample per core.
  // Loaders that keep fewer cores busy than they are given (threads under one process's
  // interpreter lock) decode at the rate of the cores they keep busy.
  double decode = 0;
  if (in.cpu_cores > 0 && in.decode_s_per_sample > 0 && node_samples > 0) {
    const double cores = std::max(1.0, std::floor(in.cpu_cores * std::clamp(core_share, 0.0, 1.0)));
    decode = std::ceil(node_samples / cores - 1e-9) * in.decode_s_per_sample;
    const double busy = std::max(1.0, loaders) * in.loader_cores_per_process;
    if (busy > 0 && busy < cores) decode = std::max(decode, node_samples * in.decode_s_per_sample / busy);
  }
  const double local = Read(bytes, in.local_bytes_per_s);
  // Every node opens its samples' files on the one metadata service.
  const double opens = in.shared_files_per_s > 0 ? node_samples * std::max(1.0, nodes) / in.shared_files_per_s : 0;
  const double shared = std::max(Read(bytes, SharedRate(in, nodes)), opens);
  const double steady_read = in.location == DatasetLocation::kSharedFs ? shared : local;
  const double first_read = in.location == DatasetLocation::kLocal ? local : shared;
  t.steady_s = std::max(steady_read, decode);
  t.first_epoch_s = std::max(first_read, decode);
  t.read_joules = bytes * (in.location == DatasetLocation::kSharedFs ? in.shared_joules_per_byte
                                                                      : in.local_joules_per_byte);
  return t;
}

}  // namespace paraplan
