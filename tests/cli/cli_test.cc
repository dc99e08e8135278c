// End-to-end tests of the `paraplan` CLI (harness: cli_harness.h): usage errors and bad
// input files without a server; against the shared server, profiles, estimate, plan, CNN
// layer graphs, ingest, accuracy, calibration and the microbenchmark fits; tokens and the
// SIGTERM drain on servers of their own.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

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

// ---------------------------------------------------------------------------------------
// Without a server.

TEST(CliUsage, UsageErrorsExitTwo) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {},
           {"frobnicate"},
           {"--output", "yaml", "models"},
           {"--bogus", "1", "models"},
           {"models", "extra"},
           {"profiles"},
           {"profiles", "frob"},
           {"profiles", "show"},
           {"plan", "--profile", "dgx-a100-80gb", "--model", "gpt3-175b"},  // no --gpus
           {"plan", "--profile", "p", "--model", "m", "--gpus", "8", "--global-batch", "8", "--tp", "x"},
           {"estimate", "--profile", "p", "--model", "m", "--workload", "w.json", "--config", "c.json"},
           {"--timeout", "-1", "models"},
       }) {
    const Result r = RunCli(args);
    EXPECT_EQ(r.code, 2) << absl::StrJoin(args, " ") << "\n" << Describe(r);
    EXPECT_TRUE(Contains(r.err, "usage")) << Describe(r);
  }
  const Result r = RunCli({"plan", "--frob", "1"});
  EXPECT_TRUE(Contains(r.err, "unknown flag --frob")) << Describe(r);
}

TEST(CliUsage, HelpPrintsUsage) {
  Result r = RunCli({"--help"});
  EXPECT_EQ(r.code, 0) << Describe(r);
  for (const char* command : {"profiles list", "estimate --batch", "plan", "ingest", "calibrate", "accuracy", "models"}) {
    EXPECT_TRUE(Contains(r.out, command)) << command;
  }
  r = RunCli({"plan", "--help"});
  EXPECT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "--global-batch")) << Describe(r);
  EXPECT_FALSE(Contains(r.out, "ingest")) << "command help shows that command only";
}

TEST(CliInput, MissingFileExits65AndNamesIt) {
  const std::string path = g_tmp + "/nope.json";
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"profiles", "put", path},
           {"estimate", "--profile", "p", "--model", "m", "--config", path},
           {"estimate", "--batch", path},
           {"ingest", path}}) {
    const Result r = RunCli(args);
    EXPECT_EQ(r.code, 65) << Describe(r);
    EXPECT_TRUE(Contains(r.err, "nope.json")) << Describe(r);
  }
}

TEST(CliInput, MalformedJsonExits65WithFileAndLine) {
  const std::string bad = g_tmp + "/bad.json";
  WriteFile(bad, "{\"name\": \"x\",\n \"gpus_per_node\": }\n");
  Result r = RunCli({"profiles", "put", bad});
  EXPECT_EQ(r.code, 65) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "bad.json:2:")) << Describe(r);

  const std::string typo = g_tmp + "/typo.json";
  WriteFile(typo, "{\"name\": \"x\",\n \"gpus_per_node\": 8,\n \"gpus_per_nod\": 8}\n");
  r = RunCli({"profiles", "put", typo});
  EXPECT_EQ(r.code, 65) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "typo.json:3:") && Contains(r.err, "gpus_per_nod")) << Describe(r);
}

TEST(CliInput, BatchWithNoParsableLineExits65) {
  const std::string path = g_tmp + "/allbad.jsonl";
  WriteFile(path, "{not json\n\n[1, 2]\n");
  const Result r = RunCli({"--server", absl::StrCat("127.0.0.1:", FreePort()), "estimate", "--batch", path});
  EXPECT_EQ(r.code, 65) << Describe(r);
  const std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u) << Describe(r);
  const auto first = FromJson<v1::EstimateResult>(lines[0]);
  EXPECT_EQ(first.error().code(), 3);
  EXPECT_TRUE(Contains(first.error().message(), "allbad.jsonl:1:")) << lines[0];
  EXPECT_TRUE(Contains(FromJson<v1::EstimateResult>(lines[1]).error().message(), "allbad.jsonl:3")) << lines[1];
}

