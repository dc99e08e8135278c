#include "client/format.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace paraplan::cli {

namespace {

// Right-aligned cells: numbers, optionally with an SI suffix ("175G") or a unit ("1.2 ms").
bool Numeric(const std::string& s) {
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '+')) return false;
  if (s.find_first_of("0123456789") == std::string::npos) return false;
  const size_t end = s.find_first_not_of("0123456789.,-+e%x ");
  return end == std::string::npos || s.find_first_not_of("kMGTPsmhd ", end) == std::string::npos;
}

int Deg(int v) { return v > 0 ? v : 1; }

}  // namespace

// An enum value as people write it: lower case without the prefix every value of the
// enum shares, '-' for '_' (ALGORITHM_HALVING_DOUBLING -> halving-doubling).
std::string EnumText(const google::protobuf::EnumDescriptor* d, int v) {
  const google::protobuf::EnumValueDescriptor* value = d->FindValueByNumber(v);
  if (value == nullptr) return absl::StrCat(v);
  std::string prefix = d->value(0)->name();
  for (int i = 1; i < d->value_count(); ++i) {
    const std::string& n = d->value(i)->name();
    size_t k = 0;
    while (k < prefix.size() && k < n.size() && prefix[k] == n[k]) ++k;
    prefix.resize(k);
  }
  prefix.resize(prefix.rfind('_') == std::string::npos ? 0 : prefix.rfind('_') + 1);
  return absl::StrReplaceAll(absl::AsciiStrToLower(value->name().substr(prefix.size())), {{"_", "-"}});
}

// "fat_tree, radix 32, rail-optimised", "torus_3d 4x4x4", "dragonfly, 4 global links x 25 GB/s".
std::string TopologyText(const v1::NetworkLevel& l) {
  std::string s = EnumText(v1::Topology_descriptor(), l.topology());
  if (!l.torus_dims().empty()) absl::StrAppend(&s, " ", absl::StrJoin(l.torus_dims(), "x"));
  if (l.switch_radix() > 0) absl::StrAppend(&s, ", radix ", l.switch_radix());
  if (l.rail_optimized()) absl::StrAppend(&s, ", rail-optimised");
  if (l.global_links_per_group() > 0) {
    absl::StrAppend(&s, absl::StrFormat(", %d global links x %.4g GB/s", l.global_links_per_group(),
                                        l.global_link_gbytes_per_s()));
  }
  if (l.in_network_reduction()) absl::StrAppend(&s, ", in-network reduction");
  return s;
}

std::string ConfigSummary(const v1::ParallelConfig& c) {
  std::string s = absl::StrFormat("TP%d PP%d DP%d", Deg(c.tensor_parallel()), Deg(c.pipeline_parallel()),
                                  Deg(c.data_parallel()));
  if (Deg(c.context_parallel()) > 1) absl::StrAppend(&s, " CP", c.context_parallel());
  if (Deg(c.expert_parallel()) > 1) absl::StrAppend(&s, " EP", c.expert_parallel());
  if (Deg(c.virtual_pipeline_stages()) > 1) absl::StrAppend(&s, " v", c.virtual_pipeline_stages());
  if (c.first_pipeline_stage_layers() > 0 || c.last_pipeline_stage_layers() > 0) {
    absl::StrAppend(&s, " (end stages ", c.first_pipeline_stage_layers(), " and ", c.last_pipeline_stage_layers(),
                    " layers)");
  }
  if (Deg(c.spatial_parallel()) > 1) absl::StrAppend(&s, " spatial", c.spatial_parallel());
  if (Deg(c.filter_parallel()) > 1) absl::StrAppend(&s, " filter", c.filter_parallel());
  if (Deg(c.channel_parallel()) > 1) absl::StrAppend(&s, " channel", c.channel_parallel());
  absl::StrAppend(&s, ", micro-batch ", Deg(c.micro_batch_size()), ", global batch ", c.global_batch_size(),
                  ", recompute ", RecomputeText(c));
  if (c.sequence_parallel()) absl::StrAppend(&s, ", sequence parallel");
  if (c.zero_stage() > 0) absl::StrAppend(&s, ", ZeRO-", c.zero_stage());
  if (c.flash_attention()) absl::StrAppend(&s, ", flash attention");
  if (c.cuda_graphs()) absl::StrAppend(&s, ", CUDA graphs");
  if (c.tp_comm_overlap()) absl::StrAppend(&s, ", TP comm overlap");
  if (c.pipeline_parallel() > 1) absl::StrAppend(&s, ", schedule ", ScheduleText(c));
  if (c.overlap_grad_reduce()) absl::StrAppend(&s, ", overlap grad reduce");
  if (c.overlap_param_gather()) absl::StrAppend(&s, ", overlap param gather");
  if (c.offload().optimizer() || c.offload().weights() || c.offload().activations()) {
    absl::StrAppend(&s, ", offload", c.offload().optimizer() ? " optimizer" : "",
                    c.offload().weights() ? " weights" : "", c.offload().activations() ? " activations" : "");
  }
  if (c.offload_modules_size() > 0) {
    absl::StrAppend(&s, ", offload modules ", absl::StrJoin(c.offload_modules(), " "));
  }
  if (!c.rank_order().empty() && c.rank_order() != "tp-cp-ep-dp-pp") absl::StrAppend(&s, ", order ", c.rank_order());
  if (c.dp_algorithm() != v1::ALGORITHM_UNSPECIFIED) absl::StrAppend(&s, ", DP ", EnumText(v1::CollectiveAlgorithm_descriptor(), c.dp_algorithm()));
  if (c.tp_algorithm() != v1::ALGORITHM_UNSPECIFIED) absl::StrAppend(&s, ", TP ", EnumText(v1::CollectiveAlgorithm_descriptor(), c.tp_algorithm()));
  if (c.placement() == v1::PLACEMENT_SCATTERED) absl::StrAppend(&s, ", scattered placement");
  return s;
}

