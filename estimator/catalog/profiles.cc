// Built-in system profiles from vendor specifications. Calibration is left zero, so
// the physical defaults of hardware.h apply until measurements are ingested, except
// where a microbenchmark of the same silicon is cited (dgx-h100-80gb, dgx-h200-141gb) or
// the silicon departs from the default's rule (Blackwell Ultra's softmax units).
#include "estimator/catalog/presets.h"

namespace paraplan {

namespace {

NetworkLevel Level(const char* name, int domain, double gbytes_per_s, double latency_us,
                   Topology topology, double oversubscription) {
  NetworkLevel l;
  l.name = name;
  l.domain_size = domain;
  l.bandwidth_gbytes_per_s = gbytes_per_s;
  l.latency_us = latency_us;
  l.topology = topology;
  l.oversubscription = oversubscription;
  return l;
}

// Blackwell Ultra doubles the special-function units' throughput over Blackwell (NVIDIA
// technical blog, "Making Softmax More Efficient with NVIDIA Blackwell Ultra", MUFU.EX2):
// a fused attention kernel's softmax is worth half the head-dimension units hardware.h's
// rule gives from the GPU's 16-bit FLOP per SM (FlashAttention-2 22 / 22, cuDNN 70 / 37 on an
// H100, x the GPU's TFLOP/s per SM / (989 / 132)): dgx-b300-288gb and gb300-nvl72 state
// theirs.

SystemProfile DgxA100() {
  SystemProfile p;
  p.name = "dgx-a100-80gb";
  p.description =
      "NVIDIA DGX A100 SuperPOD (Selene-like): 8x A100-SXM4-80GB per node, NVSwitch, "
      "8x HDR InfiniBand per node, fat tree";
  p.gpus_per_node = 8;
  p.num_nodes = 560;  // Selene: 560 DGX A100 nodes (TOP500 entry, 2021)
  Accelerator& a = p.accelerator;
  a.name = "A100-SXM4-80GB";
  // NVIDIA A100 datasheet: 312 TFLOP/s dense BF16/FP16, 19.5 FP32, 2,039 GB/s HBM2e, 400 W.
  a.peak_tflops_bf16 = 312;
  a.peak_tflops_fp16 = 312;
  a.peak_tflops_fp8 = 0;  // no FP8 tensor cores
  a.peak_tflops_fp32 = 19.5;
  a.memory_gib = 80;
  a.memory_bandwidth_gbytes_per_s = 2039;
  a.busy_power_w = 400;
  a.idle_power_w = 60;  // nvidia-smi idle draw of an SXM4 A100, typical
  a.sm_count = 108;     // NVIDIA A100 Tensor Core GPU Architecture whitepaper: 108 SMs
  // NVLink 3 via NVSwitch: 600 GB/s per GPU both directions = 300 GB/s each way.
  p.network_levels.push_back(Level("nvlink", 8, 300, 3, Topology::kSwitch, 1));
  // HDR InfiniBand 200 Gb/s per GPU = 25 GB/s each way; three-level fat tree.
  p.network_levels.push_back(Level("infiniband", 0, 25, 5, Topology::kFatTree, 1));
  p.host.memory_gib = 2048;        // DGX A100: 2 TB system memory
  p.host.pcie_gbytes_per_s = 25;   // PCIe Gen4 x16: 32 GB/s raw, ~25 GB/s achieved
  p.host.cpu_cores = 128;          // DGX A100: 2x AMD EPYC 7742, 64 cores each
  p.storage.read_gbytes_per_s = 25;  // 8x NVMe U.2 internal storage (DGX A100 user guide)
  p.node_power_w = 3300;  // DGX A100 6.5 kW max minus 8 x 400 W GPUs
  p.price_per_gpu_hour_usd = 5.12;  // AWS p4de.24xlarge on-demand $40.97/h / 8 GPUs
  return p;
}

SystemProfile DgxH100() {
  SystemProfile p;
  p.name = "dgx-h100-80gb";
  p.description =
      "NVIDIA DGX H100 SuperPOD: 8x H100-SXM5-80GB per node, NVSwitch (NVLink 4), "
      "8x NDR InfiniBand per node, fat tree";
  p.gpus_per_node = 8;
  p.num_nodes = 2048;  // 16,384 GPUs: the scale of the Llama 3 405B run
  Accelerator& a = p.accelerator;
  a.name = "H100-SXM5-80GB";
  // NVIDIA H100 datasheet (SXM5): 989 TFLOP/s dense BF16/FP16, 1,979 FP8, 67 FP32,
  // 3.35 TB/s HBM3, up to 700 W.
  a.peak_tflops_bf16 = 989;
  a.peak_tflops_fp16 = 989;
  a.peak_tflops_fp8 = 1979;
  a.peak_tflops_fp32 = 67;
  a.memory_gib = 80;
  a.memory_bandwidth_gbytes_per_s = 3350;
  a.busy_power_w = 700;
  a.idle_power_w = 75;
  a.sm_count = 132;  // NVIDIA H100 Tensor Core GPU Architecture whitepaper: 132 SMs (SXM5)
  // H100 SXM5 does not hold its boost clock under a sustained tensor-core load: at the
  // 700 W cap, back-to-back 8192^3 BF16 GEMMs run at ~1,380 MHz and 688 TFLOP/s, 0.695
  // of the datasheet's 989 (measured for a minute: scripts/microbench/sustained_gemm.py,
  // docs/microbench/h100_sustained_gemm.txt). Single short GEMMs at boost clock reach
  // 0.80 (shared/data/h100_microbench/gemm.csv); a training job's run at the capped clock.
  // (The A100's boost is held far better.)
  p.calibration.matmul_efficiency = 0.69;
  // FP8 GEMMs sustained the same way (torch._scaled_mm, e4m3, per-tensor scales, bf16
  // out: sustained_gemm.py --fp8): 1,235 TFLOP/s at ~1,250 MHz, 0.624 of the 1,979 FP8
  // peak (docs/microbench/h100_sustained_fp8.txt, PyTorch 2.11, whose BF16 rerun gives
  // 685 = 0.692 as above). Argued as 0.60 before: 0.69 x the FP8 / BF16 ratio at boost.
  p.calibration.matmul_efficiency_fp8 = 0.62;
  // FlashAttention-2 via PyTorch SDPA on H100 SXM at long causal sequences (the rate its
  // fixed work per query tile leaves at short ones: hardware.h, attention_half_keys): 0.35
  // of the dense peak forward, 0.33 backward, a third of the peak (it does not use
  // Hopper's asynchronous tensor-core instructions). Fitted with the half keys (280, 700)
  // to 512-128 k tokens by scripts/microbench/fit_attention.py: shared/data/h100_microbench/
  // attention.csv (at 4 k: 318 and 238 TFLOP/s measured, 305 and 243 modelled),
  // docs/microbench/h100_long_attention.jsonl.
  p.calibration.attention_efficiency_fwd = 0.35;
  p.calibration.attention_efficiency_bwd = 0.33;
  // cuDNN's fused attention (SDPA's cuDNN backend, the kernel Transformer Engine runs on
  // Hopper) on the same H100, Llama 3 heads (scripts/microbench/long_attention.py,
  // docs/microbench/h100_long_attention.jsonl): fitted the same way to 2 k-64 k causal
  // tokens, whose runs last well under a second (boost clock), 0.61 forward and 0.55
  // backward at long sequences; at 128 k the runs last ~4 s, long enough to settle at
  // the 700 W cap, and reach 549 and 526 TFLOP/s: 0.56 and 0.54 of the peak once the
  // fixed work per query tile is taken off. Attention draws less power than the GEMMs,
  // which settle at 0.86 of their boost rate (above): it keeps 0.91 forward, 0.97 backward.
  p.calibration.cudnn_attention_efficiency_fwd = 0.56;
  p.calibration.cudnn_attention_efficiency_bwd = 0.54;
  // NVLink 4: 900 GB/s per GPU both directions = 450 GB/s each way.
  p.network_levels.push_back(Level("nvlink", 8, 450, 3, Topology::kSwitch, 1));
  // NDR InfiniBand 400 Gb/s per GPU = 50 GB/s each way.
  p.network_levels.push_back(Level("infiniband", 0, 50, 5, Topology::kFatTree, 1));
  p.host.memory_gib = 2048;       // DGX H100: 2 TB system memory
  // PCIe Gen5 x16: 64 GB/s raw. Measured on an H100 SXM host, pinned 1 GiB copies: 55.2
  // GB/s each way alone, 47.3 each way with both at once (scripts/microbench/
  // moe_layer_step.py, docs/microbench/h100_moe_layer_step.jsonl): offloading's out and
  // back run between the two.
  p.host.pcie_gbytes_per_s = 50;
  p.host.cpu_cores = 112;         // DGX H100: 2x Intel Xeon Platinum 8480C, 56 cores each
  p.storage.read_gbytes_per_s = 25;
  p.node_power_w = 4600;  // DGX H100 10.2 kW max minus 8 x 700 W GPUs
  p.price_per_gpu_hour_usd = 12.29;  // AWS p5.48xlarge on-demand $98.32/h / 8 GPUs
  // DeepEP's intra-node kernels run on Megatron-Core's 20 SMs (token_dispatcher.py,
  // set_deepep_num_sms(20)) and move less than NVLink 4 carries: on 8 H100s at 20 SMs 329
  // GB/s received dispatching, 287 combining (TileScale's DeepEP example README, 4,096
  // tokens of hidden 7,168, top-8); an H20 (the same NVLink) 337 at 24 (DeepEP issue 16).
  p.calibration.ep_dispatch_gbytes_per_s = 308;
  return p;
}

SystemProfile AbciV100() {
  SystemProfile p;
  p.name = "abci-v100-16gb";
  p.description =
      "ABCI (AIST) compute node (A): 4x V100-SXM2-16GB, NVLink 2, 2x EDR InfiniBand per "
      "node; full bisection inside a rack, 1:3 oversubscribed between racks";
  p.gpus_per_node = 4;
  p.num_nodes = 1088;  // ABCI 1.0: 1,088 compute nodes
  Accelerator& a = p.accelerator;
  a.name = "V100-SXM2-16GB";
  // NVIDIA V100 datasheet (SXM2): 125 TFLOP/s FP16 tensor, 15.7 FP32, 900 GB/s HBM2,
  // 300 W. No BF16: BF16 requests fall back to the FP16 rate.
  a.peak_tflops_bf16 = 0;
  a.peak_tflops_fp16 = 125;
  a.peak_tflops_fp8 = 0;
  a.peak_tflops_fp32 = 15.7;
  a.memory_gib = 16;
  a.memory_bandwidth_gbytes_per_s = 900;
  a.busy_power_w = 300;
  a.idle_power_w = 40;
  a.sm_count = 80;  // NVIDIA Tesla V100 GPU Architecture whitepaper: 80 SMs
  // NVLink 2: 6 links x 25 GB/s each way = 150 GB/s per GPU each way.
  p.network_levels.push_back(Level("nvlink", 4, 150, 3, Topology::kSwitch, 1));
  // 2x EDR (100 Gb/s) per 4 GPUs = 6.25 GB/s per GPU; 34 nodes per rack.
  p.network_levels.push_back(Level("rack", 136, 6.25, 5, Topology::kFatTree, 1));
  p.network_levels.push_back(Level("spine", 0, 6.25, 7, Topology::kFatTree, 3));
  p.host.memory_gib = 384;        // ABCI node (A): 384 GiB DDR4
  p.host.pcie_gbytes_per_s = 12;  // PCIe Gen3 x16: 16 GB/s raw
  p.host.cpu_cores = 40;          // ABCI node (A): 2x Intel Xeon Gold 6148, 20 cores each
  p.host.cpu_power_w = 300;       // Intel Xeon Gold 6148: 150 W TDP (ark.intel.com), two sockets
  // Node-local Intel SSD DC P4600 1.6 TB (ABCI user guide, compute node table); AIST's
  // fio sequential read on a compute node: 2,546 MB/s, one stream, 4 MiB direct reads
  // (github.com/aistabci/abci2.0benchmark, localssd/vnode/00-seqread.txt, 2021).
  // The shared GPFS / Lustre areas (3x DDN SFA14KX, 22 PB) publish no bandwidth: set
  // storage.shared_fs_gbytes_per_s for the file system a job reads from.
  p.storage.read_gbytes_per_s = 2.5;
  // The CNN stack measured on this cluster (ChainerMN with ParaDL's spatial, filter and
  // channel functions, Kahira et al. HPDC'21) moves halos, gathers and a spatial group's
  // samples through host memory by MPI (chainermn's send / recv / allgather, its
  // multi-node iterator).
  p.calibration.halo_host_staged = true;
  // Its loaders are Chainer's MultithreadIterator, 20 threads inside each training process:
  // Python and numpy augmentation under the interpreter lock keep about one core busy.
  p.calibration.loader_cores_per_process = 1;
  p.node_power_w = 600;  // 2x Xeon Gold 6148 (2 x 150 W) + memory, NICs, fans
  p.price_per_gpu_hour_usd = 3.06;  // AWS p3.8xlarge (4x V100 16GB) $12.24/h / 4
  return p;
}

// Hopper with HBM3e: the GH100 die of the H100 SXM5, same clocks and 700 W cap, in the
// same DGX node and fabric (8x ConnectX-7 NDR, NVSwitch, 2x Xeon 8480C, 2 TB, NVMe), so
// everything but the memory, the price and what was measured on an H200 is
// dgx-h100-80gb's. Measured on one H200 SXM (scripts/microbench/gpu_profile.sh, PyTorch
// 2.11; docs/microbench/h200_*): attention runs as on the H100 (cuDNN 552 / 527 TFLOP/s,
// FlashAttention-2 326 / 323 at 128 k tokens: the H100's 0.56 / 0.54 and 0.35 / 0.33
// hold); short GEMMs at boost clock fit as the H100's sweep does (fit-gemm --dry-run:
// 0.71, FP8 0.63 on both); the rest differs, below.
SystemProfile DgxH200() {
  SystemProfile p = DgxH100();
  Calibration& c = p.calibration;
  // Sustained 8192^3 GEMMs under the same 700 W cap: BF16 659 TFLOP/s (0.667 of 989), FP8
  // 1,198 (0.605 of 1,979), each 3-4 % under the H100's in the same PyTorch
  // (h200_sustained_gemm.txt against h100_sustained_fp8.txt): HBM3e takes more of the cap.
  c.matmul_efficiency = 0.67;
  c.matmul_efficiency_fp8 = 0.60;
  // Memory-bound kernels (layer norm, GELU, softmax, dropout, forward and backward: the
  // same PyTorch's kernels on each GPU, memory_bound_backward.py) take 0.81 of the H100's
  // time (geometric mean; h200_memory_bound_backward.csv against
  // h100_memory_bound_backward_pt211.csv), where 4.8 over 3.35 TB/s would give 0.70; a 1 GiB
  // device copy reaches 4,090 GB/s (0.85 of peak; the H100 2,979, 0.89). The H100's 0.70
  // of 3.35 TB/s over 0.81 is 0.60 of 4.8. A whole MoE layer's (moe_layer_step.py,
  // h200_moe_layer_step.jsonl) take 0.84, the un-permute's atomics and RoPE aside.
  c.memory_bound_efficiency = 0.60;
  // Attention's fixed work per query tile (hardware.h attention_half_keys) fitted on the
  // H200 (fit_attention.py h200_long_attention.jsonl): 226 / 536 keys, where scaling the
  // H100's by FLOP per HBM byte (206 against 295) gives 196 / 489.
  c.attention_half_keys_fwd = 226;
  c.attention_half_keys_bwd = 536;
  p.name = "dgx-h200-141gb";
  p.description =
      "NVIDIA DGX H200 SuperPOD: 8x H200-SXM-141GB per node, NVSwitch (NVLink 4), "
      "8x NDR InfiniBand per node, fat tree";
  p.num_nodes = 2048;  // 16,384 GPUs: the scale of dgx-h100-80gb, so the two compare
  Accelerator& a = p.accelerator;
  a.name = "H200-SXM-141GB";
  // NVIDIA H200 datasheet (SXM): 1,979 TFLOP/s BF16/FP16 and 3,958 FP8 with sparsity, i.e.
  // 989 and 1,979 dense (the H100 SXM's compute); 67 FP32; 141 GB HBM3e at 4.8 TB/s; 700 W.
  a.memory_gib = 141;
  a.memory_bandwidth_gbytes_per_s = 4800;
  // AWS p5en.48xlarge (8x H200) on-demand $63.296/h, us-east-1 (instances.vantage.sh;
  // dstack PR #4110, 2026) / 8. dgx-h100-80gb's $98.32/h p5 price predates AWS's June 2025
  // cut (p5.48xlarge is $55.04/h now), so the two are not like for like.
  p.price_per_gpu_hour_usd = 7.91;
  return p;
}

// First Blackwell. The datasheets quote tensor throughput with 2:4 sparsity; the dense
// peaks below are half of it.
// Calibration stays zero: no Blackwell measurement exists here, so hardware.h's physical
// defaults apply (matmul 0.75 of peak, FP8 as BF16, memory-bound 0.70, network 0.80).
// OpenXLA's cuBLAS table for sm_100 agrees on BF16 (4 x 4096^3: 1,670 TFLOP/s, 0.74 of
// peak; the model reads 0.83-1.09 of it over 12 shapes: hardware_test.cc) at benchmark
// clocks; whether a B200 sustains them under a training load as an H100 does not (0.69,
// docs/accuracy.md) is unmeasured.
SystemProfile DgxB200() {
  SystemProfile p;
  p.name = "dgx-b200-180gb";
  p.description =
      "NVIDIA DGX B200 SuperPOD: 8x B200 (180 GB) per node, NVSwitch (NVLink 5), "
      "8x NDR InfiniBand per node, fat tree";
  p.gpus_per_node = 8;
  p.num_nodes = 2048;  // 16,384 GPUs: the scale of dgx-h100-80gb
  Accelerator& a = p.accelerator;
  a.name = "B200-SXM-180GB";
  // NVIDIA HGX B200 datasheet, per GPU with sparsity: 4.5 PFLOP/s FP16/BF16, 9 FP8, 18 FP4
  // (DGX B200: 72 PFLOP/s FP8 training, 144 FP4 inference for 8 GPUs); dense = half.
  a.peak_tflops_bf16 = 2250;
  a.peak_tflops_fp16 = 2250;
  a.peak_tflops_fp8 = 4500;
  a.peak_tflops_fp4 = 9000;  // dense (18 PFLOP/s sparse / 2)
  a.peak_tflops_fp32 = 75;   // HGX B200 datasheet: 75 TFLOP/s FP32
  // DGX B200 user guide: 1,440 GB for 8 GPUs (192 GB on the package, 180 GB usable).
  a.memory_gib = 180;
  // HGX B200 datasheet: 7.7 TB/s (the DGX B200 page's 64 TB/s / 8 rounds it to 8); the
  // driver reports a 7,680-bit bus at 3,996 MHz DDR = 7.67 TB/s (pytorch/ao PR #4002).
  a.memory_bandwidth_gbytes_per_s = 7700;
  a.busy_power_w = 1000;  // HGX B200 datasheet: configurable up to 1,000 W
  // nvidia-smi of idle B200s in P0 (0 % utilisation, memory allocated): 192-196 W
  // (NVIDIA/TensorRT-LLM issue #10278, 2025).
  a.idle_power_w = 190;
  // 74 of 80 SMs enabled on each of the two dies (Chips and Cheese, "Nvidia's B200:
  // Keeping the CUDA Juggernaut Rolling", 2025); a device query reports 148 (pytorch/ao
  // PR #4002). NVIDIA's datasheets do not state it.
  a.sm_count = 148;
  // NVLink 5: 1.8 TB/s per GPU both directions = 900 GB/s each way; DGX B200: 2 NVSwitch
  // chips, 14.4 TB/s aggregate for the 8-GPU domain.
  p.network_levels.push_back(Level("nvlink", 8, 900, 3, Topology::kSwitch, 1));
  // DGX B200: 8x ConnectX-7, NDR InfiniBand 400 Gb/s per GPU = 50 GB/s each way.
  p.network_levels.push_back(Level("infiniband", 0, 50, 5, Topology::kFatTree, 1));
  p.host.memory_gib = 2048;       // DGX B200 user guide: 2 TB (upgradable to 4 TB)
  p.host.pcie_gbytes_per_s = 50;  // PCIe Gen5 x16: 64 GB/s raw
  p.host.cpu_cores = 112;         // DGX B200: 2x Intel Xeon Platinum 8570, 56 cores each
  p.storage.read_gbytes_per_s = 25;  // 8x 3.84 TB NVMe U.2 in RAID 0, as DGX H100
  p.node_power_w = 6300;  // DGX B200 user guide: 14.3 kW max, minus 8 x 1,000 W GPUs
  // AWS p6-b200.48xlarge on-demand $113.9328/h, us-east-1 (instances.vantage.sh) / 8.
  p.price_per_gpu_hour_usd = 14.24;
  // Megatron-Core's flex dispatcher on Blackwell runs HybridEP (TMA copies on 16 SMs):
  // 8 B200s, 4,096 tokens of hidden 7,168, top-8, BF16: 536 GB/s received dispatching,
  // 531 combining (DeepEP docs/README_Hybrid-EP.md, "Torch API"); DeepEP's own kernels
  // reach 513 / 426 at 24 SMs on 8 GB200s (the same README).
  p.calibration.ep_dispatch_gbytes_per_s = 533;
  return p;
}

// Blackwell Ultra: 12-high HBM3e stacks and 1.5x the FP4 of B200, but the same dense
// BF16 and FP8 in the HGX/DGX part. Calibration zero, as for B200.
SystemProfile DgxB300() {
  SystemProfile p;
  p.name = "dgx-b300-288gb";
  p.description =
      "NVIDIA DGX B300 SuperPOD: 8x B300 (Blackwell Ultra) per node, NVSwitch (NVLink 5), "
      "8x ConnectX-8 800 Gb/s per node, fat tree";
  p.gpus_per_node = 8;
  p.num_nodes = 2048;  // 16,384 GPUs: the scale of dgx-h100-80gb
  Accelerator& a = p.accelerator;
  a.name = "B300-SXM6";
  // DGX B300 datasheet, 8 GPUs: 144 PFLOP/s FP4 sparse | 108 dense, 72 FP8 (sparse); HGX
  // B300: 4.5 PFLOP/s FP16/BF16 per GPU with sparsity. Dense per GPU: BF16 2.25 and FP8 4.5
  // PFLOP/s, B200's own (only FP4 rose).
  a.peak_tflops_bf16 = 2250;
  a.peak_tflops_fp16 = 2250;
  a.peak_tflops_fp8 = 4500;
  a.peak_tflops_fp4 = 13500;  // dense (108 PFLOP/s / 8; ~14 per GPU)
  a.peak_tflops_fp32 = 75;   // HGX B300 datasheet: 75 TFLOP/s FP32
  // 288 GB of HBM3e on the package (8 x 12-high stacks; DGX B300: 2.3 TB for 8), of
  // which the HGX B300 datasheet lists 270 GB usable (MLPerf: "B300-SXM-270GB").
  a.memory_gib = 270;
  a.memory_bandwidth_gbytes_per_s = 7700;  // HGX B300 datasheet: 7.7 TB/s
  a.busy_power_w = 1100;                   // HGX B300 datasheet: configurable up to 1,100 W
  a.idle_power_w = 190;                    // B200's idle draw carried over; not measured
  // "Inside NVIDIA Blackwell Ultra" (NVIDIA technical blog, 2025): 160 SMs, 640 tensor
  // cores in the full GPU; how many the shipping part enables is not stated there.
  a.sm_count = 160;
  // NVLink 5: 900 GB/s each way per GPU in the 8-GPU NVSwitch domain.
  p.network_levels.push_back(Level("nvlink", 8, 900, 3, Topology::kSwitch, 1));
  // DGX B300: 8x ConnectX-8 SuperNIC, 800 Gb/s per GPU = 100 GB/s each way.
  p.network_levels.push_back(Level("infiniband", 0, 100, 5, Topology::kFatTree, 1));
  p.host.memory_gib = 2048;  // DGX B300: 2 TB system memory (commonly listed; up to 4 TB)
  // The Xeon 6 root ports are PCIe Gen5 (the GPUs hang off ConnectX-8's Gen6 switch).
  p.host.pcie_gbytes_per_s = 50;
  p.host.cpu_cores = 128;            // DGX B300: 2x Intel Xeon 6776P, 64 cores each
  p.storage.read_gbytes_per_s = 25;  // local NVMe as in the other DGX profiles
  p.node_power_w = 5700;  // DGX B300 14.5 kW (as quoted from NVIDIA's DGX docs) - 8 x 1,100 W
  // Neither AWS (p6-b300) nor CoreWeave (contact sales) publishes an on-demand rate;
  // Hyperstack's on-demand B300 list price, hyperstack.cloud/gpu-pricing (read 2026-08).
  p.price_per_gpu_hour_usd = 7.40;
  // Blackwell Ultra's softmax units (above): x (2,250 / 160) / 7.49 / 2 = 0.9384.
  p.calibration.attention_softmax_head_dim_fwd = 20.6;
  p.calibration.attention_softmax_head_dim_bwd = 20.6;
  p.calibration.cudnn_attention_softmax_head_dim_fwd = 65.7;
  p.calibration.cudnn_attention_softmax_head_dim_bwd = 34.7;
  p.calibration.ep_dispatch_gbytes_per_s = 533;  // HybridEP on 8 Blackwell GPUs, as DGX B200
  return p;
}

// GB200 NVL72: 18 compute trays (the "nodes": 2 Grace CPUs + 4 Blackwell GPUs each) and 9
// NVLink switch trays make one 72-GPU NVLink domain per rack; between racks one NIC per
// GPU on InfiniBand. The first network level spans 18 nodes, which collectives and
// placement handle (domains are counted in GPUs). Per-GPU figures are the rack's / 72.
SystemProfile Gb200Nvl72() {
  SystemProfile p;
  p.name = "gb200-nvl72";
  p.description =
      "NVIDIA GB200 NVL72 racks: 18 trays of 2 Grace + 4 Blackwell GPUs, one 72-GPU NVLink 5 "
      "domain per rack, 1x ConnectX-7 400 Gb/s per GPU, InfiniBand fat tree between racks";
  p.gpus_per_node = 4;
  // 228 racks x 18 trays = 16,416 GPUs: the fewest whole racks that hold dgx-h100-80gb's
  // 16,384.
  p.num_nodes = 4104;
  Accelerator& a = p.accelerator;
  a.name = "B200 (GB200 NVL72)";
  // GB200 NVL72 datasheet, per rack with sparsity: 1,440 PFLOP/s FP4, 720 FP8/FP6, 360
  // FP16/BF16; / 72 / 2 = dense 10, 5 and 2.5 PFLOP/s per GPU (1,200 W parts, ~11 % above
  // HGX B200; the Blackwell technical brief's dense rack table agrees). FP32 5,760 / 72.
  a.peak_tflops_bf16 = 2500;
  a.peak_tflops_fp16 = 2500;
  a.peak_tflops_fp8 = 5000;
  a.peak_tflops_fp4 = 10000;  // dense (1,440 PFLOP/s sparse / 72 / 2)
  a.peak_tflops_fp32 = 80;
  a.memory_gib = 186;                      // datasheet: up to 13.4 TB HBM3e / 72 = 186 GB
  a.memory_bandwidth_gbytes_per_s = 8000;  // datasheet: 576 TB/s / 72
  a.busy_power_w = 1200;  // GB200 per-GPU spec: configurable up to 1,200 W
  a.idle_power_w = 190;   // B200's idle draw carried over; not measured
  a.sm_count = 148;       // assumed as B200 (148); NVIDIA does not publish it for GB200
  // NVLink 5 switch system: 900 GB/s each way per GPU to all 72 (130 TB/s = 72 x 1.8 TB/s).
  p.network_levels.push_back(Level("nvlink", 72, 900, 3, Topology::kSwitch, 1));
  // One ConnectX-7 per GPU, NDR InfiniBand 400 Gb/s = 50 GB/s each way.
  p.network_levels.push_back(Level("infiniband", 0, 50, 5, Topology::kFatTree, 1));
  // Per tray: 2 Grace CPUs with 480 GB LPDDR5X each (CoreWeave's 4-GPU GB200 instance:
  // 960 GB RAM, 144 vCPUs) and 72 Arm Neoverse V2 cores each.
  p.host.memory_gib = 960;
  p.host.cpu_cores = 144;
  // NVLink-C2C, 900 GB/s both directions per Grace, shared by its two GPUs: 225 GB/s each
  // way per GPU when both move data at once (nominal; the even split is an assumption).
  p.host.pcie_gbytes_per_s = 225;
  p.storage.read_gbytes_per_s = 25;  // 8x 3.84 TB E1.S NVMe per tray (CoreWeave: 30.72 TB)
  // ~120 kW per rack (commonly reported) minus 72 x 1,200 W GPUs, over 18 trays: Grace,
  // NICs and DPUs, and each tray's share of the switch trays, pumps and power shelves.
  p.node_power_w = 1870;
  p.price_per_gpu_hour_usd = 10.50;  // CoreWeave GB200 NVL72 on-demand $42.00/h per 4 GPUs
  // HybridEP across the NVLink domain (DeepEP's own intra-node kernels stop at a tray's 4
  // GPUs; HybridEP spans the rack) at the 32 SMs Megatron-Bridge's performance recipes
  // give it (perf_recipes/_common.py, moe_hybridep_num_sms = 32): on 8, 16, 24, 32 and 36
  // GB200s, BF16 dispatch 546, 523, 507, 484, 479 GB/s received, combine 569, 522, 484,
  // 465, 448 (DeepEP docs/README_Hybrid-EP.md, "Torch API"): 503 the mean.
  p.calibration.ep_dispatch_gbytes_per_s = 503;
  return p;
}

// GB300 NVL72: the same rack with Blackwell Ultra GPUs at up to 1,400 W, ConnectX-8.
SystemProfile Gb300Nvl72() {
  SystemProfile p;
  p.name = "gb300-nvl72";
  p.description =
      "NVIDIA GB300 NVL72 racks: 18 trays of 2 Grace + 4 Blackwell Ultra GPUs, one 72-GPU "
      "NVLink 5 domain per rack, 1x ConnectX-8 800 Gb/s per GPU, fat tree between racks";
  p.gpus_per_node = 4;
  p.num_nodes = 4104;  // 228 racks, as gb200-nvl72
  Accelerator& a = p.accelerator;
  a.name = "B300 (GB300 NVL72)";
  // GB300 NVL72 datasheet, per rack: FP4 1,440 PFLOP/s sparse | 1,080 dense; FP8/FP6 720
  // and FP16/BF16 360 with sparsity. Dense per GPU: 15 PFLOP/s FP4 (NVIDIA's Blackwell
  // Ultra blog: 15 dense NVFP4), 5 FP8, 2.5 BF16: GB200's BF16 and FP8.
  a.peak_tflops_bf16 = 2500;
  a.peak_tflops_fp16 = 2500;
  a.peak_tflops_fp8 = 5000;
  a.peak_tflops_fp4 = 15000;  // dense (1,080 PFLOP/s / 72)
  a.peak_tflops_fp32 = 80;   // per-GPU tables: 80 (the rack's "6 PFLOP/s" / 72 = 83)
  // 288 GB on the package (20.7 TB per rack, the 21 TB of early datasheets); the current
  // datasheet lists 279 GB per GPU, "up to 20 TB" per rack.
  a.memory_gib = 279;
  a.memory_bandwidth_gbytes_per_s = 8000;  // datasheet: 576 TB/s / 72
  a.busy_power_w = 1400;  // GB300 per-GPU spec: configurable up to 1,400 W
  a.idle_power_w = 190;   // B200's idle draw carried over; not measured
  a.sm_count = 160;       // as dgx-b300-288gb (NVIDIA's Blackwell Ultra blog: 160 SMs)
  p.network_levels.push_back(Level("nvlink", 72, 900, 3, Topology::kSwitch, 1));
  // 72 ConnectX-8 SuperNICs per rack, 800 Gb/s per GPU = 100 GB/s each way.
  p.network_levels.push_back(Level("infiniband", 0, 100, 5, Topology::kFatTree, 1));
  // Per tray: 2 Grace CPUs (datasheet: up to 17 TB LPDDR5X for 36, ~480 GB each).
  p.host.memory_gib = 960;
  p.host.cpu_cores = 144;
  p.host.pcie_gbytes_per_s = 225;  // NVLink-C2C, as gb200-nvl72
  p.storage.read_gbytes_per_s = 25;
  // 132-140 kW per rack (Supermicro's range; Microsoft ~136 kW), ~135 kW minus 72 x
  // 1,400 W GPUs, over 18 trays.
  p.node_power_w = 1900;
  // No on-demand GB300 rate is published (CoreWeave lists GB300 NVL72 as "contact
  // sales"): priced as gb200-nvl72 (CoreWeave $42/h per 4-GPU tray), a lower bound —
  // cost rankings between the two racks compare speed only. Give the contract rate with
  // `--set price_per_gpu_hour_usd=...` or a stored profile.
  p.price_per_gpu_hour_usd = 10.50;
  // Blackwell Ultra's softmax units (above): x (2,500 / 160) / 7.49 / 2 = 1.0427.
  p.calibration.attention_softmax_head_dim_fwd = 22.9;
  p.calibration.attention_softmax_head_dim_bwd = 22.9;
  p.calibration.cudnn_attention_softmax_head_dim_fwd = 73.0;
  p.calibration.cudnn_attention_softmax_head_dim_bwd = 38.6;
  p.calibration.ep_dispatch_gbytes_per_s = 503;  // HybridEP across the rack, as GB200 NVL72
  return p;
}

}  // namespace

std::vector<SystemProfile> BuiltinProfiles() {
  return {DgxA100(), DgxH100(), AbciV100(), DgxH200(), DgxB200(), DgxB300(), Gb200Nvl72(),
          Gb300Nvl72()};
}

}  // namespace paraplan