TEST(CliServer, NothingListeningExits69) {
  const RefusingPort held;
  ASSERT_NE(held.port(), 0);
  const std::string dead = held.address();
  Result r = RunCli({"--server", dead, "--timeout", "1", "models"});
  EXPECT_EQ(r.code, 69) << Describe(r);
  EXPECT_TRUE(Contains(r.err, dead)) << Describe(r);
  // PARAPLAN_SERVER sets the default server.
  r = RunCli({"--timeout", "1", "profiles", "list"}, {{"PARAPLAN_SERVER", dead}});
  EXPECT_EQ(r.code, 69) << Describe(r);
  EXPECT_TRUE(Contains(r.err, dead)) << Describe(r);
  // With the default timeout, a refused connection is reported as such once it has been
  // refused for a second, not after the 10 s a slow server is given.
  r = RunCli({"--server", dead, "models"});
  EXPECT_EQ(r.code, 69) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "connection refused or unreachable")) << Describe(r);
}

// ---------------------------------------------------------------------------------------
// Against the shared server.

TEST_F(ServerTest, Health) {
  const Result r = P({"health"});
  EXPECT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "SERVING")) << Describe(r);
}

TEST_F(ServerTest, ProfilesListShowsBuiltIns) {
  Result r = P({"profiles", "list"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  for (const char* name : {"dgx-a100-80gb", "dgx-h100-80gb", "abci-v100-16gb"}) {
    EXPECT_TRUE(Contains(r.out, name)) << name << "\n" << Describe(r);
  }
  r = P({"--output", "json", "profiles", "list"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_GE(FromJson<v1::ListProfilesResponse>(r.out).profiles_size(), 3);
}

TEST_F(ServerTest, ModelsListsPresets) {
  const Result r = P({"models"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "gpt3-175b")) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "175G")) << "GPT-3 has 175 billion parameters\n" << Describe(r);
}

TEST_F(ServerTest, ProfilesPutTwiceWritesVersionsOneAndTwo) {
  Result r = P({"--output", "json", "profiles", "show", "dgx-a100-80gb"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  v1::SystemProfile p = FromJson<v1::SystemProfile>(r.out);
  EXPECT_TRUE(Contains(r.out, "\"gpus_per_node\"")) << "proto field names in JSON output";
  p.set_name("lab-cluster");
  p.clear_version();
  p.clear_created_at();
  p.clear_fit_report();
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(p, &json).ok());  // camelCase input is accepted too
  const std::string path = Write("lab.json", json);

  r = P({"profiles", "put", path});
  EXPECT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, "lab-cluster@1\n");
  r = P({"profiles", "put", path});
  EXPECT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, "lab-cluster@2\n");

  r = P({"--output", "json", "profiles", "show", "lab-cluster@1"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(FromJson<v1::SystemProfile>(r.out).version(), 1);
  r = P({"profiles", "history", "lab-cluster"});
  EXPECT_EQ(r.code, 0) << Describe(r);

  r = P({"profiles", "show", "lab-cluster@9"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "error: NOT_FOUND: ")) << Describe(r);

  r = P({"profiles", "delete", "lab-cluster"});
  EXPECT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(P({"profiles", "show", "lab-cluster"}).code, 1);
}

// `profiles show` names every calibration parameter (the protobuf's own field list, so a
// new term cannot be left out), with its value where the profile sets it: the H200's
// measured FP8 GEMM share among them.
TEST_F(ServerTest, ProfilesShowNamesEveryCalibrationParameter) {
  const Result r = P({"profiles", "show", "dgx-h200-141gb"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const google::protobuf::Descriptor* d = v1::Calibration::descriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = d->field(i);
    if (f->is_repeated()) continue;  // network levels and regimes print as their own lines
    EXPECT_TRUE(Contains(r.out, absl::StrCat(f->name(), " "))) << f->name() << "\n" << Describe(r);
  }
  EXPECT_TRUE(Contains(r.out, "matmul_efficiency_fp8 0.6,")) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "memory_bound_efficiency 0.6,")) << Describe(r);
  // The accelerator line names the power limit and the SM count too.
  EXPECT_TRUE(Contains(r.out, "700 W busy, 75 W idle, power limit rated; 132 SMs")) << Describe(r);
  const Result capped = P({"profiles", "show", "dgx-h200-141gb", "--set", "accelerator.power_limit_w=500"});
  EXPECT_TRUE(Contains(capped.out, "power limit 500 W; 132 SMs")) << Describe(capped);
}

// Measured layer times reach the estimate: two AlexNet layers stored on a copy of the ABCI
// profile, then an estimate of AlexNet on it says so; a bad row exits 65 naming its line.
TEST_F(ServerTest, PutLayerTimesReachTheEstimate) {
  Result r = P({"--output", "json", "profiles", "show", "abci-v100-16gb"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  v1::SystemProfile p = FromJson<v1::SystemProfile>(r.out);
  p.set_name("abci-layer-times");
  p.clear_version();
  p.clear_created_at();
  p.clear_origin();
  p.clear_promoted();
  p.clear_is_default();
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(p, &json).ok());
  r = P({"profiles", "put", Write("abci-layer-times.json", json)});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const std::string csv =
      Write("layer_times.csv", "workload,layer,forward_ms,backward_ms\nalexnet,conv1,1.0,2.0\nalexnet,conv2,0.5,1\n");
  r = P({"profiles", "put-layer-times", "abci-layer-times", csv});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, "abci-layer-times@2: 2 layer times (0 replaced), 2 stored\n");
  r = P({"profiles", "put-layer-times", "abci-layer-times", csv});
  EXPECT_EQ(r.out, "abci-layer-times@3: 2 layer times (2 replaced), 2 stored\n") << Describe(r);
  r = P({"--output", "json", "estimate", "--profile", "abci-layer-times", "--model", "alexnet", "--dp", "4", "--mbs",
         "32", "--global-batch", "128"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "compute of 2 of 22 layers from measured layer times on this profile")) << Describe(r);
  r = P({"profiles", "put-layer-times", "abci-layer-times", Write("bad_times.csv", "alexnet,conv1,abc,2\n")});
  EXPECT_EQ(r.code, 65) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "line 1: forward_ms \"abc\"")) << Describe(r);
  EXPECT_EQ(P({"profiles", "delete", "abci-layer-times"}).code, 0);
}

