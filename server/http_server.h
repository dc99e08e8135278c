// HttpServer: the daemon's small plain-HTTP/1.1 server (/metrics, /healthz; room for
// JSON routes such as POST /v1/plan). It replaces prometheus-cpp's embedded civetweb,
// which crashed the whole process on any path but /metrics; this one is written to
// answer, or drop, whatever arrives on its port without harm to the daemon. The wire
// format (head parsing, response serialising) is in http_message.h.
//
// Why not Debian's cpp-httplib (libcpp-httplib-dev 0.11.4): its Server::listen_internal
// hands each accepted socket to a ThreadPool worker (max(8, cores - 1) threads) that
// serves the whole connection, keep-alive included, with blocking reads; every read
// waits up to read_timeout (5 s) afresh and the head has no total deadline nor a cap on
// its header count, so a client trickling bytes holds its worker as long as it keeps
// trickling, N such clients hold N workers, and later connections wait in the pool's
// unbounded queue. It has no cap on connections in all or per client. That is the
// slowloris finding this server was hardened against (checked in httplib.h v0.11.4:
// listen_internal, process_server_socket, SocketStream::read, read_headers).
//
// Contract for handlers. Routes are an exact path plus a method, registered with
// Handle() before Start() (the daemon's are in AddHttpRoutes(), server.cc):
//
//   http.Handle("POST", "/v1/plan", [&](const HttpRequest& req) {
//     v1::PlanRequest in;
//     if (!google::protobuf::util::JsonStringToMessage(req.body, &in).ok()) {
//       return HttpResponse{400, "application/json", R"({"error":"bad JSON"})"};
//     }
//     ...
//     return HttpResponse{200, "application/json", json};
//   });
//
// - Matching is exact on the path before '?' (no trailing-slash folding, no
//   percent-decoding); the query string is handed over raw in `query`. A GET route
//   answers HEAD too (the server drops the body). HandlePrefix() routes every path that
//   starts with a prefix (e.g. "/v1/profiles/" for /v1/profiles/NAME) when no exact
//   route matches; the longest prefix wins, and its handler parses the rest of `path`.
// - The body is complete (exactly Content-Length bytes, at most max_body_bytes) before
//   the handler runs ("Expect: 100-continue" is answered for routed requests); header
//   names are lower-case.
// - A handler runs on one of `workers` threads, concurrently with other handlers, so it
//   must be thread-safe; one that takes seconds holds a worker for that long. It must not
//   throw (an exception that escapes becomes a 500).
// - The handler picks status, Content-Type, body and any extra headers; the server adds
//   Content-Length and "Connection: close" and closes the connection after the response
//   (no keep-alive, no pipelining, no chunked bodies either way).
//
// What the server answers by itself, without a handler:
//   404  path not routed            405  path routed, not for this method (with Allow)
//   400  malformed request line or header, or line + headers over max_header_bytes
//   413  Content-Length over max_body_bytes
//   501  Transfer-Encoding (request bodies need Content-Length)
//   505  an HTTP version other than 1.0 / 1.1
//   408  request line and headers not complete within header_timeout of the
//        connection's accept, or the whole request not within request_timeout
//   503  max_connections already open, or max_connections_per_client from the same
//        address (answered best-effort, then closed)
//
// Threads: one loop thread accepts connections and reads requests for all of them
// (non-blocking, poll), so a slow client holds no worker, only one of max_connections;
// complete requests go to a fixed pool of workers that run the handler and write the
// answer (write_timeout). After an answer given before the whole request was read (the
// errors above), the loop drains what the client still sends for up to 1 s before
// closing, so the close does not reset the connection under the answer. Stop() is
// prompt: it wakes every poll, abandons requests still being read, drained or written,
// waits only for handlers already running, and joins the threads.
// Handle() before Start() only; port() from any thread; Stop() from any thread but a
// handler's.
#ifndef PARAPLAN_SERVER_HTTP_SERVER_H_
#define PARAPLAN_SERVER_HTTP_SERVER_H_

#include <atomic>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace paraplan::server {

struct HttpRequest {
  std::string method;  // as sent; methods are case-sensitive ("GET", "POST")
  std::string path;    // the target before '?', e.g. "/v1/plan"
  std::string query;   // after '?', raw; empty when none
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-case, values trimmed, in order
  std::string body;
  // The client's address as gRPC names peers: "ipv4:10.0.0.7:51234", "ipv6:[::1]:51234".
  std::string peer;

  // The value of the first header called `lower_case_name`; nullopt when absent.
  std::optional<absl::string_view> Header(absl::string_view lower_case_name) const;
};

