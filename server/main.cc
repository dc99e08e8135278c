// paraplan-server: the planning daemon.
//   paraplan-server [--listen HOST:PORT] [--db PATH|postgresql://URI] [--metrics-listen HOST:PORT|off]
//                   [--http-listen HOST:PORT]
//                   [--auto-calibrate-after N] [--max-message-bytes N]
//                   [--log-level debug|info|warn|error|off] [--quiet]
//                   [--tls-cert PEM --tls-key PEM [--tls-client-ca PEM]]
//                   [--tokens-file FILE [--allow-anonymous-reads]]
//                   [--max-gpus N] [--max-plan-gpu-counts N] [--max-concurrent-plans N]
//                   [--max-batch N] [--max-ingest N] [--max-profile-bytes N]
//                   [--max-plan-candidates N] [--plan-deadline-s S] [--write-rate PER_S]
// Prints "paraplan-server listening on HOST:PORT ..." on stdout once serving (PORT is
// the bound one, so --listen 127.0.0.1:0 works; likewise "http HOST:PORT" for the
// HTTP/JSON API when --http-listen is given). SIGTERM / SIGINT: health turns
// NOT_SERVING, in-flight RPCs get 10 s to finish, exit 0. Bad flags: usage, exit 2.
// Cannot start (database, port): exit 1.
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/log.h"
#include "server/server.h"
#include "store/store.h"

namespace {

constexpr char kUsage[] =
    "usage: paraplan-server [--listen HOST:PORT] [--db PATH|postgresql://URI] [--metrics-listen HOST:PORT|off]\n"
    "                       [--http-listen HOST:PORT]\n"
    "                       [--auto-calibrate-after N] [--max-message-bytes N]\n"
    "                       [--log-level debug|info|warn|error|off] [--quiet]\n"
    "                       [--tls-cert PEM --tls-key PEM [--tls-client-ca PEM]]\n"
    "                       [--tokens-file FILE [--allow-anonymous-reads]]\n"
    "                       [--max-gpus N] [--max-plan-gpu-counts N] [--max-concurrent-plans N]\n"
    "                       [--max-batch N] [--max-ingest N] [--max-profile-bytes N]\n"
    "                       [--max-plan-candidates N] [--plan-deadline-s S] [--write-rate PER_S]\n"
    "defaults: --listen 127.0.0.1:50051 --db paraplan.db --metrics-listen 127.0.0.1:9464\n"
    "          --auto-calibrate-after 20 (0 = never) --max-message-bytes 16777216 --log-level info\n"
    "--db: a SQLite file (one server), or a postgresql:// (postgres://) URI that any number\n"
    "  of replicas share (password: PGPASSWORD or ~/.pgpass rather than the URI).\n"
    "--http-listen: the same services as HTTP/JSON (POST /v1/plan, /v1/estimate,\n"
    "  /v1/measurements:ingest; GET /v1/profiles/NAME, /v1/models); default off.\n"
    "TLS: server certificate and key (PEM); --tls-client-ca requires client certificates.\n"
    "--tokens-file: lines \"TOKEN ROLE\" (reader, writer, admin); every call then needs\n"
    "\"authorization: Bearer TOKEN\" (reads need none with --allow-anonymous-reads); tokens\n"
    "need TLS unless --listen is a loopback address.\n"
    "limits (defaults): --max-gpus 1048576 --max-plan-gpu-counts 64 --max-concurrent-plans 4\n"
    "  --max-batch 10000 --max-ingest 10000 --max-profile-bytes 1048576 --plan-deadline-s 30\n"
    "  --max-plan-candidates 200000000 (then a truncated result)\n"
    "  --write-rate 50 (write RPCs per second per client host, burst twice that; 0 = off)\n";

int UsageError(const std::string& why) {
  std::fprintf(stderr, "paraplan-server: %s\n%s", why.c_str(), kUsage);
  return 2;
}

using paraplan::server::LogLevel;

// Sets the option `flag` (a flag that takes a value) to `v`; INVALID_ARGUMENT with the
// usage error's text when `v` is not a valid value.
absl::Status ApplyFlag(const std::string& flag, const std::string& v, paraplan::server::ServerOptions* o) {
  if (flag == "--listen") {
    o->listen = v;
  } else if (flag == "--db") {
    o->db_path = v;
  } else if (flag == "--metrics-listen") {
    o->metrics_listen = (v == "off") ? "" : v;
  } else if (flag == "--http-listen") {
    o->http_listen = (v == "off") ? "" : v;
  } else if (flag == "--auto-calibrate-after") {
    if (!absl::SimpleAtoi(v, &o->auto_calibrate_after) || o->auto_calibrate_after < 0) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": \"", v, "\" is not a count >= 0"));
    }
  } else if (flag == "--max-message-bytes") {
    if (!absl::SimpleAtoi(v, &o->max_message_bytes) || o->max_message_bytes <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": \"", v, "\" is not a positive byte count"));
    }
  } else if (flag == "--tls-cert") {
    o->tls_cert_file = v;
  } else if (flag == "--tls-key") {
    o->tls_key_file = v;
  } else if (flag == "--tls-client-ca") {
    o->tls_client_ca_file = v;
  } else if (flag == "--tokens-file") {
    o->tokens_file = v;
  } else if (flag == "--write-rate" || flag == "--plan-deadline-s") {
    double d = 0;
    if (!absl::SimpleAtod(v, &d) || !(d >= 0) || d > 1e6 || (flag == "--plan-deadline-s" && d == 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": \"", v, "\" is not a ", flag == "--write-rate" ? "rate >= 0" : "positive", " number"));
    }
    if (flag == "--write-rate") {
      o->limits.write_rate_per_s = d;
      o->limits.write_burst = std::max(1.0, 2 * d);
    } else {
      o->limits.plan_default_deadline_s = d;
    }
  } else if (flag == "--max-plan-candidates") {
    if (!absl::SimpleAtoi(v, &o->limits.max_plan_candidates) || o->limits.max_plan_candidates <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": \"", v, "\" is not a count > 0"));
    }
  } else if (flag.rfind("--max-", 0) == 0 && flag != "--max-message-bytes") {
    int n = 0;
    if (!absl::SimpleAtoi(v, &n) || n <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(flag, ": \"", v, "\" is not a count > 0"));
    }
    if (flag == "--max-gpus") o->limits.max_gpus = n;
    if (flag == "--max-plan-gpu-counts") o->limits.max_plan_gpu_counts = n;
    if (flag == "--max-concurrent-plans") o->limits.max_concurrent_plans = n;
    if (flag == "--max-batch") o->limits.max_batch = n;
    if (flag == "--max-ingest") o->limits.max_ingest = n;
    if (flag == "--max-profile-bytes") o->limits.max_profile_bytes = n;
  } else if (flag == "--log-level") {
    absl::StatusOr<LogLevel> level = paraplan::server::ParseLogLevel(v);
    if (!level.ok()) return level.status();
    o->log_level = *level;
  }
  return absl::OkStatus();
}

