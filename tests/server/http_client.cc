// Definitions of http_client.h.
#include "tests/server/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

namespace paraplan::server {

int Connect(int port, const char* from) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (from != nullptr) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    if (inet_pton(AF_INET, from, &local.sin_addr) != 1 ||
        bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
      close(fd);
      return -1;
    }
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

void SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    data.remove_prefix(static_cast<size_t>(n));
  }
}

std::string ReadAll(int fd, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  std::string out;
  char buf[65536];
  for (;;) {
    const int ms = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    pollfd p{fd, POLLIN, 0};
    if (ms <= 0 || poll(&p, 1, ms) <= 0) break;
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

std::string Exchange(int port, std::string_view request, absl::Duration timeout, const char* from) {
  const int fd = Connect(port, from);
  if (fd < 0) return "";
  SendAll(fd, request);
  shutdown(fd, SHUT_WR);
  std::string out = ReadAll(fd, timeout);
  close(fd);
  return out;
}

int StatusOf(const std::string& response) {
  int status = 0;
  if (!absl::StartsWith(response, "HTTP/1.1 ") || response.size() < 12 ||
      !absl::SimpleAtoi(response.substr(9, 3), &status)) {
    return 0;
  }
  return status;
}

std::string BodyOf(const std::string& response) {
  const size_t at = response.find("\r\n\r\n");
  return at == std::string::npos ? "" : response.substr(at + 4);
}

std::string HttpGet(int port, const std::string& path) {
  return Exchange(port, absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"), absl::Seconds(60));
}

Reply Http(int port, const std::string& method, const std::string& target, const std::string& body,
           const std::vector<std::string>& headers) {
  std::string req = absl::StrCat(method, " ", target, " HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  for (const std::string& h : headers) absl::StrAppend(&req, h, "\r\n");
  if (!body.empty() || method == "POST") {
    absl::StrAppend(&req, "Content-Type: application/json\r\nContent-Length: ", body.size(), "\r\n");
  }
  absl::StrAppend(&req, "\r\n", body);
  const std::string in = Exchange(port, req, absl::Seconds(60));
  Reply r;
  const size_t head_end = in.find("\r\n\r\n");
  if (!absl::StartsWith(in, "HTTP/1.1 ") || head_end == std::string::npos) return r;
  std::vector<std::string> lines = absl::StrSplit(in.substr(0, head_end), "\r\n");
  r.status = StatusOf(in);
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon == std::string::npos) continue;
    r.headers[absl::AsciiStrToLower(lines[i].substr(0, colon))] =
        std::string(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
  }
  r.body = in.substr(head_end + 4);
  return r;
}

}  // namespace paraplan::server
