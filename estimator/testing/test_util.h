// Shared fixtures for estimator tests: built-in profiles and presets by name, a
// Megatron-style configuration builder, and a model's per-layer costs under one.
#ifndef PARAPLAN_ESTIMATOR_TESTING_TEST_UTIL_H_
#define PARAPLAN_ESTIMATOR_TESTING_TEST_UTIL_H_

#include <string>
#include <utility>
#include <vector>

#include "estimator/catalog/presets.h"
#include "estimator/inputs/parallel_config.h"
#include "estimator/system/collectives.h"
#include "estimator/system/hardware.h"
#include "estimator/workloads/model_costs.h"

namespace paraplan::testing {

inline SystemProfile Profile(const std::string& name) {
  for (const SystemProfile& p : BuiltinProfiles()) {
    if (p.name == name) return p;
  }
  return {};
}

// abci-v100-16gb with the CNN exchanges on the device path (NCCL), not its ChainerMN
// stack's host path.
inline SystemProfile DevicePathAbci() {
  SystemProfile p = Profile("abci-v100-16gb");
  p.calibration.halo_host_staged = false;
  return p;
}

inline Workload Model(const std::string& name) { return *FindModelPreset(name); }

// One layer of a hand-written layer graph (no dilation or named inputs).
inline LayerSpec Layer(std::string name, LayerKind kind, std::vector<int64_t> in, std::vector<int64_t> out,
                       std::vector<int64_t> kernel = {}, std::vector<int64_t> stride = {},
                       std::vector<int64_t> padding = {}) {
  LayerSpec l;
  l.name = std::move(name);
  l.kind = kind;
  l.input_shape = std::move(in);
  l.output_shape = std::move(out);
  l.kernel_shape = std::move(kernel);
  l.stride = std::move(stride);
  l.padding = std::move(padding);
  return l;
}

inline ParallelConfig Config(int tp, int pp, int dp, int mbs, int gbs,
                             Recompute rc = Recompute::kNone) {
  ParallelConfig c;
  c.tensor_parallel = tp;
  c.pipeline_parallel = pp;
  c.data_parallel = dp;
  c.micro_batch_size = mbs;
  c.global_batch_size = gbs;
  c.recompute = rc;
  return c;
}

// `w`'s per-layer costs under `c` on `p` with the linears in `precision`; `c` must be
// valid for `w` (an invalid one aborts with the status: StatusOr::value).
inline ModelCosts Costs(const Workload& w, const ParallelConfig& c, const SystemProfile& p, Precision precision) {
  const Hardware hw(p, precision);
  const Collectives coll(hw);
  return ComputeModelCosts(w, ModelShape::Of(c.Normalized()), hw, coll).value();
}
inline ModelCosts Bf16Costs(const Workload& w, const ParallelConfig& c, const SystemProfile& p) {
  return Costs(w, c, p, Precision::kBf16);
}

// A network level for hand-computed collective tests: no latency.
inline NetworkLevel Level(const char* name, int domain, double gbytes_per_s, Topology topology = Topology::kFatTree,
                          double taper = 1) {
  NetworkLevel l;
  l.name = name;
  l.domain_size = domain;
  l.bandwidth_gbytes_per_s = gbytes_per_s;
  l.topology = topology;
  l.oversubscription = taper;
  return l;
}

// `nodes` DGX A100 nodes (8 GPUs at 100 GB/s of NVLink) with `levels` above the node,
// efficiency 1, ~0 latency and call overhead: collective times are bandwidth terms.
inline SystemProfile ExactCluster(int nodes, std::vector<NetworkLevel> levels) {
  SystemProfile p = Profile("dgx-a100-80gb");
  p.num_nodes = nodes;
  p.network_levels = {Level("nvlink", 8, 100, Topology::kSwitch)};
  for (NetworkLevel& l : levels) p.network_levels.push_back(l);
  p.calibration.network.clear();
  for (const NetworkLevel& l : p.network_levels) p.calibration.network.push_back({l.name, 1.0, 1e-9, {}});
  p.calibration.collective_overhead_us = 1e-9;
  return p;
}

}  // namespace paraplan::testing

#endif  // PARAPLAN_ESTIMATOR_TESTING_TEST_UTIL_H_
