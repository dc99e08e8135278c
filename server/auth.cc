#include "server/auth.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace paraplan::server {

namespace {

// Equal strings in time that depends on the length only.
bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

const char* RoleName(Role r) {
  switch (r) {
    case Role::kReader:
      return "reader";
    case Role::kWriter:
      return "writer";
    case Role::kAdmin:
      return "admin";
    case Role::kNone:
      break;
  }
  return "none";
}

Role RequiredRole(absl::string_view service, absl::string_view method) {
  if (method == "DeleteProfile" || method == "PromoteProfile") return Role::kAdmin;
  // Estimates, plans, simulations and co-design change nothing.
  if (service == "Planner" || service == "Network") return Role::kReader;
  if (method == "GetProfile" || method == "ListProfiles" || method == "ListProfileVersions" ||
      method == "GetAccuracy" || method == "GetCalibration" || method == "CheckProfile") {
    return Role::kReader;
  }
  return Role::kWriter;  // create, update, fit, ingest, calibrate
}

absl::StatusOr<Auth> Auth::FromText(absl::string_view text, bool allow_anonymous_reads) {
  Auth a;
  a.allow_anonymous_reads_ = allow_anonymous_reads;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || absl::StartsWith(line, "#")) continue;
    const std::vector<absl::string_view> f = absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    const std::string where = absl::StrCat("tokens file line ", line_no);
    if (f.size() != 2) return absl::InvalidArgumentError(absl::StrCat(where, ": expected \"TOKEN ROLE\""));
    Token t;
    t.secret = std::string(f[0]);
    if (t.secret.size() < 16) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": a token needs at least 16 characters"));
    }
    const std::string role = absl::AsciiStrToLower(f[1]);
    t.role = role == "reader" ? Role::kReader : role == "writer" ? Role::kWriter : role == "admin" ? Role::kAdmin
                                                                                                    : Role::kNone;
    if (t.role == Role::kNone) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": role \"", f[1].substr(0, 20), "\" is not reader, writer or admin"));
    }
    for (const Token& o : a.tokens_) {
      if (o.secret == t.secret) return absl::InvalidArgumentError(absl::StrCat(where, ": token given twice"));
    }
    a.tokens_.push_back(std::move(t));
  }
  if (a.tokens_.empty()) return absl::InvalidArgumentError("tokens file: no tokens");
  return a;
}

absl::StatusOr<Auth> Auth::FromTokensFile(const std::string& path, bool allow_anonymous_reads) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("--tokens-file: cannot read ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return FromText(ss.str(), allow_anonymous_reads);
}

absl::Status Auth::Check(absl::string_view authorization, Role needed) const {
  if (tokens_.empty()) return absl::OkStatus();
  absl::string_view secret = absl::StripAsciiWhitespace(authorization);
  const bool bearer = absl::ConsumePrefix(&secret, "Bearer ") || absl::ConsumePrefix(&secret, "bearer ");
  if (!bearer || secret.empty()) {
    if (allow_anonymous_reads_ && needed == Role::kReader) return absl::OkStatus();
    return absl::UnauthenticatedError("missing bearer token (metadata \"authorization: Bearer TOKEN\")");
  }
  Role role = Role::kNone;
  for (const Token& t : tokens_) {
    if (ConstantTimeEquals(t.secret, secret)) role = t.role;
  }
  if (role == Role::kNone) return absl::UnauthenticatedError("unknown bearer token");
  if (static_cast<int>(role) < static_cast<int>(needed)) {
    return absl::PermissionDeniedError(
        absl::StrCat("this call needs role ", RoleName(needed), "; the token's role is ", RoleName(role)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadPem(const std::string& path, const char* flag) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(flag, ": cannot read ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string pem = ss.str();
  if (!absl::StrContains(pem, "-----BEGIN ")) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": ", path, " holds no PEM block"));
  }
  return pem;
}

bool IsLoopback(absl::string_view host_port) {
  absl::string_view host = host_port;
  if (absl::ConsumePrefix(&host, "[")) {
    host = host.substr(0, host.find(']'));
    in6_addr v6;
    if (inet_pton(AF_INET6, std::string(host).c_str(), &v6) != 1) return false;
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;  // [::ffff:127.0.0.1]
  }
  host = host.substr(0, host.rfind(':'));
  if (host == "localhost") return true;
  // An address, parsed: "127.example.org" is a name, not loopback.
  in_addr v4;
  return inet_pton(AF_INET, std::string(host).c_str(), &v4) == 1 && (ntohl(v4.s_addr) >> 24) == 127;
}

}  // namespace paraplan::server
