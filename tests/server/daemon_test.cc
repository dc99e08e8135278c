// The paraplan-server BINARY: flags, the "listening on" line with the bound port, and
// SIGTERM draining an in-flight Plan before exiting 0 with an intact database.
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "store/store.h"
#include "tests/server/fixture.h"

extern char** environ;

namespace paraplan::server {
namespace {

using ::testing::HasSubstr;

// A child process running the server binary with stdout on a pipe.
class Daemon {
 public:
  explicit Daemon(const std::vector<std::string>& args) {
    int out[2];
    if (pipe(out) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::vector<std::string> all = {PARAPLAN_SERVER_BINARY};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    stdout_ = out[0];
  }
  ~Daemon() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (stdout_ >= 0) close(stdout_);
  }
  // The first stdout line, waiting up to `timeout`; empty on timeout or EOF.
  std::string FirstLine(std::chrono::milliseconds timeout) {
    std::string line;
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < end) {
      pollfd p{stdout_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char buf[512];
      const ssize_t n = read(stdout_, buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<size_t>(n));
    }
    return line.substr(0, line.find('\n'));
  }
  // Exit code, or -1 if it did not exit normally within `timeout`.
  int Wait(std::chrono::milliseconds timeout) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int stdout_ = -1;
  bool exited_ = false;
};

std::string TempDir() {
  char tmpl[] = "/tmp/paraplan_daemon_XXXXXX";
  return mkdtemp(tmpl);
}

TEST(DaemonTest, BadFlagsExitWithUsage) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--bogus"}, {"--log-level", "loud"}, {"--auto-calibrate-after", "-1"}, {"--db"},
           {"--max-message-bytes", "lots"}}) {
    Daemon d(args);
    ASSERT_GT(d.pid(), 0);
    EXPECT_EQ(d.Wait(std::chrono::seconds(10)), 2) << args[0];
  }
  Daemon help({"--help"});
  EXPECT_THAT(help.FirstLine(std::chrono::seconds(10)), HasSubstr("usage: paraplan-server"));
  EXPECT_EQ(help.Wait(std::chrono::seconds(10)), 0);
}

TEST(DaemonTest, SigtermDrainsAnInFlightPlanAndExitsZero) {
  const std::string dir = TempDir();
  const std::string db = dir + "/paraplan.db";
  Daemon d({"--listen", "127.0.0.1:0", "--db", db, "--metrics-listen", "127.0.0.1:0", "--log-level", "warn"});
  ASSERT_GT(d.pid(), 0);
  const std::string line = d.FirstLine(std::chrono::seconds(30));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(line, m, std::regex(R"(listening on 127\.0\.0\.1:(\d+) .*metrics 127\.0\.0\.1:(\d+))")))
      << line;
  const int port = std::stoi(m[1]);
  const int metrics_port = std::stoi(m[2]);
  ASSERT_GT(port, 0);
  ASSERT_GT(metrics_port, 0);

  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
  {
    auto health = grpc::health::v1::Health::NewStub(channel);
    grpc::ClientContext ctx;
    grpc::health::v1::HealthCheckRequest req;
    grpc::health::v1::HealthCheckResponse r;
    ASSERT_TRUE(health->Check(&ctx, req, &r).ok());
    EXPECT_EQ(r.status(), grpc::health::v1::HealthCheckResponse::SERVING);
  }
  auto planner = v1::Planner::NewStub(channel);
  {
    grpc::ClientContext ctx;
    v1::ListModelsResponse r;
    ASSERT_TRUE(planner->ListModels(&ctx, v1::ListModelsRequest(), &r).ok());
  }
  EXPECT_EQ(SampleValue(HttpGet(metrics_port, "/metrics"),
                        "paraplan_rpc_requests_total{code=\"OK\",method=\"ListModels\"}"),
            1);
  // Any other path used to crash the binary (civetweb, exit 139): now 404, still serving.
  for (int round = 0; round < 3; ++round) {
    for (const char* path : {"/", "/favicon.ico", "/metrics/", "/healthz/"}) {
      EXPECT_THAT(HttpGet(metrics_port, path), HasSubstr(" 404 Not Found\r\n")) << path;
    }
  }
  EXPECT_THAT(HttpGet(metrics_port, "/healthz"), HasSubstr(" 200 OK\r\n"));

  v1::PlanRequest req;
  req.set_profile("dgx-a100-80gb");
  req.set_model("gpt3-175b");
  for (int g : {4096, 2048, 1024}) req.add_gpus(g);
  req.set_global_batch_size(1536);
  grpc::Status status;
  v1::PlanResponse resp;
  std::chrono::steady_clock::time_point answered;
  std::thread client([&] {
    grpc::ClientContext ctx;
    status = planner->Plan(&ctx, req, &resp);
    answered = std::chrono::steady_clock::now();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto signalled = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(d.pid(), SIGTERM), 0);
  client.join();
  EXPECT_EQ(d.Wait(std::chrono::seconds(30)), 0);
  // Prompt once the plan is answered: the drain's idle wait, not a metrics server's.
  EXPECT_LT(std::chrono::steady_clock::now() - answered, std::chrono::milliseconds(1500));
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(resp.truncated());
  EXPECT_GT(resp.plans_size(), 0);
  EXPECT_GT(answered, signalled) << "the Plan finished before SIGTERM; nothing was in flight";

  absl::StatusOr<std::unique_ptr<store::Store>> store = store::Store::Open(db);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_TRUE((*store)->CheckIntegrity().ok());
  EXPECT_TRUE((*store)->GetProfile("dgx-a100-80gb").ok());
  store->reset();
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace paraplan::server
