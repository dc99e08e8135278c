// paraplan: command-line client of paraplan-server. See `paraplan --help`.
#include <cstdio>
#include <string>

#include "client/args.h"
#include "client/commands.h"

int main(int argc, char** argv) {
  absl::StatusOr<paraplan::cli::Args> args = paraplan::cli::ParseArgs(argc, argv);
  if (!args.ok()) {
    // One line saying what is wrong, then the short usage of the command concerned.
    std::string message(args.status().message());
    if (message.back() != '\n') message += '\n';
    std::fprintf(stderr, "paraplan: %s", message.c_str());
    return 2;
  }
  return paraplan::cli::RunCommand(*args);
}
