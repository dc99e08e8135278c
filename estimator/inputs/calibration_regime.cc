#include "estimator/inputs/calibration_regime.h"

#include <utility>

#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"

namespace paraplan {

int RegimeLevel(const SystemProfile& profile, int64_t num_gpus) {
  if (num_gpus <= 1 || profile.network_levels.empty()) return -1;
  const int levels = static_cast<int>(profile.network_levels.size());
  for (int i = 0; i < levels; ++i) {
    if (num_gpus <= ResolvedDomainSize(profile, i)) return i;
  }
  return levels - 1;
}

std::string RegimeName(const SystemProfile& profile, int level) {
  if (level < 0 || level >= static_cast<int>(profile.network_levels.size())) return kSingleGpuRegime;
  return profile.network_levels[level].name;
}

int RegimeLevelOf(const SystemProfile& profile, absl::string_view regime) {
  if (regime == kSingleGpuRegime) return -1;
  for (size_t i = 0; i < profile.network_levels.size(); ++i) {
    if (profile.network_levels[i].name == regime) return static_cast<int>(i);
  }
  return -2;
}

std::string DescribeRegime(const SystemProfile& profile, int level) {
  if (level < 0) return "one GPU";
  if (level == 0) return absl::StrCat("within one ", RegimeName(profile, 0), " domain");
  return absl::StrCat("across ", RegimeName(profile, level));
}

double* CalibrationField(Calibration& c, absl::string_view parameter) {
  static constexpr std::pair<const char*, double Calibration::*> kScalars[] = {
      {"matmul_efficiency", &Calibration::matmul_efficiency},
      {"matmul_efficiency_fp8", &Calibration::matmul_efficiency_fp8},
      {"matmul_half_efficiency_gflop", &Calibration::matmul_half_efficiency_gflop},
      {"memory_bound_efficiency", &Calibration::memory_bound_efficiency},
      {"overlap_efficiency", &Calibration::overlap_efficiency},
      {"iteration_overhead_s", &Calibration::iteration_overhead_s},
      {"kernel_overhead_us", &Calibration::kernel_overhead_us},
      {"recompute_overhead_us", &Calibration::recompute_overhead_us},
      {"attention_efficiency_fwd", &Calibration::attention_efficiency_fwd},
      {"attention_efficiency_bwd", &Calibration::attention_efficiency_bwd},
      {"cudnn_attention_efficiency_fwd", &Calibration::cudnn_attention_efficiency_fwd},
      {"cudnn_attention_efficiency_bwd", &Calibration::cudnn_attention_efficiency_bwd},
      {"attention_half_keys_fwd", &Calibration::attention_half_keys_fwd},
      {"attention_half_keys_bwd", &Calibration::attention_half_keys_bwd},
      {"attention_softmax_head_dim_fwd", &Calibration::attention_softmax_head_dim_fwd},
      {"attention_softmax_head_dim_bwd", &Calibration::attention_softmax_head_dim_bwd},
      {"cudnn_attention_softmax_head_dim_fwd", &Calibration::cudnn_attention_softmax_head_dim_fwd},
      {"cudnn_attention_softmax_head_dim_bwd", &Calibration::cudnn_attention_softmax_head_dim_bwd},
      {"collective_overhead_us", &Calibration::collective_overhead_us},
      {"memory_overhead_fraction", &Calibration::memory_overhead_fraction},
      {"expandable_segments_overhead_fraction", &Calibration::expandable_segments_overhead_fraction},
      {"memory_overhead_gib", &Calibration::memory_overhead_gib},
      {"host_staging_efficiency", &Calibration::host_staging_efficiency},
      {"ep_overlap_efficiency", &Calibration::ep_overlap_efficiency},
      {"rank_speed_spread", &Calibration::rank_speed_spread},
      {"halo_exchange_latency_us", &Calibration::halo_exchange_latency_us},
      {"jpeg_decode_mpixels_per_core_s", &Calibration::jpeg_decode_mpixels_per_core_s},
      {"hdf5_read_gbytes_per_core_s", &Calibration::hdf5_read_gbytes_per_core_s},
      {"shared_fs_files_per_s", &Calibration::shared_fs_files_per_s},
      {"loader_cores_per_process", &Calibration::loader_cores_per_process},
      {"sample_handover_gbytes_per_s", &Calibration::sample_handover_gbytes_per_s},
      {"ep_dispatch_gbytes_per_s", &Calibration::ep_dispatch_gbytes_per_s},
  };
  for (const auto& [name, field] : kScalars) {
    if (parameter == name) return &(c.*field);
  }
  // network.<level>.<field>
  if (!absl::ConsumePrefix(&parameter, "network.")) return nullptr;
  const size_t dot = parameter.rfind('.');
  if (dot == absl::string_view::npos || dot == 0) return nullptr;
  const absl::string_view level = parameter.substr(0, dot);
  const absl::string_view field = parameter.substr(dot + 1);
  double NetworkCalibration::*member = nullptr;
  if (field == "efficiency") member = &NetworkCalibration::efficiency;
  if (field == "latency_us") member = &NetworkCalibration::latency_us;
  if (field == "congestion") member = &NetworkCalibration::congestion;
  if (member == nullptr) return nullptr;
  for (NetworkCalibration& n : c.network) {
    if (n.level == level) return &(n.*member);
  }
  NetworkCalibration added;
  added.level = std::string(level);
  c.network.push_back(std::move(added));
  return &(c.network.back().*member);
}

const RegimeCalibration* ApplicableRegime(const SystemProfile& profile, int level) {
  const RegimeCalibration* best = nullptr;
  int best_level = 1 << 30;
  for (const RegimeCalibration& r : profile.calibration.regimes) {
    const int l = RegimeLevelOf(profile, r.regime);
    if (r.values.empty() || l < level || l >= best_level) continue;
    best = &r;
    best_level = l;
  }
  return best;
}

const RegimeCalibration* NearestMeasuredRegime(const SystemProfile& profile, int level) {
  const RegimeCalibration* wider = nullptr;
  const RegimeCalibration* narrower = nullptr;
  int wider_level = 1 << 30, narrower_level = -3;
  for (const RegimeCalibration& r : profile.calibration.regimes) {
    const int l = RegimeLevelOf(profile, r.regime);
    if (l < -1 || r.num_measurements <= 0) continue;
    if (l >= level && l < wider_level) {
      wider = &r;
      wider_level = l;
    }
    if (l < level && l > narrower_level) {
      narrower = &r;
      narrower_level = l;
    }
  }
  return wider != nullptr ? wider : narrower;
}

Calibration CalibrationFor(const SystemProfile& profile, int64_t num_gpus) {
  if (num_gpus <= 0 || profile.calibration.regimes.empty()) return profile.calibration;
  const RegimeCalibration* r = ApplicableRegime(profile, RegimeLevel(profile, num_gpus));
  if (r == nullptr) return profile.calibration;
  Calibration c = profile.calibration;
  for (const RegimeValue& v : r->values) {
    if (double* f = CalibrationField(c, v.parameter)) *f = v.value;
  }
  return c;
}

}  // namespace paraplan
