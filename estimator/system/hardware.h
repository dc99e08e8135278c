// Hardware: a SystemProfile resolved into the rates the cost model uses.
//
// Turns the profile's specification plus calibration (zero = physical default) into
// effective compute and memory rates, and times the two kinds of kernels the model
// knows: matmuls (roofline with a size-dependent efficiency) and memory-bound
// streaming ops. Built once per estimate/search; read-only afterwards; thread-safe.
#ifndef PARAPLAN_ESTIMATOR_SYSTEM_HARDWARE_H_
#define PARAPLAN_ESTIMATOR_SYSTEM_HARDWARE_H_

#include <utility>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "estimator/inputs/system_profile.h"
#include "estimator/inputs/workload.h"

namespace paraplan {

// The physical defaults used where a profile's calibration field is zero. Each is a
// property of GPU training software/hardware in general, not of one data set.
struct CalibrationDefaults {
  // Large FP16/BF16 GEMMs in cuBLAS reach ~85 % of the tensor-core peak at boost
  // clock; sustained tensor-core load under the board power limit runs ~10 % below
  // boost (A100: ~1.275 vs 1.41 GHz): ~0.75 of the datasheet peak.
  static constexpr double kMatmulEfficiency = 0.75;
  // A kernel's fixed tail (launch, last partial wave) ~ 6 us of peak-rate work
  // (CUDA launch latency 3-5 us + tail effect); expressed per profile in GFLOP.
  static constexpr double kMatmulTailUs = 6.0;
  // A tile's fixed work per GEMM in 16-bit K-elements (CUTLASS's SM80 default GEMM: 3
  // stages of 32 = 64 K-elements of prologue); Calibration::matmul_pipeline_depth.
  static constexpr double kMatmulPipelineDepth = 64;
  // Training's memory-bound kernels (dropout with Philox RNG, softmax and LayerNorm row
  // reductions, strided copies) reach ~70 % of HBM peak, below STREAM's ~90 %.
  static constexpr double kMemoryBoundEfficiency = 0.70;
  // NCCL bus bandwidth reaches ~80 % of the link rate (nccl-tests on DGX systems).
  static constexpr double kNetworkEfficiency = 0.80;
  // Share of overlappable communication that is really hidden behind compute
  // (overlapped kernels contend for SMs and memory bandwidth).
  static constexpr double kOverlapEfficiency = 0.80;
  // Framework overhead per iteration (Python, scheduler, logging): calibrated; 0 default.
  static constexpr double kIterationOverheadS = 0.0;
  // Host time per kernel of an eager framework step. Not a datasheet figure: a bare
  // PyTorch call costs 7 us (elementwise, long stream) to 24-26 us (a torch.matmul call,
  // a short stream) of host time on an H100 host (shared/data/h100_microbench launch.csv
  // and the ~24 us floor of gemm.csv); a Megatron-style layer wraps every kernel in
  // Python modules, custom autograd functions, RNG-tracker forks and checkpointing, and
  // its TP-1 steps on A100 that are far shorter on the GPU than measured (vTrain) imply
  // 30-40 us. Measured directly (scripts/microbench/step_overhead.py on an H100 host,
  // docs/microbench/h100_step_overhead.csv): 30-40 us per kernel for an eager GPT layer
  // stack's forward + backward, 34-59 us with reentrant checkpointing. The host runs
  // ahead of the GPU, so this only shows where kernels are shorter than their launch;
  // calibrate it for the stack at hand.
  static constexpr double kKernelOverheadUs = 35.0;
  // Host time of one activation-checkpointed region per micro-batch beyond the kernels it
  // launches: the checkpoint function saves and restores the CPU and CUDA RNG states,
  // re-runs the forward under autograd and calls a nested backward (Megatron-LM's
  // CheckpointFunction and torch.utils.checkpoint's reentrant form work alike). Measured
  // (scripts/microbench/step_overhead.py --checkpoint-out, H100 host, PyTorch 2.11,
  // docs/microbench/h100_checkpoint_overhead.csv): 443-514 us per reentrant region, 748-865
  // non-reentrant. Hidden wherever the GPU is the bottleneck.
  static constexpr double kRecomputeOverheadUs = 500.0;
  // GPU-side cost per kernel when the host is not the bottleneck: a kernel replayed from
  // a CUDA graph costs ~1 us (launch.csv, graph_add).
  static constexpr double kGraphKernelUs = 1.0;
  // FlashAttention-2 reaches 50-73 % of the A100's 16-bit peak forward and less backward
  // (Dao 2023, FlashAttention-2, sec. 4.1: ~0.65 forward, ~0.5 backward at long sequences).
  static constexpr double kAttentionEfficiencyFwd = 0.65;
  static constexpr double kAttentionEfficiencyBwd = 0.50;
  // Those are the kernels' rates at long sequences. Each call also does fixed work per
  // query tile (load the queries, normalise and write the output; backward its dQ and the
  // dot(dO, O) pass), worth the keys below: a call whose queries see K keys on average
  // runs at K / (K + half) of that rate. Fitted to causal attention on an H100, 512 to
  // 128 k tokens, head dimension 128, FlashAttention-2 and cuDNN alike, one half per
  // direction (`scripts/microbench/fit_attention.py docs/microbench/h100_long_attention.jsonl
  // ../shared/data/h100_microbench/attention.csv`: 276 and 692 keys; every point within
  // 12 %): backward 0.20 of the peak at 2 k tokens, 0.32 at 32 k (FlashAttention-2). That
  // fixed work is memory traffic (the queries' and the output's rows, dQ), so on another
  // GPU it is worth keys in proportion to its 16-bit FLOP per byte of HBM against the
  // H100's 295 (989 TFLOP/s over 3.35 TB/s): an A100's 156 makes it 148 and 370.
  static constexpr double kAttentionHalfKeysFwd = 280;
  static constexpr double kAttentionHalfKeysBwd = 700;
  static constexpr double kAttentionHalfKeysFlopsPerByte = 989.0 / 3.35;
  // Beside a score's 4 d matmul FLOPs (QK^T and PV, d the head dimension) a fused kernel
  // takes its exponential, the row maximum and the rescaling on the SMs' special-function
  // units, 16 per SM and clock against the tensor cores' 4,096 FLOP on an H100 (H100
  // whitepaper): worth d0 head-dimension units, so a kernel whose rate was measured at
  // d = 128 runs at (128 + d0) / 128 x d / (d + d0) of it at a narrower d (wider heads are
  // not taken faster: MLA's 192 / 128 measure slower on cuDNN). One exponential a score is
  // 256 FLOP of tensor-core time, d0 = 64 forward and 25.6 backward (2.5x the matmuls)
  // where nothing hides it; how much does is the kernel's. Fitted on an H100, causal, head
  // dimension 64 against 128 at the same FLOPs, 2 k-32 k tokens, the median over
  // sequences (`scripts/microbench/fit_attention.py` over shared/data/h100_microbench/
  // attention.csv and docs/microbench/h100_attention_head_dim.jsonl; ctest
  // microbench.attention_fit): FlashAttention-2 22 / 22 (64 runs 1.05-1.32x slower a FLOP),
  // cuDNN 70 / 37 (1.25-1.37x forward, 1.16-1.28x backward; beyond 64 forward: cuDNN's
  // head-dimension-64 kernel does worse still). A whole MoE layer at 64 against 128
  // (SDPA, cuDNN first) agrees: attention 1.25x slower a FLOP
  // (docs/microbench/h100_moe_layer_step.jsonl). The special-function units being 16 per
  // SM and clock from Volta to Blackwell, on another GPU it is worth units in proportion to
  // its 16-bit FLOP per SM against the H100's (989 TFLOP/s over 132 SMs): an A100's 2.9
  // TFLOP/s makes FlashAttention-2's 8.5 / 8.5.
  static constexpr double kAttentionSoftmaxHeadDimFwd = 22;
  static constexpr double kAttentionSoftmaxHeadDimBwd = 22;
  static constexpr double kCudnnAttentionSoftmaxHeadDimFwd = 70;
  static constexpr double kCudnnAttentionSoftmaxHeadDimBwd = 37;
  static constexpr double kAttentionSoftmaxTflopsPerSm = 989.0 / 132;
  // The head dimension at which the attention efficiencies are measured.
  static constexpr double kAttentionReferenceHeadDim = 128;
  // Fixed cost of one NCCL collective call as a framework sees it (kernel launch, proxy
  // and peer rendezvous, c10d work bookkeeping): nccl-tests all_reduce_perf at 1 MiB on a
  // DGX A100 takes 44 us on 2 GPUs and 93 us on 8 (shared/data/nccl_tests_a100), i.e.
  // ~35 us fixed plus ~3 us per ring step.
  static constexpr double kCollectiveOverheadUs = 35.0;
  // Caching-allocator fragmentation (PyTorch reserved vs allocated, typically 5-10 %).
  static constexpr double kMemoryOverheadFraction = 0.07;
  // The same with expandable segments: 0.4 % (fixed shapes) and 1.1 % (micro-batches of
  // 1 and 2 alternating), where the default allocator reserved 3.6 % and 11 % more
  // (eight Llama 3 8B blocks with AdamW on an H100: scripts/microbench/allocator_overhead.py,
  // docs/microbench/h100_allocator_overhead.jsonl).
  static constexpr double kExpandableSegmentsOverheadFraction = 0.01;
  // CUDA context (~0.5 GiB) + cuBLAS/NCCL workspaces and buffers (~1 GiB).
  static constexpr double kMemoryOverheadGib = 1.5;
  // A halo staged through the host: a device-to-host and a host-to-device copy of a
  // small buffer (~8 us each: NVIDIA, "How to Optimize Data Transfers in CUDA C/C++")
  // and an MPI message (~2 us on InfiniBand: OSU latency benchmark).
  static constexpr double kHaloHostStagedLatencyUs = 18.0;
  // A host-staged transfer of pageable, strided CNN tensors (a halo, a chainermn gather)
  // reaches about half the pinned PCIe rate: pageable copies go through a driver bounce
  // buffer (Harris, NVIDIA "How to Optimize Data Transfers in CUDA C/C++": ~3 vs ~6 GB/s).
  static constexpr double kHostStagingEfficiency = 0.5;
  // A 256 x 256 ImageNet JPEG (~25 KB) through Pillow's decode, a float32 array, a random
  // 227 x 227 crop and flip, mean subtraction and scaling (Chainer's LabeledImageDataset
  // as ParaDL ran it): 1.02-1.05 core-ms per image on a 2-core AMD EPYC VM, 49.0-50.8 Mpixel/s
  // of crop pixels (`bench/jpeg_pipeline.py`, docs/microbench/epyc_jpeg_pipeline.jsonl;
  // libjpeg-turbo's decode alone runs 100-200).
  static constexpr double kJpegDecodeMpixelsPerCoreS = 50.0;
  // HDF5 samples are commonly deflate-compressed: zlib inflates ~0.4 GB/s per core
  // (lzbench, zlib level 6 decompression).
  static constexpr double kHdf5ReadGbytesPerCoreS = 0.4;
  // File opens a shared file system serves per second for all its clients: no general
  // figure (IO500 metadata rates of production GPFS / Lustre span 10^4-10^6 per second,
  // and other jobs take their share), so unlimited unless stated or calibrated;
  // calibration starts its search from the low end, 20,000 per second.
  static constexpr double kSharedFsFilesPriorPerS = 20000.0;
  // Cores one process's loader keeps busy: unlimited by default (worker processes); the
  // search starts from 1, a thread-pool loader under Python's interpreter lock.
  static constexpr double kLoaderCoresPriorPerProcess = 1.0;
  // A batch of float32 images pickled (protocol 4, mpi4py's default), unpickled and
  // stacked: 0.72 GB/s of samples on a 2-core EPYC VM (bench/pickle_handover.py).
  static constexpr double kSampleHandoverGbytesPerS = 0.7;
  // Megatron-Core's combined 1F1B (moe_a2a_overlap) hides 0.46 of the all-to-all it
  // pairs with the other micro-batch's compute (net of the SMs it takes): the
  // Megatron-MoE model zoo's Qwen3-235B on 256 H100s (TP 2, PP 8, EP 32, DeepEP), the same
  // configuration without and with the overlap, 19.7 -> 17.6 s, where 4.5 s are paired.
  static constexpr double kEpOverlapEfficiency = 0.46;
  // GPUs of one SKU differ in sustained speed: 8 % between the fastest and the slowest
  // of an HPC cluster's thousands of GPUs, averaged over applications and clusters (Sinha
  // et al., SC'22, "Not All GPUs Are Created Equal"; V100 and MI60), about 7 standard
  // deviations of a normal sample that size: sigma ~ 0.011. Applied by default, that
  // figure makes every development set on screened training clusters worse (Selene's
  // Korthikanti runs 2.93 -> 4.32 % MAPE, vTrain's single node 9.09 -> 9.28 %, calibrating
  // on both of vTrain's scales 7.86 -> 9.17 % on its 64-GPU runs): the spread of the
  // clusters these jobs ran on is well below it, or already inside the efficiencies.
  // So none unless a profile states it or calibration fits it (from 0.001).
  static constexpr double kRankSpeedSpread = 0.0;
  // Energy to read a GB from an NVMe drive beyond its idle power: the drive between idle
  // (8 W) and its power limit (25 W) at its sequential read rate (3.5 GB/s), Micron 9200
  // NVMe datasheet; an upper figure for reads, which rarely reach the limit. A shared
  // file system's bytes cost at least their drives' share, which is the default there.
  static constexpr double kStorageReadJoulesPerGbyte = (25.0 - 8.0) / 3.5;
};

struct NetworkRates {
  int domain_size = 0;  // resolved: whole cluster when 0
  double bytes_per_s = 0;  // effective per GPU, one direction (flat efficiency)
  double latency_s = 0;
  Topology topology = Topology::kSwitch;
  bool in_network_reduction = false;
  double nominal_bytes_per_s = 0;  // bandwidth / oversubscription
  std::vector<std::pair<double, double>> curve;  // (log2 message bytes, efficiency), ascending
  double oversubscription = 1;     // taper of the uplinks of a domain of the level below
  bool rail_optimized = false;
  std::vector<int> torus_dims;     // torus levels: extent per dimension, x first
  int global_links_per_group = 0;  // dragonfly
  double global_link_bytes_per_s = 0;  // dragonfly, one link, one direction, with efficiency

