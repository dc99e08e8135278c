#include "server/http_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <exception>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/http_message.h"
#include "server/rate_limit.h"

namespace paraplan::server {
namespace {

constexpr absl::Duration kLinger = absl::Seconds(1);
constexpr absl::Duration kAcceptPause = absl::Milliseconds(100);  // out of fds: let some close
constexpr int kAcceptBurst = 64;  // accepts per loop turn, so reads still get their turn
constexpr char kTextPlain[] = "text/plain; charset=utf-8";

int PollMs(absl::Time deadline) {
  const absl::Duration left = deadline - absl::Now();
  if (left <= absl::ZeroDuration()) return 0;
  const int64_t ms = absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1)));
  return static_cast<int>(std::min<int64_t>(ms, INT_MAX));
}

// Waits until `fd` is ready for `events` (true), or the server stops or `deadline`
// passes (false).
bool WaitFor(int fd, short events, int stop_fd, absl::Time deadline) {
  for (;;) {
    pollfd p[2] = {{fd, events, 0}, {stop_fd, POLLIN, 0}};
    const int n = poll(p, 2, PollMs(deadline));
    if (n < 0 && errno != EINTR) return false;
    if (p[1].revents != 0) return false;
    if (p[0].revents != 0) return true;  // POLLERR / POLLHUP too: the next call reports it
    if (absl::Now() >= deadline) return false;
  }
}

bool SendAll(int fd, absl::string_view data, int stop_fd, absl::Time deadline) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!WaitFor(fd, POLLOUT, stop_fd, deadline)) return false;
    } else {
      return false;
    }
  }
  return true;
}

// "ipv4:HOST:PORT" / "ipv6:[ADDR]:PORT", as gRPC names a peer; empty when unknown.
std::string PeerName(const sockaddr_storage& a) {
  char host[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&a);
    if (inet_ntop(AF_INET, &in->sin_addr, host, sizeof host) == nullptr) return "";
    return absl::StrCat("ipv4:", host, ":", ntohs(in->sin_port));
  }
  if (a.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a);
    if (inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host) == nullptr) return "";
    return absl::StrCat("ipv6:[", host, "]:", ntohs(in6->sin6_port));
  }
  return "";
}

// A 503 with `why`, best effort (a fresh socket's send buffer takes it whole), then the
// connection closed.
void RefuseBusy(int fd, absl::string_view why) {
  const std::string answer =
      absl::StrCat("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ",
                   why.size(), "\r\nConnection: close\r\n\r\n", why);
  (void)!send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
  close(fd);
}

}  // namespace

HttpServer::HttpServer(HttpServerOptions options) : options_(std::move(options)) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Handle(absl::string_view method, absl::string_view path, HttpHandler handler) {
  routes_[std::string(path)][std::string(method)] = std::move(handler);
}

void HttpServer::HandlePrefix(absl::string_view method, absl::string_view prefix, HttpHandler handler) {
  prefix_routes_[std::string(prefix)][std::string(method)] = std::move(handler);
}

absl::Status HttpServer::Start(absl::string_view listen) {
  std::string host, port;
  if (absl::StartsWith(listen, "[")) {
    const size_t close = listen.find(']');
    if (close == absl::string_view::npos || listen.substr(close + 1, 1) != ":") {
      return absl::InvalidArgumentError(absl::StrCat("\"", listen, "\" is not HOST:PORT"));
    }
    host = std::string(listen.substr(1, close - 1));
    port = std::string(listen.substr(close + 2));
  } else if (const size_t colon = listen.rfind(':'); colon != absl::string_view::npos) {
    host = std::string(listen.substr(0, colon));
    port = std::string(listen.substr(colon + 1));
  } else {
    port = std::string(listen);
  }
  int port_number = 0;
  if (port.empty() || port.size() > 5 || !std::all_of(port.begin(), port.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(port, &port_number) || port_number > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("\"", listen, "\" is not HOST:PORT"));
  }

  addrinfo hints{};
  hints.ai_family = host.empty() ? AF_INET : AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (const int e = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found); e != 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", listen, ": ", gai_strerror(e)));
  }
  int error = 0;
  for (const addrinfo* a = found; a != nullptr && listen_fd_ < 0; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      error = errno;
      continue;
    }
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      error = errno;
      close(fd);
      continue;
    }
    listen_fd_ = fd;
  }
  freeaddrinfo(found);
  if (listen_fd_ < 0) return absl::UnavailableError(absl::StrCat("cannot listen on ", listen, ": ", strerror(error)));
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof bound;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &bound_len);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);

  if (pipe2(stop_pipe_, O_CLOEXEC) != 0 || (lingering_event_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
    return absl::InternalError(absl::StrCat("http server: ", strerror(errno)));
  }
  loop_ = std::thread([this] { Loop(); });
  for (int i = 0; i < std::max(1, options_.workers); ++i) workers_.emplace_back([this] { Work(); });
  return absl::OkStatus();
}

