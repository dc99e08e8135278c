// End-to-end tests of the `paraplan` CLI: the real binary, run as a child process, against
// a real `paraplan-server` on a free loopback port with a temporary SQLite file.
//
// usage: cli_test --cli PATH [--server PATH] [--data DIR] [--examples DIR] [gtest flags]
// Without --server only the tests that need no server run (usage errors, bad input
// files, server unavailable); the others are skipped. The server is started once for the
// whole program (a second one for the SIGTERM test) and is always stopped: at the end,
// and by the kernel (PR_SET_PDEATHSIG) should this program die first.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "paraplan/v1/services.pb.h"

namespace {

namespace v1 = paraplan::v1;

struct Paths {
  std::string cli, server, data, examples;
};
Paths g_paths;
std::string g_tmp;  // scratch directory, removed at exit

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return 0;
  }
  close(fd);
  return ntohs(addr.sin_port);
}

// Starts `argv` with stdout and stderr sent to files; env entries are added to the
// child's environment. The child dies with this process.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& out_path, const std::string& err_path,
            const std::map<std::string, std::string>& env = {}) {
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid != 0) return pid;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
  const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out < 0 || err < 0) _exit(127);
  dup2(out, 1);
  dup2(err, 2);
  const int in = open("/dev/null", O_RDONLY);
  if (in >= 0) dup2(in, 0);
  for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execv(args[0], args.data());
  _exit(127);
}

// Waits for `pid` up to `limit`; kills it (SIGKILL) past that. The exit code, or 128+signal.
int WaitFor(pid_t pid, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > until) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return 128 + SIGKILL;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct Result {
  int code = -1;
  std::string out, err;
};

// Runs the CLI with `args` and returns its exit code and output.
Result RunCli(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {}) {
  std::vector<std::string> argv = {g_paths.cli};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string out = g_tmp + "/cli.out", err = g_tmp + "/cli.err";
  Result r;
  r.code = WaitFor(Spawn(argv, out, err, env), std::chrono::seconds(120));
  r.out = Slurp(out);
  r.err = Slurp(err);
  return r;
}

std::string Describe(const Result& r) {
  return absl::StrCat("exit ", r.code, "\n--- stdout\n", r.out.substr(0, 2000), "\n--- stderr\n",
                      r.err.substr(0, 2000));
}

template <typename T>
T FromJson(const std::string& text) {
  T m;
  const auto s = google::protobuf::util::JsonStringToMessage(text, &m);
  EXPECT_TRUE(s.ok()) << s.message() << "\n" << text.substr(0, 1000);
  return m;
}

// A paraplan-server on free loopback ports with its own SQLite file.
class Server {
 public:
  explicit Server(const std::string& name) : dir_(absl::StrCat(g_tmp, "/", name)) { mkdir(dir_.c_str(), 0755); }
  ~Server() { Stop(); }

  // Starts the server (with `extra` flags) and waits (bounded) until it answers a
  // health check.
  bool Start(const std::vector<std::string>& extra = {}) {
    port_ = FreePort();
    metrics_port_ = FreePort();
    std::vector<std::string> argv = {g_paths.server, "--listen", absl::StrCat("127.0.0.1:", port_), "--db", db(),
                                     "--metrics-listen", absl::StrCat("127.0.0.1:", metrics_port_)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    pid_ = Spawn(argv, dir_ + "/server.out", log());
    for (int i = 0; i < 150; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;  // it exited
      }
      if (RunCli({"--server", address(), "--timeout", "1", "health"}).code == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  // SIGTERM, then SIGKILL if it has not exited within 20 s. Its exit code.
  int Stop() {
    if (pid_ <= 0) return -1;
    kill(pid_, SIGTERM);
    const int code = WaitFor(pid_, std::chrono::seconds(20));
    pid_ = -1;
    return code;
  }
  pid_t pid() const { return pid_; }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }
  int metrics_port() const { return metrics_port_; }
  std::string db() const { return dir_ + "/paraplan.db"; }
  std::string log() const { return dir_ + "/server.err"; }

 private:
  std::string dir_;
  int port_ = 0, metrics_port_ = 0;
  pid_t pid_ = -1;
};

Server* g_server = nullptr;  // shared by the tests that need one

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (g_paths.server.empty()) GTEST_SKIP() << "no --server binary given";
    if (g_server == nullptr) {
      g_server = new Server("shared");
      ASSERT_TRUE(g_server->Start()) << "paraplan-server did not start:\n" << Slurp(g_server->log());
    }
  }
  // The CLI against the shared server.
  Result P(std::vector<std::string> args) {
    args.insert(args.begin(), {"--server", g_server->address()});
    return RunCli(args);
  }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = absl::StrCat(g_tmp, "/", name);
    WriteFile(path, text);
    return path;
  }
};