  // Effective rate for a collective over a `message_bytes` buffer.
  double BytesPerS(double message_bytes) const { return curve.empty() ? bytes_per_s : CurveBytesPerS(message_bytes); }
  double CurveBytesPerS(double message_bytes) const;  // BytesPerS where the level has a curve
};

class Hardware {
 public:
  // num_gpus > 0: with the calibration of that configuration size's regime.
  Hardware(const SystemProfile& profile, Precision precision, int64_t num_gpus = 0);

  // Effective dense matmul rate for large shapes, FLOP/s.
  double matmul_flops_per_s() const { return matmul_flops_per_s_; }
  double peak_flops_per_s() const { return peak_flops_per_s_; }
  double hbm_bytes_per_s() const { return hbm_bytes_per_s_; }
  double pcie_bytes_per_s() const { return pcie_bytes_per_s_; }
  bool halo_host_staged() const { return halo_host_staged_; }
  // FP8 GEMMs take operands in any layout (no transposed FP8 copies): the Blackwell
  // data-centre GPUs, told apart in a profile by their FP4 tensor cores (peak_tflops_fp4).
  bool fp8_any_layout() const { return fp8_any_layout_; }
  // The profile's measured per-sample (forward, backward) time of a workload's layer, or
  // nullptr when none is stored.
  const std::pair<double, double>* MeasuredLayer(const std::string& workload, const std::string& layer) const;
  double halo_latency_s() const { return halo_latency_s_; }
  // Rate of a host-staged CNN tensor transfer (PCIe x host_staging_efficiency), bytes/s.
  double host_staging_bytes_per_s() const { return host_staging_bytes_per_s_; }
  // Input pipeline rates: JPEG pixels and HDF5 bytes one host core decodes per second;
  // files the shared file system opens per second for all clients.
  double jpeg_pixels_per_core_s() const { return jpeg_pixels_per_core_s_; }
  double hdf5_bytes_per_core_s() const { return hdf5_bytes_per_core_s_; }
  double shared_fs_files_per_s() const { return shared_fs_files_per_s_; }
  // Cores one process's loader keeps busy (0 = unlimited); the rate a spatial root's
  // decoded batch is serialised and handed over through the host, bytes/s.
  double loader_cores_per_process() const { return loader_cores_per_process_; }
  double sample_handover_bytes_per_s() const { return sample_handover_bytes_per_s_; }
  double overlap_efficiency() const { return overlap_efficiency_; }
  // Exposed time of `comm_s` of communication on a side stream beside `window_s` of
  // work on the critical path: what outlasts the window, or what the overlapped
  // stretch costs that work (the collective's kernels hold SMs and memory bandwidth:
  // 1 - overlap_efficiency of the overlapped time for a collective holding a node-wide
  // ring's SMs, `sm_share` of that for one holding fewer), whichever is larger.
  double ExposedBeside(double comm_s, double window_s, double sm_share = 1.0) const {
    const double comm = comm_s > 0 ? comm_s : 0.0, window = window_s > 0 ? window_s : 0.0;
    const double outlasts = comm - window;
    const double shared = (1.0 - overlap_efficiency_) * sm_share * (comm < window ? comm : window);
    return outlasts > shared ? outlasts : shared;
  }
  // Share of the all-to-all moe_a2a_overlap pairs with compute that it really hides.
  double ep_overlap_efficiency() const { return ep_overlap_efficiency_; }
  // Bytes a second a GPU receives through DeepEP's / HybridEP's kernels inside an NVLink
  // domain (Calibration::ep_dispatch_gbytes_per_s); 0 = no limit beside the link's.
  double ep_dispatch_bytes_per_s() const { return ep_dispatch_bytes_per_s_; }
  // The job's pace against one median GPU: 1 / (1 + rank_speed_spread x E[max of N
  // standard normals]) for N = num_gpus; 1 without a GPU count. Folded into every
  // compute rate above (not HBM, links or host times).
  double pace() const { return pace_; }
  double iteration_overhead_s() const { return iteration_overhead_s_; }
  // Host time per kernel in eager mode (see CalibrationDefaults::kKernelOverheadUs).
  double kernel_overhead_s() const { return kernel_overhead_s_; }
  // Host time of one checkpointed region per micro-batch beyond its kernels (see
  // CalibrationDefaults::kRecomputeOverheadUs).
  double recompute_overhead_s() const { return recompute_overhead_s_; }
  // GPU-side gap per kernel (what remains under CUDA graphs).
  double kernel_gap_s() const { return kernel_gap_s_; }
  double collective_overhead_s() const { return collective_overhead_s_; }
  // Fused-attention rates (16-bit tensor cores even under FP8 linears), FLOP/s.
  // Fused attention's rates: FlashAttention-2's, or cuDNN's (`cudnn`).
  double attention_fwd_flops_per_s(bool cudnn = false) const {
    return cudnn ? cudnn_attention_fwd_flops_per_s_ : attention_fwd_flops_per_s_;
  }
  double attention_bwd_flops_per_s(bool cudnn = false) const {
    return cudnn ? cudnn_attention_bwd_flops_per_s_ : attention_bwd_flops_per_s_;
  }
  // A fused attention call's fixed work per query tile, in keys (CalibrationDefaults).
  double attention_half_keys_fwd() const { return attention_half_keys_fwd_; }
  double attention_half_keys_bwd() const { return attention_half_keys_bwd_; }
  // A fused attention kernel's softmax work per score, in head-dimension units
  // (CalibrationDefaults): FlashAttention-2's, or cuDNN's.
  double attention_softmax_head_dim_fwd(bool cudnn = false) const {
    return cudnn ? cudnn_attention_softmax_head_dim_fwd_ : attention_softmax_head_dim_fwd_;
  }
  double attention_softmax_head_dim_bwd(bool cudnn = false) const {
    return cudnn ? cudnn_attention_softmax_head_dim_bwd_ : attention_softmax_head_dim_bwd_;
  }
  int sm_count() const { return sm_count_; }
  double memory_overhead_fraction() const { return memory_overhead_fraction_; }
  double expandable_segments_overhead_fraction() const { return expandable_segments_overhead_fraction_; }
  double memory_overhead_bytes() const { return memory_overhead_bytes_; }
  double capacity_bytes() const { return capacity_bytes_; }
  double host_capacity_bytes_per_gpu() const { return host_capacity_bytes_per_gpu_; }
  double storage_bytes_per_s_per_gpu() const { return storage_bytes_per_s_per_gpu_; }
  int gpus_per_node() const { return gpus_per_node_; }
  const std::vector<NetworkRates>& levels() const { return levels_; }

