// The daemon's HTTP server (http_server.h) over real loopback sockets: first on its own
// with test routes (routing, limits, timeouts, the connection cap, Stop), then inside
// the real server on --metrics-listen, where paths other than /metrics used to crash
// the whole process (civetweb): unknown paths, wrong methods, a huge request line and a
// few thousand random requests and raw bytes must leave /metrics and gRPC serving.
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/http_server.h"
#include "server/metrics.h"
#include "tests/server/fixture.h"

namespace paraplan::server {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;

// `headers`: further header lines, each ending in CRLF.
std::string Get(const std::string& path, const std::string& headers = "") {
  return "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers + "\r\n";
}

class HttpServerTest : public ::testing::Test {
 protected:
  void Start(HttpServerOptions options = {}) {
    http_ = std::make_unique<HttpServer>(options);
    http_->Handle("GET", "/hello",
                  [](const HttpRequest& r) { return HttpResponse{200, "text/plain", "hello " + r.query}; });
    for (const char* method : {"PUT", "POST"}) {
      http_->Handle(method, "/echo", [](const HttpRequest& r) {
        HttpResponse out{200, "application/octet-stream", r.body};
        out.headers.emplace_back("X-Seen-Type", std::string(r.Header("content-type").value_or("none")));
        return out;
      });
    }
    http_->Handle("GET", "/throw", [](const HttpRequest&) -> HttpResponse { throw std::runtime_error("boom"); });
    ASSERT_TRUE(http_->Start("127.0.0.1:0").ok());
    port_ = http_->port();
    ASSERT_GT(port_, 0);
  }

