// SimulateIteration: one iteration's communication replayed on the flow-level
// simulator beside the analytic estimate.
//
// Every collective the estimate lists (Estimate::collectives) is rebuilt over the job's
// ranks — all groups of its dimension, placed on cluster GPUs by the JobLayout — and
// simulated alone (all groups at once), then the overlapped ones (the DP reduction)
// again together with the largest blocking collective of another dimension, to show
// what sharing links costs. Compute enters as the analytic estimate's delays: the
// simulated iteration is the analytic one with each dimension's exposed communication
// scaled by its simulated / analytic time (calls-weighted), plus, for one call of the
// blocking collective, how far the simulated contention differs from the max-min rule
// the analytic model already charges for cross-node TP / PP traffic (min(a, d)); the
// whole simulated delay for other dimensions, which the analytic model does not charge.
// Thread-safe as far as fork() is in the caller's process (each simulation runs in a
// child process; the caller's other threads keep running).
#ifndef PARAPLAN_SIM_ITERATION_H_
#define PARAPLAN_SIM_ITERATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "estimator/inputs/system_profile.h"
#include "estimator/iteration/estimate.h"
#include "estimator/system/placement.h"
#include "sim/simulate.h"

namespace paraplan::sim {

struct CollectiveComparison {
  CollectiveUse use;             // with the analytic seconds_per_call
  double simulated_alone_s = 0;  // per call, every group of the dimension at once
  double simulated_contended_s = 0;  // per call, beside the other dimension (0 = not run)
};

struct IterationSimulation {
  std::vector<CollectiveComparison> collectives;
  double analytic_iteration_s = 0;
  double simulated_iteration_s = 0;
  std::vector<std::string> notes;
};

// Jobs above this many GPUs are refused (INVALID_ARGUMENT): SimGrid's cost grows with
// the square of the concurrent flows (a 4,096-GPU data-parallel ring takes ~4 s).
inline constexpr int64_t kMaxSimulatedGpus = 4096;

// Rank groups of a dimension: every set {base + k * stride}, k < size, that tiles the
// job's ranks (base: ranks whose index along the dimension is 0).
std::vector<std::vector<int64_t>> DimensionGroups(int64_t job_gpus, int size, int64_t stride);

// CANCELLED / DEADLINE_EXCEEDED when `stop` asks (see SimulateConcurrent).
absl::StatusOr<IterationSimulation> SimulateIteration(const SystemProfile& profile, const Estimate& analytic,
                                                      const JobLayout& layout, const Background& background = {},
                                                      const Interrupt& stop = {});

}  // namespace paraplan::sim

#endif  // PARAPLAN_SIM_ITERATION_H_
