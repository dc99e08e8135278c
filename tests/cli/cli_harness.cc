#include "tests/cli/cli_harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace paraplan::cli_test {

Paths g_paths;
std::string g_tmp;
Server* g_server = nullptr;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

RefusingPort::RefusingPort() : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd_ >= 0 && bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port_ = ntohs(addr.sin_port);
  }
}

RefusingPort::~RefusingPort() {
  if (fd_ >= 0) close(fd_);
}

std::string RefusingPort::address() const { return "127.0.0.1:" + std::to_string(port_); }

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

pid_t Spawn(const std::vector<std::string>& argv, const std::string& out_path, const std::string& err_path,
            const std::map<std::string, std::string>& env, const std::string& in_path) {
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

Result RunCli(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
              const std::string& stdin_text) {
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

Server::Server(const std::string& name) : dir_(absl::StrCat(g_tmp, "/", name)) { mkdir(dir_.c_str(), 0755); }

bool Server::Start(const std::vector<std::string>& extra) {
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

int Server::Stop() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  const int code = WaitFor(pid_, std::chrono::seconds(20));
  pid_ = -1;
  return code;
}

void ServerTest::SetUp() {
  if (g_paths.server.empty()) GTEST_SKIP() << "no --server binary given";
  if (g_server == nullptr) {
    g_server = new Server("shared");
    ASSERT_TRUE(g_server->Start()) << "paraplan-server did not start:\n" << Slurp(g_server->log());
  }
}

Result ServerTest::P(std::vector<std::string> args, const std::string& stdin_text) {
  args.insert(args.begin(), {"--server", g_server->address()});
  return RunCli(args, {}, stdin_text);
}

std::string ServerTest::Write(const std::string& name, const std::string& text) {
  const std::string path = absl::StrCat(g_tmp, "/", name);
  WriteFile(path, text);
  return path;
}

}  // namespace paraplan::cli_test

using paraplan::cli_test::g_paths;
using paraplan::cli_test::g_server;
using paraplan::cli_test::g_tmp;

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
