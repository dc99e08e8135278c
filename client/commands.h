// The paraplan CLI's commands: each talks to the server over gRPC only and prints a
// table or the proto3 JSON of the response. Returns the process exit code: 0 ok,
// 2 usage, 65 bad input file, 69 server unavailable, 73 a --report file cannot be
// written, 1 any other RPC error (and `plan --emit` with no plan to emit).
#ifndef PARAPLAN_CLIENT_COMMANDS_H_
#define PARAPLAN_CLIENT_COMMANDS_H_

#include "client/args.h"

namespace paraplan::cli {

int RunCommand(const Args& args);

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_COMMANDS_H_