std::string AlgorithmText(const v1::CollectiveUse& u) {
  const bool direct = u.kind() == v1::COLLECTIVE_SEND_RECV ||
                      (u.kind() == v1::COLLECTIVE_ALL_TO_ALL && u.algorithm() != v1::ALGORITHM_HIERARCHICAL);
  return direct ? "-" : EnumText(v1::CollectiveAlgorithm_descriptor(), u.algorithm());
}

std::string FormatCollectives(const v1::Estimate& e) {
  if (e.collectives().empty()) return "";
  Table t({"collective", "dim", "algorithm", "level", "group", "MiB", "calls", "ms/call"});
  for (const v1::CollectiveUse& u : e.collectives()) {
    t.Add({EnumText(v1::CollectiveKind_descriptor(), u.kind()), u.dimension(), AlgorithmText(u),
           u.level_name().empty() ? absl::StrCat(u.level()) : u.level_name(),
           absl::StrCat(u.group_size(), u.stride() > 1 ? absl::StrCat(" /", u.stride()) : ""),
           absl::StrFormat("%.2f", u.bytes() / (1024.0 * 1024.0)), absl::StrFormat("%.0f", u.calls()),
           absl::StrFormat("%.3f%s", 1e3 * u.seconds_per_call(), u.overlapped() ? " (overlapped)" : "")});
  }
  return t.Render();
}

std::string Table::Render() const {
  const size_t n = headers_.size();
  std::vector<size_t> width(n);
  // A column is right-aligned when it holds numbers (and "-" for none).
  std::vector<bool> numeric(n, false), text(n, false);
  for (size_t i = 0; i < n; ++i) width[i] = headers_[i].size();
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size() && i < n; ++i) {
      width[i] = std::max(width[i], row[i].size());
      if (Numeric(row[i])) {
        numeric[i] = true;
      } else if (!row[i].empty() && row[i] != "-") {
        text[i] = true;
      }
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < n; ++i) {
      const std::string cell = i < cells.size() ? cells[i] : "";
      const std::string pad(width[i] - std::min(width[i], cell.size()), ' ');
      if (i > 0) out += "  ";
      out += (numeric[i] && !text[i]) ? pad + cell : cell + (i + 1 < n ? pad : "");
    }
    return out + "\n";
  };
  std::string out = line(headers_);
  for (const auto& row : rows_) out += line(row);
  return out;
}

