// End-to-end tests of the `paraplan` CLI: the real binary, run as a child process, against
// a real `paraplan-server` on a free loopback port with a temporary SQLite file.
//
// usage: cli_test --cli PATH [--server PATH] [--data DIR] [--examples DIR] [--screenshot PNG]
//                 [gtest flags]
// --screenshot copies the plan report's headless-Chromium screenshot there (docs/cli.md's
// docs/plan-report.png is made so).
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

#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "paraplan/v1/network.pb.h"
#include "paraplan/v1/services.pb.h"

namespace {

namespace v1 = paraplan::v1;

struct Paths {
  std::string cli, server, data, examples;
  std::string screenshot;  // where the Chromium test copies its screenshot ("" = nowhere)
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

// Starts `argv` with stdout and stderr sent to files and stdin read from `in_path`;
// env entries are added to the child's environment. The child dies with this process.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& out_path, const std::string& err_path,
            const std::map<std::string, std::string>& env = {}, const std::string& in_path = "/dev/null") {
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
  const int in = open(in_path.c_str(), O_RDONLY);
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

// Runs the CLI with `args` (and `stdin_text` on its standard input) and returns its exit
// code and output.
Result RunCli(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {},
              const std::string& stdin_text = "") {
  std::vector<std::string> argv = {g_paths.cli};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string out = g_tmp + "/cli.out", err = g_tmp + "/cli.err", in = g_tmp + "/cli.in";
  WriteFile(in, stdin_text);
  Result r;
  r.code = WaitFor(Spawn(argv, out, err, env, in), std::chrono::seconds(120));
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

// The two sides of a comparison's pretty JSON, {\n "A": Estimate,\n "B": Estimate\n},
// cut at the second key (each side is printed as PrintJson prints an Estimate).
std::pair<v1::Estimate, v1::Estimate> ComparisonSides(const std::string& out, const std::string& a,
                                                      const std::string& b) {
  const std::string first = absl::StrCat("{\n \"", a, "\": "), second = absl::StrCat(",\n \"", b, "\": ");
  const size_t at = out.find(second);
  EXPECT_EQ(out.rfind(first, 0), 0u) << out.substr(0, 200);
  EXPECT_NE(at, std::string::npos) << out.substr(0, 200);
  if (out.rfind(first, 0) != 0 || at == std::string::npos || !absl::EndsWith(out, "\n}\n")) return {};
  return {FromJson<v1::Estimate>(out.substr(first.size(), at - first.size())),
          FromJson<v1::Estimate>(out.substr(at + second.size(), out.size() - at - second.size() - 3))};
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
  Result P(std::vector<std::string> args, const std::string& stdin_text = "") {
    args.insert(args.begin(), {"--server", g_server->address()});
    return RunCli(args, {}, stdin_text);
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

// ---------------------------------------------------------------------------------------
// plan --emit: launcher arguments of the best plan, for a search pinned down to one
// configuration (what the planner still chooses, overlap of the parameter gather and the
// rank order, is decided by its deterministic ranking).

std::vector<std::string> Gpt3PinnedPlan(const std::string& framework) {
  return {"plan", "--profile", "dgx-a100-80gb@1", "--model", "gpt3-175b", "--gpus", "1024", "--global-batch", "1536",
          "--tp", "8", "--pp", "8", "--dp", "16", "--cp", "1", "--mbs", "1", "--vpp", "3", "--zero", "1",
          "--recompute", "selective", "--sp", "on", "--overlap-grad-reduce", "on", "--emit", framework};
}

constexpr char kGpt3Header[] =
    "1024 GPUs (128 nodes x 8)\n"
    "# plan: TP8 PP8 DP16 CP1 EP1, schedule interleaved 1f1b v3, micro-batch 1, global batch 1536, recompute "
    "selective, sequence parallel, ZeRO-1, bf16\n";

TEST_F(ServerTest, PlanEmitMegatron) {
  const Result r = P(Gpt3PinnedPlan("megatron"));
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, absl::StrCat("# Megatron-LM pretrain_gpt.py arguments for gpt3-175b on dgx-a100-80gb@1: ",
                                kGpt3Header,
                                "torchrun --nproc_per_node 8 --nnodes 128 pretrain_gpt.py \\\n"
                                "    --tensor-model-parallel-size 8 \\\n"
                                "    --pipeline-model-parallel-size 8 \\\n"
                                "    --num-layers-per-virtual-pipeline-stage 4 \\\n"
                                "    --context-parallel-size 1 \\\n"
                                "    --expert-model-parallel-size 1 \\\n"
                                "    --sequence-parallel \\\n"
                                "    --micro-batch-size 1 \\\n"
                                "    --global-batch-size 1536 \\\n"
                                "    --recompute-granularity selective \\\n"
                                "    --use-distributed-optimizer \\\n"
                                "    --overlap-grad-reduce \\\n"
                                "    --overlap-param-gather \\\n"
                                "    --attention-dropout 0.1 \\\n"
                                "    --hidden-dropout 0.1 \\\n"
                                "    --num-layers 96 \\\n"
                                "    --hidden-size 12288 \\\n"
                                "    --ffn-hidden-size 49152 \\\n"
                                "    --num-attention-heads 96 \\\n"
                                "    --seq-length 2048 \\\n"
                                "    --max-position-embeddings 2048 \\\n"
                                "    --bf16\n"));
}

TEST_F(ServerTest, PlanEmitNemo) {
  const Result r = P(Gpt3PinnedPlan("nemo"));
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, absl::StrCat("# NeMo megatron_gpt_pretraining.py (Hydra overrides of megatron_gpt_config.yaml) "
                                "for gpt3-175b on dgx-a100-80gb@1: ",
                                kGpt3Header,
                                "python examples/nlp/language_modeling/megatron_gpt_pretraining.py \\\n"
                                "    trainer.devices=8 \\\n"
                                "    trainer.num_nodes=128 \\\n"
                                "    trainer.precision=bf16-mixed \\\n"
                                "    model.micro_batch_size=1 \\\n"
                                "    model.global_batch_size=1536 \\\n"
                                "    model.tensor_model_parallel_size=8 \\\n"
                                "    model.pipeline_model_parallel_size=8 \\\n"
                                "    model.virtual_pipeline_model_parallel_size=3 \\\n"
                                "    +model.context_parallel_size=1 \\\n"
                                "    model.expert_model_parallel_size=1 \\\n"
                                "    model.sequence_parallel=true \\\n"
                                "    model.activations_checkpoint_granularity=selective \\\n"
                                "    model.activations_checkpoint_method=null \\\n"
                                "    model.activations_checkpoint_num_layers=null \\\n"
                                "    model.encoder_seq_length=2048 \\\n"
                                "    model.max_position_embeddings=2048 \\\n"
                                "    model.num_layers=96 \\\n"
                                "    model.hidden_size=12288 \\\n"
                                "    model.ffn_hidden_size=49152 \\\n"
                                "    model.num_attention_heads=96 \\\n"
                                "    model.share_embeddings_and_output_weights=true \\\n"
                                "    model.optim.name=distributed_fused_adam \\\n"
                                "    +model.optim.overlap_grad_sync=true \\\n"
                                "    +model.optim.overlap_param_sync=true\n"));
}

TEST_F(ServerTest, PlanEmitDeepSpeed) {
  const Result r = P(Gpt3PinnedPlan("deepspeed"));
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, absl::StrCat("# DeepSpeed ds_config.json and Megatron-DeepSpeed pretrain_gpt.py arguments for "
                                "gpt3-175b on dgx-a100-80gb@1: ",
                                kGpt3Header,
                                "# note: DeepSpeed's pipeline engine has no interleaved 1f1b schedule; it runs 1F1B\n"
                                "cat > ds_config.json <<'EOF'\n"
                                "{\n"
                                "  \"train_batch_size\": 1536,\n"
                                "  \"train_micro_batch_size_per_gpu\": 1,\n"
                                "  \"gradient_accumulation_steps\": 96,\n"
                                "  \"zero_optimization\": {\n"
                                "    \"stage\": 1,\n"
                                "    \"overlap_comm\": true\n"
                                "  },\n"
                                "  \"activation_checkpointing\": {\"partition_activations\": false, "
                                "\"cpu_checkpointing\": false},\n"
                                "  \"bf16\": {\"enabled\": true},\n"
                                "  \"fp16\": {\"enabled\": false}\n"
                                "}\n"
                                "EOF\n"
                                "torchrun --nproc_per_node 8 --nnodes 128 pretrain_gpt.py \\\n"
                                "    --tensor-model-parallel-size 8 \\\n"
                                "    --pipeline-model-parallel-size 8 \\\n"
                                "    --sequence-parallel \\\n"
                                "    --micro-batch-size 1 \\\n"
                                "    --global-batch-size 1536 \\\n"
                                "    --attention-dropout 0.1 \\\n"
                                "    --hidden-dropout 0.1 \\\n"
                                "    --num-layers 96 \\\n"
                                "    --hidden-size 12288 \\\n"
                                "    --ffn-hidden-size 49152 \\\n"
                                "    --num-attention-heads 96 \\\n"
                                "    --seq-length 2048 \\\n"
                                "    --max-position-embeddings 2048 \\\n"
                                "    --recompute-granularity selective \\\n"
                                "    --bf16 \\\n"
                                "    --zero-stage=1 \\\n"
                                "    --deepspeed \\\n"
                                "    --deepspeed_config=ds_config.json\n"));
}

TEST_F(ServerTest, PlanEmitTorchtitan) {
  const Result r = P(Gpt3PinnedPlan("torchtitan"));
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, absl::StrCat("# torchtitan command line (overrides of a config function) for gpt3-175b on "
                                "dgx-a100-80gb@1: ",
                                kGpt3Header,
                                "# note: --module / --config: torchtitan ships no config function for gpt3-175b; name yours (e.g. in torchtitan_recipes/), building 96 layers, hidden 12288, 96 heads (96 K/V), FFN 49152, vocabulary 51200; the flags below override its parallelism and batch\n"
                                "# note: torchtitan has no ZeRO-1: data parallelism is replicated (DDP), optimizer states unsharded (more memory than planned)\n"
                                "torchrun --nproc_per_node 8 --nnodes 128 -m torchtitan.train \\\n"
                                "    --module YOUR_MODULE \\\n"
                                "    --config YOUR_CONFIG \\\n"
                                "    --parallelism.data_parallel_replicate_degree 16 \\\n"
                                "    --parallelism.data_parallel_shard_degree 1 \\\n"
                                "    --parallelism.tensor_parallel_degree 8 \\\n"
                                "    --parallelism.enable_sequence_parallel \\\n"
                                "    --parallelism.pipeline_parallel_degree 8 \\\n"
                                "    --parallelism.pipeline_parallel_schedule Interleaved1F1B \\\n"
                                "    --parallelism.pipeline_parallel_layers_per_stage 4 \\\n"
                                "    --parallelism.num_pp_microbatches 96 \\\n"
                                "    --parallelism.context_parallel_degree 1 \\\n"
                                "    --training.num_tokens_per_microbatch_per_dp_rank 2048 \\\n"
                                "    --training.num_tokens_per_train_step 3145728 \\\n"
                                "    --training.max_context_length 2048 \\\n"
                                "    --training.mixed_precision_param bfloat16 \\\n"
                                "    activation-checkpoint:selective\n"));
}

// A small plan of a GQA / SwiGLU model: full recompute, ZeRO-3, TP overlap, and the rank
// order the planner prefers here (data parallel inside the node: FSDP's gathers on NVLink,
// the pipeline's sends across nodes; its collectives cost the work beside them a share).
TEST_F(ServerTest, PlanEmitLlamaFullRecomputeZero3) {
  const std::vector<std::string> plan = {
      "plan", "--profile", "dgx-h100-80gb@1", "--model", "llama3-8b", "--gpus", "16", "--global-batch", "64",
      "--tp", "2", "--pp", "2", "--dp", "4", "--cp", "1", "--mbs", "1", "--vpp", "1", "--zero", "3", "--recompute",
      "full", "--sp", "on", "--flash", "on", "--overlap-grad-reduce", "on", "--schedule", "1f1b", "--tp-comm-overlap"};
  const std::string header =
      "for llama3-8b on dgx-h100-80gb@1: 16 GPUs (2 nodes x 8)\n"
      "# plan: TP2 PP2 DP4 CP1 EP1, schedule 1f1b, micro-batch 1, global batch 64, recompute full, sequence "
      "parallel, ZeRO-3, bf16\n";
  std::vector<std::string> args = plan;
  args.insert(args.end(), {"--emit", "megatron"});
  Result r = P(args);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, absl::StrCat("# Megatron-LM pretrain_gpt.py arguments ", header,
                                "# note: Megatron-FSDP needs CUDA_DEVICE_MAX_CONNECTIONS unset or above 1 (validate_args "
                                "refuses 1)\n"
                                "# note: rotary position embeddings and linears without bias, as RMSNorm models (Llama, "
                                "Mixtral, Qwen, DeepSeek) have them: the workload does not state either; check the "
                                "model's own (rope base, QK norm, attention bias)\n"
                                "torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py \\\n"
                                "    --tensor-model-parallel-size 2 \\\n"
                                "    --pipeline-model-parallel-size 2 \\\n"
                                "    --context-parallel-size 1 \\\n"
                                "    --expert-model-parallel-size 1 \\\n"
                                "    --sequence-parallel \\\n"
                                "    --tp-comm-overlap \\\n"
                                "    --micro-batch-size 1 \\\n"
                                "    --global-batch-size 64 \\\n"
                                "    --recompute-granularity full \\\n"
                                "    --recompute-method uniform \\\n"
                                "    --recompute-num-layers 1 \\\n"
                                "    --use-megatron-fsdp \\\n"
                                "    --data-parallel-sharding-strategy optim_grads_params \\\n"
                                "    --use-distributed-optimizer \\\n"
                                "    --no-gradient-accumulation-fusion \\\n"
                                "    --ckpt-format fsdp_dtensor \\\n"
                                "    --overlap-grad-reduce \\\n"
                                "    --overlap-param-gather \\\n"
                                "    --normalization RMSNorm \\\n"
                                "    --position-embedding-type rope \\\n"
                                "    --disable-bias-linear \\\n"
                                "    --attention-dropout 0 \\\n"
                                "    --hidden-dropout 0 \\\n"
                                "    --num-layers 32 \\\n"
                                "    --hidden-size 4096 \\\n"
                                "    --ffn-hidden-size 14336 \\\n"
                                "    --num-attention-heads 32 \\\n"
                                "    --group-query-attention \\\n"
                                "    --num-query-groups 8 \\\n"
                                "    --swiglu \\\n"
                                "    --seq-length 8192 \\\n"
                                "    --max-position-embeddings 8192 \\\n"
                                "    --untie-embeddings-and-output-weights \\\n"
                                "    --bf16\n"));
  args = plan;
  args.insert(args.end(), {"--emit", "torchtitan"});
  r = P(args);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, absl::StrCat("# torchtitan command line (overrides of a config function) ", header,
                                "# note: --module llama3 --config llama3_8b: torchtitan's config function for 32 layers, hidden 4096, 32 heads (8 K/V), FFN 14336, vocabulary 128256; the flags below override its parallelism and batch\n"
                                "torchrun --nproc_per_node 8 --nnodes 2 -m torchtitan.train \\\n"
                                "    --module llama3 \\\n"
                                "    --config llama3_8b \\\n"
                                "    --parallelism.data_parallel_replicate_degree 1 \\\n"
                                "    --parallelism.data_parallel_shard_degree 4 \\\n"
                                "    --parallelism.tensor_parallel_degree 2 \\\n"
                                "    --parallelism.enable_sequence_parallel \\\n"
                                "    --parallelism.pipeline_parallel_degree 2 \\\n"
                                "    --parallelism.pipeline_parallel_schedule 1F1B \\\n"
                                "    --parallelism.num_pp_microbatches 16 \\\n"
                                "    --parallelism.context_parallel_degree 1 \\\n"
                                "    --training.num_tokens_per_microbatch_per_dp_rank 8192 \\\n"
                                "    --training.num_tokens_per_train_step 524288 \\\n"
                                "    --training.max_context_length 8192 \\\n"
                                "    --training.mixed_precision_param bfloat16 \\\n"
                                "    --compile.enable \\\n"
                                "    --compile.enable_async_tensor_parallel \\\n"
                                "    activation-checkpoint:full\n"));
}

