// Integration tests of the service around the RPCs against the real server in-process
// (fixture.h): health and reflection, shutdown with watchers and requests in flight, and
// random malformed requests that must never crash it.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "paraplan/v1/services.grpc.pb.h"
#include "server/server.h"
#include "tests/server/fixture.h"

namespace paraplan::server {
namespace {

TEST_F(ServerTest, HealthAndReflection) {
  auto health = grpc::health::v1::Health::NewStub(channel_);
  for (const char* service : {"", "paraplan.v1.Planner", "paraplan.v1.Profiles", "paraplan.v1.Measurements"}) {
    grpc::ClientContext ctx;
    grpc::health::v1::HealthCheckRequest req;
    req.set_service(service);
    grpc::health::v1::HealthCheckResponse r;
    ASSERT_TRUE(health->Check(&ctx, req, &r).ok()) << service;
    EXPECT_EQ(r.status(), grpc::health::v1::HealthCheckResponse::SERVING);
  }
  auto reflection = grpc::reflection::v1alpha::ServerReflection::NewStub(channel_);
  grpc::ClientContext ctx;
  auto stream = reflection->ServerReflectionInfo(&ctx);
  grpc::reflection::v1alpha::ServerReflectionRequest req;
  req.set_list_services("");
  ASSERT_TRUE(stream->Write(req));
  grpc::reflection::v1alpha::ServerReflectionResponse resp;
  ASSERT_TRUE(stream->Read(&resp));
  stream->WritesDone();
  // The stream ends as the reflection service ends it, OK (it used to end
  // INVALID_ARGUMENT: the client's end of stream was taken for a bad request body).
  const grpc::Status end = stream->Finish();
  EXPECT_TRUE(end.ok()) << end.error_code() << " " << end.error_message();
  std::vector<std::string> names;
  for (const auto& s : resp.list_services_response().service()) names.push_back(s.name());
  EXPECT_THAT(names, ::testing::IsSupersetOf({"paraplan.v1.Planner", "paraplan.v1.Profiles",
                                              "paraplan.v1.Measurements", "grpc.health.v1.Health"}));
}

TEST_F(ServerTest, ShutdownTurnsHealthNotServingAndDoesNotWaitForWatchers) {
  auto health = grpc::health::v1::Health::NewStub(channel_);
  grpc::ClientContext ctx;
  grpc::health::v1::HealthCheckRequest req;
  auto watch = health->Watch(&ctx, req);
  grpc::health::v1::HealthCheckResponse r;
  ASSERT_TRUE(watch->Read(&r));
  EXPECT_EQ(r.status(), grpc::health::v1::HealthCheckResponse::SERVING);
  const auto start = std::chrono::steady_clock::now();
  std::thread stop([&] { server_->Shutdown(absl::Seconds(10)); });
  std::vector<int> seen;
  while (watch->Read(&r)) seen.push_back(r.status());
  stop.join();
  EXPECT_THAT(seen, ::testing::Contains(grpc::health::v1::HealthCheckResponse::NOT_SERVING));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(ServerTest, RandomMalformedRequestsNeverCrash) {
  std::mt19937 rng(7);
  auto random_bytes = [&](size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    return s;
  };
  const v1::SystemProfile base = Profile("dgx-a100-80gb");
  int answered = 0;
  for (int i = 0; i < 400; ++i) {
    grpc::ClientContext ctx;
    switch (i % 8) {
      case 0: {  // random wire bytes parsed into a request
        v1::EstimateRequest req;
        (void)req.ParseFromString(random_bytes(rng() % 200));
        v1::EstimateResponse r;
        planner_->Estimate(&ctx, req, &r);
        break;
      }
      case 1: {  // a valid shape with random field values
        v1::EstimateRequest req = Gpt3Estimate();
        v1::ParallelConfig* c = req.mutable_config();
        c->set_tensor_parallel(static_cast<int>(rng()));
        c->set_pipeline_parallel(static_cast<int>(rng() % 300) - 100);
        c->set_micro_batch_size(static_cast<int>(rng()));
        c->set_zero_stage(static_cast<int>(rng() % 7) - 2);
        c->set_virtual_pipeline_stages(static_cast<int>(rng() % 5));
        c->set_context_parallel(static_cast<int>(rng() % 5));
        v1::EstimateResponse r;
        planner_->Estimate(&ctx, req, &r);
        break;
      }
      case 2: {
        v1::PlanRequest req;
        (void)req.ParseFromString(random_bytes(rng() % 100));
        req.set_profile("dgx-a100-80gb");
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
        v1::PlanResponse r;
        planner_->Plan(&ctx, req, &r);
        break;
      }
      case 3: {
        v1::IngestMeasurementsRequest req;
        (void)req.ParseFromString(random_bytes(rng() % 300));
        v1::IngestMeasurementsResponse r;
        measurements_->IngestMeasurements(&ctx, req, &r);
        break;
      }
      case 4: {  // a real profile with one random field, created or updated
        v1::UpdateProfileRequest req;
        *req.mutable_profile() = base;
        req.mutable_profile()->set_name("fuzz-" + std::to_string(rng() % 5));
        req.set_create_if_missing(true);
        v1::SystemProfile* p = req.mutable_profile();
        switch (rng() % 6) {
          case 0: p->set_gpus_per_node(static_cast<int>(rng())); break;
          case 1: p->mutable_accelerator()->set_memory_gib(static_cast<double>(static_cast<int>(rng())) / 7); break;
          case 2: p->mutable_network_levels(0)->set_domain_size(static_cast<int>(rng())); break;
          case 3: p->mutable_calibration()->set_matmul_efficiency(std::nan("")); break;
          case 4: p->clear_network_levels(); break;
          default: (void)p->MergeFromString(random_bytes(rng() % 100)); break;
        }
        v1::SystemProfile r;
        profiles_->UpdateProfile(&ctx, req, &r);
        break;
      }
      case 5: {
        v1::GetAccuracyRequest req;
        (void)req.ParseFromString(random_bytes(rng() % 60));
        v1::AccuracyReport r;
        measurements_->GetAccuracy(&ctx, req, &r);
        break;
      }
      case 6: {
        v1::EstimateBatchRequest req;
        (void)req.ParseFromString(random_bytes(rng() % 400));
        v1::EstimateBatchResponse r;
        planner_->EstimateBatch(&ctx, req, &r);
        break;
      }
      default: {  // random printable references (invalid UTF-8 would fail client-side)
        v1::GetProfileRequest req;
        std::string name = random_bytes(rng() % 40);
        for (char& c : name) c = static_cast<char>(' ' + static_cast<unsigned char>(c) % 95);
        req.set_name(name);
        v1::SystemProfile r;
        profiles_->GetProfile(&ctx, req, &r);
        break;
      }
    }
    ++answered;
  }
  EXPECT_EQ(answered, 400);
  {  // a profile that passed validation estimates or fails cleanly
    grpc::ClientContext ctx;
    v1::ListProfilesResponse r;
    ASSERT_TRUE(profiles_->ListProfiles(&ctx, v1::ListProfilesRequest(), &r).ok());
    for (const v1::SystemProfile& p : r.profiles()) {
      v1::EstimateRequest req = Gpt3Estimate();
      req.set_profile(p.name());
      v1::EstimateResponse e;
      grpc::Status s = Estimate(req, &e);
      EXPECT_NE(s.error_code(), grpc::StatusCode::INTERNAL) << p.name() << ": " << s.error_message();
    }
  }
  v1::EstimateResponse r;
  EXPECT_TRUE(Estimate(Gpt3Estimate(), &r).ok());
  EXPECT_TRUE(server_->CheckIntegrity().ok());
}

TEST_F(ServerTest, ShutdownLetsInFlightRequestsFinish) {
  v1::PlanRequest req;
  req.set_profile("dgx-a100-80gb");
  req.set_model("gpt3-175b");
  req.add_gpus(4096);
  req.add_gpus(2048);
  req.add_gpus(1024);
  req.set_global_batch_size(1536);
  grpc::Status status;
  v1::PlanResponse resp;
  std::thread client([&] {
    grpc::ClientContext ctx;
    status = planner_->Plan(&ctx, req, &resp);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  server_->Shutdown(absl::Seconds(10));
  client.join();
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(resp.truncated());
  EXPECT_GT(resp.plans_size(), 0);
  EXPECT_TRUE(server_->CheckIntegrity().ok());
}

}  // namespace
}  // namespace paraplan::server
