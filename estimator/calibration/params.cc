#include "estimator/calibration/params.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "estimator/inputs/calibration_regime.h"
#include "estimator/system/hardware.h"

namespace paraplan {

namespace {

// The field a parameter's name designates (calibration_regime.h knows the names).
std::function<double&(Calibration&)> Field(const std::string& name) {
  return [name](Calibration& c) -> double& { return *CalibrationField(c, name); };
}

// A log-coordinate parameter with physical bounds [lower, upper].
CalibrationParam Ratio(std::string name, double lower, double upper, std::string acts_on = "") {
  CalibrationParam p;
  p.ref = Field(name);
  p.name = std::move(name);
  p.lower = lower;
  p.upper = upper;
  p.acts_on = std::move(acts_on);
  return p;
}

// The compute rates and the overlap of communication with compute.
void AddComputeParams(const SystemProfile& base, std::vector<CalibrationParam>* p) {
  // Large 16-bit GEMMs reach 0.80 of the dense peak at best on an H100 (shared/data/
  // h100_microbench gemm.csv) and ~0.85 at boost clock on an A100 (hardware.h); below
  // 0.3 a "GEMM" is no longer compute-bound. 0.95 leaves room for a faster library.
  p->push_back(Ratio(
      "matmul_efficiency", 0.3, 0.95));
  // FP8 GEMMs reach 0.69 of the FP8 peak at best on an H100 (gemm.csv); same range.
  p->push_back(Ratio(
      "matmul_efficiency_fp8", 0.3, 0.95,
      "FP8 workloads"));
  // STREAM reaches ~0.9 of HBM peak; training's strided, reducing and RNG kernels less,
  // small tensors far less (h100_microbench membound.csv).
  p->push_back(Ratio(
      "memory_bound_efficiency", 0.3, 0.95));
  // The small-GEMM half-efficiency size is a kernel's fixed tail expressed as work at
  // the default matmul rate: launch latency (3-5 us) plus a partial last wave, 1-30 us.
  const double peak = base.accelerator.PeakTflops(Precision::kBf16) * 1e12;
  const double rate_gflop_per_us = peak * CalibrationDefaults::kMatmulEfficiency * 1e-6 / 1e9;
  p->push_back(Ratio(
      "matmul_half_efficiency_gflop", 1.0 * rate_gflop_per_us, 30.0 * rate_gflop_per_us,
      "small GEMMs (small hidden sizes, high TP, short micro-batches)"));
  // Share of overlappable communication hidden behind compute: below 0.2 the overlap is
  // effectively off; 1 is perfect.
  p->push_back(Ratio(
      "overlap_efficiency", 0.2, 1.0,
      "configurations that overlap communication with compute (TP, CP or overlapped DP)"));
  // Of the all-to-all combined 1F1B pairs with compute: 0.05 (hardly any) to all of it.
  p->push_back(Ratio(
      "ep_overlap_efficiency", 0.05, 1.0,
      "MoE configurations with moe_a2a_overlap"));
  // DeepEP's / HybridEP's kernels inside an NVLink domain, GB/s received: from 50 (a few
  // SMs) to 2,000 (beyond NVLink 5's 900 a direction: the link bounds it first).
  p->push_back(Ratio(
      "ep_dispatch_gbytes_per_s", 50.0, 2000.0,
      "MoE configurations with the DeepEP dispatcher"));
  // Spread of the GPUs' speed: none (screened, uniform parts) to 0.05 (throttling nodes;
  // Sinha et al. SC'22 report up to 22 % between a cluster's fastest and slowest GPUs,
  // ~0.011 typical, the most varied cluster ~0.03). Linear from none, its default; the
  // step (sensitivities, and the prior's width: a move of one step costs one 5 % miss) is
  // 0.02, the width of that published range.
  {
    CalibrationParam q = Ratio("rank_speed_spread", 0.0, 0.05,
                               "multi-GPU configurations (the slowest of N GPUs sets the pace; wider jobs wait "
                               "longer)");
    q.additive = true;
    q.step = 0.02;
    q.step_name = "0.02 of spread";
    p->push_back(q);
  }
}

// Host time: per iteration, per eagerly launched kernel, per checkpointed region and per
// collective call.
void AddOverheadParams(std::vector<CalibrationParam>* p) {
  // Framework time per iteration (Python, logging, scheduler): 0 to 2 s.
  {
    CalibrationParam q;
    q.name = "iteration_overhead_s";
    q.ref = Field(q.name);
    q.lower = 0;
    q.upper = 2.0;
    q.additive = true;
    q.step = 0.01;
    p->push_back(q);
  }
  // Host time per eagerly launched kernel: a bare PyTorch call costs 7-26 us
  // (h100_microbench launch.csv); a Megatron-style layer adds Python wrapping on top.
  // Below 2 us no eager framework launches; above 100 us the host is broken.
  p->push_back(Ratio(
      "kernel_overhead_us", 2.0, 100.0,
      "eager-mode configurations whose kernels are shorter than their launch "
      "(small models, high TP, short micro-batches)"));
  // Host time per checkpointed region: ~500 us for a reentrant checkpoint on an H100 host
  // (step_overhead.py --checkpoint-out); 20 us-5 ms spans lighter and heavier stacks.
  p->push_back(Ratio(
      "recompute_overhead_us", 20.0, 5000.0,
      "host-bound configurations with activation recompute (small models, high TP)"));
  // Fixed cost of one collective call: nccl-tests show ~35 us on a DGX A100
  // (nccl_tests_a100); NCCL's own tuning model has 4-9 us base latency. 2-200 us.
  p->push_back(Ratio(
      "collective_overhead_us", 2.0, 200.0,
      "configurations with collectives (TP, CP, EP, PP or DP > 1)"));
}

// The fused attention kernels' efficiencies, FlashAttention's and cuDNN's.
void AddAttentionParams(std::vector<CalibrationParam>* p) {
  // FlashAttention-2 reaches 0.35-0.73 of the 16-bit peak (Dao 2023, sec. 4.1;
  // h100_microbench attention.csv: 0.14-0.34 backward at short sequences).
  p->push_back(Ratio(
      "attention_efficiency_fwd", 0.1, 0.9,
      "configurations with flash_attention"));
  p->push_back(Ratio(
      "attention_efficiency_bwd", 0.1, 0.9,
      "configurations with flash_attention"));
  // cuDNN's fused attention: 0.52-0.63 forward, 0.32-0.54 backward on an H100 from 2 k to
  // 128 k tokens (scripts/microbench/long_attention.py).
  p->push_back(Ratio(
      "cudnn_attention_efficiency_fwd", 0.1, 0.9,
      "configurations with flash_attention under Megatron, NeMo or torchtitan (cuDNN's kernel)"));
  p->push_back(Ratio(
      "cudnn_attention_efficiency_bwd", 0.1, 0.9,
      "configurations with flash_attention under Megatron, NeMo or torchtitan (cuDNN's kernel)"));
  // Their fixed work per query tile, in keys: 280 forward, 700 backward on an H100
  // (hardware.h); a tenth to ten times that spans kernels and GPUs.
  p->push_back(Ratio(
      "attention_half_keys_fwd", 15, 1500,
      "configurations with flash_attention at short sequences or wide context parallelism"));
  p->push_back(Ratio(
      "attention_half_keys_bwd", 70, 7000,
      "configurations with flash_attention at short sequences or wide context parallelism"));
  // Their softmax work per score in head-dimension units: FlashAttention-2 22 / 22, cuDNN
  // 70 / 37 on an H100 (hardware.h); 4 to 300 spans the exponential units' share from
  // Volta to Blackwell.
  for (const char* name : {"attention_softmax_head_dim_fwd", "attention_softmax_head_dim_bwd"}) {
    p->push_back(Ratio(name, 4, 300, "configurations with flash_attention and a head dimension below 128"));
  }
  for (const char* name : {"cudnn_attention_softmax_head_dim_fwd", "cudnn_attention_softmax_head_dim_bwd"}) {
    p->push_back(Ratio(name, 4, 300,
                       "configurations with flash_attention and a head dimension below 128 under Megatron, NeMo or "
                       "torchtitan (cuDNN's kernel)"));
  }
}

// Host-staged CNN tensors and the input pipeline (decode, reads, file opens).
void AddStagingAndInputParams(std::vector<CalibrationParam>* p) {
  // Host-staged CNN tensors: pinned copies reach the PCIe rate (1); pageable, strided
  // buffers through MPI's host path far less; below 0.01 the path is broken.
  p->push_back(Ratio(
      "host_staging_efficiency", 0.01, 1.0,
      "CNN configurations with spatial, filter or channel parallelism whose implementation stages tensors "
      "through host memory"));
  // JPEG decode + augmentation on one core: libjpeg-turbo's 100-200 Mpixel/s at best;
  // a Python loader with PIL and numpy augmentation down to ~1.
  p->push_back(Ratio(
      "jpeg_decode_mpixels_per_core_s", 1.0, 400.0,
      "input-bound measurements of JPEG datasets (many samples per node, few cores)"));
  // HDF5 read + unpack on one core: ~0.05 (gzip level 9, Python copies) to memcpy's ~10 GB/s.
  p->push_back(Ratio(
      "hdf5_read_gbytes_per_core_s", 0.02, 10.0,
      "input-bound measurements of HDF5 datasets (large samples)"));
  // File opens of a shared file system, all clients: from a loaded small system (10^2/s)
  // to the IO500's largest metadata rates (~10^7/s). Unlimited by default (hardware.h).
  p->push_back(Ratio(
      "shared_fs_files_per_s", 100.0, 1e7,
      "measurements reading many small files from a shared file system"));
  // Cores one process's loader keeps busy: a quarter of a core (a loader mostly waiting)
  // to 64 (worker processes on a large host). Unlimited by default (hardware.h).
  p->push_back(Ratio(
      "loader_cores_per_process", 0.25, 64.0,
      "input-bound measurements whose loaders decode inside the training process (thread-pool loaders)"));
  // A spatial root's batch hand-over, serialise + deserialise: from a Python pickle of
  // small objects (~0.05 GB/s) to memcpy's ~10 GB/s.
  p->push_back(Ratio(
      "sample_handover_gbytes_per_s", 0.05, 10.0,
      "spatial configurations whose root hands its batch over through host memory"));
  // One host-staged halo exchange's software latency (device synchronisation, MPI
  // handshakes of the chain of neighbours): 2 us (GPU-direct) to 50 ms.
  p->push_back(Ratio(
      "halo_exchange_latency_us", 2.0, 50000.0,
      "spatial configurations (halo exchanges)"));
}

// Per network level: efficiency, per-step latency and, between nodes, congestion.
void AddNetworkParams(const SystemProfile& base, const Calibration& resolved, std::vector<CalibrationParam>* p) {
  for (size_t i = 0; i < base.network_levels.size(); ++i) {
    const NetworkLevel& level = base.network_levels[i];
    const int64_t inner = i == 0 ? 1 : base.network_levels[i - 1].domain_size;
    const std::string acts_on = i == 0
                                    ? "measurements that use more than one GPU"
                                    : absl::StrCat("measurements that span more than ", inner, " GPUs (one ",
                                                   base.network_levels[i - 1].name, " domain)");
    // NCCL bus bandwidth reaches ~0.8 of the link rate (nccl-tests); below 0.3 a link is
    // misconfigured, above 0.98 is beyond protocol overhead.
    p->push_back(Ratio(
        absl::StrCat("network.", level.name, ".efficiency"),
        0.3, 0.98, acts_on));
    // Per-step latency: NCCL's tuning model puts a ring step at 0.4-5.7 us over NVLink
    // and 0.9-9.6 us over the network by protocol (src/graph/tuning.cc, hwLat); allow a
    // factor 5 either way around the profile's specification (not its calibration, so
    // repeated calibrations do not drift the range).
    const double spec_latency = level.latency_us > 0 ? level.latency_us : resolved.network[i].latency_us;
    if (spec_latency > 0) {
      p->push_back(Ratio(
          absl::StrCat("network.", level.name, ".latency_us"),
          spec_latency / 5, spec_latency * 5,
          acts_on));
    }
    // Other jobs' traffic on the network between nodes: 1 (alone) to 10x slower. Fitted
    // where a microbenchmark's bandwidth curve describes the fabric alone (the curve
    // replaces `efficiency`, which then no longer acts; without a curve the two are the
    // same knob and efficiency is fitted).
    if (i > 0 && !resolved.network[i].bandwidth_curve.empty()) {
      p->push_back(Ratio(
          absl::StrCat("network.", level.name, ".congestion"),
          1.0, 10.0, acts_on + " on a shared system"));
    }
  }
}

}  // namespace

double CalibrationParam::Value(double u) const {
  const double v = additive ? start + u * step : start * std::exp(u);
  return std::clamp(v, lower, upper);
}

double CalibrationParam::Coordinate(double v) const {
  v = std::clamp(v, lower, upper);
  return additive ? (v - start) / step : std::log(v / start);
}

double CalibrationParam::StepU() const { return additive ? 1.0 : std::log(1.1); }

std::string CalibrationParam::StepName() const {
  if (!additive) return "10 % change";
  return step_name.empty() ? absl::StrFormat("%g ms", step * 1e3) : step_name;
}

SystemProfile IndexedCalibration(const SystemProfile& base) {
  SystemProfile out = base;
  out.calibration.network.clear();
  for (const NetworkLevel& level : base.network_levels) {
    NetworkCalibration n;
    n.level = level.name;
    for (const NetworkCalibration& given : base.calibration.network) {
      if (given.level == level.name) n = given;
    }
    out.calibration.network.push_back(n);
  }
  return out;
}

std::vector<CalibrationParam> CalibrationParams(const SystemProfile& base) {
  std::vector<CalibrationParam> p;
  AddComputeParams(base, &p);
  AddOverheadParams(&p);
  AddAttentionParams(&p);
  AddStagingAndInputParams(&p);
  const Calibration resolved = ResolvedCalibration(base);
  AddNetworkParams(base, resolved, &p);
  Calibration c = resolved;
  for (CalibrationParam& q : p) {
    q.before = q.ref(c);
    q.start = std::clamp(q.before, q.lower, q.upper);
    // Unlimited (0) has no coordinate: the search starts from the physical prior.
    if (q.name == "shared_fs_files_per_s" && q.before <= 0) q.start = CalibrationDefaults::kSharedFsFilesPriorPerS;
    if (q.name == "loader_cores_per_process" && q.before <= 0) q.start = CalibrationDefaults::kLoaderCoresPriorPerProcess;
    // No kernel limit (0): the search starts from the fastest link's rate.
    if (q.name == "ep_dispatch_gbytes_per_s" && q.before <= 0 && !base.network_levels.empty()) {
      q.start = std::clamp(base.network_levels[0].bandwidth_gbytes_per_s, q.lower, q.upper);
    }
  }
  return p;
}

}  // namespace paraplan
