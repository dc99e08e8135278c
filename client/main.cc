// paraplan: command-line client of paraplan-server. See `paraplan --help`.
#include <cstdio>
#include <string>

#include "client/args.h"
#include "client/commands.h"

int main(int argc, char** argv) {
  absl::StatusOr<paraplan::cli::Args> args = paraplan::cli::ParseArgs(argc, argv);
  if (!args.ok()) {
    std::fprintf(stderr, "paraplan: %s\n%s", std::string(args.status().message()).c_str(),
                 paraplan::cli::Usage().c_str());
    return 2;
  }
  return paraplan::cli::RunCommand(*args);
}