// The same plan under the distributed optimizer (one gradient reduction an iteration,
// pipeline sends every micro-batch): pipeline inside data parallel, which Megatron-LM
// states with --use-tp-pp-dp-mapping and torchtitan cannot place.
TEST_F(ServerTest, PlanEmitPipelineInsideDataParallel) {
  const std::vector<std::string> plan = {
      "plan", "--profile", "dgx-h100-80gb@1", "--model", "llama3-8b", "--gpus", "16", "--global-batch", "64",
      "--tp", "2", "--pp", "2", "--dp", "4", "--cp", "1", "--mbs", "1", "--vpp", "1", "--zero", "1", "--recompute",
      "full", "--sp", "on", "--flash", "on", "--overlap-grad-reduce", "on", "--schedule", "1f1b", "--tp-comm-overlap"};
  std::vector<std::string> args = plan;
  args.insert(args.end(), {"--emit", "megatron"});
  Result r = P(args);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_NE(r.out.find("    --use-tp-pp-dp-mapping \\\n"), std::string::npos) << r.out;
  args = plan;
  args.insert(args.end(), {"--emit", "torchtitan"});
  r = P(args);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_NE(r.out.find("# note: torchtitan places pipeline stages outermost (tp-cp-dp-pp); the planned order "
                       "tp-cp-ep-pp-dp is not available\n"),
            std::string::npos)
      << r.out;
}

