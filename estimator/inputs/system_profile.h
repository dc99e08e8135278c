// SystemProfile: the hardware a job runs on, plus its calibrated efficiencies.
//
// Plain value type mirroring paraplan.v1.SystemProfile. Specification fields come from
// vendor data sheets; `calibration` holds the parameters that calibration fits. A zero
// in a calibration field means "use the physical default" (see Calibration::Resolved).
#ifndef PARAPLAN_ESTIMATOR_INPUTS_SYSTEM_PROFILE_H_
#define PARAPLAN_ESTIMATOR_INPUTS_SYSTEM_PROFILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "estimator/inputs/workload.h"

namespace paraplan {

enum class Topology { kSwitch, kFatTree, kTorus2D, kRing, kDragonfly, kTorus3D };

struct Accelerator {
  std::string name;
  double peak_tflops_bf16 = 0;
  double peak_tflops_fp16 = 0;
  double peak_tflops_fp8 = 0;
  double peak_tflops_fp32 = 0;
  double memory_gib = 0;
  double memory_bandwidth_gbytes_per_s = 0;
  double busy_power_w = 0;
  double idle_power_w = 0;
  int sm_count = 0;  // streaming multiprocessors (datasheet); 0 = no wave quantisation
  double peak_tflops_fp4 = 0;  // dense FP4 tensor rate; 0 = no FP4 tensor cores
  // Board power cap; 0 = busy_power_w. ClockScale() and PowerW() follow it.
  double power_limit_w = 0;

  // Sustained clock under the cap relative to the rated one when the limit is below
  // busy_power_w, else 1: ((limit - idle) / (busy - idle))^(1/3) -- CMOS power is a
  // static part (the idle draw, idle_power_w) plus a dynamic one ~ f V^2 with V ~ f.
  double ClockScale() const;
  // Power drawn while busy: the lower of busy_power_w and the limit.
  double BusyPowerW() const;

