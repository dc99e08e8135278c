#include "estimator/system/hardware.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "estimator/testing/test_util.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::Profile;

// Kernels also pay a 1 us GPU-side gap (CUDA-graph replay cost, launch.csv).
constexpr double kGap = 1e-6;

// A collective beside other work costs what outlasts that work, or 1 - overlap_efficiency
// of the stretch they share (its kernels' SMs: docs/microbench/h100_overlap_interference.jsonl),
// whichever is larger.
TEST(Hardware, CommunicationBesideWorkCostsItsSmShare) {
  SystemProfile p = Profile("dgx-a100-80gb");
  p.calibration.overlap_efficiency = 0.8;
  const Hardware hw(p, Precision::kBf16);
  EXPECT_NEAR(hw.ExposedBeside(10e-3, 4e-3), 6e-3, 1e-15);    // outlasts it by 6 ms
  EXPECT_NEAR(hw.ExposedBeside(4e-3, 10e-3), 0.8e-3, 1e-15);  // 4 ms shared, 20 % of it
  EXPECT_NEAR(hw.ExposedBeside(10e-3, 10e-3), 2e-3, 1e-15);
  EXPECT_NEAR(hw.ExposedBeside(9e-3, 8e-3), 1.6e-3, 1e-15);   // 20 % of 8 ms > the 1 ms it outlasts
  EXPECT_EQ(hw.ExposedBeside(0, 10e-3), 0);
  EXPECT_EQ(hw.ExposedBeside(-1, -1), 0);
  // A collective holding a sixth of the SMs (one rank per node) costs a sixth of that.
  EXPECT_NEAR(hw.ExposedBeside(4e-3, 10e-3, 1.0 / 6), 0.8e-3 / 6, 1e-15);
  EXPECT_NEAR(hw.ExposedBeside(10e-3, 4e-3, 1.0 / 6), 6e-3, 1e-15);  // what outlasts stays
  p.calibration.overlap_efficiency = 1.0;
  const Hardware free_overlap(p, Precision::kBf16);
  EXPECT_EQ(free_overlap.ExposedBeside(4e-3, 10e-3), 0);
}

TEST(Hardware, LargeMatmulRunsAtCalibratedPeak) {
  SystemProfile p = Profile("dgx-a100-80gb");
  p.accelerator.sm_count = 0;  // no wave quantisation
  p.calibration.matmul_efficiency = 0.5;
  p.calibration.matmul_half_efficiency_gflop = 1e-9;
  const Hardware hw(p, Precision::kBf16);
  // 2 * 8192^3 FLOPs at 0.5 * 312 TFLOP/s = 7.05 ms, times the small-K factor
  // (8192 + 64) / 8192 of the tiles' 64-deep prologue.
  EXPECT_NEAR(hw.MatmulTime(8192, 8192, 8192, 1, 2),
              2.0 * 8192 * 8192 * 8192 / 156e12 * (8192 + 64) / 8192 + kGap, 1e-9);
  // A 64-deep GEMM runs at half rate: 64 / (64 + 64).
  EXPECT_NEAR(hw.MatmulTime(8192, 8192, 64, 1, 2), 2.0 * 8192 * 8192 * 64 / 156e12 * 2 + kGap, 1e-9);
}

TEST(Hardware, PartialLastWaveCostsAFullWave) {
  SystemProfile p = Profile("dgx-a100-80gb");  // 108 SMs
  p.calibration.matmul_efficiency = 0.5;
  p.calibration.matmul_half_efficiency_gflop = 1e-9;
  const Hardware hw(p, Precision::kBf16);
  EXPECT_NEAR(hw.WaveUtilization(108), 1.0, 1e-12);
  EXPECT_NEAR(hw.WaveUtilization(112), 112.0 / 216, 1e-12);
  // 1024 x 1536 outputs = 8 x 12 = 96 tiles of 128 x 128: one wave on 96 of 108 SMs.
  const double k = 8192, depth = (k + 64) / k;
  EXPECT_NEAR(hw.MatmulTime(1024, 1536, k, 1, 2), 2 * 1024 * 1536 * k * depth / 156e12 / (96.0 / 108) + kGap,
              1e-9);
  // 1024 x 1792 = 112 tiles: 4 past one wave, so two waves — as long as 216 tiles
  // (1024 x 3456) take; smaller tiles (128x64: 224 tiles in 3 waves at 2/3 the rate;
  // 64x64: 448 tiles in 5 waves at half) do no better.
  EXPECT_NEAR(hw.MatmulTime(1024, 1792, k, 1, 2), 2 * 1024 * 3456 * k * depth / 156e12 + kGap, 1e-9);
}

