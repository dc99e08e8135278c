// The HTTP/1.1 wire format of HttpServer (http_server.h), apart from its sockets and
// threads: where a request's head ends, the request line and headers parsed into an
// HttpRequest, and an HttpResponse serialised with the server's own headers
// (Content-Length, "Connection: close"). The parsers answer 0 or the status to refuse
// the request with (400 malformed, 413 body too large, 501 Transfer-Encoding, 505 an
// HTTP version other than 1.0 / 1.1), as http_server.h lists them. Lines end in CRLF or,
// leniently, LF. Internal to server/; pure functions, thread-safe.
#ifndef PARAPLAN_SERVER_HTTP_MESSAGE_H_
#define PARAPLAN_SERVER_HTTP_MESSAGE_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"
#include "server/http_server.h"

namespace paraplan::server {

// `line` without its trailing CR, if any.
absl::string_view StripCr(absl::string_view line);

// The response as sent: status line, headers and, `with_body`, the body. A status
// outside 200-599 is sent as 500; a header that is not a token name with a CR/LF-free
// value, or that names Content-Length, Connection or Transfer-Encoding, is dropped.
std::string Serialize(const HttpResponse& r, bool with_body);

// Where the head (request line, headers, empty line) ends in `in`: the length of the
// head, or npos. `scanned` keeps the search linear over many small reads.
size_t HeadEnd(absl::string_view in, size_t* scanned);

// 0 when `line` is "METHOD /target HTTP/1.x" (filling method, path, query), else the
// status to answer.
int ParseRequestLine(absl::string_view line, HttpRequest* r);

// 0 when `head` is a valid request line and headers (filling `r` and the body length),
// else the status to answer.
int ParseHead(absl::string_view head, size_t max_body_bytes, HttpRequest* r, size_t* content_length);

}  // namespace paraplan::server

#endif  // PARAPLAN_SERVER_HTTP_MESSAGE_H_
