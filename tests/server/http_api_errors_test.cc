// The HTTP/JSON API's errors and guards through the real server (http_api_fixture.h):
// malformed JSON and invalid fields answered 400 naming the problem, unknown profiles
// 404, wrong methods 405 with Allow, the timeout header bounding a search, shutdown
// draining a call in flight, error bodies that are valid JSON, bearer tokens and roles,
// anonymous reads, the write rate limit per HTTP client, tokens refused off loopback.
#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "server/http_api.h"
#include "tests/server/http_api_fixture.h"

namespace paraplan::server {
namespace {

using ::testing::HasSubstr;

TEST_F(HttpApiTest, MalformedJsonIsBadRequestNamingTheProblem) {
  Reply r = Post("/v1/plan", "{\"profile\": x");
  ASSERT_EQ(r.status, 400) << r.body;
  Error e = ErrorOf(r);
  EXPECT_EQ(e.code, "INVALID_ARGUMENT");
  EXPECT_THAT(e.message, HasSubstr("not a valid PlanRequest in JSON"));

  r = Post("/v1/plan", R"({"profil": "dgx-h100-80gb"})");
  ASSERT_EQ(r.status, 400) << r.body;
  EXPECT_THAT(ErrorOf(r).message, HasSubstr("profil"));

  r = Post("/v1/measurements:ingest", "");
  ASSERT_EQ(r.status, 400) << r.body;
  EXPECT_THAT(ErrorOf(r).message, HasSubstr("empty"));

  r = Post("/v1/plan?verbose=1", ToJson(Llama8bPlan()));
  ASSERT_EQ(r.status, 400) << r.body;
  EXPECT_THAT(ErrorOf(r).message, HasSubstr("verbose"));

  r = Get("/v1/profiles?page_size=many");
  ASSERT_EQ(r.status, 400) << r.body;
  EXPECT_THAT(ErrorOf(r).message, HasSubstr("page_size"));

  r = Post("/v1/plan", ToJson(Llama8bPlan()), {"X-Paraplan-Timeout-S: soon"});
  ASSERT_EQ(r.status, 400) << r.body;
  EXPECT_THAT(ErrorOf(r).message, HasSubstr("X-Paraplan-Timeout-S"));
}

TEST_F(HttpApiTest, InvalidConfigIsBadRequestNamingTheField) {
  v1::EstimateRequest req = Gpt3Estimate();
  req.mutable_config()->set_tensor_parallel(7);  // 96 heads
  const Reply r = Post("/v1/estimate", ToJson(req));
  ASSERT_EQ(r.status, 400) << r.body;
  const Error e = ErrorOf(r);
  EXPECT_EQ(e.code, "INVALID_ARGUMENT");
  EXPECT_THAT(e.message, HasSubstr("tensor_parallel"));

  v1::PlanRequest plan = Llama8bPlan();
  plan.set_global_batch_size(0);
  const Reply p = Post("/v1/plan", ToJson(plan));
  ASSERT_EQ(p.status, 400) << p.body;
  EXPECT_THAT(ErrorOf(p).message, HasSubstr("global_batch_size"));
}

TEST_F(HttpApiTest, UnknownProfileIsNotFound) {
  Reply r = Get("/v1/profiles/no-such-profile");
  ASSERT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(ErrorOf(r).code, "NOT_FOUND");
  EXPECT_THAT(ErrorOf(r).message, HasSubstr("no-such-profile"));

  v1::PlanRequest plan = Llama8bPlan();
  plan.set_profile("no-such-profile");
  r = Post("/v1/plan", ToJson(plan));
  EXPECT_EQ(r.status, 404) << r.body;

  EXPECT_EQ(Get("/v1/profiles/dgx-h100-80gb/colour").status, 404);
  EXPECT_EQ(Get("/v1/profiles/").status, 404);
  EXPECT_EQ(Get("/v1/nothing-here").status, 404);
}

TEST_F(HttpApiTest, WrongMethodIs405WithAllow) {
  Reply r = Get("/v1/plan");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.headers["allow"], "POST");
  r = Post("/v1/profiles/dgx-h100-80gb", "{}");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.headers["allow"], "GET, HEAD");
  r = Http(port(), "DELETE", "/v1/measurements:ingest");
  EXPECT_EQ(r.status, 405);
}

TEST_F(HttpApiTest, TimeoutHeaderBoundsThePlanSearch) {
  v1::PlanRequest big;
  big.set_profile("dgx-h100-80gb");
  big.set_model("gpt3-175b");
  for (int g : {512, 1024, 2048, 4096}) big.add_gpus(g);
  big.set_global_batch_size(1536);
  const absl::Time start = absl::Now();
  const Reply r = Post("/v1/plan", ToJson(big), {"X-Paraplan-Timeout-S: 0.3"});
  const absl::Duration took = absl::Now() - start;
  // Either the search finished in time or it answered its best so far, truncated.
  ASSERT_TRUE(r.status == 200 || r.status == 504) << r.status << r.body;
  EXPECT_LT(took, absl::Seconds(3));
}

