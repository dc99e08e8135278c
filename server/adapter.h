// Adapter: the one place that maps paraplan.v1 protos to estimator structs and back.
//
// Inbound conversions validate what the proto type system cannot (enum values outside
// the declared set, rank_order strings) and answer INVALID_ARGUMENT naming the field;
// range checks on numbers are the estimator's (estimator/inputs/validate.h). Pure functions;
// thread-safe.
#ifndef PARAPLAN_SERVER_ADAPTER_H_
#define PARAPLAN_SERVER_ADAPTER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "estimator/calibration/microbench.h"
#include "estimator/calibration/calibrate.h"
#include "estimator/iteration/estimate.h"
#include "estimator/plan/search.h"
#include "paraplan/v1/services.pb.h"

namespace paraplan::adapter {

absl::StatusOr<Workload> FromProto(const v1::Workload& w);
absl::StatusOr<ParallelConfig> FromProto(const v1::ParallelConfig& c);
absl::StatusOr<SystemProfile> FromProto(const v1::SystemProfile& p);
// `workload` must already be converted; gpus/objective/constraints come from `r`.
absl::StatusOr<PlanRequest> FromProto(const v1::PlanRequest& r, const Workload& workload);
// INVALID_ARGUMENT naming "framework" for a value the API does not define.
absl::StatusOr<Framework> FrameworkFromProto(v1::Framework f);

v1::Workload ToProto(const Workload& w);
v1::ParallelConfig ToProto(const ParallelConfig& c);
v1::SystemProfile ToProto(const SystemProfile& p);
v1::Estimate ToProto(const Estimate& e);
v1::CollectiveUse ToProto(const CollectiveUse& u);
v1::Calibration ToProto(const Calibration& c);
v1::FitReport ToProto(const FitReport& r);
// A microbenchmark fit's answer without its profile (the backend stores that): the
// fitted figures and the points the fit misses (file_of[i]: point i's file name).
v1::FitNetworkResponse ToProto(const NetworkFitReport& r, const std::vector<std::string>& file_of);
v1::FitGemmResponse ToProto(const GemmFitReport& r);

}  // namespace paraplan::adapter

#endif  // PARAPLAN_SERVER_ADAPTER_H_