  std::unique_ptr<HttpServer> http_;
  int port_ = 0;
};

TEST_F(HttpServerTest, RoutesByExactPathThenMethod) {
  Start();
  const std::string hello = Exchange(port_, Get("/hello"));
  EXPECT_EQ(StatusOf(hello), 200) << hello;
  EXPECT_THAT(hello, HasSubstr("\r\nContent-Type: text/plain\r\n"));
  EXPECT_THAT(hello, HasSubstr("\r\nContent-Length: 6\r\n"));
  EXPECT_THAT(hello, HasSubstr("\r\nConnection: close\r\n"));
  EXPECT_EQ(BodyOf(hello), "hello ");
  EXPECT_EQ(BodyOf(Exchange(port_, Get("/hello?name=x&y"))), "hello name=x&y");
  EXPECT_EQ(StatusOf(Exchange(port_, "GET /hello HTTP/1.0\r\n\r\n")), 200);
  EXPECT_EQ(StatusOf(Exchange(port_, "GET /hello HTTP/1.1\n\n")), 200) << "bare LF line ends";

  for (const char* path : {"/", "/hello/", "/Hello", "/hello/../hello", "/favicon.ico", "/hello%20"}) {
    const std::string r = Exchange(port_, Get(path));
    EXPECT_EQ(StatusOf(r), 404) << path;
    EXPECT_EQ(BodyOf(r), "not found\n") << path;
  }
  const std::string post = Exchange(port_, "POST /hello HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc");
  EXPECT_EQ(StatusOf(post), 405) << post;
  EXPECT_THAT(post, HasSubstr("\r\nAllow: GET, HEAD\r\n"));
  EXPECT_THAT(Exchange(port_, Get("/echo")), HasSubstr("\r\nAllow: POST, PUT\r\n"));
  EXPECT_THAT(Exchange(port_, "DELETE /hello HTTP/1.1\r\n\r\n"), HasSubstr("\r\nAllow: GET, HEAD\r\n"));
  const std::string head = Exchange(port_, "HEAD /hello?abc HTTP/1.1\r\n\r\n");
  EXPECT_EQ(StatusOf(head), 200) << head;
  EXPECT_THAT(head, HasSubstr("\r\nContent-Length: 9\r\n"));
  EXPECT_EQ(BodyOf(head), "") << "HEAD: the headers of GET, without the body";
  EXPECT_EQ(StatusOf(Exchange(port_, "get /hello HTTP/1.1\r\n\r\n")), 405) << "methods are case-sensitive";
}

TEST_F(HttpServerTest, BodiesNeedAContentLengthWithinTheLimit) {
  HttpServerOptions o;
  o.max_body_bytes = 1000;
  Start(o);
  const std::string echo =
      Exchange(port_, "POST /echo HTTP/1.1\r\nContent-Type: text/csv\r\nContent-Length: 5\r\n\r\nab\r\nc");
  EXPECT_EQ(StatusOf(echo), 200) << echo;
  EXPECT_EQ(BodyOf(echo), "ab\r\nc");
  EXPECT_THAT(echo, HasSubstr("\r\nX-Seen-Type: text/csv\r\n"));
  EXPECT_EQ(BodyOf(Exchange(port_, "PUT /echo HTTP/1.1\r\nContent-Length: 1000\r\n\r\n" + std::string(1000, 'x'))),
            std::string(1000, 'x'));

  {  // Head and body in separate packets, the body late.
    const int fd = Connect(port_);
    SendAll(fd, "POST /echo HTTP/1.1\r\nContent-Length: 4\r\n\r\nab");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    SendAll(fd, "cd");
    EXPECT_EQ(BodyOf(ReadAll(fd)), "abcd");
    close(fd);
  }
  {  // Expect: 100-continue gets the interim answer before the body is sent.
    const int fd = Connect(port_);
    SendAll(fd, "POST /echo HTTP/1.1\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n");
    std::string interim;
    char buf[256];
    while (interim.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = recv(fd, buf, sizeof buf, 0);
      ASSERT_GT(n, 0);
      interim.append(buf, static_cast<size_t>(n));
    }
    EXPECT_EQ(interim, "HTTP/1.1 100 Continue\r\n\r\n");
    SendAll(fd, "ok");
    EXPECT_EQ(BodyOf(ReadAll(fd)), "ok");
    close(fd);
  }

  EXPECT_EQ(StatusOf(Exchange(port_, "POST /echo HTTP/1.1\r\nContent-Length: 1001\r\n\r\n")), 413);
  EXPECT_EQ(StatusOf(Exchange(port_, "POST /echo HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n")), 400);
  EXPECT_EQ(StatusOf(Exchange(port_, "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")),
            501);
  for (const char* length : {"-1", "abc", "1 2", "+5", ""}) {
    EXPECT_EQ(StatusOf(Exchange(port_, std::string("POST /echo HTTP/1.1\r\nContent-Length: ") + length + "\r\n\r\n")),
              400)
        << length;
  }
  EXPECT_EQ(StatusOf(Exchange(port_, "POST /echo HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc")), 400);
  EXPECT_EQ(StatusOf(Exchange(port_, "POST /echo HTTP/1.1\r\nContent-Length: 10\r\n\r\nshort")), 400)
      << "the client closed before the body was complete";
}

TEST_F(HttpServerTest, MalformedOrOversizedRequestsAre400AndClosed) {
  Start();
  const std::string huge_line = "GET /" + std::string(100 * 1024, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string refused = Exchange(port_, huge_line);
  EXPECT_EQ(StatusOf(refused), 400) << refused.substr(0, 200);
  EXPECT_THAT(BodyOf(refused), HasSubstr("over 8192 bytes"));

  std::string headers = "GET /hello HTTP/1.1\r\n";
  while (headers.size() < 8192 - 30) headers += "X-Filler: 0123456789abcdef\r\n";
  EXPECT_EQ(StatusOf(Exchange(port_, headers + "\r\n")), 200) << "just under the limit: " << headers.size() + 2;
  EXPECT_EQ(StatusOf(Exchange(port_, headers + "X-Filler: 0123456789abcdef0123456789abcdef\r\n\r\n")), 400);

  for (const std::string& bad : std::vector<std::string>{
           "GET /hello\r\n\r\n", "GET  /hello HTTP/1.1\r\n\r\n", "GET hello HTTP/1.1\r\n\r\n",
           "GET http://x/hello HTTP/1.1\r\n\r\n", "G@T /hello HTTP/1.1\r\n\r\n", "GET /hel lo HTTP/1.1\r\n\r\n",
           "GET /hello HTTP/1.1 x\r\n\r\n", "GET /hello http/1.1\r\n\r\n", "GET /hello HTTP/1.1\r\nNo colon\r\n\r\n",
           "GET /hello HTTP/1.1\r\nBad Name: x\r\n\r\n", "GET /hello HTTP/1.1\r\n: empty name\r\n\r\n",
           "GET /hello HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", std::string("GET /hello HTTP/1.1\r\nA: b\0c\r\n\r\n", 31),
           "GET /hello HTTP/1.1\r\nA: b\rc\r\n\r\n", "\r\n\r\n",
           std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 15),  // TLS ClientHello-ish
           "GET /hello HTTP/1.1\r\nHost: x\r\n"}) {
    EXPECT_EQ(StatusOf(Exchange(port_, bad)), 400) << bad;
  }
  EXPECT_EQ(StatusOf(Exchange(port_, "GET /hello HTTP/2.0\r\n\r\n")), 505);

  // A bad request line is refused at once, without waiting for the headers (the client
  // here neither finishes nor closes).
  const int fd = Connect(port_);
  const absl::Time start = absl::Now();
  SendAll(fd, "BLAH\r\nHost: x\r\n");
  EXPECT_EQ(StatusOf(ReadAll(fd)), 400);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  close(fd);

  EXPECT_EQ(StatusOf(Exchange(port_, Get("/hello"))), 200) << "still serving";
}

TEST_F(HttpServerTest, AHandlerThatThrowsIs500) {
  Start();
  EXPECT_EQ(StatusOf(Exchange(port_, Get("/throw"))), 500);
  EXPECT_EQ(StatusOf(Exchange(port_, Get("/hello"))), 200);
}

TEST_F(HttpServerTest, SlowClientsTimeOutWithoutHoldingAWorker) {
  HttpServerOptions o;
  o.workers = 1;
  o.request_timeout = absl::Milliseconds(300);
  Start(o);
  std::vector<int> slow;
  for (int i = 0; i < 3; ++i) {
    slow.push_back(Connect(port_));
    SendAll(slow.back(), "GET /hello HTTP/1.1\r\nHost:");
  }
  const absl::Time start = absl::Now();
  EXPECT_EQ(StatusOf(Exchange(port_, Get("/hello"))), 200);
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(250)) << "a slow client held the only worker";
  for (const int fd : slow) {
    const std::string r = ReadAll(fd);
    EXPECT_EQ(StatusOf(r), 408) << r;
    close(fd);
  }
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(250));
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
}