void HttpServer::Stop() {
  absl::MutexLock stop_lock(&stop_mu_);
  if (stopped_) return;
  stopped_ = true;
  if (stop_pipe_[1] >= 0) {
    const char byte = 1;
    while (write(stop_pipe_[1], &byte, 1) < 0 && errno == EINTR) {
    }
  }
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;
  }
  if (loop_.joinable()) loop_.join();
  for (std::thread& w : workers_) w.join();
  workers_.clear();
  {
    absl::MutexLock l(&mu_);
    for (const Job& j : queue_) Close(j.fd);
    queue_.clear();
    for (const int fd : lingering_) Close(fd);
    lingering_.clear();
  }
  for (int* fd : {&listen_fd_, &stop_pipe_[0], &stop_pipe_[1], &lingering_event_}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
}

bool HttpServer::Admit(int fd, const std::string& host) {
  absl::MutexLock l(&peers_mu_);
  int& open = open_per_host_[host];
  if (open >= std::max(1, options_.max_connections_per_client)) return false;
  ++open;
  host_of_fd_[fd] = host;
  return true;
}

void HttpServer::Close(int fd) {
  {
    // Forgotten before close(): the number may be reused by the next accept at once.
    absl::MutexLock l(&peers_mu_);
    if (auto it = host_of_fd_.find(fd); it != host_of_fd_.end()) {
      if (--open_per_host_[it->second] <= 0) open_per_host_.erase(it->second);
      host_of_fd_.erase(it);
    }
  }
  close(fd);
  open_.fetch_sub(1);
}

void HttpServer::Loop() {
  std::vector<Conn> conns;
  std::vector<pollfd> fds;
  absl::Time accept_paused_until = absl::InfinitePast();
  for (;;) {
    const absl::Time now = absl::Now();
    for (size_t i = conns.size(); i-- > 0;) {
      if (conns[i].deadline > now) continue;
      if (conns[i].draining) {
        Close(conns[i].fd);
      } else {
        Job timeout;
        timeout.response = {408, kTextPlain,
                            conns[i].head_end == 0 ? "request line and headers not complete in time\n"
                                                   : "request body not complete in time\n"};
        Answer(conns[i], std::move(timeout));
      }
      std::swap(conns[i], conns.back());
      conns.pop_back();
    }
    const bool accepting = now >= accept_paused_until;
    fds.assign({{stop_pipe_[0], POLLIN, 0}, {lingering_event_, POLLIN, 0}, {accepting ? listen_fd_ : -1, POLLIN, 0}});
    absl::Time wake_at = accepting ? absl::InfiniteFuture() : accept_paused_until;
    for (const Conn& c : conns) {
      fds.push_back({c.fd, POLLIN, 0});
      wake_at = std::min(wake_at, c.deadline);
    }
    const int ms = wake_at == absl::InfiniteFuture() ? -1 : PollMs(wake_at);
    if (poll(fds.data(), fds.size(), ms) < 0) continue;  // EINTR; nothing else can fail here
    if (fds[0].revents != 0) break;
    // Backwards, so that removing conns[i] (swapped with the already-visited last) keeps
    // fds[i + 3] matched to the connections still to visit.
    for (size_t i = conns.size(); i-- > 0;) {
      if (fds[i + 3].revents == 0) continue;
      if (!(conns[i].draining ? Drain(conns[i]) : Read(conns[i]))) {
        std::swap(conns[i], conns.back());
        conns.pop_back();
      }
    }
    if (fds[1].revents != 0) {
      uint64_t count = 0;
      while (read(lingering_event_, &count, sizeof count) < 0 && errno == EINTR) {
      }
      std::vector<int> taken;
      {
        absl::MutexLock l(&mu_);
        taken.swap(lingering_);
      }
      for (const int fd : taken) {
        Conn c;
        c.fd = fd;
        c.draining = true;
        c.deadline = absl::Now() + kLinger;
        conns.push_back(std::move(c));
      }
    }
    if (fds[2].revents != 0) Accept(conns, accept_paused_until);
  }
  for (const Conn& c : conns) Close(c.fd);
}