// Planned under NeMo, whose performance recipes keep and reduce gradients in 16 bits (the
// estimate's default there), the plan runs as estimated elsewhere too: Megatron-LM gets
// --grad-reduce-in-bf16 (bf16 otherwise upgrades them to fp32), Megatron-Bridge a note
// naming the two recipe fields; planned without a framework, neither.
TEST_F(ServerTest, PlanEmitSixteenBitGradients) {
  const std::vector<std::string> plan = {"plan", "--profile", "dgx-h100-80gb@1", "--model", "llama3-8b", "--gpus",
                                         "8", "--global-batch", "64", "--tp", "1", "--pp", "1", "--dp", "8",
                                         "--mbs", "1", "--zero", "1"};
  auto emit = [&](const std::string& framework, const std::string& launcher) {
    std::vector<std::string> args = plan;
    if (!framework.empty()) args.insert(args.end(), {"--framework", framework});
    args.insert(args.end(), {"--emit", launcher});
    Result r = P(args);
    EXPECT_EQ(r.code, 0) << Describe(r);
    return r.out;
  };
  EXPECT_TRUE(Contains(emit("nemo", "megatron"), "    --grad-reduce-in-bf16"));
  EXPECT_FALSE(Contains(emit("", "megatron"), "--grad-reduce-in-bf16"));
  EXPECT_TRUE(Contains(emit("nemo", "megatron-bridge"),
                       "cfg.mixed_precision.grad_reduce_in_fp32 = cfg.ddp.grad_reduce_in_fp32 = False"));
  EXPECT_FALSE(Contains(emit("megatron", "megatron-bridge"), "grad_reduce_in_fp32"));
}

TEST_F(ServerTest, PlanEmitErrors) {
  // An unknown framework is a usage error naming the valid ones; nothing is asked of the server.
  Result r = RunCli({"--server", absl::StrCat("127.0.0.1:", FreePort()), "plan", "--profile", "dgx-a100-80gb",
                     "--model", "gpt3-175b", "--gpus", "8", "--global-batch", "8", "--emit", "jax"});
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_TRUE(Contains(r.err,
                       "--emit: unknown framework \"jax\"; valid: megatron, megatron-bridge, nemo, deepspeed, torchtitan"))
      << Describe(r);
  // No plan fits: exit 1, the reason, nothing on stdout.
  r = P({"plan", "--profile", "abci-v100-16gb", "--model", "gpt3-175b", "--gpus", "8", "--global-batch", "8", "--emit",
         "megatron"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "no plan fits") && Contains(r.err, "nothing to --emit")) << Describe(r);
  EXPECT_EQ(r.out, "");
  // A CNN has no launcher.
  if (!g_paths.examples.empty()) {
    r = P({"plan", "--profile", "abci-v100-16gb", "--workload", g_paths.examples + "/cnn-small.json", "--gpus", "16",
           "--global-batch", "16", "--emit", "torchtitan"});
    EXPECT_EQ(r.code, 1) << Describe(r);
    EXPECT_TRUE(Contains(r.err, "is a layer graph (CNN)")) << Describe(r);
  }
}

// ---------------------------------------------------------------------------------------
// plan --report: the HTML page of a real plan.

// Report tests plan for "a100-cluster": a copy of dgx-a100-80gb@1 (so that no other
// test's measurements or calibrations touch it), created once.
class ReportTest : public ServerTest {
 protected:
  void EnsureReportProfile() {
    if (P({"profiles", "show", "a100-cluster"}).code == 0) return;
    const Result r = P({"--output", "json", "profiles", "show", "dgx-a100-80gb@1"});
    ASSERT_EQ(r.code, 0) << Describe(r);
    v1::SystemProfile p = FromJson<v1::SystemProfile>(r.out);
    p.set_name("a100-cluster");
    p.set_description("a copy of dgx-a100-80gb");
    for (auto clear : {&v1::SystemProfile::clear_version, &v1::SystemProfile::clear_created_at,
                       &v1::SystemProfile::clear_fit_report, &v1::SystemProfile::clear_origin,
                       &v1::SystemProfile::clear_promoted, &v1::SystemProfile::clear_is_default}) {
      (p.*clear)();
    }
    std::string json;
    ASSERT_TRUE(google::protobuf::util::MessageToJsonString(p, &json).ok());
    const Result put = P({"profiles", "put", Write("a100-cluster.json", json)});
    ASSERT_EQ(put.code, 0) << Describe(put);
    ASSERT_EQ(put.out, "a100-cluster@1\n");
  }

  // Measurements for a100-cluster: the published Korthikanti et al. runs (their profile
  // renamed) when the data is there, else two GPT-3 runs written here. Idempotent.
  void IngestReportMeasurements() {
    std::string lines;
    const std::string data = g_paths.data + "/korthikanti22_iteration_times.jsonl";
    if (!g_paths.data.empty() && access(data.c_str(), R_OK) == 0) {
      lines = absl::StrReplaceAll(Slurp(data), {{"\"profile\": \"dgx-a100-80gb\"", "\"profile\": \"a100-cluster\""},
                                                {"\"id\": \"", "\"id\": \"a100-cluster-"}});
    } else {
      for (const auto& [id, seconds] :
           {std::pair{"a100-cluster-gpt3-1", "21.5"}, std::pair{"a100-cluster-gpt3-2", "22.5"}}) {
        absl::StrAppend(&lines, "{\"id\": \"", id, "\", \"profile\": \"a100-cluster\", \"workload\": {\"name\": ",
                        "\"gpt3\", \"transformer\": {\"num_layers\": 96, \"hidden_size\": 12288, ",
                        "\"num_attention_heads\": 96, \"seq_length\": 2048, \"vocab_size\": 51200}}, \"config\": ",
                        absl::StrReplaceAll(kGpt3Config, {{"\n", " "}}), ", \"iteration_time_s\": ", seconds, "}\n");
      }
    }
    const Result r = P({"ingest", Write("a100-cluster.jsonl", lines)});
    ASSERT_EQ(r.code, 0) << Describe(r);
  }
};

