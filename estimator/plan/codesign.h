// Codesign: which network design serves a mix of workloads best — the question
// Nguyen & Wahib (CCGrid'21) ask of all-reduce algorithms and topologies, asked of
// whole plans.
//
// For every design (a SystemProfile: topology, taper, link rates, price) and every
// workload (with a weight and its global batch), the planner finds the best plan on
// `gpus` GPUs for the objective; a design's totals are the weighted sums over the
// workloads of one iteration's time, energy and cost (weight w = "w iterations of this
// workload" in the mix). A design that fits no plan for some workload has infinite
// totals and ranks after every design that fits them all. Pure function of its
// inputs; thread-safe.
#ifndef PARAPLAN_ESTIMATOR_PLAN_CODESIGN_H_
#define PARAPLAN_ESTIMATOR_PLAN_CODESIGN_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "estimator/plan/search.h"

namespace paraplan {

struct CodesignWorkload {
  std::string name;
  Workload workload;
  double weight = 1;
  int global_batch_size = 0;
};

struct CodesignRequest {
  std::vector<CodesignWorkload> workloads;
  std::vector<SystemProfile> designs;
  int gpus = 0;
  Objective objective = Objective::kTime;
  PlanConstraints constraints;
  absl::Time deadline = absl::InfiniteFuture();  // shared by all the searches
  const std::atomic<bool>* cancelled = nullptr;  // may be null; set: CANCELLED
  int64_t max_candidates = 0;                    // per search (PlanRequest::max_candidates)
  int threads = 2;
};

struct CodesignCell {
  std::string workload;
  bool fits = false;
  std::string infeasible_reason;
  Estimate best;  // when fits
};

struct CodesignDesign {
  std::string profile;
  int profile_version = 0;
  std::vector<CodesignCell> cells;  // in the request's workload order
  bool fits_all = false;
  double weighted_time_s = 0;      // sum of weight x iteration time (infinite unless fits_all)
  double weighted_energy_j = 0;
  double weighted_cost_usd = 0;
  int rank = 0;                    // 1 = best for the objective
};

struct CodesignResult {
  std::vector<CodesignDesign> designs;  // in the request's order
  // The design with the least weighted time / energy / cost among those that fit every
  // workload ("" when none does). All three compare the plans chosen for the request's
  // objective: under kTime, best_by_cost is the design whose fastest plans cost least,
  // not the design that the cost objective would pick.
  std::string best_by_time, best_by_energy, best_by_cost;
  bool truncated = false;  // a search hit the deadline
};

// INVALID_ARGUMENT naming the field (workloads[i].weight, designs, gpus, ...);
// CANCELLED once `cancelled` is set (checked between and inside the searches).
absl::StatusOr<CodesignResult> Codesign(const CodesignRequest& request);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_PLAN_CODESIGN_H_
