// Every limit of Limits (server.h) through the real server: what is refused, with which
// code, naming which flag — and the rate limiter's arithmetic with driven time.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "paraplan/v1/services.grpc.pb.h"
#include "server/rate_limit.h"
#include "server/server.h"

namespace paraplan::server {
namespace {

class LimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/paraplan_limits_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override {
    if (server_) server_->Shutdown(absl::Seconds(5));
    std::system(("rm -rf " + dir_).c_str());
  }
  void Start(const Limits& limits) {
    ServerOptions o;
    o.listen = "127.0.0.1:0";
    o.db_path = dir_ + "/paraplan.db";
    o.metrics_listen = "";
    o.log_level = LogLevel::kOff;
    o.auto_calibrate_after = 0;
    o.limits = limits;
    auto s = StartServer(o);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()), grpc::InsecureChannelCredentials());
  }
  static v1::EstimateRequest Gpt3(int tp, int pp, int dp) {
    v1::EstimateRequest r;
    r.set_profile("dgx-a100-80gb");
    r.set_model("gpt3-175b");
    r.mutable_config()->set_tensor_parallel(tp);
    r.mutable_config()->set_pipeline_parallel(pp);
    r.mutable_config()->set_data_parallel(dp);
    r.mutable_config()->set_micro_batch_size(1);
    r.mutable_config()->set_global_batch_size(dp * 8);
    return r;
  }
  static v1::PlanRequest Plan(std::initializer_list<int> gpus) {
    v1::PlanRequest r;
    r.set_profile("dgx-a100-80gb");
    r.set_model("gpt3-175b");
    for (int g : gpus) r.add_gpus(g);
    r.set_global_batch_size(1536);
    return r;
  }
  grpc::Status CreateCopy(const std::string& name) {
    v1::SystemProfile p;
    {
      grpc::ClientContext ctx;
      v1::GetProfileRequest g;
      g.set_name("dgx-a100-80gb");
      EXPECT_TRUE(v1::Profiles::NewStub(channel_)->GetProfile(&ctx, g, &p).ok());
    }
    p.set_name(name);
    grpc::ClientContext ctx;
    v1::CreateProfileRequest req;
    *req.mutable_profile() = p;
    v1::SystemProfile out;
    return v1::Profiles::NewStub(channel_)->CreateProfile(&ctx, req, &out);
  }

  std::string dir_;
  std::unique_ptr<RunningServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(LimitsTest, SizesAndCountsAreBounded) {
  Limits l;
  l.max_gpus = 512;
  l.max_plan_gpu_counts = 2;
  l.max_batch = 3;
  l.max_ingest = 2;
  l.max_profile_bytes = 200;
  Start(l);
  auto planner = v1::Planner::NewStub(channel_);
  {
    grpc::ClientContext ctx;
    v1::EstimateResponse r;
    grpc::Status s = planner->Estimate(&ctx, Gpt3(8, 8, 16), &r);  // 1,024 GPUs
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find("--max-gpus"), std::string::npos) << s.error_message();
  }
  {
    grpc::ClientContext ctx;
    v1::EstimateResponse r;
    EXPECT_TRUE(planner->Estimate(&ctx, Gpt3(8, 8, 8), &r).ok());  // 512 GPUs
  }
  {
    grpc::ClientContext ctx;
    v1::EstimateBatchRequest b;
    for (int i = 0; i < 4; ++i) *b.add_requests() = Gpt3(8, 8, 8);
    v1::EstimateBatchResponse r;
    grpc::Status s = planner->EstimateBatch(&ctx, b, &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find("--max-batch"), std::string::npos);
  }
  {  // Batch items over the GPU limit fail alone.
    grpc::ClientContext ctx;
    v1::EstimateBatchRequest b;
    *b.add_requests() = Gpt3(8, 8, 8);
    *b.add_requests() = Gpt3(8, 8, 16);
    v1::EstimateBatchResponse r;
    ASSERT_TRUE(planner->EstimateBatch(&ctx, b, &r).ok());
    EXPECT_TRUE(r.results(0).has_estimate());
    EXPECT_EQ(r.results(1).error().code(), static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
  }
  for (auto gpus : {Plan({64, 128, 256}), Plan({1024})}) {
    grpc::ClientContext ctx;
    v1::PlanResponse r;
    EXPECT_EQ(planner->Plan(&ctx, gpus, &r).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  {
    grpc::ClientContext ctx;
    v1::IngestMeasurementsRequest req;
    for (int i = 0; i < 3; ++i) req.add_measurements()->set_id("m" + std::to_string(i));
    v1::IngestMeasurementsResponse r;
    grpc::Status s = v1::Measurements::NewStub(channel_)->IngestMeasurements(&ctx, req, &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(s.error_message().find("--max-ingest"), std::string::npos);
  }
  grpc::Status s = CreateCopy("too-big");  // a full profile is well over 200 bytes
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("--max-profile-bytes"), std::string::npos);
}

TEST_F(LimitsTest, ConcurrentPlansAndTheDefaultDeadline) {
  Limits l;
  l.max_concurrent_plans = 1;
  l.plan_default_deadline_s = 1.5;
  Start(l);
  // A long search (many GPU counts) with no client deadline: the server's 1.5 s applies,
  // and it answers a truncated result, not an error.
  v1::PlanRequest big;
  big.set_profile("dgx-h100-80gb");  // 16,384 GPUs
  // 64 GPU counts of DeepSeek-V3: ~6.6 s of search on an idle core (GPT-3 175B's took
  // 1.4 s once the search got faster, too close to the deadline to be truncated surely).
  big.set_model("deepseek-v3");
  for (int g = 256; g <= 64 * 256; g += 256) big.add_gpus(g);
  big.set_global_batch_size(4096);
  grpc::Status first;
  v1::PlanResponse first_resp;
  const absl::Time t0 = absl::Now();
  std::thread t([&] {
    grpc::ClientContext ctx;
    first = v1::Planner::NewStub(channel_)->Plan(&ctx, big, &first_resp);
  });
  absl::SleepFor(absl::Milliseconds(200));
  {
    grpc::ClientContext ctx;
    v1::PlanResponse r;
    grpc::Status s = v1::Planner::NewStub(channel_)->Plan(&ctx, Plan({64}), &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_NE(s.error_message().find("retry"), std::string::npos) << s.error_message();
  }
  t.join();
  EXPECT_TRUE(first.ok()) << first.error_message();
  EXPECT_TRUE(first_resp.truncated());
  EXPECT_LT(absl::Now() - t0, absl::Seconds(4));
  // The slot is free again.
  grpc::ClientContext ctx;
  v1::PlanResponse r;
  EXPECT_TRUE(v1::Planner::NewStub(channel_)->Plan(&ctx, Plan({64}), &r).ok());
}

// Past max_plan_candidates a Plan stops starting new shapes and answers truncated.
TEST_F(LimitsTest, CandidatesPerPlanAreBounded) {
  Limits l;
  l.max_plan_candidates = 1000;
  Start(l);
  grpc::ClientContext ctx;
  v1::PlanResponse r;
  ASSERT_TRUE(v1::Planner::NewStub(channel_)->Plan(&ctx, Plan({1024}), &r).ok());
  EXPECT_TRUE(r.truncated());
  // The GPT-3 1,024-GPU search enumerates ~1 M candidates when not cut; two workers stop
  // after the shape that crosses 1,000 (a shape is at most a few ten thousand).
  EXPECT_GE(r.candidates_enumerated(), 1000);
  EXPECT_LT(r.candidates_enumerated(), 200000);
  EXPECT_GT(r.plans_size(), 0);
}

TEST_F(LimitsTest, WritesAreRateLimitedPerClient) {
  Limits l;
  l.write_rate_per_s = 0.5;
  l.write_burst = 2;
  Start(l);
  EXPECT_TRUE(CreateCopy("a").ok());
  EXPECT_TRUE(CreateCopy("b").ok());
  grpc::Status s = CreateCopy("c");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("retry in"), std::string::npos) << s.error_message();
  // Reads are not limited.
  grpc::ClientContext ctx;
  v1::ListProfilesResponse r;
  EXPECT_TRUE(v1::Profiles::NewStub(channel_)->ListProfiles(&ctx, {}, &r).ok());
}

// A body that is not a valid message: INVALID_ARGUMENT naming the method (gRPC's own
// answer would be INTERNAL with an empty message), and the server goes on serving.
TEST_F(LimitsTest, UnparsableRequestBodyIsInvalidArgument) {
  Start(Limits{});
  grpc::GenericStub generic(channel_);
  const std::string garbage = "\xff\xff\xff\xff\x0f not a protobuf \x01\x02";
  grpc::Slice slice(garbage);
  grpc::ByteBuffer body(&slice, 1);
  grpc::ClientContext ctx;
  grpc::ByteBuffer reply;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  grpc::Status status;
  generic.UnaryCall(&ctx, "/paraplan.v1.Planner/Estimate", grpc::StubOptions(), &body, &reply,
                    [&](grpc::Status s) {
                      std::lock_guard<std::mutex> lock(mu);
                      status = s;
                      done = true;
                      cv.notify_one();
                    });
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return done; }));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("/paraplan.v1.Planner/Estimate"), std::string::npos) << status.error_message();
  grpc::ClientContext c2;
  v1::ListModelsResponse models;
  EXPECT_TRUE(v1::Planner::NewStub(channel_)->ListModels(&c2, {}, &models).ok());
}

