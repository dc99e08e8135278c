#include "server/http_api.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "google/protobuf/field_mask.pb.h"
#include "google/protobuf/util/field_mask_util.h"
#include "google/protobuf/util/json_util.h"
#include "paraplan/v1/network.grpc.pb.h"
#include "paraplan/v1/services.grpc.pb.h"
#include "report/report.h"
#include "server/rich_status.h"

namespace paraplan::server {
namespace {

constexpr char kJson[] = "application/json";
constexpr char kTimeoutHeader[] = "x-paraplan-timeout-s";
constexpr double kMaxTimeoutS = 3600;

HttpResponse ErrorResponse(absl::StatusCode code, absl::string_view message) {
  HttpResponse r{HttpStatusOf(code), kJson, JsonError(code, message)};
  if (code == absl::StatusCode::kUnauthenticated) r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"paraplan\"");
  if (code == absl::StatusCode::kResourceExhausted) r.headers.emplace_back("Retry-After", "1");
  return r;
}

HttpResponse InvalidArgument(absl::string_view message) {
  return ErrorResponse(absl::StatusCode::kInvalidArgument, message);
}

// Top-level repeated message fields longer than this are printed element by element:
// protobuf's printer builds a tree of the whole message first (with default values,
// ~22 KB per estimate: 220 MB for a batch of 10,000), one element's tree at a time
// costs what that element does.
constexpr int kPrintWholeUpTo = 64;

absl::Status PrintJson(const google::protobuf::Message& m, std::string* out) {
  google::protobuf::util::JsonPrintOptions o;
  o.preserve_proto_field_names = true;
  o.always_print_primitive_fields = true;
  const google::protobuf::Descriptor* d = m.GetDescriptor();
  const google::protobuf::Reflection* r = m.GetReflection();
  const google::protobuf::FieldDescriptor* big = nullptr;
  for (int i = 0; i < d->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = d->field(i);
    if (f->is_repeated() && !f->is_map() && f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE &&
        r->FieldSize(m, f) > kPrintWholeUpTo) {
      big = f;
      break;
    }
  }
  if (big == nullptr) {
    const auto s = google::protobuf::util::MessageToJsonString(m, out, o);
    return s.ok() ? absl::OkStatus() : absl::InternalError(s.message().as_string());
  }
  // The message without the long field, then the field's elements spliced in where it
  // printed as "name":[] (once: nothing else at the top level has that key).
  // Copied without it (copying the whole answer would double its memory).
  google::protobuf::FieldMask others;
  for (int i = 0; i < d->field_count(); ++i) {
    if (d->field(i) != big) others.add_paths(d->field(i)->name());
  }
  std::unique_ptr<google::protobuf::Message> rest(m.New());
  google::protobuf::util::FieldMaskUtil::MergeMessageTo(m, others, {}, rest.get());
  std::string head;
  if (absl::Status s = PrintJson(*rest, &head); !s.ok()) return s;
  const std::string empty = absl::StrCat("\"", big->name(), "\":[]");
  const size_t at = head.find(empty);
  if (at == std::string::npos || head.find(empty, at + 1) != std::string::npos) {
    return absl::InternalError(absl::StrCat("cannot place field ", big->name()));
  }
  out->assign(head, 0, at + empty.size() - 1);
  for (int i = 0; i < r->FieldSize(m, big); ++i) {
    if (i > 0) out->push_back(',');
    std::string element;
    const auto s = google::protobuf::util::MessageToJsonString(r->GetRepeatedMessage(m, big, i), &element, o);
    if (!s.ok()) return absl::InternalError(s.message().as_string());
    out->append(element);
  }
  out->append(head, at + empty.size() - 1, std::string::npos);
  return absl::OkStatus();
}

HttpResponse JsonResponse(const google::protobuf::Message& m) {
  std::string out;
  if (absl::Status s = PrintJson(m, &out); !s.ok()) {
    return ErrorResponse(absl::StatusCode::kInternal, absl::StrCat("cannot print the response as JSON: ", s.message()));
  }
  out += '\n';
  return HttpResponse{200, kJson, std::move(out)};
}

// %XX escapes and, in query strings, '+' for space. Malformed escapes stay as they are.
std::string PercentDecode(absl::string_view in, bool plus_is_space) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%' && i + 2 < in.size() && absl::ascii_isxdigit(static_cast<unsigned char>(in[i + 1])) &&
        absl::ascii_isxdigit(static_cast<unsigned char>(in[i + 2]))) {
      int v = 0;
      absl::SimpleHexAtoi(in.substr(i + 1, 2), &v);
      out += static_cast<char>(v);
      i += 2;
    } else if (in[i] == '+' && plus_is_space) {
      out += ' ';
    } else {
      out += in[i];
    }
  }
  return out;
}