// A head that trickles in is dropped at header_timeout; a body may take until
// request_timeout, counted from the same accept.
TEST_F(HttpServerTest, HeadersHaveTheirOwnShorterTimeout) {
  HttpServerOptions o;
  o.header_timeout = absl::Milliseconds(300);
  o.request_timeout = absl::Seconds(5);
  Start(o);
  const absl::Time start = absl::Now();
  const int slow_head = Connect(port_);
  SendAll(slow_head, "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le");
  const int slow_body = Connect(port_);
  SendAll(slow_body, "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\n\r\nab");
  const std::string dropped = ReadAll(slow_head);
  const absl::Duration dropped_after = absl::Now() - start;
  EXPECT_EQ(StatusOf(dropped), 408) << dropped;
  EXPECT_EQ(BodyOf(dropped), "request line and headers not complete in time\n");
  EXPECT_GE(dropped_after, absl::Milliseconds(250));
  EXPECT_LT(dropped_after, absl::Seconds(2)) << "waited for request_timeout, not header_timeout";
  close(slow_head);
  // Past header_timeout, the connection whose head was complete is still being read.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  SendAll(slow_body, "cd");
  const std::string echoed = ReadAll(slow_body);
  EXPECT_EQ(StatusOf(echoed), 200) << echoed;
  EXPECT_EQ(BodyOf(echoed), "abcd");
  close(slow_body);
}

