#include "client/args.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace paraplan::cli {

namespace {
// Options that take no value.
const std::set<std::string> kBoolean = {"allow-offload", "help"};
}  // namespace

std::string Usage() {
  return R"(usage: paraplan [--server HOST:PORT] [--output table|json] [--timeout S] COMMAND

commands:
  profiles list
  profiles show NAME[@VERSION]
  profiles history NAME
  profiles put FILE.json              create NAME, or write its next version
  profiles delete NAME
  estimate --profile NAME (--workload FILE | --model PRESET) --config FILE [--gpus N]
  estimate --batch FILE.jsonl         one {"profile","workload","config"} per line
  plan --profile NAME (--workload FILE | --model PRESET) --gpus N[,N...] --global-batch B
       [--top K] [--objective time|cost|energy] [--tp N,..] [--pp N,..] [--dp N,..]
       [--cp N,..] [--ep N,..] [--mbs N,..] [--vpp N,..] [--zero N,..]
       [--recompute none,selective,full] [--max-tp N] [--max-pp N] [--max-cp N] [--max-mbs N]
       [--headroom F] [--allow-offload]
  ingest FILE.jsonl                   Measurements, one per line
  calibrate --profile NAME
  accuracy --profile NAME [--label KEY] [--recent N]
  models                              built-in model presets
  health                              grpc.health.v1 status of the server

exit codes: 0 ok, 2 usage, 65 bad input file, 69 server unavailable, 1 other error
The default server is $PARAPLAN_SERVER or 127.0.0.1:50051.
)";
}

absl::StatusOr<Args> ParseArgs(int argc, char** argv) {
  Args a;
  if (const char* env = std::getenv("PARAPLAN_SERVER"); env != nullptr && *env != '\0') a.server = env;
  for (int i = 1; i < argc; ++i) {
    std::string w = argv[i];
    if (w == "-h") w = "--help";
    if (w.rfind("--", 0) != 0 || w.size() == 2) {
      a.words.push_back(w);
      continue;
    }
    std::string key = w.substr(2), value;
    const size_t eq = key.find('=');
    bool has_value = false;
    if (eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
      has_value = true;
    }
    if (kBoolean.count(key)) {
      if (key == "help") a.help = true;
      a.flags.insert(key);
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argc) return absl::InvalidArgumentError(absl::StrCat("--", key, " needs a value"));
      value = argv[++i];
    }
    if (key == "server") {
      a.server = value;
    } else if (key == "output") {
      if (value != "table" && value != "json") {
        return absl::InvalidArgumentError(absl::StrCat("--output must be table or json, not \"", value, "\""));
      }
      a.output = value;
    } else if (key == "timeout") {
      if (!absl::SimpleAtod(value, &a.timeout_s) || a.timeout_s <= 0) {
        return absl::InvalidArgumentError("--timeout must be a positive number of seconds");
      }
    } else {
      a.options[key] = value;
    }
  }
  return a;
}

}  // namespace paraplan::cli
