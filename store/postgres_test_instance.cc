#include "store/postgres_test_instance.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace paraplan::store {

namespace {

// Who runs a command: ourselves, or (drop) uid/gid.
struct RunAs {
  bool drop = false;
  uid_t uid = 0;
  gid_t gid = 0;
};

// In a forked child, before exec: only async-signal-safe calls.
void BecomeInChild(const RunAs& as, const char* dir) {
  if (as.drop && (setgroups(0, nullptr) != 0 || setgid(as.gid) != 0 || setuid(as.uid) != 0)) _exit(126);
  if (dir != nullptr && chdir(dir) != 0) _exit(126);
}

// Runs argv[0] with argv (no shell) and returns its stdout + stderr; an error (with that
// output) unless it exits 0.
absl::StatusOr<std::string> Run(const std::vector<std::string>& argv, const RunAs& as, const std::string& dir) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return absl::InternalError("pipe2 failed");
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    const int null = open("/dev/null", O_RDONLY);
    if (null < 0 || dup2(null, 0) < 0 || dup2(out[1], 1) < 0 || dup2(out[1], 2) < 0) _exit(126);
    BecomeInChild(as, dir.empty() ? nullptr : dir.c_str());
    execv(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  std::string output;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(out[0], buf, sizeof buf);
    if (n > 0) {
      output.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(out[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(absl::StrCat(absl::StrJoin(argv, " "), " failed (status ", status, "): ", output));
  }
  return output;
}

// A loopback port that was free a moment ago.
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// The newest /usr/lib/postgresql/N/bin holding initdb, pg_ctl and psql; "" when none.
std::string FindBindir() {
  if (const char* env = std::getenv("PARAPLAN_PG_BINDIR"); env != nullptr && *env != '\0') {
    const std::string dir = env;
    return access((dir + "/initdb").c_str(), X_OK) == 0 ? dir : "";
  }
  glob_t g{};
  std::string best;
  int best_version = -1;
  if (glob("/usr/lib/postgresql/*/bin/initdb", 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) {
      std::string path = g.gl_pathv[i];
      const std::string dir = path.substr(0, path.size() - std::string("/initdb").size());
      const std::string num = dir.substr(std::string("/usr/lib/postgresql/").size(),
                                         dir.size() - std::string("/usr/lib/postgresql/").size() - 4);
      int version = 0;
      if (!absl::SimpleAtoi(num, &version)) version = 0;
      if (access((dir + "/pg_ctl").c_str(), X_OK) != 0 || access((dir + "/psql").c_str(), X_OK) != 0) continue;
      if (version > best_version) {
        best_version = version;
        best = dir;
      }
    }
  }
  globfree(&g);
  return best;
}

}  // namespace

PostgresTestInstance* PostgresTestInstance::Shared(std::string* why) {
  static std::once_flag once;
  static PostgresTestInstance* instance = nullptr;  // stopped at exit (below)
  static std::string error;
  std::call_once(once, [] {
    absl::StatusOr<std::unique_ptr<PostgresTestInstance>> started = Start();
    if (!started.ok()) {
      error = std::string(started.status().message());
      return;
    }
    instance = started->release();
    std::atexit([] { delete instance; });
  });
  if (instance == nullptr && why != nullptr) *why = error;
  return instance;
}

absl::StatusOr<std::unique_ptr<PostgresTestInstance>> PostgresTestInstance::Start() {
  std::unique_ptr<PostgresTestInstance> pg(new PostgresTestInstance());
  pg->bindir_ = FindBindir();
  if (pg->bindir_.empty()) {
    return absl::NotFoundError(
        "PostgreSQL server binaries not found (no initdb in /usr/lib/postgresql/*/bin or $PARAPLAN_PG_BINDIR): "
        "apt-get install postgresql (scripts/deps.sh does)");
  }
  char tmpl[] = "/tmp/paraplan_pg_XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return absl::InternalError("mkdtemp failed");
  pg->root_ = tmpl;
  RunAs as;
  if (geteuid() == 0) {  // initdb and pg_ctl refuse root: run them as nobody
    const passwd* nobody = getpwnam("nobody");
    if (nobody == nullptr) return absl::FailedPreconditionError("running as root and there is no user nobody for initdb");
    as = RunAs{true, nobody->pw_uid, nobody->pw_gid};
    if (chown(pg->root_.c_str(), as.uid, as.gid) != 0) return absl::InternalError("chown of the temporary directory failed");
  }
  pg->uid_ = as.drop ? as.uid : getuid();
  pg->gid_ = as.drop ? as.gid : getgid();
  const std::string data = pg->root_ + "/data";
  const std::string pg_ctl = pg->bindir_ + "/pg_ctl";

  // The watchdog: waits for EOF on its stdin (our end closes when we exit, however we
  // exit), then stops the server and removes the directory. Its own session, so that a
  // kill of our process group does not take it along.
  {
    const std::vector<std::string> argv = {
        "/bin/sh", "-c", "cat >/dev/null; \"$0\" -D \"$1\" -m immediate -w stop >/dev/null 2>&1; rm -rf \"$2\"",
        pg_ctl, data, pg->root_};
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int in[2];
    if (pipe2(in, O_CLOEXEC) != 0) return absl::InternalError("pipe2 failed");
    const pid_t pid = fork();
    if (pid < 0) return absl::InternalError("fork failed");
    if (pid == 0) {
      setsid();
      const int null = open("/dev/null", O_WRONLY);
      if (null < 0 || dup2(in[0], 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0) _exit(126);
      BecomeInChild(as, "/");
      execv(args[0], args.data());
      _exit(127);
    }
    close(in[0]);
    pg->watchdog_ = pid;
    pg->watchdog_fd_ = in[1];
  }

  absl::StatusOr<std::string> init =
      Run({pg->bindir_ + "/initdb", "-D", data, "-U", "paraplan", "--auth=trust", "--locale=C", "--encoding=UTF8",
           "--no-sync"},
          as, pg->root_);
  if (!init.ok()) return init.status();
  absl::Status last;
  for (int attempt = 0; attempt < 5; ++attempt) {
    pg->port_ = FreePort();
    absl::StatusOr<std::string> started = Run(
        {pg_ctl, "-D", data, "-l", pg->root_ + "/server.log", "-w", "-t", "60", "-o",
         absl::StrCat("-k ", pg->root_, " -p ", pg->port_,
                      " -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off"),
         "start"},
        as, pg->root_);
    if (started.ok()) {
      pg->started_ = true;
      return pg;
    }
    last = started.status();
    Run({pg_ctl, "-D", data, "-m", "immediate", "-w", "stop"}, as, pg->root_).IgnoreError();
  }
  return last;
}

PostgresTestInstance::~PostgresTestInstance() {
  const RunAs as{geteuid() == 0, uid_, gid_};
  if (started_) Run({bindir_ + "/pg_ctl", "-D", root_ + "/data", "-m", "fast", "-w", "stop"}, as, root_).IgnoreError();
  if (watchdog_fd_ >= 0) close(watchdog_fd_);  // the watchdog removes the directory
  if (watchdog_ > 0) {
    int status = 0;
    while (waitpid(watchdog_, &status, 0) < 0 && errno == EINTR) {
    }
  } else if (!root_.empty()) {
    Run({"/bin/rm", "-rf", root_}, RunAs{}, "").IgnoreError();
  }
}

absl::StatusOr<std::string> PostgresTestInstance::NewDatabase() {
  static std::mutex mu;
  int n = 0;
  {
    std::lock_guard<std::mutex> lock(mu);
    n = ++databases_;
  }
  const std::string name = absl::StrCat("t", getpid(), "_", n);
  const std::string base = absl::StrCat("postgresql://paraplan@127.0.0.1:", port_, "/");
  absl::StatusOr<std::string> created = Psql(base + "postgres", absl::StrCat("CREATE DATABASE ", name));
  if (!created.ok()) return created.status();
  return base + name;
}

absl::StatusOr<std::string> PostgresTestInstance::Psql(const std::string& url, const std::string& sql) {
  return Run({bindir_ + "/psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql}, RunAs{}, "");
}

}  // namespace paraplan::store
