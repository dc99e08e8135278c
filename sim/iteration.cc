#include "sim/iteration.h"

#include <algorithm>
#include <map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace paraplan::sim {

std::vector<std::vector<int64_t>> DimensionGroups(int64_t job_gpus, int size, int64_t stride) {
  std::vector<std::vector<int64_t>> groups;
  size = std::max(1, size);
  stride = std::max<int64_t>(1, stride);
  for (int64_t base = 0; base + (size - 1) * stride < job_gpus; ++base) {
    if ((base / stride) % size != 0) continue;
    std::vector<int64_t> g;
    for (int k = 0; k < size; ++k) g.push_back(base + k * stride);
    groups.push_back(std::move(g));
  }
  return groups;
}

namespace {

// The schedule (comm_schedule.cc) lists no CNN collectives, so a layer graph's spatial
// traffic (TimeBreakdown::spatial_comm_s) has no dimension here and is left unscaled.
double ExposedComm(const TimeBreakdown& t, const std::string& dim) {
  if (dim == "tp") return t.tp_comm_s;
  if (dim == "cp") return t.cp_comm_s;
  if (dim == "ep") return t.ep_comm_s;
  if (dim == "pp") return t.pp_comm_s;
  if (dim == "dp") return t.dp_comm_s;
  return 0;
}

}  // namespace

absl::StatusOr<IterationSimulation> SimulateIteration(const SystemProfile& profile, const Estimate& analytic,
                                                      const JobLayout& layout, const Background& background,
                                                      const Interrupt& stop) {
  if (layout.job_gpus() > kMaxSimulatedGpus) {
    return absl::InvalidArgumentError(absl::StrCat("the job has ", layout.job_gpus(),
                                                   " GPUs; the simulator's limit is ", kMaxSimulatedGpus, " GPUs"));
  }
  IterationSimulation out;
  out.analytic_iteration_s = analytic.iteration_time_s;
  std::vector<SimCollective> ops;
  for (const CollectiveUse& u : analytic.collectives) {
    SimCollective op;
    op.kind = u.kind;
    op.algorithm = u.algorithm;
    op.bytes = u.bytes;
    op.dedup_to_node_bytes = u.dedup_to_node_bytes;
    op.dedup_to_rank_bytes = u.dedup_to_rank_bytes;
    for (std::vector<int64_t> g : DimensionGroups(layout.job_gpus(), u.group_size, u.stride)) {
      for (int64_t& r : g) r = layout.ClusterGpu(r);
      op.groups.push_back(std::move(g));
    }
    ops.push_back(std::move(op));
    out.collectives.push_back({u, 0, 0});
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    absl::StatusOr<std::vector<double>> t = SimulateConcurrent(profile, {ops[i]}, background, kMaxSimulatedGpus, stop);
    if (!t.ok()) return t.status();
    out.collectives[i].simulated_alone_s = t->empty() ? 0 : (*t)[0];
  }
  // The overlapped reduction beside the costliest blocking collective of another
  // dimension that leaves the node (they share NICs and uplinks).
  double contention = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const CollectiveUse& u = out.collectives[i].use;
    if (!u.overlapped || u.level < 1) continue;
    int partner = -1;
    for (size_t j = 0; j < ops.size(); ++j) {
      const CollectiveUse& v = out.collectives[j].use;
      if (v.overlapped || v.dimension == u.dimension || v.level < 1) continue;
      if (partner < 0 || v.seconds_per_call > out.collectives[partner].use.seconds_per_call) partner = static_cast<int>(j);
    }
    if (partner < 0) continue;
    absl::StatusOr<std::vector<double>> t =
        SimulateConcurrent(profile, {ops[i], ops[partner]}, background, kMaxSimulatedGpus, stop);
    if (!t.ok()) return t.status();
    CollectiveComparison& blocking = out.collectives[partner];
    out.collectives[i].simulated_contended_s = (*t)[0];
    blocking.simulated_contended_s = (*t)[1];
    // The blocking call is delayed while the reduction streams beside it. The analytic
    // model already charges cross-node TP and PP traffic beside the reduction the
    // max-min rule on one shared bottleneck, min(a, d) (assemble.cc); only where the
    // simulated links share differently (a bottleneck not shared, or shared with more
    // flows) does the difference, for one call, move the iteration.
    const double delay = std::max(0.0, (*t)[1] - blocking.simulated_alone_s);
    const bool charged = blocking.use.dimension == "tp" || blocking.use.dimension == "pp";
    const double rule = charged ? std::min(blocking.simulated_alone_s, out.collectives[i].simulated_alone_s) : 0.0;
    contention += delay - rule;
    out.notes.push_back(absl::StrFormat("%s %s ran beside %s %s: %.3f ms -> %.3f ms and %.3f ms -> %.3f ms", u.dimension,
                                        u.level_name, out.collectives[partner].use.dimension,
                                        out.collectives[partner].use.level_name,
                                        1e3 * out.collectives[i].simulated_alone_s, 1e3 * (*t)[0],
                                        1e3 * out.collectives[partner].simulated_alone_s, 1e3 * (*t)[1]));
  }
  // Each dimension's exposed communication scaled by simulated / analytic time.
  std::map<std::string, std::pair<double, double>> by_dim;  // analytic, simulated (calls-weighted)
  for (const CollectiveComparison& c : out.collectives) {
    by_dim[c.use.dimension].first += c.use.calls * c.use.seconds_per_call;
    by_dim[c.use.dimension].second += c.use.calls * c.simulated_alone_s;
  }
  out.simulated_iteration_s = analytic.iteration_time_s + contention;
  for (const auto& [dim, t] : by_dim) {
    if (t.first > 0) out.simulated_iteration_s += ExposedComm(analytic.time, dim) * (t.second / t.first - 1);
  }
  return out;
}

}  // namespace paraplan::sim
