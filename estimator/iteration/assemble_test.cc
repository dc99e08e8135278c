// The search's split of an assembly into a shared part and per-variant parts, checked
// against the whole assembly.
#include <vector>

#include "estimator/iteration/assemble.h"
#include "estimator/iteration/stage_costs.h"
#include "estimator/system/collectives.h"
#include "estimator/system/hardware.h"
#include "estimator/testing/test_util.h"
#include "estimator/workloads/model_costs.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::Bf16Costs;
using testing::Config;
using testing::Profile;

// The search assembles what the overlap flags and the rank order leave alone once per
// setting (AssembleShared) and the rest per variant (AssembleVariant): shared from one
// variant and finished for another, a candidate must come out as Assemble makes it.
TEST(Assemble, SharedPartIgnoresOverlapFlagsAndRankOrder) {
  const SystemProfile p = Profile("dgx-h100-80gb");
  const Workload w = testing::Model("llama3-70b");
  const Hardware hw(p, Precision::kBf16);
  const Collectives coll(hw);
  const SystemContext sys = MakeSystemContext(p, w, hw, coll);
  for (int zero : {0, 1, 3}) {
    ParallelConfig base = Config(2, 4, 8, 1, 256);
    base.zero_stage = zero;
    base.sequence_parallel = true;
    const ModelCosts m = Bf16Costs(w, base, p);
    const StageCosts stages = ComputeStageCosts(m, 4, 1);
    std::vector<ParallelConfig> variants;
    for (bool og : {false, true}) {
      for (bool opg : {false, true}) {
        for (RankOrder order : {RankOrder::kTpCpEpDpPp, RankOrder::kTpCpEpPpDp}) {
          ParallelConfig c = base;
          c.overlap_grad_reduce = og;
          c.overlap_param_gather = opg;
          c.rank_order = order;
          variants.push_back(c);
        }
      }
    }
    // One cache for the setting, as the search keeps it: filled by the first variant of
    // each rank order, read by the others.
    VariantCache cache;
    for (size_t i = 0; i < variants.size(); ++i) {
      CandidateResult whole, split, cached, bound;
      Assemble(m, stages, variants[i], sys, &whole);
      AssembleShared(m, stages, variants[variants.size() - 1 - i], sys, &split);
      // What the search prunes by: every variant's time, energy and cost at least the
      // bound's, which lacks exactly the pipeline sends and the data-parallel traffic.
      BoundVariants(variants[i], sys, split, &bound);
      EXPECT_LE(bound.iteration_time_s, whole.iteration_time_s) << "zero " << zero << " variant " << i;
      EXPECT_NEAR(bound.iteration_time_s + whole.time.pp_comm_s + whole.time.dp_comm_s, whole.iteration_time_s,
                  1e-12 * whole.iteration_time_s);
      EXPECT_LE(bound.energy_j, whole.energy_j) << i;
      EXPECT_LE(bound.cost_usd, whole.cost_usd) << i;
      EXPECT_GT(bound.energy_j, 0.9 * whole.energy_j * bound.iteration_time_s / whole.iteration_time_s) << i;
      EXPECT_EQ(bound.memory.total_bytes, whole.memory.total_bytes) << i;
      cached = split;
      AssembleVariant(m, stages, variants[i], sys, &split);
      AssembleVariant(m, stages, variants[i], sys, &cached, &cache);
      EXPECT_DOUBLE_EQ(cached.iteration_time_s, whole.iteration_time_s) << "zero " << zero << " variant " << i;
      EXPECT_DOUBLE_EQ(cached.time.dp_comm_s, whole.time.dp_comm_s) << i;
      EXPECT_DOUBLE_EQ(split.iteration_time_s, whole.iteration_time_s) << "zero " << zero << " variant " << i;
      EXPECT_DOUBLE_EQ(split.time.dp_comm_s, whole.time.dp_comm_s) << i;
      EXPECT_DOUBLE_EQ(split.time.pp_comm_s, whole.time.pp_comm_s) << i;
      EXPECT_DOUBLE_EQ(split.energy_j, whole.energy_j) << i;
      EXPECT_DOUBLE_EQ(split.cost_usd, whole.cost_usd) << i;
      EXPECT_DOUBLE_EQ(split.memory.total_bytes, whole.memory.total_bytes) << i;
    }
    // The variants differ where it matters: the rank order moves the pipeline's sends.
    CandidateResult a, b;
    Assemble(m, stages, variants[0], sys, &a);
    Assemble(m, stages, variants[1], sys, &b);
    EXPECT_NE(a.time.pp_comm_s, b.time.pp_comm_s) << "zero " << zero;
    EXPECT_GT(a.time.dp_comm_s, 0) << "zero " << zero;  // so the bound above is below, not equal
  }
}

}  // namespace
}  // namespace paraplan
