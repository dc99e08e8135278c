// The paraplan CLI's commands: each talks to the server over gRPC only and prints a
// table (plan_table.h, compare.h, format.h), CSV, or the JSON of the response
// (json_io.h). Returns the process exit code: 0 ok; 1 no plan fits (plan, compare,
// plan --emit), a measurement was rejected (ingest), or any other RPC error; 2 usage;
// 65 bad input file; 69 server unavailable; 73 a --report file cannot be written.
#ifndef PARAPLAN_CLIENT_COMMANDS_H_
#define PARAPLAN_CLIENT_COMMANDS_H_

#include "client/args.h"

namespace paraplan::cli {

int RunCommand(const Args& args);

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_COMMANDS_H_
