// Ranking the planner's candidates: the order plans are reported in, the bounded "best
// k" set each search worker keeps, the folding of configurations that differ only in
// settings without effect into one row, and the Pareto front over time, cost, energy and
// memory. Internal to the planner (search.cc); plain values and pure functions.
#ifndef PARAPLAN_ESTIMATOR_PLAN_RANKING_H_
#define PARAPLAN_ESTIMATOR_PLAN_RANKING_H_

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "estimator/inputs/parallel_config.h"
#include "estimator/iteration/assemble.h"

namespace paraplan {

// One evaluated candidate: enough to rank it and to rebuild its Estimate.
struct Scored {
  double key = 0;  // objective value; lower is better
  ParallelConfig config;
  CandidateResult result;
  double model_flops_per_sample = 0;
  double tokens_per_sample = 0;
};

// The report order: objective, then what a practitioner would pick among equals
// (overlap on, then the default rank order tp-cp-ep-dp-pp), then a deterministic order
// of the configuration.
bool Better(const Scored& a, const Scored& b);

// A fixed total order of configurations (the last tie-break of Better), for choices that
// must not depend on which worker met a configuration first.
bool ConfigBefore(const ParallelConfig& a, const ParallelConfig& b);

// A bounded "best k" set: a max-heap on Better, so the worst kept is at the front and a
// candidate that cannot enter is rejected in O(1).
class TopK {
 public:
  explicit TopK(size_t k) : k_(k) { items_.reserve(k + 1); }
  bool WouldAccept(double key) const { return items_.size() < k_ || key <= items_.front().key; }
  void Offer(const Scored& s);
  std::vector<Scored>& items() { return items_; }

 private:
  size_t k_;
  std::vector<Scored> items_;
};

// Objectives of the Pareto front: time, cost, energy, and memory headroom (maximised).
inline constexpr int kObjectives = 4;
double ObjectiveValue(const CandidateResult& r, int objective);

// A reported row and the configurations folded into it, each as what differs ("rank
// order tp-cp-ep-pp-dp").
struct FoldedRow {
  Scored scored;
  std::vector<std::string> equivalents;
};
// The best k rows of `candidates` (any order) by Better, where a configuration that
// differs from a kept row only in rank order or overlap switches and predicts the same
// time and memory folds into that row instead of taking one of its own.
std::vector<FoldedRow> FoldEquivalents(std::vector<Scored> candidates, size_t k);

// The candidates no other candidate dominates in every objective, fastest first;
// configurations that score alike in every objective count once (the first in report
// order: overlap on, the default rank order). Reorders `candidates`; the pointers point
// into it.
std::vector<const Scored*> ParetoFront(std::vector<Scored>& candidates);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_PLAN_RANKING_H_
