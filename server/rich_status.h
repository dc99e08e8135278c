// gRPC's rich error model for paraplan's answers: an absl::Status becomes a grpc::Status
// whose grpc-status-details-bin trailer holds a google.rpc.Status with details a client
// can act on without parsing the message — INVALID_ARGUMENT whose message names a field
// ("config.tensor_parallel: ...", the form every validation error here takes) carries a
// BadRequest with that field path and the reason; RESOURCE_EXHAUSTED (a write budget,
// the plan slots) a RetryInfo of kRetryDelayS, the HTTP port's Retry-After. Other codes
// travel as code and message only. Pure functions; thread-safe.
#ifndef PARAPLAN_SERVER_RICH_STATUS_H_
#define PARAPLAN_SERVER_RICH_STATUS_H_

#include <grpcpp/support/status.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace paraplan::server {

inline constexpr int kRetryDelayS = 1;

// The field path an error message starts with ("measurements[2].id" from
// "measurements[2].id: must be 1 to 200 characters"), or "" when it names none.
std::string FieldOf(absl::string_view message);

grpc::Status ToGrpc(const absl::Status& s);

}  // namespace paraplan::server

#endif  // PARAPLAN_SERVER_RICH_STATUS_H_
