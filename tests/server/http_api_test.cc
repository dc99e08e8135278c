// The HTTP/JSON API (server/http_api.h) through the real server: --http-listen on a
// loopback port, real HTTP/1.1 requests over a socket, answers checked against the
// gRPC answers for the same request (one implementation behind both transports); and
// measurements that name a preset (`model`) instead of inlining the workload, through
// the gRPC stub and through HTTP. Errors, tokens and limits: http_api_errors_test.cc.
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "paraplan/v1/network.grpc.pb.h"
#include "proto/version.h"
#include "server/http_api.h"
#include "tests/server/http_api_fixture.h"

namespace paraplan::server {
namespace {

using ::testing::HasSubstr;

TEST_F(HttpApiTest, PlanAnswersWhatTheGrpcServiceAnswers) {
  ASSERT_GT(port(), 0);
  const Reply r = Post("/v1/plan", ToJson(Llama8bPlan()));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.headers.at("content-type"), "application/json");
  // The contract's snake_case names, zeros printed.
  EXPECT_THAT(r.body, HasSubstr("\"iteration_time_s\":"));
  EXPECT_THAT(r.body, HasSubstr("\"candidates_enumerated\":"));
  EXPECT_THAT(r.body, HasSubstr("\"truncated\":false"));
  const v1::PlanResponse http = FromJson<v1::PlanResponse>(r.body);
  ASSERT_GT(http.plans_size(), 0);
  EXPECT_LE(http.plans_size(), 3);
  EXPECT_EQ(http.plans(0).profile_name(), "dgx-h100-80gb");

  grpc::ClientContext ctx;
  v1::PlanResponse rpc;
  ASSERT_TRUE(planner_->Plan(&ctx, Llama8bPlan(), &rpc).ok());
  ASSERT_EQ(rpc.plans_size(), http.plans_size());
  for (int i = 0; i < rpc.plans_size(); ++i) {
    EXPECT_EQ(ToJson(http.plans(i).config()), ToJson(rpc.plans(i).config())) << i;
    EXPECT_DOUBLE_EQ(http.plans(i).iteration_time_s(), rpc.plans(i).iteration_time_s()) << i;
  }
}

TEST_F(HttpApiTest, EstimateAndBatch) {
  const Reply r = Post("/v1/estimate", ToJson(Gpt3Estimate()));
  ASSERT_EQ(r.status, 200) << r.body;
  const v1::EstimateResponse http = FromJson<v1::EstimateResponse>(r.body);
  v1::EstimateResponse rpc;
  ASSERT_TRUE(Estimate(Gpt3Estimate(), &rpc).ok());
  EXPECT_GT(http.estimate().iteration_time_s(), 0);
  EXPECT_DOUBLE_EQ(http.estimate().iteration_time_s(), rpc.estimate().iteration_time_s());

  v1::EstimateBatchRequest batch;
  *batch.add_requests() = Gpt3Estimate();
  v1::EstimateRequest bad = Gpt3Estimate();
  bad.set_profile("no-such-profile");
  *batch.add_requests() = bad;
  const Reply b = Post("/v1/estimate:batch", ToJson(batch));
  ASSERT_EQ(b.status, 200) << b.body;
  const v1::EstimateBatchResponse results = FromJson<v1::EstimateBatchResponse>(b.body);
  ASSERT_EQ(results.results_size(), 2);
  EXPECT_DOUBLE_EQ(results.results(0).estimate().iteration_time_s(), rpc.estimate().iteration_time_s());
  EXPECT_EQ(results.results(1).error().code(), static_cast<int>(grpc::StatusCode::NOT_FOUND));
}

// A long batch is printed element by element (protobuf's printer would build a tree of
// the whole answer first: 220 MB for 10,000 estimates): the same JSON, byte for byte, as
// the same results printed whole.
TEST_F(HttpApiTest, LongBatchPrintsTheSameJsonElementByElement) {
  v1::EstimateBatchRequest small;
  for (int i = 0; i < 2; ++i) *small.add_requests() = Gpt3Estimate();
  v1::EstimateBatchRequest bad = small;
  bad.mutable_requests(1)->set_profile("no-such-profile");
  v1::EstimateBatchRequest large;
  for (int i = 0; i < 100; ++i) *large.add_requests() = bad.requests(i % 2);
  const Reply few = Post("/v1/estimate:batch", ToJson(bad));
  const Reply many = Post("/v1/estimate:batch", ToJson(large));
  ASSERT_EQ(few.status, 200) << few.body;
  ASSERT_EQ(many.status, 200) << many.body;
  // {"results":[A,B]} printed whole; the long one must be {"results":[A,B,A,B,...]}.
  const std::string prefix = "{\"results\":[";
  ASSERT_EQ(few.body.rfind(prefix, 0), 0u) << few.body.substr(0, 40);
  const std::string pair = few.body.substr(prefix.size(), few.body.size() - prefix.size() - 3);  // "]}\n"
  std::string expected = prefix;
  for (int i = 0; i < 50; ++i) absl::StrAppend(&expected, i > 0 ? "," : "", pair);
  absl::StrAppend(&expected, "]}\n");
  EXPECT_EQ(many.body, expected);
}

// profile_override: the request's own profile for that request only, through HTTP and
// gRPC; validated like a put; the stored versions stay as they are.
TEST_F(HttpApiTest, ProfileOverrideIsUsedForOneRequestAndNotStored) {
  v1::GetProfileRequest get;
  get.set_name("dgx-a100-80gb");
  v1::SystemProfile stored;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(profiles_->GetProfile(&ctx, get, &stored).ok());
  }
  ASSERT_EQ(stored.network_levels_size(), 2);
  v1::EstimateResponse base;
  ASSERT_TRUE(Estimate(Gpt3Estimate(), &base).ok());