TEST(RateLimiter, TokenBucketArithmetic) {
  RateLimiter r(2, 3);  // 2 per second, burst 3
  const absl::Time t = absl::FromUnixSeconds(1000);
  absl::Duration retry;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(r.Allow("a", t, &retry));
  EXPECT_FALSE(r.Allow("a", t, &retry));
  EXPECT_NEAR(absl::ToDoubleSeconds(retry), 0.5, 1e-9);  // one token at 2 per second
  EXPECT_TRUE(r.Allow("b", t, &retry));                   // another client has its own
  EXPECT_TRUE(r.Allow("a", t + absl::Milliseconds(500), &retry));
  EXPECT_FALSE(r.Allow("a", t + absl::Milliseconds(500), &retry));
  EXPECT_EQ(ClientOfPeer("ipv4:10.0.0.7:51234"), "ipv4:10.0.0.7");
  EXPECT_EQ(ClientOfPeer("ipv6:[::1]:5"), "ipv6:[::1]");
  EXPECT_EQ(ClientOfPeer("http:ipv4:10.0.0.7:40000"), "ipv4:10.0.0.7");  // one budget over gRPC and HTTP
  RateLimiter off(0, 0);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(off.Allow("a", t, &retry));
  RateLimiter small(1, 1, 4);  // the map stays bounded
  for (int i = 0; i < 100; ++i) small.Allow("k" + std::to_string(i), t + absl::Seconds(i), &retry);
}

}  // namespace
}  // namespace paraplan::server
