#include "estimator/plan/recompute_fallback.h"

#include <utility>

#include "absl/status/statusor.h"
#include "estimator/inputs/interrupt.h"

namespace paraplan {

RecomputeFallback::RecomputeFallback(const SearchSpace& space, int gpus, ModelShape shape, unsigned modules)
    : space_(space), gpus_(gpus), shape_(shape), modules_(modules) {
  shape_.recompute = Recompute::kSelective;
  shape_.recompute_modules = modules;
}

const ModelCosts* RecomputeFallback::Model() {
  if (!tried_) {
    tried_ = true;
    const size_t slot = space_.Slot(gpus_);
    const PlanRequest& r = *space_.request;
    absl::StatusOr<ModelCosts> m =
        ComputeModelCosts(r.workload, shape_, *space_.hws[slot], *space_.colls[slot], Interrupt{r.deadline, r.cancelled});
    if (m.ok()) model_ = *std::move(m);
  }
  return model_.has_value() ? &*model_ : nullptr;
}

const StageCosts* RecomputeFallback::Stages() {
  const ModelCosts* m = Model();
  if (m == nullptr) return nullptr;
  if (!stages_.has_value()) stages_ = ComputeStageCosts(*m, pp_, v_, first_, last_);
  return &*stages_;
}

void RecomputeFallback::SetLayout(int pp, int v, int first_stage_layers, int last_stage_layers) {
  pp_ = pp;
  v_ = v;
  first_ = first_stage_layers;
  last_ = last_stage_layers;
  stages_.reset();
}

}  // namespace paraplan