// A convolution's weight gradient: 576 x 64 outputs (3x3 x 64 channels, 64 filters)
// summed over 32 x 56 x 56 = 100,352 positions. A tile past the outputs' edge runs all its
// MMAs, so 256 x 64 tiles fill 576 of 768 rows (75 %) at 0.8 the rate (128 x 64: 90 % at
// 2/3; 128 x 128: 45 %). Their 3 tiles would leave 105 of 108 SMs idle; split-K cuts the
// depth into floor(108 / 3) = 36 slices of 2,788, so 108 tiles fill one wave, each slice
// paying the 64-deep prologue (128 x 64 tiles: 5 x 21 slices, 105 / 108 x 2/3 x 0.9 =
// 0.583 < 0.8 x 0.75 = 0.6). The operands are the tensors (4 MB here) and the partial
// sums 36 x 576 x 64 x 4 B twice: compute-bound.
TEST(Hardware, DeepNarrowGemmsSplitK) {
  SystemProfile p = Profile("dgx-a100-80gb");
  p.calibration.matmul_efficiency = 0.5;
  p.calibration.matmul_half_efficiency_gflop = 1e-9;
  const Hardware hw(p, Precision::kBf16);
  const double m = 576, n = 64, k = 100352, slice = k / 36;
  const double flops = 2 * m * n * k;
  EXPECT_NEAR(hw.ConvTime(m, n, k, 1, 4e6), flops * (slice + 64) / slice / 156e12 / (0.8 * 0.75) + kGap, 1e-9);
  // Without split-K (a shallow GEMM of the same output, k below 4 x 576) the best tiling
  // is 9 full tiles of 64 x 64 at half the rate: 4.5 / 108 of the SMs' work (64 x 128
  // and 128 x 64 would fill half and 90 % of theirs at 2/3: 3 / 108 and 3 / 108; 256 x 64
  // 75 % of 3 at 0.8: 1.8 / 108).
  const double shallow = 2000;
  EXPECT_NEAR(hw.ConvTime(m, n, shallow, 1, 1e3),
              2 * m * n * shallow * (shallow + 64) / shallow / 156e12 / (4.5 / 108) + kGap, 1e-9);
}

// More rows never run faster: a grouped GEMM's time never falls as its experts' tokens
// grow (the tiles, each with or without split-K, all pay for the rows past the edge, and
// split-K's partial sums count among its bytes), where counting partial tiles as full
// made 288 tokens an expert 25 % faster than 256 on A100 (one wave either way).
TEST(Hardware, PartialTilesCostWholeTiles) {
  SystemProfile p = Profile("dgx-a100-80gb");
  p.calibration.matmul_half_efficiency_gflop = 1e-9;
  const Hardware hw(p, Precision::kBf16);
  const double n = 1024, k = 7168;
  EXPECT_GE(hw.GroupedMatmulTime(288, n, k, 4, 2, true, 2), hw.GroupedMatmulTime(256, n, k, 4, 2, true, 2));
  for (const double groups : {4.0, 256.0}) {
    double last = 0;
    for (double m = 8; m <= 2048; m += 8) {
      const double t = hw.GroupedMatmulTime(m, n, k, groups, 2, true, 2);
      EXPECT_GE(t, last * (1 - 1e-12)) << m << " tokens per expert, " << groups << " experts";
      last = t;
    }
  }
}

// calibration.matmul_pipeline_depth: a GEMM of depth k runs at k / (k + depth) of the
// efficiency; FP8 linears take twice the K-elements (the same bytes), the attention's
// 16-bit GEMMs beside them do not.
TEST(Hardware, PipelineDepthSetsTheSmallKRate) {
  SystemProfile p = Profile("dgx-h100-80gb");
  p.accelerator.sm_count = 0;
  p.calibration.matmul_half_efficiency_gflop = 1e-9;
  p.calibration.matmul_pipeline_depth = 256;
  const Hardware bf16(p, Precision::kBf16), fp8(p, Precision::kFp8);
  const double m = 4096, n = 4096, k = 1024, flops = 2 * m * n * k;
  EXPECT_NEAR(bf16.MatmulTime(m, n, k, 1, 2), flops * (k + 256) / k / (989e12 * 0.69) + kGap, 1e-9);
  EXPECT_NEAR(fp8.MatmulTime(m, n, k, 1, 2), flops * (k + 512) / k / (1979e12 * 0.62) + kGap, 1e-9);
  EXPECT_NEAR(fp8.BatchedMatmulTime(m, n, k, 1, 2), bf16.MatmulTime(m, n, k, 1, 2), 1e-12);
}

