#include "client/input.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/json_error.h"
#include "google/protobuf/message.h"
#include "google/protobuf/util/json_util.h"

namespace paraplan::cli {

namespace {

absl::Status Parse(absl::string_view file, int first_line, absl::string_view text, bool ignore_unknown,
                   google::protobuf::Message* m) {
  google::protobuf::util::JsonParseOptions o;
  o.ignore_unknown_fields = ignore_unknown;
  const auto s = google::protobuf::util::JsonStringToMessage(google::protobuf::StringPiece(text.data(), text.size()),
                                                             m, o);
  if (s.ok()) return absl::OkStatus();
  return absl::InvalidArgumentError(DescribeJsonError(file, first_line, text, m->GetDescriptor()->name(),
                                                      absl::string_view(s.message().data(), s.message().size())));
}

}  // namespace

std::string DisplayName(const std::string& path) { return path == "-" ? "<stdin>" : path; }

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  if (path == "-") {
    static std::atomic<bool> read{false};
    if (read.exchange(true)) {
      return absl::FailedPreconditionError(
          "<stdin>: standard input (\"-\") is already read for another argument; give the others as files");
    }
    std::string text;
    char buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) text.append(buf, n);
    if (std::ferror(stdin)) return absl::FailedPreconditionError(absl::StrCat("<stdin>: cannot read: ", std::strerror(errno)));
    return text;
  }
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (f == nullptr) {
    const int err = errno;
    const std::string message = absl::StrCat(path, ": cannot open: ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(message) : absl::FailedPreconditionError(message);
  }
  std::string text;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) text.append(buf, n);
  if (std::ferror(f.get())) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": cannot read: ", std::strerror(errno)));
  }
  return text;
}

absl::Status ParseJsonFile(const std::string& path, google::protobuf::Message* m) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return Parse(DisplayName(path), 1, *text, /*ignore_unknown=*/false, m);
}

absl::Status ParseJsonText(absl::string_view file, absl::string_view text, google::protobuf::Message* m) {
  return Parse(file, 1, text, /*ignore_unknown=*/false, m);
}

absl::Status ParseJsonLine(absl::string_view file, int line, absl::string_view text, google::protobuf::Message* m) {
  return Parse(file, line, text, /*ignore_unknown=*/false, m);
}

std::vector<NumberedLine> NonBlankLines(absl::string_view text) {
  std::vector<NumberedLine> lines;
  int n = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++n;
    if (!absl::StripAsciiWhitespace(raw).empty()) lines.push_back({n, raw});
  }
  return lines;
}

std::string ToJson(const google::protobuf::Message& m, bool pretty) {
  google::protobuf::util::JsonPrintOptions o;
  o.preserve_proto_field_names = true;
  o.always_print_primitive_fields = true;
  o.add_whitespace = pretty;
  std::string s;
  (void)google::protobuf::util::MessageToJsonString(m, &s, o);
  return s;
}

}  // namespace paraplan::cli
