// Auth: who may call what. Bearer tokens with roles (reader < writer < admin) read from
// a tokens file, checked on every paraplan RPC and on GET /metrics (reader role, server.cc);
// and the PEM files of server TLS.
//
// Contract: with no tokens configured every call is allowed (the local quick start).
// With tokens, a call needs "authorization: Bearer TOKEN" naming a token whose role is
// at least the method's (RequiredRole); reads may be left open with
// allow_anonymous_reads. Failures are UNAUTHENTICATED (no / unknown token) or
// PERMISSION_DENIED (role too low); messages never echo the token. Tokens are compared
// in constant time. Immutable after loading; thread-safe.
#ifndef PARAPLAN_SERVER_AUTH_H_
#define PARAPLAN_SERVER_AUTH_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paraplan::server {

enum class Role { kNone = 0, kReader = 1, kWriter = 2, kAdmin = 3 };

const char* RoleName(Role r);

// The least role that may call `service`.`method` (short names, e.g. "Profiles",
// "DeleteProfile"): reads reader, writes writer, deleting and promoting admin.
Role RequiredRole(absl::string_view service, absl::string_view method);

struct Token {
  std::string secret;
  Role role = Role::kNone;
};

class Auth {
 public:
  Auth() = default;  // no tokens: everything allowed
  // Lines "TOKEN ROLE" (roles reader, writer, admin); blank lines and '#' comments are
  // skipped. INVALID_ARGUMENT naming the line for anything else, a token shorter than
  // 16 characters, or a token given twice.
  static absl::StatusOr<Auth> FromTokensFile(const std::string& path, bool allow_anonymous_reads);
  static absl::StatusOr<Auth> FromText(absl::string_view text, bool allow_anonymous_reads);

  bool enabled() const { return !tokens_.empty(); }
  // `authorization` is the metadata value ("Bearer TOKEN"), empty when absent.
  absl::Status Check(absl::string_view authorization, Role needed) const;

 private:
  std::vector<Token> tokens_;
  bool allow_anonymous_reads_ = false;
};

// Reads a whole PEM file; INVALID_ARGUMENT naming `flag` when it cannot be read or has
// no PEM block.
absl::StatusOr<std::string> ReadPem(const std::string& path, const char* flag);

// Whether HOST:PORT names a loopback address (127.0.0.0/8, [::1], localhost).
bool IsLoopback(absl::string_view host_port);

}  // namespace paraplan::server

#endif  // PARAPLAN_SERVER_AUTH_H_