int CountOf(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

TEST_F(ReportTest, PlanReportFromARealPlan) {
  ASSERT_NO_FATAL_FAILURE(EnsureReportProfile());
  const std::string path = g_tmp + "/plan.html";
  const std::vector<std::string> plan = {"--output", "json", "plan", "--profile", "a100-cluster", "--model",
                                         "gpt3-175b", "--gpus", "512,1024", "--global-batch", "1536", "--top", "6",
                                         "--report", path};
  Result r = P(plan);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "wrote report " + path)) << Describe(r);
  const auto response = FromJson<v1::PlanResponse>(r.out);  // stdout is the usual output
  ASSERT_EQ(response.plans_size(), 6);
  std::string html = Slurp(path);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_TRUE(Contains(html, "<span id=\"profile\">a100-cluster@1</span>")) << html.substr(0, 2000);
  EXPECT_TRUE(Contains(html, "Profile accuracy: no measurements yet")) << html.substr(0, 2000);
  for (const char* chart : {"aria-label=\"time breakdown per plan", "aria-label=\"memory breakdown per plan",
                            "aria-label=\"Pareto front: iteration time against cost\"",
                            "aria-label=\"Pareto front: iteration time against energy\""}) {
    EXPECT_TRUE(Contains(html, absl::StrCat("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart")) &&
                Contains(html, chart))
        << chart;
  }
  // One table row, one time bar and one memory bar per plan, in rank order, with the
  // plan's GPU count and iteration time.
  for (int i = 0; i < response.plans_size(); ++i) {
    const v1::Estimate& e = response.plans(i);
    const std::string row =
        absl::StrCat("<tr data-plan=\"", i + 1, "\"><td>", i + 1, "</td><td>", e.num_gpus(), "</td>");
    EXPECT_TRUE(Contains(html, row)) << row;
    EXPECT_TRUE(Contains(html, absl::StrFormat("<td>%.3f s</td>", e.iteration_time_s()))) << i;
    EXPECT_EQ(CountOf(html, absl::StrCat("<g class=\"row\" data-plan=\"", i + 1, "\">")), 2)
        << "a time and a memory bar";
  }
  EXPECT_FALSE(Contains(html, "<tr data-plan=\"7\">"));

  // With measurements the page states the profile's measured error.
  ASSERT_NO_FATAL_FAILURE(IngestReportMeasurements());
  r = P({"--output", "json", "accuracy", "--profile", "a100-cluster"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto accuracy = FromJson<v1::AccuracyReport>(r.out);
  ASSERT_GT(accuracy.overall().count(), 0);
  r = P(plan);
  ASSERT_EQ(r.code, 0) << Describe(r);
  html = Slurp(path);
  const std::string uncertainty =
      absl::StrFormat("Profile accuracy: uncertainty \u00b1%.1f %% (MAPE over %d measurements)",
                      100 * accuracy.overall().mape_ratio(), accuracy.overall().count());
  EXPECT_TRUE(Contains(html, uncertainty)) << uncertainty << "\n" << html.substr(0, 2500);

  // A file that cannot be written: exit 73.
  r = P({"plan", "--profile", "a100-cluster", "--model", "gpt3-175b", "--gpus", "1024", "--global-batch", "1536",
         "--report", g_tmp + "/no/such/dir/plan.html"});
  EXPECT_EQ(r.code, 73) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "cannot write the report")) << Describe(r);
}

// Checks the report page at `html` in a real browser: headless Chromium renders it (a
// screenshot, returned), the DOM after its script ran holds the table and the four
// charts and names `profile`, and the console shows no script error.
std::string CheckInChromium(const std::string& chromium, const std::string& html, const std::string& profile) {
  const std::string png = html + ".png";
  const std::vector<std::string> common = {chromium, "--headless", "--disable-gpu", "--no-sandbox",
                                           absl::StrCat("--user-data-dir=", g_tmp, "/chromium-profile"),
                                           "--enable-logging=stderr", "--v=0"};
  std::vector<std::string> shot = common;
  shot.insert(shot.end(), {absl::StrCat("--screenshot=", png), "--window-size=1280,1600", "file://" + html});
  const std::string shot_err = g_tmp + "/chromium-shot.err";
  EXPECT_EQ(WaitFor(Spawn(shot, g_tmp + "/chromium-shot.out", shot_err), std::chrono::seconds(120)), 0)
      << Slurp(shot_err);
  const std::string image = Slurp(png);
  EXPECT_GT(image.size(), 30000u) << "a rendered page with charts, not a blank one";
  EXPECT_EQ(image.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));

  std::vector<std::string> dump = common;
  dump.insert(dump.end(), {"--dump-dom", "file://" + html});
  const std::string dom_path = g_tmp + "/chromium-dom.html", dom_err = g_tmp + "/chromium-dom.err";
  EXPECT_EQ(WaitFor(Spawn(dump, dom_path, dom_err), std::chrono::seconds(120)), 0) << Slurp(dom_err);
  const std::string dom = Slurp(dom_path);
  EXPECT_TRUE(Contains(dom, "data-ready=\"1\"")) << "the page's script ran to its end\n" << dom.substr(0, 1000);
  EXPECT_TRUE(Contains(dom, "<table id=\"plans\">"));
  EXPECT_EQ(CountOf(dom, "<svg"), 4) << "time, memory and two Pareto charts";
  EXPECT_TRUE(Contains(dom, profile));
  for (const std::string& log : {Slurp(shot_err), Slurp(dom_err)}) {
    EXPECT_FALSE(Contains(log, "Uncaught")) << log;
    EXPECT_FALSE(Contains(log, ":CONSOLE")) << "no console output at all\n" << log;
  }
  // An 800 px window: the page reflows (the table scrolls in its own box), nothing makes
  // the page wider than the window.
  std::vector<std::string> narrow = common;
  narrow.insert(narrow.end(), {"--window-size=800,1000", "--dump-dom", "file://" + html});
  const std::string narrow_path = g_tmp + "/chromium-narrow.html", narrow_err = g_tmp + "/chromium-narrow.err";
  EXPECT_EQ(WaitFor(Spawn(narrow, narrow_path, narrow_err), std::chrono::seconds(120)), 0) << Slurp(narrow_err);
  const std::string narrow_dom = Slurp(narrow_path);
  EXPECT_TRUE(Contains(narrow_dom, "data-overflows=\"0\"")) << "wider than an 800 px window\n"
                                                            << narrow_dom.substr(0, 600);
  EXPECT_TRUE(Contains(dom, "data-overflows=\"0\""));
  return image;
}

constexpr char kChromium[] = "/usr/bin/chromium";

TEST_F(ReportTest, PlanReportRendersInHeadlessChromium) {
  if (access(kChromium, X_OK) != 0) {
    GTEST_SKIP() << kChromium << " is not installed (scripts/deps.sh installs Debian's chromium)";
  }
  ASSERT_NO_FATAL_FAILURE(EnsureReportProfile());
  ASSERT_NO_FATAL_FAILURE(IngestReportMeasurements());
  const std::string html = g_tmp + "/chromium-plan.html";
  Result r = P({"plan", "--profile", "a100-cluster", "--model", "gpt3-175b", "--gpus", "1024", "--global-batch",
                "1536", "--top", "5", "--report", html});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const std::string image = CheckInChromium(kChromium, html, "a100-cluster@1");
  if (!g_paths.screenshot.empty()) {
    WriteFile(g_paths.screenshot, image);
    std::fprintf(stderr, "cli_test: screenshot written to %s\n", g_paths.screenshot.c_str());
  }
}

// The text between `from` and the next `to` (both included); "" when absent.
std::string Section(const std::string& text, const std::string& from, const std::string& to) {
  const size_t start = text.find(from);
  if (start == std::string::npos) return "";
  const size_t end = text.find(to, start);
  return end == std::string::npos ? "" : text.substr(start, end + to.size() - start);
}

