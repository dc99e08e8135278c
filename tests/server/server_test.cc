// Integration tests of every RPC against the real server in-process (fixture.h).
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "estimator/catalog/presets.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "gtest/gtest.h"
#include "paraplan/v1/services.grpc.pb.h"
#include "google/rpc/error_details.pb.h"
#include "server/metrics.h"
#include "server/rich_status.h"
#include "server/server.h"
#include "tests/server/fixture.h"

namespace paraplan::server {
namespace {

// GPT-3 175B as a workload (the preset's shape), for fields a preset cannot carry.
v1::Workload Gpt3Workload() {
  v1::Workload w;
  w.set_name("gpt3-175b");
  v1::TransformerSpec* t = w.mutable_transformer();
  t->set_num_layers(96);
  t->set_hidden_size(12288);
  t->set_num_attention_heads(96);
  t->set_seq_length(2048);
  t->set_vocab_size(51200);
  return w;
}

using ::testing::HasSubstr;
using ::testing::Not;

TEST_F(ServerTest, EstimateReturnsTheFullBreakdown) {
  v1::EstimateResponse r;
  ASSERT_TRUE(Estimate(Gpt3Estimate(), &r).ok());
  const v1::Estimate& e = r.estimate();
  const v1::TimeBreakdown& t = e.time();
  const double sum = t.compute_s() + t.recompute_s() + t.tp_comm_s() + t.spatial_comm_s() + t.cp_comm_s() +
                     t.ep_comm_s() + t.pp_comm_s() + t.pipeline_bubble_s() + t.dp_comm_s() + t.optimizer_s() +
                     t.data_loading_s() + t.overhead_s() + t.offload_s();
  EXPECT_NEAR(sum, e.iteration_time_s(), 1e-9 * e.iteration_time_s());
  EXPECT_GT(e.iteration_time_s(), 0);
  EXPECT_TRUE(e.memory().fits());
  EXPECT_EQ(e.profile_name(), "dgx-a100-80gb");
  EXPECT_EQ(e.profile_version(), 1);
  EXPECT_EQ(e.num_gpus(), 1024);
  EXPECT_GT(e.mfu(), 0.2);
  EXPECT_FALSE(e.bottleneck().empty());
}

TEST_F(ServerTest, BadInputsNameTheField) {
  struct Case {
    std::function<void(v1::EstimateRequest*)> mutate;
    grpc::StatusCode code;
    std::string field;
  } cases[] = {
      {[](v1::EstimateRequest* r) { r->clear_model(); }, grpc::StatusCode::INVALID_ARGUMENT, "workload"},
      {[](v1::EstimateRequest* r) { r->clear_config(); }, grpc::StatusCode::INVALID_ARGUMENT, "config"},
      {[](v1::EstimateRequest* r) { r->mutable_config()->set_tensor_parallel(7); },
       grpc::StatusCode::INVALID_ARGUMENT, "config.tensor_parallel"},
      {[](v1::EstimateRequest* r) { r->mutable_config()->set_data_parallel(-2); },
       grpc::StatusCode::INVALID_ARGUMENT, "config.data_parallel"},
      {[](v1::EstimateRequest* r) { r->mutable_config()->set_global_batch_size(0); },
       grpc::StatusCode::INVALID_ARGUMENT, "config.global_batch_size"},
      {[](v1::EstimateRequest* r) { r->mutable_config()->set_recompute(static_cast<v1::Recompute>(42)); },
       grpc::StatusCode::INVALID_ARGUMENT, "config.recompute"},
      {[](v1::EstimateRequest* r) { r->mutable_config()->set_rank_order("dp-tp"); },
       grpc::StatusCode::INVALID_ARGUMENT, "config.rank_order"},
      {[](v1::EstimateRequest* r) {
         r->mutable_config()->set_recompute(v1::RECOMPUTE_SELECTIVE);
         r->mutable_config()->add_recompute_modules("core_attn");
         r->mutable_config()->add_recompute_modules("everything");
       },
       grpc::StatusCode::INVALID_ARGUMENT, "config.recompute_modules[1]: \"everything\" is not"},
      {[](v1::EstimateRequest* r) {
         r->clear_model();
         v1::Layer* l = r->mutable_workload()->mutable_layer_graph()->add_layers();
         l->set_name("cell");
         l->set_kind("lstm");
       },
       grpc::StatusCode::INVALID_ARGUMENT,
       "workload.layer_graph.layers[0].kind: \"lstm\" is not one of conv, pool, norm, relu, activation, dropout, "
       "add, concat, flatten, fc, softmax"},
      {[](v1::EstimateRequest* r) { r->mutable_config()->add_offload_modules("all"); },
       grpc::StatusCode::INVALID_ARGUMENT,
       "config.offload_modules[0]: \"all\" is not one of attn_norm, qkv_linear, core_attn, attn_proj, mlp_norm, "
       "expert_fc1, moe_act"},
      {[](v1::EstimateRequest* r) { r->mutable_config()->add_offload_modules("moe_act"); },  // GPT-3 has no experts
       grpc::StatusCode::INVALID_ARGUMENT, "config.offload_modules: expert_fc1 and moe_act need a mixture-of-experts"},
      {[](v1::EstimateRequest* r) { r->set_framework(v1::FRAMEWORK_PYTORCH_FSDP); },
       grpc::StatusCode::INVALID_ARGUMENT, "config.tensor_parallel: runs data parallelism only"},
      {[](v1::EstimateRequest* r) { r->set_framework(static_cast<v1::Framework>(9)); },
       grpc::StatusCode::INVALID_ARGUMENT, "framework: 9 is not a known value"},
      {[](v1::EstimateRequest* r) { r->mutable_config()->set_moe_dispatcher(static_cast<v1::MoeDispatcher>(7)); },
       grpc::StatusCode::INVALID_ARGUMENT, "config.moe_dispatcher"},
      {[](v1::EstimateRequest* r) { r->mutable_config()->set_expert_tensor_parallel(2); },
       grpc::StatusCode::INVALID_ARGUMENT, "config.expert_tensor_parallel"},  // GPT-3 has no experts
      {[](v1::EstimateRequest* r) {  // the A100 has no FP4 tensor cores
         r->clear_model();
         *r->mutable_workload() = Gpt3Workload();
         r->mutable_workload()->set_precision(v1::PRECISION_FP4);
       },
       grpc::StatusCode::INVALID_ARGUMENT, "workload.precision: PRECISION_FP4 needs FP4 tensor cores"},
      {[](v1::EstimateRequest* r) {
         r->clear_model();
         *r->mutable_workload() = Gpt3Workload();
         r->mutable_workload()->set_quant_recipe(v1::QUANT_RECIPE_MXFP8);
       },
       grpc::StatusCode::INVALID_ARGUMENT, "workload.quant_recipe"},
      {[](v1::EstimateRequest* r) { r->set_num_gpus(512); }, grpc::StatusCode::INVALID_ARGUMENT,
       "multiply to 1024 GPUs, not num_gpus 512"},
      {[](v1::EstimateRequest* r) { r->set_profile("nope"); }, grpc::StatusCode::NOT_FOUND, "nope"},
      {[](v1::EstimateRequest* r) { r->set_profile("dgx-a100-80gb@x"); }, grpc::StatusCode::INVALID_ARGUMENT,
       "profile"},
      {[](v1::EstimateRequest* r) { r->set_profile("dgx-a100-80gb@9"); }, grpc::StatusCode::NOT_FOUND, "version 9"},
      {[](v1::EstimateRequest* r) { r->set_model("gpt-9"); }, grpc::StatusCode::INVALID_ARGUMENT, "model"},
      {[](v1::EstimateRequest* r) {
         r->clear_model();
         r->mutable_workload()->mutable_transformer()->set_num_layers(4);
       },
       grpc::StatusCode::INVALID_ARGUMENT, "workload.transformer.hidden_size"},
      {[](v1::EstimateRequest* r) { r->set_model(""); }, grpc::StatusCode::INVALID_ARGUMENT,
       "workload: missing (give workload or model)"},
      {[](v1::EstimateRequest* r) { r->set_profile(""); }, grpc::StatusCode::INVALID_ARGUMENT, "profile"},
      {[](v1::EstimateRequest* r) { r->mutable_config()->set_global_batch_size(1000); },
       grpc::StatusCode::INVALID_ARGUMENT, "config.global_batch_size"},  // not a multiple of dp 16
      {[](v1::EstimateRequest* r) {  // 8 stages x 13 virtual = 104 chunks for 96 layers
         r->mutable_config()->set_virtual_pipeline_stages(13);
         r->mutable_config()->set_pipeline_schedule(v1::SCHEDULE_INTERLEAVED_1F1B);
       },
       grpc::StatusCode::INVALID_ARGUMENT, "exceeds the 96 layers"},
      {[](v1::EstimateRequest* r) { r->mutable_config()->set_context_parallel(3); },
       grpc::StatusCode::INVALID_ARGUMENT, "config.context_parallel"},  // 3 does not divide seq 2048
      {[](v1::EstimateRequest* r) { r->mutable_config()->set_pipeline_schedule(static_cast<v1::PipelineSchedule>(-3)); },
       grpc::StatusCode::INVALID_ARGUMENT, "config.pipeline_schedule"},
      {[](v1::EstimateRequest* r) { r->mutable_config()->set_dp_algorithm(static_cast<v1::CollectiveAlgorithm>(99)); },
       grpc::StatusCode::INVALID_ARGUMENT, "config.dp_algorithm"},
  };
  int with_details = 0;
  for (const Case& c : cases) {
    v1::EstimateRequest req = Gpt3Estimate();
    c.mutate(&req);
    v1::EstimateResponse r;
    grpc::Status s = Estimate(req, &r);
    EXPECT_EQ(s.error_code(), c.code) << c.field << ": " << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr(c.field));
    // google.rpc details: a BadRequest naming the field the message starts with.
    const std::string field = FieldOf(s.error_message());
    if (c.code != grpc::StatusCode::INVALID_ARGUMENT || field.empty()) continue;
    google::rpc::Status rich;
    ASSERT_TRUE(rich.ParseFromString(s.error_details())) << c.field;
    ASSERT_EQ(rich.details_size(), 1) << c.field;
    google::rpc::BadRequest bad;
    ASSERT_TRUE(rich.details(0).UnpackTo(&bad)) << c.field;
    ASSERT_EQ(bad.field_violations_size(), 1);
    EXPECT_EQ(bad.field_violations(0).field(), field);
    EXPECT_EQ(absl::StrCat(field, ": ", bad.field_violations(0).description()), s.error_message());
    EXPECT_EQ(rich.code(), grpc::StatusCode::INVALID_ARGUMENT);
    ++with_details;
  }
  EXPECT_GE(with_details, 20);
}

TEST(RichStatus, FieldOfTheMessage) {
  EXPECT_EQ(FieldOf("config.tensor_parallel: 7 does not divide"), "config.tensor_parallel");
  EXPECT_EQ(FieldOf("measurements[2].id: must be 1 to 200 characters"), "measurements[2].id");
  EXPECT_EQ(FieldOf("workload: missing (give workload or model)"), "workload");
  EXPECT_EQ(FieldOf("the parallel degrees multiply to 1024 GPUs, not num_gpus 512"), "");
  EXPECT_EQ(FieldOf("profile \"nope\" not found: x"), "");
  EXPECT_EQ(FieldOf(": nothing"), "");
  // RESOURCE_EXHAUSTED says when to come back; other codes carry no details.
  google::rpc::Status rich;
  ASSERT_TRUE(rich.ParseFromString(ToGrpc(absl::ResourceExhaustedError("write budget spent")).error_details()));
  google::rpc::RetryInfo retry;
  ASSERT_TRUE(rich.details_size() == 1 && rich.details(0).UnpackTo(&retry));
  EXPECT_EQ(retry.retry_delay().seconds(), 1);
  EXPECT_TRUE(ToGrpc(absl::NotFoundError("x: y")).error_details().empty());
}

TEST_F(ServerTest, BadWorkloadFieldsAreNamed) {
  // The gpt3-175b preset, given explicitly, then broken one field at a time.
  grpc::ClientContext ctx;
  v1::ListModelsResponse models;
  ASSERT_TRUE(planner_->ListModels(&ctx, v1::ListModelsRequest(), &models).ok());
  v1::Workload gpt3;
  for (const v1::Workload& w : models.models()) {
    if (w.name() == "gpt3-175b") gpt3 = w;
  }
  ASSERT_TRUE(gpt3.has_transformer());
  struct Case {
    std::function<void(v1::Workload*)> mutate;
    std::string field;
  } cases[] = {
      {[](v1::Workload* w) { w->mutable_transformer()->set_hidden_size(0); }, "workload.transformer.hidden_size"},
      {[](v1::Workload* w) { w->mutable_transformer()->set_hidden_size(-12288); },
       "workload.transformer.hidden_size"},
      {[](v1::Workload* w) { w->mutable_transformer()->set_num_attention_heads(0); },
       "workload.transformer.num_attention_heads"},
      {[](v1::Workload* w) { w->set_precision(static_cast<v1::Precision>(77)); }, "workload.precision"},
      {[](v1::Workload* w) { w->clear_transformer(); }, "workload"},
  };
  for (const Case& c : cases) {
    v1::EstimateRequest req = Gpt3Estimate();
    req.clear_model();
    *req.mutable_workload() = gpt3;
    v1::EstimateResponse r;
    ASSERT_TRUE(Estimate(req, &r).ok());
    c.mutate(req.mutable_workload());
    grpc::Status s = Estimate(req, &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.field << ": " << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr(c.field));
  }
}

TEST_F(ServerTest, ListModelsReturnsThePresets) {
  grpc::ClientContext ctx;
  v1::ListModelsResponse r;
  ASSERT_TRUE(planner_->ListModels(&ctx, v1::ListModelsRequest(), &r).ok());
  std::vector<std::string> names;
  for (const v1::Workload& w : r.models()) names.push_back(w.name());
  EXPECT_THAT(names, ::testing::IsSupersetOf({"gpt3-175b", "llama3-405b"}));
  for (const v1::Workload& w : r.models()) {
    EXPECT_TRUE(w.has_transformer() || w.has_layer_graph()) << w.name();
  }
}

TEST_F(ServerTest, ProfileErrors) {
  auto get = [&](const std::string& ref) {
    grpc::ClientContext ctx;
    v1::GetProfileRequest req;
    req.set_name(ref);
    v1::SystemProfile p;
    return profiles_->GetProfile(&ctx, req, &p);
  };
  for (const char* bad : {"dgx-a100-80gb@", "dgx-a100-80gb@0", "dgx-a100-80gb@-1", "dgx-a100-80gb@1x", ""}) {
    EXPECT_EQ(get(bad).error_code(), grpc::StatusCode::INVALID_ARGUMENT) << bad;
  }
  EXPECT_EQ(get("no-such-profile").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(get("no-such-profile").error_message(), HasSubstr("no-such-profile"));
  EXPECT_TRUE(get("dgx-a100-80gb@1").ok());

  v1::SystemProfile base = Profile("dgx-a100-80gb");
  EXPECT_GT(base.created_at().seconds(), 1600000000);
  {  // UpdateProfile of a missing profile without create_if_missing
    grpc::ClientContext ctx;
    v1::UpdateProfileRequest req;
    *req.mutable_profile() = base;
    req.mutable_profile()->set_name("not-yet");
    v1::SystemProfile out;
    EXPECT_EQ(profiles_->UpdateProfile(&ctx, req, &out).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  {  // bad topology enum
    grpc::ClientContext ctx;
    v1::CreateProfileRequest req;
    *req.mutable_profile() = base;
    req.mutable_profile()->set_name("bad-topology");
    req.mutable_profile()->mutable_network_levels(1)->set_topology(static_cast<v1::Topology>(42));
    v1::SystemProfile out;
    grpc::Status s = profiles_->CreateProfile(&ctx, req, &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("profile.network_levels[1].topology"));
  }
  for (const std::string& name : {std::string("-lead"), std::string("UPPER"), std::string(64, 'a'),
                                  std::string("sp ace"), std::string("")}) {
    grpc::ClientContext ctx;
    v1::CreateProfileRequest req;
    *req.mutable_profile() = base;
    req.mutable_profile()->set_name(name);
    v1::SystemProfile out;
    grpc::Status s = profiles_->CreateProfile(&ctx, req, &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << name;
    EXPECT_THAT(s.error_message(), HasSubstr("profile.name")) << name;
  }
  {  // Create assigns version 1 and created_at, whatever the caller sent.
    grpc::ClientContext ctx;
    v1::CreateProfileRequest req;
    *req.mutable_profile() = base;
    req.mutable_profile()->set_name("fresh.cluster_1");
    req.mutable_profile()->set_version(17);
    req.mutable_profile()->mutable_created_at()->set_seconds(5);
    v1::SystemProfile out;
    ASSERT_TRUE(profiles_->CreateProfile(&ctx, req, &out).ok());
    EXPECT_EQ(out.version(), 1);
    EXPECT_GT(out.created_at().seconds(), 1600000000);
  }
  {
    grpc::ClientContext ctx;
    v1::DeleteProfileRequest req;
    req.set_name("no-such-profile");
    v1::DeleteProfileResponse r;
    EXPECT_EQ(profiles_->DeleteProfile(&ctx, req, &r).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  {
    grpc::ClientContext ctx;
    v1::ListProfilesRequest req;
    req.set_page_size(-1);
    v1::ListProfilesResponse r;
    EXPECT_EQ(profiles_->ListProfiles(&ctx, req, &r).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  {  // default page size holds every built-in profile
    grpc::ClientContext ctx;
    v1::ListProfilesResponse r;
    ASSERT_TRUE(profiles_->ListProfiles(&ctx, v1::ListProfilesRequest(), &r).ok());
    EXPECT_GE(r.profiles_size(), 3);
    EXPECT_TRUE(r.next_page_token().empty());
  }
}

TEST_F(ServerTest, PlanRejectsBadRequests) {
  v1::PlanRequest good;
  good.set_profile("dgx-a100-80gb");
  good.set_model("gpt3-175b");
  good.add_gpus(64);
  good.set_global_batch_size(64);
  struct Case {
    std::function<void(v1::PlanRequest*)> mutate;
    grpc::StatusCode code;
    std::string field;
  } cases[] = {
      {[](v1::PlanRequest* r) { r->set_global_batch_size(0); }, grpc::StatusCode::INVALID_ARGUMENT,
       "global_batch_size"},
      {[](v1::PlanRequest* r) { r->set_global_batch_size(-8); }, grpc::StatusCode::INVALID_ARGUMENT,
       "global_batch_size"},
      {[](v1::PlanRequest* r) { r->clear_gpus(); }, grpc::StatusCode::INVALID_ARGUMENT, "gpus"},
      {[](v1::PlanRequest* r) { r->set_gpus(0, -4); }, grpc::StatusCode::INVALID_ARGUMENT, "gpus"},
      {[](v1::PlanRequest* r) { r->set_gpus(0, 1 << 30); }, grpc::StatusCode::INVALID_ARGUMENT, "gpus"},
      {[](v1::PlanRequest* r) { r->clear_model(); }, grpc::StatusCode::INVALID_ARGUMENT, "workload"},
      {[](v1::PlanRequest* r) { r->set_objective(static_cast<v1::Objective>(9)); },
       grpc::StatusCode::INVALID_ARGUMENT, "objective"},
      {[](v1::PlanRequest* r) { r->mutable_constraints()->add_recompute(static_cast<v1::Recompute>(12)); },
       grpc::StatusCode::INVALID_ARGUMENT, "constraints.recompute[0]"},
      {[](v1::PlanRequest* r) { r->set_profile("missing-cluster"); }, grpc::StatusCode::NOT_FOUND,
       "missing-cluster"},
  };
  for (const Case& c : cases) {
    v1::PlanRequest req = good;
    c.mutate(&req);
    grpc::ClientContext ctx;
    v1::PlanResponse r;
    grpc::Status s = planner_->Plan(&ctx, req, &r);
    EXPECT_EQ(s.error_code(), c.code) << c.field << ": " << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr(c.field));
  }
  grpc::ClientContext ctx;
  v1::PlanResponse r;
  ASSERT_TRUE(planner_->Plan(&ctx, good, &r).ok());
  EXPECT_GT(r.plans_size(), 0);
  EXPECT_GT(r.search_time_s(), 0);
}

TEST_F(ServerTest, BatchSizeIsCapped) {
  v1::EstimateBatchRequest batch;
  v1::EstimateRequest tiny;
  tiny.set_profile("x");
  for (int i = 0; i < 10001; ++i) *batch.add_requests() = tiny;
  grpc::ClientContext ctx;
  v1::EstimateBatchResponse resp;
  grpc::Status s = planner_->EstimateBatch(&ctx, batch, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("requests"));
}

TEST_F(ServerTest, OversizedRequestIsRejected) {
  v1::EstimateBatchRequest big;
  v1::EstimateRequest r = Gpt3Estimate();
  r.mutable_workload()->set_name(std::string(1 << 20, 'x'));
  for (int i = 0; i < 20; ++i) *big.add_requests() = r;
  grpc::ClientContext ctx;
  v1::EstimateBatchResponse resp;
  EXPECT_EQ(planner_->EstimateBatch(&ctx, big, &resp).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST_F(ServerTest, BatchAnswersEachRequest) {
  v1::EstimateBatchRequest batch;
  *batch.add_requests() = Gpt3Estimate();
  v1::EstimateRequest bad = Gpt3Estimate();
  bad.mutable_config()->set_pipeline_parallel(128);  // 128 stages for 96 layers
  *batch.add_requests() = bad;
  grpc::ClientContext ctx;
  v1::EstimateBatchResponse resp;
  ASSERT_TRUE(planner_->EstimateBatch(&ctx, batch, &resp).ok());
  ASSERT_EQ(resp.results_size(), 2);
  EXPECT_TRUE(resp.results(0).has_estimate());
  EXPECT_EQ(resp.results(1).error().code(), static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_THAT(resp.results(1).error().message(), HasSubstr("config.pipeline_parallel"));
}

TEST_F(ServerTest, PlanRanksAndHonoursDeadline) {
  v1::PlanRequest req;
  req.set_profile("dgx-a100-80gb");
  req.set_model("gpt3-175b");
  req.add_gpus(1024);
  req.set_global_batch_size(1536);
  req.set_top_k(5);
  {
    grpc::ClientContext ctx;
    v1::PlanResponse r;
    ASSERT_TRUE(planner_->Plan(&ctx, req, &r).ok());
    ASSERT_EQ(r.plans_size(), 5);
    for (int i = 1; i < r.plans_size(); ++i) {
      EXPECT_LE(r.plans(i - 1).iteration_time_s(), r.plans(i).iteration_time_s());
    }
    EXPECT_GT(r.candidates_evaluated(), 100000);  // the whole space, less dominated settings
    EXPECT_FALSE(r.truncated());
    EXPECT_GT(r.pareto_size(), 0);
  }
  {
    req.clear_gpus();
    req.add_gpus(4096);
    req.add_gpus(2048);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(40));
    v1::PlanResponse r;
    grpc::Status s = planner_->Plan(&ctx, req, &r);
    // Either the truncated best-so-far arrives in time, or the deadline passes in flight.
    if (s.ok()) EXPECT_TRUE(r.truncated());
    else EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  {
    v1::PlanRequest none = req;
    none.clear_gpus();
    grpc::ClientContext ctx;
    v1::PlanResponse r;
    grpc::Status s = planner_->Plan(&ctx, none, &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("gpus"));
  }
}

TEST_F(ServerTest, ProfilesHaveImmutableVersions) {
  v1::SystemProfile p = Profile("dgx-a100-80gb");
  p.set_name("my-cluster");
  p.mutable_accelerator()->set_memory_gib(40);
  for (int expected = 1; expected <= 2; ++expected) {
    grpc::ClientContext ctx;
    v1::UpdateProfileRequest req;
    *req.mutable_profile() = p;
    req.set_create_if_missing(true);
    v1::SystemProfile out;
    ASSERT_TRUE(profiles_->UpdateProfile(&ctx, req, &out).ok());
    EXPECT_EQ(out.version(), expected);
    p.mutable_accelerator()->set_memory_gib(80);
  }
  EXPECT_EQ(Profile("my-cluster@1").accelerator().memory_gib(), 40);
  EXPECT_EQ(Profile("my-cluster@2").accelerator().memory_gib(), 80);
  EXPECT_EQ(Profile("my-cluster").version(), 2);
  {
    grpc::ClientContext ctx;
    v1::CreateProfileRequest req;
    *req.mutable_profile() = p;
    v1::SystemProfile out;
    EXPECT_EQ(profiles_->CreateProfile(&ctx, req, &out).error_code(), grpc::StatusCode::ALREADY_EXISTS);
  }
  {
    grpc::ClientContext ctx;
    v1::CreateProfileRequest req;
    *req.mutable_profile() = p;
    req.mutable_profile()->set_name("Bad Name");
    v1::SystemProfile out;
    grpc::Status s = profiles_->CreateProfile(&ctx, req, &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("profile.name"));
  }
  {
    grpc::ClientContext ctx;
    v1::CreateProfileRequest req;
    *req.mutable_profile() = p;
    req.mutable_profile()->set_name("other");
    req.mutable_profile()->mutable_network_levels(0)->set_bandwidth_gbytes_per_s(-1);
    v1::SystemProfile out;
    grpc::Status s = profiles_->CreateProfile(&ctx, req, &out);
    EXPECT_THAT(s.error_message(), HasSubstr("profile.network_levels[0].bandwidth_gbytes_per_s"));
  }
  {
    grpc::ClientContext ctx;
    v1::ListProfileVersionsRequest req;
    req.set_name("my-cluster");
    v1::ListProfileVersionsResponse r;
    ASSERT_TRUE(profiles_->ListProfileVersions(&ctx, req, &r).ok());
    EXPECT_EQ(r.versions_size(), 2);
  }
  {
    // Pagination: page size 2 over the built-in profiles and my-cluster, each once.
    const size_t total = BuiltinProfiles().size() + 1;
    v1::ListProfilesRequest req;
    req.set_page_size(2);
    std::set<std::string> seen;
    size_t pages = 0;
    do {
      grpc::ClientContext ctx;
      v1::ListProfilesResponse r;
      ASSERT_TRUE(profiles_->ListProfiles(&ctx, req, &r).ok());
      ++pages;
      EXPECT_EQ(r.profiles_size(), r.next_page_token().empty() ? 2 - total % 2 : 2);
      for (const v1::SystemProfile& p : r.profiles()) EXPECT_TRUE(seen.insert(p.name()).second) << p.name();
      req.set_page_token(r.next_page_token());
    } while (!req.page_token().empty() && pages <= total);
    EXPECT_EQ(pages, (total + 1) / 2);
    EXPECT_EQ(seen.size(), total);
  }
  {
    grpc::ClientContext ctx;
    v1::DeleteProfileRequest req;
    req.set_name("my-cluster");
    v1::DeleteProfileResponse r;
    ASSERT_TRUE(profiles_->DeleteProfile(&ctx, req, &r).ok());
    EXPECT_EQ(r.versions_deleted(), 2);
    EXPECT_THAT(server_->metrics().Text(), HasSubstr("profile=\"dgx-a100-80gb\""));
    EXPECT_THAT(server_->metrics().Text(), ::testing::Not(HasSubstr("profile=\"my-cluster\"")));
  }
}

TEST_F(ServerTest, IngestIsIdempotentAndSurvivesRestart) {
  std::vector<v1::Measurement> ms = PublicMeasurements();
  ASSERT_EQ(ms.size(), 9u);
  v1::Measurement bad = ms[0];
  bad.set_id("bad-time");
  bad.set_iteration_time_s(-1);
  v1::Measurement bad_config = ms[0];
  bad_config.set_id("bad-config");
  bad_config.mutable_config()->set_tensor_parallel(7);
  v1::Measurement unknown = ms[0];
  unknown.set_id("unknown-profile");
  unknown.set_profile("nowhere");
  std::vector<v1::Measurement> batch = ms;
  batch.push_back(bad);
  batch.push_back(bad_config);
  batch.push_back(unknown);
  v1::IngestMeasurementsResponse r = Ingest(batch);
  EXPECT_EQ(r.accepted(), 9);
  EXPECT_EQ(r.rejected(), 3);
  EXPECT_THAT(r.results(9).reason(), HasSubstr("iteration_time_s"));
  EXPECT_THAT(r.results(10).reason(), HasSubstr("config.tensor_parallel"));
  EXPECT_THAT(r.results(11).reason(), HasSubstr("nowhere"));
  EXPECT_GT(r.results(0).predicted_iteration_time_s(), 0);
  // Outside the physical bounds (once accepted: accuracy then read +Inf for good, and two
  // such made calibration store a NaN profile).
  std::vector<v1::Measurement> absurd;
  for (const auto& [id, t, gib] : {std::tuple{"tiny", 5e-324, 10.0}, {"huge", 1e300, 10.0}, {"mem", 1.0, 1.7e308}}) {
    v1::Measurement m = ms[0];
    m.set_id(id);
    m.set_iteration_time_s(t);
    m.set_peak_memory_gib(gib);
    absurd.push_back(m);
  }
  v1::IngestMeasurementsResponse refused = Ingest(absurd);
  EXPECT_EQ(refused.rejected(), 3);
  EXPECT_THAT(refused.results(0).reason(), HasSubstr("iteration_time_s: 4.94066e-324 is outside [1e-06, 1e+06]"));
  EXPECT_THAT(refused.results(1).reason(), HasSubstr("iteration_time_s: 1e+300 is outside [1e-06, 1e+06]"));
  EXPECT_THAT(refused.results(2).reason(), HasSubstr("peak_memory_gib: 1.7e+308 is outside [0, 100000]"));
  v1::IngestMeasurementsResponse again = Ingest(ms);
  EXPECT_EQ(again.duplicates(), 9);
  EXPECT_EQ(again.accepted(), 0);

  auto accuracy = [&] {
    grpc::ClientContext ctx;
    v1::GetAccuracyRequest req;
    req.set_profile("dgx-a100-80gb");
    req.set_label_key("source");
    v1::AccuracyReport rep;
    EXPECT_TRUE(measurements_->GetAccuracy(&ctx, req, &rep).ok());
    return rep;
  };
  const v1::AccuracyReport before = accuracy();
  EXPECT_EQ(before.overall().count(), 9);
  EXPECT_LT(before.overall().mape_ratio(), 0.05);
  EXPECT_EQ(before.by_label_size(), 2);  // Table 5 rows and the 2,240-GPU run cite different sources

  // /metrics agrees with GetAccuracy.
  const std::string text = server_->metrics().Text();
  EXPECT_THAT(text, HasSubstr("paraplan_prediction_mape_ratio{profile=\"dgx-a100-80gb\"} " +
                              std::to_string(before.overall().mape_ratio()).substr(0, 6)));
  EXPECT_THAT(text, HasSubstr("paraplan_measurements_ingested_total{profile=\"dgx-a100-80gb\",result=\"accepted\"} 9"));
  EXPECT_THAT(text, HasSubstr("paraplan_rpc_requests_total"));

  Restart();
  const v1::AccuracyReport after = accuracy();
  EXPECT_EQ(after.overall().count(), 9);
  EXPECT_DOUBLE_EQ(after.overall().mape_ratio(), before.overall().mape_ratio());
  EXPECT_EQ(Ingest(ms).duplicates(), 9);
  EXPECT_THAT(server_->metrics().Text(), HasSubstr("paraplan_prediction_error_ratio_count{profile=\"dgx-a100-80gb\"} 9"));
  EXPECT_NEAR(SampleValue(server_->metrics().Text(), "paraplan_prediction_mape_ratio{profile=\"dgx-a100-80gb\"}"),
              before.overall().mape_ratio(), 1e-12);
  EXPECT_TRUE(server_->CheckIntegrity().ok());
}

TEST_F(ServerTest, IngestRejectsItemByItem) {
  const std::vector<v1::Measurement> ms = PublicMeasurements();
  ASSERT_FALSE(ms.empty());
  std::vector<v1::Measurement> batch;
  auto add = [&](const std::string& id, std::function<void(v1::Measurement*)> mutate) {
    v1::Measurement m = ms[0];
    m.set_id(id);
    mutate(&m);
    batch.push_back(m);
  };
  add("", [](v1::Measurement*) {});                                                        // 0 empty id
  add(std::string(201, 'i'), [](v1::Measurement*) {});                                     // 1 long id
  add("nan", [](v1::Measurement* m) { m->set_iteration_time_s(std::nan("")); });           // 2
  add("inf", [](v1::Measurement* m) { m->set_iteration_time_s(1.0 / 0.0); });              // 3
  add("zero", [](v1::Measurement* m) { m->set_iteration_time_s(0); });                     // 4
  add("too-many-gpus", [](v1::Measurement* m) {  // 5: 8,192 GPUs on a 4,480-GPU cluster
    m->mutable_config()->set_data_parallel(1024);
    m->mutable_config()->set_global_batch_size(4096);
  });
  add("no-workload", [](v1::Measurement* m) { m->clear_workload(); });                     // 6
  add("bad-hidden", [](v1::Measurement* m) { m->mutable_workload()->mutable_transformer()->set_hidden_size(0); });
  add("bad-enum", [](v1::Measurement* m) { m->mutable_config()->set_recompute(static_cast<v1::Recompute>(8)); });
  add("pinned", [](v1::Measurement* m) { m->set_profile("dgx-a100-80gb@1"); });            // 9 accepted
  add("pinned", [](v1::Measurement*) {});                                                  // 10 duplicate in batch
  add("bad-version", [](v1::Measurement* m) { m->set_profile("dgx-a100-80gb@7"); });       // 11
  v1::IngestMeasurementsResponse r = Ingest(batch);
  ASSERT_EQ(r.results_size(), 12);
  EXPECT_EQ(r.accepted(), 1);
  EXPECT_EQ(r.duplicates(), 1);
  EXPECT_EQ(r.rejected(), 10);
  const char* reasons[] = {"id", "id", "iteration_time_s", "iteration_time_s", "iteration_time_s", "GPUs",
                           "workload", "workload.transformer.hidden_size", "config.recompute"};
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(r.results(i).status(), v1::IngestResult::STATUS_REJECTED) << i;
    EXPECT_THAT(r.results(i).reason(), HasSubstr(reasons[i])) << i;
  }
  EXPECT_EQ(r.results(9).status(), v1::IngestResult::STATUS_ACCEPTED);
  EXPECT_EQ(r.results(9).profile_version(), 1);
  EXPECT_EQ(r.results(10).status(), v1::IngestResult::STATUS_DUPLICATE);
  EXPECT_EQ(r.results(11).status(), v1::IngestResult::STATUS_REJECTED);
  grpc::ClientContext ctx;
  v1::GetAccuracyRequest req;
  req.set_profile("dgx-a100-80gb");
  v1::AccuracyReport rep;
  ASSERT_TRUE(measurements_->GetAccuracy(&ctx, req, &rep).ok());
  EXPECT_EQ(rep.overall().count(), 1);  // stored once
}

TEST_F(ServerTest, ConcurrentWritesStayConsistent) {
  const std::vector<v1::Measurement> ms = PublicMeasurements();
  v1::SystemProfile p = Profile("dgx-a100-80gb");
  p.set_name("race");
  std::atomic<int> created{0}, exists{0}, accepted{0}, duplicates{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      {
        grpc::ClientContext ctx;
        v1::CreateProfileRequest req;
        *req.mutable_profile() = p;
        v1::SystemProfile out;
        grpc::Status s = profiles_->CreateProfile(&ctx, req, &out);
        (s.ok() ? created : exists)++;
      }
      grpc::ClientContext ctx;
      v1::IngestMeasurementsRequest req;
      for (const auto& m : ms) *req.add_measurements() = m;
      v1::IngestMeasurementsResponse resp;
      if (measurements_->IngestMeasurements(&ctx, req, &resp).ok()) {
        accepted += resp.accepted();
        duplicates += resp.duplicates();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(created.load(), 1);
  EXPECT_EQ(exists.load(), 5);
  EXPECT_EQ(Profile("race").version(), 1);
  EXPECT_EQ(accepted.load(), static_cast<int>(ms.size()));
  EXPECT_EQ(duplicates.load(), 5 * static_cast<int>(ms.size()));
  EXPECT_TRUE(server_->CheckIntegrity().ok());
}

TEST_F(ServerTest, AccuracyCountsMemoryHitsAndMisses) {
  std::vector<v1::Measurement> ms = PublicMeasurements();
  ASSERT_GE(ms.size(), 4u);
  // Every public run fits in 80 GB (the estimator agrees; asserted below).
  ms[0].set_peak_memory_gib(60);   // fits and fitted: hit
  ms[1].set_out_of_memory(true);   // predicted to fit, went OOM: miss
  ms[2].set_peak_memory_gib(500);  // "ran" above the 80 GiB capacity: miss
  // ms[3..]: no memory observation, not counted
  v1::IngestMeasurementsResponse in = Ingest(ms);
  EXPECT_EQ(in.accepted(), static_cast<int>(ms.size()));
  grpc::ClientContext ctx;
  v1::GetAccuracyRequest req;
  req.set_profile("dgx-a100-80gb");
  req.set_recent(2);
  req.set_label_key("no-such-label");
  v1::AccuracyReport rep;
  ASSERT_TRUE(measurements_->GetAccuracy(&ctx, req, &rep).ok());
  EXPECT_EQ(rep.overall().memory_hits(), 1);
  EXPECT_EQ(rep.overall().memory_misses(), 2);
  EXPECT_EQ(rep.overall().count(), static_cast<int>(ms.size()) - 1);  // the OOM run has no time
  EXPECT_EQ(rep.recent().count(), 2);
  ASSERT_EQ(rep.by_label_size(), 1);  // every row lacks the label: one group ""
  EXPECT_EQ(rep.by_label().at("").count(), rep.overall().count());
  EXPECT_GT(rep.overall().bias_ratio(), 0.5);
  EXPECT_LT(rep.overall().bias_ratio(), 1.5);
  EXPECT_LE(rep.overall().median_ape_ratio(), 2 * rep.overall().mape_ratio() + 1e-12);
  const std::string text = server_->metrics().Text();
  EXPECT_THAT(text, HasSubstr("paraplan_memory_predictions_total{profile=\"dgx-a100-80gb\",result=\"hit\"} 1"));
  EXPECT_THAT(text, HasSubstr("paraplan_memory_predictions_total{profile=\"dgx-a100-80gb\",result=\"miss\"} 2"));
  {
    grpc::ClientContext c2;
    v1::GetAccuracyRequest bad;
    bad.set_profile("nowhere");
    EXPECT_EQ(measurements_->GetAccuracy(&c2, bad, &rep).error_code(), grpc::StatusCode::NOT_FOUND);
  }
}

TEST_F(ServerTest, CalibrationThatDoesNotCrossValidateBetterStaysACandidate) {
  {
    grpc::ClientContext ctx;
    v1::CalibrateRequest req;
    req.set_profile("dgx-a100-80gb");
    v1::CalibrateResponse r;
    EXPECT_EQ(measurements_->Calibrate(&ctx, req, &r).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  }
  {  // One measurement is not enough to calibrate on.
    Ingest({PredictedMeasurements()[0]});
    grpc::ClientContext ctx;
    v1::CalibrateRequest req;
    req.set_profile("dgx-a100-80gb");
    v1::CalibrateResponse r;
    grpc::Status s = measurements_->Calibrate(&ctx, req, &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_THAT(s.error_message(), HasSubstr("needs at least 5 measurements"));
  }
  // Runs the defaults predict to within their noise: a fit to them does not
  // cross-validate better by the 2 % margin, so it is stored but not promoted.
  Ingest(PredictedMeasurements());
  {  // A dry run stores nothing.
    grpc::ClientContext ctx;
    v1::CalibrateRequest req;
    req.set_profile("dgx-a100-80gb");
    req.set_dry_run(true);
    v1::CalibrateResponse r;
    ASSERT_TRUE(measurements_->Calibrate(&ctx, req, &r).ok());
    EXPECT_FALSE(r.stored());
    EXPECT_EQ(r.report().num_measurements(), 9);
    EXPECT_EQ(Versions("dgx-a100-80gb").versions_size(), 1);
  }
  grpc::ClientContext ctx;
  v1::CalibrateRequest req;
  req.set_profile("dgx-a100-80gb");
  v1::CalibrateResponse r;
  ASSERT_TRUE(measurements_->Calibrate(&ctx, req, &r).ok());
  EXPECT_TRUE(r.stored());
  EXPECT_EQ(r.profile().version(), 2);
  EXPECT_EQ(r.report().num_measurements(), 9);
  EXPECT_TRUE(r.report().cv_valid());
  EXPECT_FALSE(r.report().promote());
  EXPECT_THAT(r.report().promotion_reason(), HasSubstr("not promoted: cross-validated"));
  EXPECT_FALSE(r.profile().is_default());
  EXPECT_EQ(r.profile().fit_report().based_on_version(), 1);
  // The default stays version 1; estimates use it unless version 2 is pinned.
  EXPECT_EQ(Profile("dgx-a100-80gb").version(), 1);
  v1::EstimateResponse e;
  ASSERT_TRUE(Estimate(Gpt3Estimate(), &e).ok());
  EXPECT_EQ(e.estimate().profile_version(), 1);
  v1::EstimateRequest pinned = Gpt3Estimate();
  pinned.set_profile("dgx-a100-80gb@2");
  ASSERT_TRUE(Estimate(pinned, &e).ok());
  EXPECT_EQ(e.estimate().profile_version(), 2);
  // Both are in the history, with their origin and promotion.
  const v1::ListProfileVersionsResponse h = Versions("dgx-a100-80gb");
  ASSERT_EQ(h.versions_size(), 2);
  EXPECT_EQ(h.versions(0).origin(), "builtin");
  EXPECT_TRUE(h.versions(0).is_default());
  EXPECT_EQ(h.versions(1).origin(), "calibration");
  EXPECT_FALSE(h.versions(1).promoted());
  // Promoting the candidate makes it the default; promoting version 1 rolls back.
  EXPECT_EQ(Promote("dgx-a100-80gb@2"), grpc::StatusCode::OK);
  EXPECT_EQ(Profile("dgx-a100-80gb").version(), 2);
  ASSERT_TRUE(Estimate(Gpt3Estimate(), &e).ok());
  EXPECT_EQ(e.estimate().profile_version(), 2);
  EXPECT_EQ(Promote("dgx-a100-80gb@1"), grpc::StatusCode::OK);
  EXPECT_EQ(Profile("dgx-a100-80gb").version(), 1);
  EXPECT_EQ(Promote("dgx-a100-80gb@7"), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Promote("dgx-a100-80gb"), grpc::StatusCode::INVALID_ARGUMENT);
}

// A profile whose matmul efficiency is far off what its jobs show: calibration fixes it,
// cross-validates far better, and becomes the default.
TEST_F(ServerTest, CalibrationThatCrossValidatesBetterIsPromoted) {
  Ingest(SlowA100());
  grpc::ClientContext ctx;
  v1::CalibrateRequest req;
  req.set_profile("slow-a100");
  v1::CalibrateResponse r;
  ASSERT_TRUE(measurements_->Calibrate(&ctx, req, &r).ok());
  EXPECT_TRUE(r.report().promote()) << r.report().promotion_reason();
  EXPECT_THAT(r.report().promotion_reason(), HasSubstr("promoted"));
  EXPECT_LT(r.report().cv_mape_ratio(), 0.5 * r.report().current_mape_ratio());
  EXPECT_TRUE(r.profile().is_default());
  EXPECT_EQ(Profile("slow-a100").version(), 2);
  EXPECT_GT(Profile("slow-a100").calibration().matmul_efficiency(), 0.6);
}

// Calibration as an operation: StartCalibration answers at once, GetCalibration follows
// it to the result Calibrate would give; calibrating the same measurements again stores
// nothing and says so; a new measurement makes the next one fit again.
TEST_F(ServerTest, StartedCalibrationRunsToItsResultAndIsNotRepeatedOnTheSameData) {
  const std::vector<v1::Measurement> ms = SlowA100();
  Ingest({ms.begin(), ms.end() - 1});
  v1::CalibrationOperation op;
  {
    grpc::ClientContext ctx;
    v1::CalibrateRequest req;
    req.set_profile("slow-a100");
    ASSERT_TRUE(measurements_->StartCalibration(&ctx, req, &op).ok());
  }
  EXPECT_EQ(op.state(), v1::CalibrationOperation::STATE_RUNNING);
  EXPECT_EQ(op.profile(), "slow-a100");
  v1::GetCalibrationRequest get;
  get.set_operation_id(op.id());
  for (int i = 0; i < 600 && op.state() == v1::CalibrationOperation::STATE_RUNNING; ++i) {
    absl::SleepFor(absl::Milliseconds(50));
    grpc::ClientContext ctx;
    ASSERT_TRUE(measurements_->GetCalibration(&ctx, get, &op).ok());
  }
  ASSERT_EQ(op.state(), v1::CalibrationOperation::STATE_DONE) << op.error().message();
  EXPECT_TRUE(op.result().stored());
  EXPECT_EQ(op.result().profile().version(), 2);
  EXPECT_TRUE(op.result().profile().is_default());
  EXPECT_EQ(op.result().report().num_measurements(), 8);
  // Again on the same measurements: the same answer, nothing stored.
  auto calibrate = [&] {
    grpc::ClientContext ctx;
    v1::CalibrateRequest req;
    req.set_profile("slow-a100");
    v1::CalibrateResponse r;
    EXPECT_TRUE(measurements_->Calibrate(&ctx, req, &r).ok());
    return r;
  };
  v1::CalibrateResponse same = calibrate();
  EXPECT_TRUE(same.up_to_date());
  EXPECT_FALSE(same.stored());
  EXPECT_EQ(same.profile().version(), 2);
  EXPECT_EQ(same.report().cv_mape_ratio(), op.result().report().cv_mape_ratio());
  EXPECT_EQ(Versions("slow-a100").versions_size(), 2);
  // One more measurement: a new fit, from version 2.
  Ingest({ms.back()});
  v1::CalibrateResponse next = calibrate();
  EXPECT_FALSE(next.up_to_date());
  EXPECT_TRUE(next.stored());
  EXPECT_EQ(next.report().num_measurements(), 9);
  EXPECT_EQ(next.profile().fit_report().based_on_version(), 2);
  EXPECT_EQ(Versions("slow-a100").versions_size(), 3);
  // Unknown and missing ids, and a profile that is not stored.
  {
    grpc::ClientContext ctx;
    get.set_operation_id("cal-0000000000000000");
    EXPECT_EQ(measurements_->GetCalibration(&ctx, get, &op).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  {
    grpc::ClientContext ctx;
    get.clear_operation_id();
    grpc::Status s = measurements_->GetCalibration(&ctx, get, &op);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("operation_id"));
  }
  {
    grpc::ClientContext ctx;
    v1::CalibrateRequest req;
    req.set_profile("no-such-profile");
    EXPECT_EQ(measurements_->StartCalibration(&ctx, req, &op).error_code(), grpc::StatusCode::NOT_FOUND);
  }
}

TEST_F(ServerTest, AutomaticCalibrationAfterNMeasurements) {
  auto_calibrate_after_ = 5;
  Restart();
  v1::IngestMeasurementsResponse r = Ingest(PredictedMeasurements());
  EXPECT_TRUE(r.calibration_triggered());
  // It runs in the background: version 2 appears (not cross-validating better, it is not
  // the default).
  ASSERT_TRUE(WaitForVersions("dgx-a100-80gb", 2));
  EXPECT_EQ(Profile("dgx-a100-80gb").version(), 1);
}

// Regression: auto-calibration ran inside the ingest RPC, under a mutex: one ingest
// waited for the whole fit while concurrent ingests each refitted the same data.
TEST_F(ServerTest, AutomaticCalibrationRunsInTheBackgroundOncePerProfile) {
  auto_calibrate_after_ = 300;
  Restart();
  v1::SystemProfile p = Profile("dgx-a100-80gb");
  p.set_name("busy");
  {
    grpc::ClientContext ctx;
    v1::CreateProfileRequest req;
    *req.mutable_profile() = p;
    v1::SystemProfile out;
    ASSERT_TRUE(profiles_->CreateProfile(&ctx, req, &out).ok());
  }
  // Six concurrent ingests of 54 fresh measurements each: the last makes one due.
  const std::vector<v1::Measurement> ms = PublicMeasurements();
  auto ingest = [&](const std::string& tag, int copies, v1::IngestMeasurementsResponse* resp) {
    grpc::ClientContext ctx;
    v1::IngestMeasurementsRequest req;
    for (int c = 0; c < copies; ++c) {
      for (const v1::Measurement& m : ms) {
        v1::Measurement* x = req.add_measurements();
        *x = m;
        x->set_id(absl::StrCat(tag, "-", c, "-", m.id()));
        x->set_profile("busy");
        // Each copy a configuration of its own (c + 1 times the batch, and the time), so
        // that a calibration keeps them all (it keeps a few of each configuration) and
        // its fit lasts long beside an ingest.
        x->mutable_config()->set_global_batch_size(m.config().global_batch_size() * (1 + c));
        x->set_iteration_time_s(m.iteration_time_s() * (1 + c) * (1 + 0.002 * c));
      }
    }
    const absl::Time start = absl::Now();
    EXPECT_TRUE(measurements_->IngestMeasurements(&ctx, req, resp).ok());
    return absl::Now() - start;
  };
  std::atomic<int> triggered{0}, accepted{0};
  std::vector<absl::Duration> took(6);
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      v1::IngestMeasurementsResponse resp;
      took[t] = ingest(absl::StrCat("t", t), 6, &resp);
      accepted += resp.accepted();
      triggered += resp.calibration_triggered();
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(accepted.load(), 324);
  EXPECT_EQ(triggered.load(), 1);
  ASSERT_TRUE(WaitForVersions("busy", 2));
  // One calibration of the same measurements, timed in the foreground.
  const absl::Time start = absl::Now();
  {
    grpc::ClientContext ctx;
    v1::CalibrateRequest req;
    req.set_profile("busy");
    req.set_dry_run(true);
    v1::CalibrateResponse r;
    ASSERT_TRUE(measurements_->Calibrate(&ctx, req, &r).ok());
  }
  const absl::Duration fit = absl::Now() - start;
  // No ingest waited for the fit (here ~1 s against ~30 ms an ingest).
  for (const absl::Duration d : took) EXPECT_LT(d, fit) << d << " vs fit " << fit;
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_EQ(Versions("busy").versions_size(), 2);  // one calibration, not one per ingest
  // Shutting down with a calibration queued or running stops cleanly.
  v1::IngestMeasurementsResponse resp;
  ingest("more", 40, &resp);
  EXPECT_TRUE(resp.calibration_triggered());
  Restart();
  EXPECT_TRUE(server_->CheckIntegrity().ok());
}

// Regression: a layer-graph layer without output_shape, with num_gpus > 0, indexed an
// empty shape in validation and killed the server.
TEST_F(ServerTest, LayerWithoutOutputShapeIsInvalidNotFatal) {
  v1::EstimateRequest req;
  req.set_profile("dgx-a100-80gb");
  req.set_num_gpus(2);
  v1::LayerGraph* g = req.mutable_workload()->mutable_layer_graph();
  v1::Layer* conv = g->add_layers();
  conv->set_name("conv1");
  conv->set_kind("conv");
  for (int64_t v : {3, 64, 64}) conv->add_input_shape(v);
  for (int64_t v : {16, 64, 64}) conv->add_output_shape(v);
  for (int64_t v : {3, 3}) conv->add_kernel_shape(v);
  v1::Layer* headless = g->add_layers();
  headless->set_name("headless");
  headless->set_kind("relu");
  for (int64_t v : {16, 64, 64}) headless->add_input_shape(v);
  req.mutable_config()->set_spatial_parallel(2);
  req.mutable_config()->set_global_batch_size(8);
  v1::EstimateResponse r;
  grpc::Status s = Estimate(req, &r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("layers[1].output_shape"));
  v1::EstimateBatchRequest batch;
  *batch.add_requests() = req;
  *batch.add_requests() = Gpt3Estimate();
  grpc::ClientContext ctx;
  v1::EstimateBatchResponse br;
  ASSERT_TRUE(planner_->EstimateBatch(&ctx, batch, &br).ok());
  ASSERT_EQ(br.results_size(), 2);
  EXPECT_THAT(br.results(0).error().message(), HasSubstr("layers[1].output_shape"));
  EXPECT_TRUE(br.results(1).has_estimate());
  EXPECT_TRUE(Estimate(Gpt3Estimate(), &r).ok());  // still serving
}

// Regression: --global-batch 2147483647 kept a core busy for minutes (divisors
// enumerated one by one, before any deadline check), and a Plan over 64 GPU counts
// answered DEADLINE_EXCEEDED instead of a truncated result.
TEST_F(ServerTest, PlanBoundsTheBatchAndAnswersTruncatedAtTheDeadline) {
  v1::PlanRequest req;
  req.set_profile("dgx-a100-80gb");
  req.set_model("gpt3-175b");
  req.add_gpus(64);
  req.set_global_batch_size(2147483647);
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::PlanResponse r;
    grpc::Status s = planner_->Plan(&ctx, req, &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("global_batch_size"));
  }
  req.clear_gpus();
  for (int g = 64; g <= 4096; g += 64) req.add_gpus(g);
  req.set_global_batch_size(1536);
  // DeepSeek-V3's 64 searches (MoE: expert parallelism, dispatchers, stage layouts) take
  // 8.8 s on two cores (`paraplan plan --model deepseek-v3 --gpus 64,128,...,4096`); GPT-3's
  // took 1.6 s by 2026-11, inside the deadline, and the answer was no longer truncated.
  req.set_model("deepseek-v3");
  grpc::ClientContext ctx;
  // 2 s: the 64 searches take four times as long, so the answer is truncated, and the
  // tenth of the deadline the server keeps to answer (200 ms) survives a loaded machine
  // (500 ms left 50 ms, and a busy CI host missed it).
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  v1::PlanResponse r;
  grpc::Status s = planner_->Plan(&ctx, req, &r);
  ASSERT_TRUE(s.ok()) << s.error_code() << ": " << s.error_message();
  EXPECT_TRUE(r.truncated());
  EXPECT_GT(r.plans_size(), 0);
}

// Regression: each distinct profile string of a rejected ingest made a metrics series
// that was never freed (200 requests with 1 MB names: +226 MB).
TEST_F(ServerTest, RejectedIngestsOfUnknownProfilesShareOneSeries) {
  const std::vector<v1::Measurement> ms = PublicMeasurements();
  std::vector<v1::Measurement> batch;
  for (int i = 0; i < 30; ++i) {
    v1::Measurement m = ms[0];
    m.set_id(absl::StrCat("ghost-", i));
    m.set_profile(absl::StrCat("ghost-profile-", i, std::string(1000, 'x')));
    if (i % 3 == 1) m.set_iteration_time_s(-1);    // rejected before the profile is looked up
    if (i % 3 == 2) m.set_profile(absl::StrCat("ghost-", i, "@x"));  // not even a reference
    batch.push_back(m);
  }
  v1::Measurement real = ms[0];
  real.set_iteration_time_s(0);  // rejected, for a stored profile: labelled by it
  batch.push_back(real);
  v1::IngestMeasurementsResponse r = Ingest(batch);
  EXPECT_EQ(r.rejected(), 31);
  const std::string text = server_->metrics().Text();
  EXPECT_THAT(text, Not(HasSubstr("ghost")));
  EXPECT_EQ(SampleValue(text, "paraplan_measurements_ingested_total{profile=\"(unknown)\",result=\"rejected\"}"), 30);
  EXPECT_EQ(SampleValue(text, "paraplan_measurements_ingested_total{profile=\"dgx-a100-80gb\",result=\"rejected\"}"),
            1);
}

// Regression: ids were spliced into SQL; one with a NUL byte gave INTERNAL after the
// request's earlier items had been committed.
TEST_F(ServerTest, IngestTakesAnyIdAndSaysPerItemWhatWasStored) {
  std::vector<v1::Measurement> ms = PublicMeasurements();
  ms.resize(3);
  ms[0].set_id("plain");
  ms[1].set_id(std::string("nul\0byte", 8));
  ms[2].set_id("quote'); DROP TABLE measurements; --");
  v1::IngestMeasurementsResponse r = Ingest(ms);
  EXPECT_EQ(r.accepted(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(r.results(i).id(), ms[i].id());
  EXPECT_EQ(Ingest(ms).duplicates(), 3);
  grpc::ClientContext ctx;
  v1::GetAccuracyRequest req;
  req.set_profile("dgx-a100-80gb");
  v1::AccuracyReport rep;
  ASSERT_TRUE(measurements_->GetAccuracy(&ctx, req, &rep).ok());
  EXPECT_EQ(rep.overall().count(), 3);
  EXPECT_TRUE(server_->CheckIntegrity().ok());
}

// Regression: matmul_efficiency = 5e-324 and a NaN oversubscription were stored;
// Estimate then answered an infinite time and ingest failed with INTERNAL.
TEST_F(ServerTest, ProfilesWithNonFiniteOrAbsurdValuesAreRefused) {
  const v1::SystemProfile base = Profile("dgx-a100-80gb");
  struct Case {
    std::function<void(v1::SystemProfile*)> mutate;
    std::string field;
  } cases[] = {
      {[](v1::SystemProfile* p) { p->mutable_calibration()->set_matmul_efficiency(5e-324); },
       "profile.calibration.matmul_efficiency"},
      {[](v1::SystemProfile* p) { p->mutable_network_levels(0)->set_oversubscription(std::nan("")); },
       "profile.network_levels[0].oversubscription"},
      {[](v1::SystemProfile* p) { p->mutable_accelerator()->set_memory_bandwidth_gbytes_per_s(INFINITY); },
       "profile.accelerator.memory_bandwidth_gbytes_per_s"},
      {[](v1::SystemProfile* p) { p->set_price_per_gpu_hour_usd(-std::nan("")); }, "profile.price_per_gpu_hour_usd"},
  };
  for (const Case& c : cases) {
    grpc::ClientContext ctx;
    v1::UpdateProfileRequest req;
    *req.mutable_profile() = base;
    req.mutable_profile()->set_name("absurd");
    req.set_create_if_missing(true);
    c.mutate(req.mutable_profile());
    v1::SystemProfile out;
    grpc::Status s = profiles_->UpdateProfile(&ctx, req, &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.field;
    EXPECT_THAT(s.error_message(), HasSubstr(c.field));
  }
  grpc::ClientContext ctx;
  v1::GetProfileRequest get;
  get.set_name("absurd");
  v1::SystemProfile out;
  EXPECT_EQ(profiles_->GetProfile(&ctx, get, &out).error_code(), grpc::StatusCode::NOT_FOUND);  // none stored
}

// Regression: a 10 kB profile name came back whole in NOT_FOUND and overflowed the
// client's metadata limit.
TEST_F(ServerTest, ErrorsRepeatAtMost100CharactersOfAName) {
  const std::string huge = "big" + std::string(10000, 'n');
  {
    grpc::ClientContext ctx;
    v1::GetProfileRequest req;
    req.set_name(huge);
    v1::SystemProfile out;
    grpc::Status s = profiles_->GetProfile(&ctx, req, &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_THAT(s.error_message(), HasSubstr("\"big" + std::string(97, 'n') + "...\""));
    EXPECT_LT(s.error_message().size(), 200u);
  }
  v1::EstimateRequest est = Gpt3Estimate();
  est.set_profile(huge);
  v1::EstimateResponse er;
  grpc::Status s = Estimate(est, &er);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_LT(s.error_message().size(), 200u);
  est = Gpt3Estimate();
  est.set_model(huge);
  s = Estimate(est, &er);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LT(s.error_message().size(), 200u);
  est.set_profile(huge + "@x");
  s = Estimate(est, &er);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LT(s.error_message().size(), 200u);
  v1::Measurement m = PublicMeasurements()[0];
  m.set_profile(huge);
  v1::IngestMeasurementsResponse r = Ingest({m});
  ASSERT_EQ(r.results_size(), 1);
  EXPECT_EQ(r.results(0).status(), v1::IngestResult::STATUS_REJECTED);
  EXPECT_LT(r.results(0).reason().size(), 200u);
}

// Regression: anyone could delete a built-in profile, and its measurements with it.
TEST_F(ServerTest, BuiltinProfilesCannotBeDeleted) {
  ASSERT_EQ(Ingest({PublicMeasurements()[0]}).accepted(), 1);
  for (const char* name : {"dgx-a100-80gb", "dgx-h100-80gb", "abci-v100-16gb"}) {
    grpc::ClientContext ctx;
    v1::DeleteProfileRequest req;
    req.set_name(name);
    v1::DeleteProfileResponse r;
    grpc::Status s = profiles_->DeleteProfile(&ctx, req, &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << name;
    EXPECT_THAT(s.error_message(), HasSubstr("built in"));
    EXPECT_EQ(Profile(name).name(), name);
  }
  grpc::ClientContext ctx;
  v1::GetAccuracyRequest req;
  req.set_profile("dgx-a100-80gb");
  v1::AccuracyReport rep;
  ASSERT_TRUE(measurements_->GetAccuracy(&ctx, req, &rep).ok());
  EXPECT_EQ(rep.overall().count(), 1);
}

TEST_F(ServerTest, ReseedingNeverOverwritesUserVersions) {
  v1::SystemProfile p = Profile("dgx-h100-80gb");
  p.set_description("mine");
  grpc::ClientContext ctx;
  v1::UpdateProfileRequest req;
  *req.mutable_profile() = p;
  v1::SystemProfile out;
  ASSERT_TRUE(profiles_->UpdateProfile(&ctx, req, &out).ok());
  Restart();
  EXPECT_EQ(Profile("dgx-h100-80gb").description(), "mine");
  EXPECT_EQ(Profile("dgx-h100-80gb").version(), 2);
}

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
