// paraplan-server: the planning daemon.
//   paraplan-server --listen 127.0.0.1:50051 --db PATH --metrics-listen 127.0.0.1:9464
//                   [--auto-calibrate-after N] [--max-message-bytes N] [--quiet]
// SIGTERM / SIGINT: health NOT_SERVING, in-flight RPCs finish (10 s grace), exit 0.
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/numbers.h"
#include "server/server.h"

namespace {

void Usage() {
  std::fprintf(stderr,
               "usage: paraplan-server [--listen HOST:PORT] [--db PATH] [--metrics-listen HOST:PORT|off]\n"
               "                       [--auto-calibrate-after N] [--max-message-bytes N] [--quiet]\n");
}

}  // namespace

int main(int argc, char** argv) {
  paraplan::server::ServerOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (flag == "--help" || flag == "-h") {
      Usage();
      return 0;
    } else if (flag == "--quiet") {
      o.log_requests = false;
    } else if (flag == "--listen" && value(&v)) {
      o.listen = v;
    } else if (flag == "--db" && value(&v)) {
      o.db_path = v;
    } else if (flag == "--metrics-listen" && value(&v)) {
      o.metrics_listen = (v == "off") ? "" : v;
    } else if (flag == "--auto-calibrate-after" && value(&v) && absl::SimpleAtoi(v, &o.auto_calibrate_after) &&
               o.auto_calibrate_after >= 0) {
    } else if (flag == "--max-message-bytes" && value(&v) && absl::SimpleAtoi(v, &o.max_message_bytes) &&
               o.max_message_bytes > 0) {
    } else {
      std::fprintf(stderr, "paraplan-server: bad or incomplete flag %s\n", flag.c_str());
      Usage();
      return 2;
    }
  }
  // Block the stop signals in every thread; this one waits for them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  auto server = paraplan::server::StartServer(o);
  if (!server.ok()) {
    std::fprintf(stderr, "paraplan-server: %s\n", std::string(server.status().message()).c_str());
    return 1;
  }
  const std::string host = o.listen.substr(0, o.listen.rfind(':'));
  std::printf("paraplan-server listening on %s:%d (db %s, metrics %s)\n", host.c_str(), (*server)->port(),
              o.db_path.c_str(), o.metrics_listen.empty() ? "off" : o.metrics_listen.c_str());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&stop, &sig);
  std::fprintf(stderr, "paraplan-server: signal %d, draining\n", sig);
  (*server)->Shutdown(absl::Seconds(10));
  return 0;
}