TEST_F(HttpServerTest, ConnectionsOverTheCapAreRefused) {
  HttpServerOptions o;
  o.max_connections = 3;
  Start(o);
  std::vector<int> idle;
  for (int i = 0; i < 3; ++i) idle.push_back(Connect(port_));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // all accepted
  const std::string refused = Exchange(port_, Get("/hello"));
  EXPECT_THAT(StatusOf(refused), AnyOf(0, 503)) << refused;
  for (const int fd : idle) close(fd);
  // The server notices the closes on its next poll; then there is room again.
  int status = 0;
  for (int i = 0; i < 100 && status != 200; ++i) {
    status = StatusOf(Exchange(port_, Get("/hello")));
    if (status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(status, 200);
}

// Slowloris: one host's idle connections fill its own share, not the port. 300 from one
// address leave the others answered at once.
TEST_F(HttpServerTest, OneClientCannotHoldThePort) {
  HttpServerOptions o;
  o.header_timeout = o.request_timeout = absl::Seconds(30);  // the idle connections outlive the test
  Start(o);
  std::vector<int> idle;
  for (int i = 0; i < 300; ++i) {
    const int fd = Connect(port_);
    if (fd >= 0) idle.push_back(fd);
    if (i % 10 == 0) SendAll(fd, "GET /hel");  // half a request line: a slow client
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // all accepted or refused
  const std::string same = Exchange(port_, Get("/hello"));
  EXPECT_THAT(StatusOf(same), AnyOf(0, 503)) << same;
  if (StatusOf(same) == 503) {
    EXPECT_EQ(BodyOf(same), "too many connections from your address\n");
  }
  const std::string other = Exchange(port_, Get("/hello"), absl::Seconds(5), "127.0.0.2");
  EXPECT_EQ(StatusOf(other), 200) << other;
  for (const int fd : idle) close(fd);
}

TEST_F(HttpServerTest, StopIsPromptWhateverTheClientsDo) {
  Start();
  std::vector<int> clients;
  for (int i = 0; i < 5; ++i) clients.push_back(Connect(port_));  // idle
  SendAll(clients[0], "GET /hello HTTP/1.1\r\n");  // half a head
  SendAll(clients[1], "POST /echo HTTP/1.1\r\nContent-Length: 100\r\n\r\nab");  // half a body
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const absl::Time start = absl::Now();
  http_->Stop();
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(500));
  for (const int fd : clients) {
    EXPECT_EQ(ReadAll(fd, absl::Seconds(1)), "") << "closed without an answer";
    close(fd);
  }
  EXPECT_EQ(Connect(port_), -1) << "no longer listening";
  http_->Stop();  // idempotent
}

TEST(HttpServerStartTest, RefusesBadOrBusyAddresses) {
  for (const char* listen : {"127.0.0.1:http", "127.0.0.1:70000", "127.0.0.1:", "[::1", "127.0.0.1:-1"}) {
    HttpServer http;
    EXPECT_EQ(http.Start(listen).code(), absl::StatusCode::kInvalidArgument) << listen;
  }
  HttpServer first;
  ASSERT_TRUE(first.Start("127.0.0.1:0").ok());
  HttpServer second;
  const absl::Status busy = second.Start("127.0.0.1:" + std::to_string(first.port()));
  EXPECT_EQ(busy.code(), absl::StatusCode::kUnavailable) << busy;
  EXPECT_THAT(std::string(busy.message()), HasSubstr("in use"));
}

// The real server with /metrics on an HTTP port.
class MetricsHttpTest : public ServerTest {
 protected:
  ServerOptions Options() override {
    ServerOptions o = ServerTest::Options();
    o.metrics_listen = "127.0.0.1:0";
    return o;
  }
  // gRPC answers, and /metrics counts the answer.
  void ExpectServing() {
    grpc::ClientContext ctx;
    v1::ListModelsResponse models;
    EXPECT_TRUE(planner_->ListModels(&ctx, v1::ListModelsRequest(), &models).ok());
    EXPECT_GT(models.models_size(), 0);
    const std::string metrics = Exchange(server_->metrics_port(), Get("/metrics"));
    EXPECT_EQ(StatusOf(metrics), 200) << metrics.substr(0, 200);
    EXPECT_THAT(metrics, HasSubstr("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
    EXPECT_GE(SampleValue(metrics, "paraplan_rpc_requests_total{code=\"OK\",method=\"ListModels\"}"), 1);
  }
};

// The real server with bearer tokens (--tokens-file): /metrics needs one of any role
// unless anonymous reads are allowed; /healthz never does.
class MetricsAuthTest : public MetricsHttpTest {
 protected:
  static constexpr char kReader[] = "reader-token-0123456789";
  static constexpr char kWriter[] = "writer-token-0123456789";
  static constexpr char kAdmin[] = "admin-token-01234567890";
  void SetUp() override {
    char tmpl[] = "/tmp/paraplan_metrics_auth_XXXXXX";
    dir_ = mkdtemp(tmpl);
    std::ofstream(dir_ + "/tokens") << kReader << " reader\n" << kWriter << " writer\n" << kAdmin << " admin\n";
    Start();
  }
  ServerOptions Options() override {
    ServerOptions o = MetricsHttpTest::Options();
    o.tokens_file = dir_ + "/tokens";
    o.allow_anonymous_reads = allow_anonymous_reads_;
    return o;
  }
  std::string GetMetrics(const std::string& authorization = "", const char* method = "GET") {
    std::string request = Get("/metrics", authorization.empty() ? "" : "Authorization: " + authorization + "\r\n");
    request.replace(0, 3, method);
    return Exchange(server_->metrics_port(), request);
  }
  bool allow_anonymous_reads_ = false;
};

TEST_F(MetricsAuthTest, MetricsNeedABearerTokenAndHealthzDoesNot) {
  ASSERT_GT(server_->metrics_port(), 0);
  for (const std::string& bad : {std::string(), std::string("Bearer wrong-token-0123456789"),
                                 std::string("Bearer ") + kReader + "x", std::string("Basic ") + kReader,
                                 std::string("Bearer")}) {
    const std::string r = GetMetrics(bad);
    EXPECT_EQ(StatusOf(r), 401) << bad << "\n" << r.substr(0, 300);
    EXPECT_THAT(r, HasSubstr("\r\nWWW-Authenticate: Bearer realm=\"paraplan\""));
    EXPECT_THAT(r, Not(HasSubstr("paraplan_"))) << bad;
    EXPECT_THAT(r, Not(HasSubstr("0123456789"))) << "a token was echoed";
  }
  EXPECT_THAT(GetMetrics("Bearer nope-nope-nope-nope"), HasSubstr("error=\"invalid_token\""));
  EXPECT_EQ(StatusOf(GetMetrics("", "HEAD")), 401);
  for (const char* token : {kReader, kWriter, kAdmin}) {
    const std::string r = GetMetrics(std::string("Bearer ") + token);
    EXPECT_EQ(StatusOf(r), 200) << token;
    EXPECT_THAT(r, HasSubstr("paraplan_"));
  }
  EXPECT_EQ(StatusOf(GetMetrics(std::string("bearer ") + kReader)), 200);  // the scheme is case-insensitive
  EXPECT_EQ(StatusOf(GetMetrics(std::string("Bearer ") + kReader, "HEAD")), 200);
  const std::string health = Exchange(server_->metrics_port(), Get("/healthz"));
  EXPECT_EQ(StatusOf(health), 200);
  EXPECT_EQ(BodyOf(health), "ok\n");

  // Anonymous reads: /metrics without a token, but a wrong token is still refused.
  allow_anonymous_reads_ = true;
  Restart();
  EXPECT_EQ(StatusOf(GetMetrics()), 200);
  EXPECT_EQ(StatusOf(GetMetrics(std::string("Bearer ") + kReader)), 200);
  EXPECT_EQ(StatusOf(GetMetrics("Bearer wrong-token-0123456789")), 401);
}

TEST_F(MetricsHttpTest, UnknownPathsAre404AndTheServerKeepsServing) {
  const int port = server_->metrics_port();
  ASSERT_GT(port, 0);
  for (int round = 0; round < 5; ++round) {
    for (const char* path : {"/", "/favicon.ico", "/metrics/", "/metricsx", "/METRICS", "/healthz/", "/index.html"}) {
      EXPECT_EQ(StatusOf(Exchange(port, Get(path))), 404) << path;
    }
  }
  const std::string health = Exchange(port, Get("/healthz"));
  EXPECT_EQ(StatusOf(health), 200) << health;
  EXPECT_EQ(BodyOf(health), "ok\n");
  EXPECT_EQ(StatusOf(Exchange(port, Get("/metrics?name[]=x"))), 200) << "the query string is not part of the path";
  ExpectServing();
}

TEST_F(MetricsHttpTest, WrongMethodIs405AndAHugeRequestLineIsRefused) {
  const int port = server_->metrics_port();
  const std::string post = Exchange(port, "POST /metrics HTTP/1.1\r\nContent-Length: 4\r\n\r\nkill");
  EXPECT_EQ(StatusOf(post), 405) << post;
  EXPECT_THAT(post, HasSubstr("\r\nAllow: GET, HEAD\r\n"));
  EXPECT_EQ(StatusOf(Exchange(port, "DELETE /healthz HTTP/1.1\r\n\r\n")), 405);

  const std::string huge = Exchange(port, "GET /metrics" + std::string(100 * 1024, 'x') + " HTTP/1.1\r\n\r\n");
  EXPECT_THAT(StatusOf(huge), AnyOf(0, 400)) << huge.substr(0, 200);
  ExpectServing();
}

TEST_F(MetricsHttpTest, ShutdownIsPromptWithHttpClientsConnected) {
  const int idle = Connect(server_->metrics_port());
  const int half = Connect(server_->metrics_port());
  SendAll(half, "GET /metrics HTTP/1.1\r\n");
  const absl::Time start = absl::Now();
  server_->Shutdown(absl::Seconds(10));
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));  // the gRPC drain's idle wait, no civetweb 2 s
  EXPECT_EQ(ReadAll(idle, absl::Seconds(1)), "");
  EXPECT_EQ(ReadAll(half, absl::Seconds(1)), "");
  close(idle);
  close(half);
}

// HTTP-ish requests: plausible parts, then sometimes bytes flipped, inserted or cut.
std::string RandomRequest(std::mt19937& rng) {
  auto pick = [&rng](const std::vector<std::string>& from) {
    return from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng)];
  };
  auto bytes = [&rng](size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
    return s;
  };
  auto coin = [&rng](double p) { return std::bernoulli_distribution(p)(rng); };
  const std::string eol = pick({"\r\n", "\r\n", "\r\n", "\n", "\r", ""});
  std::string r = pick({"GET", "GET", "POST", "PUT", "HEAD", "DELETE", "OPTIONS", "get", "", "CONNECT",
                        std::string(40, 'A')}) +
                  pick({" ", " ", "  ", "\t"}) +
                  pick({"/metrics", "/metrics", "/healthz", "/", "/favicon.ico", "/metrics/", "/metrics?x=1", "*",
                        "http://h/metrics", "/%00", "/../../etc/passwd", "", "/" + bytes(8),
                        "/" + std::string(std::uniform_int_distribution<size_t>(0, 12000)(rng), 'p')}) +
                  " " + pick({"HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "http/1.1", "", "HTTP/1.1 x", "HTTP/9"}) +
                  eol;
  const int headers = std::uniform_int_distribution<int>(0, 6)(rng);
  for (int i = 0; i < headers; ++i) {
    r += pick({"Host: 127.0.0.1",
               "Content-Length: " + std::to_string(std::uniform_int_distribution<int>(-5, 3000)(rng)),
               "Content-Length: 18446744073709551616", "Transfer-Encoding: chunked", "Expect: 100-continue",
               "Connection: keep-alive", "X: " + bytes(20), ": empty", " folded", "Accept-Encoding: gzip",
               std::string(std::uniform_int_distribution<size_t>(0, 9000)(rng), 'h') + ": v"}) +
         eol;
  }
  r += eol;
  if (coin(0.5)) r += bytes(std::uniform_int_distribution<size_t>(0, 3000)(rng));
  if (coin(0.3)) {  // mutate a few bytes
    const int edits = std::uniform_int_distribution<int>(1, 5)(rng);
    for (int i = 0; i < edits && !r.empty(); ++i) {
      const size_t at = std::uniform_int_distribution<size_t>(0, r.size() - 1)(rng);
      switch (std::uniform_int_distribution<int>(0, 2)(rng)) {
        case 0: r[at] = bytes(1)[0]; break;
        case 1: r.insert(at, bytes(1)); break;
        default: r.erase(at, 1); break;
      }
    }
  }
  if (coin(0.2)) r.resize(std::uniform_int_distribution<size_t>(0, r.size())(rng));
  return r;
}

TEST_F(MetricsHttpTest, SurvivesRandomRequestsAndRawBytes) {
  const int port = server_->metrics_port();
  constexpr int kClients = 4;
  constexpr int kPerClient = 2000;  // 8000 in all, unless the time runs out first
  const absl::Time deadline = absl::Now() + absl::Seconds(4);
  std::vector<int> sent(kClients, 0), answered(kClients, 0), bad(kClients, 0);
  std::vector<std::string> first_bad(kClients);
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      std::mt19937 rng(20240601 + c);
      for (int i = 0; i < kPerClient && absl::Now() < deadline; ++i) {
        std::string request;
        if (std::bernoulli_distribution(0.3)(rng)) {  // raw bytes
          request.resize(std::uniform_int_distribution<size_t>(0, i % 50 == 0 ? 20000 : 2000)(rng));
          for (char& ch : request) ch = static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
        } else {
          request = RandomRequest(rng);
        }
        const std::string response = Exchange(port, request, absl::Seconds(3));
        ++sent[c];
        if (response.empty()) continue;  // refused and reset before the answer was read
        ++answered[c];
        // Every answer is a well-formed HTTP/1.1 response (after a 100 Continue, maybe).
        const std::string final_response =
            absl::StartsWith(response, "HTTP/1.1 100 Continue\r\n\r\n") ? response.substr(25) : response;
        const int status = StatusOf(final_response);
        if (status < 200 || final_response.find("\r\n\r\n") == std::string::npos) {
          if (bad[c]++ == 0) first_bad[c] = request.substr(0, 200) + " -> " + response.substr(0, 200);
        }
      }
    });
  }
  for (std::thread& t : clients) t.join();
  int total_sent = 0, total_answered = 0;
  for (int c = 0; c < kClients; ++c) {
    total_sent += sent[c];
    total_answered += answered[c];
    EXPECT_EQ(bad[c], 0) << first_bad[c];
  }
  EXPECT_GE(total_sent, 1000) << "too slow to be a useful fuzz";
  EXPECT_GE(total_answered, total_sent * 9 / 10);
  std::printf("sent %d, answered %d\n", total_sent, total_answered);
  ExpectServing();
  const std::string health = Exchange(port, Get("/healthz"));
  EXPECT_EQ(StatusOf(health), 200);
}

}  // namespace
}  // namespace paraplan::server