  // Dense peak for a precision, TFLOP/s (FP8 falls back to FP16 when unset).
  double PeakTflops(Precision p) const;
};

struct NetworkLevel {
  std::string name;
  int domain_size = 0;  // GPUs per domain at this level; 0 = whole cluster
  double bandwidth_gbytes_per_s = 0;  // per GPU, one direction
  double latency_us = 0;
  Topology topology = Topology::kSwitch;
  double oversubscription = 1;
  bool in_network_reduction = false;  // NVLink / InfiniBand SHARP
  // Fat tree: ports per switch at this level; with domain_size 0 on a level that is not
  // the outermost, the domain is derived from it (see Hardware). 0 = not given.
  int switch_radix = 0;
  // Fat tree: each GPU's NIC goes to the leaf ("rail") switch of its local rank, so a
  // leaf reaches radix-down-ports nodes rather than radix-down-ports GPUs (NVIDIA DGX
  // SuperPOD reference architecture); traffic between different local ranks first
  // crosses NVLink (NCCL PXN).
  bool rail_optimized = false;
  // Torus: extent of each dimension in domains of the level below (nodes for the first
  // network level), x fastest; the level's bandwidth is per link and direction.
  std::vector<int> torus_dims;
  // Dragonfly: a domain of the level below is one group; global links leaving a group
  // and the rate of one, GB/s per direction (Kim et al., ISCA 2008).
  int global_links_per_group = 0;
  double global_link_gbytes_per_s = 0;
};

// Achieved share of a level's nominal bandwidth at one message size (a point of the
// bus-bandwidth curve nccl-tests measures).
struct BandwidthPoint {
  double bytes = 0;
  double efficiency = 0;
};

struct NetworkCalibration {
  std::string level;
  double efficiency = 0;
  double latency_us = 0;
  // When given (sizes ascending), replaces `efficiency` by size: interpolated in
  // log(size), held flat beyond the ends. Fitted from microbenchmarks.
  std::vector<BandwidthPoint> bandwidth_curve;
  // Slowdown from other jobs' traffic on a shared system, >= 1 (0 = 1): divides the
  // bandwidth on top of `efficiency` / the curve (Kahira et al. HPDC'21 separate it).
  double congestion = 0;
};

// What calibration learnt about one regime of runs: the runs whose GPUs all fit in one
// domain of a network level (regime = that level's name; "gpu" = one GPU). `values`
// override the profile-wide calibration for configurations of this regime and any
// narrower one without its own entry (calibration_regime.h); the figures describe the
// measurements calibration saw there, for prediction intervals and the envelope.
struct RegimeValue {
  std::string parameter;  // a calibration parameter's name, as calibration reports it
  double value = 0;
};
struct RegimeCalibration {
  std::string regime;
  std::vector<RegimeValue> values;
  int num_measurements = 0;
  double cv_mape_ratio = 0;  // cross-validated error of this version on them; 0 = unknown
  int64_t max_gpus = 0;      // the widest run measured
  double max_parameters = 0; // the largest model measured (parameters)
  // MeasuredFeature bits (inputs/measured_features.h) the measurements covered; 0 = not
  // recorded (a calibration from before they were).
  unsigned measured_features = 0;
};

struct Calibration {
  double matmul_efficiency = 0;
  double matmul_efficiency_fp8 = 0;  // FP8 linears' share of the FP8 peak; 0 = matmul_efficiency
  double matmul_half_efficiency_gflop = 0;
  double matmul_pipeline_depth = 0;  // a tile's fixed work per GEMM, in 16-bit K-elements (0 = 64)
  double memory_bound_efficiency = 0;
  std::vector<NetworkCalibration> network;
  double overlap_efficiency = 0;
  double iteration_overhead_s = 0;
  double kernel_overhead_us = 0;       // host time per kernel launched in eager mode
  double recompute_overhead_us = 0;    // host time per checkpointed region and micro-batch
  double attention_efficiency_fwd = 0;  // fused-attention forward, share of 16-bit peak
  double attention_efficiency_bwd = 0;  // fused-attention backward, share of 16-bit peak
  // cuDNN's fused attention (Transformer Engine's FusedAttention, which it prefers on
  // Hopper and later; PyTorch SDPA's cuDNN backend, torchtitan's first choice), forward
  // and backward, share of 16-bit peak; 0 = the FlashAttention-2 shares above.
  double cudnn_attention_efficiency_fwd = 0;
  double cudnn_attention_efficiency_bwd = 0;
  // Keys per query at which a fused attention call runs at half its efficiency above (its
  // fixed work per query tile); 0 = CalibrationDefaults' (hardware.h).
  double attention_half_keys_fwd = 0;
  double attention_half_keys_bwd = 0;
  // A fused attention kernel's softmax work per score (exponential, row maximum,
  // rescaling) as head-dimension units of its matmul work: at head dimension d < 128 it
  // runs at (128 + d0) / 128 x d / (d + d0) of its rate at 128. FlashAttention-2's, and
  // cuDNN's; 0 = CalibrationDefaults' (hardware.h).
  double attention_softmax_head_dim_fwd = 0;
  double attention_softmax_head_dim_bwd = 0;
  double cudnn_attention_softmax_head_dim_fwd = 0;
  double cudnn_attention_softmax_head_dim_bwd = 0;
  double collective_overhead_us = 0;   // fixed cost of one collective call (launch, rendezvous)
  bool halo_host_staged = false;       // CNN halos copied through host memory + MPI
  double halo_exchange_latency_us = 0; // software latency of one halo exchange; 0 = default
  // Share of the PCIe rate a host-staged transfer of a CNN's model-parallel tensors
  // (halos, gathers, broadcast samples) reaches; 0 = default (hardware.h).
  double host_staging_efficiency = 0;
  // Input pipeline (input_pipeline.h); 0 = default (hardware.h).
  double jpeg_decode_mpixels_per_core_s = 0;  // JPEG decode + crop / flip / normalise, one core
  double hdf5_read_gbytes_per_core_s = 0;     // HDF5 sample read and unpack, one core
  double shared_fs_files_per_s = 0;           // files the shared file system opens per second, all clients
  double loader_cores_per_process = 0;        // cores one process's loader keeps busy; 0 = unlimited
  // A spatial root's host-staged hand-over of its decoded batch (serialise, send,
  // deserialise), GB/s of samples; 0 = default (hardware.h).
  double sample_handover_gbytes_per_s = 0;
  // Share of the all-to-all moe_a2a_overlap pairs with compute that it really hides;
  // 0 = default (hardware.h).
  double ep_overlap_efficiency = 0;
  // GB/s a GPU receives (its own tokens counted) through DeepEP's / HybridEP's dispatch
  // and combine kernels inside an NVLink domain: the rate their few SMs sustain, below
  // the link's; 0 = the link's rate (no kernel limit). The built-in Hopper and Blackwell
  // profiles state it (profiles.cc).
  double ep_dispatch_gbytes_per_s = 0;
  // Spread of the GPUs' sustained compute speed: the standard deviation of one GPU's rate
  // relative to the median GPU's (manufacturing and power-management variation). A job
  // of N GPUs synchronises every iteration and runs at its slowest GPU's pace;
  // 0 = default (hardware.h).
  double rank_speed_spread = 0;
  double memory_overhead_fraction = 0;
  // The same share with PyTorch's expandable segments (PYTORCH_CUDA_ALLOC_CONF=
  // expandable_segments:True, as torchtitan's run_train.sh sets); 0 = default (hardware.h).
  double expandable_segments_overhead_fraction = 0;
  double memory_overhead_gib = 0;
  std::vector<RegimeCalibration> regimes;  // narrowest first; empty = never calibrated
};

struct HostSpec {
  double memory_gib = 0;
  double pcie_gbytes_per_s = 0;
  int cpu_cores = 0;  // per node; 0 = unknown (no decode cost)
  // The CPUs' rated power, all sockets, part of node_power_w; 0 = not stated (the node's
  // power is charged flat). Given, the CPUs draw it in proportion to the loaders' work
  // above an idle floor (assemble.cc).
  double cpu_power_w = 0;
};

struct StorageSpec {
  double read_gbytes_per_s = 0;            // per node, node-local storage
  double shared_fs_gbytes_per_s = 0;       // aggregate of the shared parallel file system
  double shared_fs_node_gbytes_per_s = 0;  // one node's client limit; 0 = none
  // Energy per GB read beyond the drives' idle power; 0 = Hardware::Defaults'
  // kStorageReadJoulesPerGbyte. Stated, not fitted: measurements carry no energy.
  double read_joules_per_gbyte = 0;        // node-local storage
  double shared_fs_joules_per_gbyte = 0;   // the shared file system (its servers and drives)
};

// Measured compute time of one layer of a named workload, per sample.
struct LayerTiming {
  std::string workload;
  std::string layer;
  double forward_s_per_sample = 0;
  double backward_s_per_sample = 0;
};

struct SystemProfile {
  std::string name;
  int version = 0;
  std::string description;
  int gpus_per_node = 0;
  int num_nodes = 0;
  Accelerator accelerator;
  std::vector<NetworkLevel> network_levels;  // innermost first
  HostSpec host;
  StorageSpec storage;
  double node_power_w = 0;
  double price_per_gpu_hour_usd = 0;
  Calibration calibration;
  std::vector<LayerTiming> layer_timings;  // measured per-layer times (layer graphs)

  int64_t NumGpus() const { return int64_t{gpus_per_node} * num_nodes; }
};

// GPUs in one domain of network level `i`: its domain_size; for 0 on a fat-tree level
// that is not the outermost and gives switch_radix, derived from the radix (see
// NetworkLevel); 0 on the outermost level (or nothing to derive from) = the whole
// cluster.
int64_t ResolvedDomainSize(const SystemProfile& profile, size_t i);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_INPUTS_SYSTEM_PROFILE_H_
