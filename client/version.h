// The version of the paraplan CLI and the API it speaks. paraplan.v1 has no RPC that
// reports the server's version, so `paraplan --version` prints the CLI's only.
#ifndef PARAPLAN_CLIENT_VERSION_H_
#define PARAPLAN_CLIENT_VERSION_H_

namespace paraplan::cli {

inline constexpr char kCliVersion[] = "0.11.0";
inline constexpr char kApiVersion[] = "paraplan.v1";

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_VERSION_H_
