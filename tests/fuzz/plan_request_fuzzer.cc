// libFuzzer target: bytes -> paraplan.v1.PlanRequest (binary and JSON) -> the adapter
// -> the estimator's validation -> Plan with a 2 ms deadline, in the order the server's
// Plan RPC takes them (server/backend.cc), with a built-in profile in place of the
// store. A Plan that overruns its deadline by seconds shows up as a libFuzzer timeout.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "estimator/catalog/presets.h"
#include "estimator/inputs/validate.h"
#include "estimator/plan/search.h"
#include "paraplan/v1/services.pb.h"
#include "server/adapter.h"
#include "tests/fuzz/fuzz_util.h"

namespace paraplan::fuzz {
namespace {

void Run(const v1::PlanRequest& req) {
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
  absl::StatusOr<PlanRequest> pr = adapter::FromProto(req, *w);
  if (!pr.ok()) return;
  const SystemProfile profile = ProfileNamed(req.profile());
  (void)ValidateProfile(profile);
  pr->deadline = absl::Now() + absl::Milliseconds(2);
  pr->threads = 1;
  absl::StatusOr<PlanResult> r = Plan(*pr, profile);
  if (!r.ok()) return;
  if (static_cast<int64_t>(r->plans.size()) > r->candidates_feasible) {
    Fail("plan returned more plans than feasible candidates", static_cast<double>(r->plans.size()));
  }
  for (const Estimate& e : r->plans) CheckEstimate(e);
  for (const Estimate& e : r->pareto) CheckEstimate(e);
}

}  // namespace
}  // namespace paraplan::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  paraplan::v1::PlanRequest req;
  paraplan::fuzz::ForEachDecoding(data, size, &req, [](const google::protobuf::Message& m) {
    paraplan::fuzz::Run(static_cast<const paraplan::v1::PlanRequest&>(m));
  });
  return 0;
}
