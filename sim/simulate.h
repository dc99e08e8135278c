// Flow-level simulation of a job's collectives on the profile's network, with SimGrid
// (3.32, s4u): the cross-check of the analytical costs in estimator/collectives.
//
// The platform (platform.h) turns a SystemProfile (its network levels, topology
// parameters: fat tree with over-subscription and rail optimisation, 2-D / 3-D torus,
// dragonfly) into a SimGrid platform with one host per cluster GPU that a simulation
// touches. A collective is replayed as the point-to-point flows of its algorithm
// (collective_flows.h: ring, tree, halving-doubling, hierarchical, torus, all-to-all,
// send-recv), step by step, every group of the dimension at once; SimGrid's flow-level
// model shares each link between the flows that cross it.
//
// SimGrid configuration: the CM02 model with latency and bandwidth factors 1, TCP-gamma
// 0 (no window cap), no cross-traffic, weight-S 0 — pure max-min sharing, so agreement
// with the alpha-beta model is checkable. Links carry no latency (CM02 would share a
// link in inverse proportion to each flow's route latency); each step instead waits the
// latency of its slowest route before its flows start: alpha + bytes / rate per step.
// SimGrid's engine can be created once per process, so each call forks a child that
// runs one engine and writes the finish times back through a pipe: calls are
// independent, deterministic and thread-safe, but fork() from a threaded process copies
// only the calling thread (the child uses nothing but its own engine and _exit()s).
// Nothing here is in the search path: it links SimGrid, the estimator does not.
#ifndef PARAPLAN_SIM_SIMULATE_H_
#define PARAPLAN_SIM_SIMULATE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "estimator/inputs/interrupt.h"
#include "estimator/inputs/parallel_config.h"
#include "estimator/inputs/system_profile.h"
#include "estimator/iteration/estimate.h"

namespace paraplan::sim {

// One collective as every group of its dimension runs it. Groups list cluster GPU
// indices (node * gpus_per_node + local rank), e.g. from JobLayout::ClusterGpu.
struct SimCollective {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;  // never kAuto
  double bytes = 0;  // Collectives' convention (see estimator/iteration/estimate.h CollectiveUse)
  std::vector<std::vector<int64_t>> groups;
  // DeepEP's dispatch (kAllToAll with either set): bytes to each other node's member of
  // the same local rank, and to each other member of the same node, in one step.
  double dedup_to_node_bytes = 0;
  double dedup_to_rank_bytes = 0;
};

// Other jobs' traffic: each listed pair of cluster GPUs streams continuously while the
// simulated collectives run.
struct Background {
  std::vector<std::pair<int64_t, int64_t>> flows;
};

// Runs `ops` all starting at time 0 on the same platform; returns each op's completion
// time in seconds (the slowest of its groups), including the profile's per-call
// collective overhead and per-step latencies as the analytical model charges them
// (0 for an op whose groups have one member). Background flows stream from time 0 until
// the last op ends. INVALID_ARGUMENT when a group names a GPU outside the cluster, the
// platform would exceed `max_hosts` GPUs or the replay more than 2,000,000 flows;
// INTERNAL when the simulation process fails or exceeds its CPU limit; CANCELLED /
// DEADLINE_EXCEEDED when `stop` asks (the simulation process is killed at once).
absl::StatusOr<std::vector<double>> SimulateConcurrent(const SystemProfile& profile,
                                                       const std::vector<SimCollective>& ops,
                                                       const Background& background = {},
                                                       int64_t max_hosts = 4096, const Interrupt& stop = {});

}  // namespace paraplan::sim

#endif  // PARAPLAN_SIM_SIMULATE_H_
