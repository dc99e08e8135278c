// The scenarios the property tests run over, and what they share: for each of 25 model x
// profile pairs (dense, MoE, MLA, FP8 / NVFP4, offload, CNN splits; A100 to GB300), up to
// 40 configurations the planner ranks, each with what estimating it needs; a failure's
// description of a configuration and of two answers' time terms. Tests only.
#ifndef PARAPLAN_ESTIMATOR_TESTING_PROPERTY_SCENARIOS_H_
#define PARAPLAN_ESTIMATOR_TESTING_PROPERTY_SCENARIOS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "estimator/iteration/estimate.h"
#include "estimator/plan/search.h"

namespace paraplan::testing {

struct Scenario {
  std::string model, profile;
  int gpus = 0, global_batch = 0;
  Framework framework = Framework::kAny;
  bool low_precision = false;  // FP8 (FP4 on a GPU with FP4 tensor cores)
  bool offload = false;        // the planner may offload (tight memory)
  int64_t seq_length = 0;      // tokens a sample (0 = the preset's)
};

std::vector<Scenario> Scenarios();
Workload WorkloadOf(const Scenario& s);
// The planner's request for `s`, its `n` best plans.
PlanRequest RequestOf(const Scenario& s, int n);
// Up to `n` configurations the planner ranks for `s`: the best and those after them
// (a test failure where there is none).
std::vector<ParallelConfig> Configs(const Scenario& s, int n);
std::string Describe(const ParallelConfig& c);

// One configuration the planner ranks for a scenario, with what estimating it needs.
struct Case {
  const Workload& workload;
  const SystemProfile& profile;
  ParallelConfig config;
  std::string what;  // the scenario and the configuration, for a failure's message
};
// Calls `f` on up to 40 ranked configurations of every scenario, then on a few
// configurations no planner ranks near the top (property_scenarios.cc: OffPlanCases).
void ForEachCase(const std::function<void(Case&)>& f);

// Relative slack of the properties' comparisons (rounding only).
inline constexpr double kTolerance = 1e-9;

// Both answers' time terms that differ, side by side, for a failure's message.
std::string Breakdowns(const Estimate& a, const Estimate& b);

// Exposed communication and an exposed input pipeline both follow the compute stream:
// the loaders prefetch beside the GPU's work and the host's launches, not while the loop
// waits on a collective (InputLoading, assemble.cc). Where both are exposed, a faster GPU
// or host shortens the stretch they share and the two waits follow each other for
// longer, so a faster GPU or host may lengthen the iteration there, and only there.
bool InputAndCommBothExposed(const Estimate& e);

}  // namespace paraplan::testing

#endif  // PARAPLAN_ESTIMATOR_TESTING_PROPERTY_SCENARIOS_H_
