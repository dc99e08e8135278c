// Microbenchmarks as profile input: nccl-tests output and GEMM sweeps, parsed and fitted
// into a system profile's calibration.
//
// FitNetworkLevel() turns measured collective times on one network level into that
// level's per-step latency, the profile's fixed per-call collective overhead and a
// bus-bandwidth curve (efficiency by message size), so that the model's collective
// times reproduce the measurement. FitGemm() turns a GEMM sweep (m, n, k, dtype,
// seconds) into matmul_efficiency (16-bit and FP8) and the small-GEMM tail. Both return
// the fitted profile and a report of measured vs predicted per point; they never store
// anything. Pure functions; thread-safe.
#ifndef PARAPLAN_ESTIMATOR_CALIBRATION_MICROBENCH_H_
#define PARAPLAN_ESTIMATOR_CALIBRATION_MICROBENCH_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "estimator/inputs/interrupt.h"
#include "estimator/inputs/parallel_config.h"
#include "estimator/inputs/system_profile.h"
#include "estimator/inputs/workload.h"

namespace paraplan {

// "all_reduce", "all_reduce_perf", "allreduce", "all-gather", ... (case-insensitive);
// also finds the name inside a file name ("all_reduce_8gpu.csv").
absl::StatusOr<CollectiveKind> ParseCollectiveKind(absl::string_view name);
const char* CollectiveKindName(CollectiveKind kind);

// Most ranks a collective file or request may state (16 M: far beyond any cluster).
inline constexpr int kMaxCollectiveRanks = 1 << 24;
// Longest file name read (POSIX NAME_MAX); a longer one is refused, not scanned.
inline constexpr size_t kMaxMicrobenchFileName = 255;

// The group size a file name states: the first run of digits followed by "gpu" or
// "gpus", optionally after '-' or '_' ("all_reduce_8gpu.csv", "ar-16GPUs.txt"); 0 when
// the name states none. INVALID_ARGUMENT when the name is longer than
// kMaxMicrobenchFileName bytes or states more than kMaxCollectiveRanks ranks. One pass
// over the name (no regex, no unchecked conversion).
absl::StatusOr<int> RanksFromFileName(absl::string_view name);

struct CollectiveSample {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  int ranks = 0;
  double bytes = 0;    // nccl-tests "size": the buffer on each rank (all-gather: output)
  double seconds = 0;  // out-of-place time
};

// Parses one nccl-tests output: the table all_reduce_perf & co. print (comment lines
// start with '#'; the column named "time" after "size" is in microseconds; ranks come
// from its "#  Rank" lines) or CSV with a header naming size(B) and time(ns|us). `ranks`
// > 0 overrides what the text says. INVALID_ARGUMENT names the line that cannot be read.
absl::StatusOr<std::vector<CollectiveSample>> ParseNcclTests(absl::string_view text, CollectiveKind kind,
                                                             int ranks);

struct NetworkFitPoint {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  int ranks = 0;
  double bytes = 0;
  double measured_s = 0;
  double predicted_s = 0;
};

struct NetworkFitReport {
  std::string level;
  double collective_overhead_us = 0;  // fitted fixed cost per call (profile-wide)
  double latency_us = 0;              // fitted per-step latency of the level
  double efficiency = 0;              // median of the curve (flat fallback)
  std::vector<BandwidthPoint> curve;
  std::vector<NetworkFitPoint> points;
  double max_error_ratio = 0;        // max |predicted / measured - 1|
  int within_5_percent = 0;
  std::vector<std::string> notes;
};

struct NetworkFit {
  SystemProfile profile;
  NetworkFitReport report;
};

// `level` empty = the level that a packed group of the samples' ranks crosses (all
// samples must agree). INVALID_ARGUMENT for an unknown level, no samples, or samples on
// several levels. Both fits stop with CANCELLED / DEADLINE_EXCEEDED when `stop` asks,
// within a pass over the samples.
absl::StatusOr<NetworkFit> FitNetworkLevel(const SystemProfile& base, const std::string& level,
                                           const std::vector<CollectiveSample>& samples,
                                           const Interrupt& stop = {});

struct GemmSample {
  double m = 0, n = 0, k = 0;
  Precision precision = Precision::kBf16;
  double seconds = 0;
};

// CSV with a header naming m, n, k, dtype (bf16 | fp16 | fp8* | fp32) and seconds, as
// scripts/microbench/gemm_sweep.py writes.
absl::StatusOr<std::vector<GemmSample>> ParseGemmCsv(absl::string_view text);

struct GemmFitPoint {
  GemmSample sample;
  double predicted_s = 0;
};

struct GemmFitReport {
  double matmul_efficiency = 0;
  double matmul_efficiency_fp8 = 0;  // 0 when the sweep has no FP8 rows
  double matmul_half_efficiency_gflop = 0;
  double matmul_pipeline_depth = 0;
  // Host floor of one GEMM call in the benchmark (the smallest shapes are launch-bound):
  // predictions are max(model, floor), for 16-bit and FP8 calls.
  double launch_floor_us = 0;
  double launch_floor_fp8_us = 0;
  std::vector<GemmFitPoint> points;
  int within_10_percent = 0;
  int above_floor = 0;  // points measurably slower than the floor
};

struct GemmFit {
  SystemProfile profile;
  GemmFitReport report;
};

absl::StatusOr<GemmFit> FitGemm(const SystemProfile& base, const std::vector<GemmSample>& samples,
                                const Interrupt& stop = {});

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_CALIBRATION_MICROBENCH_H_
