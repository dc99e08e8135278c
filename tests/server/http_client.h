// A raw HTTP/1.x client over loopback sockets for the server tests: what a test needs to
// send well-formed and malformed requests to the daemon's HTTP servers (--metrics-listen,
// --http-listen) and read back exactly what they answered. No retries, no keep-alive:
// each exchange is one connection read until the server closes it (or the timeout).
#ifndef PARAPLAN_TESTS_SERVER_HTTP_CLIENT_H_
#define PARAPLAN_TESTS_SERVER_HTTP_CLIENT_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"

namespace paraplan::server {

// A connected TCP socket to 127.0.0.1:`port`, or -1. `from`: the client's own loopback
// address (127.0.0.1 by default; Linux answers for all of 127/8), so that one test can be
// several clients.
int Connect(int port, const char* from = nullptr);

// Sends all of `data`, ignoring failures (the server may refuse early and close).
void SendAll(int fd, std::string_view data);

// What the server sends until it closes the connection (or `timeout` passes).
std::string ReadAll(int fd, absl::Duration timeout = absl::Seconds(5));

// One request: connect, send `request`, half-close, read the answer until the server
// closes. Empty when the server closed (or reset) without answering.
std::string Exchange(int port, std::string_view request, absl::Duration timeout = absl::Seconds(5),
                     const char* from = nullptr);

// The status code of an HTTP response; 0 when there is none.
int StatusOf(const std::string& response);

// The body of an HTTP response (after the blank line); empty when there is none.
std::string BodyOf(const std::string& response);

// GET http://127.0.0.1:PORT/PATH as HTTP/1.0 (the server closes after the body): the
// whole response, headers included; empty when the connection fails.
std::string HttpGet(int port, const std::string& path);

// A parsed HTTP/1.1 answer.
struct Reply {
  int status = 0;                              // 0: no answer
  std::map<std::string, std::string> headers;  // names lower-case
  std::string body;
};

// One HTTP/1.1 request to 127.0.0.1:`port` (`headers`: further "Name: value" lines;
// POSTs and requests with a body say Content-Type: application/json and its length),
// its answer read for up to 60 s.
Reply Http(int port, const std::string& method, const std::string& target, const std::string& body = "",
           const std::vector<std::string>& headers = {});

}  // namespace paraplan::server

#endif  // PARAPLAN_TESTS_SERVER_HTTP_CLIENT_H_
