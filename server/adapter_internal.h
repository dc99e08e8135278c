// The pieces the adapter's files share (adapter.cc, adapter_enums.cc,
// adapter_profile.cc, adapter_results.cc): the error for an enum value outside the
// declared set, and each enumeration's proto <-> struct mapping (inbound ones answer
// INVALID_ARGUMENT naming `field`). Internal to server/adapter*; pure functions.
#ifndef PARAPLAN_SERVER_ADAPTER_INTERNAL_H_
#define PARAPLAN_SERVER_ADAPTER_INTERNAL_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "estimator/inputs/parallel_config.h"
#include "estimator/inputs/workload.h"
#include "estimator/plan/search.h"
#include "paraplan/v1/services.pb.h"

namespace paraplan::adapter::internal {

// INVALID_ARGUMENT: "<field>: <value> is not a known value".
absl::Status BadEnum(absl::string_view field, int value);
v1::CollectiveAlgorithm AlgorithmToProto(CollectiveAlgorithm a);
absl::StatusOr<CollectiveAlgorithm> AlgorithmFromProto(absl::string_view field, v1::CollectiveAlgorithm a);

absl::StatusOr<Recompute> FromProto(v1::Recompute r, absl::string_view field);
absl::StatusOr<Framework> FromProto(v1::Framework f, absl::string_view field);
absl::StatusOr<MoeDispatcher> FromProto(v1::MoeDispatcher d, absl::string_view field);
absl::StatusOr<PipelineSchedule> FromProto(v1::PipelineSchedule s, absl::string_view field);
absl::StatusOr<Precision> FromProto(v1::Precision p);  // field "workload.precision"
Flag FromProto(v1::PlanConstraints::Flag f);             // unspecified or unknown = kAny
v1::MoeDispatcher ToProto(MoeDispatcher d);
v1::Recompute ToProto(Recompute r);
v1::PipelineSchedule ToProto(PipelineSchedule s);
v1::Precision ToProto(Precision p);

}  // namespace paraplan::adapter::internal

#endif  // PARAPLAN_SERVER_ADAPTER_INTERNAL_H_
