// Shared fixtures for estimator tests: built-in profiles and presets by name, and a
// Megatron-style configuration builder.
#ifndef PARAPLAN_ESTIMATOR_TEST_UTIL_H_
#define PARAPLAN_ESTIMATOR_TEST_UTIL_H_

#include <string>

#include "estimator/parallel_config.h"
#include "estimator/presets.h"

namespace paraplan::testing {

inline SystemProfile Profile(const std::string& name) {
  for (const SystemProfile& p : BuiltinProfiles()) {
    if (p.name == name) return p;
  }
  return {};
}

inline Workload Model(const std::string& name) { return *FindModelPreset(name); }

inline ParallelConfig Config(int tp, int pp, int dp, int mbs, int gbs,
                             Recompute rc = Recompute::kNone) {
  ParallelConfig c;
  c.tensor_parallel = tp;
  c.pipeline_parallel = pp;
  c.data_parallel = dp;
  c.micro_batch_size = mbs;
  c.global_batch_size = gbs;
  c.recompute = rc;
  return c;
}

}  // namespace paraplan::testing

#endif  // PARAPLAN_ESTIMATOR_TEST_UTIL_H_