TEST(Hardware, Fp8SpeedsUpLinearsOnly) {
  SystemProfile p = Profile("dgx-h100-80gb");
  p.accelerator.sm_count = 0;
  p.calibration.matmul_half_efficiency_gflop = 1e-9;
  const Hardware fp8(p, Precision::kFp8);
  const Hardware bf16(p, Precision::kBf16);
  // 1,979 TFLOP/s dense at the profile's FP8 efficiency 0.62 vs 989 at 0.69; an FP8 tile's
  // fixed work is 128 K-elements deep (the same bytes as 64 of 16 bits).
  const double flops = 2.0 * 8192 * 8192 * 8192;
  EXPECT_NEAR(fp8.MatmulTime(8192, 8192, 8192, 1, 2), flops * (8192 + 128) / 8192 / (1979e12 * 0.62) + kGap, 1e-9);
  EXPECT_NEAR(bf16.MatmulTime(8192, 8192, 8192, 1, 2), flops * (8192 + 64) / 8192 / (989e12 * 0.69) + kGap, 1e-9);
  // Attention score GEMMs and fused attention stay on the 16-bit tensor cores.
  EXPECT_NEAR(fp8.BatchedMatmulTime(8192, 8192, 8192, 1, 2), bf16.MatmulTime(8192, 8192, 8192, 1, 2), 1e-12);
  EXPECT_NEAR(fp8.attention_fwd_flops_per_s(), 989e12 * 0.35, 1e3);
  EXPECT_NEAR(fp8.attention_bwd_flops_per_s(), 989e12 * 0.33, 1e3);
}

TEST(Hardware, SmallMatmulsAreLessEfficient) {
  const Hardware hw(Profile("dgx-a100-80gb"), Precision::kBf16);
  const double big = 2.0 * 8192 * 8192 * 8192 / hw.MatmulTime(8192, 8192, 8192, 1, 2);
  const double small = 2.0 * 256 * 256 * 256 / hw.MatmulTime(256, 256, 256, 1, 2);
  EXPECT_LT(small, 0.5 * big);
}

// The built-in B200's BF16 GEMMs against an independent measurement: OpenXLA's matmul
// performance table for sm_100 (xla/backends/gpu/cost_model/matmul_interpolator_data.h,
// generated by timing cuBLAS GEMMs on a B200; TFLOP/s, batch x m x n x k). Its clocks are
// a benchmark's, not a training run's sustained ones (its sm_90 rows read 1.18-1.25x the
// H100 profile's sustained rate), so the bar is the shape dependence: tiles, waves and
// small-N GEMMs within 0.8-1.15 of what the B200 ran.
TEST(Hardware, B200Bf16GemmsFollowOpenXlasTable) {
  const Hardware hw(Profile("dgx-b200-180gb"), Precision::kBf16);
  struct Row {
    double b, m, n, k, tflops;
  };
  const Row rows[] = {{1, 4096, 4096, 4096, 1416.9}, {1, 4096, 2048, 4096, 1343.5}, {1, 4096, 1024, 4096, 1204.9},
                      {1, 4096, 512, 4096, 991.5},   {1, 4096, 256, 4096, 645.1},   {1, 4096, 4096, 2048, 1277.8},
                      {1, 256, 4096, 4096, 651.4},   {1, 256, 2048, 4096, 394.1},   {2, 256, 4096, 4096, 993.1},
                      {4, 4096, 4096, 4096, 1670.5}, {4, 4096, 2048, 4096, 1465.7}, {4, 4096, 1024, 4096, 1411.9}};
  for (const Row& r : rows) {
    const double model = 2 * r.b * r.m * r.n * r.k / hw.MatmulTime(r.m, r.n, r.k, r.b, 2) / 1e12;
    EXPECT_GT(model / r.tflops, 0.8) << r.b << " x " << r.m << " x " << r.n << " x " << r.k;
    EXPECT_LT(model / r.tflops, 1.15) << r.b << " x " << r.m << " x " << r.n << " x " << r.k;
  }
}