  // Twice the inter-node bandwidth: the data-parallel all-reduce takes about half as long.
  v1::EstimateRequest req = Gpt3Estimate();
  *req.mutable_profile_override() = stored;
  req.mutable_profile_override()->mutable_network_levels(1)->set_bandwidth_gbytes_per_s(
      2 * stored.network_levels(1).bandwidth_gbytes_per_s());
  const Reply r = Post("/v1/estimate", ToJson(req));
  ASSERT_EQ(r.status, 200) << r.body;
  const v1::Estimate e = FromJson<v1::EstimateResponse>(r.body).estimate();
  EXPECT_NEAR(e.time().dp_comm_s() / base.estimate().time().dp_comm_s(), 0.5, 0.01);
  EXPECT_EQ(e.profile_name(), "dgx-a100-80gb");
  EXPECT_EQ(e.profile_version(), stored.version());
  EXPECT_THAT(e.warnings(), ::testing::Contains(absl::StrCat(
                                "profile_override: dgx-a100-80gb@", stored.version(),
                                " as changed for this request only, not stored: "
                                "network_levels[1].bandwidth_gbytes_per_s 25 -> 50")));
  v1::EstimateResponse rpc;
  ASSERT_TRUE(Estimate(req, &rpc).ok());
  EXPECT_DOUBLE_EQ(rpc.estimate().iteration_time_s(), e.iteration_time_s());

  // Plans: each carries the warning.
  v1::PlanRequest plan = Llama8bPlan();
  plan.set_profile("dgx-a100-80gb");
  *plan.mutable_profile_override() = stored;
  plan.mutable_profile_override()->mutable_accelerator()->set_memory_gib(40);
  const Reply pr = Post("/v1/plan", ToJson(plan));
  ASSERT_EQ(pr.status, 200) << pr.body;
  const v1::PlanResponse planned = FromJson<v1::PlanResponse>(pr.body);
  ASSERT_GT(planned.plans_size(), 0);
  for (const v1::Estimate& p : planned.plans()) {
    EXPECT_EQ(p.memory().capacity_bytes(), 40.0 * (1 << 30));
    EXPECT_THAT(p.warnings(), ::testing::Contains(HasSubstr("accelerator.memory_gib 80 -> 40")));
  }