void HttpServer::Accept(std::vector<Conn>& conns, absl::Time& accept_paused_until) {
  for (int i = 0; i < kAcceptBurst; ++i) {
    sockaddr_storage from{};
    socklen_t from_len = sizeof from;
    const int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&from), &from_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        accept_paused_until = absl::Now() + kAcceptPause;
      }
      return;  // EAGAIN: no more waiting
    }
    const std::string peer = PeerName(from);
    if (open_.load() >= options_.max_connections) {
      RefuseBusy(fd, "too many clients\n");
      continue;
    }
    if (!Admit(fd, ClientOfPeer(peer))) {
      RefuseBusy(fd, "too many connections from your address\n");
      continue;
    }
    open_.fetch_add(1);
    Conn c;
    c.fd = fd;
    c.peer = peer;
    c.accepted = absl::Now();
    c.deadline = c.accepted + std::min(options_.header_timeout, options_.request_timeout);
    conns.push_back(std::move(c));
  }
}

bool HttpServer::Read(Conn& c) {
  auto reject = [&](int status, absl::string_view why) {
    Job j;
    j.response = {status, kTextPlain, absl::StrCat(why, "\n")};
    j.linger = true;
    Answer(c, std::move(j));
    return false;
  };
  char buf[16384];
  for (;;) {
    // Never read past the head's limit, or past the body once its length is known.
    const size_t want = c.head_end == 0 ? options_.max_header_bytes + 1 : c.head_end + c.content_length;
    bool eof = false;
    while (c.in.size() < want) {
      const ssize_t n = recv(c.fd, buf, std::min(sizeof buf, want - c.in.size()), 0);
      if (n > 0) {
        c.in.append(buf, static_cast<size_t>(n));
      } else if (n == 0) {
        eof = true;
        break;
      } else if (errno == EINTR) {
        continue;
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        break;
      } else {  // reset by the client
        Close(c.fd);
        return false;
      }
    }
    if (c.head_end != 0) {
      if (c.in.size() >= c.head_end + c.content_length) {
        c.job.request.body = c.in.substr(c.head_end, c.content_length);
        Answer(c, std::move(c.job));
        return false;
      }
      if (eof) return reject(400, "request body shorter than Content-Length");
      return true;
    }

    const size_t end = HeadEnd(c.in, &c.scanned);
    if (end == absl::string_view::npos || end > options_.max_header_bytes) {
      if (c.in.size() > options_.max_header_bytes) {
        return reject(400, absl::StrCat("request line and headers over ", options_.max_header_bytes, " bytes"));
      }
      // A bad request line is refused as soon as it is complete, not at the timeout.
      if (const size_t nl = c.in.find('\n'); nl != std::string::npos) {
        HttpRequest probe;
        if (const int s = ParseRequestLine(StripCr(absl::string_view(c.in).substr(0, nl)), &probe); s != 0) {
          return reject(s, s == 505 ? "HTTP/1.0 and HTTP/1.1 only" : "malformed request line");
        }
      }
      if (eof) {
        if (!c.in.empty()) return reject(400, "incomplete request");
        Close(c.fd);
        return false;
      }
      return true;
    }
    HttpRequest request;
    size_t length = 0;
    if (const int s = ParseHead(absl::string_view(c.in).substr(0, end), options_.max_body_bytes, &request, &length);
        s != 0) {
      return reject(s, s == 413   ? absl::StrCat("body over ", options_.max_body_bytes, " bytes")
                       : s == 501 ? "Transfer-Encoding is not supported; send Content-Length"
                       : s == 505 ? "HTTP/1.0 and HTTP/1.1 only"
                                  : "malformed request");
    }
    request.peer = c.peer;
    c.job = Route(std::move(request));
    if (c.job.handler == nullptr) {  // 404 / 405: no need for the body
      c.job.linger = true;
      Answer(c, std::move(c.job));
      return false;
    }
    c.head_end = end;
    c.content_length = length;
    c.deadline = c.accepted + options_.request_timeout;
    if (c.in.size() < end + length) {
      const std::optional<absl::string_view> expect = c.job.request.Header("expect");
      if (expect.has_value() && absl::EqualsIgnoreCase(*expect, "100-continue")) {
        static constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
        (void)!send(c.fd, kContinue, sizeof kContinue - 1, MSG_NOSIGNAL);
      }
    }
    // Go round again: the body may be here already.
  }
}