TEST_F(ServerTest, EstimateTableAndJson) {
  const std::string config = Write("config.json", kGpt3Config);
  Result r = P({"estimate", "--profile", "dgx-a100-80gb", "--model", "gpt3-175b", "--config", config});
  ASSERT_EQ(r.code, 0) << Describe(r);
  for (const char* part : {"pipeline bubble", "MFU", "fits", "tokens/s", "capacity", "bottleneck"}) {
    EXPECT_TRUE(Contains(r.out, part)) << part << "\n" << Describe(r);
  }
  r = P({"--output", "json", "estimate", "--profile", "dgx-a100-80gb", "--model", "gpt3-175b", "--config", config});
  ASSERT_EQ(r.code, 0) << Describe(r);
  for (const char* field : {"\"iteration_time_s\"", "\"time\"", "\"memory\"", "\"mfu\"", "\"bottleneck\"",
                            "\"energy_per_iteration_j\"", "\"cost_per_iteration_usd\"", "\"pipeline_bubble_s\""}) {
    EXPECT_TRUE(Contains(r.out, field)) << field;
  }
  const auto e = FromJson<v1::Estimate>(r.out);
  EXPECT_GT(e.iteration_time_s(), 0);
  EXPECT_EQ(e.config().tensor_parallel(), 8);

  const std::string bad = Write("bad_config.json", R"({"tensor_parallel": 7, "global_batch_size": 8})");
  r = P({"estimate", "--profile", "dgx-a100-80gb", "--model", "gpt3-175b", "--config", bad});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "error: INVALID_ARGUMENT: ") && Contains(r.err, "config.tensor_parallel"))
      << Describe(r);
}