std::string FormatEstimate(const v1::Estimate& e) {
  std::string out = absl::StrCat("profile      ", e.profile_name(), "@", e.profile_version(), ", ", e.num_gpus(),
                                 " GPUs\nconfig       ", ConfigSummary(e.config()), "\n");
  absl::StrAppend(&out, "iteration    ", SecondsText(e.iteration_time_s()), "   bottleneck: ", e.bottleneck(), "\n");
  if (e.interval().confidence() > 0) {
    absl::StrAppend(&out, absl::StrFormat("interval     %s - %s (%.0f%%), %s\n", SecondsText(e.interval().low_s()),
                                          SecondsText(e.interval().high_s()), 100 * e.interval().confidence(),
                                          e.in_envelope() ? "inside the calibrated envelope"
                                                          : "outside the calibrated envelope"));
  }
  for (const std::string& n : e.envelope_notes()) absl::StrAppend(&out, "             ", n, "\n");
  absl::StrAppend(&out, "\n");
  const v1::TimeBreakdown& t = e.time();
  const std::pair<const char*, double> parts[] = {
      {"compute", t.compute_s()},         {"recompute", t.recompute_s()},
      {"tensor-parallel comm", t.tp_comm_s()}, {"spatial comm (halos, cut)", t.spatial_comm_s()},
      {"context-parallel comm", t.cp_comm_s()}, {"expert-parallel comm", t.ep_comm_s()},
      {"pipeline comm", t.pp_comm_s()},   {"pipeline bubble", t.pipeline_bubble_s()},
      {"data-parallel comm", t.dp_comm_s()}, {"optimizer", t.optimizer_s()},
      {"data loading", t.data_loading_s()}, {"overhead", t.overhead_s()},
      {"offload", t.offload_s()}};
  Table time({"time (exposed)", "seconds", "share"});
  for (const auto& [name, v] : parts) {
    if (v <= 0) continue;
    time.Add({name, absl::StrFormat("%.4f", v), absl::StrFormat("%.1f%%", 100 * v / e.iteration_time_s())});
  }
  absl::StrAppend(&out, time.Render(), "\n");
  if (const std::string c = FormatCollectives(e); !c.empty()) absl::StrAppend(&out, c, "\n");
  const v1::MemoryBreakdown& m = e.memory();
  Table mem({"memory per GPU", "GiB"});
  mem.Add({"weights", GibText(m.weights_bytes())});
  mem.Add({"gradients", GibText(m.gradients_bytes())});
  mem.Add({"optimizer states", GibText(m.optimizer_bytes())});
  mem.Add({"activations", GibText(m.activations_bytes())});
  mem.Add({"buffers", GibText(m.buffers_bytes())});
  mem.Add({"overhead", GibText(m.overhead_bytes())});
  mem.Add({"total", GibText(m.total_bytes())});
  mem.Add({"capacity", GibText(m.capacity_bytes())});
  if (m.host_bytes() > 0) mem.Add({"offloaded to host", GibText(m.host_bytes())});
  absl::StrAppend(&out, mem.Render(), m.fits() ? "fits" : "DOES NOT FIT",
                  absl::StrFormat(" (headroom %.1f%%)\n", 100 * e.memory_headroom_ratio()),
                  m.peak_at_optimizer_step()
                      ? "peak at the optimizer step: fp32 copies of the 16-bit gradients, activations freed\n\n"
                      : "\n");
  absl::StrAppend(&out, absl::StrFormat("throughput   %s samples/s, %s tokens/s\n", SiText(e.samples_per_s()),
                                        SiText(e.tokens_per_s())));
  absl::StrAppend(&out, absl::StrFormat("model FLOPs  %.1f TFLOP/s per GPU, MFU %.1f%%\n", e.model_tflops_per_gpu(),
                                        100 * e.mfu()));
  absl::StrAppend(&out, absl::StrFormat("energy       %s J per iteration; cost $%.4f per iteration\n",
                                        SiText(e.energy_per_iteration_j()), e.cost_per_iteration_usd()));
  if (e.time_to_train_s() > 0) {
    absl::StrAppend(&out, absl::StrFormat("to train     %s, %s J, $%s\n", SecondsText(e.time_to_train_s()),
                                          SiText(e.energy_to_train_j()), SiText(e.cost_to_train_usd())));
  }
  for (const std::string& w : e.warnings()) absl::StrAppend(&out, "warning: ", w, "\n");
  return out;
}