  // Refused like a put, naming the field; and a profile that is not the one named.
  struct Case {
    std::function<void(v1::EstimateRequest*)> change;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {[](v1::EstimateRequest* q) { q->mutable_profile_override()->set_gpus_per_node(0); },
            "profile_override.gpus_per_node"},
           {[](v1::EstimateRequest* q) {
              q->mutable_profile_override()->mutable_accelerator()->set_memory_gib(std::nan(""));
            },
            "profile_override.accelerator.memory_gib: must be a finite number"},
           {[](v1::EstimateRequest* q) { q->mutable_profile_override()->clear_network_levels(); },
            "profile_override.network_levels: must have at least one level"},
           {[](v1::EstimateRequest* q) { q->mutable_profile_override()->set_name("dgx-h100-80gb"); },
            "profile_override.name: \"dgx-h100-80gb\" is not the profile the request names (\"dgx-a100-80gb\")"},
           {[](v1::EstimateRequest* q) {
              q->clear_profile();
              q->mutable_profile_override()->clear_name();
            },
            "profile_override.name: missing"},
           {[](v1::EstimateRequest* q) { q->mutable_profile_override()->set_name("Bad Name"); },
            "profile_override.name"},
       }) {
    v1::EstimateRequest bad = req;
    c.change(&bad);
    v1::EstimateResponse out;
    const grpc::Status s = Estimate(bad, &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.message;
    EXPECT_THAT(s.error_message(), HasSubstr(c.message));
    if (c.message.find("nan") == std::string::npos && c.message.find("finite") == std::string::npos) {
      const Reply http = Post("/v1/estimate", ToJson(bad));
      EXPECT_EQ(http.status, 400) << http.body;
      EXPECT_THAT(ErrorOf(http).message, HasSubstr(c.message));
    }
  }

  // A profile of a name that is not stored is used as given, said so, version 0.
  v1::EstimateRequest own = req;
  own.clear_profile();
  own.mutable_profile_override()->set_name("what-if-cluster");
  own.mutable_profile_override()->set_version(0);
  v1::EstimateResponse out;
  ASSERT_TRUE(Estimate(own, &out).ok());
  EXPECT_EQ(out.estimate().profile_name(), "what-if-cluster");
  EXPECT_EQ(out.estimate().profile_version(), 0);
  EXPECT_THAT(out.estimate().warnings(), ::testing::Contains(HasSubstr("\"what-if-cluster\" is not a stored")));

  // Nothing was stored.
  v1::ListProfileVersionsRequest history;
  history.set_name("dgx-a100-80gb");
  v1::ListProfileVersionsResponse versions;
  grpc::ClientContext ctx;
  ASSERT_TRUE(profiles_->ListProfileVersions(&ctx, history, &versions).ok());
  ASSERT_EQ(versions.versions_size(), 1);
  EXPECT_EQ(versions.versions(0).network_levels(1).bandwidth_gbytes_per_s(), 25);
  EXPECT_EQ(Get("/v1/profiles/what-if-cluster").status, 404);
}

TEST_F(HttpApiTest, VersionNamesTheBuildAndItsApi) {
  const Reply r = Get("/v1/version");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto v = FromJson<v1::GetVersionResponse>(r.body);
  EXPECT_EQ(v.server_version(), kVersion);
  EXPECT_EQ(v.api_version(), "paraplan.v1");
  EXPECT_EQ(v.api_fingerprint(), ApiFingerprint());
  EXPECT_EQ(v.api_fingerprint().size(), 16u);
  EXPECT_EQ(v.grpc_version(), grpc::Version());
  EXPECT_EQ(v.protobuf_version(), "3.21.12");
  EXPECT_EQ(Get("/v1/version?x=1").status, 400);
}