  // Time of `batch` independent (m x k) * (k x n) matmuls of a linear layer (at the
  // training precision's rate: FP8 under FP8): roofline of the FLOPs at the shape's
  // efficiency and the bytes of the operands at HBM rate. Efficiency: eff_max times
  // F / (F + F_half) (Calculon/vTrain-style small-GEMM penalty) times the share of the
  // last wave of output tiles that is filled (see WaveUtilization).
  double MatmulTime(double m, double n, double k, double batch, double bytes_per_element) const;
  // The same for matmuls that are not linear layers (attention scores/context without a
  // fused kernel): 16-bit rate even when linears run in FP8.
  double BatchedMatmulTime(double m, double n, double k, double batch,
                           double bytes_per_element) const;
  // `groups` independent m x n x k GEMMs of one grouped linear (a MoE layer's local
  // experts), as Transformer Engine's GroupedLinear runs them: separate cuBLAS calls over
  // its 4 compute streams (transformer_engine/common/util/multi_stream.h), so at most 4
  // share the SMs at once and each round pays its own tail. `sixteen_bit`: at the 16-bit
  // rate in a low-precision workload (a layer recipes keep in BF16). `output_bytes`: per
  // element of the m x n output (read and written where the GEMM accumulates into it).
  double GroupedMatmulTime(double m, double n, double k, double groups, double bytes_per_element,
                           bool sixteen_bit, double output_bytes) const;
  // A convolution as an implicit GEMM (cuDNN): the GEMM's shape and rate, but the
  // operands it moves are the tensors themselves (`bytes`: input, filters and output), not
  // the k-fold im2col expansion of its input, which is never materialised.
  double ConvTime(double m, double n, double k, double batch, double bytes) const;
  // Share of the SMs' tile slots that do useful work for `tiles` output tiles:
  // tiles / (ceil(tiles / SMs) * SMs). 1 without an SM count.
  double WaveUtilization(double tiles) const;
  // Time of a memory-bound op that moves `bytes` through HBM.
  double MemoryTime(double bytes) const;