// The query string as name -> value; INVALID_ARGUMENT for a name not in `known` (or
// given twice).
absl::StatusOr<std::map<std::string, std::string>> ParseQuery(absl::string_view query,
                                                              const std::vector<std::string>& known) {
  std::map<std::string, std::string> out;
  for (absl::string_view part : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    const size_t eq = part.find('=');
    const std::string name = PercentDecode(part.substr(0, eq), true);
    const std::string value = eq == absl::string_view::npos ? "" : PercentDecode(part.substr(eq + 1), true);
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "query: unknown parameter \"", name.substr(0, 64), "\"",
          known.empty() ? std::string(" (this path takes none)") : absl::StrCat(" (known: ", absl::StrJoin(known, ", "), ")")));
    }
    if (!out.emplace(name, value).second) {
      return absl::InvalidArgumentError(absl::StrCat("query: parameter \"", name, "\" given twice"));
    }
  }
  return out;
}

absl::Status QueryInt(const std::map<std::string, std::string>& q, const std::string& name, int* out) {
  const auto it = q.find(name);
  if (it == q.end()) return absl::OkStatus();
  if (!absl::SimpleAtoi(it->second, out) || *out < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": \"", it->second.substr(0, 64), "\" is not a non-negative integer"));
  }
  return absl::OkStatus();
}

// The RPC's client context: the caller's token, its address and its deadline.
absl::Status Prepare(const HttpRequest& http, grpc::ClientContext* ctx) {
  if (const std::optional<absl::string_view> auth = http.Header("authorization"); auth.has_value()) {
    // gRPC metadata values are printable ASCII; anything else cannot be a valid token.
    const bool printable = std::all_of(auth->begin(), auth->end(), [](char c) { return c >= 0x20 && c < 0x7f; });
    if (!printable) return absl::UnauthenticatedError("invalid bearer token");
    ctx->AddMetadata("authorization", std::string(*auth));
  }
  if (!http.peer.empty()) ctx->AddMetadata(kHttpPeerMetadata, http.peer);
  if (const std::optional<absl::string_view> t = http.Header(kTimeoutHeader); t.has_value()) {
    double seconds = 0;
    if (!absl::SimpleAtod(*t, &seconds) || !(seconds > 0) || seconds > kMaxTimeoutS) {
      return absl::InvalidArgumentError(absl::StrCat("X-Paraplan-Timeout-S: \"", t->substr(0, 64),
                                                     "\" is not a number of seconds in (0, ", kMaxTimeoutS, "]"));
    }
    ctx->set_deadline(std::chrono::system_clock::now() +
                      std::chrono::microseconds(static_cast<int64_t>(std::llround(seconds * 1e6))));
  }
  return absl::OkStatus();
}