std::string FormatProfile(const v1::SystemProfile& p) {
  std::string out = absl::StrFormat("%s@%d  %s\n", p.name(), p.version(), p.description());
  const v1::Accelerator& a = p.accelerator();
  absl::StrAppend(&out, absl::StrFormat(
                            "nodes %d x %d GPUs = %d GPUs\naccelerator %s: %.0f TFLOP/s bf16, %.0f fp16, %.0f fp8, "
                            "%.0f fp4, %.1f fp32; %.0f GiB at %.0f GB/s; %.0f W busy, %.0f W idle, power limit %s; "
                            "%s SMs\n",
                            p.num_nodes(), p.gpus_per_node(), p.num_nodes() * p.gpus_per_node(), a.name(),
                            a.peak_tflops_bf16(), a.peak_tflops_fp16(), a.peak_tflops_fp8(), a.peak_tflops_fp4(),
                            a.peak_tflops_fp32(), a.memory_gib(), a.memory_bandwidth_gbytes_per_s(), a.busy_power_w(),
                            a.idle_power_w(),
                            a.power_limit_w() > 0 ? absl::StrFormat("%.0f W", a.power_limit_w()) : std::string("rated"),
                            a.sm_count() > 0 ? absl::StrCat(a.sm_count()) : std::string("unstated")));
  Table net({"network level", "domain GPUs", "GB/s per GPU", "latency us", "topology", "oversubscription"});
  for (int i = 0; i < p.network_levels_size(); ++i) {
    const v1::NetworkLevel& l = p.network_levels(i);
    const bool last = i + 1 == p.network_levels_size();
    net.Add({l.name(), l.domain_size() > 0 ? absl::StrCat(l.domain_size()) : last ? "all" : "from radix",
             absl::StrFormat("%.2f", l.bandwidth_gbytes_per_s()), absl::StrFormat("%.1f", l.latency_us()),
             TopologyText(l), absl::StrFormat("%.1f", std::max(1.0, l.oversubscription()))});
  }
  absl::StrAppend(&out, net.Render());
  const std::string cpus = p.host().cpu_power_w() > 0 ? absl::StrFormat(" (%.0f W)", p.host().cpu_power_w()) : "";
  auto joules = [](double v) { return v > 0 ? absl::StrFormat("%.3g", v) : std::string("default"); };
  absl::StrAppend(&out, absl::StrFormat("host %.0f GiB, PCIe %.0f GB/s, %d CPU cores%s; storage %.1f GB/s per node; node "
                                        "power %.0f W; $%.2f per GPU-hour\n",
                                        p.host().memory_gib(), p.host().pcie_gbytes_per_s(), p.host().cpu_cores(), cpus,
                                        p.storage().read_gbytes_per_s(), p.node_power_w(), p.price_per_gpu_hour_usd()));
  absl::StrAppend(&out, "storage energy: read_joules_per_gbyte ", joules(p.storage().read_joules_per_gbyte()),
                  ", shared_fs_joules_per_gbyte ", joules(p.storage().shared_fs_joules_per_gbyte()), "\n");
  const v1::Calibration& c = p.calibration();
  auto val = [](double v) { return v > 0 ? absl::StrFormat("%.4g", v) : std::string("default"); };
  absl::StrAppend(&out, "calibration: matmul_efficiency ", val(c.matmul_efficiency()), ", matmul_efficiency_fp8 ",
                  val(c.matmul_efficiency_fp8()), ", matmul_half_efficiency_gflop ",
                  val(c.matmul_half_efficiency_gflop()), ", matmul_pipeline_depth ", val(c.matmul_pipeline_depth()),
                  ", memory_bound_efficiency ",
                  val(c.memory_bound_efficiency()), ", overlap_efficiency ", val(c.overlap_efficiency()),
                  ", ep_overlap_efficiency ", val(c.ep_overlap_efficiency()),
                  ", ep_dispatch_gbytes_per_s ",
                  c.ep_dispatch_gbytes_per_s() > 0 ? absl::StrFormat("%.4g", c.ep_dispatch_gbytes_per_s()) : "link",
                  ", rank_speed_spread ", val(c.rank_speed_spread()),
                  ", iteration_overhead_s ", val(c.iteration_overhead_s()), ", memory_overhead_fraction ",
                  val(c.memory_overhead_fraction()), ", expandable_segments_overhead_fraction ",
                  val(c.expandable_segments_overhead_fraction()), ", memory_overhead_gib ", val(c.memory_overhead_gib()),
                  ", kernel_overhead_us ", val(c.kernel_overhead_us()), ", recompute_overhead_us ",
                  val(c.recompute_overhead_us()), ", collective_overhead_us ",
                  val(c.collective_overhead_us()), ", attention_efficiency_fwd ", val(c.attention_efficiency_fwd()),
                  ", attention_efficiency_bwd ", val(c.attention_efficiency_bwd()), ", cudnn_attention_efficiency_fwd ",
                  val(c.cudnn_attention_efficiency_fwd()), ", cudnn_attention_efficiency_bwd ",
                  val(c.cudnn_attention_efficiency_bwd()), ", attention_half_keys_fwd ",
                  val(c.attention_half_keys_fwd()), ", attention_half_keys_bwd ", val(c.attention_half_keys_bwd()),
                  ", attention_softmax_head_dim_fwd ", val(c.attention_softmax_head_dim_fwd()),
                  ", attention_softmax_head_dim_bwd ", val(c.attention_softmax_head_dim_bwd()),
                  ", cudnn_attention_softmax_head_dim_fwd ", val(c.cudnn_attention_softmax_head_dim_fwd()),
                  ", cudnn_attention_softmax_head_dim_bwd ", val(c.cudnn_attention_softmax_head_dim_bwd()));
  for (const v1::NetworkCalibration& n : c.network()) {
    absl::StrAppend(&out, ", ", n.level(), ".efficiency ", val(n.efficiency()));
  }
  absl::StrAppend(&out, "\n");
  absl::StrAppend(&out, "input and CNN implementation: jpeg_decode_mpixels_per_core_s ",
                  val(c.jpeg_decode_mpixels_per_core_s()), ", hdf5_read_gbytes_per_core_s ",
                  val(c.hdf5_read_gbytes_per_core_s()), ", shared_fs_files_per_s ",
                  c.shared_fs_files_per_s() > 0 ? absl::StrFormat("%.4g", c.shared_fs_files_per_s()) : "unlimited",
                  ", loader_cores_per_process ",
                  c.loader_cores_per_process() > 0 ? absl::StrFormat("%.4g", c.loader_cores_per_process()) : "unlimited",
                  ", sample_handover_gbytes_per_s ", val(c.sample_handover_gbytes_per_s()), ", halo_host_staged ", c.halo_host_staged() ? "yes" : "no", ", host_staging_efficiency ",
                  val(c.host_staging_efficiency()), ", halo_exchange_latency_us ", val(c.halo_exchange_latency_us()),
                  "\n");
  for (const v1::RegimeCalibration& g : c.regimes()) {
    std::vector<std::string> values;
    for (const v1::RegimeValue& v : g.values()) values.push_back(absl::StrFormat("%s %.4g", v.parameter(), v.value()));
    absl::StrAppend(&out, "regime ", g.regime(), ": ", g.num_measurements(), " measurements, up to ", g.max_gpus(),
                    " GPUs and ", absl::StrFormat("%.3g", g.max_parameters()), " parameters, cross-validated ",
                    g.cv_mape_ratio() > 0 ? absl::StrFormat("%.2f%%", 100 * g.cv_mape_ratio()) : "-",
                    values.empty() ? "; profile-wide values" : absl::StrCat("; own values: ", absl::StrJoin(values, ", ")),
                    g.measured_features().empty() ? ""
                                                  : absl::StrCat("; measured: ", absl::StrJoin(g.measured_features(), ", ")),
                    "\n");
  }
  if (p.has_fit_report()) {
    absl::StrAppend(&out, "calibrated from version ", p.fit_report().based_on_version(), ":\n",
                    FormatFitReport(p.fit_report()));
  }
  return out;
}

