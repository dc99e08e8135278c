// DescribeCollectives: the collectives one iteration of a configuration runs on each
// rank — dimension, operation, algorithm charged, group placement, message size and
// calls per iteration on the slowest pipeline stage — with the analytic time of one
// call from the same Collectives the estimate used.
//
// It describes what the estimate charges (its breakdown stays the authority on exposed
// time); `paraplan simulate` replays these collectives as flows, and the Estimate
// reports them so users see which algorithm each collective got. Tiny bookkeeping
// collectives (loss all-reduces of a few bytes, embedding gradients) are left out.
// Pure function; thread-safe.
#ifndef PARAPLAN_ESTIMATOR_ITERATION_COMM_SCHEDULE_H_
#define PARAPLAN_ESTIMATOR_ITERATION_COMM_SCHEDULE_H_

#include <vector>

#include "estimator/inputs/system_profile.h"
#include "estimator/inputs/workload.h"
#include "estimator/iteration/result.h"
#include "estimator/iteration/stage_costs.h"
#include "estimator/system/collectives.h"
#include "estimator/workloads/model_costs.h"

namespace paraplan {

// `c` normalized and valid for `workload`.
std::vector<CollectiveUse> DescribeCollectives(const Workload& workload, const ParallelConfig& c,
                                               const SystemProfile& profile, const Collectives& coll,
                                               const ModelCosts& model, const StageCosts& stages);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_ITERATION_COMM_SCHEDULE_H_
