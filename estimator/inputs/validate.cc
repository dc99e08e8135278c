#include "estimator/inputs/validate.h"

#include "estimator/inputs/calibration_regime.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "estimator/inputs/calibration_regime.h"
#include "estimator/inputs/layer_graph.h"
#include "estimator/inputs/status_macros.h"

namespace paraplan {

namespace {

absl::Status Bad(absl::string_view field, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", why));
}

// Upper bounds that keep every product in range and reject absurd requests.
constexpr int64_t kMaxDim = int64_t{1} << 24;
constexpr int kMaxDegree = 1 << 20;

absl::Status Positive(absl::string_view field, int64_t v, int64_t max = kMaxDim) {
  if (v <= 0) return Bad(field, absl::StrCat(v, " must be positive"));
  if (v > max) return Bad(field, absl::StrCat(v, " exceeds the limit ", max));
  return absl::OkStatus();
}

absl::Status NonNegative(absl::string_view field, int64_t v, int64_t max = kMaxDim) {
  if (v < 0) return Bad(field, absl::StrCat(v, " must not be negative"));
  if (v > max) return Bad(field, absl::StrCat(v, " exceeds the limit ", max));
  return absl::OkStatus();
}

absl::Status Finite(absl::string_view field, double v, bool positive) {
  if (!std::isfinite(v)) return Bad(field, "must be a finite number");
  if (positive ? v <= 0 : v < 0) {
    return Bad(field, absl::StrFormat("%g must be %s", v, positive ? "positive" : "non-negative"));
  }
  return absl::OkStatus();
}

// A finite value in [min, max]; with `zero_is_default`, 0 (the field's default) too.
// The lower bounds keep every time and rate finite: 5e-324 is a positive efficiency,
// and a time divided by it is infinite.
absl::Status InRange(absl::string_view field, double v, double min, double max, bool zero_is_default) {
  if (!std::isfinite(v)) return Bad(field, "must be a finite number");
  if (zero_is_default && v == 0) return absl::OkStatus();
  if (v < min || v > max) {
    return Bad(field, absl::StrFormat("%g is outside [%g, %g]%s", v, min, max,
                                      zero_is_default ? " (or 0 = default)" : ""));
  }
  return absl::OkStatus();
}

// An achieved share of a peak: below 1% the hardware is not doing the work at all.
constexpr double kMinEfficiency = 0.01;
// A network's achieved share of its link rate, as low as the bandwidth-curve fit of
// small messages goes (microbench.cc clamps there).
constexpr double kMinNetworkEfficiency = 0.001;
// Rates (GB/s, TFLOP/s) and capacities (GiB): a thousandth of a unit up to far beyond
// any machine, so that no product or quotient of them overflows.
constexpr double kMinRate = 1e-3;
constexpr double kMaxRate = 1e7;

// MLA: set by kv_lora_rank; every head dimension given (the rope part may be 0), one
// K/V head per query head (no grouping), and no head_dim beside it.
absl::Status ValidateMla(const TransformerSpec& t) {
  const std::string p = "workload.transformer.mla.";
  const MlaSpec& m = t.mla;
  for (auto [name, v] : {std::pair{"q_lora_rank", m.q_lora_rank}, {"kv_lora_rank", m.kv_lora_rank},
                         {"qk_nope_head_dim", m.qk_nope_head_dim}, {"qk_rope_head_dim", m.qk_rope_head_dim},
                         {"v_head_dim", m.v_head_dim}}) {
    PARAPLAN_RETURN_IF_ERROR(NonNegative(p + name, v, 1 << 16));
  }
  if (!m.enabled()) {
    if (m.q_lora_rank > 0 || m.qk_nope_head_dim > 0 || m.qk_rope_head_dim > 0 || m.v_head_dim > 0) {
      return Bad(p + "kv_lora_rank", "0: give the key/value latent rank to use MLA");
    }
    return absl::OkStatus();
  }
  if (m.qk_nope_head_dim + m.qk_rope_head_dim == 0) {
    return Bad(p + "qk_nope_head_dim", "and qk_rope_head_dim are both 0: a query head needs a dimension");
  }
  if (m.v_head_dim == 0) return Bad(p + "v_head_dim", "0: a value head needs a dimension");
  if (t.head_dim > 0) {
    return Bad("workload.transformer.head_dim", "does not apply with mla (its head dimensions are mla's)");
  }
  if (t.num_kv_heads > 0 && t.num_kv_heads != t.num_attention_heads) {
    return Bad("workload.transformer.num_kv_heads",
               absl::StrCat(t.num_kv_heads, ": MLA has one key/value head per query head (",
                            t.num_attention_heads, ")"));
  }
  return absl::OkStatus();
}

absl::Status ValidateTransformer(const TransformerSpec& t) {
  const std::string p = "workload.transformer.";
  PARAPLAN_RETURN_IF_ERROR(Positive(p + "num_layers", t.num_layers, 100000));
  PARAPLAN_RETURN_IF_ERROR(Positive(p + "hidden_size", t.hidden_size, 1 << 20));
  PARAPLAN_RETURN_IF_ERROR(Positive(p + "num_attention_heads", t.num_attention_heads, 1 << 16));
  PARAPLAN_RETURN_IF_ERROR(NonNegative(p + "num_kv_heads", t.num_kv_heads, 1 << 16));
  PARAPLAN_RETURN_IF_ERROR(NonNegative(p + "ffn_hidden_size", t.ffn_hidden_size, 1 << 22));
  PARAPLAN_RETURN_IF_ERROR(Positive(p + "seq_length", t.seq_length, 1 << 24));
  PARAPLAN_RETURN_IF_ERROR(Positive(p + "vocab_size", t.vocab_size, 1 << 24));
  if (!(t.dropout >= 0 && t.dropout < 1)) {
    return Bad(p + "dropout", absl::StrCat(t.dropout, " is not a probability in [0, 1)"));
  }
  PARAPLAN_RETURN_IF_ERROR(NonNegative(p + "head_dim", t.head_dim, 1 << 16));
  if (t.head_dim == 0 && !t.mla.enabled() && t.hidden_size % t.num_attention_heads != 0) {
    return Bad(p + "hidden_size", absl::StrCat(t.hidden_size, " is not divisible by num_attention_heads ",
                                               t.num_attention_heads, " (or give head_dim)"));
  }
  if (t.num_kv_heads > 0 && t.num_attention_heads % t.num_kv_heads != 0) {
    return Bad(p + "num_kv_heads", absl::StrCat(t.num_kv_heads, " does not divide num_attention_heads ",
                                                t.num_attention_heads));
  }
  PARAPLAN_RETURN_IF_ERROR(ValidateMla(t));
  PARAPLAN_RETURN_IF_ERROR(NonNegative(p + "sliding_window.tokens", t.sliding_window.tokens, 1 << 24));
  PARAPLAN_RETURN_IF_ERROR(
      NonNegative(p + "sliding_window.layer_interval", t.sliding_window.layer_interval, t.num_layers));
  const MoeSpec& m = t.moe;
  PARAPLAN_RETURN_IF_ERROR(NonNegative(p + "moe.num_experts", m.num_experts, 1 << 16));
  PARAPLAN_RETURN_IF_ERROR(NonNegative(p + "moe.top_k", m.top_k, 1 << 16));
  PARAPLAN_RETURN_IF_ERROR(NonNegative(p + "moe.expert_ffn_hidden_size", m.expert_ffn_hidden_size, 1 << 22));
  PARAPLAN_RETURN_IF_ERROR(NonNegative(p + "moe.moe_layer_interval", m.moe_layer_interval, 100000));
  PARAPLAN_RETURN_IF_ERROR(NonNegative(p + "moe.num_shared_experts", m.num_shared_experts, 1 << 16));
  PARAPLAN_RETURN_IF_ERROR(
      NonNegative(p + "moe.shared_expert_ffn_hidden_size", m.shared_expert_ffn_hidden_size, 1 << 22));
  PARAPLAN_RETURN_IF_ERROR(NonNegative(p + "moe.first_dense_layers", m.first_dense_layers, t.num_layers));
  // The busiest expert holds at most every token's k slots: num_experts / top_k times
  // the mean.
  PARAPLAN_RETURN_IF_ERROR(InRange(p + "moe.load_imbalance", m.load_imbalance, 1,
                                   std::max(1.0, static_cast<double>(m.num_experts) / std::max(1, m.top_k)),
                                   /*zero_is_default=*/true));
  if (m.num_experts > 1 && m.top_k > m.num_experts) {
    return Bad(p + "moe.top_k", absl::StrCat(m.top_k, " exceeds num_experts ", m.num_experts));
  }
  if (m.num_experts > 1 && m.moe_layer_interval > t.num_layers) {
    return Bad(p + "moe.moe_layer_interval",
               absl::StrCat(m.moe_layer_interval, " exceeds num_layers ", t.num_layers));
  }
  return absl::OkStatus();
}

absl::Status ValidateLayerGraph(const LayerGraphSpec& g) {
  if (g.layers.empty()) return Bad("workload.layer_graph.layers", "must not be empty");
  if (g.layers.size() > 100000) return Bad("workload.layer_graph.layers", "more than 100000 layers");
  for (size_t i = 0; i < g.layers.size(); ++i) {
    const LayerSpec& l = g.layers[i];
    const std::string p = absl::StrCat("workload.layer_graph.layers[", i, "].");
    static const char* const kKinds[] = {"conv", "pool", "norm", "relu", "activation", "dropout",
                                         "add", "concat", "flatten", "fc", "softmax"};
    if (std::find(std::begin(kKinds), std::end(kKinds), l.kind) == std::end(kKinds)) {
      return Bad(p + "kind", absl::StrCat("\"", Abbreviated(l.kind, 40),
                                          "\" is not one of conv, pool, norm, relu, activation, dropout, add, "
                                          "concat, flatten, fc, softmax"));
    }
    if (l.input_shape.empty()) return Bad(p + "input_shape", "must not be empty");
    if (l.output_shape.empty()) return Bad(p + "output_shape", "must not be empty");
    for (int64_t v : l.input_shape) PARAPLAN_RETURN_IF_ERROR(Positive(p + "input_shape", v, 1 << 20));
    for (int64_t v : l.output_shape) PARAPLAN_RETURN_IF_ERROR(Positive(p + "output_shape", v, 1 << 20));
    for (int64_t v : l.kernel_shape) PARAPLAN_RETURN_IF_ERROR(Positive(p + "kernel_shape", v, 1 << 12));
    for (int64_t v : l.stride) PARAPLAN_RETURN_IF_ERROR(Positive(p + "stride", v, 1 << 12));
    for (int64_t v : l.padding) PARAPLAN_RETURN_IF_ERROR(NonNegative(p + "padding", v, 1 << 12));
    for (int64_t v : l.dilation) PARAPLAN_RETURN_IF_ERROR(Positive(p + "dilation", v, 1 << 12));
    const size_t axes = l.input_shape.size() - 1;
    for (const auto& [field, v] : {std::pair{"kernel_shape", &l.kernel_shape}, std::pair{"stride", &l.stride},
                                   std::pair{"padding", &l.padding}, std::pair{"dilation", &l.dilation}}) {
      if (v->size() > axes) {
        return Bad(p + field, absl::StrCat(v->size(), " entries for ", axes, " spatial axes of input_shape"));
      }
    }
    if (l.kind == "conv" && l.kernel_shape.empty()) {
      return Bad(p + "kernel_shape", "a conv layer needs a kernel shape");
    }
    PARAPLAN_RETURN_IF_ERROR(NonNegative(p + "groups", l.groups, 1 << 20));
    if (l.kind == "conv" && l.groups > 1 &&
        (l.input_shape[0] % l.groups != 0 || l.output_shape[0] % l.groups != 0)) {
      return Bad(p + "groups", absl::StrCat(l.groups, " does not divide the input channels ", l.input_shape[0],
                                            " and output channels ", l.output_shape[0]));
    }
    if (l.kind == "add" && l.inputs.size() < 2) {
      return Bad(p + "inputs", "a residual add reads at least two layers");
    }
  }
  absl::StatusOr<std::vector<std::vector<int>>> inputs = ResolveInputs(g);
  if (!inputs.ok()) return inputs.status();
  return absl::OkStatus();
}

}  // namespace

namespace {

absl::Status ValidateRecipe(const Workload& w) {
  const QuantRecipe r = w.quant_recipe;
  if (r == QuantRecipe::kDefault) return absl::OkStatus();
  if (!LowPrecisionLinears(w.precision)) {
    return Bad("workload.quant_recipe", "applies to PRECISION_FP8 and PRECISION_FP4 only");
  }
  if ((w.precision == Precision::kFp4) != (r == QuantRecipe::kNvfp4)) {
    return Bad("workload.quant_recipe", w.precision == Precision::kFp4
                                            ? "PRECISION_FP4 runs QUANT_RECIPE_NVFP4"
                                            : "QUANT_RECIPE_NVFP4 needs PRECISION_FP4");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateWorkloadOnProfile(const Workload& w, const SystemProfile& p) {
  if (w.precision == Precision::kFp4 && !(p.accelerator.peak_tflops_fp4 > 0)) {
    return Bad("workload.precision", absl::StrCat("PRECISION_FP4 needs FP4 tensor cores; profile ",
                                                  Abbreviated(p.name), " (", Abbreviated(p.accelerator.name),
                                                  ") has no accelerator.peak_tflops_fp4"));
  }
  return absl::OkStatus();
}

absl::Status ValidateWorkload(const Workload& w) {
  PARAPLAN_RETURN_IF_ERROR(ValidateRecipe(w));
  if (w.kind == Workload::Kind::kTransformer) {
    PARAPLAN_RETURN_IF_ERROR(ValidateTransformer(w.transformer));
  } else {
    PARAPLAN_RETURN_IF_ERROR(ValidateLayerGraph(w.layer_graph));
  }
  PARAPLAN_RETURN_IF_ERROR(NonNegative("workload.dataset.sample_bytes", w.dataset.sample_bytes, int64_t{1} << 40));
  PARAPLAN_RETURN_IF_ERROR(NonNegative("workload.dataset.num_samples", w.dataset.num_samples, int64_t{1} << 50));
  PARAPLAN_RETURN_IF_ERROR(InRange("workload.dataset.decode_core_ms_per_sample", w.dataset.decode_core_ms_per_sample,
                                   0, 1e6, false));
  if (!(w.dataset.fraction > 0 && w.dataset.fraction <= 1)) {
    return Bad("workload.dataset.fraction", absl::StrCat(w.dataset.fraction, " is not in (0, 1]"));
  }
  PARAPLAN_RETURN_IF_ERROR(Finite("workload.training_tokens", w.training_tokens, false));
  return absl::OkStatus();
}

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
                         {"host_staging_efficiency", c.host_staging_efficiency}}) {
    PARAPLAN_RETURN_IF_ERROR(InRange(absl::StrCat("profile.calibration.", name), v, kMinEfficiency, 1.0, true));
  }
  for (auto [name, v, max] : {std::tuple{"matmul_half_efficiency_gflop", c.matmul_half_efficiency_gflop, 1e6},
                              {"iteration_overhead_s", c.iteration_overhead_s, 1e4},
                              {"kernel_overhead_us", c.kernel_overhead_us, 1e6},
                              {"recompute_overhead_us", c.recompute_overhead_us, 1e7},
                              {"memory_overhead_fraction", c.memory_overhead_fraction, 1.0},
                              {"memory_overhead_gib", c.memory_overhead_gib, 1e4},
                              {"collective_overhead_us", c.collective_overhead_us, 1e6},
                              {"jpeg_decode_mpixels_per_core_s", c.jpeg_decode_mpixels_per_core_s, 1e6},
                              {"hdf5_read_gbytes_per_core_s", c.hdf5_read_gbytes_per_core_s, 1e4},
                              {"shared_fs_files_per_s", c.shared_fs_files_per_s, 1e12}}) {
    PARAPLAN_RETURN_IF_ERROR(InRange(absl::StrCat("profile.calibration.", name), v, 0, max, false));
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

namespace {

// Megatron-Core's expert grid: expert_tensor_parallel x expert_parallel ranks fold over
// the attention's tensor x context x data ranks (MoE parallel folding).
absl::Status ValidateExpertGrid(const TransformerSpec& t, const ParallelConfig& c) {
  const std::string p = "config.";
  const int etp = c.ExpertTensorParallel();
  if (etp != c.tensor_parallel && !t.is_moe()) {
    return Bad(p + "expert_tensor_parallel", "needs a mixture-of-experts model (moe.num_experts > 1)");
  }
  if (!t.is_moe()) return absl::OkStatus();
  const int64_t ranks = int64_t{c.tensor_parallel} * c.context_parallel * c.data_parallel;
  const int64_t grid = int64_t{c.expert_parallel} * etp;
  if (ranks % grid != 0) {
    return Bad(p + "expert_parallel",
               absl::StrCat("expert_parallel x expert_tensor_parallel = ", c.expert_parallel, " x ", etp,
                            " does not divide tensor_parallel x context_parallel x data_parallel = ", ranks));
  }
  if (t.moe.expert_ffn_hidden_size % etp != 0) {
    return Bad(p + "expert_tensor_parallel",
               absl::StrCat(etp, " does not divide moe.expert_ffn_hidden_size ", t.moe.expert_ffn_hidden_size));
  }
  // Tokens leave the attention sharded by sequence over its TP ranks; experts sharded
  // another way need that split (Megatron-Core requires sequence parallelism for it).
  if (etp != c.tensor_parallel && c.tensor_parallel > 1 && !c.sequence_parallel) {
    return Bad(p + "expert_tensor_parallel",
               absl::StrCat(etp, " differs from tensor_parallel ", c.tensor_parallel,
                            ": needs sequence_parallel (tokens reach the experts split by sequence)"));
  }
  return absl::OkStatus();
}

// Layers per pipeline chunk: every chunk needs one, except the first stage's first and
// the last stage's last, which may hold only the embedding or the loss once the stage
// counts are given.
absl::Status ValidateStageLayout(const ParallelConfig& c, int64_t layers) {
  const std::string p = "config.";
  const int first = c.first_pipeline_stage_layers, last = c.last_pipeline_stage_layers;
  const int64_t chunks = int64_t{c.pipeline_parallel} * c.virtual_pipeline_stages;
  if (first == 0 && last == 0) {
    if (chunks > layers) {
      return Bad(p + "pipeline_parallel",
                 absl::StrCat("pipeline_parallel x virtual_pipeline_stages = ", chunks, " exceeds the ", layers,
                              " layers (each model chunk needs a layer; first_pipeline_stage_layers and "
                              "last_pipeline_stage_layers let the end stages hold fewer)"));
    }
    return absl::OkStatus();
  }
  const std::string field = p + (first > 0 ? "first_pipeline_stage_layers" : "last_pipeline_stage_layers");
  if (c.pipeline_parallel == 1) return Bad(field, "needs pipeline_parallel > 1");
  if (int64_t{first} + last > layers) {
    return Bad(field, absl::StrCat("first ", first, " + last ", last, " exceeds the ", layers, " layers"));
  }
  if (c.pipeline_parallel == 2 && first > 0 && last > 0 && first + last != layers) {
    return Bad(field, absl::StrCat("with two stages first ", first, " + last ", last, " must equal the ", layers,
                                   " layers"));
  }
  const int inner_stages = c.pipeline_parallel - (first > 0 ? 1 : 0) - (last > 0 ? 1 : 0);
  const int64_t rest = layers - first - last;
  if (rest < int64_t{inner_stages} * c.virtual_pipeline_stages) {
    return Bad(field, absl::StrCat("leaves ", rest, " layers for ", inner_stages, " stages x ",
                                   c.virtual_pipeline_stages, " chunks; each of their chunks needs a layer"));
  }
  return absl::OkStatus();
}

// The degrees and switches as given, each within its range.
absl::Status ValidateConfigFields(const Workload& w, const ParallelConfig& raw) {
  const std::string p = "config.";
  for (auto [name, v] : {std::pair{"data_parallel", raw.data_parallel},
                         {"tensor_parallel", raw.tensor_parallel},
                         {"pipeline_parallel", raw.pipeline_parallel},
                         {"context_parallel", raw.context_parallel},
                         {"expert_parallel", raw.expert_parallel},
                         {"expert_tensor_parallel", raw.expert_tensor_parallel},
                         {"virtual_pipeline_stages", raw.virtual_pipeline_stages},
                         {"first_pipeline_stage_layers", raw.first_pipeline_stage_layers},
                         {"last_pipeline_stage_layers", raw.last_pipeline_stage_layers},
                         {"cpu_offload_layers", raw.cpu_offload_layers},
                         {"micro_batch_size", raw.micro_batch_size},
                         {"spatial_parallel", raw.spatial_parallel},
                         {"filter_parallel", raw.filter_parallel},
                         {"channel_parallel", raw.channel_parallel},
                         {"spatial_layers", raw.spatial_layers},
                         {"spatial_axes", raw.spatial_axes}}) {
    PARAPLAN_RETURN_IF_ERROR(NonNegative(p + name, v, kMaxDegree));
  }
  PARAPLAN_RETURN_IF_ERROR(Positive(p + "global_batch_size", raw.global_batch_size, int64_t{1} << 30));
  if (raw.recompute_modules != 0 && raw.recompute != Recompute::kSelective) {
    return Bad(p + "recompute_modules", "needs recompute RECOMPUTE_SELECTIVE");
  }
  if (raw.recompute_modules >= (1u << std::size(kRecomputeModuleNames))) {
    return Bad(p + "recompute_modules", "names a module Megatron-Core does not have");
  }
  if (raw.zero_stage < 0 || raw.zero_stage > 3) {
    return Bad(p + "zero_stage", absl::StrCat(raw.zero_stage, " must be 0, 1, 2 or 3"));
  }
  if (raw.fp8_param_gather && (w.precision != Precision::kFp8 || raw.zero_stage < 1)) {
    return Bad(p + "fp8_param_gather", "needs PRECISION_FP8 and zero_stage >= 1 (ZeRO gathers the FP8 weights)");
  }
  return absl::OkStatus();
}

// The batch and the pipeline schedule of the normalized configuration.
absl::Status ValidateBatchAndSchedule(const ParallelConfig& c) {
  const std::string p = "config.";
  if (c.NumGpus() > (int64_t{1} << 24)) {
    return Bad(p + "data_parallel", absl::StrCat("the degrees multiply to ", c.NumGpus(), " GPUs, above 2^24"));
  }
  const int64_t per_step = int64_t{c.data_parallel} * c.micro_batch_size;
  if (c.global_batch_size % per_step != 0) {
    return Bad(p + "global_batch_size",
               absl::StrCat(c.global_batch_size, " is not divisible by data_parallel x micro_batch_size = ",
                            per_step));
  }
  const int m = c.NumMicroBatches();
  if (c.virtual_pipeline_stages > 1) {
    if (c.pipeline_parallel == 1) {
      return Bad(p + "virtual_pipeline_stages", "needs pipeline_parallel > 1");
    }
    if (c.pipeline_schedule != PipelineSchedule::kInterleaved1F1B &&
        c.pipeline_schedule != PipelineSchedule::kZeroBubble) {
      return Bad(p + "virtual_pipeline_stages",
                 absl::StrCat(c.virtual_pipeline_stages, " needs SCHEDULE_INTERLEAVED_1F1B"));
    }
    if (c.pipeline_schedule == PipelineSchedule::kInterleaved1F1B && m % c.pipeline_parallel != 0) {
      return Bad(p + "global_batch_size",
                 absl::StrCat(m, " micro-batches is not a multiple of pipeline_parallel ",
                              c.pipeline_parallel, " (required by the interleaved schedule)"));
    }
  }
  if (c.pipeline_schedule == PipelineSchedule::kInterleaved1F1B && c.virtual_pipeline_stages == 1 &&
      c.pipeline_parallel > 1) {
    return Bad(p + "pipeline_schedule", "SCHEDULE_INTERLEAVED_1F1B needs virtual_pipeline_stages > 1");
  }
  return absl::OkStatus();
}

// What a transformer admits: heads, KV heads, sequence and experts divisible by their
// degrees, the stage layout, the expert grid, MoE-only switches.
absl::Status ValidateTransformerConfig(const Workload& w, const ParallelConfig& c) {
  const std::string p = "config.";
  const TransformerSpec t = w.transformer.Resolved();
  for (auto [name, degree] : {std::pair{"spatial_parallel", c.spatial_parallel},
                              {"filter_parallel", c.filter_parallel}, {"channel_parallel", c.channel_parallel}}) {
    if (degree > 1) {
      return Bad(p + name, "spatial, filter and channel parallelism apply to layer graphs (CNNs) only");
    }
  }
  if (t.num_attention_heads % c.tensor_parallel != 0) {
    return Bad(p + "tensor_parallel", absl::StrCat(c.tensor_parallel, " does not divide num_attention_heads ",
                                                   t.num_attention_heads));
  }
  if (t.num_kv_heads % c.tensor_parallel != 0) {
    return Bad(p + "tensor_parallel",
               absl::StrCat(c.tensor_parallel, " does not divide num_kv_heads ", t.num_kv_heads));
  }
  // Stages need not hold equal layer counts (BLOOM-176B: 70 layers over 12 stages).
  PARAPLAN_RETURN_IF_ERROR(ValidateStageLayout(c, t.num_layers));
  if (c.cpu_offload_layers > 0 && c.cpu_offload_layers >= t.num_layers / c.pipeline_parallel) {
    return Bad(p + "cpu_offload_layers",
               absl::StrCat(c.cpu_offload_layers, " leaves no layer on the GPU of a stage of ",
                            t.num_layers / c.pipeline_parallel));
  }
  if (t.seq_length % c.context_parallel != 0) {
    return Bad(p + "context_parallel",
               absl::StrCat(c.context_parallel, " does not divide seq_length ", t.seq_length));
  }
  if (c.expert_parallel > 1) {
    if (!t.is_moe()) return Bad(p + "expert_parallel", "needs a mixture-of-experts model (moe.num_experts > 1)");
    if (t.moe.num_experts % c.expert_parallel != 0) {
      return Bad(p + "expert_parallel", absl::StrCat(c.expert_parallel, " does not divide num_experts ",
                                                     t.moe.num_experts));
    }
  }
  PARAPLAN_RETURN_IF_ERROR(ValidateExpertGrid(t, c));
  if (!t.is_moe() && (c.recompute_modules & (kRecomputeMoe | kRecomputeMoeAct | kRecomputeSharedExperts))) {
    return Bad(p + "recompute_modules", "moe, moe_act and shared_experts need a mixture-of-experts model");
  }
  if (!t.is_moe() && c.moe_dispatcher != MoeDispatcher::kAllToAll) {
    return Bad(p + "moe_dispatcher", "needs a mixture-of-experts model (moe.num_experts > 1)");
  }
  if (c.moe_a2a_overlap && c.expert_parallel == 1) {
    return Bad(p + "moe_a2a_overlap", "needs expert_parallel > 1 (there is no all-to-all to hide)");
  }
  return absl::OkStatus();
}

// What a layer graph admits: no transformer degrees; filters, spatial axes and extents
// the split divides, layer by layer.
absl::Status ValidateLayerGraphConfig(const Workload& w, const ParallelConfig& c) {
  const std::string p = "config.";
  if (c.tensor_parallel > 1 || c.context_parallel > 1 || c.expert_parallel > 1 || c.expert_tensor_parallel > 1) {
    return Bad(p + "tensor_parallel", "tensor, context and expert parallelism apply to transformers only; "
                                      "use spatial, filter or channel parallelism for layer graphs");
  }
  if (c.recompute_modules != 0) return Bad(p + "recompute_modules", "applies to transformers only");
  if (c.cpu_offload_layers != 0) return Bad(p + "cpu_offload_layers", "applies to transformers only");
  if (c.moe_dispatcher != MoeDispatcher::kAllToAll || c.moe_a2a_overlap) {
    return Bad(p + (c.moe_a2a_overlap ? "moe_a2a_overlap" : "moe_dispatcher"),
               "applies to mixture-of-experts transformers only");
  }
  const int64_t layers = static_cast<int64_t>(w.layer_graph.layers.size());
  PARAPLAN_RETURN_IF_ERROR(ValidateStageLayout(c, layers));
  if (c.spatial_layers < 0 || c.spatial_layers > layers) {
    return Bad(p + "spatial_layers", absl::StrCat(c.spatial_layers, " is outside 0..", layers, " (the layer count)"));
  }
  const int first_axes = w.layer_graph.layers.empty() ? 0 : SpatialAxes(w.layer_graph.layers[0].input_shape);
  if (c.spatial_axes < 1 || c.spatial_axes > std::max(1, first_axes)) {
    return Bad(p + "spatial_axes", absl::StrCat(c.spatial_axes, " is outside 1..", std::max(1, first_axes),
                                                " (the spatial axes of the sample)"));
  }
  const std::vector<int> factors = SpatialFactors(c.spatial_parallel, c.spatial_axes);
  for (size_t i = 0; i < w.layer_graph.layers.size(); ++i) {
    const LayerSpec& l = w.layer_graph.layers[i];
    // Callers may check the config before (or without) the workload: no shape is
    // indexed before its size is known.
    if (l.output_shape.empty()) {
      return Bad(absl::StrCat("workload.layer_graph.layers[", i, "].output_shape"), "must not be empty");
    }
    if (l.output_shape[0] % c.filter_parallel != 0 && l.kind == "conv") {
      return Bad(p + "filter_parallel",
                 absl::StrCat(c.filter_parallel, " does not divide the ", l.output_shape[0],
                              " filters of layer \"", Abbreviated(l.name), "\""));
    }
    const bool split = c.spatial_layers <= 0 || static_cast<int64_t>(i) < c.spatial_layers;
    for (int a = 0; split && a < static_cast<int>(factors.size()); ++a) {
      if (a + 1 < static_cast<int>(l.output_shape.size()) && l.output_shape[a + 1] < factors[a]) {
        return Bad(p + "spatial_parallel",
                   absl::StrCat(c.spatial_parallel, " splits spatial axis ", a, " ", factors[a], " ways, more than the ",
                                l.output_shape[a + 1], " of layer \"", Abbreviated(l.name),
                                "\"; split fewer layers (spatial_layers)"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateConfig(const Workload& w, const ParallelConfig& raw) {
  PARAPLAN_RETURN_IF_ERROR(ValidateConfigFields(w, raw));
  const ParallelConfig c = raw.Normalized();
  PARAPLAN_RETURN_IF_ERROR(ValidateBatchAndSchedule(c));
  return w.kind == Workload::Kind::kTransformer ? ValidateTransformerConfig(w, c) : ValidateLayerGraphConfig(w, c);
}

FrameworkRefusal RefusedByFramework(Framework f, const ParallelConfig& c) {
  if (f == Framework::kAny) return {};
  const PipelineSchedule s = c.pipeline_schedule;
  if (f == Framework::kMegatron || f == Framework::kNemo) {
    if (c.zero_stage == 2) return {"zero_stage", "2 is not run: 1 is the distributed optimizer, 3 FSDP"};
    if (c.pipeline_parallel > 1 && s != PipelineSchedule::k1F1B && s != PipelineSchedule::kInterleaved1F1B) {
      return {"pipeline_schedule", "runs 1F1B or interleaved 1F1B only"};
    }
    // Megatron-Core's TransformerConfig refuses CPU offloading beside either.
    if (c.cpu_offload_layers > 0 && c.pipeline_parallel > 1) {
      return {"cpu_offload_layers", "CPU offloading does not run with pipeline parallelism"};
    }
    if (c.cpu_offload_layers > 0 && c.recompute != Recompute::kNone) {
      return {"cpu_offload_layers", "CPU offloading does not run with recomputation"};
    }
    return {};
  }
  if (f == Framework::kDeepSpeed) {
    if (c.context_parallel > 1) return {"context_parallel", "has no ring attention"};
    if (c.ExpertTensorParallel() != c.tensor_parallel) return {"expert_tensor_parallel", "experts follow TP"};
    if (c.virtual_pipeline_stages > 1) return {"virtual_pipeline_stages", "no interleaved schedule"};
    if (c.pipeline_parallel > 1 && c.zero_stage >= 2) return {"zero_stage", "2 and 3 do not run with pipeline stages"};
    if (c.moe_dispatcher == MoeDispatcher::kDeepEp) return {"moe_dispatcher", "has no DeepEP dispatcher"};
    return {};
  }
  if (c.zero_stage == 1) return {"zero_stage", "1 is not run"};
  if (f == Framework::kTorchtitan && c.zero_stage == 2) return {"zero_stage", "2 is not run: DDP or FSDP2"};
  if (f == Framework::kPytorchFsdp &&
      (c.tensor_parallel > 1 || c.pipeline_parallel > 1 || c.context_parallel > 1 || c.expert_parallel > 1)) {
    return {"tensor_parallel", "runs data parallelism only"};
  }
  return {};
}

absl::Status ValidateFramework(Framework f, const ParallelConfig& raw) {
  const FrameworkRefusal r = RefusedByFramework(f, raw.Normalized());
  if (r.field == nullptr) return absl::OkStatus();
  return Bad(absl::StrCat("config.", r.field), absl::StrCat(r.reason, " (", FrameworkName(f), ")"));
}

absl::Status ValidateMeasured(double iteration_time_s, double peak_memory_gib) {
  PARAPLAN_RETURN_IF_ERROR(InRange("iteration_time_s", iteration_time_s, kMinMeasuredIterationS,
                                   kMaxMeasuredIterationS, /*zero_is_default=*/false));
  return InRange("peak_memory_gib", peak_memory_gib, 0, kMaxMeasuredMemoryGiB, /*zero_is_default=*/false);
}

absl::Status ValidateConfigForGpus(const Workload& w, const ParallelConfig& c, int64_t num_gpus) {
  PARAPLAN_RETURN_IF_ERROR(ValidateConfig(w, c));
  const int64_t product = c.Normalized().NumGpus();
  if (product != num_gpus) {
    return Bad("config", absl::StrCat("the parallel degrees multiply to ", product, " GPUs, not num_gpus ",
                                      num_gpus));
  }
  return absl::OkStatus();
}

}  // namespace paraplan