struct HttpResponse {
  HttpResponse() = default;
  HttpResponse(int status, std::string content_type, std::string body)
      : status(status), content_type(std::move(content_type)), body(std::move(body)) {}

  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // Further headers, e.g. {"Retry-After", "5"}. Content-Length and Connection are the
  // server's; a header whose name or value holds CR or LF is dropped.
  std::vector<std::pair<std::string, std::string>> headers;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  int workers = 4;                                    // threads that run handlers
  int max_connections = 256;                          // open at once, in any state
  // Open at once from one address (the peer's IP, any port): 300 slow connections from
  // one host hold 16 of 256, and /metrics still answers other hosts.
  int max_connections_per_client = 16;
  size_t max_header_bytes = 8 * 1024;                 // request line + headers
  size_t max_body_bytes = 1024 * 1024;                // Content-Length limit
  // Accept to the end of the headers. A head is one packet from any client that means
  // it; a slowloris client trickling header bytes is dropped after this, not after
  // request_timeout, which is sized for a large body.
  absl::Duration header_timeout = absl::Seconds(2);
  absl::Duration request_timeout = absl::Seconds(5);  // accept to last body byte
  absl::Duration write_timeout = absl::Seconds(5);    // to send one response
};

class HttpServer {
 public:
  explicit HttpServer(HttpServerOptions options = {});
  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Routes `method` `path` to `handler`; replaces an earlier handler for the same pair.
  // Only before Start().
  void Handle(absl::string_view method, absl::string_view path, HttpHandler handler);
  // Routes `method` for every path that starts with `prefix` and has no exact route.
  // Only before Start().
  void HandlePrefix(absl::string_view method, absl::string_view prefix, HttpHandler handler);

  // Binds `listen` ("HOST:PORT", "[V6]:PORT" or "PORT" for every interface; port 0 = any
  // free port) and starts serving. INVALID_ARGUMENT for a malformed address,
  // UNAVAILABLE when it cannot be bound. Once only.
  absl::Status Start(absl::string_view listen);

  // The bound port; 0 before Start().
  int port() const { return port_; }

  // Stops accepting and serving; returns once every thread has ended. Idempotent.
  void Stop();

 private:
  // What a worker does for one connection: run `handler` on `request`, or send `response`.
  struct Job {
    int fd = -1;
    const HttpHandler* handler = nullptr;
    HttpRequest request;
    HttpResponse response;
    bool linger = false;     // the client may still be sending: drain before closing
    bool head_only = false;  // a HEAD request: the answer without its body
  };
  // A connection held by the loop thread: a request being read, or, once answered, the
  // rest of the client's input being drained (so that closing does not reset the
  // connection before the client has read the answer).
  struct Conn {
    int fd = -1;
    std::string peer;  // HttpRequest::peer
    absl::Time accepted;
    absl::Time deadline;  // header_timeout until the head is parsed, then request_timeout
    bool draining = false;
    std::string in;
    size_t scanned = 0;   // bytes of `in` searched for the end of the head
    size_t head_end = 0;  // length of request line + headers; 0 until they are parsed
    size_t content_length = 0;
    Job job;  // once the head is parsed: the routed request, waiting for its body
  };

  void Loop();
  void Work();
  bool WorkReady() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || !queue_.empty(); }
  void Accept(std::vector<Conn>& conns, absl::Time& accept_paused_until);
  // Reads what the client has sent; false once the connection has left the loop
  // (handed to a worker, or closed).
  bool Read(Conn& c);
  bool Drain(Conn& c);
  // Hands the connection to the workers with `job`.
  void Answer(Conn& c, Job job);
  Job Route(HttpRequest request) const;
  // Runs or sends the job's answer; the bytes of request and response body handled.
  size_t Respond(Job& job);
  // After an exchange this large, freed memory is returned to the system (malloc_trim).
  static constexpr size_t kTrimAfterBytes = size_t{1} << 20;
  // Counts `fd` as open from `host`; false (nothing counted) when that host is at its cap.
  bool Admit(int fd, const std::string& host);
  void Close(int fd);

  const HttpServerOptions options_;
  // path -> method -> handler (std::map: Allow lists the methods sorted).
  absl::flat_hash_map<std::string, std::map<std::string, HttpHandler>> routes_;
  std::map<std::string, std::map<std::string, HttpHandler>> prefix_routes_;  // prefix -> method -> handler
  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};  // a byte in it (never read) wakes every poll for good
  int lingering_event_ = -1;     // eventfd: workers have put fds in lingering_
  std::atomic<int> port_{0};
  std::atomic<int> open_{0};  // connections open, whichever thread holds them
  std::thread loop_;
  std::vector<std::thread> workers_;

  absl::Mutex mu_;
  std::deque<Job> queue_ ABSL_GUARDED_BY(mu_);
  std::vector<int> lingering_ ABSL_GUARDED_BY(mu_);  // answered, to be drained by the loop
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;

  // Open connections per client address, and each open fd's address (Close() may run on
  // any thread: the loop's or a worker's).
  absl::Mutex peers_mu_;
  absl::flat_hash_map<int, std::string> host_of_fd_ ABSL_GUARDED_BY(peers_mu_);
  absl::flat_hash_map<std::string, int> open_per_host_ ABSL_GUARDED_BY(peers_mu_);

  absl::Mutex stop_mu_;  // serialises Stop()
  bool stopped_ ABSL_GUARDED_BY(stop_mu_) = false;
};

}  // namespace paraplan::server

#endif  // PARAPLAN_SERVER_HTTP_SERVER_H_
