// Built-in system profiles from vendor specifications. Calibration is left zero, so
// the physical defaults of hardware.h apply until measurements are ingested.
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
  // FP8 GEMMs (torch._scaled_mm) reach 0.69 of the FP8 peak at best where BF16 reaches
  // 0.80 of its own on the same H100 (shared/data/h100_microbench/gemm.csv): 0.69 x 0.86.
  p.calibration.matmul_efficiency_fp8 = 0.60;
  // FlashAttention-2 via PyTorch SDPA on H100 SXM reaches ~330 TFLOP/s forward and
  // ~280 backward at 4k-32k causal sequences, a third of the dense peak (it does not use
  // Hopper's asynchronous tensor-core instructions): shared/data/h100_microbench/attention.csv.
  p.calibration.attention_efficiency_fwd = 0.33;
  p.calibration.attention_efficiency_bwd = 0.28;
  // NVLink 4: 900 GB/s per GPU both directions = 450 GB/s each way.
  p.network_levels.push_back(Level("nvlink", 8, 450, 3, Topology::kSwitch, 1));
  // NDR InfiniBand 400 Gb/s per GPU = 50 GB/s each way.
  p.network_levels.push_back(Level("infiniband", 0, 50, 5, Topology::kFatTree, 1));
  p.host.memory_gib = 2048;       // DGX H100: 2 TB system memory
  p.host.pcie_gbytes_per_s = 50;  // PCIe Gen5 x16: 64 GB/s raw
  p.host.cpu_cores = 112;         // DGX H100: 2x Intel Xeon Platinum 8480C, 56 cores each
  p.storage.read_gbytes_per_s = 25;
  p.node_power_w = 4600;  // DGX H100 10.2 kW max minus 8 x 700 W GPUs
  p.price_per_gpu_hour_usd = 12.29;  // AWS p5.48xlarge on-demand $98.32/h / 8 GPUs
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
  // Node-local Intel SSD DC P4600 1.6 TB (ABCI user guide, compute node table); AIST's
  // fio sequential read on a compute node: 2,546 MB/s, one stream, 4 MiB direct reads
  // (github.com/aistabci/abci2.0benchmark, localssd/vnode/00-seqread.txt, 2021).
  // The shared GPFS / Lustre areas (3x DDN SFA14KX, 22 PB) publish no bandwidth: set
  // storage.shared_fs_gbytes_per_s for the file system a job reads from.
  p.storage.read_gbytes_per_s = 2.5;
  p.node_power_w = 600;  // 2x Xeon Gold 6148 (2 x 150 W) + memory, NICs, fans
  p.price_per_gpu_hour_usd = 3.06;  // AWS p3.8xlarge (4x V100 16GB) $12.24/h / 4
  return p;
}

}  // namespace

std::vector<SystemProfile> BuiltinProfiles() { return {DgxA100(), DgxH100(), AbciV100()}; }

}  // namespace paraplan