// GET /v1/report on the HTTP port (fetched with curl): the page `plan --report` writes
// for the same plan, rendered in headless Chromium; bad queries are 400 naming the
// parameter, an unknown profile 404.
TEST(CliHttpReport, ReportPageFromTheHttpPort) {
  if (g_paths.server.empty()) GTEST_SKIP() << "no --server binary given";
  if (access("/usr/bin/curl", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/curl";
  Server server("http-report");
  const int http_port = FreePort();
  ASSERT_TRUE(server.Start({"--http-listen", absl::StrCat("127.0.0.1:", http_port)})) << Slurp(server.log());
  const std::string base = absl::StrCat("http://127.0.0.1:", http_port, "/v1/report?");
  // curl's exit code, and "STATUS CONTENT-TYPE" of GET base+query (the body to body_path).
  auto curl = [&](const std::string& query, const std::string& body_path) {
    const std::string out = g_tmp + "/curl.out", err = g_tmp + "/curl.err";
    Result r;
    r.code = WaitFor(Spawn({"/usr/bin/curl", "-sS", "-o", body_path, "-w", "%{http_code} %{content_type}",
                            base + query},
                           out, err),
                     std::chrono::seconds(120));
    r.out = Slurp(out);
    r.err = Slurp(err);
    return r;
  };
  const std::string page = g_tmp + "/http-report.html";
  Result r = curl("profile=dgx-a100-80gb&model=gpt3-175b&gpus=1024&global_batch=1536&top=5", page);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, "200 text/html; charset=utf-8");
  const std::string html = Slurp(page);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u) << html.substr(0, 500);
  EXPECT_TRUE(Contains(html, "<span id=\"profile\">dgx-a100-80gb@1</span>")) << html.substr(0, 2000);
  EXPECT_TRUE(Contains(html, "GPUs 1024, global batch 1536, objective time, top 5")) << html.substr(0, 2000);
  EXPECT_TRUE(Contains(html, "Profile accuracy: no measurements yet")) << html.substr(0, 2000);

  // The CLI's --report of the same plan has the same ranked table and charts.
  const std::string cli_page = g_tmp + "/http-report-cli.html";
  const Result cli = RunCli({"--server", server.address(), "plan", "--profile", "dgx-a100-80gb", "--model", "gpt3-175b",
                             "--gpus", "1024", "--global-batch", "1536", "--top", "5", "--report", cli_page});
  ASSERT_EQ(cli.code, 0) << Describe(cli);
  const std::string cli_html = Slurp(cli_page);
  const std::string table = Section(html, "<table id=\"plans\">", "</table>");
  EXPECT_NE(table, "");
  EXPECT_EQ(table, Section(cli_html, "<table id=\"plans\">", "</table>"));
  EXPECT_EQ(CountOf(html, "<svg"), 4);
  EXPECT_EQ(Section(html, "<h2>Ranked plans</h2>", "</body>"), Section(cli_html, "<h2>Ranked plans</h2>", "</body>"));

  if (access(kChromium, X_OK) == 0) {
    CheckInChromium(kChromium, page, "dgx-a100-80gb@1");
  } else {
    std::fprintf(stderr, "cli_test: %s is not installed; the page is not rendered\n", kChromium);
  }

  // Bad queries name the parameter; an unknown profile is 404.
  const std::string error = g_tmp + "/http-report-error.json";
  for (const auto& [query, status, message] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"profile=dgx-a100-80gb&model=gpt3-175b&global_batch=1536", "400", "gpus: missing"},
           {"profile=dgx-a100-80gb&model=gpt3-175b&gpus=ten&global_batch=1536", "400",
            "gpus: \\\"ten\\\" is not a list of GPU counts"},
           {"profile=dgx-a100-80gb&model=gpt3-175b&gpus=8&global_batch=8&objective=speed", "400",
            "objective: \\\"speed\\\" is not time, cost or energy"},
           {"profile=dgx-a100-80gb&model=gpt3-175b&gpus=8&global_batch=8&colour=red", "400",
            "query: unknown parameter \\\"colour\\\""},
           {"profile=no-such-profile&model=gpt3-175b&gpus=8&global_batch=8", "404", "no-such-profile"},
           {"profile=dgx-a100-80gb&model=gpt9&gpus=8&global_batch=8", "400", "model: unknown preset"},
       }) {
    r = curl(query, error);
    EXPECT_EQ(r.out, absl::StrCat(status, " application/json")) << query << "\n" << Slurp(error);
    EXPECT_TRUE(Contains(Slurp(error), message)) << query << "\n" << Slurp(error);
  }
  EXPECT_EQ(server.Stop(), 0);
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


// ---------------------------------------------------------------------------------------
// CLI conventions (issue 11): usage errors with suggestions, --version, -o wide|csv, the
// compact table, cost and energy columns, profile@version, best plan per GPU count,
// estimate's configuration flags, compare, lower-case enums, --set, profiles put of a
// built-in, "-" for standard input, exit codes, 64-bit integers as JSON numbers.

TEST(CliConventions, UsageErrorsAreShortAndSuggest) {
  const struct {
    std::vector<std::string> args;
    std::string first_line;
  } cases[] = {
      {{"plna"}, "paraplan: unknown command \"plna\" (did you mean plan?)\n"},
      {{"profiles", "shwo", "x"}, "paraplan: unknown subcommand \"shwo\" (did you mean show?)\n"},
      {{"plan", "--gpu", "8"}, "paraplan: unknown flag --gpu for `plan` (did you mean --gpus?)\n"},
      {{"estimate", "--tp", "8", "--profle", "p"}, "paraplan: unknown flag --profle for `estimate` (did you mean --profile?)\n"},
      {{"-o", "jsno", "models"}, "paraplan: --output must be table, wide, csv or json, not \"jsno\" (did you mean json?)\n"},
      {{"-o", "csv", "models"}, "paraplan: --output csv: only plan, compare and codesign print CSV, not `models`\n"},
      {{"--bogus", "1", "models"}, "paraplan: unknown flag --bogus for `models` (it takes none)\n"},
  };
  for (const auto& c : cases) {
    const Result r = RunCli(c.args);
    EXPECT_EQ(r.code, 2) << Describe(r);
    EXPECT_EQ(r.err.substr(0, r.err.find('\n') + 1), c.first_line) << Describe(r);
    EXPECT_TRUE(Contains(r.err, "\nusage: ")) << Describe(r);
    EXPECT_LE(std::count(r.err.begin(), r.err.end(), '\n'), 12) << "short\n" << Describe(r);
    EXPECT_EQ(r.out, "");
  }
  // The short usage is the command's synopsis and where the rest is.
  const Result r = RunCli({"plan", "--gpu", "8"});
  EXPECT_EQ(r.err,
            "paraplan: unknown flag --gpu for `plan` (did you mean --gpus?)\n"
            "usage: paraplan plan --profile NAME (--workload FILE | --model PRESET) --gpus N[,N...] --global-batch B\n"
            "            [--top K] [--objective time|time@pNN|cost|energy] [--set PATH=VALUE ...]\n"
            "run `paraplan plan --help` for every flag and `paraplan --help` for exit codes\n");
  // A usage error found by the command itself is as short.
  const Result missing = RunCli({"estimate", "--profile", "p", "--model", "m", "--tp", "8"});
  EXPECT_EQ(missing.code, 2) << Describe(missing);
  EXPECT_EQ(missing.err.substr(0, missing.err.find('\n') + 1),
            "paraplan: without --config, give the global batch too (--global-batch B)\n");
  EXPECT_TRUE(Contains(missing.err, "usage: paraplan estimate --profile NAME")) << Describe(missing);
}

TEST(CliConventions, VersionAndDocumentedExitCodes) {
  // No server: the CLI's version, and that the server's is unknown.
  const std::string dead = absl::StrCat("127.0.0.1:", FreePort());
  Result r = RunCli({"--server", dead, "--version"});
  EXPECT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(absl::StartsWith(r.out, "paraplan 0.11.0 (API paraplan.v1, ")) << r.out;
  EXPECT_TRUE(absl::EndsWith(r.out, absl::StrCat(")\nserver ", dead, ": not reachable, version unknown\n"))) << r.out;
  r = RunCli({"--help"});
  EXPECT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out,
                       "exit codes: 0 ok\n"
                       "            1 no plan fits (codesign: no design fits every workload), a measurement was\n"
                       "              rejected, or the server answered an error\n"
                       "            2 usage error\n"
                       "            65 an input file cannot be read or parsed\n"
                       "            69 server unavailable\n"
                       "            73 an output file (--report) cannot be written\n"))
      << r.out;
  for (const char* command : {"compare", "--output, -o table|wide|csv|json", "--set PATH=VALUE", "--version",
                              "- reads standard input"}) {
    EXPECT_TRUE(Contains(r.out, command)) << command;
  }
}