TEST_F(ServerTest, EstimateBatchAnswersEveryLineInOrder) {
  const std::string good = absl::StrCat(R"({"profile": "dgx-a100-80gb", "model": "gpt3-175b", "config": )",
                                        kGpt3Config, "}");
  std::string bad = good;
  bad.replace(bad.find("\"pipeline_parallel\": 8"), 22, "\"pipeline_parallel\": 5");
  // A misspelt field is an error naming it, not an answer as if it were absent.
  std::string typo = good;
  typo.replace(typo.find("\"pipeline_parallel\": 8"), 22, "\"pipeline_paralel\": 8");
  const std::string path =
      Write("batch.jsonl", absl::StrCat(absl::StrReplaceAll(good, {{"\n", " "}}), "\n\n",
                                        absl::StrReplaceAll(bad, {{"\n", " "}}), "\n{not json\n",
                                        absl::StrReplaceAll(typo, {{"\n", " "}}), "\n"));
  const Result r = P({"estimate", "--batch", path});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 4u) << Describe(r);
  const auto unknown = FromJson<v1::EstimateResult>(lines[3]);
  EXPECT_EQ(unknown.error().code(), 3) << lines[3];
  EXPECT_TRUE(Contains(unknown.error().message(), "batch.jsonl:5") &&
              Contains(unknown.error().message(), "pipeline_paralel"))
      << "names the line and the field\n" << lines[3];
  EXPECT_GT(FromJson<v1::Estimate>(lines[0]).iteration_time_s(), 0) << lines[0];
  EXPECT_TRUE(Contains(lines[1], "\"error\"")) << lines[1];
  EXPECT_EQ(FromJson<v1::EstimateResult>(lines[1]).error().code(), 3) << lines[1];
  const auto parse_error = FromJson<v1::EstimateResult>(lines[2]);
  EXPECT_EQ(parse_error.error().code(), 3);
  EXPECT_TRUE(Contains(parse_error.error().message(), "batch.jsonl:4")) << "names the line\n" << lines[2];
}