// Calls one RPC with `request` and answers its response or its status.
template <typename Request, typename Response>
HttpResponse Forward(
    const HttpRequest& http, const Request& request,
    const std::function<grpc::Status(grpc::ClientContext*, const Request&, Response*)>& call) {
  grpc::ClientContext ctx;
  if (absl::Status s = Prepare(http, &ctx); !s.ok()) return ErrorResponse(s.code(), s.message());
  Response response;
  const grpc::Status s = call(&ctx, request, &response);
  if (!s.ok()) return ErrorResponse(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
  return JsonResponse(response);
}

// POST route: the body is the request message in JSON.
template <typename Request, typename Response>
HttpHandler JsonPost(std::function<grpc::Status(grpc::ClientContext*, const Request&, Response*)> call) {
  return [call = std::move(call)](const HttpRequest& http) {
    if (absl::StatusOr<std::map<std::string, std::string>> q = ParseQuery(http.query, {}); !q.ok()) {
      return InvalidArgument(q.status().message());
    }
    Request request;
    const std::string type = std::string(Request::descriptor()->name());
    if (absl::StripAsciiWhitespace(http.body).empty()) {
      return InvalidArgument(absl::StrCat("request body: empty; send a ", type, " as JSON"));
    }
    google::protobuf::util::JsonParseOptions o;
    o.ignore_unknown_fields = false;
    if (const auto s = google::protobuf::util::JsonStringToMessage(http.body, &request, o); !s.ok()) {
      return InvalidArgument(absl::StrCat("request body: not a valid ", type, " in JSON: ", s.message().as_string()));
    }
    return Forward<Request, Response>(http, request, call);
  };
}

// GET /v1/profiles/NAME[@VERSION][/versions | /accuracy]
HttpResponse ProfileRoute(const HttpRequest& http, v1::Profiles::Stub* profiles, v1::Measurements::Stub* measurements) {
  constexpr absl::string_view kPrefix = "/v1/profiles/";
  const std::vector<std::string> parts = absl::StrSplit(absl::string_view(http.path).substr(kPrefix.size()), '/');
  const std::string name = PercentDecode(parts[0], false);
  if (name.empty() || parts.size() > 2) {
    return ErrorResponse(absl::StatusCode::kNotFound,
                         "no such resource: use /v1/profiles/NAME[@VERSION], /v1/profiles/NAME/versions or "
                         "/v1/profiles/NAME/accuracy");
  }
  const std::string what = parts.size() == 2 ? parts[1] : "";
  if (what.empty()) {
    if (absl::StatusOr<std::map<std::string, std::string>> q = ParseQuery(http.query, {}); !q.ok()) {
      return InvalidArgument(q.status().message());
    }
    v1::GetProfileRequest req;
    req.set_name(name);
    return Forward<v1::GetProfileRequest, v1::SystemProfile>(
        http, req, [profiles](auto* c, const auto& q, auto* r) { return profiles->GetProfile(c, q, r); });
  }
  if (what == "versions") {
    if (absl::StatusOr<std::map<std::string, std::string>> q = ParseQuery(http.query, {}); !q.ok()) {
      return InvalidArgument(q.status().message());
    }
    v1::ListProfileVersionsRequest req;
    req.set_name(name);
    return Forward<v1::ListProfileVersionsRequest, v1::ListProfileVersionsResponse>(
        http, req, [profiles](auto* c, const auto& q, auto* r) { return profiles->ListProfileVersions(c, q, r); });
  }
  if (what == "accuracy") {
    absl::StatusOr<std::map<std::string, std::string>> q = ParseQuery(http.query, {"label_key", "recent"});
    if (!q.ok()) return InvalidArgument(q.status().message());
    v1::GetAccuracyRequest req;
    req.set_profile(name);
    if (auto it = q->find("label_key"); it != q->end()) req.set_label_key(it->second);
    int recent = 0;
    if (absl::Status s = QueryInt(*q, "recent", &recent); !s.ok()) return InvalidArgument(s.message());
    req.set_recent(recent);
    return Forward<v1::GetAccuracyRequest, v1::AccuracyReport>(
        http, req, [measurements](auto* c, const auto& q, auto* r) { return measurements->GetAccuracy(c, q, r); });
  }
  return ErrorResponse(absl::StatusCode::kNotFound,
                       absl::StrCat("no such resource \"", what.substr(0, 64), "\" of a profile (versions, accuracy)"));
}

// GET /v1/report?profile=P&model=M&gpus=N[,N...]&global_batch=B[&objective=time|cost|energy][&top=K]:
// the plan report page of `paraplan plan ... --report` (report/report.h) for that plan,
// with the profile version that answered and its measured accuracy.
HttpResponse ReportRoute(const HttpRequest& http, v1::Planner::Stub* planner, v1::Profiles::Stub* profiles,
                         v1::Measurements::Stub* measurements) {
  absl::StatusOr<std::map<std::string, std::string>> q =
      ParseQuery(http.query, {"profile", "model", "gpus", "global_batch", "objective", "top"});
  if (!q.ok()) return InvalidArgument(q.status().message());
  for (const char* required : {"profile", "model", "gpus", "global_batch"}) {
    if (q->count(required) == 0) {
      return InvalidArgument(absl::StrCat(
          required, ": missing; GET /v1/report?profile=P&model=M&gpus=N[,N...]&global_batch=B"
                    "[&objective=time|cost|energy][&top=K]"));
    }
  }
  v1::PlanRequest req;
  req.set_profile(q->at("profile"));
  req.set_model(q->at("model"));
  for (absl::string_view part : absl::StrSplit(q->at("gpus"), ',')) {
    int n = 0;
    if (!absl::SimpleAtoi(part, &n) || n < 1) {
      return InvalidArgument(absl::StrCat("gpus: \"", q->at("gpus").substr(0, 64),
                                          "\" is not a list of GPU counts (256,512,1024)"));
    }
    req.add_gpus(n);
  }
  int value = 0;
  if (absl::Status s = QueryInt(*q, "global_batch", &value); !s.ok()) return InvalidArgument(s.message());
  req.set_global_batch_size(value);
  value = 0;
  if (absl::Status s = QueryInt(*q, "top", &value); !s.ok()) return InvalidArgument(s.message());
  req.set_top_k(value);
  if (auto it = q->find("objective"); it != q->end()) {
    const std::string& o = it->second;
    if (o == "time" || o == "cost" || o == "energy") {
      req.set_objective(o == "time" ? v1::OBJECTIVE_TIME : o == "cost" ? v1::OBJECTIVE_COST : v1::OBJECTIVE_ENERGY);
    } else {
      return InvalidArgument(absl::StrCat("objective: \"", o.substr(0, 64), "\" is not time, cost or energy"));
    }
  }

  v1::PlanResponse plan;
  {
    grpc::ClientContext ctx;
    if (absl::Status s = Prepare(http, &ctx); !s.ok()) return ErrorResponse(s.code(), s.message());
    const grpc::Status s = planner->Plan(&ctx, req, &plan);
    if (!s.ok()) return ErrorResponse(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
  }
  // The version that answered (the plans name it); the page still names it when its
  // details or its accuracy cannot be read.
  const std::string ref = plan.plans_size() > 0 && !plan.plans(0).profile_name().empty()
                              ? absl::StrCat(plan.plans(0).profile_name(), "@", plan.plans(0).profile_version())
                              : req.profile();
  v1::SystemProfile profile;
  {
    grpc::ClientContext ctx;
    v1::GetProfileRequest get;
    get.set_name(ref);
    Prepare(http, &ctx).IgnoreError();  // it passed for the plan
    if (!profiles->GetProfile(&ctx, get, &profile).ok()) {
      profile.Clear();
      profile.set_name(ref);
    }
  }
  cli::ReportInput in = cli::PlanReportInput(req, plan, profile);
  {
    grpc::ClientContext ctx;
    v1::GetAccuracyRequest acc;
    acc.set_profile(ref.substr(0, ref.find('@')));
    v1::AccuracyReport report;
    Prepare(http, &ctx).IgnoreError();
    const grpc::Status s = measurements->GetAccuracy(&ctx, acc, &report);
    if (s.ok()) {
      in.accuracy = report;
    } else {
      in.accuracy_error = absl::StrCat(absl::StatusCodeToString(static_cast<absl::StatusCode>(s.error_code())),
                                       ": ", s.error_message());
    }
  }
  in.generated_at = cli::UtcTimestamp(absl::ToUnixSeconds(absl::Now()));
  return HttpResponse{200, "text/html; charset=utf-8", cli::PlanReportHtml(in)};
}

// Appends `c` to `out` as JSON string content.
void AppendJsonChar(std::string* out, char c) {
  switch (c) {
    case '"': *out += "\\\""; return;
    case '\\': *out += "\\\\"; return;
    case '\n': *out += "\\n"; return;
    case '\r': *out += "\\r"; return;
    case '\t': *out += "\\t"; return;
    default: break;
  }
  if (static_cast<unsigned char>(c) < 0x20) {
    absl::StrAppend(out, "\\u00", absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2));
  } else {
    *out += c;
  }
}

// The length of the well-formed UTF-8 sequence at the start of `s`; 0 when it is not one.
size_t Utf8Length(absl::string_view s) {
  const auto b0 = static_cast<unsigned char>(s[0]);
  size_t n = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xe ? 3 : (b0 >> 3) == 0x1e ? 4 : 0;
  if (n == 0 || n > s.size()) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xc0) != 0x80) return 0;
  }
  return n;
}

}  // namespace

int HttpStatusOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk: return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange: return 400;
    case absl::StatusCode::kUnauthenticated: return 401;
    case absl::StatusCode::kPermissionDenied: return 403;
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted: return 409;
    case absl::StatusCode::kResourceExhausted: return 429;
    case absl::StatusCode::kCancelled: return 499;
    case absl::StatusCode::kUnimplemented: return 501;
    case absl::StatusCode::kUnavailable: return 503;
    case absl::StatusCode::kDeadlineExceeded: return 504;
    default: return 500;
  }
}

std::string JsonError(absl::StatusCode code, absl::string_view message) {
  // The field an INVALID_ARGUMENT names, as the gRPC answer's BadRequest detail has it
  // (rich_status.h; a path of letters, digits, '_', '.', '[', ']': nothing to escape).
  const std::string field = code == absl::StatusCode::kInvalidArgument ? FieldOf(message) : "";
  std::string out = absl::StrCat(R"({"error":{"code":")", absl::StatusCodeToString(code), "\",",
                                 field.empty() ? "" : absl::StrCat(R"("field":")", field, "\","), R"("message":")");
  while (!message.empty()) {
    const size_t n = Utf8Length(message);
    if (n == 0) {
      out += '?';
      message.remove_prefix(1);
    } else if (n == 1) {
      AppendJsonChar(&out, message[0]);
      message.remove_prefix(1);
    } else {
      out.append(message.data(), n);
      message.remove_prefix(n);
    }
  }
  out += "\"}}\n";
  return out;
}

