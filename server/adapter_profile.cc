// The system profile and its calibration, proto <-> struct (adapter.h).
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "estimator/inputs/measured_features.h"
#include "server/adapter.h"
#include "server/adapter_internal.h"

namespace paraplan::adapter {

using internal::BadEnum;

absl::StatusOr<SystemProfile> FromProto(const v1::SystemProfile& p) {
  SystemProfile out;
  out.name = p.name();
  out.version = p.version();
  out.description = p.description();
  out.gpus_per_node = p.gpus_per_node();
  out.num_nodes = p.num_nodes();
  const v1::Accelerator& a = p.accelerator();
  out.accelerator = {a.name(),       a.peak_tflops_bf16(), a.peak_tflops_fp16(),
                     a.peak_tflops_fp8(), a.peak_tflops_fp32(), a.memory_gib(),
                     a.memory_bandwidth_gbytes_per_s(), a.busy_power_w(), a.idle_power_w(),
                     a.sm_count(),  a.peak_tflops_fp4(), a.power_limit_w()};
  for (int i = 0; i < p.network_levels_size(); ++i) {
    const v1::NetworkLevel& l = p.network_levels(i);
    NetworkLevel n;
    n.name = l.name();
    n.domain_size = l.domain_size();
    n.bandwidth_gbytes_per_s = l.bandwidth_gbytes_per_s();
    n.latency_us = l.latency_us();
    n.oversubscription = l.oversubscription() > 0 ? l.oversubscription() : 1;
    n.in_network_reduction = l.in_network_reduction();
    n.switch_radix = l.switch_radix();
    n.rail_optimized = l.rail_optimized();
    n.torus_dims.assign(l.torus_dims().begin(), l.torus_dims().end());
    n.global_links_per_group = l.global_links_per_group();
    n.global_link_gbytes_per_s = l.global_link_gbytes_per_s();
    switch (l.topology()) {
      case v1::TOPOLOGY_UNSPECIFIED:
      case v1::TOPOLOGY_SWITCH:
        n.topology = Topology::kSwitch;
        break;
      case v1::TOPOLOGY_FAT_TREE:
        n.topology = Topology::kFatTree;
        break;
      case v1::TOPOLOGY_TORUS_2D:
        n.topology = Topology::kTorus2D;
        break;
      case v1::TOPOLOGY_RING:
        n.topology = Topology::kRing;
        break;
      case v1::TOPOLOGY_DRAGONFLY:
        n.topology = Topology::kDragonfly;
        break;
      case v1::TOPOLOGY_TORUS_3D:
        n.topology = Topology::kTorus3D;
        break;
      default:
        return BadEnum(absl::StrCat("profile.network_levels[", i, "].topology"), l.topology());
    }
    out.network_levels.push_back(n);
  }
  out.host = {p.host().memory_gib(), p.host().pcie_gbytes_per_s(), p.host().cpu_cores(), p.host().cpu_power_w()};
  out.storage.read_gbytes_per_s = p.storage().read_gbytes_per_s();
  out.storage.shared_fs_gbytes_per_s = p.storage().shared_fs_gbytes_per_s();
  out.storage.shared_fs_node_gbytes_per_s = p.storage().shared_fs_node_gbytes_per_s();
  out.storage.read_joules_per_gbyte = p.storage().read_joules_per_gbyte();
  out.storage.shared_fs_joules_per_gbyte = p.storage().shared_fs_joules_per_gbyte();
  out.node_power_w = p.node_power_w();
  out.price_per_gpu_hour_usd = p.price_per_gpu_hour_usd();
  for (const v1::LayerTiming& t : p.layer_timings()) {
    out.layer_timings.push_back({t.workload(), t.layer(), t.forward_s_per_sample(), t.backward_s_per_sample()});
  }
  const v1::Calibration& c = p.calibration();
  Calibration& k = out.calibration;
  k.matmul_efficiency = c.matmul_efficiency();
  k.matmul_half_efficiency_gflop = c.matmul_half_efficiency_gflop();
  k.matmul_pipeline_depth = c.matmul_pipeline_depth();
  k.memory_bound_efficiency = c.memory_bound_efficiency();
  for (const v1::NetworkCalibration& n : c.network()) {
    NetworkCalibration nc{n.level(), n.efficiency(), n.latency_us(), {}, n.congestion()};
    for (const v1::BandwidthPoint& b : n.bandwidth_curve()) nc.bandwidth_curve.push_back({b.bytes(), b.efficiency()});
    k.network.push_back(std::move(nc));
  }
  k.matmul_efficiency_fp8 = c.matmul_efficiency_fp8();
  k.overlap_efficiency = c.overlap_efficiency();
  k.iteration_overhead_s = c.iteration_overhead_s();
  k.kernel_overhead_us = c.kernel_overhead_us();
  k.recompute_overhead_us = c.recompute_overhead_us();
  k.memory_overhead_fraction = c.memory_overhead_fraction();
  k.memory_overhead_gib = c.memory_overhead_gib();
  k.expandable_segments_overhead_fraction = c.expandable_segments_overhead_fraction();
  k.attention_efficiency_fwd = c.attention_efficiency_fwd();
  k.attention_efficiency_bwd = c.attention_efficiency_bwd();
  k.cudnn_attention_efficiency_fwd = c.cudnn_attention_efficiency_fwd();
  k.cudnn_attention_efficiency_bwd = c.cudnn_attention_efficiency_bwd();
  k.attention_half_keys_fwd = c.attention_half_keys_fwd();
  k.attention_half_keys_bwd = c.attention_half_keys_bwd();
  k.attention_softmax_head_dim_fwd = c.attention_softmax_head_dim_fwd();
  k.attention_softmax_head_dim_bwd = c.attention_softmax_head_dim_bwd();
  k.cudnn_attention_softmax_head_dim_fwd = c.cudnn_attention_softmax_head_dim_fwd();
  k.cudnn_attention_softmax_head_dim_bwd = c.cudnn_attention_softmax_head_dim_bwd();
  k.collective_overhead_us = c.collective_overhead_us();
  k.halo_host_staged = c.halo_host_staged();
  k.halo_exchange_latency_us = c.halo_exchange_latency_us();
  k.host_staging_efficiency = c.host_staging_efficiency();
  k.jpeg_decode_mpixels_per_core_s = c.jpeg_decode_mpixels_per_core_s();
  k.hdf5_read_gbytes_per_core_s = c.hdf5_read_gbytes_per_core_s();
  k.shared_fs_files_per_s = c.shared_fs_files_per_s();
  k.loader_cores_per_process = c.loader_cores_per_process();
  k.sample_handover_gbytes_per_s = c.sample_handover_gbytes_per_s();
  k.ep_overlap_efficiency = c.ep_overlap_efficiency();
  k.ep_dispatch_gbytes_per_s = c.ep_dispatch_gbytes_per_s();
  k.rank_speed_spread = c.rank_speed_spread();
  for (const v1::RegimeCalibration& r : c.regimes()) {
    RegimeCalibration g{r.regime(), {}, r.num_measurements(), r.cv_mape_ratio(), r.max_gpus(), r.max_parameters()};
    for (const v1::RegimeValue& v : r.values()) g.values.push_back({v.parameter(), v.value()});
    absl::StatusOr<unsigned> features = FeaturesFromNames(
        {r.measured_features().begin(), r.measured_features().end()},
        absl::StrCat("profile.calibration.regimes[", k.regimes.size(), "].measured_features"));
    if (!features.ok()) return features.status();
    g.measured_features = *features;
    k.regimes.push_back(std::move(g));
  }
  return out;
}


v1::Calibration ToProto(const Calibration& k) {
  v1::Calibration c;
  c.set_matmul_efficiency(k.matmul_efficiency);
  c.set_matmul_half_efficiency_gflop(k.matmul_half_efficiency_gflop);
  c.set_matmul_pipeline_depth(k.matmul_pipeline_depth);
  c.set_memory_bound_efficiency(k.memory_bound_efficiency);
  for (const NetworkCalibration& n : k.network) {
    v1::NetworkCalibration* p = c.add_network();
    p->set_level(n.level);
    p->set_efficiency(n.efficiency);
    p->set_latency_us(n.latency_us);
    p->set_congestion(n.congestion);
    for (const BandwidthPoint& b : n.bandwidth_curve) {
      v1::BandwidthPoint* q = p->add_bandwidth_curve();
      q->set_bytes(b.bytes);
      q->set_efficiency(b.efficiency);
    }
  }
  c.set_overlap_efficiency(k.overlap_efficiency);
  c.set_iteration_overhead_s(k.iteration_overhead_s);
  c.set_kernel_overhead_us(k.kernel_overhead_us);
  c.set_recompute_overhead_us(k.recompute_overhead_us);
  c.set_memory_overhead_fraction(k.memory_overhead_fraction);
  c.set_memory_overhead_gib(k.memory_overhead_gib);
  c.set_expandable_segments_overhead_fraction(k.expandable_segments_overhead_fraction);
  c.set_attention_efficiency_fwd(k.attention_efficiency_fwd);
  c.set_attention_efficiency_bwd(k.attention_efficiency_bwd);
  c.set_cudnn_attention_efficiency_fwd(k.cudnn_attention_efficiency_fwd);
  c.set_cudnn_attention_efficiency_bwd(k.cudnn_attention_efficiency_bwd);
  c.set_attention_half_keys_fwd(k.attention_half_keys_fwd);
  c.set_attention_half_keys_bwd(k.attention_half_keys_bwd);
  c.set_attention_softmax_head_dim_fwd(k.attention_softmax_head_dim_fwd);
  c.set_attention_softmax_head_dim_bwd(k.attention_softmax_head_dim_bwd);
  c.set_cudnn_attention_softmax_head_dim_fwd(k.cudnn_attention_softmax_head_dim_fwd);
  c.set_cudnn_attention_softmax_head_dim_bwd(k.cudnn_attention_softmax_head_dim_bwd);
  c.set_collective_overhead_us(k.collective_overhead_us);
  c.set_halo_host_staged(k.halo_host_staged);
  for (const RegimeCalibration& g : k.regimes) {
    v1::RegimeCalibration* r = c.add_regimes();
    r->set_regime(g.regime);
    r->set_num_measurements(g.num_measurements);
    r->set_cv_mape_ratio(g.cv_mape_ratio);
    r->set_max_gpus(g.max_gpus);
    r->set_max_parameters(g.max_parameters);
    for (const std::string& f : FeatureNames(g.measured_features)) r->add_measured_features(f);
    for (const RegimeValue& v : g.values) {
      v1::RegimeValue* w = r->add_values();
      w->set_parameter(v.parameter);
      w->set_value(v.value);
    }
  }
  c.set_halo_exchange_latency_us(k.halo_exchange_latency_us);
  c.set_host_staging_efficiency(k.host_staging_efficiency);
  c.set_jpeg_decode_mpixels_per_core_s(k.jpeg_decode_mpixels_per_core_s);
  c.set_hdf5_read_gbytes_per_core_s(k.hdf5_read_gbytes_per_core_s);
  c.set_shared_fs_files_per_s(k.shared_fs_files_per_s);
  c.set_loader_cores_per_process(k.loader_cores_per_process);
  c.set_sample_handover_gbytes_per_s(k.sample_handover_gbytes_per_s);
  c.set_ep_overlap_efficiency(k.ep_overlap_efficiency);
  c.set_ep_dispatch_gbytes_per_s(k.ep_dispatch_gbytes_per_s);
  c.set_rank_speed_spread(k.rank_speed_spread);
  c.set_matmul_efficiency_fp8(k.matmul_efficiency_fp8);
  return c;
}

v1::SystemProfile ToProto(const SystemProfile& p) {
  v1::SystemProfile out;
  out.set_name(p.name);
  out.set_version(p.version);
  out.set_description(p.description);
  out.set_gpus_per_node(p.gpus_per_node);
  out.set_num_nodes(p.num_nodes);
  v1::Accelerator* a = out.mutable_accelerator();
  a->set_name(p.accelerator.name);
  a->set_peak_tflops_bf16(p.accelerator.peak_tflops_bf16);
  a->set_peak_tflops_fp16(p.accelerator.peak_tflops_fp16);
  a->set_peak_tflops_fp8(p.accelerator.peak_tflops_fp8);
  a->set_peak_tflops_fp32(p.accelerator.peak_tflops_fp32);
  a->set_memory_gib(p.accelerator.memory_gib);
  a->set_memory_bandwidth_gbytes_per_s(p.accelerator.memory_bandwidth_gbytes_per_s);
  a->set_busy_power_w(p.accelerator.busy_power_w);
  a->set_idle_power_w(p.accelerator.idle_power_w);
  a->set_sm_count(p.accelerator.sm_count);
  a->set_peak_tflops_fp4(p.accelerator.peak_tflops_fp4);
  a->set_power_limit_w(p.accelerator.power_limit_w);
  static const v1::Topology kTopologies[] = {v1::TOPOLOGY_SWITCH, v1::TOPOLOGY_FAT_TREE, v1::TOPOLOGY_TORUS_2D,
                                             v1::TOPOLOGY_RING, v1::TOPOLOGY_DRAGONFLY, v1::TOPOLOGY_TORUS_3D};
  for (const NetworkLevel& l : p.network_levels) {
    v1::NetworkLevel* n = out.add_network_levels();
    n->set_name(l.name);
    n->set_domain_size(l.domain_size);
    n->set_bandwidth_gbytes_per_s(l.bandwidth_gbytes_per_s);
    n->set_latency_us(l.latency_us);
    n->set_topology(kTopologies[static_cast<int>(l.topology)]);
    n->set_oversubscription(l.oversubscription);
    n->set_in_network_reduction(l.in_network_reduction);
    n->set_switch_radix(l.switch_radix);
    n->set_rail_optimized(l.rail_optimized);
    for (int d : l.torus_dims) n->add_torus_dims(d);
    n->set_global_links_per_group(l.global_links_per_group);
    n->set_global_link_gbytes_per_s(l.global_link_gbytes_per_s);
  }
  out.mutable_host()->set_memory_gib(p.host.memory_gib);
  out.mutable_host()->set_pcie_gbytes_per_s(p.host.pcie_gbytes_per_s);
  out.mutable_storage()->set_read_gbytes_per_s(p.storage.read_gbytes_per_s);
  out.mutable_storage()->set_shared_fs_gbytes_per_s(p.storage.shared_fs_gbytes_per_s);
  out.mutable_storage()->set_shared_fs_node_gbytes_per_s(p.storage.shared_fs_node_gbytes_per_s);
  out.mutable_storage()->set_read_joules_per_gbyte(p.storage.read_joules_per_gbyte);
  out.mutable_storage()->set_shared_fs_joules_per_gbyte(p.storage.shared_fs_joules_per_gbyte);
  out.mutable_host()->set_cpu_cores(p.host.cpu_cores);
  out.mutable_host()->set_cpu_power_w(p.host.cpu_power_w);
  out.set_node_power_w(p.node_power_w);
  out.set_price_per_gpu_hour_usd(p.price_per_gpu_hour_usd);
  for (const LayerTiming& t : p.layer_timings) {
    v1::LayerTiming* q = out.add_layer_timings();
    q->set_workload(t.workload);
    q->set_layer(t.layer);
    q->set_forward_s_per_sample(t.forward_s_per_sample);
    q->set_backward_s_per_sample(t.backward_s_per_sample);
  }
  *out.mutable_calibration() = ToProto(p.calibration);
  return out;
}

}  // namespace paraplan::adapter
