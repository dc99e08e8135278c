#include "estimator/plan/codesign.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace paraplan {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The design that minimises `total` among those that fit every workload ("" if none).
template <typename F>
std::string Best(const std::vector<CodesignDesign>& designs, F total) {
  const CodesignDesign* best = nullptr;
  for (const CodesignDesign& d : designs) {
    if (d.fits_all && (best == nullptr || total(d) < total(*best))) best = &d;
  }
  return best == nullptr ? "" : absl::StrCat(best->profile, "@", best->profile_version);
}

}  // namespace

absl::StatusOr<CodesignResult> Codesign(const CodesignRequest& request) {
  if (request.designs.empty()) return absl::InvalidArgumentError("designs: give at least one profile");
  if (request.designs.size() > 64) return absl::InvalidArgumentError("designs: at most 64 profiles");
  if (request.workloads.empty()) return absl::InvalidArgumentError("workloads: give at least one workload");
  if (request.workloads.size() > 64) return absl::InvalidArgumentError("workloads: at most 64 workloads");
  if (request.gpus <= 0) return absl::InvalidArgumentError(absl::StrCat("gpus: ", request.gpus, " must be positive"));
  for (size_t i = 0; i < request.workloads.size(); ++i) {
    const CodesignWorkload& w = request.workloads[i];
    if (!(w.weight > 0) || !std::isfinite(w.weight) || w.weight > 1e12) {
      return absl::InvalidArgumentError(absl::StrCat("workloads[", i, "].weight: must be positive and finite"));
    }
    if (w.global_batch_size <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("workloads[", i, "].global_batch_size: must be positive"));
    }
  }
  CodesignResult out;
  for (size_t d = 0; d < request.designs.size(); ++d) {
    const SystemProfile& profile = request.designs[d];
    CodesignDesign design;
    design.profile = profile.name;
    design.profile_version = profile.version;
    design.fits_all = true;
    for (size_t i = 0; i < request.workloads.size(); ++i) {
      const CodesignWorkload& w = request.workloads[i];
      PlanRequest plan;
      plan.workload = w.workload;
      plan.gpus = {request.gpus};
      plan.global_batch_size = w.global_batch_size;
      plan.top_k = 1;
      plan.objective = request.objective;
      plan.constraints = request.constraints;
      plan.deadline = request.deadline;
      plan.cancelled = request.cancelled;
      plan.max_candidates = request.max_candidates;
      plan.threads = request.threads;
      absl::StatusOr<PlanResult> r = Plan(plan, profile);
      if (request.cancelled != nullptr && request.cancelled->load()) {
        return absl::CancelledError("the client cancelled the request");
      }
      if (!r.ok()) {
        return absl::Status(r.status().code(), absl::StrCat("designs[", d, "] (", profile.name, "), workloads[", i,
                                                            "] (", w.name, "): ", r.status().message()));
      }
      out.truncated = out.truncated || r->truncated;
      CodesignCell cell;
      cell.workload = w.name;
      if (r->plans.empty()) {
        cell.infeasible_reason = r->infeasible_reason;
        design.fits_all = false;
      } else {
        cell.fits = true;
        cell.best = r->plans.front();
        design.weighted_time_s += w.weight * cell.best.iteration_time_s;
        design.weighted_energy_j += w.weight * cell.best.energy_per_iteration_j;
        design.weighted_cost_usd += w.weight * cell.best.cost_per_iteration_usd;
      }
      design.cells.push_back(std::move(cell));
    }
    if (!design.fits_all) design.weighted_time_s = design.weighted_energy_j = design.weighted_cost_usd = kInf;
    out.designs.push_back(std::move(design));
  }
  auto objective_total = [&](const CodesignDesign& d) {
    switch (request.objective) {
      case Objective::kCost:
        return d.weighted_cost_usd;
      case Objective::kEnergy:
        return d.weighted_energy_j;
      case Objective::kTime:
        break;
    }
    return d.weighted_time_s;
  };
  std::vector<size_t> order(out.designs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return objective_total(out.designs[a]) < objective_total(out.designs[b]);
  });
  for (size_t r = 0; r < order.size(); ++r) out.designs[order[r]].rank = static_cast<int>(r) + 1;
  out.best_by_time = Best(out.designs, [](const CodesignDesign& d) { return d.weighted_time_s; });
  out.best_by_energy = Best(out.designs, [](const CodesignDesign& d) { return d.weighted_energy_j; });
  out.best_by_cost = Best(out.designs, [](const CodesignDesign& d) { return d.weighted_cost_usd; });
  return out;
}

}  // namespace paraplan