// Fills `o` from the command line. nullopt: serve; else the exit code to leave with
// (0 after --help, 2 after a usage error, which it has printed).
std::optional<int> ParseFlags(int argc, char** argv, paraplan::server::ServerOptions* o) {
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (flag == "--quiet") {
      o->log_level = LogLevel::kWarn;
      continue;
    }
    if (flag == "--allow-anonymous-reads") {
      o->allow_anonymous_reads = true;
      continue;
    }
    // --flag VALUE or --flag=VALUE
    std::string v;
    const size_t eq = flag.find('=');
    if (eq != std::string::npos) {
      v = flag.substr(eq + 1);
      flag.resize(eq);
    }
    static const char* const kValued[] = {"--listen",    "--db",       "--metrics-listen", "--http-listen",
                                          "--auto-calibrate-after",
                                          "--max-message-bytes", "--log-level", "--tls-cert", "--tls-key",
                                          "--tls-client-ca", "--tokens-file", "--max-gpus",
                                          "--max-plan-gpu-counts", "--max-concurrent-plans", "--max-batch",
                                          "--max-ingest", "--max-profile-bytes", "--plan-deadline-s",
                                          "--write-rate", "--max-plan-candidates"};
    if (std::find(std::begin(kValued), std::end(kValued), flag) == std::end(kValued)) {
      return UsageError(absl::StrCat(flag, ": unknown flag"));
    }
    if (eq == std::string::npos) {
      if (i + 1 >= argc) return UsageError(absl::StrCat(flag, ": missing value"));
      v = argv[++i];
    }
    if (absl::Status s = ApplyFlag(flag, v, o); !s.ok()) return UsageError(std::string(s.message()));
  }
  if (o->listen.empty() || o->listen.find(':') == std::string::npos) {
    return UsageError(absl::StrCat("--listen: \"", o->listen, "\" is not HOST:PORT"));
  }
  return std::nullopt;
}

// The "listening" line on stdout (and in the log at info): the bound ports.
void AnnounceListening(const paraplan::server::ServerOptions& o, const paraplan::server::RunningServer& server) {
  const std::string host = o.listen.substr(0, o.listen.rfind(':'));
  const std::string metrics =
      o.metrics_listen.empty()
          ? "off"
          : absl::StrCat(o.metrics_listen.substr(0, o.metrics_listen.rfind(':')), ":", server.metrics_port(),
                         "/metrics");
  const std::string http =
      o.http_listen.empty()
          ? ""
          : absl::StrCat(", http ", o.http_listen.substr(0, o.http_listen.rfind(':')), ":", server.http_port());
  std::printf("paraplan-server listening on %s:%d (db %s, metrics %s%s)\n", host.c_str(), server.port(),
              paraplan::store::Store::Redacted(o.db_path).c_str(), metrics.c_str(), http.c_str());
  std::fflush(stdout);
  if (o.log_level <= LogLevel::kInfo) {
    paraplan::server::WriteLogLine(LogLevel::kInfo,
                                   absl::StrCat("msg=\"listening\" addr=", host, ":", server.port(),
                                                " metrics=", metrics, " db=",
                                                paraplan::server::LogQuote(paraplan::store::Store::Redacted(o.db_path))));
  }
}

}  // namespace

int main(int argc, char** argv) {
  paraplan::server::ServerOptions o;
  if (std::optional<int> exit_code = ParseFlags(argc, argv, &o); exit_code.has_value()) return *exit_code;

  // Block the stop signals before any thread starts, so every gRPC / HTTP thread
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
  AnnounceListening(o, **server);

  int sig = 0;
  sigwait(&stop, &sig);
  if (o.log_level <= LogLevel::kInfo) {
    paraplan::server::WriteLogLine(LogLevel::kInfo, absl::StrCat("msg=\"draining\" signal=", sig, " grace_s=10"));
  }
  (*server)->Shutdown(absl::Seconds(10));
  if (o.log_level <= LogLevel::kInfo) paraplan::server::WriteLogLine(LogLevel::kInfo, "msg=\"stopped\"");
  return 0;
}