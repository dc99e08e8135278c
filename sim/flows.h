// Collective -> point-to-point flows: how each algorithm moves data, step by step, as
// the flow-level simulator replays it.
//
// ExpandCollective turns one SimCollective (every group of a dimension) into one
// program per group: a sequence of steps, each a set of flows that start together; a
// step ends when its last flow ends (the barrier the alpha-beta model's per-step
// latency stands for). Rings run as NCCL runs them: one channel per member a node
// holds, each rotated so that its node-crossing edge leaves through a different GPU's
// NIC, and both directions (half the data each way). Pure; thread-safe.
#ifndef PARAPLAN_SIM_FLOWS_H_
#define PARAPLAN_SIM_FLOWS_H_

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
};

struct GroupProgram {
  std::vector<Step> steps;
};

// RESOURCE_EXHAUSTED when the expansion would exceed `max_flows` flows in total.
absl::StatusOr<std::vector<GroupProgram>> ExpandCollective(const SimCollective& op, int gpus_per_node,
                                                           int64_t max_flows);

}  // namespace paraplan::sim

#endif  // PARAPLAN_SIM_FLOWS_H_
