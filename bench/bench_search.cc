// Whole-space planner searches. Reports wall time per search and candidates evaluated
// per second (counters), on both cores.
//   GPT-3 175B on 4,096 A100 (global batch 1,536) — the headline case;
//   Megatron 1T on 3,072 A100; Llama-3 405B on 16,384 H100; a 4-size GPU-count sweep;
//   DeepSeek-V3 (MoE with MLA: expert folding and its own expert-TP searched) on 2,048 H100
//   (global batch 4,096, as its report's 15,360-sequence batches scaled down);
//   ResNet-50 on 1,024 V100 of abci-v100-16gb (global batch 32,768): the ParaDL
//   strategies (spatial with its cut, filter, channel) over a 176-layer graph.
#include <benchmark/benchmark.h>

#include "estimator/catalog/presets.h"
#include "estimator/plan/search.h"

namespace paraplan {
namespace {

SystemProfile ProfileNamed(const std::string& name) {
  for (const SystemProfile& p : BuiltinProfiles()) {
    if (p.name == name) return p;
  }
  return {};
}

void RunSearch(benchmark::State& state, const char* model, const char* profile,
               std::vector<int> gpus, int global_batch) {
  PlanRequest req;
  req.workload = *FindModelPreset(model);
  req.gpus = std::move(gpus);
  req.global_batch_size = global_batch;
  req.top_k = 10;
  req.threads = static_cast<int>(state.range(0));
  const SystemProfile p = ProfileNamed(profile);
  int64_t evaluated = 0, enumerated = 0;
  for (auto _ : state) {
    absl::StatusOr<PlanResult> r = Plan(req, p);
    if (!r.ok() || r->plans.empty()) {
      state.SkipWithError("search failed");
      return;
    }
    evaluated += r->candidates_evaluated;
    enumerated += r->candidates_enumerated;
  }
  state.counters["evaluated_per_s"] = benchmark::Counter(double(evaluated), benchmark::Counter::kIsRate);
  state.counters["enumerated_per_s"] = benchmark::Counter(double(enumerated), benchmark::Counter::kIsRate);
  state.counters["evaluated"] = double(evaluated) / state.iterations();
  state.counters["enumerated"] = double(enumerated) / state.iterations();
}

void BM_Gpt3_175B_4096(benchmark::State& s) { RunSearch(s, "gpt3-175b", "dgx-a100-80gb", {4096}, 1536); }
void BM_Megatron1T_3072(benchmark::State& s) { RunSearch(s, "megatron-1t", "dgx-a100-80gb", {3072}, 3072); }
void BM_Llama405B_16384(benchmark::State& s) { RunSearch(s, "llama3-405b", "dgx-h100-80gb", {16384}, 2048); }
void BM_DeepSeekV3_2048(benchmark::State& s) { RunSearch(s, "deepseek-v3", "dgx-h100-80gb", {2048}, 4096); }
void BM_ResNet50_1024(benchmark::State& s) { RunSearch(s, "resnet50", "abci-v100-16gb", {1024}, 32768); }
void BM_Gpt3_Sweep(benchmark::State& s) {
  RunSearch(s, "gpt3-175b", "dgx-a100-80gb", {256, 512, 1024, 2048}, 1536);
}

BENCHMARK(BM_Gpt3_175B_4096)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Megatron1T_3072)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Llama405B_16384)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_DeepSeekV3_2048)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Gpt3_Sweep)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ResNet50_1024)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace paraplan

BENCHMARK_MAIN();
