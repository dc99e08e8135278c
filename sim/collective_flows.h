// Collective -> point-to-point flows: how each algorithm moves data, step by step, as
// the flow-level simulator replays it.
//
// ExpandCollective turns one SimCollective (every group of a dimension) into one
// program per group: a sequence of steps, each a set of flows that start together; a
// step ends when its last flow ends (the barrier the alpha-beta model's per-step
// latency stands for; the replay charges that latency once per step). Per algorithm:
//  ring all-reduce: 2(P-1) steps of N/P to the next member; all-gather and reduce-
//    scatter: P-1 steps (Thakur et al. 2005). Rings run as NCCL runs them: one channel
//    per member a node holds, each rotated so that its node-crossing edge leaves
//    through a different GPU's NIC, and both directions (half the data each way).
//  tree: NCCL's double binary tree, pipelined: ceil(log2 P) steps up (reduce) and as
//    many down (broadcast), each moving 1/ceil(log2 P) of the half buffer per tree edge;
//    across multi-GPU nodes one tree per local rank (channel) on N/k, fed over NVLink.
//  halving-doubling: Rabenseifner, partner P/2 away first with N/2 (topology-aware
//    order: partner 1 away first), then the mirror recursive doubling.
//  hierarchical: rings inside each node on N, an all-reduce ring across nodes per local
//    position on N/k, rings inside again (Horovod / NCCL hierarchical form).
//  2-D torus (kTorus2D): on a physical torus, dimension-wise: reduce-scatter inside the
//    vertex, then along each torus dimension the group spans, then the mirror all-
//    gathers, the buffer split over the D dimensions (each share starting on another),
//    as the analytic TorusDims; elsewhere a logical x * y factoring: rings along x,
//    all-reduce along y on N/x, rings along x again (Mikami et al. 2018).
//  all-to-all: every member sends N/P to every other at once, charged P-1 latencies
//    (the analytic model's per-peer alpha); send-recv: N from each member to the next
//    (one flow for a pair).
// Non-power-of-two halving-doubling and hierarchical / torus on groups they cannot
// split fall back to the ring, as the analytic model does. Pure; thread-safe.
#ifndef PARAPLAN_SIM_COLLECTIVE_FLOWS_H_
#define PARAPLAN_SIM_COLLECTIVE_FLOWS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/simulate.h"

namespace paraplan::sim {

struct Flow {
  int64_t src = 0;  // cluster GPU
  int64_t dst = 0;
  double bytes = 0;
};

struct Step {
  std::vector<Flow> flows;
  // Identical consecutive steps this one stands for (long rings are replayed as at most
  // kMaxRingSteps steps per phase, each moving the bytes of several): the replay
  // charges the step latency this many times. Exact for an op alone; beside other
  // traffic the sharing is resolved at the coarser grain.
  int latencies = 1;
  // Step sequences that run beside this step's flows, each at its own pace (no barrier
  // between them); the step ends when its flows and every branch have ended. The
  // dimension-wise torus all-reduce runs its per-dimension shares this way.
  std::vector<std::vector<Step>> branches;
};

// Calls fn(flow) for every flow of the steps, branches included.
template <typename Steps, typename Fn>
void ForEachFlow(Steps& steps, const Fn& fn) {
  for (auto& s : steps) {
    for (auto& f : s.flows) fn(f);
    for (auto& b : s.branches) ForEachFlow(b, fn);
  }
}

inline constexpr int kMaxRingSteps = 16;

struct GroupProgram {
  std::vector<Step> steps;
};

// INVALID_ARGUMENT when the expansion would exceed `max_flows` flows in total.
// What the expansion needs to know of the platform.
struct FlowTopology {
  int gpus_per_node = 1;
  // The first torus level's vertex (GPUs per domain of the level below) and extents;
  // 0 / empty where the profile has no torus level.
  int64_t torus_vertex_gpus = 0;
  std::vector<int> torus_dims;
};

absl::StatusOr<std::vector<GroupProgram>> ExpandCollective(const SimCollective& op, const FlowTopology& topo,
                                                           int64_t max_flows);

}  // namespace paraplan::sim

#endif  // PARAPLAN_SIM_COLLECTIVE_FLOWS_H_
