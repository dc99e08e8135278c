// Helpers shared by the libFuzzer targets in tests/fuzz: decoding the fuzzer's bytes the
// ways the server and the CLI decode a request, and the invariants every successful
// answer must keep.
//
// A broken invariant aborts (libFuzzer records the input as a crash), so a fuzz run
// finds wrong answers as well as memory errors. Header-only; not thread-safe (libFuzzer
// calls a target from one thread).
#ifndef PARAPLAN_TESTS_FUZZ_FUZZ_UTIL_H_
#define PARAPLAN_TESTS_FUZZ_FUZZ_UTIL_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/string_view.h"
#include "estimator/catalog/presets.h"
#include "estimator/inputs/system_profile.h"
#include "estimator/iteration/estimate.h"
#include "google/protobuf/message.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/util/json_util.h"

namespace paraplan::fuzz {

// Protobuf's parser logs every string field with invalid UTF-8; at thousands of inputs a
// second that is most of the run's time and output. Discarded from start-up on.
inline const bool kProtobufLogsDiscarded = (google::protobuf::SetLogHandler(nullptr), true);

// Calls `run(message)` once for each way `data` decodes into `*m`: as the binary wire
// format (what a gRPC call carries) and as proto3 JSON (what the CLI and an HTTP/JSON
// gateway read; unknown fields ignored, so measurement lines decode as requests too).
template <typename Run>
void ForEachDecoding(const uint8_t* data, size_t size, google::protobuf::Message* m, Run run) {
  m->Clear();
  if (m->ParseFromArray(data, static_cast<int>(size))) run(*m);
  m->Clear();
  google::protobuf::util::JsonParseOptions o;
  o.ignore_unknown_fields = true;
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  if (google::protobuf::util::JsonStringToMessage(google::protobuf::StringPiece(text.data(), text.size()), m, o)
          .ok()) {
    run(*m);
  }
}

// The built-in profile a request names ("NAME" or "NAME@VERSION"); the first built-in
// one when it names none of them (the store is out of scope for these targets).
inline SystemProfile ProfileNamed(absl::string_view ref) {
  const absl::string_view name = ref.substr(0, ref.find('@'));
  const std::vector<SystemProfile> all = BuiltinProfiles();
  for (const SystemProfile& p : all) {
    if (p.name == name) return p;
  }
  return all.front();
}

[[noreturn]] inline void Fail(const char* what, double value) {
  std::fprintf(stderr, "invariant broken: %s (value %g)\n", what, value);
  std::abort();
}

// What every estimate the server answers OK must satisfy: a finite, positive time and
// finite memory (an infinite time answered OK is the defect of issue 12).
inline void CheckEstimate(const Estimate& e) {
  if (!std::isfinite(e.iteration_time_s) || !(e.iteration_time_s > 0)) {
    Fail("estimate answered OK with a non-finite or non-positive iteration_time_s", e.iteration_time_s);
  }
  if (!std::isfinite(e.memory.total_bytes) || e.memory.total_bytes < 0) {
    Fail("estimate answered OK with non-finite or negative memory", e.memory.total_bytes);
  }
}

}  // namespace paraplan::fuzz

#endif  // PARAPLAN_TESTS_FUZZ_FUZZ_UTIL_H_
