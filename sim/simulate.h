// Flow-level simulation of a job's collectives on the profile's network, with SimGrid
// (3.32, s4u): the cross-check of the analytical costs in estimator/collectives.
//
// BuildPlatform() turns a SystemProfile (its network levels, topology parameters:
// fat tree with over-subscription and rail optimisation, 2-D / 3-D torus, dragonfly)
// into a SimGrid platform with one host per cluster GPU that a job uses. A collective is
// replayed as the point-to-point flows of its algorithm (ring, tree, halving-doubling,
// hierarchical, torus, all-to-all, send-recv), step by step, every group of the
// dimension at once; SimGrid's flow-level model shares each link between the flows that
// cross it. Nothing here is in the search path: it links SimGrid, the estimator does not.
#ifndef PARAPLAN_SIM_SIMULATE_H_
#define PARAPLAN_SIM_SIMULATE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "estimator/estimate.h"
#include "estimator/parallel_config.h"
#include "estimator/system_profile.h"

namespace paraplan::sim {

// One collective as every group of its dimension runs it. Groups list cluster GPU
// indices (node * gpus_per_node + local rank), e.g. from JobLayout::ClusterGpu.
struct SimCollective {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;  // never kAuto
  double bytes = 0;  // Collectives' convention (see estimator/estimate.h CollectiveUse)
  std::vector<std::vector<int64_t>> groups;
};

// Other jobs' traffic: each listed pair of cluster GPUs streams continuously while the
// simulated collectives run.
struct Background {
  std::vector<std::pair<int64_t, int64_t>> flows;
};

// Runs `ops` all starting at time 0 on the same platform; returns each op's completion
// time in seconds (the slowest of its groups), including the profile's per-call
// collective overhead and per-step latencies as the analytical model charges them.
// INVALID_ARGUMENT when a group names a GPU outside the cluster or the platform would
// exceed `max_hosts` GPUs.
absl::StatusOr<std::vector<double>> SimulateConcurrent(const SystemProfile& profile,
                                                       const std::vector<SimCollective>& ops,
                                                       const Background& background = {},
                                                       int64_t max_hosts = 4096);

}  // namespace paraplan::sim

#endif  // PARAPLAN_SIM_SIMULATE_H_
