#include "server/http_message.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace paraplan::server {
namespace {

constexpr size_t kMaxMethodBytes = 32;

const char* Reason(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 499: return "Client Closed Request";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

// RFC 9110 token characters (methods, header names).
bool IsTchar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}
bool IsToken(absl::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), IsTchar); }
// CR, LF, NUL and other controls but HT; bytes >= 0x80 pass (obs-text).
bool IsFieldValue(absl::string_view s) {
  return std::none_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\t') || u == 0x7f;
  });
}
bool IsHeaderSafe(absl::string_view s) { return s.find_first_of("\r\n") == absl::string_view::npos; }

}  // namespace

std::optional<absl::string_view> HttpRequest::Header(absl::string_view lower_case_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_case_name) return value;
  }
  return std::nullopt;
}

absl::string_view StripCr(absl::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

std::string Serialize(const HttpResponse& r, bool with_body) {
  // A handler cannot send an interim (1xx) or invalid status as the answer.
  const int status = (r.status >= 200 && r.status <= 599) ? r.status : 500;
  std::string out = absl::StrCat("HTTP/1.1 ", status, " ", Reason(status), "\r\n");
  if (!r.content_type.empty() && IsHeaderSafe(r.content_type)) {
    absl::StrAppend(&out, "Content-Type: ", r.content_type, "\r\n");
  }
  for (const auto& [name, value] : r.headers) {
    if (!IsToken(name) || !IsHeaderSafe(value) || absl::EqualsIgnoreCase(name, "content-length") ||
        absl::EqualsIgnoreCase(name, "connection") || absl::EqualsIgnoreCase(name, "transfer-encoding")) {
      continue;
    }
    absl::StrAppend(&out, name, ": ", value, "\r\n");
  }
  absl::StrAppend(&out, "Content-Length: ", r.body.size(), "\r\nConnection: close\r\n\r\n");
  if (with_body) out += r.body;
  return out;
}

size_t HeadEnd(absl::string_view in, size_t* scanned) {
  for (size_t i = in.find('\n', *scanned); i != absl::string_view::npos; i = in.find('\n', i + 1)) {
    if (i + 1 < in.size() && in[i + 1] == '\n') return i + 2;
    if (i + 2 < in.size() && in[i + 1] == '\r' && in[i + 2] == '\n') return i + 3;
    if (i + 2 >= in.size()) {
      *scanned = i;  // the empty line may still come after this line end
      return absl::string_view::npos;
    }
  }
  *scanned = in.size();
  return absl::string_view::npos;
}

int ParseRequestLine(absl::string_view line, HttpRequest* r) {
  const std::vector<absl::string_view> parts = absl::StrSplit(line, ' ');
  if (parts.size() != 3) return 400;
  const absl::string_view method = parts[0], target = parts[1], version = parts[2];
  if (!IsToken(method) || method.size() > kMaxMethodBytes) return 400;
  if (target.empty() || target[0] != '/') return 400;  // origin-form only
  if (!std::all_of(target.begin(), target.end(), [](char c) { return c > 0x20 && c < 0x7f; })) return 400;
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    const bool well_formed = version.size() == 8 && absl::StartsWith(version, "HTTP/") &&
                             absl::ascii_isdigit(static_cast<unsigned char>(version[5])) && version[6] == '.' &&
                             absl::ascii_isdigit(static_cast<unsigned char>(version[7]));
    return well_formed ? 505 : 400;
  }
  r->method = std::string(method);
  const size_t q = target.find('?');
  r->path = std::string(target.substr(0, q));
  r->query = q == absl::string_view::npos ? "" : std::string(target.substr(q + 1));
  return 0;
}

int ParseHead(absl::string_view head, size_t max_body_bytes, HttpRequest* r, size_t* content_length) {
  std::vector<absl::string_view> lines = absl::StrSplit(head, '\n');
  // The head ends in an empty line, which splits into two empty pieces (or "\r" and "").
  while (!lines.empty() && StripCr(lines.back()).empty()) lines.pop_back();
  if (lines.empty()) return 400;
  if (const int s = ParseRequestLine(StripCr(lines[0]), r); s != 0) return s;
  std::optional<uint64_t> length;
  for (size_t i = 1; i < lines.size(); ++i) {
    const absl::string_view line = StripCr(lines[i]);
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) return 400;
    const absl::string_view name = line.substr(0, colon);  // also rejects obs-fold: ' ' is no tchar
    const absl::string_view value = absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (!IsToken(name) || !IsFieldValue(value)) return 400;
    r->headers.emplace_back(absl::AsciiStrToLower(name), std::string(value));
    const std::string& lower = r->headers.back().first;
    if (lower == "transfer-encoding") return 501;
    if (lower == "content-length") {
      uint64_t n = 0;
      if (value.empty() || value.size() > 18 || !std::all_of(value.begin(), value.end(), absl::ascii_isdigit) ||
          !absl::SimpleAtoi(value, &n) || (length.has_value() && *length != n)) {
        return 400;
      }
      length = n;
    }
  }
  if (length.value_or(0) > max_body_bytes) return 413;
  *content_length = static_cast<size_t>(length.value_or(0));
  return 0;
}

}  // namespace paraplan::server