std::string FormatProfileList(const std::vector<v1::SystemProfile>& profiles) {
  Table t({"name", "version", "accelerator", "GPUs", "GPUs/node", "bf16 TFLOP/s", "memory GiB", "levels"});
  for (const v1::SystemProfile& p : profiles) {
    std::vector<std::string> levels;
    for (const v1::NetworkLevel& l : p.network_levels()) levels.push_back(l.name());
    t.Add({p.name(), absl::StrCat(p.version()), p.accelerator().name(),
           absl::StrCat(int64_t{p.num_nodes()} * p.gpus_per_node()), absl::StrCat(p.gpus_per_node()),
           absl::StrFormat("%.0f", p.accelerator().peak_tflops_bf16()),
           absl::StrFormat("%.0f", p.accelerator().memory_gib()), absl::StrJoin(levels, ",")});
  }
  return t.Render();
}

namespace {
// "matmul_efficiency (nvlink 0.906, infiniband 0.75)" per disagreeing parameter, or "-".
std::string Disagreeing(const v1::FitReport& f) {
  std::vector<std::string> out;
  for (const v1::StratumDisagreement& d : f.disagreements()) {
    out.push_back(absl::StrFormat("%s (%s %.3g, %s %.3g)", d.parameter(), d.narrow_regime(), d.narrow_value(),
                                  d.wide_regime(), d.wide_value()));
  }
  return out.empty() ? "-" : absl::StrJoin(out, "; ");
}
}  // namespace

std::string FormatHistory(const v1::ListProfileVersionsResponse& r) {
  Table t({"version", "created (UTC)", "origin", "default", "promoted", "measurements", "MAPE before", "after",
           "cross-validated", "largest held out", "disagree", "fitted (+- one sigma)"});
  for (const v1::SystemProfile& p : r.versions()) {
    const bool cal = p.has_fit_report();
    const v1::FitReport& f = p.fit_report();
    char when[32];
    const time_t secs = static_cast<time_t>(p.created_at().seconds());
    std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", std::gmtime(&secs));
    std::string fitted;
    for (const v1::ParameterChange& c : f.parameters()) {
      if (!c.fitted()) continue;
      absl::StrAppend(&fitted, fitted.empty() ? "" : ", ", c.name(), " ", absl::StrFormat("%.3g", c.after()),
                      c.stddev() > 0 ? absl::StrFormat("+-%.2g", c.stddev()) : "", c.at_bound() ? " (at bound)" : "");
    }
    t.Add({absl::StrCat(p.version()), when, p.origin().empty() ? (cal ? "calibration" : "spec") : p.origin(),
           p.is_default() ? "*" : "", p.promoted() ? "yes" : "no", cal ? absl::StrCat(f.num_measurements()) : "-",
           cal ? absl::StrFormat("%.2f%%", 100 * f.mape_before_ratio()) : "-",
           cal ? absl::StrFormat("%.2f%%", 100 * f.mape_after_ratio()) : "-",
           cal && f.cv_valid() ? absl::StrFormat("%.2f%%", 100 * f.cv_mape_ratio()) : "-",
           cal && f.extrapolation_valid() ? absl::StrFormat("%.2f%% (was %.2f%%)", 100 * f.cv_extrapolation_mape(),
                                                            100 * f.extrapolation_base_mape())
                                          : "-",
           Disagreeing(f), fitted.empty() ? "-" : fitted});
  }
  return t.Render();
}

