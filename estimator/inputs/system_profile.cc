#include "estimator/inputs/system_profile.h"

#include <algorithm>
#include <cmath>

namespace paraplan {

double Accelerator::PeakTflops(Precision p) const {
  switch (p) {
    case Precision::kBf16:
      return peak_tflops_bf16 > 0 ? peak_tflops_bf16 : peak_tflops_fp16;
    case Precision::kFp16:
      return peak_tflops_fp16 > 0 ? peak_tflops_fp16 : peak_tflops_bf16;
    case Precision::kFp8:
      if (peak_tflops_fp8 > 0) return peak_tflops_fp8;
      return peak_tflops_bf16 > 0 ? peak_tflops_bf16 : peak_tflops_fp16;
    case Precision::kFp32:
      return peak_tflops_fp32;
    case Precision::kFp4:
      return peak_tflops_fp4 > 0 ? peak_tflops_fp4 : PeakTflops(Precision::kFp8);
  }
  return 0;
}

double Accelerator::ClockScale() const {
  if (!(power_limit_w > 0) || !(busy_power_w > 0) || power_limit_w >= busy_power_w) return 1;
  // The idle draw (static leakage, memory refresh, board) does not follow the clock; only
  // what lies above it does. A profile whose idle draw is not below both is taken whole.
  const double floor = idle_power_w > 0 && idle_power_w < power_limit_w ? idle_power_w : 0;
  return std::cbrt((power_limit_w - floor) / (busy_power_w - floor));
}

double Accelerator::BusyPowerW() const {
  return power_limit_w > 0 && power_limit_w < busy_power_w ? power_limit_w : busy_power_w;
}

int64_t ResolvedDomainSize(const SystemProfile& profile, size_t i) {
  const int64_t cluster = std::max<int64_t>(1, profile.NumGpus());
  const NetworkLevel& l = profile.network_levels[i];
  if (l.domain_size > 0) return l.domain_size;
  const bool last = i + 1 == profile.network_levels.size();
  if (last || l.switch_radix <= 0 || i == 0) return cluster;
  // A switch with r:1 taper to the next level splits its ports r : 1 between down- and
  // uplinks (Leiserson 1985 fat trees; Al-Fares et al. SIGCOMM'08 for k-ary ones).
  const double taper = std::max(1.0, profile.network_levels[i + 1].oversubscription);
  const int64_t down = static_cast<int64_t>(std::floor(l.switch_radix * taper / (taper + 1)));
  const int64_t below = ResolvedDomainSize(profile, i - 1);
  const int gpn = std::max(1, profile.gpus_per_node);
  int64_t domain;
  if (below <= gpn) {
    // Leaf: one NIC per GPU. A rail-optimised leaf takes the same local rank of `down`
    // nodes (NVIDIA DGX SuperPOD: eight rails), an ordinary one `down` GPUs.
    domain = l.rail_optimized ? down * gpn : down / gpn * gpn;
  } else {
    domain = down * below;  // each lower domain sends one uplink to every switch here
  }
  return std::clamp<int64_t>(domain, below + 1, cluster);
}

}  // namespace paraplan
