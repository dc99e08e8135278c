// libFuzzer target: the CLI's JSON input (client/input.h, client/json_error.h). The
// bytes are read as each file the CLI reads — a whole workload, config or profile file
// (strict, through ParseJsonFile on an in-memory file) and a JSON-lines file of
// estimate requests or measurements (NonBlankLines + ParseJsonLine) — and the error
// locator runs on them directly. Invariants: positions are 1-based and inside the text;
// what ToJson prints parses back.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "client/input.h"
#include "client/json_error.h"
#include "paraplan/v1/services.pb.h"
#include "tests/fuzz/fuzz_util.h"

namespace paraplan::fuzz {
namespace {

// ParseJsonFile reads a path; an in-memory file keeps the disk out of the loop.
const std::string& InputPath(absl::string_view text) {
  static const int fd = memfd_create("cli_json_fuzzer", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0 || ftruncate(fd, 0) != 0 ||
      pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
    Fail("cannot write the in-memory input file", fd);
  }
  return path;
}

// What the CLI prints for a message it parsed must parse back (strictly).
void CheckRoundTrip(const google::protobuf::Message& m) {
  const std::string json = cli::ToJson(m, /*pretty=*/false);
  if (json.empty()) return;  // ToJson reports no error; nothing to check
  std::unique_ptr<google::protobuf::Message> back(m.New());
  if (!cli::ParseJsonLine("printed", 1, json, back.get()).ok()) {
    std::fprintf(stderr, "%s\n", json.c_str());
    Fail("ToJson output does not parse back", 0);
  }
}

void CheckPosition(absl::string_view text) {
  std::optional<cli::TextPosition> at = cli::JsonSyntaxErrorPosition(text);
  if (!at) return;
  const int lines = 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  if (at->line < 1 || at->line > lines) Fail("syntax error line outside the text", at->line);
  if (at->column < 1 || at->column > static_cast<int>(text.size()) + 1) {
    Fail("syntax error column outside the text", at->column);
  }
}

template <typename M>
void WholeFile(const std::string& path) {
  M m;
  if (cli::ParseJsonFile(path, &m).ok()) CheckRoundTrip(m);
}

}  // namespace
}  // namespace paraplan::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace paraplan;
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  fuzz::CheckPosition(text);
  // Also on any parser message: the text after the first NUL byte stands for it.
  const size_t nul = text.find('\0');
  (void)cli::DescribeJsonError("input.json", 1, text.substr(0, nul), "Workload",
                               nul == absl::string_view::npos ? "invalid JSON" : text.substr(nul + 1));

  const std::string& path = fuzz::InputPath(text);
  fuzz::WholeFile<v1::Workload>(path);
  fuzz::WholeFile<v1::ParallelConfig>(path);
  fuzz::WholeFile<v1::SystemProfile>(path);

  for (const cli::NumberedLine& line : cli::NonBlankLines(text)) {
    if (line.number < 1 || line.text.data() < text.data() ||
        line.text.data() + line.text.size() > text.data() + text.size()) {
      fuzz::Fail("NonBlankLines returned a line outside the text", line.number);
    }
    fuzz::CheckPosition(line.text);
    v1::EstimateRequest req;
    if (cli::ParseJsonLine("batch.jsonl", line.number, line.text, &req).ok()) fuzz::CheckRoundTrip(req);
    v1::Measurement m;
    if (cli::ParseJsonLine("measurements.jsonl", line.number, line.text, &m).ok()) fuzz::CheckRoundTrip(m);
  }
  return 0;
}