// Weighted layers of a layer graph: conv C_out x C_in / groups x kernel (+ bias), fully
// connected in x out (+ bias), batch norm scale and shift.
double LayerGraphParameterCount(const v1::LayerGraph& g) {
  auto product = [](const auto& v) {
    double n = 1;
    for (int64_t x : v) n *= static_cast<double>(x);
    return n;
  };
  double n = 0;
  for (const v1::Layer& l : g.layers()) {
    const double c_in = l.input_shape_size() > 0 ? l.input_shape(0) : 1;
    const double c_out = l.output_shape_size() > 0 ? l.output_shape(0) : 1;
    const bool bias = !l.has_bias() || l.bias();
    if (l.kind() == "conv") {
      n += c_out * c_in / std::max<int64_t>(1, l.groups()) * product(l.kernel_shape()) + (bias ? c_out : 0);
    } else if (l.kind() == "fc") {
      n += product(l.input_shape()) * product(l.output_shape()) + (bias ? product(l.output_shape()) : 0);
    } else if (l.kind() == "norm") {
      n += 2 * c_in;
    }
  }
  return n;
}

double ParameterCount(const v1::Workload& w) {
  if (w.has_layer_graph()) return LayerGraphParameterCount(w.layer_graph());
  if (!w.has_transformer()) return 0;
  const v1::TransformerSpec& t = w.transformer();
  const double h = t.hidden_size(), a = std::max(1, t.num_attention_heads());
  const double g = t.num_kv_heads() > 0 ? t.num_kv_heads() : a;
  const double f = t.ffn_hidden_size() > 0 ? t.ffn_hidden_size() : 4 * h;
  const double head_dim = t.head_dim() > 0 ? static_cast<double>(t.head_dim()) : h / a;
  const double mats = t.gated_mlp() ? 3 : 2;
  double attention = 2 * h * a * head_dim + 2 * h * g * head_dim;  // q, o; k, v
  if (t.mla().kv_lora_rank() > 0) {  // MLA: latents down, heads up, output (as MlaParams)
    const v1::MlaSpec& m = t.mla();
    const double ql = m.q_lora_rank(), kvl = m.kv_lora_rank(), dqk = m.qk_nope_head_dim() + m.qk_rope_head_dim();
    attention = (ql > 0 ? h * ql + ql * a * dqk : h * a * dqk) + h * (kvl + m.qk_rope_head_dim()) +
                kvl * a * (m.qk_nope_head_dim() + m.v_head_dim()) + a * m.v_head_dim() * h;
  }
  const double dense_mlp = mats * h * f;
  double moe_mlp = dense_mlp;
  int moe_layers = 0;
  if (t.moe().num_experts() > 1) {
    const double fe = t.moe().expert_ffn_hidden_size() > 0 ? t.moe().expert_ffn_hidden_size() : f;
    const double fs = t.moe().shared_expert_ffn_hidden_size() > 0 ? t.moe().shared_expert_ffn_hidden_size() : fe;
    // Routed experts + shared experts + router.
    moe_mlp = t.moe().num_experts() * mats * h * fe + t.moe().num_shared_experts() * mats * h * fs +
              h * t.moe().num_experts();
    // Past the first dense layers, every interval-th layer (TransformerSpec::IsMoeLayer).
    const int interval = std::max(1, t.moe().moe_layer_interval());
    for (int i = std::max(0, t.moe().first_dense_layers()); i < t.num_layers(); ++i) {
      moe_layers += (i + 1) % interval == 0 ? 1 : 0;
    }
  }
  // Two norms per layer: LayerNorm learns a scale and a shift, RMSNorm a scale.
  const double norms = 2 * (t.normalization() == v1::NORMALIZATION_RMSNORM ? 1 : 2) * h;
  const double layers = t.num_layers() * (attention + norms) + (t.num_layers() - moe_layers) * dense_mlp +
                        moe_layers * moe_mlp;
  const double embeddings = (t.tied_embeddings() ? 1 : 2) * static_cast<double>(t.vocab_size()) * h;
  // Each multi-token prediction depth: a layer like the last (MoE where the last is), two
  // norms and its 2h -> h projection; the embedding and head are shared.
  const bool last_moe = moe_layers > 0 && t.num_layers() % std::max(1, t.moe().moe_layer_interval()) == 0;
  const double mtp = t.mtp_num_layers() * (attention + 2 * norms + (last_moe ? moe_mlp : dense_mlp) + 2 * h * h);
  return layers + embeddings + mtp;
}

