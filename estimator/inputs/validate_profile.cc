#include "estimator/inputs/validate.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "estimator/inputs/calibration_regime.h"
#include "estimator/inputs/status_macros.h"
#include "estimator/inputs/validate_fields.h"

namespace paraplan {

using namespace validate;  // NOLINT: the shared field checks

namespace {

// The calibration's values (profile-wide, or with a regime's values in place).
absl::Status ValidateCalibrationValues(const Calibration& c) {
  // Shares of a peak: 0 (the default) or within [kMinEfficiency, 1].
  for (auto [name, v] : {std::pair{"matmul_efficiency", c.matmul_efficiency},
                         {"matmul_efficiency_fp8", c.matmul_efficiency_fp8},
                         {"memory_bound_efficiency", c.memory_bound_efficiency},
                         {"overlap_efficiency", c.overlap_efficiency},
                         {"attention_efficiency_fwd", c.attention_efficiency_fwd},
                         {"attention_efficiency_bwd", c.attention_efficiency_bwd},
                         {"cudnn_attention_efficiency_fwd", c.cudnn_attention_efficiency_fwd},
                         {"cudnn_attention_efficiency_bwd", c.cudnn_attention_efficiency_bwd},
                         {"host_staging_efficiency", c.host_staging_efficiency},
                         {"ep_overlap_efficiency", c.ep_overlap_efficiency}}) {
    PARAPLAN_RETURN_IF_ERROR(InRange(absl::StrCat("profile.calibration.", name), v, kMinEfficiency, 1.0, true));
  }
  for (auto [name, v, max] : {std::tuple{"matmul_half_efficiency_gflop", c.matmul_half_efficiency_gflop, 1e6},
                              {"matmul_pipeline_depth", c.matmul_pipeline_depth, 1e5},
                              {"iteration_overhead_s", c.iteration_overhead_s, 1e4},
                              {"kernel_overhead_us", c.kernel_overhead_us, 1e6},
                              {"recompute_overhead_us", c.recompute_overhead_us, 1e7},
                              {"memory_overhead_fraction", c.memory_overhead_fraction, 1.0},
                              {"rank_speed_spread", c.rank_speed_spread, 0.5},
                              {"expandable_segments_overhead_fraction", c.expandable_segments_overhead_fraction, 1.0},
                              {"memory_overhead_gib", c.memory_overhead_gib, 1e4},
                              {"collective_overhead_us", c.collective_overhead_us, 1e6},
                              {"halo_exchange_latency_us", c.halo_exchange_latency_us, 1e7},
                              {"attention_half_keys_fwd", c.attention_half_keys_fwd, 1e6},
                              {"attention_half_keys_bwd", c.attention_half_keys_bwd, 1e6},
                              {"attention_softmax_head_dim_fwd", c.attention_softmax_head_dim_fwd, 1e4},
                              {"attention_softmax_head_dim_bwd", c.attention_softmax_head_dim_bwd, 1e4},
                              {"cudnn_attention_softmax_head_dim_fwd", c.cudnn_attention_softmax_head_dim_fwd, 1e4},
                              {"cudnn_attention_softmax_head_dim_bwd", c.cudnn_attention_softmax_head_dim_bwd, 1e4}}) {
    PARAPLAN_RETURN_IF_ERROR(InRange(absl::StrCat("profile.calibration.", name), v, 0, max, false));
  }
  // Rates whose inverse is a time: 0 (the default, or unlimited) or at least a small
  // positive floor, so that no time, energy or cost overflows.
  for (auto [name, v, min, max] :
       {std::tuple{"jpeg_decode_mpixels_per_core_s", c.jpeg_decode_mpixels_per_core_s, kMinRate, 1e6},
        {"hdf5_read_gbytes_per_core_s", c.hdf5_read_gbytes_per_core_s, kMinRate, 1e4},
        {"shared_fs_files_per_s", c.shared_fs_files_per_s, 1.0, 1e12},
        {"loader_cores_per_process", c.loader_cores_per_process, 0.01, 1e4},
        {"sample_handover_gbytes_per_s", c.sample_handover_gbytes_per_s, kMinRate, 1e4},
        {"ep_dispatch_gbytes_per_s", c.ep_dispatch_gbytes_per_s, kMinRate, 1e5}}) {
    PARAPLAN_RETURN_IF_ERROR(InRange(absl::StrCat("profile.calibration.", name), v, min, max, true));
  }
  if (c.network.size() > 64) return Bad("profile.calibration.network", "more than 64 levels");
  for (size_t i = 0; i < c.network.size(); ++i) {
    const std::string f = absl::StrCat("profile.calibration.network[", i, "].");
    PARAPLAN_RETURN_IF_ERROR(InRange(f + "efficiency", c.network[i].efficiency, kMinNetworkEfficiency, 1.0, true));
    PARAPLAN_RETURN_IF_ERROR(InRange(f + "latency_us", c.network[i].latency_us, 0, 1e7, false));
    PARAPLAN_RETURN_IF_ERROR(InRange(f + "congestion", c.network[i].congestion, 1, 100, true));
    if (c.network[i].bandwidth_curve.size() > 1024) return Bad(f + "bandwidth_curve", "more than 1024 points");
    double last = 0;
    for (size_t j = 0; j < c.network[i].bandwidth_curve.size(); ++j) {
      const BandwidthPoint& b = c.network[i].bandwidth_curve[j];
      const std::string g = absl::StrCat(f, "bandwidth_curve[", j, "].");
      PARAPLAN_RETURN_IF_ERROR(InRange(g + "bytes", b.bytes, 1, 1e18, false));
      PARAPLAN_RETURN_IF_ERROR(InRange(g + "efficiency", b.efficiency, kMinNetworkEfficiency, 1.0, false));
      if (b.bytes <= last) return Bad(g + "bytes", "sizes must ascend");
      last = b.bytes;
    }
  }
  return absl::OkStatus();
}

// Regime entries name a regime of this profile and known parameters; the values, put in
// place, must pass the same checks as the profile-wide ones.
absl::Status ValidateRegimes(const SystemProfile& p) {
  const std::vector<RegimeCalibration>& regimes = p.calibration.regimes;
  if (regimes.size() > 16) return Bad("profile.calibration.regimes", "more than 16 regimes");
  std::set<std::string> seen;
  for (size_t i = 0; i < regimes.size(); ++i) {
    const RegimeCalibration& r = regimes[i];
    const std::string f = absl::StrCat("profile.calibration.regimes[", i, "].");
    if (RegimeLevelOf(p, r.regime) < -1) {
      return Bad(f + "regime", absl::StrCat("\"", r.regime, "\" is neither \"", kSingleGpuRegime,
                                           "\" nor a network level of the profile"));
    }
    if (!seen.insert(r.regime).second) return Bad(f + "regime", absl::StrCat("\"", r.regime, "\" given twice"));
    PARAPLAN_RETURN_IF_ERROR(InRange(f + "num_measurements", r.num_measurements, 0, 1e9, false));
    PARAPLAN_RETURN_IF_ERROR(InRange(f + "cv_mape_ratio", r.cv_mape_ratio, 0, 10, false));
    PARAPLAN_RETURN_IF_ERROR(InRange(f + "max_gpus", static_cast<double>(r.max_gpus), 0, 1e9, false));
    PARAPLAN_RETURN_IF_ERROR(InRange(f + "max_parameters", r.max_parameters, 0, 1e16, false));
    if (r.values.size() > 64) return Bad(f + "values", "more than 64 values");
    Calibration applied = p.calibration;
    for (size_t j = 0; j < r.values.size(); ++j) {
      double* field = CalibrationField(applied, r.values[j].parameter);
      if (field == nullptr) {
        return Bad(absl::StrCat(f, "values[", j, "].parameter"),
                   absl::StrCat("\"", r.values[j].parameter, "\" is not a calibration parameter"));
      }
      *field = r.values[j].value;
    }
    if (absl::Status s = ValidateCalibrationValues(applied); !s.ok()) {
      return Bad(f + "values", absl::StrCat("put in place: ", s.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateProfile(const SystemProfile& p) {
  PARAPLAN_RETURN_IF_ERROR(Positive("profile.gpus_per_node", p.gpus_per_node, 1 << 16));
  PARAPLAN_RETURN_IF_ERROR(NonNegative("profile.accelerator.sm_count", p.accelerator.sm_count, 1 << 16));
  PARAPLAN_RETURN_IF_ERROR(Positive("profile.num_nodes", p.num_nodes, 1 << 24));
  const Accelerator& a = p.accelerator;
  // A peak of 0 means the precision is not supported.
  for (auto [name, v] : {std::pair{"peak_tflops_bf16", a.peak_tflops_bf16},
                         {"peak_tflops_fp16", a.peak_tflops_fp16},
                         {"peak_tflops_fp8", a.peak_tflops_fp8},
                         {"peak_tflops_fp4", a.peak_tflops_fp4},
                         {"peak_tflops_fp32", a.peak_tflops_fp32}}) {
    PARAPLAN_RETURN_IF_ERROR(InRange(absl::StrCat("profile.accelerator.", name), v, kMinRate, kMaxRate, true));
  }
  PARAPLAN_RETURN_IF_ERROR(InRange("profile.accelerator.busy_power_w", a.busy_power_w, 0, 1e5, false));
  PARAPLAN_RETURN_IF_ERROR(InRange("profile.accelerator.power_limit_w", a.power_limit_w, 1, 1e5, true));
  PARAPLAN_RETURN_IF_ERROR(InRange("profile.accelerator.idle_power_w", a.idle_power_w, 0, 1e5, false));
  if (a.power_limit_w > 0 && a.power_limit_w <= a.idle_power_w) {
    return Bad("profile.accelerator.power_limit_w",
               absl::StrCat("at or below idle_power_w (", a.idle_power_w, " W): a GPU held to its idle draw cannot run"));
  }
  if (a.peak_tflops_bf16 <= 0 && a.peak_tflops_fp16 <= 0) {
    return Bad("profile.accelerator.peak_tflops_bf16", "bf16 or fp16 peak must be positive");
  }
  PARAPLAN_RETURN_IF_ERROR(InRange("profile.accelerator.memory_gib", a.memory_gib, kMinRate, 1e6, false));
  PARAPLAN_RETURN_IF_ERROR(InRange("profile.accelerator.memory_bandwidth_gbytes_per_s",
                                   a.memory_bandwidth_gbytes_per_s, kMinRate, kMaxRate, false));
  if (p.network_levels.empty()) return Bad("profile.network_levels", "must have at least one level");
  if (p.network_levels.size() > 64) return Bad("profile.network_levels", "more than 64 levels");
  int previous = 0;
  for (size_t i = 0; i < p.network_levels.size(); ++i) {
    const NetworkLevel& l = p.network_levels[i];
    const std::string f = absl::StrCat("profile.network_levels[", i, "].");
    PARAPLAN_RETURN_IF_ERROR(
        InRange(f + "bandwidth_gbytes_per_s", l.bandwidth_gbytes_per_s, kMinRate, kMaxRate, false));
    PARAPLAN_RETURN_IF_ERROR(InRange(f + "latency_us", l.latency_us, 0, 1e7, false));
    // Below 1 (0 included) means not oversubscribed.
    PARAPLAN_RETURN_IF_ERROR(InRange(f + "oversubscription", l.oversubscription, 0, 1e3, false));
    PARAPLAN_RETURN_IF_ERROR(NonNegative(f + "domain_size", l.domain_size, 1 << 30));
    const bool last = i + 1 == p.network_levels.size();
    if (l.switch_radix < 0 || l.switch_radix > 100000) {
      return Bad(f + "switch_radix", absl::StrCat(l.switch_radix, " is outside [0, 100000]"));
    }
    if (l.domain_size == 0 && !last && (l.switch_radix == 0 || i == 0)) {
      return Bad(f + "domain_size", "0 (whole cluster) is only valid on the last level or with switch_radix above the first level");
    }
    if (l.domain_size == 0 && !last && l.switch_radix < 2) {
      return Bad(f + "switch_radix", "needs at least 2 ports to derive domain_size");
    }
    const int64_t domain = l.domain_size == 0 && last ? 0 : ResolvedDomainSize(p, i);
    if (domain != 0 && domain <= previous) {
      return Bad(l.domain_size != 0 ? f + "domain_size" : f + "switch_radix",
                 absl::StrCat(domain, " GPUs per domain must exceed the inner level's ", previous));
    }
    previous = static_cast<int>(std::min<int64_t>(domain, 1 << 30));
    const bool torus = l.topology == Topology::kTorus2D || l.topology == Topology::kTorus3D;
    if (!l.torus_dims.empty() || torus) {
      if (l.torus_dims.size() > 3) return Bad(f + "torus_dims", "at most 3 dimensions");
      int64_t vertices = 1;
      for (size_t d = 0; d < l.torus_dims.size(); ++d) {
        if (l.torus_dims[d] < 1 || l.torus_dims[d] > 100000) {
          return Bad(absl::StrCat(f, "torus_dims[", d, "]"), absl::StrCat(l.torus_dims[d], " is outside [1, 100000]"));
        }
        vertices *= l.torus_dims[d];
      }
      if (vertices > (int64_t{1} << 30)) return Bad(f + "torus_dims", "more than 2^30 vertices");
    }
    if (l.global_links_per_group < 0 || l.global_links_per_group > 100000) {
      return Bad(f + "global_links_per_group", absl::StrCat(l.global_links_per_group, " is outside [0, 100000]"));
    }
    PARAPLAN_RETURN_IF_ERROR(
        InRange(f + "global_link_gbytes_per_s", l.global_link_gbytes_per_s, kMinRate, kMaxRate, true));
    if (l.topology == Topology::kDragonfly && i > 0 && (l.global_links_per_group == 0) !=
                                                           (l.global_link_gbytes_per_s == 0)) {
      return Bad(f + "global_links_per_group", "give both global_links_per_group and global_link_gbytes_per_s, or neither");
    }
  }
  PARAPLAN_RETURN_IF_ERROR(InRange("profile.host.memory_gib", p.host.memory_gib, kMinRate, kMaxRate, true));
  PARAPLAN_RETURN_IF_ERROR(
      InRange("profile.host.pcie_gbytes_per_s", p.host.pcie_gbytes_per_s, kMinRate, kMaxRate, true));
  PARAPLAN_RETURN_IF_ERROR(
      InRange("profile.storage.read_gbytes_per_s", p.storage.read_gbytes_per_s, kMinRate, kMaxRate, true));
  PARAPLAN_RETURN_IF_ERROR(InRange("profile.storage.shared_fs_gbytes_per_s", p.storage.shared_fs_gbytes_per_s,
                                   kMinRate, kMaxRate, true));
  PARAPLAN_RETURN_IF_ERROR(InRange("profile.storage.shared_fs_node_gbytes_per_s",
                                   p.storage.shared_fs_node_gbytes_per_s, kMinRate, kMaxRate, true));
  // Energy per GB read: 0.01 J/GB (below any drive) to 1e5 (a disk array idling for
  // the rest); 0 = the default.
  PARAPLAN_RETURN_IF_ERROR(
      InRange("profile.storage.read_joules_per_gbyte", p.storage.read_joules_per_gbyte, 0.01, 1e5, true));
  PARAPLAN_RETURN_IF_ERROR(InRange("profile.storage.shared_fs_joules_per_gbyte",
                                   p.storage.shared_fs_joules_per_gbyte, 0.01, 1e5, true));
  if (p.host.cpu_cores < 0 || p.host.cpu_cores > (1 << 20)) {
    return Bad("profile.host.cpu_cores", absl::StrCat(p.host.cpu_cores, " is outside [0, 1048576]"));
  }
  PARAPLAN_RETURN_IF_ERROR(InRange("profile.node_power_w", p.node_power_w, 0, 1e7, false));
  PARAPLAN_RETURN_IF_ERROR(InRange("profile.host.cpu_power_w", p.host.cpu_power_w, 0, 1e7, false));
  if (p.host.cpu_power_w > p.node_power_w) {
    return Bad("profile.host.cpu_power_w", absl::StrCat(p.host.cpu_power_w, " exceeds node_power_w ", p.node_power_w,
                                                        " (the node's power beside its GPUs includes its CPUs)"));
  }
  if (p.layer_timings.size() > 100000) return Bad("profile.layer_timings", "more than 100000 layers");
  for (size_t i = 0; i < p.layer_timings.size(); ++i) {
    const LayerTiming& t = p.layer_timings[i];
    const std::string f = absl::StrCat("profile.layer_timings[", i, "].");
    if (t.workload.empty()) return Bad(f + "workload", "must name the workload");
    if (t.layer.empty()) return Bad(f + "layer", "must name the layer");
    PARAPLAN_RETURN_IF_ERROR(InRange(f + "forward_s_per_sample", t.forward_s_per_sample, 0, 1e4, false));
    PARAPLAN_RETURN_IF_ERROR(InRange(f + "backward_s_per_sample", t.backward_s_per_sample, 0, 1e4, false));
  }
  PARAPLAN_RETURN_IF_ERROR(InRange("profile.price_per_gpu_hour_usd", p.price_per_gpu_hour_usd, 0, 1e6, false));
  PARAPLAN_RETURN_IF_ERROR(ValidateCalibrationValues(p.calibration));
  PARAPLAN_RETURN_IF_ERROR(ValidateRegimes(p));
  return absl::OkStatus();
}

}  // namespace paraplan
