// Command-line arguments of the paraplan CLI: global flags, the command words, and
// --key value options. Parsing only (no RPC); errors are usage errors (exit 2).
#ifndef PARAPLAN_CLIENT_ARGS_H_
#define PARAPLAN_CLIENT_ARGS_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace paraplan::cli {

struct Args {
  std::string server = "127.0.0.1:50051";
  std::string output = "table";  // table | json
  double timeout_s = 30;
  std::vector<std::string> words;  // command, subcommand, positional arguments
  std::map<std::string, std::string> options;  // --key value
  std::set<std::string> flags;                 // --key (boolean)
  bool help = false;

  bool Has(const std::string& key) const { return options.count(key) > 0; }
  std::string Get(const std::string& key, const std::string& fallback = "") const {
    auto it = options.find(key);
    return it == options.end() ? fallback : it->second;
  }
};

absl::StatusOr<Args> ParseArgs(int argc, char** argv);
std::string Usage();

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_ARGS_H_