TEST_F(HttpApiTest, IngestThenReadTheProfileAndItsAccuracy) {
  EXPECT_EQ(AccuracyCount("dgx-h100-80gb"), 0);
  v1::IngestMeasurementsRequest req;
  *req.add_measurements() = PresetMeasurement("http-1");
  const Reply r = Post("/v1/measurements:ingest", ToJson(req));
  ASSERT_EQ(r.status, 200) << r.body;
  const v1::IngestMeasurementsResponse resp = FromJson<v1::IngestMeasurementsResponse>(r.body);
  EXPECT_EQ(resp.accepted(), 1) << r.body;
  EXPECT_GT(resp.results(0).predicted_iteration_time_s(), 0);
  EXPECT_EQ(AccuracyCount("dgx-h100-80gb"), 1);
  // The same id again is a duplicate, not a second measurement.
  EXPECT_EQ(FromJson<v1::IngestMeasurementsResponse>(Post("/v1/measurements:ingest", ToJson(req)).body).duplicates(), 1);
  EXPECT_EQ(AccuracyCount("dgx-h100-80gb"), 1);

  const Reply p = Get("/v1/profiles/dgx-h100-80gb");
  ASSERT_EQ(p.status, 200) << p.body;
  EXPECT_EQ(FromJson<v1::SystemProfile>(p.body).name(), "dgx-h100-80gb");
  for (const char* ref : {"dgx-h100-80gb@1", "dgx-h100-80gb%401"}) {
    const Reply v = Get(std::string("/v1/profiles/") + ref);
    ASSERT_EQ(v.status, 200) << ref << v.body;
    EXPECT_EQ(FromJson<v1::SystemProfile>(v.body).version(), 1) << ref;
  }
  const Reply versions = Get("/v1/profiles/dgx-h100-80gb/versions");
  ASSERT_EQ(versions.status, 200) << versions.body;
  EXPECT_EQ(FromJson<v1::ListProfileVersionsResponse>(versions.body).versions_size(), 1);

  const Reply list = Get("/v1/profiles?page_size=1");
  ASSERT_EQ(list.status, 200) << list.body;
  const v1::ListProfilesResponse page = FromJson<v1::ListProfilesResponse>(list.body);
  EXPECT_EQ(page.profiles_size(), 1);
  EXPECT_FALSE(page.next_page_token().empty());

  const Reply models = Get("/v1/models");
  ASSERT_EQ(models.status, 200);
  EXPECT_GT(FromJson<v1::ListModelsResponse>(models.body).models_size(), 5);

  // A profile checked as a write would be, nothing stored: as given when it stands, 400
  // naming the field when it does not.
  v1::CheckProfileRequest check;
  *check.mutable_profile() = FromJson<v1::SystemProfile>(p.body);
  check.mutable_profile()->mutable_storage()->set_shared_fs_joules_per_gbyte(30);
  const Reply fine = Post("/v1/profiles:check", ToJson(check));
  ASSERT_EQ(fine.status, 200) << fine.body;
  EXPECT_EQ(FromJson<v1::SystemProfile>(fine.body).storage().shared_fs_joules_per_gbyte(), 30);
  check.mutable_profile()->mutable_storage()->set_shared_fs_joules_per_gbyte(-1);
  const Reply bad = Post("/v1/profiles:check", ToJson(check));
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_THAT(bad.body, HasSubstr("profile.storage.shared_fs_joules_per_gbyte"));
  EXPECT_EQ(FromJson<v1::ListProfileVersionsResponse>(Get("/v1/profiles/dgx-h100-80gb/versions").body).versions_size(),
            1);
}

