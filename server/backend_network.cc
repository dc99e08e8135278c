// Backend::Simulate and Backend::Codesign: resolve profiles and workloads as Estimate
// and Plan do, then run sim::SimulateIteration / paraplan::Codesign.
#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "estimator/plan/codesign.h"
#include "estimator/system/placement.h"
#include "server/adapter.h"
#include "server/backend.h"
#ifdef PARAPLAN_HAVE_SIMGRID
#include "sim/iteration.h"
#endif

namespace paraplan::server {

namespace {

// Prefixes a status message with the request field it came from.
absl::Status In(const std::string& field, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(field, ": ", s.message()));
}

}  // namespace

absl::StatusOr<v1::SimulateResponse> Backend::Simulate(const v1::SimulateRequest& req, int max_gpus,
                                                      const Interrupt& stop) {
#ifndef PARAPLAN_HAVE_SIMGRID
  (void)req;
  (void)max_gpus;
  (void)stop;
  return absl::UnimplementedError("this server was built without SimGrid (install libsimgrid-dev and rebuild)");
#else
  if (!(req.background_load() >= 0 && req.background_load() <= 1)) {
    return absl::InvalidArgumentError("background_load: must be a share in [0, 1]");
  }
  absl::StatusOr<Workload> w = WorkloadOf(req.has_workload() ? &req.workload() : nullptr, req.model());
  if (!w.ok()) return w.status();
  absl::StatusOr<ParallelConfig> c = adapter::FromProto(req.config());
  if (!c.ok()) return c.status();
  absl::StatusOr<ProfiledEstimate> pe = EstimateOnRequestProfile(
      req.profile(), req.has_profile_override() ? &req.profile_override() : nullptr, *w, *c);
  if (!pe.ok()) return pe.status();
  const SystemProfile* p = &pe->profile;
  const paraplan::Estimate* e = &pe->estimate;
  const int64_t job = c->Normalized().NumGpus();
  if (job > max_gpus) {
    return absl::InvalidArgumentError(
        absl::StrCat("config: the simulation replays at most ", max_gpus, " GPUs; this configuration uses ", job));
  }
  const JobLayout layout(job, p->gpus_per_node, p->num_nodes, c->placement);
  // Other jobs: a share of the GPUs outside this one, each streaming to the GPU half a
  // cluster away (when that one is outside the job too).
  sim::Background bg;
  int64_t others = 0;  // GPUs outside the job
  if (req.background_load() > 0) {
    std::set<int64_t> mine;
    for (int64_t r = 0; r < job; ++r) mine.insert(layout.ClusterGpu(r));
    const int64_t cluster = p->NumGpus();
    others = cluster - static_cast<int64_t>(mine.size());
    const int64_t want = std::min<int64_t>(1024, std::llround(req.background_load() * others));
    for (int64_t g = 0; g < cluster && static_cast<int64_t>(bg.flows.size()) < want; ++g) {
      const int64_t to = (g + cluster / 2) % cluster;
      if (!mine.count(g) && !mine.count(to) && g != to) bg.flows.push_back({g, to});
    }
  }
  absl::StatusOr<sim::IterationSimulation> s = sim::SimulateIteration(*p, *e, layout, bg, stop);
  if (!s.ok()) return s.status();
  v1::SimulateResponse out;
  *out.mutable_analytic() = adapter::ToProto(*e);
  for (const sim::CollectiveComparison& k : s->collectives) {
    v1::SimulatedCollective* q = out.add_collectives();
    *q->mutable_use() = adapter::ToProto(k.use);
    q->set_simulated_alone_s(k.simulated_alone_s);
    q->set_simulated_contended_s(k.simulated_contended_s);
  }
  out.set_analytic_iteration_time_s(s->analytic_iteration_s);
  out.set_simulated_iteration_time_s(s->simulated_iteration_s);
  for (const std::string& n : s->notes) out.add_notes(n);
  if (!bg.flows.empty()) {
    out.add_notes(absl::StrCat(bg.flows.size(), " background flows of other jobs"));
  } else if (req.background_load() > 0) {
    out.add_notes(others == 0 ? std::string("no background traffic: the job fills the cluster")
                              : absl::StrCat("no background traffic: of the ", others,
                                             " GPUs outside the job, none streams to a free GPU half the "
                                             "cluster away at load ", req.background_load()));
  }
  return out;
#endif
}