TEST_F(ServerTest, CompactTableShowsExactlyTheColumnsThatDiffer) {
  const std::vector<std::string> plan = {"plan", "--profile", "dgx-a100-80gb@1", "--model", "gpt3-175b", "--gpus",
                                         "1024", "--global-batch", "1536", "--top", "6"};
  std::vector<std::string> json_args = {"-o", "json"};
  json_args.insert(json_args.end(), plan.begin(), plan.end());
  Result r = P(json_args);
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto response = FromJson<v1::PlanResponse>(r.out);
  ASSERT_EQ(response.plans_size(), 6);
  r = P(plan);
  ASSERT_EQ(r.code, 0) << Describe(r);
  ASSERT_EQ(r.out.rfind("profile dgx-a100-80gb@1\n\n#  GPUs  ", 0), 0u) << Describe(r);
  const std::string header = r.out.substr(25, r.out.find('\n', 25) - 25);
  const std::vector<std::string> shown = absl::StrSplit(header, absl::ByString("  "), absl::SkipWhitespace());
  auto has = [&](const char* column) {
    for (const std::string& s : shown) {
      if (absl::StripAsciiWhitespace(s) == column) return true;
    }
    return false;
  };
  for (const char* always : {"#", "GPUs", "iter s", "tokens/s", "MFU %", "mem GiB", "bottleneck"}) {
    EXPECT_TRUE(has(always)) << always << "\n" << header;
  }
  EXPECT_FALSE(has("$/iter")) << "ranked by time";
  // A configuration column is shown exactly when the six plans differ in it.
  const std::pair<const char*, std::function<std::string(const v1::ParallelConfig&)>> columns[] = {
      {"TP", [](const v1::ParallelConfig& c) { return absl::StrCat(c.tensor_parallel()); }},
      {"PP", [](const v1::ParallelConfig& c) { return absl::StrCat(c.pipeline_parallel()); }},
      {"DP", [](const v1::ParallelConfig& c) { return absl::StrCat(c.data_parallel()); }},
      {"CP", [](const v1::ParallelConfig& c) { return absl::StrCat(c.context_parallel()); }},
      {"v", [](const v1::ParallelConfig& c) { return absl::StrCat(c.virtual_pipeline_stages()); }},
      {"mbs", [](const v1::ParallelConfig& c) { return absl::StrCat(c.micro_batch_size()); }},
      {"recompute", [](const v1::ParallelConfig& c) { return absl::StrCat(c.recompute()); }},
      {"ZeRO", [](const v1::ParallelConfig& c) { return absl::StrCat(c.zero_stage()); }},
      {"overlap param", [](const v1::ParallelConfig& c) { return absl::StrCat(c.overlap_param_gather()); }},
      {"rank order", [](const v1::ParallelConfig& c) { return c.rank_order(); }},
  };
  int differing = 0;
  for (const auto& [column, value] : columns) {
    bool differ = false;
    for (const v1::Estimate& e : response.plans()) differ |= value(e.config()) != value(response.plans(0).config());
    differing += differ;
    EXPECT_EQ(has(column), differ) << column << "\n" << r.out;
  }
  EXPECT_GT(differing, 0) << "the top plans differ somewhere\n" << r.out;
  EXPECT_TRUE(Contains(r.out, "\nin every plan: ")) << r.out;
  // The first row: rank, GPUs, ..., its iteration time.
  EXPECT_TRUE(Contains(r.out, absl::StrFormat("%.3f", response.plans(0).iteration_time_s()))) << r.out;

  // -o wide: every column, as many rows.
  std::vector<std::string> wide = {"-o", "wide"};
  wide.insert(wide.end(), plan.begin(), plan.end());
  r = P(wide);
  ASSERT_EQ(r.code, 0) << Describe(r);
  const std::vector<std::string> lines = absl::StrSplit(r.out, '\n');
  ASSERT_GT(lines.size(), 9u) << r.out;
  EXPECT_EQ(std::vector<std::string>(absl::StrSplit(lines[2], absl::ByString("  "), absl::SkipWhitespace())).size(),
            33u)
      << lines[2];
  for (const char* column : {"spatial[axes]@cut/filter/channel", "DP algorithm", "CUDA graphs", "TP overlap", "A2A overlap",
                             "samples/s", "$/iter", "kJ/iter", "overlap grad"}) {
    EXPECT_TRUE(Contains(lines[2], column)) << column;
  }
  EXPECT_EQ(lines[3].substr(0, 1), "1");
  EXPECT_EQ(lines[8].substr(0, 1), "6");
}

TEST_F(ServerTest, CsvHasEveryColumnAndQuotes) {
  const std::vector<std::string> plan = {"plan", "--profile", "dgx-a100-80gb@1", "--model", "gpt3-175b", "--gpus",
                                         "512,1024", "--global-batch", "1536", "--top", "4"};
  std::vector<std::string> args = {"-o", "json"};
  args.insert(args.end(), plan.begin(), plan.end());
  Result r = P(args);
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto response = FromJson<v1::PlanResponse>(r.out);
  args[1] = "csv";
  r = P(args);
  ASSERT_EQ(r.code, 0) << Describe(r);
  const std::vector<std::string> records = absl::StrSplit(r.out, "\r\n", absl::SkipEmpty());
  ASSERT_EQ(records.size(), 5u) << r.out;
  EXPECT_EQ(records[0],
            "rank,profile,gpus,tensor_parallel,pipeline_parallel,data_parallel,context_parallel,expert_parallel,"
            "virtual_pipeline_stages,micro_batch_size,global_batch_size,spatial_parallel,spatial_axes,spatial_layers,"
            "filter_parallel,channel_parallel,recompute,sequence_parallel,zero_stage,flash_attention,"
            "pipeline_schedule,overlap_grad_reduce,overlap_param_gather,offload,dp_algorithm,rank_order,cuda_graphs,"
            "tp_comm_overlap,moe_a2a_overlap,iteration_time_s,samples_per_s,tokens_per_s,mfu,memory_gib,fits,"
            "cost_per_iteration_usd,energy_per_iteration_j,bottleneck");
  for (int i = 0; i < 4; ++i) {
    const v1::Estimate& e = response.plans(i);
    const std::vector<std::string> f = absl::StrSplit(records[static_cast<size_t>(i) + 1], ',');
    ASSERT_EQ(f.size(), 38u) << records[static_cast<size_t>(i) + 1];
    EXPECT_EQ(f[0], absl::StrCat(i + 1));
    EXPECT_EQ(f[1], "dgx-a100-80gb@1");
    EXPECT_EQ(f[2], absl::StrCat(e.num_gpus()));
    EXPECT_EQ(f[3], absl::StrCat(e.config().tensor_parallel()));
    EXPECT_EQ(f[28], e.config().moe_a2a_overlap() ? "true" : "false");
    EXPECT_EQ(f[29], absl::StrFormat("%.9g", e.iteration_time_s()));
    EXPECT_EQ(f[35], absl::StrFormat("%.9g", e.cost_per_iteration_usd()));
    EXPECT_EQ(f[37], e.bottleneck());
  }
  EXPECT_FALSE(Contains(r.out, "best plan per GPU count")) << "CSV holds the records only";
}

TEST_F(ServerTest, CostAndEnergyColumnsAndBestPerGpuCount) {
  std::vector<std::string> plan = {"plan", "--profile", "dgx-a100-80gb@1", "--model", "gpt3-175b", "--gpus",
                                   "512,1024", "--global-batch", "1536", "--top", "3", "--objective", "cost"};
  Result r = P(plan);
  ASSERT_EQ(r.code, 0) << Describe(r);
  // The best plan of each count: ask for each count alone.
  std::map<int, v1::Estimate> best;
  for (int gpus : {512, 1024}) {
    const Result one = P({"-o", "json", "plan", "--profile", "dgx-a100-80gb@1", "--model", "gpt3-175b", "--gpus",
                          absl::StrCat(gpus), "--global-batch", "1536", "--top", "1", "--objective", "cost"});
    ASSERT_EQ(one.code, 0) << Describe(one);
    best[gpus] = FromJson<v1::PlanResponse>(one.out).plans(0);
  }
  const std::string section = r.out.substr(0, r.out.find("\n#  GPUs"));
  EXPECT_EQ(section.substr(0, section.find("\n 512 ") + 1),
            "profile dgx-a100-80gb@1\n\n"
            "best plan per GPU count (by cost):\n"
            "GPUs  iter s  tokens/s  MFU %  mem GiB   $/iter  best plan\n")
      << r.out;
  for (const auto& [gpus, e] : best) {
    const std::string row = absl::StrFormat("%4d  %6.3f", gpus, e.iteration_time_s());
    EXPECT_TRUE(Contains(section, "\n" + row)) << row << "\n" << r.out;
    EXPECT_TRUE(Contains(section, absl::StrFormat("%.4f  TP%d PP%d DP%d", e.cost_per_iteration_usd(),
                                                  e.config().tensor_parallel(), e.config().pipeline_parallel(),
                                                  e.config().data_parallel())))
        << r.out;
  }
  // The ranked table has the cost column, with the plans' costs.
  const std::string table = r.out.substr(r.out.find("\n#  GPUs") + 1);
  EXPECT_TRUE(Contains(table.substr(0, table.find('\n')), "$/iter")) << table;
  plan.insert(plan.begin(), {"-o", "json"});  // the same plans as JSON
  r = P(plan);
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto ranked = FromJson<v1::PlanResponse>(r.out);
  for (const v1::Estimate& e : ranked.plans()) {
    EXPECT_TRUE(Contains(table, absl::StrFormat("%.4f", e.cost_per_iteration_usd()))) << table;
  }
  // By energy: the kJ column instead.
  r = P({"plan", "--profile", "dgx-a100-80gb@1", "--model", "llama3-8b", "--gpus", "8", "--global-batch", "32",
         "--top", "3", "--objective", "energy"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "kJ/iter") && !Contains(r.out, "$/iter")) << r.out;
  EXPECT_FALSE(Contains(r.out, "best plan per GPU count")) << "one count asked";
}

