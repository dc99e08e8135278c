// libFuzzer target: bytes -> paraplan.v1.EstimateRequest (binary and JSON) -> the
// adapter -> the estimator's validation -> EstimateIteration, in the order the server's
// Estimate RPC takes them (server/backend.cc), with a built-in profile in place of the
// store. Any crash, sanitizer report or broken invariant is a finding.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "estimator/catalog/presets.h"
#include "estimator/inputs/validate.h"
#include "estimator/iteration/estimate.h"
#include "paraplan/v1/services.pb.h"
#include "server/adapter.h"
#include "tests/fuzz/fuzz_util.h"

namespace paraplan::fuzz {
namespace {

void Run(const v1::EstimateRequest& req) {
  v1::Workload wp;
  if (req.has_workload()) {
    wp = req.workload();
  } else {
    std::optional<Workload> preset = FindModelPreset(req.model());
    if (!preset) return;
    wp = adapter::ToProto(*preset);
  }
  absl::StatusOr<Workload> w = adapter::FromProto(wp);
  if (!w.ok()) return;
  (void)ValidateWorkload(*w);
  if (!req.has_config()) return;
  absl::StatusOr<ParallelConfig> c = adapter::FromProto(req.config());
  if (!c.ok()) return;
  (void)ValidateConfig(*w, *c);
  if (req.num_gpus() < 0) return;
  if (req.num_gpus() > 0 && !ValidateConfigForGpus(*w, *c, req.num_gpus()).ok()) return;
  const SystemProfile profile = ProfileNamed(req.profile());
  (void)ValidateProfile(profile);
  absl::StatusOr<Estimate> e = EstimateIteration(*w, *c, profile);
  if (e.ok()) CheckEstimate(*e);
}

}  // namespace
}  // namespace paraplan::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  paraplan::v1::EstimateRequest req;
  paraplan::fuzz::ForEachDecoding(data, size, &req, [](const google::protobuf::Message& m) {
    paraplan::fuzz::Run(static_cast<const paraplan::v1::EstimateRequest&>(m));
  });
  return 0;
}
