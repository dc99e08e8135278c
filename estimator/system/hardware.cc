#include "estimator/system/hardware.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "estimator/inputs/calibration_regime.h"
#include "estimator/inputs/units.h"
#include "estimator/system/order_statistics.h"

namespace paraplan {

namespace {
double Or(double v, double fallback) { return v > 0 ? v : fallback; }

const NetworkCalibration* FindLevelCalibration(const Calibration& c, const std::string& name) {
  for (const NetworkCalibration& n : c.network) {
    if (n.level == name) return &n;
  }
  return nullptr;
}
}  // namespace

Calibration ResolvedCalibration(const SystemProfile& profile, int64_t num_gpus) {
  // Regime overrides cost a copy; most profiles have none.
  const bool scoped = num_gpus > 0 && !profile.calibration.regimes.empty();
  const Calibration regime = scoped ? CalibrationFor(profile, num_gpus) : Calibration{};
  const Calibration& c = scoped ? regime : profile.calibration;
  using D = CalibrationDefaults;
  Calibration r;
  r.matmul_efficiency = Or(c.matmul_efficiency, D::kMatmulEfficiency);
  r.matmul_efficiency_fp8 = Or(c.matmul_efficiency_fp8, r.matmul_efficiency);
  const double peak = profile.accelerator.PeakTflops(Precision::kBf16) * 1e12;
  r.matmul_half_efficiency_gflop =
      Or(c.matmul_half_efficiency_gflop, peak * r.matmul_efficiency * D::kMatmulTailUs * 1e-6 / 1e9);
  r.matmul_pipeline_depth = Or(c.matmul_pipeline_depth, D::kMatmulPipelineDepth);
  r.memory_bound_efficiency = Or(c.memory_bound_efficiency, D::kMemoryBoundEfficiency);
  for (const NetworkLevel& level : profile.network_levels) {
    NetworkCalibration n;
    n.level = level.name;
    const NetworkCalibration* given = FindLevelCalibration(c, level.name);
    n.efficiency = Or(given ? given->efficiency : 0, D::kNetworkEfficiency);
    n.latency_us = Or(given ? given->latency_us : 0, level.latency_us);
    if (given != nullptr) n.bandwidth_curve = given->bandwidth_curve;
    n.congestion = Or(given ? given->congestion : 0, 1.0);
    r.network.push_back(n);
  }
  r.overlap_efficiency = Or(c.overlap_efficiency, D::kOverlapEfficiency);
  r.iteration_overhead_s = Or(c.iteration_overhead_s, D::kIterationOverheadS);
  r.kernel_overhead_us = Or(c.kernel_overhead_us, D::kKernelOverheadUs);
  r.recompute_overhead_us = Or(c.recompute_overhead_us, D::kRecomputeOverheadUs);
  r.attention_efficiency_fwd = Or(c.attention_efficiency_fwd, D::kAttentionEfficiencyFwd);
  r.attention_efficiency_bwd = Or(c.attention_efficiency_bwd, D::kAttentionEfficiencyBwd);
  r.cudnn_attention_efficiency_fwd = Or(c.cudnn_attention_efficiency_fwd, r.attention_efficiency_fwd);
  r.cudnn_attention_efficiency_bwd = Or(c.cudnn_attention_efficiency_bwd, r.attention_efficiency_bwd);
  // The fixed work per query tile is memory traffic (the queries' and output's rows, dQ),
  // worth keys of compute in proportion to the GPU's 16-bit FLOP per byte of HBM.
  const double bw = profile.accelerator.memory_bandwidth_gbytes_per_s;
  const double intensity = bw > 0 ? profile.accelerator.PeakTflops(Precision::kBf16) * 1e3 / bw : 0;
  const double keys_scale = intensity > 0 ? intensity / D::kAttentionHalfKeysFlopsPerByte : 1.0;
  r.attention_half_keys_fwd = Or(c.attention_half_keys_fwd, D::kAttentionHalfKeysFwd * keys_scale);
  r.attention_half_keys_bwd = Or(c.attention_half_keys_bwd, D::kAttentionHalfKeysBwd * keys_scale);
  // The softmax work is the special-function units' (16 per SM and clock), worth head-
  // dimension units in proportion to the GPU's 16-bit FLOP per SM.
  const int sms = profile.accelerator.sm_count;
  const double per_sm = sms > 0 ? profile.accelerator.PeakTflops(Precision::kBf16) / sms : 0;
  const double softmax_scale = per_sm > 0 ? per_sm / D::kAttentionSoftmaxTflopsPerSm : 1.0;
  r.attention_softmax_head_dim_fwd =
      Or(c.attention_softmax_head_dim_fwd, D::kAttentionSoftmaxHeadDimFwd * softmax_scale);
  r.attention_softmax_head_dim_bwd =
      Or(c.attention_softmax_head_dim_bwd, D::kAttentionSoftmaxHeadDimBwd * softmax_scale);
  r.cudnn_attention_softmax_head_dim_fwd =
      Or(c.cudnn_attention_softmax_head_dim_fwd, D::kCudnnAttentionSoftmaxHeadDimFwd * softmax_scale);
  r.cudnn_attention_softmax_head_dim_bwd =
      Or(c.cudnn_attention_softmax_head_dim_bwd, D::kCudnnAttentionSoftmaxHeadDimBwd * softmax_scale);
  r.collective_overhead_us = Or(c.collective_overhead_us, D::kCollectiveOverheadUs);
  r.halo_host_staged = c.halo_host_staged;
  r.halo_exchange_latency_us =
      Or(c.halo_exchange_latency_us, c.halo_host_staged ? D::kHaloHostStagedLatencyUs : 0.0);
  r.host_staging_efficiency = Or(c.host_staging_efficiency, D::kHostStagingEfficiency);
  r.jpeg_decode_mpixels_per_core_s = Or(c.jpeg_decode_mpixels_per_core_s, D::kJpegDecodeMpixelsPerCoreS);
  r.hdf5_read_gbytes_per_core_s = Or(c.hdf5_read_gbytes_per_core_s, D::kHdf5ReadGbytesPerCoreS);
  r.shared_fs_files_per_s = c.shared_fs_files_per_s;  // 0 = unlimited
  r.loader_cores_per_process = c.loader_cores_per_process;  // 0 = unlimited
  r.sample_handover_gbytes_per_s = Or(c.sample_handover_gbytes_per_s, D::kSampleHandoverGbytesPerS);
  r.ep_overlap_efficiency = Or(c.ep_overlap_efficiency, D::kEpOverlapEfficiency);
  r.ep_dispatch_gbytes_per_s = c.ep_dispatch_gbytes_per_s;  // 0 = the link's rate
  r.rank_speed_spread = Or(c.rank_speed_spread, D::kRankSpeedSpread);
  r.memory_overhead_fraction = Or(c.memory_overhead_fraction, D::kMemoryOverheadFraction);
  r.expandable_segments_overhead_fraction =
      Or(c.expandable_segments_overhead_fraction, D::kExpandableSegmentsOverheadFraction);
  r.memory_overhead_gib = Or(c.memory_overhead_gib, D::kMemoryOverheadGib);
  r.regimes = profile.calibration.regimes;
  return r;
}

namespace {
std::atomic<uint64_t> next_hardware_id{1};
}  // namespace

Hardware::Hardware(const SystemProfile& profile, Precision precision, int64_t num_gpus)
    : id_(next_hardware_id.fetch_add(1, std::memory_order_relaxed)) {
  const Calibration cal = ResolvedCalibration(profile, num_gpus);
  // A power cap lowers the clocks; the job runs at the pace of its slowest GPU, the
  // expected largest of num_gpus draws of the GPUs' speed spread below the median.
  if (cal.rank_speed_spread > 0) pace_ = 1 / (1 + cal.rank_speed_spread * ExpectedMaxOfNormals(num_gpus));
  const double clock = profile.accelerator.ClockScale() * pace_;
  peak_flops_per_s_ = profile.accelerator.PeakTflops(precision) * 1e12 * clock;
  // matmul_efficiency_fp8: the share of the low-precision peak, FP8 or FP4.
  matmul_flops_per_s_ = peak_flops_per_s_ * (LowPrecisionLinears(precision) ? cal.matmul_efficiency_fp8
                                                                          : cal.matmul_efficiency);
  // Only linear layers run in FP8 (Transformer Engine); everything else stays 16-bit.
  const Precision other = LowPrecisionLinears(precision) ? Precision::kBf16 : precision;
  const double other_peak = profile.accelerator.PeakTflops(other) * 1e12 * clock;
  batched_matmul_flops_per_s_ = other_peak * cal.matmul_efficiency;
  attention_fwd_flops_per_s_ = other_peak * cal.attention_efficiency_fwd;
  attention_bwd_flops_per_s_ = other_peak * cal.attention_efficiency_bwd;
  cudnn_attention_fwd_flops_per_s_ = other_peak * cal.cudnn_attention_efficiency_fwd;
  cudnn_attention_bwd_flops_per_s_ = other_peak * cal.cudnn_attention_efficiency_bwd;
  attention_half_keys_fwd_ = cal.attention_half_keys_fwd;
  attention_half_keys_bwd_ = cal.attention_half_keys_bwd;
  attention_softmax_head_dim_fwd_ = cal.attention_softmax_head_dim_fwd;
  attention_softmax_head_dim_bwd_ = cal.attention_softmax_head_dim_bwd;
  cudnn_attention_softmax_head_dim_fwd_ = cal.cudnn_attention_softmax_head_dim_fwd;
  cudnn_attention_softmax_head_dim_bwd_ = cal.cudnn_attention_softmax_head_dim_bwd;
  kernel_gap_s_ = CalibrationDefaults::kGraphKernelUs * 1e-6;
  collective_overhead_s_ = cal.collective_overhead_us * 1e-6;
  sm_count_ = std::max(0, profile.accelerator.sm_count);
  fp8_any_layout_ = profile.accelerator.peak_tflops_fp4 > 0;
  // The tail is a time; scale the half-efficiency size with this precision's rate.
  const double bf16_rate =
      profile.accelerator.PeakTflops(Precision::kBf16) * 1e12 * cal.matmul_efficiency;
  const double tail_s = bf16_rate > 0 ? cal.matmul_half_efficiency_gflop * 1e9 / bf16_rate : 0;
  half_efficiency_flops_ = tail_s * matmul_flops_per_s_;
  // The same bytes of K a tile's pipeline holds: twice the elements in FP8, four times in FP4.
  pipeline_depth16_ = cal.matmul_pipeline_depth;
  pipeline_depth_ = pipeline_depth16_ * (precision == Precision::kFp4 ? 4 : LowPrecisionLinears(precision) ? 2 : 1);
  hbm_bytes_per_s_ =
      profile.accelerator.memory_bandwidth_gbytes_per_s * 1e9 * cal.memory_bound_efficiency;
  pcie_bytes_per_s_ = profile.host.pcie_gbytes_per_s * 1e9;
  halo_host_staged_ = cal.halo_host_staged;
  for (const LayerTiming& t : profile.layer_timings) {
    measured_layers_[t.workload + '\0' + t.layer] = {t.forward_s_per_sample, t.backward_s_per_sample};
  }
  halo_latency_s_ = cal.halo_exchange_latency_us * 1e-6;
  host_staging_bytes_per_s_ = pcie_bytes_per_s_ * cal.host_staging_efficiency;
  jpeg_pixels_per_core_s_ = cal.jpeg_decode_mpixels_per_core_s * 1e6;
  hdf5_bytes_per_core_s_ = cal.hdf5_read_gbytes_per_core_s * 1e9;
  shared_fs_files_per_s_ = cal.shared_fs_files_per_s;
  loader_cores_per_process_ = cal.loader_cores_per_process;
  sample_handover_bytes_per_s_ = cal.sample_handover_gbytes_per_s * 1e9;
  overlap_efficiency_ = std::clamp(cal.overlap_efficiency, 0.0, 1.0);
  ep_overlap_efficiency_ = std::clamp(cal.ep_overlap_efficiency, 0.0, 1.0);
  ep_dispatch_bytes_per_s_ = cal.ep_dispatch_gbytes_per_s * 1e9;
  iteration_overhead_s_ = cal.iteration_overhead_s;
  kernel_overhead_s_ = cal.kernel_overhead_us * 1e-6;
  recompute_overhead_s_ = cal.recompute_overhead_us * 1e-6;
  memory_overhead_fraction_ = cal.memory_overhead_fraction;
  expandable_segments_overhead_fraction_ = cal.expandable_segments_overhead_fraction;
  memory_overhead_bytes_ = cal.memory_overhead_gib * kGiB;
  capacity_bytes_ = profile.accelerator.memory_gib * kGiB;
  gpus_per_node_ = std::max(1, profile.gpus_per_node);
  host_capacity_bytes_per_gpu_ = profile.host.memory_gib * kGiB / gpus_per_node_;
  storage_bytes_per_s_per_gpu_ = profile.storage.read_gbytes_per_s * 1e9 / gpus_per_node_;
  for (size_t i = 0; i < profile.network_levels.size(); ++i) {
    const NetworkLevel& l = profile.network_levels[i];
    NetworkRates r;
    r.domain_size = static_cast<int>(std::min<int64_t>(ResolvedDomainSize(profile, i), 1 << 30));
    const double oversub = l.oversubscription >= 1 ? l.oversubscription : 1;
    r.oversubscription = oversub;
    r.rail_optimized = l.rail_optimized;
    r.torus_dims = l.torus_dims;
    r.global_links_per_group = l.global_links_per_group;
    r.global_link_bytes_per_s = l.global_link_gbytes_per_s * 1e9 * cal.network[i].efficiency /
                                std::max(1.0, cal.network[i].congestion);
    r.nominal_bytes_per_s = l.bandwidth_gbytes_per_s * 1e9 / oversub / std::max(1.0, cal.network[i].congestion);
    r.bytes_per_s = r.nominal_bytes_per_s * cal.network[i].efficiency;
    for (const BandwidthPoint& b : cal.network[i].bandwidth_curve) {
      if (b.bytes > 0 && b.efficiency > 0) r.curve.emplace_back(std::log2(b.bytes), b.efficiency);
    }
    std::sort(r.curve.begin(), r.curve.end());
    r.latency_s = cal.network[i].latency_us * 1e-6;
    r.topology = l.topology;
    r.in_network_reduction = l.in_network_reduction;
    levels_.push_back(r);
  }
}

const std::pair<double, double>* Hardware::MeasuredLayer(const std::string& workload,
                                                        const std::string& layer) const {
  if (measured_layers_.empty()) return nullptr;
  const auto it = measured_layers_.find(workload + '\0' + layer);
  return it == measured_layers_.end() ? nullptr : &it->second;
}

double NetworkRates::CurveBytesPerS(double message_bytes) const {
  const double x = std::log2(std::max(1.0, message_bytes));
  if (x <= curve.front().first) return nominal_bytes_per_s * curve.front().second;
  if (x >= curve.back().first) return nominal_bytes_per_s * curve.back().second;
  const auto hi = std::lower_bound(curve.begin(), curve.end(), std::make_pair(x, 0.0));
  const auto lo = hi - 1;
  const double w = (x - lo->first) / (hi->first - lo->first);
  return nominal_bytes_per_s * (lo->second + w * (hi->second - lo->second));
}

double Hardware::WaveUtilization(double tiles) const {
  if (sm_count_ <= 0 || tiles <= 0) return 1;
  const double waves = std::ceil(tiles / sm_count_);
  return tiles / (waves * sm_count_);
}

namespace {
// Threadblock tiles of CUTLASS's 16-bit tensor-core GEMM kernels, the same eight on SM70
// and SM80 (python/cutlass_library/generator.py, GenerateSM70_TensorOp_884 and
// GenerateSM80_TensorOp_16816: 256x128, 128x256, 256x64, 64x256, 128x128, 128x64,
// 64x128, 64x64). A smaller tile reuses each operand less: its rate relative to 128x128
// is taken as its arithmetic intensity Tm*Tn/(Tm+Tn) over 128x128's (64), capped at 1
// (256x64: 0.8). cuBLAS picks the best of them.
struct Tile {
  double m, n, relative_rate;
};
constexpr Tile kTiles[] = {{128, 128, 1.0}, {256, 128, 1.0},       {128, 256, 1.0},       {256, 64, 0.8},
                           {64, 256, 0.8},  {128, 64, 2.0 / 3.0}, {64, 128, 2.0 / 3.0}, {64, 64, 0.5}};
// Split-K applies to deep, narrow GEMMs (depth at least 4x the larger output side), in
// slices of at least 256 (four 64-deep mainloop stages of work per slice).
constexpr double kSplitKDepthRatio = 4;
constexpr double kMinSplitDepth = 256;
}  // namespace

// The planner asks for the same GEMMs again and again (every recompute, SP and flash
// setting of a shape has the same linears): a bounded, direct-mapped memo per thread of
// the last answers, keyed by everything MatmulTimeAt reads (the Hardware's identity, its
// rate and the GEMM). 1,024 entries of 64 bytes; a colliding entry is overwritten.
struct GemmMemo {
  struct Entry {
    uint64_t hw = 0;
    double rate = 0, m = 0, n = 0, k = 0, batch = 0, bytes = 0, seconds = 0;
  };
  static constexpr size_t kSize = 1024;
  Entry entries[kSize];
  static size_t Slot(uint64_t hw, double rate, double m, double n, double k, double batch, double bytes) {
    uint64_t h = hw;
    for (double v : {rate, m, n, k, batch, bytes}) {
      uint64_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      h = (h ^ bits) * 0x9E3779B97F4A7C15ull;  // Fibonacci hashing (Knuth, TAOCP 6.4)
    }
    return static_cast<size_t>(h >> 54);  // the top 10 bits: 0..1023
  }
};

double Hardware::MatmulTimeAt(double rate, double m, double n, double k, double batch,
                              double operand_bytes) const {
  thread_local GemmMemo memo;
  GemmMemo::Entry& e = memo.entries[GemmMemo::Slot(id_, rate, m, n, k, batch, operand_bytes)];
  if (e.hw == id_ && e.rate == rate && e.m == m && e.n == n && e.k == k && e.batch == batch &&
      e.bytes == operand_bytes) {
    return e.seconds;
  }
  e = {id_, rate, m, n, k, batch, operand_bytes, MatmulTimeUncached(rate, m, n, k, batch, operand_bytes)};
  return e.seconds;
}

double Hardware::MatmulTimeUncached(double rate, double m, double n, double k, double batch,
                                    double operand_bytes) const {
  const double flops = 2.0 * m * n * k * batch;
  if (flops <= 0) return 0;
  // The tail is a fixed time per GEMM (launch, last partial tile pipeline drain).
  const double tail_s = half_efficiency_flops_ / matmul_flops_per_s_;
  // Small-K inefficiency: a tile's fixed work (its pipeline's fill, its epilogue) as
  // K-elements at this rate (pipeline_depth_, wider for FP8 / FP4 linears).
  const double fixed = rate == matmul_flops_per_s_ ? pipeline_depth_ : pipeline_depth16_;
  // One kernel: `util` of the SMs' work useful, K cut into `split` slices.
  auto seconds = [&](double util, double split) {
    const double slice = k / split;
    const double depth = slice > 0 ? (slice + fixed) / slice : 1;
    const double compute_s = flops * depth / (rate * util) + tail_s;
    const double bytes = operand_bytes + (split > 1 ? 2 * split * m * n * batch * 4 : 0);  // + fp32 partials
    return std::max(compute_s, bytes / hbm_bytes_per_s_) + kernel_gap_s_;
  };
  if (sm_count_ <= 0) return seconds(1, 1);
  // cuBLAS runs the fastest of the tilings, each with or without split-K.
  double best = std::numeric_limits<double>::infinity();
  for (const Tile& t : kTiles) {
    const double tiles = std::ceil(m / t.m) * std::ceil(n / t.n) * batch;
    // A tile past the operand's edge still runs all its MMAs (predicated loads):
    // the useful share of the tiles' area.
    const double filled = m * n / (std::ceil(m / t.m) * t.m * std::ceil(n / t.n) * t.n);
    best = std::min(best, seconds(WaveUtilization(tiles) * t.relative_rate * filled, 1));
    // Split-K (CUTLASS "parallel split-K", cuBLAS / cuDNN weight gradients): a GEMM
    // whose output tiles leave SMs idle and whose depth dwarfs its output slices K
    // across them, each slice at least kMinSplitDepth deep, and reduces the fp32
    // partial products in a second pass.
    if (tiles < sm_count_ && k >= kSplitKDepthRatio * std::max(m, n)) {
      const double split = std::max(1.0, std::min(std::floor(sm_count_ / tiles), std::floor(k / kMinSplitDepth)));
      if (split > 1) best = std::min(best, seconds(WaveUtilization(tiles * split) * t.relative_rate * filled, split));
    }
  }
  return best;
}

double Hardware::MatmulTime(double m, double n, double k, double batch,
                            double bytes_per_element) const {
  return MatmulTimeAt(matmul_flops_per_s_, m, n, k, batch, (m * k + k * n + m * n) * batch * bytes_per_element);
}

double Hardware::BatchedMatmulTime(double m, double n, double k, double batch,
                                   double bytes_per_element) const {
  return MatmulTimeAt(batched_matmul_flops_per_s_, m, n, k, batch,
                      (m * k + k * n + m * n) * batch * bytes_per_element);
}

double Hardware::GroupedMatmulTime(double m, double n, double k, double groups, double bytes_per_element,
                                   bool sixteen_bit, double output_bytes) const {
  constexpr double kStreams = 4;
  auto gemm = [&](double b) {
    const double bytes = ((m * k + k * n) * bytes_per_element + m * n * output_bytes) * b;
    return MatmulTimeAt(sixteen_bit ? batched_matmul_flops_per_s_ : matmul_flops_per_s_, m, n, k, b, bytes);
  };
  if (groups <= kStreams) return gemm(groups);
  const double rounds = std::floor(groups / kStreams);
  const double rest = groups - rounds * kStreams;
  return rounds * gemm(kStreams) + (rest > 0 ? gemm(rest) : 0);
}

double Hardware::ConvTime(double m, double n, double k, double batch, double bytes) const {
  return MatmulTimeAt(matmul_flops_per_s_, m, n, k, batch, bytes);
}

double Hardware::MemoryTime(double bytes) const {
  if (bytes <= 0) return 0;
  return bytes / hbm_bytes_per_s_ + kernel_gap_s_;
}

}  // namespace paraplan