// The ParallelConfig of Narayanan et al.'s GPT-3 175B run on 1024 A100s.
constexpr char kGpt3Config[] =
    R"({"tensor_parallel": 8, "pipeline_parallel": 8, "data_parallel": 16, "micro_batch_size": 1,
        "global_batch_size": 1536, "recompute": "RECOMPUTE_SELECTIVE", "sequence_parallel": true,
        "virtual_pipeline_stages": 3})";

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
  const std::string dead = absl::StrCat("127.0.0.1:", FreePort());
  Result r = RunCli({"--server", dead, "--timeout", "1", "models"});
  EXPECT_EQ(r.code, 69) << Describe(r);
  EXPECT_TRUE(Contains(r.err, dead)) << Describe(r);
  // PARAPLAN_SERVER sets the default server.
  r = RunCli({"--timeout", "1", "profiles", "list"}, {{"PARAPLAN_SERVER", dead}});
  EXPECT_EQ(r.code, 69) << Describe(r);
  EXPECT_TRUE(Contains(r.err, dead)) << Describe(r);
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
  const std::string good = absl::StrCat(R"({"profile": "dgx-a100-80gb", "model": "gpt3-175b", "note": "ignored", "config": )",
                                        kGpt3Config, "}");
  std::string bad = good;
  bad.replace(bad.find("\"pipeline_parallel\": 8"), 22, "\"pipeline_parallel\": 5");
  const std::string path = Write("batch.jsonl", absl::StrCat(absl::StrReplaceAll(good, {{"\n", " "}}), "\n\n",
                                                              absl::StrReplaceAll(bad, {{"\n", " "}}), "\n{not json\n"));
  const Result r = P({"estimate", "--batch", path});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << Describe(r);
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

  r = P({"plan", "--profile", "abci-v100-16gb", "--model", "gpt3-175b", "--gpus", "8", "--global-batch", "8"});
  EXPECT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "no plan")) << Describe(r);
}

TEST_F(ServerTest, CnnLayerGraph) {
  if (g_paths.examples.empty()) GTEST_SKIP() << "no --examples directory";
  Result r = P({"--output", "json", "estimate", "--profile", "abci-v100-16gb", "--workload",
                g_paths.examples + "/cnn-small.json", "--config", g_paths.examples + "/config-cnn-spatial.json"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto e = FromJson<v1::Estimate>(r.out);
  EXPECT_EQ(e.config().spatial_parallel(), 4);
  EXPECT_GT(e.time().tp_comm_s(), 0) << "halo exchange";
  EXPECT_TRUE(e.memory().fits());

  r = P({"--output", "json", "plan", "--profile", "abci-v100-16gb", "--workload", g_paths.examples + "/cnn-small.json",
         "--gpus", "16", "--global-batch", "16", "--top", "20"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  bool split = false;
  const auto plan = FromJson<v1::PlanResponse>(r.out);
  for (const v1::Estimate& p : plan.plans()) {
    const v1::ParallelConfig& c = p.config();
    split |= std::max(1, c.spatial_parallel()) * std::max(1, c.filter_parallel()) * std::max(1, c.channel_parallel()) > 1;
  }
  EXPECT_TRUE(split) << "plans include ParaDL spatial / filter / channel splits";
}

TEST_F(ServerTest, IngestReportsEveryLine) {
  const std::string m = absl::StrCat(
      R"({"id": "cli-test-1", "profile": "dgx-h100-80gb", "note": "unknown fields are ignored", )",
      R"("workload": {"name": "gpt3", "transformer": {"num_layers": 96, "hidden_size": 12288, )",
      R"("num_attention_heads": 96, "seq_length": 2048, "vocab_size": 51200}}, "config": )",
      absl::StrReplaceAll(kGpt3Config, {{"\n", " "}}), R"(, "iteration_time_s": 9.5, "labels": {"job": "a"}})");
  const std::string path = Write("measurements.jsonl", absl::StrCat(m, "\n{broken\n"));
  Result r = P({"ingest", path});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "cli-test-1") && Contains(r.out, "accepted")) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "measurements.jsonl:2")) << "the bad line is named\n" << Describe(r);
  EXPECT_TRUE(Contains(r.out, "1 accepted, 0 duplicate, 1 rejected")) << Describe(r);

  r = P({"--output", "json", "ingest", path});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto again = FromJson<v1::IngestMeasurementsResponse>(r.out);
  ASSERT_EQ(again.results_size(), 2);
  EXPECT_EQ(again.results(0).status(), v1::IngestResult::STATUS_DUPLICATE);
  EXPECT_EQ(again.results(1).status(), v1::IngestResult::STATUS_REJECTED);
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
  EXPECT_TRUE(Contains(r.out, "cross-validated") && Contains(r.out, "dgx-a100-80gb@2 stored as a candidate"))
      << Describe(r);
  r = P({"profiles", "history", "dgx-a100-80gb"});
  EXPECT_TRUE(Contains(r.out, "calibration") && Contains(r.out, "builtin")) << Describe(r);
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
  for (const char* name : {"paraplan_rpc_requests_total", "paraplan_prediction_mape_ratio", "paraplan_calibrations_total"}) {
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

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--cli") {
      g_paths.cli = value;
    } else if (flag == "--server") {
      g_paths.server = value;
    } else if (flag == "--data") {
      g_paths.data = value;
    } else if (flag == "--examples") {
      g_paths.examples = value;
    } else {
      std::fprintf(stderr, "cli_test: unknown argument %s\n", flag.c_str());
      return 2;
    }
  }
  if (g_paths.cli.empty()) {
    std::fprintf(stderr, "usage: cli_test --cli PATH [--server PATH] [--data DIR] [--examples DIR]\n");
    return 2;
  }
  char tmpl[] = "/tmp/paraplan-cli-test-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  g_tmp = tmpl;
  const int result = RUN_ALL_TESTS();
  delete g_server;  // stops it
  const std::string rm = absl::StrCat("rm -rf '", g_tmp, "'");
  if (std::system(rm.c_str()) != 0) std::fprintf(stderr, "cli_test: could not remove %s\n", g_tmp.c_str());
  return result;
}
