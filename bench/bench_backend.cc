// What one Estimate RPC costs inside the server, without gRPC: the backend's whole
// Estimate (profile read from a real SQLite file, decoded, converted, estimated) beside
// its parts, so a change to the profile path shows what it saves.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "estimator/catalog/presets.h"
#include "estimator/iteration/estimate.h"
#include "server/adapter.h"
#include "server/backend.h"
#include "server/metrics.h"
#include "store/store.h"

namespace paraplan::server {
namespace {

struct Server {
  std::string dir;
  std::unique_ptr<store::Store> store;
  std::unique_ptr<Metrics> metrics;
  std::unique_ptr<Backend> backend;
  Server() {
    char tmpl[] = "/tmp/paraplan_bench_backend_XXXXXX";
    dir = mkdtemp(tmpl);
    store = *store::Store::Open(dir + "/paraplan.db");
    metrics = std::make_unique<Metrics>();
    BackendOptions o;
    o.auto_calibrate_after = 0;
    backend = std::make_unique<Backend>(store.get(), metrics.get(), o);
    if (!backend->Start().ok()) std::abort();
  }
  ~Server() {
    backend.reset();
    store.reset();
    std::system(("rm -rf " + dir).c_str());
  }
};

v1::EstimateRequest Gpt3Request() {
  v1::EstimateRequest req;
  req.set_model("gpt3-175b");
  req.set_profile("dgx-a100-80gb");
  v1::ParallelConfig* c = req.mutable_config();
  c->set_tensor_parallel(8);
  c->set_pipeline_parallel(8);
  c->set_data_parallel(16);
  c->set_micro_batch_size(1);
  c->set_global_batch_size(1536);
  return req;
}

void BM_BackendEstimate(benchmark::State& state) {
  Server s;
  const v1::EstimateRequest req = Gpt3Request();
  for (auto _ : state) {
    absl::StatusOr<v1::Estimate> e = s.backend->Estimate(req);
    if (!e.ok()) state.SkipWithError(std::string(e.status().message()).c_str());
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_BackendEstimate)->Unit(benchmark::kMicrosecond);

void BM_StoreGetProfile(benchmark::State& state) {
  Server s;
  for (auto _ : state) {
    auto row = s.store->GetProfile("dgx-a100-80gb", 0);
    benchmark::DoNotOptimize(row);
  }
}
BENCHMARK(BM_StoreGetProfile)->Unit(benchmark::kMicrosecond);

// The default version's read once a profile has many versions (updates and calibrations
// each write one): the read must not grow with them.
void BM_StoreGetProfileManyVersions(benchmark::State& state) {
  Server s;
  const std::string body = s.store->GetProfile("dgx-a100-80gb", 0)->body;
  for (int64_t i = 0; i < state.range(0); ++i) {
    if (!s.store->PutProfileVersion("dgx-a100-80gb", body, "update").ok()) std::abort();
  }
  for (auto _ : state) {
    auto row = s.store->GetProfile("dgx-a100-80gb", 0);
    benchmark::DoNotOptimize(row);
  }
}
BENCHMARK(BM_StoreGetProfileManyVersions)->Arg(10)->Arg(3000)->Unit(benchmark::kMicrosecond);

void BM_DecodeProfile(benchmark::State& state) {
  Server s;
  const std::string body = s.store->GetProfile("dgx-a100-80gb", 0)->body;
  for (auto _ : state) {
    v1::SystemProfile p;
    p.ParseFromString(body);
    absl::StatusOr<SystemProfile> sp = adapter::FromProto(p);
    benchmark::DoNotOptimize(sp);
  }
}
BENCHMARK(BM_DecodeProfile)->Unit(benchmark::kMicrosecond);

void BM_EstimateOnly(benchmark::State& state) {
  const Workload w = *FindModelPreset("gpt3-175b");
  SystemProfile p;
  for (const SystemProfile& b : BuiltinProfiles()) {
    if (b.name == "dgx-a100-80gb") p = b;
  }
  const v1::EstimateRequest req = Gpt3Request();
  const ParallelConfig c = *adapter::FromProto(req.config());
  for (auto _ : state) {
    absl::StatusOr<Estimate> e = EstimateIteration(w, c, p);
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_EstimateOnly)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace paraplan::server

BENCHMARK_MAIN();
