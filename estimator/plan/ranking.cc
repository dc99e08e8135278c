#include "estimator/plan/ranking.h"

#include <cmath>
#include <tuple>

#include "absl/strings/str_join.h"

namespace paraplan {

namespace {

// A deterministic tuple of the configuration, every field (the last tie-break; what
// folding and the Pareto front tell configurations apart by). A field added to
// ParallelConfig belongs here too: the size check below fails until it is looked at.
static_assert(sizeof(ParallelConfig) == 132 || sizeof(void*) != 8,
              "ParallelConfig changed: add the new field to ConfigTuple, then update this size");
auto ConfigTuple(const ParallelConfig& c) {
  return std::make_tuple(c.NumGpus(), c.tensor_parallel, c.pipeline_parallel, c.context_parallel,
                         c.expert_parallel, c.ExpertTensorParallel(), c.virtual_pipeline_stages, c.micro_batch_size,
                         static_cast<int>(c.recompute), c.sequence_parallel, c.flash_attention,
                         c.zero_stage, static_cast<int>(c.pipeline_schedule), c.overlap_grad_reduce,
                         c.overlap_param_gather, c.offload.optimizer, c.offload.weights,
                         c.offload.activations, static_cast<int>(c.rank_order), c.spatial_parallel,
                         c.filter_parallel, c.channel_parallel, static_cast<int>(c.moe_dispatcher),
                         c.moe_a2a_overlap, c.first_pipeline_stage_layers, c.last_pipeline_stage_layers,
                         c.global_batch_size, c.recompute_modules, c.cpu_offload_layers, c.offload_modules,
                         c.fp8_param_gather.has_value() ? int{*c.fp8_param_gather} : -1, c.spatial_layers,
                         c.spatial_axes, c.cuda_graphs, c.tp_comm_overlap.value_or(false), static_cast<int>(c.dp_algorithm),
                         static_cast<int>(c.tp_algorithm), static_cast<int>(c.placement),
                         static_cast<int>(c.framework));
}

// Among equal objectives, what a practitioner would pick: overlap on, then the default
// rank order (tp-cp-ep-dp-pp).
auto Preference(const ParallelConfig& c) {
  return std::make_tuple(!c.overlap_grad_reduce, !c.overlap_param_gather, static_cast<int>(c.rank_order));
}

// The settings in which `b` differs from `a` when that is all that differs and they
// predict the same time and memory (rank order and overlap switches can be without
// effect: no data parallelism to overlap, groups placed alike), e.g. "rank order
// tp-cp-ep-pp-dp"; empty otherwise.
std::string FoldableDifference(const Scored& a, const Scored& b) {
  ParallelConfig y = b.config;
  y.rank_order = a.config.rank_order;
  y.overlap_grad_reduce = a.config.overlap_grad_reduce;
  y.overlap_param_gather = a.config.overlap_param_gather;
  if (ConfigTuple(y) != ConfigTuple(a.config)) return "";
  auto same = [](double u, double v) { return std::abs(u - v) <= 1e-9 * std::max(std::abs(u), std::abs(v)); };
  if (!same(a.result.iteration_time_s, b.result.iteration_time_s) ||
      !same(a.result.memory.total_bytes, b.result.memory.total_bytes)) {
    return "";
  }
  std::vector<std::string> what;
  if (b.config.rank_order != a.config.rank_order) {
    what.push_back(b.config.rank_order == RankOrder::kTpCpEpPpDp ? "rank order tp-cp-ep-pp-dp"
                                                                 : "rank order tp-cp-ep-dp-pp");
  }
  if (b.config.overlap_grad_reduce != a.config.overlap_grad_reduce) {
    what.push_back(b.config.overlap_grad_reduce ? "overlap grad reduce on" : "overlap grad reduce off");
  }
  if (b.config.overlap_param_gather != a.config.overlap_param_gather) {
    what.push_back(b.config.overlap_param_gather ? "overlap param gather on" : "overlap param gather off");
  }
  return absl::StrJoin(what, ", ");
}

bool Dominates(const CandidateResult& a, const CandidateResult& b) {
  bool strictly = false;
  for (int o = 0; o < kObjectives; ++o) {
    const double x = ObjectiveValue(a, o), y = ObjectiveValue(b, o);
    if (x > y) return false;
    if (x < y) strictly = true;
  }
  return strictly;
}

}  // namespace

bool ConfigBefore(const ParallelConfig& a, const ParallelConfig& b) { return ConfigTuple(a) < ConfigTuple(b); }

bool Better(const Scored& a, const Scored& b) {
  if (a.key != b.key) return a.key < b.key;
  if (Preference(a.config) != Preference(b.config)) return Preference(a.config) < Preference(b.config);
  return ConfigTuple(a.config) < ConfigTuple(b.config);
}

void TopK::Offer(const Scored& s) {
  if (k_ == 0) return;
  if (items_.size() < k_) {
    items_.push_back(s);
    std::push_heap(items_.begin(), items_.end(), Better);
  } else if (Better(s, items_.front())) {
    std::pop_heap(items_.begin(), items_.end(), Better);
    items_.back() = s;
    std::push_heap(items_.begin(), items_.end(), Better);
  }
}

double ObjectiveValue(const CandidateResult& r, int objective) {
  switch (objective) {
    case 0:
      return r.iteration_time_s;
    case 1:
      return r.cost_usd;
    case 2:
      return r.energy_j;
    default:
      return r.memory.capacity_bytes > 0 ? r.memory.total_bytes / r.memory.capacity_bytes : 1;
  }
}

std::vector<FoldedRow> FoldEquivalents(std::vector<Scored> candidates, size_t k) {
  std::sort(candidates.begin(), candidates.end(), Better);
  std::vector<FoldedRow> rows;
  for (Scored& s : candidates) {
    bool folded = false;
    for (FoldedRow& row : rows) {
      if (std::string d = FoldableDifference(row.scored, s); !d.empty()) {
        row.equivalents.push_back(std::move(d));
        folded = true;
        break;
      }
    }
    if (!folded && rows.size() < k) rows.push_back({std::move(s), {}});
  }
  return rows;
}

std::vector<const Scored*> ParetoFront(std::vector<Scored>& candidates) {
  std::sort(candidates.begin(), candidates.end(),
            [](const Scored& a, const Scored& b) { return ConfigTuple(a.config) < ConfigTuple(b.config); });
  candidates.erase(std::unique(candidates.begin(), candidates.end(),
                               [](const Scored& a, const Scored& b) {
                                 return ConfigTuple(a.config) == ConfigTuple(b.config);
                               }),
                   candidates.end());
  std::vector<const Scored*> front;
  for (const Scored& a : candidates) {
    bool dominated = false;
    for (const Scored& b : candidates) {
      if (&a != &b && Dominates(b.result, a.result)) {
        dominated = true;
        break;
      }
    }
    if (!dominated) front.push_back(&a);
  }
  std::sort(front.begin(), front.end(), [](const Scored* a, const Scored* b) {
    if (a->result.iteration_time_s != b->result.iteration_time_s) {
      return a->result.iteration_time_s < b->result.iteration_time_s;
    }
    if (Preference(a->config) != Preference(b->config)) return Preference(a->config) < Preference(b->config);
    return ConfigTuple(a->config) < ConfigTuple(b->config);
  });
  // Configurations that score alike in every objective are one point of the front: the
  // first of them in report order stands for the rest (rank orders, overlap switches, a
  // spatial cut one layer either way, where they change nothing).
  std::vector<const Scored*> points;
  for (const Scored* s : front) {
    bool same = false;
    for (const Scored* p : points) {
      same = true;
      for (int o = 0; o < kObjectives && same; ++o) same = ObjectiveValue(p->result, o) == ObjectiveValue(s->result, o);
      if (same) break;
    }
    if (!same) points.push_back(s);
  }
  return points;
}

}  // namespace paraplan