 private:
  double MatmulTimeAt(double rate, double m, double n, double k, double batch,
                      double operand_bytes) const;
  double MatmulTimeUncached(double rate, double m, double n, double k, double batch, double operand_bytes) const;

  // Unique to this construction (copies share it: they answer alike); the GEMM memo's key.
  uint64_t id_ = 0;
  double peak_flops_per_s_ = 0;
  double matmul_flops_per_s_ = 0;
  double batched_matmul_flops_per_s_ = 0;
  double attention_fwd_flops_per_s_ = 0;
  double attention_bwd_flops_per_s_ = 0;
  double cudnn_attention_fwd_flops_per_s_ = 0;
  double cudnn_attention_bwd_flops_per_s_ = 0;
  double attention_half_keys_fwd_ = 0;
  double attention_half_keys_bwd_ = 0;
  double attention_softmax_head_dim_fwd_ = 0;
  double attention_softmax_head_dim_bwd_ = 0;
  double cudnn_attention_softmax_head_dim_fwd_ = 0;
  double cudnn_attention_softmax_head_dim_bwd_ = 0;
  double kernel_gap_s_ = 0;
  double collective_overhead_s_ = 0;
  int sm_count_ = 0;
  double half_efficiency_flops_ = 0;
  double pipeline_depth_ = 0;    // matmul_pipeline_depth in K-elements of this precision's linears
  double pipeline_depth16_ = 0;  // of 16-bit GEMMs (attention's batched ones under FP8)
  double hbm_bytes_per_s_ = 0;
  double pcie_bytes_per_s_ = 0;
  bool halo_host_staged_ = false;
  std::unordered_map<std::string, std::pair<double, double>> measured_layers_;  // "workload\0layer"
  double halo_latency_s_ = 0;
  double host_staging_bytes_per_s_ = 0;
  double jpeg_pixels_per_core_s_ = 0;
  double hdf5_bytes_per_core_s_ = 0;
  double shared_fs_files_per_s_ = 0;
  double loader_cores_per_process_ = 0;
  double sample_handover_bytes_per_s_ = 0;
  double overlap_efficiency_ = 0;
  double ep_overlap_efficiency_ = 0;
  double ep_dispatch_bytes_per_s_ = 0;
  double pace_ = 1;
  bool fp8_any_layout_ = false;
  double iteration_overhead_s_ = 0;
  double kernel_overhead_s_ = 0;
  double recompute_overhead_s_ = 0;
  double memory_overhead_fraction_ = 0;
  double expandable_segments_overhead_fraction_ = 0;
  double memory_overhead_bytes_ = 0;
  double capacity_bytes_ = 0;
  double host_capacity_bytes_per_gpu_ = 0;
  double storage_bytes_per_s_per_gpu_ = 0;
  int gpus_per_node_ = 1;
  std::vector<NetworkRates> levels_;
};

// Resolved value of every calibration parameter (defaults substituted), by name, in a
// fixed order; used by calibration reports and the CLI. With num_gpus > 0: as it applies
// to a configuration of that many GPUs (its regime's overrides, calibration_regime.h).
Calibration ResolvedCalibration(const SystemProfile& profile, int64_t num_gpus = 0);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_SYSTEM_HARDWARE_H_