std::string FormatModels(const v1::ListModelsResponse& r) {
  Table t({"model", "params", "layers", "hidden", "heads", "kv heads", "ffn", "seq", "vocab", "mlp", "experts"});
  for (const v1::Workload& w : r.models()) {
    if (w.has_layer_graph()) {
      // A CNN: its layer count and input shape (channels x spatial axes).
      std::string input;
      for (int64_t v : w.layer_graph().sample_shape()) absl::StrAppend(&input, input.empty() ? "" : "x", v);
      t.Add({w.name(), SiText(ParameterCount(w)), absl::StrCat(w.layer_graph().layers_size()), "-", "-", "-", "-",
             input, "-", "cnn", "-"});
      continue;
    }
    const v1::TransformerSpec& s = w.transformer();
    t.Add({w.name(), SiText(ParameterCount(w)), absl::StrCat(s.num_layers()), absl::StrCat(s.hidden_size()),
           absl::StrCat(s.num_attention_heads()),
           absl::StrCat(s.num_kv_heads() > 0 ? s.num_kv_heads() : s.num_attention_heads()),
           absl::StrCat(s.ffn_hidden_size() > 0 ? s.ffn_hidden_size() : 4 * s.hidden_size()),
           absl::StrCat(s.seq_length()), absl::StrCat(s.vocab_size()),
           s.gated_mlp() ? "swiglu" : "gelu",
           s.moe().num_experts() > 1
               ? absl::StrCat(s.moe().num_experts(), " top-", s.moe().top_k(),
                              s.moe().router_num_groups() > 0
                                  ? absl::StrCat(" in ", s.moe().router_group_topk(), " of ", s.moe().router_num_groups(),
                                                 " groups")
                                  : "")
               : "-"});
  }
  return t.Render();
}