// SIGTERM's drain covers HTTP calls: one in flight finishes, then the port closes.
TEST_F(HttpApiTest, ShutdownDrainsAnInFlightHttpCall) {
  v1::PlanRequest big;
  big.set_profile("dgx-h100-80gb");
  big.set_model("gpt3-175b");
  for (int g : {512, 1024, 2048, 4096}) big.add_gpus(g);
  big.set_global_batch_size(1536);
  const int http_port = port();
  Reply in_flight;
  std::thread caller([&] { in_flight = Http(http_port, "POST", "/v1/plan", ToJson(big), {"X-Paraplan-Timeout-S: 1"}); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  server_->Shutdown(absl::Seconds(5));
  caller.join();
  EXPECT_EQ(in_flight.status, 200) << in_flight.body;
  EXPECT_GT(FromJson<v1::PlanResponse>(in_flight.body).plans_size(), 0);
  EXPECT_EQ(Http(http_port, "GET", "/v1/models").status, 0);  // closed
}

TEST(HttpApiJson, ErrorBodiesAreValidJson) {
  const std::string body = JsonError(absl::StatusCode::kNotFound, "a \"quoted\"\nline\x01 caf\xc3\xa9 \xff end");
  google::protobuf::Struct s;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(body, &s).ok()) << body;
  const auto& e = s.fields().at("error").struct_value().fields();
  EXPECT_EQ(e.at("code").string_value(), "NOT_FOUND");
  EXPECT_EQ(e.at("message").string_value(), "a \"quoted\"\nline\x01 caf\xc3\xa9 ? end");
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kFailedPrecondition), 400);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kAlreadyExists), 409);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kDeadlineExceeded), 504);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusOf(absl::StatusCode::kDataLoss), 500);
}

// Tokens: the same roles as gRPC (reads need reader, writes writer).
class HttpApiAuthTest : public HttpApiTest {
 protected:
  static constexpr char kReader[] = "reader-token-0123456789";
  static constexpr char kWriter[] = "writer-token-0123456789";
  ServerOptions Options() override {
    ServerOptions o = HttpApiTest::Options();
    std::ofstream(dir_ + "/tokens") << kReader << " reader\n" << kWriter << " writer\n";
    o.tokens_file = dir_ + "/tokens";
    o.allow_anonymous_reads = anonymous_reads_;
    return o;
  }
  std::string IngestBody(const std::string& id) {
    v1::IngestMeasurementsRequest req;
    *req.add_measurements() = PresetMeasurement(id);
    return ToJson(req);
  }
  bool anonymous_reads_ = false;
};

TEST_F(HttpApiAuthTest, TokensAndRoles) {
  Reply r = Post("/v1/plan", ToJson(Llama8bPlan()));
  ASSERT_EQ(r.status, 401) << r.body;
  EXPECT_EQ(ErrorOf(r).code, "UNAUTHENTICATED");
  EXPECT_THAT(r.headers["www-authenticate"], HasSubstr("Bearer"));
  EXPECT_EQ(Get("/v1/models", {"Authorization: Bearer not-a-known-token-at-all"}).status, 401);
  EXPECT_EQ(Get("/v1/models", {absl::StrCat("Authorization: Bearer ", kReader, "\xff")}).status, 401);

  const std::string reader = absl::StrCat("Authorization: Bearer ", kReader);
  const std::string writer = absl::StrCat("Authorization: Bearer ", kWriter);
  EXPECT_EQ(Post("/v1/plan", ToJson(Llama8bPlan()), {reader}).status, 200);
  EXPECT_EQ(Get("/v1/profiles/dgx-h100-80gb", {reader}).status, 200);
  r = Post("/v1/measurements:ingest", IngestBody("a"), {reader});
  ASSERT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(ErrorOf(r).code, "PERMISSION_DENIED");
  r = Post("/v1/measurements:ingest", IngestBody("a"), {writer});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(FromJson<v1::IngestMeasurementsResponse>(r.body).accepted(), 1);
}

class HttpApiAnonymousReadsTest : public HttpApiAuthTest {
 protected:
  ServerOptions Options() override {
    anonymous_reads_ = true;
    return HttpApiAuthTest::Options();
  }
};

TEST_F(HttpApiAnonymousReadsTest, ReadsOpenWritesNeedAToken) {
  EXPECT_EQ(Get("/v1/models").status, 200);
  EXPECT_EQ(Post("/v1/plan", ToJson(Llama8bPlan())).status, 200);
  EXPECT_EQ(Post("/v1/measurements:ingest", IngestBody("b")).status, 401);
}

// The write rate limit sees the HTTP client (its address is passed on), and a refusal
// is 429 with Retry-After.
class HttpApiRateLimitTest : public HttpApiTest {
 protected:
  ServerOptions Options() override {
    ServerOptions o = HttpApiTest::Options();
    o.limits.write_rate_per_s = 0.01;
    o.limits.write_burst = 2;
    return o;
  }
};

TEST_F(HttpApiRateLimitTest, WritesPastTheBurstAreTooManyRequests) {
  v1::IngestMeasurementsRequest req;
  *req.add_measurements() = PresetMeasurement("r");
  EXPECT_EQ(Post("/v1/measurements:ingest", ToJson(req)).status, 200);
  EXPECT_EQ(Post("/v1/measurements:ingest", ToJson(req)).status, 200);
  const Reply r = Post("/v1/measurements:ingest", ToJson(req));
  ASSERT_EQ(r.status, 429) << r.body;
  EXPECT_EQ(ErrorOf(r).code, "RESOURCE_EXHAUSTED");
  EXPECT_EQ(r.headers.at("retry-after"), "1");
  // Reads are not rate limited.
  EXPECT_EQ(Get("/v1/models").status, 200);
}

TEST(HttpApiStartTest, TokensOffLoopbackAreRefused) {
  char tmpl[] = "/tmp/paraplan_http_XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  std::ofstream(dir + "/tokens") << "writer-token-0123456789 writer\n";
  ServerOptions o;
  o.listen = "127.0.0.1:0";
  o.db_path = dir + "/paraplan.db";
  o.metrics_listen = "";
  o.http_listen = "0.0.0.0:0";
  o.tokens_file = dir + "/tokens";
  o.log_level = LogLevel::kWarn;
  auto s = StartServer(o);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("--http-listen"));
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace paraplan::server