TEST_F(ServerTest, EstimateTakesTheConfigurationAsFlags) {
  const std::string config = Write("flags-config.json", kGpt3Config);
  Result r = P({"-o", "json", "estimate", "--profile", "dgx-a100-80gb@1", "--model", "gpt3-175b", "--config", config});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto from_file = FromJson<v1::Estimate>(r.out);
  // The file says nothing of flash or overlap (off, the API's default); the flags say so.
  r = P({"-o", "json", "estimate", "--profile", "dgx-a100-80gb@1", "--model", "gpt3-175b", "--tp", "8", "--pp", "8",
         "--dp", "16", "--mbs", "1", "--global-batch", "1536", "--recompute", "selective", "--sp", "on", "--vpp", "3",
         "--flash", "off", "--overlap-grad-reduce", "off"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto from_flags = FromJson<v1::Estimate>(r.out);
  EXPECT_EQ(from_flags.config().DebugString(), from_file.config().DebugString());
  EXPECT_EQ(from_flags.iteration_time_s(), from_file.iteration_time_s());
  // Where a flag says nothing, the plan's choice: flash on, the reduction overlapped.
  r = P({"-o", "json", "estimate", "--profile", "dgx-a100-80gb@1", "--model", "gpt3-175b", "--tp", "8", "--pp", "8",
         "--dp", "16", "--mbs", "1", "--global-batch", "1536", "--recompute", "selective", "--vpp", "3"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto unsaid = FromJson<v1::Estimate>(r.out);
  EXPECT_TRUE(unsaid.config().flash_attention() && unsaid.config().overlap_grad_reduce() &&
              unsaid.config().sequence_parallel())
      << unsaid.config().DebugString();
  EXPECT_LT(unsaid.iteration_time_s(), from_file.iteration_time_s());
  // Flags override the file's fields.
  r = P({"-o", "json", "estimate", "--profile", "dgx-a100-80gb@1", "--model", "gpt3-175b", "--config", config, "--dp",
         "8", "--recompute", "full", "--zero", "1", "--gpus", "512"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto changed = FromJson<v1::Estimate>(r.out);
  EXPECT_EQ(changed.num_gpus(), 512);
  EXPECT_EQ(changed.config().data_parallel(), 8);
  EXPECT_EQ(changed.config().tensor_parallel(), 8) << "from the file";
  EXPECT_EQ(changed.config().recompute(), v1::RECOMPUTE_FULL);
  EXPECT_EQ(changed.config().zero_stage(), 1);
  // The table names the profile version (the default one, whichever it is now).
  r = P({"estimate", "--profile", "dgx-a100-80gb@1", "--model", "gpt3-175b", "--config", config});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out.rfind("profile      dgx-a100-80gb@1, 1024 GPUs\n", 0), 0u) << r.out;
  // A flag value that is not one: exit 2, naming the flag.
  r = P({"estimate", "--profile", "dgx-a100-80gb", "--model", "gpt3-175b", "--config", config, "--tp", "8,16"});
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            "paraplan: --tp: \"8,16\" is a list; give one value (lists are for plan)");
}

// plan --what-if: the best plan today beside the best plan with --set, each what plan
// alone answers. Half the GPU memory only shrinks what fits, so the what-if cannot be
// faster, and GPT-3's 1024-GPU best plan (72.6 GiB) no longer fits.
TEST_F(ServerTest, PlanWhatIfSetsTodayBesideTheChangedProfile) {
  const std::vector<std::string> plan = {"plan", "--profile", "dgx-a100-80gb@1", "--model", "gpt3-175b",
                                         "--gpus", "1024", "--global-batch", "1536"};
  const std::vector<std::string> set = {"--set", "accelerator.memory_gib=40"};
  auto with = [&](std::vector<std::string> front, std::vector<std::string> back) {
    front.insert(front.end(), plan.begin(), plan.end());
    front.insert(front.end(), back.begin(), back.end());
    return front;
  };
  const auto today = FromJson<v1::PlanResponse>(P(with({"-o", "json"}, {"--top", "1"})).out);
  std::vector<std::string> changed_args = set;
  changed_args.insert(changed_args.end(), {"--top", "1"});
  const auto changed = FromJson<v1::PlanResponse>(P(with({"-o", "json"}, changed_args)).out);
  ASSERT_EQ(today.plans_size(), 1);
  ASSERT_EQ(changed.plans_size(), 1);
  std::vector<std::string> what_if = set;
  what_if.push_back("--what-if");
  Result r = P(with({"-o", "json"}, what_if));
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto [t, w] = ComparisonSides(r.out, "today", "what_if");
  EXPECT_EQ(t.iteration_time_s(), today.plans(0).iteration_time_s());
  EXPECT_EQ(w.iteration_time_s(), changed.plans(0).iteration_time_s());
  EXPECT_GT(t.memory().total_bytes(), 40.0 * (1 << 30)) << "today's best plan needs more than 40 GiB";
  EXPECT_LE(w.memory().total_bytes(), 40.0 * (1 << 30));
  EXPECT_GT(w.iteration_time_s(), t.iteration_time_s());

  // The table: both plans, the ratio column named by the sides, the verdict, the --set note.
  r = P(with({}, what_if));
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out.rfind("profile dgx-a100-80gb@1, 1024 GPUs, global batch 1536, best by time\ntoday    TP", 0), 0u)
      << r.out;
  const double ratio = w.iteration_time_s() / t.iteration_time_s();
  for (const std::string& row :
       {std::string("\nwhat-if  TP"), std::string("what-if/today"),
        absl::StrFormat("the best plan with --set takes %.3fx the iteration time of the best plan today (%.1f%% more)\n",
                        ratio, 100 * (ratio - 1)),
        std::string("with --set (not saved): accelerator.memory_gib=40\n")}) {
    EXPECT_TRUE(Contains(r.out, row)) << row << "\n" << r.out;
  }
  r = P(with({"-o", "csv"}, what_if));
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out.rfind("metric,today,what_if,what_if_over_today\r\n", 0), 0u) << r.out;
  // The report: both plans by name, on the stored version, the change in the heading.
  std::vector<std::string> report = what_if;
  report.insert(report.end(), {"--report", g_tmp + "/what-if.html"});
  r = P(with({}, report));
  ASSERT_EQ(r.code, 0) << Describe(r);
  const std::string html = Slurp(g_tmp + "/what-if.html");
  for (const std::string& part :
       {std::string("<span id=\"profile\">dgx-a100-80gb@1</span>"),
        std::string("What if: <span id=\"what-if\">accelerator.memory_gib=40</span>"),
        std::string("<tr data-plan=\"1\"><td>today</td><td>1024</td>"),
        std::string("<tr data-plan=\"2\"><td>what-if</td><td>1024</td>"),
        std::string("accelerator.memory_gib 80 -&gt; 40")}) {
    EXPECT_TRUE(Contains(html, part)) << part;
  }

  // Usage: --set, one GPU count, no --emit.
  for (const std::vector<std::string>& bad :
       {with({}, {"--what-if"}), with({}, {"--what-if", "--set", "accelerator.memory_gib=40", "--emit", "megatron"})}) {
    r = P(bad);
    EXPECT_EQ(r.code, 2) << Describe(r);
    EXPECT_TRUE(Contains(r.err, "--what-if needs --set and does not take --emit")) << Describe(r);
  }
  r = P({"plan", "--profile", "dgx-a100-80gb", "--model", "gpt3-175b", "--gpus", "512,1024", "--global-batch", "1536",
         "--set", "accelerator.memory_gib=40", "--what-if"});
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "--what-if: one GPU count in --gpus")) << Describe(r);
}

