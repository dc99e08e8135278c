// The command line of the paraplan CLI: global flags (--server, --output, --timeout,
// --help), the command words, and the command's --key value options and boolean flags.
//
// Contract: ParseArgs only parses and checks the *shape* of the command line against
// the table of commands (known command, known flags for it, the right number of
// positional words, an --output the command can print); it does no I/O and no RPC. Its
// errors are usage errors (exit 2): one line saying what is wrong, with "did you mean"
// suggestions for a mistyped command, subcommand, flag or --output value (suggest.h),
// then the short usage of the command concerned (its synopsis and where to find the
// rest). `-o` is --output; `--set` may be repeated; `--version` stands alone. Whether a value
// is well formed (a number, a list of numbers) and which options a command requires
// are checked by the command itself (cli.h), which then prints `Args::usage`.
// The default server is $PARAPLAN_SERVER when set, else 127.0.0.1:50051.
// Why not CLI11 (Debian's libcli11-dev 2.1): it has no "did you mean" for a mistyped
// command or flag (CLIUtils/CLI11 issue #1149, open in 2025), which these usage errors
// give; the rest of this file is the command table, which CLI11 would need as well.
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
  std::string output = "table";  // table | wide | csv | json (wide, csv: plan and compare)
  double timeout_s = 30;         // deadline of each RPC
  std::string token;             // --token or $PARAPLAN_TOKEN: "authorization: Bearer TOKEN"
  std::string tls_ca;            // --tls-ca PEM: connect with TLS, trusting this CA
  std::string tls_cert, tls_key;  // --tls-cert / --tls-key PEM: client certificate (mutual TLS)
  std::vector<std::string> words;  // command, subcommand, positional arguments
  std::map<std::string, std::string> options;  // --key value
  std::set<std::string> flags;                 // --key (boolean)
  std::vector<std::string> sets;               // --set PATH=VALUE, in order (repeatable)
  bool help = false;     // --help was given: print `usage` and exit 0
  bool version = false;  // --version was given: print the version and exit 0
  std::string usage;        // usage of the command given (or of the whole CLI)
  std::string short_usage;  // its synopsis and a pointer to --help (for usage errors)

  bool Has(const std::string& key) const { return options.count(key) > 0; }
  std::string Get(const std::string& key, const std::string& fallback = "") const {
    auto it = options.find(key);
    return it == options.end() ? fallback : it->second;
  }
};

absl::StatusOr<Args> ParseArgs(int argc, char** argv);

// The usage of the whole CLI (every command, global flags, exit codes).
std::string Usage();

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_ARGS_H_