std::string FormatAccuracy(const v1::AccuracyReport& r) {
  std::string out = absl::StrFormat("profile %s@%d\n", r.profile(), r.profile_version());
  Table t({"set", "count", "MAPE", "median APE", "bias (pred/meas)", "memory hits", "memory misses"});
  auto row = [&](const std::string& name, const v1::AccuracyStats& s) {
    t.Add({name, absl::StrCat(s.count()), absl::StrFormat("%.2f%%", 100 * s.mape_ratio()),
           absl::StrFormat("%.2f%%", 100 * s.median_ape_ratio()), absl::StrFormat("%.3f", s.bias_ratio()),
           absl::StrCat(s.memory_hits()), absl::StrCat(s.memory_misses())});
  };
  row("all", r.overall());
  row("recent", r.recent());
  std::vector<std::string> keys;
  for (const auto& [k, v] : r.by_label()) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  for (const std::string& k : keys) {
    // Label values can be whole sentences; the table shows their start.
    constexpr size_t kWidth = 48;
    size_t cut = std::min(k.size(), kWidth - 3);
    while (cut > 0 && cut < k.size() && (static_cast<unsigned char>(k[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
    const std::string shown = k.empty() ? "(none)" : k.size() > kWidth ? absl::StrCat(k.substr(0, cut), "...") : k;
    row(absl::StrCat("label=", shown), r.by_label().at(k));
  }
  return out + t.Render();
}

std::string FormatFitReport(const v1::FitReport& r) {
  std::string out = absl::StrFormat(
      "fitted on %d measurements (%s; %d configurations): MAPE %.2f%% -> %.2f%%, %s %s\n", r.num_measurements(),
      r.sampling_note().empty() ? "all" : r.sampling_note(), r.num_groups(), 100 * r.mape_before_ratio(),
      100 * r.mape_after_ratio(),
      r.cv_valid() ? absl::StrFormat("cross-validated %.2f%%", 100 * r.cv_mape_ratio()) : "no cross-validation",
      r.cv_method().empty() ? "" : absl::StrCat("(", r.cv_method(), ")"));
  if (r.memory_cv_valid()) {
    absl::StrAppend(&out, absl::StrFormat("peak memory: %d measured, cross-validated %.2f%%\n",
                                          r.num_peak_measurements(), 100 * r.memory_cv_mape_ratio()));
  }
  if (r.extrapolation_valid()) {
    absl::StrAppend(&out, absl::StrFormat("largest runs held out: %.2f%% calibrated vs %.2f%% before (%s)\n",
                                          100 * r.cv_extrapolation_mape(), 100 * r.extrapolation_base_mape(),
                                          r.extrapolation_method()));
  }
  if (!r.scope().empty()) absl::StrAppend(&out, "applies: ", r.scope(), "\n");
  if (!r.model_gap().empty()) absl::StrAppend(&out, "model gap: ", r.model_gap(), "\n");
  for (const v1::StratumDisagreement& d : r.disagreements()) {
    absl::StrAppend(&out, absl::StrFormat("regimes disagree on %s: runs in %s want %.4g +- %.2g, runs across %s "
                                          "%.4g +- %.2g (a cost the model lacks at one scale, or a different machine)\n",
                                          d.parameter(), d.narrow_regime(), d.narrow_value(), d.narrow_stddev(),
                                          d.wide_regime(), d.wide_value(), d.wide_stddev()));
  }
  if (!r.promotion_reason().empty()) absl::StrAppend(&out, r.promotion_reason(), "\n");
  Table t({"parameter", "before", "after", "+-", "range", "fitted", "why"});
  for (const v1::ParameterChange& p : r.parameters()) {
    t.Add({p.name(), absl::StrFormat("%.4g", p.before()), absl::StrFormat("%.4g", p.after()),
           p.fitted() && p.stddev() > 0 ? absl::StrFormat("%.2g", p.stddev()) : "-",
           p.upper_bound() > 0 ? absl::StrFormat("%.3g-%.3g", p.lower_bound(), p.upper_bound()) : "-",
           p.fitted() ? (p.at_bound() ? "AT BOUND" : "yes") : "no", p.reason()});
  }
  return out + t.Render();
}

std::string FormatIngest(const v1::IngestMeasurementsResponse& r) {
  Table t({"id", "result", "predicted s", "detail"});
  for (const v1::IngestResult& x : r.results()) {
    const bool accepted = x.status() == v1::IngestResult::STATUS_ACCEPTED;
    const char* result = accepted ? "accepted" : x.status() == v1::IngestResult::STATUS_DUPLICATE ? "duplicate" : "rejected";
    t.Add({x.id().empty() ? "-" : x.id(), result,
           accepted ? absl::StrFormat("%.3f", x.predicted_iteration_time_s()) : "-", x.reason()});
  }
  return absl::StrCat(t.Render(), "\n", r.accepted(), " accepted, ", r.duplicates(), " duplicate, ", r.rejected(),
                      " rejected", r.calibration_triggered() ? "; calibration ran" : "", "\n");
}

namespace {
std::string StoredLine(bool stored, const v1::SystemProfile& p) {
  return stored ? absl::StrCat("new version ", p.name(), "@", p.version(), " (origin microbenchmark)\n")
                : std::string("dry run: nothing stored\n");
}
}  // namespace

std::string FormatFitNetwork(const v1::FitNetworkResponse& r) {
  std::string out = StoredLine(r.stored(), r.profile());
  absl::StrAppend(&out, absl::StrFormat(
      "level %s: per-call overhead %.1f us, per-step latency %.2f us, bus-bandwidth curve of %d points "
      "(median efficiency %.3f)\n%d of %d points within 5%%, max error %.1f%%\n",
      r.level(), r.collective_overhead_us(), r.latency_us(), r.curve_points(), r.efficiency(),
      r.within_5_percent(), r.points(), 100 * r.max_error_ratio()));
  for (const std::string& n : r.notes()) absl::StrAppend(&out, "note: ", n, "\n");
  if (r.missed_size() > 0) {
    Table t({"missed", "collective", "ranks", "MiB", "measured us", "predicted us", "error"});
    for (const v1::CollectiveFitPoint& m : r.missed()) {
      t.Add({m.file(), m.collective(), absl::StrCat(m.ranks()), absl::StrFormat("%.1f", m.bytes() / 1048576),
             absl::StrFormat("%.1f", 1e6 * m.measured_s()), absl::StrFormat("%.1f", 1e6 * m.predicted_s()),
             absl::StrFormat("%+.1f%%", 100 * (m.predicted_s() / m.measured_s() - 1))});
    }
    absl::StrAppend(&out, t.Render());
  }
  return out;
}

std::string FormatFitGemm(const v1::FitGemmResponse& r) {
  std::string out = StoredLine(r.stored(), r.profile());
  absl::StrAppend(&out, absl::StrFormat(
      "matmul_efficiency %.3f, matmul_efficiency_fp8 %s, matmul_half_efficiency_gflop %.3g, matmul_pipeline_depth "
      "%.0f; launch floor %.1f us per call (fp8 %.1f)\n%d of %d shapes within 10%%\n",
      r.matmul_efficiency(), r.matmul_efficiency_fp8() > 0 ? absl::StrFormat("%.3f", r.matmul_efficiency_fp8()) : "-",
      r.matmul_half_efficiency_gflop(), r.matmul_pipeline_depth(), r.launch_floor_us(), r.launch_floor_fp8_us(), r.within_10_percent(),
      r.points()));
  if (r.missed_size() > 0) {
    Table t({"missed m", "n", "k", "dtype", "measured us", "predicted us", "error"});
    for (const v1::GemmFitPoint& m : r.missed()) {
      t.Add({absl::StrCat(m.m()), absl::StrCat(m.n()), absl::StrCat(m.k()), m.dtype(),
             absl::StrFormat("%.1f", 1e6 * m.measured_s()), absl::StrFormat("%.1f", 1e6 * m.predicted_s()),
             absl::StrFormat("%+.0f%%", 100 * (m.predicted_s() / m.measured_s() - 1))});
    }
    absl::StrAppend(&out, t.Render());
  }
  return out;
}

}  // namespace paraplan::cli
