// Validation against published measurements (Korthikanti et al. 2022, Tables 4 and 5)
// with the built-in, uncalibrated dgx-a100-80gb profile. Prints predicted vs measured.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "estimator/catalog/presets.h"
#include "estimator/iteration/estimate.h"
#include "estimator/system/collectives.h"
#include "estimator/system/hardware.h"
#include "estimator/testing/public_data.h"
#include "estimator/workloads/model_costs.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::Load;
using testing::Row;

SystemProfile A100() {
  for (const SystemProfile& p : BuiltinProfiles()) {
    if (p.name == "dgx-a100-80gb") return p;
  }
  return {};
}

TEST(Korthikanti, IterationTimesWithinFivePercentMeanTenPercentMax) {
  const std::vector<Row> rows = Load("korthikanti22_iteration_times.jsonl");
  ASSERT_EQ(rows.size(), 9u);
  double sum_ape = 0, max_ape = 0;
  std::printf("%-48s %9s %9s %7s  %s\n", "run", "measured", "predicted", "error", "bottleneck");
  for (const Row& r : rows) {
    absl::StatusOr<Estimate> e = EstimateIteration(r.workload, r.config, A100());
    ASSERT_TRUE(e.ok()) << r.id << ": " << e.status();
    const double measured = r.raw["iteration_time_s"];
    const double ape = std::abs(e->iteration_time_s - measured) / measured;
    sum_ape += ape;
    max_ape = std::max(max_ape, ape);
    std::printf("%-48s %9.2f %9.2f %+6.1f%%  %s mfu=%.3f\n", r.id.c_str(), measured,
                e->iteration_time_s, 100 * (e->iteration_time_s / measured - 1), e->bottleneck.c_str(),
                e->mfu);
    EXPECT_TRUE(e->memory.fits) << r.id << " total GiB " << e->memory.total_bytes / (1 << 30);
  }
  const double mape = sum_ape / rows.size();
  std::printf("MAPE %.2f%%  max %.2f%%\n", 100 * mape, 100 * max_ape);
  EXPECT_LE(mape, 0.05);
  EXPECT_LE(max_ape, 0.10);
}

TEST(Korthikanti, LayerTimesWithinFifteenPercent) {
  const std::vector<Row> rows = Load("korthikanti22_layer_times.jsonl");
  ASSERT_EQ(rows.size(), 5u);
  std::printf("%-52s %7s %7s %7s %7s\n", "layer", "fwd ms", "pred", "bwd ms", "pred");
  const SystemProfile profile = A100();
  for (const Row& r : rows) {
    const ParallelConfig c = r.config.Normalized();
    const Hardware hw(profile, r.workload.precision);
    const Collectives coll(hw);
    absl::StatusOr<ModelCosts> model = ComputeModelCosts(r.workload, ModelShape::Of(c), hw, coll);
    ASSERT_TRUE(model.ok()) << model.status();
    const BlockCosts& layer = model->layers[0];
    const double fwd = 1e3 * (layer.fwd_s + layer.tp_fwd_s);
    const double bwd = 1e3 * (layer.bwd_s + layer.tp_bwd_s + layer.recompute_s);
    const double mf = r.raw["layer_forward_ms"], mb = r.raw["layer_backward_ms"];
    std::printf("%-52s %7.2f %7.2f %7.2f %7.2f\n", r.id.c_str(), mf, fwd, mb, bwd);
    EXPECT_NEAR(fwd, mf, 0.15 * mf) << r.id;
    EXPECT_NEAR(bwd, mb, 0.15 * mb) << r.id;
  }
}

}  // namespace
}  // namespace paraplan
