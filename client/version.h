// The version of the paraplan CLI and the API it speaks: those of the build
// (proto/version.h, one definition for both binaries). `paraplan --version` also asks
// the server for its own (Planner.GetVersion).
#ifndef PARAPLAN_CLIENT_VERSION_H_
#define PARAPLAN_CLIENT_VERSION_H_

#include "proto/version.h"

namespace paraplan::cli {

inline constexpr const char* kCliVersion = paraplan::kVersion;
inline constexpr const char* kApiVersion = paraplan::kApiVersion;

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_VERSION_H_