TEST_F(ServerTest, PlanJsonAndTable) {
  Result r = P({"--output", "json", "plan", "--profile", "dgx-a100-80gb", "--model", "gpt3-175b", "--gpus", "1024",
                "--global-batch", "1536"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "\"plans\"") && Contains(r.out, "\"iteration_time_s\"")) << Describe(r);
  for (const char* field : {"\"pareto\"", "\"candidates_enumerated\"", "\"candidates_feasible\"",
                            "\"candidates_evaluated\"", "\"search_time_s\"", "\"truncated\""}) {
    EXPECT_TRUE(Contains(r.out, field)) << field;
  }
  const auto plan = FromJson<v1::PlanResponse>(r.out);
  ASSERT_EQ(plan.plans_size(), 10);
  for (int i = 1; i < plan.plans_size(); ++i) {
    EXPECT_LE(plan.plans(i - 1).iteration_time_s(), plan.plans(i).iteration_time_s()) << "ranked best first";
  }

  r = P({"plan", "--profile", "dgx-a100-80gb", "--model", "gpt3-175b", "--gpus", "1024", "--global-batch", "1536",
         "--top", "5"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "MFU %") && Contains(r.out, "candidates enumerated")) << Describe(r);

  r = P({"--output", "json", "plan", "--profile", "dgx-a100-80gb", "--model", "gpt3-175b", "--gpus", "512",
         "--global-batch", "512", "--tp", "4", "--max-pp", "16", "--recompute", "full"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto constrained = FromJson<v1::PlanResponse>(r.out);
  EXPECT_GT(constrained.plans_size(), 0);
  for (const v1::Estimate& e : constrained.plans()) {
    EXPECT_EQ(e.config().tensor_parallel(), 4);
    EXPECT_LE(e.config().pipeline_parallel(), 16);
    EXPECT_EQ(e.config().recompute(), v1::RECOMPUTE_FULL);
  }

  // Nothing fits: the table says why, exit 1.
  r = P({"plan", "--profile", "abci-v100-16gb", "--model", "gpt3-175b", "--gpus", "8", "--global-batch", "8"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "profile abci-v100-16gb@1\n\nno plan: no configuration fits in memory")) << Describe(r);
  EXPECT_EQ(r.err, "") << "the table says it";
  r = P({"-o", "json", "plan", "--profile", "abci-v100-16gb", "--model", "gpt3-175b", "--gpus", "8", "--global-batch",
         "8"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_EQ(FromJson<v1::PlanResponse>(r.out).plans_size(), 0);
  EXPECT_TRUE(Contains(r.err, "paraplan: no plan fits (no configuration fits in memory")) << Describe(r);
}

TEST_F(ServerTest, CnnLayerGraph) {
  if (g_paths.examples.empty()) GTEST_SKIP() << "no --examples directory";
  Result r = P({"--output", "json", "estimate", "--profile", "abci-v100-16gb", "--workload",
                g_paths.examples + "/cnn-small.json", "--config", g_paths.examples + "/config-cnn-spatial.json"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto e = FromJson<v1::Estimate>(r.out);
  EXPECT_EQ(e.config().spatial_parallel(), 4);
  EXPECT_GT(e.time().spatial_comm_s(), 0) << "halo exchange";
  EXPECT_EQ(e.time().tp_comm_s(), 0) << "no filter or channel split";
  EXPECT_TRUE(e.memory().fits());
  // The text names the spatial part and leaves out the empty tensor-parallel one.
  r = P({"estimate", "--profile", "abci-v100-16gb", "--workload", g_paths.examples + "/cnn-small.json", "--config",
         g_paths.examples + "/config-cnn-spatial.json"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "\nspatial comm (halos, cut)  ")) << Describe(r);
  EXPECT_FALSE(Contains(r.out, "tensor-parallel comm")) << Describe(r);

  // With NCCL halos (ChainerMN's host-staged tensors make every split slower than data
  // parallelism on these nodes), splits make the top 20.
  r = P({"--output", "json", "plan", "--profile", "abci-v100-16gb", "--workload", g_paths.examples + "/cnn-small.json",
         "--gpus", "16", "--global-batch", "16", "--top", "20", "--set", "calibration.halo_host_staged=false"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  bool split = false;
  const auto plan = FromJson<v1::PlanResponse>(r.out);
  for (const v1::Estimate& p : plan.plans()) {
    const v1::ParallelConfig& c = p.config();
    split |= std::max(1, c.spatial_parallel()) * std::max(1, c.filter_parallel()) * std::max(1, c.channel_parallel()) > 1;
  }
  EXPECT_TRUE(split) << "plans include ParaDL spatial / filter / channel splits";

  // docs/accuracy.md's walk-through: ParaDL's 4-way spatial AlexNet waits on its group
  // root's loader; worker processes on all the root's cores would wait less.
  const std::vector<std::string> walk = {"--output", "json", "estimate", "--profile", "abci-v100-16gb", "--workload",
                                         g_paths.examples + "/paradl-alexnet.json", "--config",
                                         g_paths.examples + "/config-paradl-alexnet-spatial4.json"};
  r = P(walk);
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto thread_pool = FromJson<v1::Estimate>(r.out);
  EXPECT_EQ(thread_pool.bottleneck(), "io");
  std::vector<std::string> workers = walk;
  workers.insert(workers.end(), {"--set", "calibration.loader_cores_per_process=0"});
  r = P(workers);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_LT(FromJson<v1::Estimate>(r.out).iteration_time_s(), thread_pool.iteration_time_s());
}

TEST_F(ServerTest, IngestReportsEveryLine) {
  const std::string m = absl::StrCat(
      R"({"id": "cli-test-1", "profile": "dgx-h100-80gb", )",
      R"("workload": {"name": "gpt3", "transformer": {"num_layers": 96, "hidden_size": 12288, )",
      R"("num_attention_heads": 96, "seq_length": 2048, "vocab_size": 51200}}, "config": )",
      absl::StrReplaceAll(kGpt3Config, {{"\n", " "}}), R"(, "iteration_time_s": 9.5, "labels": {"job": "a"}})");
  // A field this version does not know (a typo, or a newer client's) is refused by name,
  // never answered as if it were absent; free-form notes go in labels.
  const std::string unknown = absl::StrReplaceAll(m, {{R"("id": "cli-test-1")", R"("id": "cli-test-2", "note": "x")"}});
  const std::string path = Write("measurements.jsonl", absl::StrCat(m, "\n{broken\n", unknown, "\n"));
  Result r = P({"ingest", path});
  ASSERT_EQ(r.code, 1) << "a line is rejected\n" << Describe(r);
  EXPECT_TRUE(Contains(r.out, "cli-test-1") && Contains(r.out, "accepted")) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "measurements.jsonl:2")) << "the bad line is named\n" << Describe(r);
  EXPECT_TRUE(Contains(r.out, "measurements.jsonl:3") && Contains(r.out, "note")) << "the unknown field is named\n"
                                                                                   << Describe(r);
  EXPECT_TRUE(Contains(r.out, "1 accepted, 0 duplicate, 2 rejected")) << Describe(r);

  r = P({"--output", "json", "ingest", path});
  ASSERT_EQ(r.code, 1) << Describe(r);
  const auto again = FromJson<v1::IngestMeasurementsResponse>(r.out);
  ASSERT_EQ(again.results_size(), 3);
  EXPECT_EQ(again.results(0).status(), v1::IngestResult::STATUS_DUPLICATE);
  EXPECT_EQ(again.results(1).status(), v1::IngestResult::STATUS_REJECTED);
  EXPECT_EQ(again.results(2).status(), v1::IngestResult::STATUS_REJECTED);
  EXPECT_EQ(again.duplicates(), 1);

  r = P({"--output", "json", "accuracy", "--profile", "dgx-h100-80gb", "--label", "job"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto acc = FromJson<v1::AccuracyReport>(r.out);
  EXPECT_EQ(acc.overall().count(), 1);
  EXPECT_EQ(acc.by_label().count("a"), 1u) << r.out;
}

TEST_F(ServerTest, IngestAccuracyCalibratePublishedRuns) {
  const std::string data = g_paths.data + "/korthikanti22_iteration_times.jsonl";
  if (g_paths.data.empty() || access(data.c_str(), R_OK) != 0) GTEST_SKIP() << "no public measurements";
  Result r = P({"ingest", data});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "9 accepted")) << Describe(r);
  r = P({"ingest", data});
  EXPECT_TRUE(Contains(r.out, "0 accepted, 9 duplicate")) << Describe(r);
  r = P({"--output", "json", "accuracy", "--profile", "dgx-a100-80gb"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(FromJson<v1::AccuracyReport>(r.out).overall().count(), 9);
  r = P({"accuracy", "--profile", "dgx-a100-80gb"});
  EXPECT_TRUE(Contains(r.out, "MAPE")) << Describe(r);
  r = P({"calibrate", "--profile", "dgx-a100-80gb", "--dry-run"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "dry run: nothing stored")) << Describe(r);
  r = P({"calibrate", "--profile", "dgx-a100-80gb"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  // Korthikanti's fp16 runs: the fit cross-validates better than the defaults (2.78 % vs
  // 2.93 %) and becomes the default.
  EXPECT_TRUE(Contains(r.out, "new version dgx-a100-80gb@2 is the default: promoted: cross-validated"))
      << Describe(r);
  // Every run crosses InfiniBand, the profile's widest regime: the fit is profile-wide,
  // and the largest runs were held out and predicted from the rest.
  EXPECT_TRUE(Contains(r.out, "applies: profile-wide")) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "largest runs held out: ")) << Describe(r);
  // It ran as an operation; the wait names it on stderr with its phase.
  EXPECT_TRUE(Contains(r.err, "calibration cal-") && Contains(r.err, "of dgx-a100-80gb: running")) << Describe(r);
  // The same measurements again: nothing fitted or stored.
  r = P({"calibrate", "--profile", "dgx-a100-80gb"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "up to date: no measurement since dgx-a100-80gb@2 was calibrated")) << Describe(r);
  // --no-wait names the operation; --operation shows it (its result once done).
  r = P({"--output", "json", "calibrate", "--profile", "dgx-a100-80gb", "--no-wait"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const v1::CalibrationOperation op = FromJson<v1::CalibrationOperation>(r.out);
  ASSERT_FALSE(op.id().empty()) << Describe(r);
  for (int i = 0; i < 200; ++i) {
    r = P({"calibrate", "--operation", op.id()});
    if (!Contains(r.out, ": running")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "up to date")) << Describe(r);
  r = P({"calibrate", "--operation", "cal-0000000000000000"});
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(Contains(r.err, "NOT_FOUND")) << Describe(r);
  r = P({"profiles", "history", "dgx-a100-80gb"});
  EXPECT_TRUE(Contains(r.out, "calibration") && Contains(r.out, "builtin")) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "largest held out") && Contains(r.out, "(was ")) << Describe(r);
  r = P({"profiles", "show", "dgx-a100-80gb@2"});
  // Two of the nine runs fit in one node (too few to fit on their own: pooled with the rest).
  EXPECT_TRUE(Contains(r.out, "regime nvlink: 2 measurements, up to 8 GPUs") &&
              Contains(r.out, "regime infiniband: 7 measurements, up to 2240 GPUs"))
      << Describe(r);
  // What those runs exercised (a GPT in fp16 / bf16 with TP and PP): an FP8 estimate on
  // it would lie outside the envelope.
  EXPECT_TRUE(Contains(r.out, "measured: transformer, tensor_parallel, pipeline_parallel")) << Describe(r);
  // Estimates carry their interval: wide on the built-in (never calibrated), and inside
  // the envelope of @2 for a run like those measured.
  const std::string config = Write("interval-config.json",
                                   R"({"tensor_parallel": 8, "pipeline_parallel": 1, "data_parallel": 8,
                                       "micro_batch_size": 1, "global_batch_size": 64,
                                       "recompute": "RECOMPUTE_SELECTIVE", "sequence_parallel": true})");
  r = P({"--output", "json", "estimate", "--profile", "dgx-a100-80gb@1", "--model", "megatron-22b", "--config", config});
  ASSERT_EQ(r.code, 0) << Describe(r);
  v1::Estimate builtin = FromJson<v1::Estimate>(r.out);
  EXPECT_FALSE(builtin.in_envelope());
  EXPECT_NEAR(builtin.interval().high_s() / builtin.iteration_time_s(), 1.3552, 2e-3) << r.out;
  r = P({"--output", "json", "estimate", "--profile", "dgx-a100-80gb@2", "--model", "megatron-22b", "--config", config});
  ASSERT_EQ(r.code, 0) << Describe(r);
  v1::Estimate calibrated = FromJson<v1::Estimate>(r.out);
  EXPECT_TRUE(calibrated.in_envelope()) << r.out;
  EXPECT_LT(calibrated.interval().high_s() / calibrated.iteration_time_s(),
            builtin.interval().high_s() / builtin.iteration_time_s());
  EXPECT_GT(calibrated.interval().low_s(), 0);
  r = P({"estimate", "--profile", "dgx-a100-80gb@1", "--model", "megatron-22b", "--config", config});
  EXPECT_TRUE(Contains(r.out, "outside the calibrated envelope") && Contains(r.out, "not calibrated")) << Describe(r);
  r = P({"profiles", "promote", "dgx-a100-80gb@2"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "dgx-a100-80gb@2 is now the default")) << Describe(r);
  r = P({"profiles", "promote", "dgx-a100-80gb@1"});  // and back
  ASSERT_EQ(r.code, 0) << Describe(r);

  // The server exports what happened.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(g_server->metrics_port()));
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string get = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  ASSERT_EQ(write(fd, get.data(), get.size()), static_cast<ssize_t>(get.size()));
  std::string metrics;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) metrics.append(buf, static_cast<size_t>(n));
  close(fd);
  for (const char* name : {"paraplan_rpc_requests_total", "paraplan_prediction_mape_ratio", "paraplan_calibrations_total",
                           "paraplan_calibration_disagreements{profile=\"dgx-a100-80gb\"} 0"}) {
    EXPECT_TRUE(Contains(metrics, name)) << name;
  }
}

// SIGTERM while a plan is in flight: the plan completes (or, if it arrived after the
// listener closed, fails cleanly as unavailable), the server exits 0, the database is
// intact and the request was logged.
// Microbenchmarks as profile input, end to end: nccl-tests output and a GEMM sweep fitted
// into new versions of copies of the built-in profiles, then used for a plan.
TEST_F(ServerTest, FitNetworkAndGemmFromMicrobenchmarks) {
  const std::string nccl = g_paths.data + "/nccl_tests_a100/all_reduce_8gpu.csv";
  const std::string gemm = g_paths.data + "/h100_microbench/gemm.csv";
  if (g_paths.data.empty() || access(nccl.c_str(), R_OK) != 0) GTEST_SKIP() << "no public measurements";
  Result r = P({"profiles", "fit-network", "dgx-a100-80gb", nccl, "--dry-run"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "dry run: nothing stored") && Contains(r.out, "level nvlink") &&
              Contains(r.out, "1019 of 1024 points within 5%"))
      << Describe(r);
  r = P({"profiles", "fit-network", "dgx-a100-80gb", nccl});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "new version dgx-a100-80gb@")) << Describe(r);
  r = P({"profiles", "history", "dgx-a100-80gb"});
  EXPECT_TRUE(Contains(r.out, "microbenchmark")) << Describe(r);
  // A file that names no collective needs --collective; a bad level is named.
  r = P({"profiles", "fit-network", "dgx-a100-80gb", gemm});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "name the collective")) << Describe(r);
  r = P({"profiles", "fit-network", "dgx-a100-80gb", nccl, "--level", "ethernet"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "ethernet")) << Describe(r);
  // A group size in the name beyond any cluster (once an uncaught std::out_of_range: UNKNOWN).
  const std::string huge = g_tmp + "/all_reduce_99999999999gpu.csv";
  WriteFile(huge, Slurp(nccl));
  r = P({"profiles", "fit-network", "dgx-a100-80gb", huge, "--dry-run"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "99999999999 GPUs; at most 16777216")) << Describe(r);
  r = P({"profiles", "fit-gemm", "dgx-h100-80gb", gemm});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "matmul_efficiency") && Contains(r.out, "shapes within 10%")) << Describe(r);
  r = P({"plan", "--profile", "dgx-h100-80gb", "--model", "llama3-8b", "--gpus", "8", "--global-batch", "32",
         "--top", "1"});
  EXPECT_EQ(r.code, 0) << Describe(r);
}