absl::StatusOr<v1::CodesignResponse> Backend::Codesign(const v1::CodesignRequest& req, absl::Time deadline,
                                                       const std::atomic<bool>* cancelled) {
  const absl::Time start = absl::Now();
  CodesignRequest r;
  r.gpus = req.gpus();
  r.deadline = deadline;
  r.cancelled = cancelled;
  r.max_candidates = options_.max_plan_candidates;
  r.threads = options_.plan_threads;
  switch (req.objective()) {
    case v1::OBJECTIVE_UNSPECIFIED:
    case v1::OBJECTIVE_TIME:
      r.objective = Objective::kTime;
      break;
    case v1::OBJECTIVE_COST:
      r.objective = Objective::kCost;
      break;
    case v1::OBJECTIVE_ENERGY:
      r.objective = Objective::kEnergy;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("objective: ", req.objective(), " is not a known value"));
  }
  if (req.designs_size() > 64) return absl::InvalidArgumentError("designs: at most 64 profiles");
  if (req.workloads_size() > 64) return absl::InvalidArgumentError("workloads: at most 64 workloads");
  if (req.design_overrides_size() != 0 && req.design_overrides_size() != req.designs_size()) {
    return absl::InvalidArgumentError(absl::StrCat("design_overrides: give none or one per design (",
                                                   req.designs_size(), "), not ", req.design_overrides_size()));
  }
  std::vector<std::string> design_warnings;  // in request order
  for (int i = 0; i < req.designs_size(); ++i) {
    std::string warning;
    absl::StatusOr<SystemProfile> p = RequestProfile(
        req.designs(i), req.design_overrides_size() > 0 ? &req.design_overrides(i) : nullptr, &warning);
    if (!p.ok()) return In(absl::StrCat("designs[", i, "]"), p.status());
    if (r.gpus > p->NumGpus()) {
      return absl::InvalidArgumentError(absl::StrCat("gpus: ", r.gpus, " exceeds the ", p->NumGpus(), " GPUs of designs[",
                                                     i, "] (", p->name, ")"));
    }
    r.designs.push_back(std::move(*p));
    design_warnings.push_back(std::move(warning));
  }
  for (int i = 0; i < req.workloads_size(); ++i) {
    const v1::CodesignWorkload& cw = req.workloads(i);
    const std::string field = absl::StrCat("workloads[", i, "]");
    absl::StatusOr<Workload> w = WorkloadOf(cw.has_workload() ? &cw.workload() : nullptr, cw.model());
    if (!w.ok()) return In(field, w.status());
    CodesignWorkload x;
    x.name = !cw.name().empty() ? cw.name() : !cw.model().empty() ? cw.model() : w->name;
    // Unnamed workloads of one model at several batches: tell them apart.
    if (cw.name().empty()) {
      for (int j = 0; j < req.workloads_size(); ++j) {
        const v1::CodesignWorkload& o = req.workloads(j);
        if (j != i && o.name().empty() && o.model() == cw.model() && o.has_workload() == cw.has_workload() &&
            (cw.has_workload() ? o.workload().name() == cw.workload().name() : true)) {
          absl::StrAppend(&x.name, " (batch ", cw.global_batch_size(), ")");
          break;
        }
      }
    }
    x.workload = std::move(*w);
    x.weight = cw.weight() == 0 ? 1 : cw.weight();
    x.global_batch_size = cw.global_batch_size();
    r.workloads.push_back(std::move(x));
  }
  absl::StatusOr<CodesignResult> res = paraplan::Codesign(r);
  if (!res.ok()) return res.status();
  v1::CodesignResponse out;
  for (size_t i = 0; i < res->designs.size(); ++i) {
    const CodesignDesign& d = res->designs[i];
    v1::CodesignDesign* q = out.add_designs();
    if (i < design_warnings.size() && !design_warnings[i].empty()) q->add_warnings(design_warnings[i]);
    q->set_profile(d.profile);
    q->set_profile_version(d.profile_version);
    q->set_fits_all(d.fits_all);
    q->set_weighted_time_s(d.weighted_time_s);
    q->set_weighted_energy_j(d.weighted_energy_j);
    q->set_weighted_cost_usd(d.weighted_cost_usd);
    q->set_rank(d.rank);
    for (const CodesignCell& c : d.cells) {
      v1::CodesignCell* k = q->add_cells();
      k->set_workload(c.workload);
      k->set_fits(c.fits);
      k->set_infeasible_reason(c.infeasible_reason);
      if (c.fits) *k->mutable_best() = adapter::ToProto(c.best);
    }
  }
  out.set_best_by_time(res->best_by_time);
  out.set_best_by_energy(res->best_by_energy);
  out.set_best_by_cost(res->best_by_cost);
  out.set_truncated(res->truncated);
  out.set_search_time_s(absl::ToDoubleSeconds(absl::Now() - start));
  return out;
}

}  // namespace paraplan::server
