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

// The Pareto front counts configurations that score alike in every objective once, the
// practitioner's choice standing for them, and keeps every distinct trade-off.
TEST(Ranking, ParetoFrontCountsEqualScoresOnce) {
  Scored a = Candidate(10.0, 5e10);
  a.result.cost_usd = 2.0;
  Scored order = a;  // scores alike: one point, `a` (the default rank order) stands for it
  order.config.rank_order = RankOrder::kTpCpEpPpDp;
  Scored deepep = a;  // faster and dearer: a point of its own
  deepep.config.moe_dispatcher = MoeDispatcher::kDeepEp;
  deepep.result.iteration_time_s = 9.0;
  deepep.result.cost_usd = 2.5;
  Scored worse = a;  // dominated
  worse.config.micro_batch_size = 2;
  worse.result.iteration_time_s = 11.0;
  std::vector<Scored> all = {order, worse, a, deepep, a};
  const std::vector<const Scored*> front = ParetoFront(all);
  ASSERT_EQ(front.size(), 2u);
  EXPECT_EQ(front[0]->config.moe_dispatcher, MoeDispatcher::kDeepEp);
  EXPECT_EQ(front[1]->config.rank_order, RankOrder::kTpCpEpDpPp);
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
