// paraplan-server: the planning daemon.
//   paraplan-server [--listen HOST:PORT] [--db PATH] [--metrics-listen HOST:PORT|off]
//                   [--auto-calibrate-after N] [--max-message-bytes N]
//                   [--log-level debug|info|warn|error|off] [--quiet]
// Prints "paraplan-server listening on HOST:PORT ..." on stdout once serving (PORT is
// the bound one, so --listen 127.0.0.1:0 works). SIGTERM / SIGINT: health turns
// NOT_SERVING, in-flight RPCs get 10 s to finish, exit 0. Bad flags: usage, exit 2.
// Cannot start (database, port): exit 1.
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/log.h"
#include "server/server.h"

namespace {

constexpr char kUsage[] =
    "usage: paraplan-server [--listen HOST:PORT] [--db PATH] [--metrics-listen HOST:PORT|off]\n"
    "                       [--auto-calibrate-after N] [--max-message-bytes N]\n"
    "                       [--log-level debug|info|warn|error|off] [--quiet]\n"
    "defaults: --listen 127.0.0.1:50051 --db paraplan.db --metrics-listen 127.0.0.1:9464\n"
    "          --auto-calibrate-after 20 (0 = never) --max-message-bytes 16777216 --log-level info\n";

int UsageError(const std::string& why) {
  std::fprintf(stderr, "paraplan-server: %s\n%s", why.c_str(), kUsage);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using paraplan::server::LogLevel;
  paraplan::server::ServerOptions o;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (flag == "--quiet") {
      o.log_level = LogLevel::kWarn;
      continue;
    }
    // --flag VALUE or --flag=VALUE
    std::string v;
    const size_t eq = flag.find('=');
    if (eq != std::string::npos) {
      v = flag.substr(eq + 1);
      flag.resize(eq);
    }
    static const char* const kValued[] = {"--listen", "--db", "--metrics-listen", "--auto-calibrate-after",
                                          "--max-message-bytes", "--log-level"};
    if (std::find(std::begin(kValued), std::end(kValued), flag) == std::end(kValued)) {
      return UsageError(absl::StrCat(flag, ": unknown flag"));
    }
    if (eq == std::string::npos) {
      if (i + 1 >= argc) return UsageError(absl::StrCat(flag, ": missing value"));
      v = argv[++i];
    }
    if (flag == "--listen") {
      o.listen = v;
    } else if (flag == "--db") {
      o.db_path = v;
    } else if (flag == "--metrics-listen") {
      o.metrics_listen = (v == "off") ? "" : v;
    } else if (flag == "--auto-calibrate-after") {
      if (!absl::SimpleAtoi(v, &o.auto_calibrate_after) || o.auto_calibrate_after < 0) {
        return UsageError(absl::StrCat(flag, ": \"", v, "\" is not a count >= 0"));
      }
    } else if (flag == "--max-message-bytes") {
      if (!absl::SimpleAtoi(v, &o.max_message_bytes) || o.max_message_bytes <= 0) {
        return UsageError(absl::StrCat(flag, ": \"", v, "\" is not a positive byte count"));
      }
    } else if (flag == "--log-level") {
      absl::StatusOr<LogLevel> level = paraplan::server::ParseLogLevel(v);
      if (!level.ok()) return UsageError(std::string(level.status().message()));
      o.log_level = *level;
    }
  }
  if (o.listen.empty() || o.listen.find(':') == std::string::npos) {
    return UsageError(absl::StrCat("--listen: \"", o.listen, "\" is not HOST:PORT"));
  }

  // Block the stop signals before any thread starts, so every gRPC / prometheus thread
  // inherits the mask; this thread takes them with sigwait.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  absl::StatusOr<std::unique_ptr<paraplan::server::RunningServer>> server = paraplan::server::StartServer(o);
  if (!server.ok()) {
    std::fprintf(stderr, "paraplan-server: cannot start: %s\n", server.status().ToString().c_str());
    return 1;
  }
  const std::string host = o.listen.substr(0, o.listen.rfind(':'));
  const std::string metrics =
      o.metrics_listen.empty()
          ? "off"
          : absl::StrCat(o.metrics_listen.substr(0, o.metrics_listen.rfind(':')), ":", (*server)->metrics_port(),
                         "/metrics");
  std::printf("paraplan-server listening on %s:%d (db %s, metrics %s)\n", host.c_str(), (*server)->port(),
              o.db_path.c_str(), metrics.c_str());
  std::fflush(stdout);
  if (o.log_level <= LogLevel::kInfo) {
    paraplan::server::WriteLogLine(LogLevel::kInfo,
                                   absl::StrCat("msg=\"listening\" addr=", host, ":", (*server)->port(),
                                                " metrics=", metrics, " db=", paraplan::server::LogQuote(o.db_path)));
  }

  int sig = 0;
  sigwait(&stop, &sig);
  if (o.log_level <= LogLevel::kInfo) {
    paraplan::server::WriteLogLine(LogLevel::kInfo, absl::StrCat("msg=\"draining\" signal=", sig, " grace_s=10"));
  }
  (*server)->Shutdown(absl::Seconds(10));
  if (o.log_level <= LogLevel::kInfo) paraplan::server::WriteLogLine(LogLevel::kInfo, "msg=\"stopped\"");
  return 0;
}
