// libFuzzer target: bytes -> paraplan.v1.SystemProfile (binary and JSON), as
// CreateProfile / UpdateProfile receive it -> the adapter -> ValidateProfile -> when
// valid, an estimate and a small plan on it. A profile the estimator accepts must never
// make an estimate non-finite.
#include <cstddef>
#include <cstdint>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "estimator/catalog/presets.h"
#include "estimator/inputs/validate.h"
#include "estimator/iteration/estimate.h"
#include "estimator/plan/search.h"
#include "paraplan/v1/services.pb.h"
#include "server/adapter.h"
#include "tests/fuzz/fuzz_util.h"

namespace paraplan::fuzz {
namespace {

void Run(const v1::SystemProfile& proto) {
  absl::StatusOr<SystemProfile> p = adapter::FromProto(proto);
  if (!p.ok() || !ValidateProfile(*p).ok()) return;

  // GPT-3 175B on 1,024 GPUs, as in bench/rpc_load.
  static const Workload gpt3 = *FindModelPreset("gpt3-175b");
  ParallelConfig c;
  c.tensor_parallel = 8;
  c.pipeline_parallel = 8;
  c.data_parallel = 16;
  c.micro_batch_size = 1;
  c.global_batch_size = 1536;
  c.recompute = Recompute::kSelective;
  c.sequence_parallel = true;
  absl::StatusOr<Estimate> e = EstimateIteration(gpt3, c, *p);
  if (e.ok()) CheckEstimate(*e);

  PlanRequest r;
  r.workload = *FindModelPreset("llama3-8b");
  r.gpus = {8};
  r.global_batch_size = 64;
  r.top_k = 3;
  r.threads = 1;
  r.deadline = absl::Now() + absl::Milliseconds(2);
  absl::StatusOr<PlanResult> plan = Plan(r, *p);
  if (!plan.ok()) return;
  for (const Estimate& pe : plan->plans) CheckEstimate(pe);
}

}  // namespace
}  // namespace paraplan::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  paraplan::v1::SystemProfile profile;
  paraplan::fuzz::ForEachDecoding(data, size, &profile, [](const google::protobuf::Message& m) {
    paraplan::fuzz::Run(static_cast<const paraplan::v1::SystemProfile&>(m));
  });
  return 0;
}