TEST_F(ServerTest, CompareGivenAgainstBest) {
  const std::vector<std::string> given = {"--profile", "dgx-a100-80gb@1", "--model", "gpt3-175b", "--tp", "8", "--pp",
                                          "8", "--dp", "16", "--mbs", "1", "--global-batch", "1536", "--recompute",
                                          "selective", "--sp", "on", "--vpp", "3"};
  std::vector<std::string> args = {"-o", "json", "compare"};
  args.insert(args.end(), given.begin(), given.end());
  Result r = P(args);
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto [g, b] = ComparisonSides(r.out, "given", "best");
  std::vector<std::string> est = {"-o", "json", "estimate"};
  est.insert(est.end(), given.begin(), given.end());
  const auto alone = FromJson<v1::Estimate>(P(est).out);
  EXPECT_EQ(g.iteration_time_s(), alone.iteration_time_s());
  EXPECT_EQ(b.num_gpus(), 1024) << "the given degrees' product";
  EXPECT_EQ(b.config().global_batch_size(), 1536);
  const auto plan = FromJson<v1::PlanResponse>(P({"-o", "json", "plan", "--profile", "dgx-a100-80gb@1", "--model",
                                                   "gpt3-175b", "--gpus", "1024", "--global-batch", "1536", "--top",
                                                   "1"})
                                                    .out);
  ASSERT_EQ(plan.plans_size(), 1);
  EXPECT_EQ(b.iteration_time_s(), plan.plans(0).iteration_time_s()) << "the best plan";
  EXPECT_LT(b.iteration_time_s(), g.iteration_time_s());

  // The table: profile, both configurations, ratios, verdict.
  args.erase(args.begin(), args.begin() + 2);
  r = P(args);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out.rfind("profile dgx-a100-80gb@1, 1024 GPUs, global batch 1536, best by time\ngiven  TP8 PP8 DP16 v3, ",
                        0),
            0u)
      << r.out;
  const double ratio = b.iteration_time_s() / g.iteration_time_s();
  for (const std::string& row :
       {absl::StrFormat("%.3f", g.iteration_time_s()), absl::StrFormat("%.3f", b.iteration_time_s()),
        absl::StrFormat("%.3f", ratio), std::string("best/given"), std::string("  pipeline bubble"),
        std::string("\nMFU %"), std::string("\n$/iter"),
        absl::StrFormat("the best plan takes %.3fx the iteration time of the given configuration (%.1f%% less)\n",
                        ratio, 100 * (1 - ratio))}) {
    EXPECT_TRUE(Contains(r.out, row)) << row << "\n" << r.out;
  }
  // CSV, and the GPU count when the degrees do not give it.
  args.insert(args.begin(), {"-o", "csv"});
  r = P(args);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out.substr(0, r.out.find("config,")),
            "metric,given,best,best_over_given\r\nprofile,dgx-a100-80gb@1,dgx-a100-80gb@1,\r\ngpus,1024,1024,\r\n");
  EXPECT_TRUE(Contains(r.out, absl::StrFormat("\r\niteration_time_s,%.9g,%.9g,%.9g\r\n", g.iteration_time_s(),
                                              b.iteration_time_s(), ratio)))
      << r.out;
  r = P({"compare", "--profile", "dgx-a100-80gb@1", "--model", "gpt3-175b", "--tp", "8", "--pp", "8", "--dp", "16",
         "--global-batch", "1536", "--gpus", "512"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "multiply to 1024 GPUs, not num_gpus 512")) << Describe(r);
  // Nothing fits on the GPUs given: the given column alone, exit 1.
  r = P({"compare", "--profile", "abci-v100-16gb@1", "--model", "gpt3-175b", "--tp", "8", "--global-batch", "8"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  const size_t fits = r.out.find("\nfits ");
  ASSERT_NE(fits, std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(r.out.find('\n', fits + 1) - 3, 3), " NO") << r.out;
  EXPECT_TRUE(Contains(r.out, "\nno plan fits: no configuration fits in memory")) << r.out;
}

TEST_F(ServerTest, LowerCaseEnumsInJsonInputAndStdin) {
  // Config from standard input, with lower-case enum names.
  const std::string config =
      R"({"tensor_parallel": 8, "pipeline_parallel": 8, "data_parallel": 16, "micro_batch_size": 1,
          "global_batch_size": 1536, "recompute": "selective", "sequence_parallel": true,
          "pipeline_schedule": "interleaved_1f1b", "virtual_pipeline_stages": 3})";
  Result r = P({"-o", "json", "estimate", "--profile", "dgx-a100-80gb@1", "--model", "gpt3-175b", "--config", "-"},
               config);
  ASSERT_EQ(r.code, 0) << Describe(r);
  auto e = FromJson<v1::Estimate>(r.out);
  EXPECT_EQ(e.config().recompute(), v1::RECOMPUTE_SELECTIVE);
  EXPECT_EQ(e.config().pipeline_schedule(), v1::SCHEDULE_INTERLEAVED_1F1B);
  // A workload file with precision and normalization in lower case.
  const std::string workload = Write(
      "llama-like.json",
      R"({"name": "llama-like", "precision": "bf16", "transformer": {"num_layers": 32, "hidden_size": 4096,
          "num_attention_heads": 32, "num_kv_heads": 8, "ffn_hidden_size": 14336, "seq_length": 4096,
          "vocab_size": 128256, "gated_mlp": true, "normalization": "rmsnorm"}})");
  r = P({"-o", "json", "estimate", "--profile", "dgx-h100-80gb@1", "--workload", workload, "--tp", "8",
         "--global-batch", "8", "--recompute", "full"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  // Two arguments cannot both be standard input.
  r = P({"estimate", "--profile", "dgx-a100-80gb", "--workload", "-", "--config", "-"}, "{}");
  EXPECT_EQ(r.code, 65) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "<stdin>: standard input (\"-\") is already read for another argument")) << Describe(r);
  // A parse error in standard input names it.
  r = P({"estimate", "--profile", "dgx-a100-80gb", "--model", "gpt3-175b", "--config", "-"},
        "{\"recompute\": \"sometimes\"}");
  EXPECT_EQ(r.code, 65) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "<stdin>:1:")) << Describe(r);
  // estimate --batch - and ingest -: lines with lower-case names; an enum value that
  // names nothing is refused with its line (not silently dropped).
  const std::string line = absl::StrCat(
      R"({"profile": "dgx-a100-80gb@1", "model": "gpt3-175b", "config": )",
      absl::StrReplaceAll(config, {{"\n", " "}}), "}");
  r = P({"estimate", "--batch", "-"}, absl::StrCat(line, "\n", absl::StrReplaceAll(line, {{"selective", "sometimes"}}),
                                                   "\n"));
  ASSERT_EQ(r.code, 0) << Describe(r);
  const std::vector<std::string> out = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(out.size(), 2u) << r.out;
  EXPECT_EQ(FromJson<v1::Estimate>(out[0]).config().recompute(), v1::RECOMPUTE_SELECTIVE);
  EXPECT_EQ(FromJson<v1::EstimateResult>(out[1]).error().message(),
            "<stdin>:2: not a valid EstimateRequest: recompute: \"sometimes\" is not one of none, selective, full");
  const std::string m = absl::StrCat(
      R"({"id": "lower-case-1", "profile": "dgx-h100-80gb", "workload": {"name": "gpt3", "precision": "bf16",)",
      R"( "transformer": {"num_layers": 96, "hidden_size": 12288, "num_attention_heads": 96, "seq_length": 2048,)",
      R"( "vocab_size": 51200}}, "config": )", absl::StrReplaceAll(config, {{"\n", " "}}),
      R"(, "iteration_time_s": 9.5})");
  r = P({"ingest", "-"}, m + "\n");
  EXPECT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "1 accepted, 0 duplicate, 0 rejected")) << Describe(r);
}

TEST_F(ServerTest, JsonOutputPrints64BitIntegersAsNumbers) {
  Result r = P({"-o", "json", "models"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "\"hidden_size\": 12288,")) << r.out.substr(0, 600);
  EXPECT_FALSE(Contains(r.out, "\"hidden_size\": \"")) << r.out.substr(0, 600);
  r = P({"-o", "json", "plan", "--profile", "dgx-a100-80gb@1", "--model", "llama3-8b", "--gpus", "8",
         "--global-batch", "32", "--top", "1"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto plan = FromJson<v1::PlanResponse>(r.out);
  EXPECT_TRUE(Contains(r.out, absl::StrCat("\"candidates_enumerated\": ", plan.candidates_enumerated(), ",")))
      << r.out.substr(r.out.size() - 400);
}

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
  if (r.code == 1 && Contains(r.err, "UNIMPLEMENTED")) GTEST_SKIP() << "server built without SimGrid: " << r.err;
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
    } else if (flag == "--screenshot") {
      g_paths.screenshot = value;
    } else {
      std::fprintf(stderr, "cli_test: unknown argument %s\n", flag.c_str());
      return 2;
    }
  }
  if (g_paths.cli.empty()) {
    std::fprintf(stderr,
                 "usage: cli_test --cli PATH [--server PATH] [--data DIR] [--examples DIR] [--screenshot PNG]\n");
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
