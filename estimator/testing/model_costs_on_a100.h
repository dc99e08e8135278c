// The per-layer costs (ComputeModelCosts) of a workload and configuration on the built-in
// dgx-a100-80gb profile's BF16 hardware, for tests of the layer cost models.
#ifndef PARAPLAN_ESTIMATOR_TESTING_MODEL_COSTS_ON_A100_H_
#define PARAPLAN_ESTIMATOR_TESTING_MODEL_COSTS_ON_A100_H_

#include "absl/status/statusor.h"
#include "estimator/system/collectives.h"
#include "estimator/system/hardware.h"
#include "estimator/testing/test_util.h"
#include "estimator/workloads/model_costs.h"

namespace paraplan::testing {

inline absl::StatusOr<ModelCosts> CostsOnA100(const Workload& w, const ParallelConfig& c) {
  static const SystemProfile p = Profile("dgx-a100-80gb");
  static const Hardware hw(p, Precision::kBf16);
  static const Collectives coll(hw);
  return ComputeModelCosts(w, ModelShape::Of(c.Normalized()), hw, coll);
}

}  // namespace paraplan::testing

#endif  // PARAPLAN_ESTIMATOR_TESTING_MODEL_COSTS_ON_A100_H_
