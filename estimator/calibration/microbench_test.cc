// Microbenchmarks as profile input: nccl-tests parsing (shipped CSVs and the table the
// tools print) and fits of a level's latency / bandwidth curve and of the GEMM
// efficiency on the shipped A100 nccl-tests and H100 GEMM sweep.
#include "estimator/calibration/microbench.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/time/clock.h"
#include "estimator/iteration/estimate.h"
#include "estimator/system/collectives.h"
#include "estimator/system/hardware.h"
#include "estimator/testing/test_util.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::Profile;

std::string Read(const std::string& rel) {
  std::ifstream in(std::string(PARAPLAN_SHARED_DATA_DIR) + "/" + rel);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<CollectiveSample> AllReduceFile(int gpus) {
  const std::string name = "nccl_tests_a100/all_reduce_" + std::to_string(gpus) + "gpu.csv";
  absl::StatusOr<CollectiveKind> kind = ParseCollectiveKind(name);
  EXPECT_TRUE(kind.ok());
  absl::StatusOr<std::vector<CollectiveSample>> s = ParseNcclTests(Read(name), *kind, gpus);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : std::vector<CollectiveSample>{};
}

TEST(NcclTests, RanksFromFileNameReadsTheFirstGpuCountAndBoundsIt) {
  EXPECT_EQ(*RanksFromFileName("all_reduce_8gpu.csv"), 8);
  EXPECT_EQ(*RanksFromFileName("ar-16GPUs.txt"), 16);
  EXPECT_EQ(*RanksFromFileName("run2_all_gather_64_gpus.csv"), 64);  // "2_a" is no count
  EXPECT_EQ(*RanksFromFileName("all_reduce.csv"), 0);
  EXPECT_EQ(*RanksFromFileName("all_reduce_16777216gpu.csv"), 1 << 24);
  // Once a crash (regex recursion) and an uncaught std::out_of_range: now errors.
  absl::StatusOr<int> huge = RanksFromFileName("all_reduce_99999999999gpu.csv");
  ASSERT_EQ(huge.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(huge.status().message().find("99999999999 GPUs; at most 16777216"), std::string::npos)
      << huge.status();
  EXPECT_EQ(RanksFromFileName("all_reduce_16777217gpu.csv").status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<int> long_name = RanksFromFileName("all_reduce_" + std::string(100000, '9') + "gpu.csv");
  ASSERT_EQ(long_name.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(long_name.status().message().find("file name of 100018 bytes; at most 255"), std::string::npos)
      << long_name.status();
}

TEST(NcclTests, ParsesTheShippedCsv) {
  const std::vector<CollectiveSample> s = AllReduceFile(8);
  ASSERT_EQ(s.size(), 1024u);
  EXPECT_EQ(s[0].kind, CollectiveKind::kAllReduce);
  EXPECT_EQ(s[0].ranks, 8);
  EXPECT_EQ(s[0].bytes, 1048576);
  EXPECT_NEAR(s[0].seconds, 92790e-9, 1e-12);  // out-of-place time(ns)
}

TEST(NcclTests, ParsesThePrintedTable) {
  const std::string text =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20\n"
      "#\n"
      "# Using devices\n"
      "#  Rank  0 Group  0 Pid  12 on node-1 device  0 [0x07] NVIDIA A100-SXM4-80GB\n"
      "#  Rank  1 Group  0 Pid  13 on node-1 device  1 [0x0f] NVIDIA A100-SXM4-80GB\n"
      "#  Rank  2 Group  0 Pid  14 on node-1 device  2 [0x47] NVIDIA A100-SXM4-80GB\n"
      "#  Rank  3 Group  0 Pid  15 on node-1 device  3 [0x4e] NVIDIA A100-SXM4-80GB\n"
      "#\n"
      "#                                                              out-of-place                       in-place\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
      "     1048576        262144     float     sum      -1    51.40   20.40   30.60      0    52.74   19.88   29.82      0\n"
      "   134217728      33554432     float     sum      -1   1014.2  132.34  198.51      0   1013.9  132.38  198.57      0\n"
      "# Out of bounds values : 0 OK\n"
      "# Avg bus bandwidth    : 114.55\n";
  absl::StatusOr<std::vector<CollectiveSample>> s = ParseNcclTests(text, CollectiveKind::kAllReduce, 0);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[0].ranks, 4);  // four "#  Rank" lines
  EXPECT_NEAR((*s)[1].seconds, 1014.2e-6, 1e-12);
  EXPECT_EQ((*s)[1].bytes, 134217728);
  // Kinds from binary or file names; garbage is refused with the line.
  EXPECT_EQ(*ParseCollectiveKind("reduce_scatter_perf"), CollectiveKind::kReduceScatter);
  EXPECT_FALSE(ParseCollectiveKind("broadcast_perf").ok());
  EXPECT_FALSE(ParseNcclTests("size(B),time(ns)\n1024,abc\n", CollectiveKind::kAllReduce, 8).ok());
  EXPECT_FALSE(ParseNcclTests("#  size count type redop root time\n 8 2 float sum -1 5.0\n",
                              CollectiveKind::kAllReduce, 0).ok());  // ranks unknown
}

// One level's curve fitted from one group size reproduces it within 5 % at 99 % of the
// 1,024 sizes; what it misses are sizes that are multiples of 24 MiB (48, 96, 120, 144,
// 168 MiB), ~6 % faster than their neighbours — NCCL's chunks divide them evenly — a
// step no smooth curve in log(size) follows.
TEST(FitNetwork, EightGpuAllReduceWithinFivePercent) {
  const SystemProfile base = Profile("dgx-a100-80gb");
  const std::vector<CollectiveSample> s = AllReduceFile(8);
  absl::StatusOr<NetworkFit> fit = FitNetworkLevel(base, "", s);
  ASSERT_TRUE(fit.ok()) << fit.status();
  const NetworkFitReport& r = fit->report;
  std::printf("nvlink from 8 GPUs: overhead %.1f us, latency %.2f us/step, efficiency %.3f, %zu curve points, "
              "max error %.1f%%, %d of %zu within 5%%\n",
              r.collective_overhead_us, r.latency_us, r.efficiency, r.curve.size(), 100 * r.max_error_ratio,
              r.within_5_percent, r.points.size());
  EXPECT_EQ(r.level, "nvlink");
  for (const NetworkFitPoint& p : r.points) {
    if (std::abs(p.predicted_s / p.measured_s - 1) > 0.05) {
      std::printf("  missed: %.0f MiB measured %.1f us predicted %.1f us\n", p.bytes / 1048576, 1e6 * p.measured_s,
                  1e6 * p.predicted_s);
    }
  }
  EXPECT_GE(r.within_5_percent, 0.99 * r.points.size());
  EXPECT_LE(r.max_error_ratio, 0.08);
  // Against the built-in default (within 25 %): the fit is what makes it 5 %.
  const Hardware hw(fit->profile, Precision::kBf16);
  const Collectives coll(hw);
  EXPECT_NEAR(coll.AllReduce(s[0].bytes, coll.Place(8, 1)), s[0].seconds, 0.05 * s[0].seconds);
}

// Seven group sizes at once: per-call and per-step latency are separated; one curve for
// the level then serves every size, less exactly (2 GPUs reach a lower bus bandwidth).
TEST(FitNetwork, AllGroupSizesSeparateCallAndStepLatency) {
  std::vector<CollectiveSample> all;
  for (int g = 2; g <= 8; ++g) {
    const std::vector<CollectiveSample> s = AllReduceFile(g);
    all.insert(all.end(), s.begin(), s.end());
  }
  absl::StatusOr<NetworkFit> fit = FitNetworkLevel(Profile("dgx-a100-80gb"), "nvlink", all);
  ASSERT_TRUE(fit.ok()) << fit.status();
  const NetworkFitReport& r = fit->report;
  std::printf("nvlink from 2-8 GPUs: overhead %.1f us, latency %.2f us/step, max error %.1f%%, %d of %zu within 5%%\n",
              r.collective_overhead_us, r.latency_us, 100 * r.max_error_ratio, r.within_5_percent,
              r.points.size());
  EXPECT_GT(r.collective_overhead_us, 10);
  EXPECT_GT(r.latency_us, 0.5);
  EXPECT_LE(r.max_error_ratio, 0.35);
  EXPECT_GE(r.within_5_percent, static_cast<int>(0.5 * r.points.size()));
  // The fitted profile is a valid profile (curve ascending, efficiencies in (0, 1]).
  EXPECT_TRUE(EstimateIteration(testing::Model("llama3-8b"), testing::Config(8, 1, 1, 1, 8), fit->profile).ok());
}

TEST(FitNetwork, RejectsWhatItCannotFit) {
  const SystemProfile base = Profile("dgx-a100-80gb");
  EXPECT_FALSE(FitNetworkLevel(base, "", {}).ok());
  EXPECT_FALSE(FitNetworkLevel(base, "ethernet", AllReduceFile(8)).ok());
  // 8 packed ranks sit inside one NVLink domain, not on InfiniBand.
  EXPECT_FALSE(FitNetworkLevel(base, "infiniband", AllReduceFile(8)).ok());
}

// The fits stop when their caller's deadline passes or it cancels (once an abandoned
// FitGemm of an 8 MiB sweep ran 84 CPU-s after its client left).
TEST(FitGemm, StopsWhenInterrupted) {
  absl::StatusOr<std::vector<GemmSample>> s = ParseGemmCsv(Read("h100_microbench/gemm.csv"));
  ASSERT_TRUE(s.ok()) << s.status();
  Interrupt past;
  past.deadline = absl::Now() - absl::Seconds(1);
  absl::StatusOr<GemmFit> late = FitGemm(Profile("dgx-h100-80gb"), *s, past);
  EXPECT_EQ(late.status().code(), absl::StatusCode::kDeadlineExceeded) << late.status();
  const std::atomic<bool> cancelled{true};
  Interrupt gone;
  gone.cancelled = &cancelled;
  EXPECT_EQ(FitGemm(Profile("dgx-h100-80gb"), *s, gone).status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(FitNetworkLevel(Profile("dgx-a100-80gb"), "", AllReduceFile(8), gone).status().code(),
            absl::StatusCode::kCancelled);
}

// A sweep made by the model itself from known values (16-bit efficiency 0.8, FP8 0.7, a
// tile pipeline 256 K-elements deep, four times CUTLASS's SM80 default): the fit finds
// the depth and the efficiencies again, from shapes 1,024-8,192 deep.
TEST(FitGemm, RecoversThePipelineDepth) {
  SystemProfile truth = Profile("dgx-h100-80gb");
  truth.calibration.matmul_efficiency = 0.8;
  truth.calibration.matmul_efficiency_fp8 = 0.7;
  truth.calibration.matmul_pipeline_depth = 256;
  const Hardware h16(truth, Precision::kBf16), h8(truth, Precision::kFp8);
  std::vector<GemmSample> sweep;
  for (double m : {2048.0, 8192.0}) {
    for (double n : {2048.0, 8192.0}) {
      for (double k : {1024.0, 2048.0, 4096.0, 8192.0}) {
        sweep.push_back({m, n, k, Precision::kBf16, h16.MatmulTime(m, n, k, 1, 2)});
        sweep.push_back({m, n, k, Precision::kFp8, h8.MatmulTime(m, n, k, 1, 1)});
      }
    }
  }
  absl::StatusOr<GemmFit> fit = FitGemm(Profile("dgx-h100-80gb"), sweep);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_EQ(fit->report.matmul_pipeline_depth, 256);
  EXPECT_NEAR(fit->report.matmul_efficiency, 0.8, 0.006);
  EXPECT_NEAR(fit->report.matmul_efficiency_fp8, 0.7, 0.006);
  EXPECT_EQ(fit->profile.calibration.matmul_pipeline_depth, 256);
}

TEST(FitGemm, H100SweepWithinTenPercentForMostShapes) {
  absl::StatusOr<std::vector<GemmSample>> s = ParseGemmCsv(Read("h100_microbench/gemm.csv"));
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->size(), 364u);
  absl::StatusOr<GemmFit> fit = FitGemm(Profile("dgx-h100-80gb"), *s);
  ASSERT_TRUE(fit.ok()) << fit.status();
  const GemmFitReport& r = fit->report;
  std::printf("H100 GEMM fit: bf16 efficiency %.3f, fp8 %.3f, tail %.2f GFLOP, launch floor %.1f us; "
              "%d of %zu within 10%% (%d above the launch floor)\n",
              r.matmul_efficiency, r.matmul_efficiency_fp8, r.matmul_half_efficiency_gflop, r.launch_floor_us,
              r.within_10_percent, r.points.size(), r.above_floor);
  int shown = 0;
  for (const GemmFitPoint& p : r.points) {
    const double ratio = p.predicted_s / p.sample.seconds;
    if (std::abs(ratio - 1) > 0.10 && shown++ < 12) {
      std::printf("  missed: %5.0f x %5.0f x %5.0f %s measured %.1f us predicted %.1f us (%+.0f%%)\n", p.sample.m,
                  p.sample.n, p.sample.k, p.sample.precision == Precision::kFp8 ? "fp8 " : "bf16",
                  1e6 * p.sample.seconds, 1e6 * p.predicted_s, 100 * (ratio - 1));
    }
  }
  // The datasheet-based defaults sit inside what the sweep says: best BF16 0.80, FP8 0.69.
  EXPECT_GT(r.matmul_efficiency, 0.5);
  EXPECT_LT(r.matmul_efficiency, 0.9);
  EXPECT_GT(r.matmul_efficiency_fp8, 0.3);
  EXPECT_LT(r.matmul_efficiency_fp8, r.matmul_efficiency);
  EXPECT_GE(r.within_10_percent, static_cast<int>(0.6 * r.points.size()));
  // The fitted H100 profile plans.
  EXPECT_TRUE(EstimateIteration(testing::Model("llama3-8b"), testing::Config(1, 1, 8, 1, 64), fit->profile).ok());
  EXPECT_FALSE(ParseGemmCsv("m,n,k,dtype,seconds\n1,2,3,int4,1e-3\n").ok());
  EXPECT_FALSE(ParseGemmCsv("m,n,seconds\n1,2,3\n").ok());
}

}  // namespace
}  // namespace paraplan