// Tokens from --token or $PARAPLAN_TOKEN; the server's refusals come back as exit 1 with
// the gRPC code.
TEST(CliAuth, TokensFromFlagOrEnvironment) {
  if (g_paths.server.empty()) GTEST_SKIP() << "no --server binary given";
  const std::string tokens = g_tmp + "/tokens.txt";
  std::ofstream(tokens) << "reader-token-0123456789 reader\nwriter-token-0123456789 writer\n";
  Server server("auth");
  ASSERT_TRUE(server.Start({"--tokens-file", tokens})) << Slurp(server.log());
  Result r = RunCli({"--server", server.address(), "profiles", "list"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "UNAUTHENTICATED")) << Describe(r);
  r = RunCli({"--server", server.address(), "--token", "reader-token-0123456789", "profiles", "list"});
  EXPECT_EQ(r.code, 0) << Describe(r);
  r = RunCli({"--server", server.address(), "profiles", "delete", "dgx-h100-80gb"},
             {{"PARAPLAN_TOKEN", "writer-token-0123456789"}});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "PERMISSION_DENIED") && Contains(r.err, "needs role admin")) << Describe(r);
  EXPECT_EQ(server.Stop(), 0);
}

TEST(CliDrain, SigtermLetsTheInFlightPlanFinish) {
  if (g_paths.server.empty()) GTEST_SKIP() << "no --server binary given";
  Server server("drain");
  ASSERT_TRUE(server.Start()) << Slurp(server.log());
  ASSERT_EQ(RunCli({"--server", server.address(), "profiles", "list"}).code, 0);
  const std::string out = g_tmp + "/inflight.out";
  const pid_t client =
      Spawn({g_paths.cli, "--server", server.address(), "--output", "json", "plan", "--profile", "dgx-a100-80gb",
             "--model", "gpt3-175b", "--gpus", "4096,2048,1024,512", "--global-batch", "1536"},
            out, g_tmp + "/inflight.err");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(server.Stop(), 0) << Slurp(server.log());
  const int client_code = WaitFor(client, std::chrono::seconds(60));
  if (client_code == 0) {
    EXPECT_TRUE(Contains(Slurp(out), "iteration_time_s"));
  } else {
    EXPECT_EQ(client_code, 69) << Slurp(g_tmp + "/inflight.err");
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(server.db().c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "ok");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  EXPECT_TRUE(Contains(Slurp(server.log()), "rpc=ListProfiles code=OK")) << "one log line per request";
}

}  // namespace
}  // namespace paraplan::cli_test
