// paraplan.v1.Network through the real server over gRPC: Codesign's answer against the
// Plan RPC's (the same best plan per design and workload, weighted sums), what bad
// requests say (the field, the status code), the roles (both RPCs are reads), and
// Simulate's shape (skipped, saying why, where the server was built without SimGrid).
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "paraplan/v1/network.grpc.pb.h"
#include "tests/server/fixture.h"

namespace paraplan::server {
namespace {

class NetworkTest : public ServerTest {
 protected:
  grpc::Status Codesign(const v1::CodesignRequest& r, v1::CodesignResponse* out, const std::string& token = "") {
    grpc::ClientContext ctx;
    if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
    return v1::Network::NewStub(channel_)->Codesign(&ctx, r, out);
  }
  grpc::Status Simulate(const v1::SimulateRequest& r, v1::SimulateResponse* out, const std::string& token = "") {
    grpc::ClientContext ctx;
    if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
    return v1::Network::NewStub(channel_)->Simulate(&ctx, r, out);
  }

  // dgx-a100-80gb with `nodes` nodes and the inter-node level at `gbps`, stored as `name`.
  void PutDesign(const std::string& name, int nodes, double gbps, double price = 0) {
    v1::SystemProfile p = Profile("dgx-a100-80gb");
    p.set_name(name);
    p.set_version(0);
    p.set_num_nodes(nodes);
    p.mutable_network_levels(p.network_levels_size() - 1)->set_bandwidth_gbytes_per_s(gbps);
    if (price > 0) p.set_price_per_gpu_hour_usd(price);
    const grpc::Status s = CreateProfile(p);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  static v1::CodesignRequest TwoDesigns() {
    v1::CodesignRequest r;
    r.add_designs("net-slow");
    r.add_designs("net-fast@1");
    r.set_gpus(32);
    v1::CodesignWorkload* w = r.add_workloads();
    w->set_model("megatron-22b");
    w->set_weight(3);
    w->set_global_batch_size(64);
    w = r.add_workloads();
    w->set_model("llama3-8b");
    w->set_name("llama");
    w->set_global_batch_size(128);  // weight 0 = 1
    return r;
  }

  static v1::SimulateRequest SmallJob() {
    v1::SimulateRequest r;
    r.set_profile("dgx-a100-80gb");
    r.set_model("megatron-22b");
    v1::ParallelConfig* c = r.mutable_config();
    c->set_tensor_parallel(8);
    c->set_data_parallel(2);
    c->set_micro_batch_size(1);
    c->set_global_batch_size(8);
    c->set_overlap_grad_reduce(true);
    return r;
  }
};

TEST_F(NetworkTest, CodesignAgreesWithThePlanRpcAndWeighsTheWorkloads) {
  PutDesign("net-slow", 8, 3);
  PutDesign("net-fast", 8, 25);
  v1::CodesignResponse r;
  const v1::CodesignRequest req = TwoDesigns();
  grpc::Status s = Codesign(req, &r);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(r.designs_size(), 2);
  EXPECT_EQ(r.designs(0).profile(), "net-slow");
  EXPECT_EQ(r.designs(1).profile(), "net-fast");
  EXPECT_EQ(r.designs(1).profile_version(), 1);
  EXPECT_EQ(r.designs(1).rank(), 1);
  EXPECT_EQ(r.designs(0).rank(), 2);
  EXPECT_EQ(r.best_by_time(), "net-fast@1");
  EXPECT_FALSE(r.truncated());
  for (const v1::CodesignDesign& d : r.designs()) {
    ASSERT_EQ(d.cells_size(), 2);
    EXPECT_TRUE(d.fits_all());
    EXPECT_EQ(d.cells(0).workload(), "megatron-22b");
    EXPECT_EQ(d.cells(1).workload(), "llama");
    // Weighted: 3 iterations of the first workload, 1 of the second.
    const double want = 3 * d.cells(0).best().iteration_time_s() + d.cells(1).best().iteration_time_s();
    EXPECT_NEAR(d.weighted_time_s(), want, 1e-12 * want);
    // Each cell is the Plan RPC's best plan for that design and workload.
    for (int i = 0; i < 2; ++i) {
      v1::PlanRequest p;
      p.set_profile(d.profile());
      p.set_model(req.workloads(i).model());
      p.add_gpus(req.gpus());
      p.set_global_batch_size(req.workloads(i).global_batch_size());
      p.set_top_k(1);
      grpc::ClientContext ctx;
      v1::PlanResponse plan;
      ASSERT_TRUE(planner_->Plan(&ctx, p, &plan).ok());
      ASSERT_GE(plan.plans_size(), 1);
      EXPECT_DOUBLE_EQ(d.cells(i).best().iteration_time_s(), plan.plans(0).iteration_time_s()) << d.profile() << i;
    }
  }
  EXPECT_LT(r.designs(1).weighted_time_s(), r.designs(0).weighted_time_s());

  // Concurrent calls give the same answer (the searches share nothing).
  std::vector<v1::CodesignResponse> again(3);
  std::vector<std::thread> threads;
  for (auto& a : again) threads.emplace_back([&] { EXPECT_TRUE(Codesign(req, &a).ok()); });
  for (auto& t : threads) t.join();
  for (const auto& a : again) {
    ASSERT_EQ(a.designs_size(), 2);
    for (int d = 0; d < 2; ++d) EXPECT_EQ(a.designs(d).weighted_time_s(), r.designs(d).weighted_time_s());
  }
}

TEST_F(NetworkTest, UnnamedWorkloadsOfOneModelAreToldApartByTheirBatch) {
  v1::CodesignRequest req;
  req.add_designs("dgx-a100-80gb");
  req.set_gpus(8);
  for (int batch : {32, 64}) {
    v1::CodesignWorkload* w = req.add_workloads();
    w->set_model("llama3-8b");
    w->set_global_batch_size(batch);
  }
  v1::CodesignWorkload* named = req.add_workloads();
  named->set_model("llama3-8b");
  named->set_name("mine");
  named->set_global_batch_size(128);
  v1::CodesignResponse r;
  const grpc::Status s = Codesign(req, &r);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(r.designs(0).cells_size(), 3);
  EXPECT_EQ(r.designs(0).cells(0).workload(), "llama3-8b (batch 32)");
  EXPECT_EQ(r.designs(0).cells(1).workload(), "llama3-8b (batch 64)");
  EXPECT_EQ(r.designs(0).cells(2).workload(), "mine");
}

TEST_F(NetworkTest, CodesignBadRequestsNameTheField) {
  PutDesign("net-slow", 8, 3);
  PutDesign("net-fast", 8, 25);
  struct Case {
    const char* what;
    std::function<void(v1::CodesignRequest*)> edit;
    grpc::StatusCode code;
    const char* field;
  };
  const std::vector<Case> cases = {
      {"unknown design", [](v1::CodesignRequest* r) { r->set_designs(1, "nope"); }, grpc::StatusCode::NOT_FOUND,
       "designs[1]"},
      {"unknown version", [](v1::CodesignRequest* r) { r->set_designs(1, "net-fast@9"); },
       grpc::StatusCode::NOT_FOUND, "designs[1]"},
      {"no designs", [](v1::CodesignRequest* r) { r->clear_designs(); }, grpc::StatusCode::INVALID_ARGUMENT,
       "designs"},
      {"no workloads", [](v1::CodesignRequest* r) { r->clear_workloads(); }, grpc::StatusCode::INVALID_ARGUMENT,
       "workloads"},
      {"negative weight", [](v1::CodesignRequest* r) { r->mutable_workloads(1)->set_weight(-1); },
       grpc::StatusCode::INVALID_ARGUMENT, "workloads[1].weight"},
      {"no batch", [](v1::CodesignRequest* r) { r->mutable_workloads(0)->set_global_batch_size(0); },
       grpc::StatusCode::INVALID_ARGUMENT, "workloads[0].global_batch_size"},
      {"unknown model", [](v1::CodesignRequest* r) { r->mutable_workloads(1)->set_model("gpt-99"); },
       grpc::StatusCode::INVALID_ARGUMENT, "workloads[1]"},
      {"no model", [](v1::CodesignRequest* r) { r->mutable_workloads(0)->clear_model(); },
       grpc::StatusCode::INVALID_ARGUMENT, "workloads[0]"},
      {"no gpus", [](v1::CodesignRequest* r) { r->set_gpus(0); }, grpc::StatusCode::INVALID_ARGUMENT, "gpus"},
      {"more gpus than a design", [](v1::CodesignRequest* r) { r->set_gpus(65); },
       grpc::StatusCode::INVALID_ARGUMENT, "gpus: 65 exceeds the 64 GPUs of designs[0]"},
      {"unknown objective", [](v1::CodesignRequest* r) { r->set_objective(static_cast<v1::Objective>(99)); },
       grpc::StatusCode::INVALID_ARGUMENT, "objective"},
      {"one override for two designs", [](v1::CodesignRequest* r) { r->add_design_overrides(); },
       grpc::StatusCode::INVALID_ARGUMENT, "design_overrides: give none or one per design (2), not 1"},
      {"an override that is not a whole profile",  // the CLI sends the stored one, changed
       [](v1::CodesignRequest* r) {
         r->add_design_overrides()->set_name("net-slow");
         r->add_design_overrides()->set_name("net-fast");
       },
       grpc::StatusCode::INVALID_ARGUMENT, "designs[0]: profile_override."},
  };
  for (const Case& c : cases) {
    v1::CodesignRequest req = TwoDesigns();
    c.edit(&req);
    v1::CodesignResponse r;
    const grpc::Status s = Codesign(req, &r);
    EXPECT_EQ(s.error_code(), c.code) << c.what << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(c.field), std::string::npos) << c.what << ": " << s.error_message();
  }
}

TEST_F(NetworkTest, CodesignReportsADesignThatFitsNothing) {
  PutDesign("net-fast", 8, 25);
  v1::CodesignRequest req;
  req.add_designs("net-fast");
  req.set_gpus(1);
  v1::CodesignWorkload* w = req.add_workloads();
  w->set_model("megatron-22b");  // 22B parameters do not fit one 80 GB GPU
  w->set_global_batch_size(8);
  v1::CodesignResponse r;
  const grpc::Status s = Codesign(req, &r);
  ASSERT_TRUE(s.ok()) << s.error_message();  // an answer, not an error
  ASSERT_EQ(r.designs_size(), 1);
  EXPECT_FALSE(r.designs(0).fits_all());
  EXPECT_FALSE(r.designs(0).cells(0).fits());
  EXPECT_FALSE(r.designs(0).cells(0).infeasible_reason().empty());
  EXPECT_TRUE(std::isinf(r.designs(0).weighted_time_s()));
  EXPECT_EQ(r.best_by_time(), "");
}

TEST_F(NetworkTest, SimulateBesideTheEstimate) {
  v1::SimulateResponse r;
  grpc::Status s = Simulate(SmallJob(), &r);
  if (s.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
    GTEST_SKIP() << "server built without SimGrid: " << s.error_message();
  }
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(r.analytic().num_gpus(), 16);
  EXPECT_DOUBLE_EQ(r.analytic_iteration_time_s(), r.analytic().iteration_time_s());
  ASSERT_GE(r.collectives_size(), 2);
  for (const v1::SimulatedCollective& c : r.collectives()) {
    EXPECT_GT(c.simulated_alone_s(), 0) << c.use().dimension();
    EXPECT_GT(c.use().seconds_per_call(), 0) << c.use().dimension();
  }
  EXPECT_GT(r.simulated_iteration_time_s(), 0);

  // Background traffic on a full-bisection fabric: flows, and a note saying how many.
  v1::SimulateRequest bg = SmallJob();
  bg.set_background_load(1);
  s = Simulate(bg, &r);
  ASSERT_TRUE(s.ok()) << s.error_message();
  bool noted = false;
  for (const std::string& n : r.notes()) noted = noted || n.find("background flows") != std::string::npos;
  EXPECT_TRUE(noted);

  // A job that fills the cluster leaves no one to make background traffic: said so.
  PutDesign("two-nodes", 2, 25);
  v1::SimulateRequest full = SmallJob();
  full.set_profile("two-nodes");
  full.set_background_load(0.5);
  s = Simulate(full, &r);
  ASSERT_TRUE(s.ok()) << s.error_message();
  noted = false;
  for (const std::string& n : r.notes()) noted = noted || n == "no background traffic: the job fills the cluster";
  EXPECT_TRUE(noted) << r.DebugString();
}

TEST_F(NetworkTest, SimulateBadRequestsNameTheField) {
  struct Case {
    const char* what;
    std::function<void(v1::SimulateRequest*)> edit;
    grpc::StatusCode code;
    const char* part;
  };
  const std::vector<Case> cases = {
      {"background over 1", [](v1::SimulateRequest* r) { r->set_background_load(1.5); },
       grpc::StatusCode::INVALID_ARGUMENT, "background_load"},
      {"background NaN", [](v1::SimulateRequest* r) { r->set_background_load(std::nan("")); },
       grpc::StatusCode::INVALID_ARGUMENT, "background_load"},
      {"unknown profile", [](v1::SimulateRequest* r) { r->set_profile("nope"); }, grpc::StatusCode::NOT_FOUND,
       "nope"},
      {"unknown model", [](v1::SimulateRequest* r) { r->set_model("gpt-99"); }, grpc::StatusCode::INVALID_ARGUMENT,
       "gpt-99"},
      {"bad degree", [](v1::SimulateRequest* r) { r->mutable_config()->set_tensor_parallel(7); },
       grpc::StatusCode::INVALID_ARGUMENT, "tensor_parallel"},
      {"over the replay limit",  // 1,280 GPUs: more than the 1,024 the simulation replays
       [](v1::SimulateRequest* r) {
         r->mutable_config()->set_data_parallel(160);
         r->mutable_config()->set_global_batch_size(160);
       },
       grpc::StatusCode::INVALID_ARGUMENT, "at most 1024 GPUs"},
  };
  for (const Case& c : cases) {
    v1::SimulateRequest req = SmallJob();
    c.edit(&req);
    v1::SimulateResponse r;
    const grpc::Status s = Simulate(req, &r);
    if (s.error_code() == grpc::StatusCode::UNIMPLEMENTED) GTEST_SKIP() << "server built without SimGrid";
    EXPECT_EQ(s.error_code(), c.code) << c.what << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(c.part), std::string::npos) << c.what << ": " << s.error_message();
  }
}

// The server's search limits apply to Codesign's searches too.
class NetworkLimitsTest : public NetworkTest {
 protected:
  ServerOptions Options() override {
    ServerOptions o = ServerTest::Options();
    o.limits = limits_;
    return o;
  }
  // `designs` copies of dgx-a100-80gb, GPT-3 175B on 1,024 GPUs: about 1 M candidates a search.
  static v1::CodesignRequest Big(int designs) {
    v1::CodesignRequest r;
    for (int i = 0; i < designs; ++i) r.add_designs("dgx-a100-80gb");
    r.set_gpus(1024);
    v1::CodesignWorkload* w = r.add_workloads();
    w->set_model("gpt3-175b");
    w->set_global_batch_size(1536);
    return r;
  }
  Limits limits_;
};

TEST_F(NetworkLimitsTest, CandidateCapTruncatesEverySearch) {
  limits_.max_plan_candidates = 1000;
  Restart();
  v1::CodesignResponse r;
  const grpc::Status s = Codesign(Big(2), &r);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(r.truncated());
  EXPECT_TRUE(r.designs(0).fits_all());  // the shapes searched before the cap hold plans
}

TEST_F(NetworkLimitsTest, ACancelledCodesignGivesItsSearchSlotBack) {
  limits_.max_concurrent_plans = 1;
  Restart();
  // Uncancelled, this runs 40 searches of ~1 M candidates each (~0.1 s each here: seconds).
  grpc::ClientContext ctx;
  v1::CodesignResponse r;
  std::thread call([&] { EXPECT_EQ(v1::Network::NewStub(channel_)->Codesign(&ctx, Big(40), &r).error_code(),
                                   grpc::StatusCode::CANCELLED); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto start = std::chrono::steady_clock::now();
  ctx.TryCancel();
  call.join();
  // Within a search or two the slot is free again: a small plan gets in.
  v1::PlanRequest plan;
  plan.set_profile("dgx-a100-80gb");
  plan.set_model("llama3-8b");
  plan.add_gpus(8);
  plan.set_global_batch_size(64);
  grpc::StatusCode code = grpc::StatusCode::RESOURCE_EXHAUSTED;
  while (code == grpc::StatusCode::RESOURCE_EXHAUSTED &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
    grpc::ClientContext c;
    v1::PlanResponse out;
    code = planner_->Plan(&c, plan, &out).error_code();
    if (code == grpc::StatusCode::RESOURCE_EXHAUSTED) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(code, grpc::StatusCode::OK);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(waited, 2.0) << "the cancelled codesign kept its slot";
}

TEST_F(NetworkLimitsTest, SimulateWaitsForASearchSlot) {
  limits_.max_concurrent_plans = 1;
  Restart();
  grpc::ClientContext ctx;
  v1::CodesignResponse r;
  std::thread call([&] { (void)v1::Network::NewStub(channel_)->Codesign(&ctx, Big(40), &r); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  v1::SimulateResponse out;
  const grpc::Status s = Simulate(SmallJob(), &out);
  ctx.TryCancel();
  call.join();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("--max-concurrent-plans"), std::string::npos) << s.error_message();
}

// With tokens, Simulate and Codesign are reads: a reader may call them, nobody without
// a token (unless anonymous reads are allowed).
class NetworkAuthTest : public NetworkTest {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/paraplan_netauth_XXXXXX";
    tokens_dir_ = mkdtemp(tmpl);
    std::ofstream(tokens_dir_ + "/tokens") << kReader << " reader\n" << kWriter << " writer\n";
    NetworkTest::SetUp();
  }
  void TearDown() override {
    NetworkTest::TearDown();
    std::system(("rm -rf " + tokens_dir_).c_str());
  }
  ServerOptions Options() override {
    ServerOptions o = ServerTest::Options();
    o.tokens_file = tokens_dir_ + "/tokens";
    o.allow_anonymous_reads = anonymous_reads_;
    return o;
  }
  static constexpr char kReader[] = "reader-token-0123456789";
  static constexpr char kWriter[] = "writer-token-0123456789";
  std::string tokens_dir_;
  bool anonymous_reads_ = false;
};

TEST_F(NetworkAuthTest, SimulateAndCodesignAreReads) {
  v1::CodesignRequest req;
  req.add_designs("dgx-a100-80gb");
  req.set_gpus(8);
  v1::CodesignWorkload* w = req.add_workloads();
  w->set_model("llama3-8b");
  w->set_global_batch_size(64);
  v1::CodesignResponse c;
  EXPECT_EQ(Codesign(req, &c).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Codesign(req, &c, "not-a-token-at-all-xx").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  const grpc::Status ok = Codesign(req, &c, kReader);
  EXPECT_TRUE(ok.ok()) << ok.error_message();
  EXPECT_TRUE(c.designs(0).fits_all());
  v1::SimulateResponse s;
  EXPECT_EQ(Simulate(SmallJob(), &s).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  const grpc::StatusCode sim = Simulate(SmallJob(), &s, kReader).error_code();
  EXPECT_TRUE(sim == grpc::StatusCode::OK || sim == grpc::StatusCode::UNIMPLEMENTED) << sim;

  anonymous_reads_ = true;
  Restart();
  EXPECT_TRUE(Codesign(req, &c).ok());
}

}  // namespace
}  // namespace paraplan::server