// Expert GEMMs against one H100 (scripts/microbench/grouped_gemm.py, 320 groups: five
// MoE models' expert FFNs, 4 and 16 local experts, 64-8,192 tokens per expert, forward
// and weight-gradient GEMMs, run as Transformer Engine runs them: 4 streams, replayed
// from a CUDA graph so that the GPU's time alone is timed). Measured at boost clock
// while the profile's efficiency is the sustained one, so the bar is the spread.
TEST(Hardware, GroupedExpertGemmsFollowAnH100) {
  const Hardware hw(Profile("dgx-h100-80gb"), Precision::kBf16);
  std::ifstream in(std::string(PARAPLAN_MICROBENCH_DIR) + "/h100_grouped_gemm.csv");
  ASSERT_TRUE(in.good());
  std::string line;
  std::getline(in, line);
  std::vector<double> ratios;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::vector<std::string> f;
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    ASSERT_EQ(f.size(), 10u) << line;
    if (f[7] != "streams4_graph") continue;
    const double predicted =
        hw.GroupedMatmulTime(std::stod(f[4]), std::stod(f[5]), std::stod(f[6]), std::stod(f[1]), 2, false, 2);
    ratios.push_back(predicted / std::stod(f[8]));
  }
  ASSERT_EQ(ratios.size(), 320u);
  std::sort(ratios.begin(), ratios.end());
  EXPECT_NEAR(ratios[ratios.size() / 2], 1.0, 0.1);
  EXPECT_GT(ratios[ratios.size() / 10], 0.75);   // 10th percentile (0.82 when recorded)
  EXPECT_LT(ratios[ratios.size() * 9 / 10], 1.25);  // 90th (1.13)
}

// Six local experts run as a round of four concurrent GEMMs, then a round of two.
TEST(Hardware, GroupedGemmsRunInRoundsOfFourStreams) {
  const Hardware hw(Profile("dgx-h100-80gb"), Precision::kBf16);
  EXPECT_DOUBLE_EQ(hw.GroupedMatmulTime(512, 1536, 4096, 6, 2, false, 2),
                   hw.MatmulTime(512, 1536, 4096, 4, 2) + hw.MatmulTime(512, 1536, 4096, 2, 2));
  EXPECT_DOUBLE_EQ(hw.GroupedMatmulTime(512, 1536, 4096, 3, 2, false, 2), hw.MatmulTime(512, 1536, 4096, 3, 2));
}

// A weight-gradient GEMM that accumulates into an fp32 buffer reads and writes it: for
// four experts of Qwen3-235B's fc1 at 256 tokens each (4096 x 3072 outputs, K = 256) the
// buffer's 8 bytes an element dwarf the 25.8 GFLOP: 4 x (4096 x 256 + 256 x 3072) x 2 +
// 4 x 4096 x 3072 x 8 = 417.3 MB at 3,350 GB/s x 0.70 = 178 us plus the 1 us gap, where
// writing 16-bit outputs moves 115.7 MB (the GEMM as a forward one).
TEST(Hardware, AccumulatingWeightGradientsMoveTheirBuffer) {
  const Hardware hw(Profile("dgx-h100-80gb"), Precision::kBf16);
  const double fp32 = 4 * (4096.0 * 256 + 256.0 * 3072) * 2 + 4 * 4096.0 * 3072 * 8;
  ASSERT_NEAR(fp32, 417.3e6, 0.1e6);
  EXPECT_NEAR(hw.GroupedMatmulTime(4096, 3072, 256, 4, 2, false, 8), fp32 / (3350e9 * 0.70) + 1e-6, 1e-9);
  EXPECT_DOUBLE_EQ(hw.GroupedMatmulTime(4096, 3072, 256, 4, 2, false, 2), hw.MatmulTime(4096, 3072, 256, 4, 2));
}

// MatmulTime remembers its last answers per thread: a Hardware built later (perhaps at
// the same address) from another profile must not read the first one's.
TEST(Hardware, GemmMemoNeverCrossesProfiles) {
  SystemProfile a = Profile("dgx-h100-80gb");
  SystemProfile b = a;
  b.accelerator.sm_count = 100;
  b.calibration.matmul_efficiency = 0.5;
  double first = 0, second = 0;
  for (int i = 0; i < 2; ++i) {
    const Hardware hw(i == 0 ? a : b, Precision::kBf16);
    (i == 0 ? first : second) = hw.MatmulTime(4096, 1536, 4096, 4, 2);
    EXPECT_DOUBLE_EQ(hw.MatmulTime(4096, 1536, 4096, 4, 2), i == 0 ? first : second);  // the memo's answer
  }
  EXPECT_GT(second, first * 1.2);
}

