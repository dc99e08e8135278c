// The harness of the CLI's end-to-end tests: the real `paraplan` binary run as a child
// process (RunCli), against a real `paraplan-server` on a free loopback port with its own
// SQLite file (Server; one shared by the ServerTest fixture for the whole program).
//
// usage: cli_test --cli PATH [--server PATH] [--data DIR] [--examples DIR] [--screenshot PNG]
//                 [gtest flags]
// --screenshot copies the plan report's headless-Chromium screenshot there (docs/cli.md's
// docs/plan-report.png is made so).
// Without --server only the tests that need no server run (usage errors, bad input
// files, server unavailable); the others are skipped. Every server started is stopped: at
// the end of the program, and by the kernel (PR_SET_PDEATHSIG) should the program die
// first. main() (cli_harness.cc) parses the flags, makes the scratch directory g_tmp and
// removes it at exit. Single-threaded, as gtest runs the tests.
#ifndef PARAPLAN_TESTS_CLI_CLI_HARNESS_H_
#define PARAPLAN_TESTS_CLI_CLI_HARNESS_H_

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace paraplan::cli_test {

struct Paths {
  std::string cli, server, data, examples;
  std::string screenshot;  // where the Chromium test copies its screenshot ("" = nowhere)
};
extern Paths g_paths;
extern std::string g_tmp;  // scratch directory, removed at exit

std::string Slurp(const std::string& path);
void WriteFile(const std::string& path, const std::string& text);
inline bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}
// A loopback TCP port free at the time of the call (0 if none could be had).
int FreePort();

// A loopback port held bound but not listening while this lives: connections to it are
// refused, and no server another test starts meanwhile can take it (one took a port
// FreePort had closed again, and the "dead" server answered). port() is 0 if none could
// be had.
class RefusingPort {
 public:
  RefusingPort();
  ~RefusingPort();
  RefusingPort(const RefusingPort&) = delete;
  RefusingPort& operator=(const RefusingPort&) = delete;
  int port() const { return port_; }
  std::string address() const;  // 127.0.0.1:port

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Starts `argv` with stdout and stderr sent to files and stdin read from `in_path`;
// env entries are added to the child's environment. The child dies with this process.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& out_path, const std::string& err_path,
            const std::map<std::string, std::string>& env = {}, const std::string& in_path = "/dev/null");
// Waits for `pid` up to `limit`; kills it (SIGKILL) past that. The exit code, or 128+signal.
int WaitFor(pid_t pid, std::chrono::seconds limit);

struct Result {
  int code = -1;
  std::string out, err;
};

// Runs the CLI with `args` (and `stdin_text` on its standard input) and returns its exit
// code and output.
Result RunCli(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {},
              const std::string& stdin_text = "");
// Exit code and the first 2,000 characters of each stream, for failure messages.
std::string Describe(const Result& r);

template <typename T>
T FromJson(const std::string& text) {
  T m;
  const auto s = google::protobuf::util::JsonStringToMessage(text, &m);
  EXPECT_TRUE(s.ok()) << s.message() << "\n" << text.substr(0, 1000);
  return m;
}

// A paraplan-server on free loopback ports with its own SQLite file in g_tmp/`name`.
class Server {
 public:
  explicit Server(const std::string& name);
  ~Server() { Stop(); }

  // Starts the server (with `extra` flags) and waits (bounded) until it answers a
  // health check.
  bool Start(const std::vector<std::string>& extra = {});
  // SIGTERM, then SIGKILL if it has not exited within 20 s. Its exit code.
  int Stop();
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

extern Server* g_server;  // shared by the tests that need one

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override;
  // The CLI against the shared server.
  Result P(std::vector<std::string> args, const std::string& stdin_text = "");
  // Writes `text` to g_tmp/`name`; returns the path.
  std::string Write(const std::string& name, const std::string& text);
};

// The ParallelConfig of Narayanan et al.'s GPT-3 175B run on 1024 A100s.
inline constexpr char kGpt3Config[] =
    R"({"tensor_parallel": 8, "pipeline_parallel": 8, "data_parallel": 16, "micro_batch_size": 1,
        "global_batch_size": 1536, "recompute": "RECOMPUTE_SELECTIVE", "sequence_parallel": true,
        "virtual_pipeline_stages": 3})";

}  // namespace paraplan::cli_test

#endif  // PARAPLAN_TESTS_CLI_CLI_HARNESS_H_