// A calibration started over HTTP runs as an operation that GET follows to its end:
// here a profile without measurements, whose calibration fails and says why.
TEST_F(HttpApiTest, CalibrationOperationsStartAndAreFollowed) {
  v1::CalibrateRequest req;
  req.set_profile("dgx-h100-80gb");
  const Reply started = Post("/v1/calibrations", ToJson(req));
  ASSERT_EQ(started.status, 200) << started.body;
  v1::CalibrationOperation op = FromJson<v1::CalibrationOperation>(started.body);
  ASSERT_FALSE(op.id().empty()) << started.body;
  EXPECT_EQ(op.profile(), "dgx-h100-80gb");
  for (int i = 0; i < 200 && op.state() != v1::CalibrationOperation::STATE_FAILED; ++i) {
    const Reply r = Get("/v1/calibrations/" + op.id());
    ASSERT_EQ(r.status, 200) << r.body;
    op = FromJson<v1::CalibrationOperation>(r.body);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(op.state(), v1::CalibrationOperation::STATE_FAILED);
  EXPECT_EQ(op.error().code(), static_cast<int>(grpc::StatusCode::FAILED_PRECONDITION));
  EXPECT_THAT(op.error().message(), HasSubstr("needs at least 5 measurements"));
  EXPECT_GT(op.finished_at_unix_ms(), 0);
  EXPECT_EQ(Get("/v1/calibrations/cal-0000000000000000").status, 404);
  req.set_profile("no-such-profile");
  EXPECT_EQ(Post("/v1/calibrations", ToJson(req)).status, 404);
}

// A measurement may name a preset instead of inlining the workload: the server stores
// the preset's workload, and predicts exactly what it predicts for the inline form.
TEST_F(HttpApiTest, MeasurementNamingAPresetThroughGrpc) {
  v1::Measurement inline_form = PresetMeasurement("inline");
  inline_form.clear_model();
  {
    grpc::ClientContext ctx;
    v1::ListModelsResponse models;
    ASSERT_TRUE(planner_->ListModels(&ctx, v1::ListModelsRequest(), &models).ok());
    for (const v1::Workload& w : models.models()) {
      if (w.name() == "llama3-8b") *inline_form.mutable_workload() = w;
    }
    ASSERT_TRUE(inline_form.has_workload());
  }
  const v1::IngestMeasurementsResponse r = Ingest({PresetMeasurement("preset"), inline_form});
  ASSERT_EQ(r.accepted(), 2) << r.DebugString();
  EXPECT_DOUBLE_EQ(r.results(0).predicted_iteration_time_s(), r.results(1).predicted_iteration_time_s());

  v1::Measurement unknown = PresetMeasurement("unknown-model");
  unknown.set_model("llama9-1t");
  const v1::IngestMeasurementsResponse u = Ingest({unknown});
  ASSERT_EQ(u.rejected(), 1);
  EXPECT_THAT(u.results(0).reason(), HasSubstr("model"));
  EXPECT_THAT(u.results(0).reason(), HasSubstr("llama9-1t"));
  EXPECT_THAT(u.results(0).reason(), HasSubstr("llama3-8b"));  // the presets are listed

  v1::Measurement neither = PresetMeasurement("neither");
  neither.clear_model();
  const v1::IngestMeasurementsResponse n = Ingest({neither});
  ASSERT_EQ(n.rejected(), 1);
  EXPECT_THAT(n.results(0).reason(), HasSubstr("workload"));

  // Calibration reads the stored workload: the preset measurement counts like the other.
  grpc::ClientContext ctx;
  v1::GetAccuracyRequest acc;
  acc.set_profile("dgx-h100-80gb");
  v1::AccuracyReport report;
  ASSERT_TRUE(measurements_->GetAccuracy(&ctx, acc, &report).ok());
  EXPECT_EQ(report.overall().count(), 2);
}

TEST_F(HttpApiTest, MeasurementNamingAnUnknownPresetThroughHttp) {
  const std::string body =
      R"({"measurements": [{"id": "m1", "profile": "dgx-h100-80gb", "model": "no-such-model",)"
      R"( "config": {"data_parallel": 8}, "iteration_time_s": 1.5}]})";
  const Reply r = Post("/v1/measurements:ingest", body);
  ASSERT_EQ(r.status, 200) << r.body;
  const v1::IngestMeasurementsResponse resp = FromJson<v1::IngestMeasurementsResponse>(r.body);
  ASSERT_EQ(resp.rejected(), 1);
  EXPECT_THAT(resp.results(0).reason(), HasSubstr("model: unknown preset \"no-such-model\"; presets: "));
  EXPECT_EQ(AccuracyCount("dgx-h100-80gb"), 0);
}

// The Network service on the HTTP port: a codesign over two built-in designs answers
// what the gRPC call answers; a bad one is 400 naming the field; simulate answers like
// the RPC (501 where the server was built without SimGrid, as the RPC's UNIMPLEMENTED).
TEST_F(HttpApiTest, CodesignAndSimulateAnswerWhatTheGrpcServiceAnswers) {
  v1::CodesignRequest codesign;
  codesign.add_designs("dgx-a100-80gb");
  codesign.add_designs("dgx-h100-80gb");
  codesign.set_gpus(16);
  v1::CodesignWorkload* w = codesign.add_workloads();
  w->set_model("llama3-8b");
  w->set_global_batch_size(256);
  const std::unique_ptr<v1::Network::Stub> network = v1::Network::NewStub(channel_);
  const Reply r = Post("/v1/codesign", ToJson(codesign));
  ASSERT_EQ(r.status, 200) << r.body;
  const v1::CodesignResponse http = FromJson<v1::CodesignResponse>(r.body);
  grpc::ClientContext ctx;
  v1::CodesignResponse rpc;
  ASSERT_TRUE(network->Codesign(&ctx, codesign, &rpc).ok());
  ASSERT_EQ(http.designs_size(), 2);
  ASSERT_EQ(rpc.designs_size(), 2);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(http.designs(i).profile(), rpc.designs(i).profile()) << i;
    EXPECT_EQ(http.designs(i).rank(), rpc.designs(i).rank()) << i;
    EXPECT_DOUBLE_EQ(http.designs(i).weighted_time_s(), rpc.designs(i).weighted_time_s()) << i;
  }
  EXPECT_EQ(http.best_by_time(), rpc.best_by_time());
  EXPECT_FALSE(http.best_by_time().empty());

  codesign.mutable_workloads(0)->set_weight(-1);
  const Reply bad = Post("/v1/codesign", ToJson(codesign));
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_EQ(ErrorOf(bad).code, "INVALID_ARGUMENT");
  EXPECT_THAT(ErrorOf(bad).message, HasSubstr("weight"));

  v1::SimulateRequest simulate;
  simulate.set_profile("dgx-a100-80gb");
  simulate.set_model("llama3-8b");
  v1::ParallelConfig* c = simulate.mutable_config();
  c->set_tensor_parallel(8);
  c->set_data_parallel(2);
  c->set_micro_batch_size(1);
  c->set_global_batch_size(16);
  const Reply sim = Post("/v1/simulate", ToJson(simulate));
  grpc::ClientContext sctx;
  v1::SimulateResponse sim_rpc;
  const grpc::Status s = network->Simulate(&sctx, simulate, &sim_rpc);
  if (s.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
    EXPECT_EQ(sim.status, 501) << sim.body;
    GTEST_SKIP() << "server built without SimGrid: " << s.error_message();
  }
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(sim.status, 200) << sim.body;
  const v1::SimulateResponse sim_http = FromJson<v1::SimulateResponse>(sim.body);
  EXPECT_DOUBLE_EQ(sim_http.analytic_iteration_time_s(), sim_rpc.analytic_iteration_time_s());
  EXPECT_GT(sim_http.simulated_iteration_time_s(), 0);
  EXPECT_EQ(sim_http.collectives_size(), sim_rpc.collectives_size());

  simulate.mutable_config()->set_tensor_parallel(7);
  const Reply sim_bad = Post("/v1/simulate", ToJson(simulate));
  EXPECT_EQ(sim_bad.status, 400) << sim_bad.body;
  EXPECT_THAT(ErrorOf(sim_bad).message, HasSubstr("tensor_parallel"));
}

}  // namespace
}  // namespace paraplan::server
