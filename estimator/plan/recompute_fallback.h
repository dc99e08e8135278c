// RecomputeFallback: one search shape's light-recompute variant (LightRecomputeModules in
// search_space.h) — the same shape under selective recompute with Megatron-Core's light
// modules — its per-layer costs computed when a setting of the shape first fails to fit,
// its stage costs once per pipeline layout. The search tries it only on settings that do
// not fit without it (they only add time). Not thread-safe: one per worker and shape.
#ifndef PARAPLAN_ESTIMATOR_PLAN_RECOMPUTE_FALLBACK_H_
#define PARAPLAN_ESTIMATOR_PLAN_RECOMPUTE_FALLBACK_H_

#include <optional>

#include "estimator/iteration/stage_costs.h"
#include "estimator/plan/search_space.h"
#include "estimator/workloads/model_costs.h"

namespace paraplan {

class RecomputeFallback {
 public:
  // `shape`: the shape's own per-layer shape; `modules`: LightRecomputeModules of it.
  RecomputeFallback(const SearchSpace& space, int gpus, ModelShape shape, unsigned modules);
  unsigned modules() const { return modules_; }
  // The variant's per-layer costs; nullptr where they could not be computed (deadline).
  const ModelCosts* Model();
  // Stage costs of the layout set by SetLayout; nullptr with Model().
  const StageCosts* Stages();
  void SetLayout(int pp, int v, int first_stage_layers, int last_stage_layers);

 private:
  const SearchSpace& space_;
  const int gpus_;
  ModelShape shape_;
  const unsigned modules_;
  bool tried_ = false;
  std::optional<ModelCosts> model_;
  int pp_ = 1, v_ = 1, first_ = 0, last_ = 0;
  std::optional<StageCosts> stages_;
};

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_PLAN_RECOMPUTE_FALLBACK_H_
