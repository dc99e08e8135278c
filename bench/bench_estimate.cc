// Single-estimate latency for GPT-3 175B on 1,024 A100 GPUs (TP8 PP8 DP16, interleaved,
// selective recompute + SP). Cold: the whole EstimateIteration (validation, per-layer
// costs of the shape, staging, assembly). Warm: per-shape costs reused, only the
// per-candidate assembly (what the planner pays per candidate).
#include <benchmark/benchmark.h>

#include "estimator/catalog/presets.h"
#include "estimator/iteration/assemble.h"
#include "estimator/iteration/estimate.h"
#include "estimator/iteration/stage_costs.h"
#include "estimator/system/collectives.h"
#include "estimator/system/hardware.h"
#include "estimator/workloads/model_costs.h"

namespace paraplan {
namespace {

ParallelConfig Gpt3On1024() {
  ParallelConfig c;
  c.tensor_parallel = 8;
  c.pipeline_parallel = 8;
  c.data_parallel = 16;
  c.virtual_pipeline_stages = 3;
  c.micro_batch_size = 1;
  c.global_batch_size = 1536;
  c.recompute = Recompute::kSelective;
  c.sequence_parallel = true;
  c.pipeline_schedule = PipelineSchedule::kInterleaved1F1B;
  c.zero_stage = 1;
  c.overlap_grad_reduce = true;
  return c;
}

void BM_EstimateCold(benchmark::State& state) {
  const Workload w = *FindModelPreset("gpt3-175b");
  const SystemProfile p = BuiltinProfiles()[0];
  const ParallelConfig c = Gpt3On1024();
  for (auto _ : state) {
    absl::StatusOr<Estimate> e = EstimateIteration(w, c, p);
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_EstimateCold);

void BM_EstimateWarm(benchmark::State& state) {
  const Workload w = *FindModelPreset("gpt3-175b");
  const SystemProfile p = BuiltinProfiles()[0];
  const ParallelConfig c = Gpt3On1024().Normalized();
  const Hardware hw(p, w.precision);
  const Collectives coll(hw);
  const ModelCosts model = *ComputeModelCosts(w, ModelShape::Of(c), hw, coll);
  const StageCosts stages = ComputeStageCosts(model, c.pipeline_parallel, c.virtual_pipeline_stages);
  const SystemContext sys = MakeSystemContext(p, w, hw, coll);
  CandidateResult r;
  for (auto _ : state) {
    Assemble(model, stages, c, sys, &r);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_EstimateWarm);

}  // namespace
}  // namespace paraplan

BENCHMARK_MAIN();