void AddApiRoutes(HttpServer& http, std::shared_ptr<grpc::Channel> channel) {
  // Shared by the handlers (stubs are thread-safe), alive as long as the routes.
  std::shared_ptr<v1::Planner::Stub> planner = v1::Planner::NewStub(channel);
  std::shared_ptr<v1::Profiles::Stub> profiles = v1::Profiles::NewStub(channel);
  std::shared_ptr<v1::Measurements::Stub> measurements = v1::Measurements::NewStub(channel);
  std::shared_ptr<v1::Network::Stub> network = v1::Network::NewStub(channel);

  http.Handle("POST", "/v1/plan",
              JsonPost<v1::PlanRequest, v1::PlanResponse>(
                  [planner](auto* c, const auto& q, auto* r) { return planner->Plan(c, q, r); }));
  http.Handle("POST", "/v1/estimate",
              JsonPost<v1::EstimateRequest, v1::EstimateResponse>(
                  [planner](auto* c, const auto& q, auto* r) { return planner->Estimate(c, q, r); }));
  http.Handle("POST", "/v1/estimate:batch",
              JsonPost<v1::EstimateBatchRequest, v1::EstimateBatchResponse>(
                  [planner](auto* c, const auto& q, auto* r) { return planner->EstimateBatch(c, q, r); }));
  http.Handle("POST", "/v1/measurements:ingest",
              JsonPost<v1::IngestMeasurementsRequest, v1::IngestMeasurementsResponse>(
                  [measurements](auto* c, const auto& q, auto* r) {
                    return measurements->IngestMeasurements(c, q, r);
                  }));
  // Calibration as an operation: POST starts one (a CalibrateRequest) and answers with
  // it at once; GET /v1/calibrations/ID follows it to its result.
  http.Handle("POST", "/v1/calibrations",
              JsonPost<v1::CalibrateRequest, v1::CalibrationOperation>(
                  [measurements](auto* c, const auto& q, auto* r) { return measurements->StartCalibration(c, q, r); }));
  http.HandlePrefix("GET", "/v1/calibrations/", [measurements](const HttpRequest& req) {
    if (absl::StatusOr<std::map<std::string, std::string>> q = ParseQuery(req.query, {}); !q.ok()) {
      return InvalidArgument(q.status().message());
    }
    v1::GetCalibrationRequest get;
    get.set_operation_id(req.path.substr(std::string_view("/v1/calibrations/").size()));
    return Forward<v1::GetCalibrationRequest, v1::CalibrationOperation>(
        req, get, [measurements](auto* c, const auto& q, auto* r) { return measurements->GetCalibration(c, q, r); });
  });
  http.Handle("POST", "/v1/profiles:check",
              JsonPost<v1::CheckProfileRequest, v1::SystemProfile>(
                  [profiles](auto* c, const auto& q, auto* r) { return profiles->CheckProfile(c, q, r); }));
  http.Handle("POST", "/v1/simulate",
              JsonPost<v1::SimulateRequest, v1::SimulateResponse>(
                  [network](auto* c, const auto& q, auto* r) { return network->Simulate(c, q, r); }));
  http.Handle("POST", "/v1/codesign",
              JsonPost<v1::CodesignRequest, v1::CodesignResponse>(
                  [network](auto* c, const auto& q, auto* r) { return network->Codesign(c, q, r); }));
  http.Handle("GET", "/v1/models", [planner](const HttpRequest& req) {
    if (absl::StatusOr<std::map<std::string, std::string>> q = ParseQuery(req.query, {}); !q.ok()) {
      return InvalidArgument(q.status().message());
    }
    return Forward<v1::ListModelsRequest, v1::ListModelsResponse>(
        req, v1::ListModelsRequest(), [planner](auto* c, const auto& q, auto* r) { return planner->ListModels(c, q, r); });
  });
  http.Handle("GET", "/v1/version", [planner](const HttpRequest& req) {
    if (absl::StatusOr<std::map<std::string, std::string>> q = ParseQuery(req.query, {}); !q.ok()) {
      return InvalidArgument(q.status().message());
    }
    return Forward<v1::GetVersionRequest, v1::GetVersionResponse>(
        req, v1::GetVersionRequest(), [planner](auto* c, const auto& q, auto* r) { return planner->GetVersion(c, q, r); });
  });
  http.Handle("GET", "/v1/profiles", [profiles](const HttpRequest& req) {
    absl::StatusOr<std::map<std::string, std::string>> q = ParseQuery(req.query, {"page_size", "page_token"});
    if (!q.ok()) return InvalidArgument(q.status().message());
    v1::ListProfilesRequest list;
    int page_size = 0;
    if (absl::Status s = QueryInt(*q, "page_size", &page_size); !s.ok()) return InvalidArgument(s.message());
    list.set_page_size(page_size);
    if (auto it = q->find("page_token"); it != q->end()) list.set_page_token(it->second);
    return Forward<v1::ListProfilesRequest, v1::ListProfilesResponse>(
        req, list, [profiles](auto* c, const auto& q, auto* r) { return profiles->ListProfiles(c, q, r); });
  });
  http.Handle("GET", "/v1/report", [planner, profiles, measurements](const HttpRequest& req) {
    return ReportRoute(req, planner.get(), profiles.get(), measurements.get());
  });
  http.HandlePrefix("GET", "/v1/profiles/", [profiles, measurements](const HttpRequest& req) {
    return ProfileRoute(req, profiles.get(), measurements.get());
  });
}

}  // namespace paraplan::server
