#include "estimator/plan/ranking.h"

#include <vector>

#include "gtest/gtest.h"

namespace paraplan {
namespace {

Scored Candidate(double seconds, double bytes) {
  Scored s;
  s.key = seconds;
  s.result.iteration_time_s = seconds;
  s.result.memory.total_bytes = bytes;
  s.config.tensor_parallel = 2;
  s.config.pipeline_parallel = 4;
  s.config.data_parallel = 8;
  s.config.virtual_pipeline_stages = 2;
  s.config.global_batch_size = 512;
  return s;
}

// Only rank order and overlap switches fold: a configuration that differs in anything
// else (here the first stage's layer count, or the token dispatcher) keeps a row of its
// own even when it predicts the same time and memory.
TEST(Ranking, FoldsOnlyRankOrderAndOverlapSwitches) {
  const Scored a = Candidate(10.0, 5e10);
  Scored order = a;
  order.config.rank_order = RankOrder::kTpCpEpPpDp;
  Scored layers = a;
  layers.config.first_pipeline_stage_layers = 3;
  layers.config.rank_order = RankOrder::kTpCpEpPpDp;
  Scored dispatcher = a;
  dispatcher.config.moe_dispatcher = MoeDispatcher::kDeepEp;
  const std::vector<FoldedRow> rows = FoldEquivalents({a, order, layers, dispatcher}, 5);
  ASSERT_EQ(rows.size(), 3u);
  int folded = 0;
  for (const FoldedRow& r : rows) {
    folded += static_cast<int>(r.equivalents.size());
    for (const std::string& e : r.equivalents) EXPECT_EQ(e, "rank order tp-cp-ep-pp-dp");
  }
  EXPECT_EQ(folded, 1);
}

// The Pareto front keeps configurations that differ in any field (the dispatcher here)
// and drops only exact duplicates.
TEST(Ranking, ParetoFrontDropsOnlyExactDuplicates) {
  const Scored a = Candidate(10.0, 5e10);
  Scored deepep = a;
  deepep.config.moe_dispatcher = MoeDispatcher::kDeepEp;
  std::vector<Scored> all = {a, a, deepep};
  EXPECT_EQ(ParetoFront(all).size(), 2u);
}

// Configurations are ordered whatever field tells them apart.
TEST(Ranking, ConfigBeforeIsATotalOrder) {
  const Scored a = Candidate(10.0, 5e10);
  Scored b = a;
  b.config.last_pipeline_stage_layers = 5;
  EXPECT_NE(ConfigBefore(a.config, b.config), ConfigBefore(b.config, a.config));
  EXPECT_FALSE(ConfigBefore(a.config, a.config));
}

}  // namespace
}  // namespace paraplan
