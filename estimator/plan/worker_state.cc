#include "estimator/plan/worker_state.h"

#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "estimator/inputs/units.h"

namespace paraplan {

double RankKey(const SearchSpace& space, int global_batch, const CandidateResult& r, double quantile_factor) {
  double key = 0;
  switch (space.request->objective) {
    case Objective::kTime:
      key = r.iteration_time_s * quantile_factor;
      break;
    case Objective::kCost:
      key = r.cost_usd;
      break;
    case Objective::kEnergy:
      key = r.energy_j;
      break;
  }
  return key / global_batch;
}

bool Outranked(const SearchSpace& space, int global_batch, double quantile_factor, const CandidateResult& bound,
               const WorkerState& st) {
  if (st.top.WouldAccept(RankKey(space, global_batch, bound, quantile_factor))) return false;
  for (int o = 0; o < kObjectives; ++o) {
    const double v = ObjectiveValue(bound, o);
    if (st.pool[o].WouldAccept(o == 2 ? v * (1 - 1e-9) : v)) return false;
  }
  return true;
}

void Offer(const SearchSpace& space, int global_batch, const ModelCosts& model, const ParallelConfig& c,
           double quantile_factor, Scored s, WorkerState* st) {
  s.key = RankKey(space, global_batch, s.result, quantile_factor);
  const bool top = st->top.WouldAccept(s.key);
  bool pooled = false;
  for (int o = 0; o < kObjectives && !pooled; ++o) pooled = st->pool[o].WouldAccept(ObjectiveValue(s.result, o));
  if (!top && !pooled) return;
  s.config = c;
  EchoResolvedDefaults(model, &s.config);
  s.model_flops_per_sample = model.model_flops_per_sample;
  s.tokens_per_sample = model.tokens_per_sample;
  if (top) st->top.Offer(s);
  for (int o = 0; o < kObjectives; ++o) {
    Scored p = s;
    p.key = ObjectiveValue(s.result, o);
    if (st->pool[o].WouldAccept(p.key)) st->pool[o].Offer(p);
  }
}

std::string InfeasibleReason(const SearchSpace& space, const WorkerState* shortfall_state,
                             const WorkerState* refused_state, bool truncated) {
  std::vector<std::string> parts;
  const bool short_of_memory = shortfall_state != nullptr && std::isfinite(shortfall_state->best_shortfall_bytes);
  // A refused setting that fit is said first; one that did not only where the framework
  // ran nothing at all (else the closest it runs says more).
  const bool refused = refused_state != nullptr && (refused_state->refused_fit || !short_of_memory);
  if (refused) {
    const ParallelConfig& c = refused_state->refused_config;
    parts.push_back(absl::StrFormat("%s runs none of the configurations %s%s (the first, %s on %d GPUs: %s %s)",
                                    FrameworkName(space.request->constraints.framework),
                                    refused_state->refused_fit ? "that fit" : "the constraints admit",
                                    truncated ? " so far" : "", c.ShortString(), static_cast<int>(c.NumGpus()),
                                    refused_state->refusal.field, refused_state->refusal.reason));
  }
  if (short_of_memory) {
    const double headroom = space.request->constraints.memory_headroom_ratio;
    // Offloading to host memory is searched only on request: say so where nothing fits.
    const char* offload = space.request->constraints.allow_offload
                              ? ""
                              : "; offloading to host memory was not searched (constraints.allow_offload; paraplan plan "
                                "--allow-offload)";
    // Cut short, the search saw only part of the space: what it saw did not fit.
    const char* lead =
        truncated ? (refused ? "the search was cut short (deadline or candidate cap)"
                             : "the search was cut short (deadline or candidate cap) before a configuration that fits "
                               "was found")
                  : (refused ? "the others do not fit in memory" : "no configuration fits in memory");
    parts.push_back(absl::StrFormat(
        "%s; the closest%s, %s on %d GPUs, needs %.1f GiB of %.1f GiB usable (%.1f GiB short)%s", lead,
        truncated ? " so far" : "", shortfall_state->shortfall_config.ShortString(),
        static_cast<int>(shortfall_state->shortfall_config.NumGpus()), shortfall_state->shortfall_total_bytes / kGiB,
        space.hws.front()->capacity_bytes() * (1 - headroom) / kGiB, shortfall_state->best_shortfall_bytes / kGiB,
        offload));
  } else if (refused && truncated) {
    parts.push_back("the search was cut short (deadline or candidate cap)");
  }
  if (!parts.empty()) return absl::StrJoin(parts, "; ");
  if (truncated) return "the search was cut short (deadline or candidate cap) before any configuration was evaluated";
  return "no valid configuration: the GPU counts, global batch size and constraints admit no "
         "combination of degrees that divides the model";
}

}  // namespace paraplan