TEST(Hardware, MemoryBoundOpsRunAtHbmRate) {
  SystemProfile p = Profile("dgx-a100-80gb");
  p.calibration.memory_bound_efficiency = 1.0;
  const Hardware hw(p, Precision::kBf16);
  EXPECT_NEAR(hw.MemoryTime(2039e9), 1.0 + kGap, 1e-9);  // 2,039 GB at 2,039 GB/s
}

TEST(Hardware, Fp8FallsBackWhenUnsupported) {
  const SystemProfile a100 = Profile("dgx-a100-80gb");
  EXPECT_EQ(a100.accelerator.PeakTflops(Precision::kFp8), 312);
  EXPECT_EQ(Profile("dgx-h100-80gb").accelerator.PeakTflops(Precision::kFp8), 1979);
}

// A power cap below the rated power lowers the sustained clock by the cube root of the
// ratio of the power above the idle draw (dynamic power ~ f V^2, V ~ f; the static part
// does not follow the clock): an H100 (idle 75 W) held to 350 of its 700 W has 275 of
// 625 W to spend and runs its GEMMs at (0.44)^(1/3) = 0.761 of the rate (0.794 if the
// whole draw followed the clock); memory bandwidth holds; the board draws the cap while
// busy. A profile stating no idle draw takes the whole power as following the clock.
TEST(Hardware, PowerLimitLowersTheClocks) {
  SystemProfile p = Profile("dgx-h100-80gb");
  ASSERT_EQ(p.accelerator.idle_power_w, 75);
  const Hardware rated(p, Precision::kBf16);
  p.accelerator.power_limit_w = 350;
  const Hardware capped(p, Precision::kBf16);
  EXPECT_NEAR(capped.peak_flops_per_s() / rated.peak_flops_per_s(), 0.7606, 1e-4);
  p.accelerator.idle_power_w = 0;
  EXPECT_NEAR(p.accelerator.ClockScale(), std::cbrt(0.5), 1e-12);
  p.accelerator.idle_power_w = 75;
  EXPECT_DOUBLE_EQ(capped.hbm_bytes_per_s(), rated.hbm_bytes_per_s());
  EXPECT_DOUBLE_EQ(p.accelerator.BusyPowerW(), 350);
  p.accelerator.power_limit_w = 900;  // above the rated power: no effect
  EXPECT_DOUBLE_EQ(p.accelerator.ClockScale(), 1);
  EXPECT_DOUBLE_EQ(p.accelerator.BusyPowerW(), 700);
}

// A job runs at its slowest GPU's pace. With a spread of sigma = 0.01 of the median GPU's
// speed (Sinha et al.'s HPC clusters), 1,024 GPUs wait for the expected largest of 1,024
// normal draws, 3.248 sigma (the integral, order_statistics_test): compute rates /
// 1.03248; one GPU, or no GPU count (microbenchmarks), runs at the median GPU's rate; HBM
// does not move. Unstated, there is no spread.
TEST(Hardware, AJobRunsAtItsSlowestGpusPace) {
  SystemProfile p = Profile("dgx-a100-80gb");
  EXPECT_DOUBLE_EQ(Hardware(p, Precision::kBf16, 1024).matmul_flops_per_s(),
                   Hardware(p, Precision::kBf16, 1).matmul_flops_per_s());
  p.calibration.rank_speed_spread = 0.01;
  const Hardware alone(p, Precision::kBf16);
  const Hardware one(p, Precision::kBf16, 1);
  const Hardware wide(p, Precision::kBf16, 1024);
  EXPECT_DOUBLE_EQ(one.matmul_flops_per_s(), alone.matmul_flops_per_s());
  EXPECT_NEAR(wide.matmul_flops_per_s() / one.matmul_flops_per_s(), 1 / 1.032482, 3e-4);
  EXPECT_NEAR(wide.peak_flops_per_s() / one.peak_flops_per_s(), 1 / 1.032482, 3e-4);
  EXPECT_DOUBLE_EQ(wide.hbm_bytes_per_s(), one.hbm_bytes_per_s());
  p.calibration.rank_speed_spread = 0.03;  // a cluster with throttling nodes
  const Hardware spread(p, Precision::kBf16, 1024);
  EXPECT_NEAR(spread.matmul_flops_per_s() / one.matmul_flops_per_s(), 1 / (1 + 0.03 * 3.2482), 6e-4);
}

}  // namespace
}  // namespace paraplan
