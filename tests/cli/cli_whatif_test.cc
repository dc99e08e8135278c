// Profile overrides and design tools end to end (cli_harness.h): --set on profiles show,
// estimate, plan and compare; --version naming the servers; profiles put of a built-in;
// simulate; codesign.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "paraplan/v1/network.pb.h"
#include "paraplan/v1/services.pb.h"
#include "tests/cli/cli_harness.h"

namespace paraplan::cli_test {
namespace {

namespace v1 = paraplan::v1;

TEST_F(ServerTest, SetOverridesAProfileForOneOutput) {
  Result r = P({"-o", "json", "profiles", "show", "dgx-a100-80gb@1", "--set",
                "network.infiniband.bandwidth_gbytes_per_s=100", "--set", "accelerator.memory_gib=40", "--set",
                "calibration.matmul_efficiency=0.7"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto p = FromJson<v1::SystemProfile>(r.out);
  EXPECT_EQ(p.accelerator().memory_gib(), 40);
  EXPECT_EQ(p.calibration().matmul_efficiency(), 0.7);
  bool ib = false;
  for (const v1::NetworkLevel& l : p.network_levels()) {
    if (l.name() == "infiniband") {
      ib = true;
      EXPECT_EQ(l.bandwidth_gbytes_per_s(), 100);
    } else {
      EXPECT_NE(l.bandwidth_gbytes_per_s(), 100) << l.name();
    }
  }
  EXPECT_TRUE(ib);
  // Nothing was saved.
  r = P({"-o", "json", "profiles", "show", "dgx-a100-80gb@1"});
  EXPECT_EQ(FromJson<v1::SystemProfile>(r.out).accelerator().memory_gib(), 80);
  r = P({"profiles", "show", "dgx-a100-80gb@1", "--set", "accelerator.memory_gib=40"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "; 40 GiB at ") && Contains(r.out, "\nwith --set (not saved): accelerator.memory_gib=40\n"))
      << r.out;
  // A change the profile cannot take: exit 1, the field and the reason, nothing shown.
  r = P({"profiles", "show", "dgx-a100-80gb@1", "--set", "storage.read_joules_per_gbyte=-3"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "INVALID_ARGUMENT: profile.storage.read_joules_per_gbyte: -3 is outside") &&
              Contains(r.err, "(the profile as changed by --set storage.read_joules_per_gbyte=-3)"))
      << r.err;
  EXPECT_EQ(r.out, "");
  // Unknown paths: exit 2, naming the path and the close matches.
  r = P({"profiles", "show", "dgx-a100-80gb", "--set", "network.infiniband.bandwith_gbytes_per_s=100"});
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            "paraplan: --set network.infiniband.bandwith_gbytes_per_s: no field \"bandwith_gbytes_per_s\" in "
            "network.infiniband (did you mean network.infiniband.bandwidth_gbytes_per_s?)");
  r = P({"plan", "--profile", "dgx-a100-80gb", "--model", "gpt3-175b", "--gpus", "8", "--global-batch", "8", "--set",
         "network.ib.bandwidth_gbytes_per_s=100"});
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            "paraplan: --set network.ib.bandwidth_gbytes_per_s: no network level \"ib\" (levels: nvlink, infiniband)");
  r = P({"plan", "--profile", "dgx-a100-80gb", "--model", "gpt3-175b", "--gpus", "8", "--global-batch", "8", "--set",
         "memory_gib"});
  EXPECT_EQ(r.code, 2) << Describe(r);
}

// --set on estimate, plan and compare: the changed profile travels with the request
// (profile_override) and is used for it only. Doubling the InfiniBand bandwidth halves
// the data-parallel ring all-reduce of GPT-3 (16 ranks across nodes, 10.4 GiB of
// gradients): its time is 2(P-1)/P * N / B plus a few latency terms, so B x 2 -> time x ~0.5;
// the compute does not move. Nothing is stored.
TEST_F(ServerTest, SetChangesTheProfileOfOneEstimatePlanAndCompare) {
  const std::vector<std::string> estimate = {"-o", "json", "estimate", "--profile", "dgx-a100-80gb@1", "--model",
                                             "gpt3-175b", "--gpus", "1024", "--global-batch", "1536", "--tp", "8",
                                             "--pp", "8", "--dp", "16", "--overlap-grad-reduce", "off"};
  Result r = P({"-o", "json", "profiles", "history", "dgx-a100-80gb"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const int versions = FromJson<v1::ListProfileVersionsResponse>(r.out).versions_size();

  r = P(estimate);
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto base = FromJson<v1::Estimate>(r.out);
  std::vector<std::string> args = estimate;
  args.insert(args.end(), {"--set", "network.infiniband.bandwidth_gbytes_per_s=50"});
  r = P(args);
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto fast = FromJson<v1::Estimate>(r.out);
  ASSERT_GT(base.time().dp_comm_s(), 0.5);
  EXPECT_NEAR(fast.time().dp_comm_s() / base.time().dp_comm_s(), 0.5, 0.01)
      << base.time().dp_comm_s() << " -> " << fast.time().dp_comm_s();
  EXPECT_EQ(fast.time().compute_s(), base.time().compute_s());
  EXPECT_LT(fast.iteration_time_s(), base.iteration_time_s());
  EXPECT_EQ(fast.profile_name(), "dgx-a100-80gb");
  EXPECT_EQ(fast.profile_version(), 1);
  EXPECT_TRUE(std::count(fast.warnings().begin(), fast.warnings().end(),
                         "profile_override: dgx-a100-80gb@1 as changed for this request only, not stored: "
                         "network_levels[1].bandwidth_gbytes_per_s 25 -> 50") == 1)
      << r.out;
  // The table says so too.
  args.erase(args.begin(), args.begin() + 2);
  r = P(args);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "\nwarning: profile_override: dgx-a100-80gb@1 as changed for this request only"))
      << r.out;

  // plan: every plan fits the 40 GiB the override gives (GPT-3 on 80 GiB is not asked to).
  const std::vector<std::string> plan = {"plan", "--profile", "dgx-a100-80gb", "--model", "llama3-8b", "--gpus", "8",
                                         "--global-batch", "32", "--top", "5", "--set", "accelerator.memory_gib=40"};
  args = {"-o", "json"};
  args.insert(args.end(), plan.begin(), plan.end());
  r = P(args);
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto planned = FromJson<v1::PlanResponse>(r.out);
  ASSERT_GT(planned.plans_size(), 0) << r.out.substr(0, 2000);
  for (const v1::Estimate& e : planned.plans()) {
    EXPECT_EQ(e.memory().capacity_bytes(), 40.0 * (1 << 30));
    EXPECT_LE(e.memory().total_bytes(), e.memory().capacity_bytes());
    EXPECT_TRUE(Contains(absl::StrJoin(e.warnings(), "\n"), "accelerator.memory_gib 80 -> 40")) << r.out;
  }
  r = P(plan);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(absl::EndsWith(r.out, "\nwith --set (not saved): accelerator.memory_gib=40\n")) << r.out;
  // compare: the given configuration and the best plan, both on the changed profile.
  r = P({"compare", "--profile", "dgx-a100-80gb", "--model", "llama3-8b", "--gpus", "8", "--global-batch", "32",
         "--tp", "8", "--set", "accelerator.memory_gib=40"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(absl::EndsWith(r.out, "\nwith --set (not saved): accelerator.memory_gib=40\n")) << r.out;

  // A value the server's validation refuses: exit 1, the field named as the server
  // sees it and the --set that made it.
  args = estimate;
  args.insert(args.end(), {"--set", "network.infiniband.bandwidth_gbytes_per_s=-5"});
  r = P(args);
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_EQ(r.err,
            "error: INVALID_ARGUMENT: profile_override.network_levels[1].bandwidth_gbytes_per_s: -5 is outside "
            "[0.001, 1e+07]\n"
            "paraplan: (the profile as changed by --set network.infiniband.bandwidth_gbytes_per_s=-5)\n");
  EXPECT_EQ(r.out, "");

  // Nothing was stored.
  r = P({"-o", "json", "profiles", "history", "dgx-a100-80gb"});
  EXPECT_EQ(FromJson<v1::ListProfileVersionsResponse>(r.out).versions_size(), versions);
  r = P({"-o", "json", "profiles", "show", "dgx-a100-80gb@1"});
  const auto stored = FromJson<v1::SystemProfile>(r.out);
  EXPECT_EQ(stored.accelerator().memory_gib(), 80);
  ASSERT_EQ(stored.network_levels_size(), 2);
  EXPECT_EQ(stored.network_levels(1).bandwidth_gbytes_per_s(), 25);
  r = P(estimate);
  EXPECT_EQ(FromJson<v1::Estimate>(r.out).iteration_time_s(), base.iteration_time_s());
}

// --version: the CLI's and the server's, with the API fingerprint each was built with.
TEST_F(ServerTest, VersionNamesTheServersToo) {
  const Result r = P({"--version"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u) << r.out;
  ASSERT_TRUE(absl::StartsWith(lines[0], "paraplan 0.11.0 (API paraplan.v1, ")) << lines[0];
  const std::string fingerprint = lines[0].substr(lines[0].rfind(' ') + 1, 16);
  EXPECT_EQ(fingerprint.size(), 16u);
  EXPECT_TRUE(absl::StartsWith(lines[1], absl::StrCat("server ", g_server->address(), ": paraplan-server 0.11.0 (API "
                                                      "paraplan.v1, ", fingerprint, "; gRPC 1.")))
      << lines[1];
}

// `profiles put` of a built-in's name needs --new-version (on a server of its own: the
// shared one's built-ins must stay as they are).
TEST(CliConventions, PutOfABuiltInNeedsNewVersion) {
  if (g_paths.server.empty()) GTEST_SKIP() << "no --server binary given";
  Server server("builtin-put");
  ASSERT_TRUE(server.Start()) << Slurp(server.log());
  Result r = RunCli({"--server", server.address(), "-o", "json", "profiles", "show", "abci-v100-16gb"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const std::string profile = r.out;
  r = RunCli({"--server", server.address(), "profiles", "put", "-"}, {}, profile);
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            "paraplan: <stdin> names the built-in profile abci-v100-16gb: putting it writes abci-v100-16gb@2, the "
            "version every plan on abci-v100-16gb then uses. Give --new-version to do that, or rename the profile in "
            "the file (\"name\") to keep the built-in as it is.");
  r = RunCli({"--server", server.address(), "profiles", "history", "abci-v100-16gb"});
  EXPECT_FALSE(Contains(r.out, "\n      2 ")) << "nothing written\n" << r.out;
  r = RunCli({"--server", server.address(), "profiles", "put", "-", "--new-version"}, {}, profile);
  EXPECT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, "abci-v100-16gb@2\n");
  // Another name needs nothing.
  r = RunCli({"--server", server.address(), "profiles", "put", "-"}, {},
             absl::StrReplaceAll(profile, {{"\"abci-v100-16gb\"", "\"my-abci\""}}));
  EXPECT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, "my-abci@1\n");
  EXPECT_EQ(server.Stop(), 0);
}

// ---------------------------------------------------------------------------------------
// The network: simulate (SimGrid replay) and codesign.

TEST_F(ServerTest, SimulateReplaysTheCollectivesBesideTheEstimate) {
  const std::vector<std::string> job = {"--profile", "dgx-a100-80gb", "--model", "megatron-22b", "--tp", "8",
                                        "--dp", "4", "--mbs", "1", "--global-batch", "16", "--overlap-grad-reduce", "on"};
  std::vector<std::string> args = {"simulate"};
  args.insert(args.end(), job.begin(), job.end());
  Result r = P(args);
#ifndef PARAPLAN_SERVER_HAS_SIMGRID
  // This build found no SimGrid (sim/CMakeLists.txt): the server says so, and nothing
  // else is checked. Where SimGrid was found, UNIMPLEMENTED fails below.
  ASSERT_EQ(r.code, 1) << Describe(r);
  ASSERT_TRUE(Contains(r.err, "UNIMPLEMENTED")) << Describe(r);
  GTEST_SKIP() << "server built without SimGrid: " << r.err;
#endif
  ASSERT_EQ(r.code, 0) << Describe(r);
  for (const char* part : {"simulated ms", "sim/analytic", "iteration    analytic", "all-reduce"}) {
    EXPECT_TRUE(Contains(r.out, part)) << part << "\n" << Describe(r);
  }
  args.insert(args.begin(), {"--output", "json"});
  r = P(args);
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto s = FromJson<v1::SimulateResponse>(r.out);
  ASSERT_GE(s.collectives_size(), 2);  // the TP all-reduce inside nodes, the DP one across
  // A dedicated full-bisection fabric: every collective as the alpha-beta model says.
  for (const v1::SimulatedCollective& c : s.collectives()) {
    EXPECT_NEAR(c.simulated_alone_s() / c.use().seconds_per_call(), 1.0, 0.15) << c.use().dimension();
  }
  EXPECT_NEAR(s.simulated_iteration_time_s() / s.analytic_iteration_time_s(), 1.0, 0.10);
  EXPECT_DOUBLE_EQ(s.analytic_iteration_time_s(), s.analytic().iteration_time_s());

  // --set: the simulation of the same job on a what-if profile (InfiniBand at twice the
  // rate): the data-parallel all-reduce across nodes takes less, the warning says so.
  std::vector<std::string> fast = args;
  fast.insert(fast.end(), {"--set", "network.infiniband.bandwidth_gbytes_per_s=50"});
  r = P(fast);
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto f = FromJson<v1::SimulateResponse>(r.out);
  EXPECT_LT(f.analytic().time().dp_comm_s() + f.analytic_iteration_time_s(),
            s.analytic().time().dp_comm_s() + s.analytic_iteration_time_s());
  EXPECT_TRUE(Contains(absl::StrJoin(f.analytic().warnings(), "\n"), "profile_override")) << r.out;

  r = P({"simulate", "--profile", "dgx-a100-80gb", "--model", "megatron-22b", "--tp", "8", "--dp", "4",
         "--global-batch", "16", "--background", "2"});
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "--background")) << Describe(r);
  r = P({"simulate", "--profile", "dgx-a100-80gb", "--model", "megatron-22b", "--tp", "7", "--global-batch", "16"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "INVALID_ARGUMENT") && Contains(r.err, "tensor_parallel")) << Describe(r);
}

TEST_F(ServerTest, CodesignRanksDesignsForAWorkloadMix) {
  // Two designs of 16 DGX A100 nodes that differ only in the inter-node links.
  Result shown = P({"--output", "json", "profiles", "show", "dgx-a100-80gb"});
  ASSERT_EQ(shown.code, 0) << Describe(shown);
  for (const auto& [name, gbps] : {std::pair{"cd-fast", 25.0}, std::pair{"cd-slow", 3.0}}) {
    auto p = FromJson<v1::SystemProfile>(shown.out);
    p.set_name(name);
    p.set_num_nodes(16);
    p.mutable_network_levels(1)->set_bandwidth_gbytes_per_s(gbps);
    std::string json;
    ASSERT_TRUE(google::protobuf::util::MessageToJsonString(p, &json).ok());
    const Result put = P({"profiles", "put", Write(absl::StrCat(name, ".json"), json)});
    ASSERT_EQ(put.code, 0) << Describe(put);
  }
  Result r = P({"codesign", "--profiles", "cd-slow,cd-fast", "--model", "megatron-22b", "--global-batch", "128",
                "--gpus", "64"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "best by time: cd-fast@1")) << Describe(r);
  // --set changes every design alike: with both at 25 GB/s they tie on time (the slow
  // one no longer loses), and each says it was changed.
  r = P({"--output", "json", "codesign", "--profiles", "cd-slow,cd-fast", "--model", "megatron-22b",
         "--global-batch", "128", "--gpus", "64", "--set", "network.infiniband.bandwidth_gbytes_per_s=25"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto same = FromJson<v1::CodesignResponse>(r.out);
  ASSERT_EQ(same.designs_size(), 2);
  EXPECT_DOUBLE_EQ(same.designs(0).weighted_time_s(), same.designs(1).weighted_time_s()) << r.out;
  for (const v1::CodesignDesign& d : same.designs()) {
    ASSERT_EQ(d.warnings_size(), 1) << r.out;
    EXPECT_TRUE(Contains(d.warnings(0), "profile_override")) << d.warnings(0);
  }
  r = P({"--output", "csv", "codesign", "--profiles", "cd-slow,cd-fast", "--model", "megatron-22b", "--global-batch",
         "128", "--gpus", "64"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(absl::StartsWith(r.out, "design,rank,fits_all,weighted_time_s,")) << Describe(r);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3) << Describe(r);  // header, one record a design
  EXPECT_TRUE(Contains(r.out, "\r\ncd-fast@1,1,true,")) << Describe(r);
  const std::string mix = Write("mix.jsonl",
                                "{\"model\": \"megatron-22b\", \"weight\": 2, \"global_batch_size\": 128}\n"
                                "# comment lines are skipped\n"
                                "{\"model\": \"llama3-8b\", \"global_batch_size\": 256, \"name\": \"llama\"}\n");
  r = P({"--output", "json", "codesign", "--profiles", "cd-slow,cd-fast", "--workloads", mix, "--gpus", "64",
         "--objective", "cost"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto c = FromJson<v1::CodesignResponse>(r.out);
  ASSERT_EQ(c.designs_size(), 2);
  const v1::CodesignDesign& slow = c.designs(0);
  const v1::CodesignDesign& fast = c.designs(1);
  ASSERT_EQ(fast.cells_size(), 2);
  EXPECT_EQ(fast.cells(1).workload(), "llama");
  EXPECT_EQ(fast.rank(), 1);
  EXPECT_EQ(slow.rank(), 2);
  // The weighted totals: 2 iterations of the 22B model and 1 of the 8B one, each at the
  // cost of its best plan.
  EXPECT_NEAR(fast.weighted_cost_usd(), 2 * fast.cells(0).best().cost_per_iteration_usd() +
                                            fast.cells(1).best().cost_per_iteration_usd(),
              1e-9 * fast.weighted_cost_usd());
  EXPECT_EQ(c.best_by_cost(), "cd-fast@1");

  // Nothing fits a 22B model on one GPU: exit 1 and say so.
  r = P({"codesign", "--profiles", "cd-fast", "--model", "megatron-22b", "--global-batch", "8", "--gpus", "1"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "no design fits every workload")) << Describe(r);
  r = P({"codesign", "--profiles", "cd-fast,nope", "--model", "megatron-22b", "--global-batch", "8", "--gpus", "8"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "designs[1]") && Contains(r.err, "nope")) << Describe(r);
  r = P({"codesign", "--profiles", "cd-fast", "--gpus", "8"});
  EXPECT_EQ(r.code, 2) << Describe(r);
  r = P({"codesign", "--profiles", ",", "--model", "megatron-22b", "--global-batch", "8", "--gpus", "8"});
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "--profiles")) << Describe(r);
}

}  // namespace
}  // namespace paraplan::cli_test
