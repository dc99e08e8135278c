// libFuzzer target: the CLI's JSON input and output (client/input.h, json_error.h,
// json_fields.h, json_enums.h, json_int64.h, json_io.h). The bytes are read as each file
// the CLI reads — a whole workload, config or profile file (strict, through ParseJsonFile
// and LoadJsonFile on an in-memory file) and a JSON-lines file of estimate requests or
// measurements (NonBlankLines + ParseJsonLine / LoadJsonLine) — and the error locator,
// the field-string rewriter, the enum-name normaliser and the 64-bit integer printer run
// on them directly. Invariants: positions are 1-based and inside the text; what ToJson
// and PrintJson print parses back, and PrintJson of that is the same text; a rewrite
// that keeps every string (or returns each as written) gives the text back byte for
// byte; enum normalisation is idempotent and changes no message protobuf's own parser
// accepts; a text the JSON parser accepts stays accepted after Int64AsNumbers.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "client/input.h"
#include "client/json_enums.h"
#include "client/json_error.h"
#include "client/json_fields.h"
#include "client/json_int64.h"
#include "client/json_io.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
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

// The wire bytes of `m` with map entries sorted: equal for equal messages (JSON prints
// map entries in no fixed order, so texts cannot be compared).
std::string Deterministic(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  m.SerializeToCodedStream(&coded);
  coded.Trim();
  return out;
}

// PrintJson (64-bit integers as numbers) parses back through LoadJsonLine, to the same
// message.
void CheckPrintJson(const google::protobuf::Message& m) {
  const std::string json = cli::PrintJson(m, /*pretty=*/false);
  if (json.empty()) return;
  std::unique_ptr<google::protobuf::Message> back(m.New());
  if (!cli::LoadJsonLine("printed", 1, json, back.get()).ok()) {
    std::fprintf(stderr, "%s\n", json.c_str());
    Fail("PrintJson output does not parse back", 0);
  }
  if (Deterministic(*back) != Deterministic(m)) {
    std::fprintf(stderr, "%s\n%s\n", json.c_str(), cli::PrintJson(*back, false).c_str());
    Fail("PrintJson output parses back to another message", 0);
  }
}

// json_fields / json_enums / json_int64 on arbitrary text read as the JSON of `type`.
void CheckRewriters(absl::string_view text, const google::protobuf::Descriptor* type) {
  const auto keep = [](const google::protobuf::FieldDescriptor&, absl::string_view) {
    return std::optional<std::string>();
  };
  if (cli::RewriteFieldStrings(text, type, keep) != text) Fail("a rewrite keeping every string changed the text", 0);
  const auto same = [](const google::protobuf::FieldDescriptor&, absl::string_view raw) {
    return std::optional<std::string>(absl::StrCat("\"", raw, "\""));
  };
  if (cli::RewriteFieldStrings(text, type, same) != text) {
    Fail("a rewrite returning every string as written changed the text", 0);
  }

  const std::string normalized = cli::NormalizeEnumNames(text, type);
  if (cli::NormalizeEnumNames(normalized, type) != normalized) Fail("NormalizeEnumNames is not idempotent", 0);
  (void)cli::UnmappableEnumValue(text, type);
  (void)cli::UnmappableEnumValue(normalized, type);

  // Strict: ignoring unknown fields, protobuf would drop an enum name it does not know
  // ("selective") that the normaliser maps.
  google::protobuf::util::JsonParseOptions o;
  const google::protobuf::Message* prototype =
      google::protobuf::MessageFactory::generated_factory()->GetPrototype(type);
  std::unique_ptr<google::protobuf::Message> before(prototype->New()), after(prototype->New());
  const std::string original(text);
  if (google::protobuf::util::JsonStringToMessage(original, before.get(), o).ok()) {
    // Full proto names are already what the normaliser writes: the message is the same.
    if (!google::protobuf::util::JsonStringToMessage(normalized, after.get(), o).ok()) {
      Fail("NormalizeEnumNames broke text protobuf parses", 0);
    }
    if (Deterministic(*before) != Deterministic(*after)) {
      Fail("NormalizeEnumNames changed a message protobuf parses", 0);
    }
    after->Clear();
    if (!google::protobuf::util::JsonStringToMessage(cli::Int64AsNumbers(original, type), after.get(), o).ok()) {
      Fail("Int64AsNumbers broke text protobuf parses", 0);
    }
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
  m.Clear();
  if (cli::LoadJsonFile(path, &m).ok()) CheckPrintJson(m);
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

  for (const google::protobuf::Descriptor* type :
       {v1::Workload::descriptor(), v1::SystemProfile::descriptor(), v1::EstimateRequest::descriptor(),
        v1::PlanResponse::descriptor()}) {
    fuzz::CheckRewriters(text, type);
  }

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
    req.Clear();
    if (cli::LoadJsonLine("batch.jsonl", line.number, line.text, &req).ok()) fuzz::CheckPrintJson(req);
    m.Clear();
    if (cli::LoadJsonLine("measurements.jsonl", line.number, line.text, &m).ok()) fuzz::CheckPrintJson(m);
  }
  return 0;
}
