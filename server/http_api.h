// HttpApi: the paraplan services as HTTP/JSON on their own port (--http-listen), for
// clients that cannot speak gRPC (shell scripts, the Slurm plugin, notebooks).
//
// Contract. One implementation behind both transports: every route turns its request
// into the RPC's request message and calls the gRPC service through the server's
// in-process channel, so authentication, roles, rate limits, request limits, metrics
// and the per-RPC log line are exactly those of a gRPC call.
//
//   POST /v1/plan                    PlanRequest            -> PlanResponse
//   POST /v1/estimate                EstimateRequest        -> EstimateResponse
//   POST /v1/estimate:batch          EstimateBatchRequest   -> EstimateBatchResponse
//   POST /v1/measurements:ingest     IngestMeasurementsRequest -> IngestMeasurementsResponse
//   POST /v1/simulate                SimulateRequest        -> SimulateResponse (network.proto)
//   POST /v1/codesign                CodesignRequest        -> CodesignResponse (network.proto)
//   GET  /v1/models                  -> ListModelsResponse
//   GET  /v1/version                 -> GetVersionResponse
//   GET  /v1/report?profile=P&model=M&gpus=N[,N...]&global_batch=B[&objective=time|cost|energy][&top=K]
//                                    -> the plan report page (text/html, report/report.h)
//   GET  /v1/profiles[?page_size=N&page_token=T]             -> ListProfilesResponse
//   GET  /v1/profiles/NAME[@VERSION]                         -> SystemProfile
//   GET  /v1/profiles/NAME/versions                          -> ListProfileVersionsResponse
//   GET  /v1/profiles/NAME/accuracy[?label_key=K&recent=N]   -> AccuracyReport
//
// An estimate or plan request may carry `profile_override` (a SystemProfile for that
// request only, services.proto).
//
// Bodies are the proto3 JSON mapping: requests accept snake_case or lowerCamel names,
// enum names or numbers; an unknown field is an error. Responses use the proto field
// names (snake_case) and print every field, zeros included (64-bit integers as strings,
// as the mapping says). Errors are {"error": {"code": "INVALID_ARGUMENT", "message":
// "..."}} with the gRPC code mapped to the HTTP status: INVALID_ARGUMENT and
// FAILED_PRECONDITION 400, OUT_OF_RANGE 400, UNAUTHENTICATED 401 (with
// WWW-Authenticate: Bearer), PERMISSION_DENIED 403, NOT_FOUND 404, ALREADY_EXISTS and
// ABORTED 409, RESOURCE_EXHAUSTED 429 (with Retry-After), CANCELLED 499, UNIMPLEMENTED
// 501, UNAVAILABLE 503, DEADLINE_EXCEEDED 504, anything else 500. A body that is not
// JSON for the request message is 400 naming the problem; an unknown query parameter is
// 400 naming it. Routing errors (404 unknown path, 405 wrong method with Allow, 413 body
// over the limit) come from HttpServer as plain text.
//
// Headers: "Authorization: Bearer TOKEN" is passed on as the RPC's authorization
// (--tokens-file roles apply as for gRPC); "X-Paraplan-Timeout-S: SECONDS" sets the
// call's deadline (a plan search returns its best so far when it runs out; without it
// the server's --plan-deadline-s applies). The client's address is passed on so that the
// write rate limit and the log line see the HTTP client, not the in-process channel.
//
// Thread-safe: handlers run on the HttpServer's workers, concurrently.
#ifndef PARAPLAN_SERVER_HTTP_API_H_
#define PARAPLAN_SERVER_HTTP_API_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "server/http_server.h"

namespace grpc {
class Channel;
}

namespace paraplan::server {

// The metadata key that carries the HTTP client's address on forwarded calls; the
// services honour it only on calls that arrive through the in-process channel.
inline constexpr char kHttpPeerMetadata[] = "x-paraplan-http-peer";

// Registers the routes above on `http`; every call goes through `channel`.
void AddApiRoutes(HttpServer& http, std::shared_ptr<grpc::Channel> channel);

// The HTTP status for a gRPC / absl status code.
int HttpStatusOf(absl::StatusCode code);

// {"error": {"code": "NOT_FOUND", "message": "..."}} (message escaped for JSON; bytes
// that are not UTF-8 become '?').
std::string JsonError(absl::StatusCode code, absl::string_view message);

}  // namespace paraplan::server

#endif  // PARAPLAN_SERVER_HTTP_API_H_