bool HttpServer::Drain(Conn& c) {
  char buf[16384];
  for (;;) {
    const ssize_t n = recv(c.fd, buf, sizeof buf, 0);
    if (n > 0) continue;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    Close(c.fd);  // the client has closed (or reset): done
    return false;
  }
}

HttpServer::Job HttpServer::Route(HttpRequest request) const {
  Job j;
  j.head_only = request.method == "HEAD";
  const std::map<std::string, HttpHandler>* routed = nullptr;
  if (const auto path = routes_.find(request.path); path != routes_.end()) {
    routed = &path->second;
  } else {
    // The longest prefix of the path: the last key <= path that is a prefix of it.
    for (auto it = prefix_routes_.upper_bound(request.path); it != prefix_routes_.begin();) {
      --it;
      if (absl::StartsWith(request.path, it->first)) {
        routed = &it->second;
        break;
      }
    }
  }
  if (routed == nullptr) {
    j.response = {404, kTextPlain, "not found\n"};
    return j;
  }
  const std::map<std::string, HttpHandler>& methods = *routed;
  // HEAD is GET without the body (RFC 9110 9.3.2), unless routed on its own.
  auto method = methods.find(request.method);
  if (method == methods.end() && j.head_only) method = methods.find("GET");
  if (method == methods.end()) {
    std::vector<absl::string_view> allowed;
    for (const auto& [m, handler] : methods) {
      allowed.push_back(m);
      if (m == "GET" && !methods.contains("HEAD")) allowed.push_back("HEAD");
    }
    std::sort(allowed.begin(), allowed.end());
    j.response = {405, kTextPlain, "method not allowed\n"};
    j.response.headers.emplace_back("Allow", absl::StrJoin(allowed, ", "));
    return j;
  }
  j.handler = &method->second;
  j.request = std::move(request);
  return j;
}

void HttpServer::Answer(Conn& c, Job job) {
  job.fd = c.fd;
  c.fd = -1;
  absl::MutexLock l(&mu_);
  queue_.push_back(std::move(job));
}

void HttpServer::Work() {
  for (;;) {
    Job job;
    {
      absl::MutexLock l(&mu_);
      mu_.Await(absl::Condition(this, &HttpServer::WorkReady));
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    const size_t bytes = Respond(job);
    job = Job();
    // glibc keeps freed memory in its arenas: after a large exchange (a 10,000-request
    // batch is ~30 MB of JSON and ten times that while printing) give it back.
    if (bytes > kTrimAfterBytes) malloc_trim(0);
  }
}

size_t HttpServer::Respond(Job& job) {
  HttpResponse response;
  if (job.handler != nullptr) {
    try {
      response = (*job.handler)(job.request);
    } catch (const std::exception& e) {
      response = {500, kTextPlain, absl::StrCat("internal error: ", e.what(), "\n")};
    } catch (...) {
      response = {500, kTextPlain, "internal error\n"};
    }
  } else {
    response = std::move(job.response);
  }
  const size_t bytes = job.request.body.size() + response.body.size();
  const bool sent =
      SendAll(job.fd, Serialize(response, !job.head_only), stop_pipe_[0], absl::Now() + options_.write_timeout);
  if (!sent || !job.linger) {
    Close(job.fd);
    return bytes;
  }
  // The client may still be sending the rest of a refused request: tell it we are done
  // and let the loop read and discard the rest until it closes.
  shutdown(job.fd, SHUT_WR);
  {
    absl::MutexLock l(&mu_);
    lingering_.push_back(job.fd);
  }
  const uint64_t one = 1;
  while (write(lingering_event_, &one, sizeof one) < 0 && errno == EINTR) {
  }
  return bytes;
}

}  // namespace paraplan::server
