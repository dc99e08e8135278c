#include "estimator/inputs/validate.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "estimator/inputs/layer_graph.h"
#include "estimator/inputs/status_macros.h"
#include "estimator/inputs/validate_fields.h"

namespace paraplan {

using namespace validate;  // NOLINT: the shared field checks

namespace {

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

// Megatron-Core's checks (transformer_config.py: num_moe_experts divisible by
// moe_router_num_groups, moe_router_group_topk <= moe_router_num_groups; group_limited_topk
// scores each group by its top_k / group_topk best experts, so at least one, and no more
// than a group holds).
absl::Status ValidateGroupLimitedRouting(const std::string& p, const MoeSpec& m) {
  PARAPLAN_RETURN_IF_ERROR(NonNegative(p + "moe.router_num_groups", m.router_num_groups, 1 << 16));
  PARAPLAN_RETURN_IF_ERROR(NonNegative(p + "moe.router_group_topk", m.router_group_topk, 1 << 16));
  if (m.router_num_groups == 0 && m.router_group_topk == 0) return absl::OkStatus();
  if (m.router_num_groups == 0 || m.router_group_topk == 0) {
    return Bad(p + (m.router_num_groups == 0 ? "moe.router_num_groups" : "moe.router_group_topk"),
               "group-limited routing needs both router_num_groups and router_group_topk");
  }
  if (m.num_experts <= 1 || m.num_experts % m.router_num_groups != 0) {
    return Bad(p + "moe.router_num_groups",
               absl::StrCat(m.router_num_groups, " does not divide num_experts ", m.num_experts));
  }
  if (m.router_group_topk > m.router_num_groups) {
    return Bad(p + "moe.router_group_topk",
               absl::StrCat(m.router_group_topk, " exceeds router_num_groups ", m.router_num_groups));
  }
  if (static_cast<int64_t>(m.router_group_topk) * (m.num_experts / m.router_num_groups) < m.top_k) {
    return Bad(p + "moe.router_group_topk",
               absl::StrCat(m.router_group_topk, " groups of ", m.num_experts / m.router_num_groups,
                            " experts hold fewer than top_k ", m.top_k));
  }
  if (m.router_group_topk > m.top_k) {
    return Bad(p + "moe.router_group_topk",
               absl::StrCat(m.router_group_topk, " exceeds top_k ", m.top_k, " (each picked group takes top_k / router_group_topk experts)"));
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
  PARAPLAN_RETURN_IF_ERROR(NonNegative(p + "mtp_num_layers", t.mtp_num_layers, 16));
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
  return ValidateGroupLimitedRouting(p, m);
}

absl::Status ValidateLayerGraph(const LayerGraphSpec& g) {
  if (g.layers.empty()) return Bad("workload.layer_graph.layers", "must not be empty");
  if (g.layers.size() > 100000) return Bad("workload.layer_graph.layers", "more than 100000 layers");
  for (size_t i = 0; i < g.layers.size(); ++i) {
    const LayerSpec& l = g.layers[i];
    const std::string p = absl::StrCat("workload.layer_graph.layers[", i, "].");
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
    if (l.kind == LayerKind::kConv && l.kernel_shape.empty()) {
      return Bad(p + "kernel_shape", "a conv layer needs a kernel shape");
    }
    PARAPLAN_RETURN_IF_ERROR(NonNegative(p + "groups", l.groups, 1 << 20));
    if (l.kind == LayerKind::kConv && l.groups > 1 &&
        (l.input_shape[0] % l.groups != 0 || l.output_shape[0] % l.groups != 0)) {
      return Bad(p + "groups", absl::StrCat(l.groups, " does not divide the input channels ", l.input_shape[0],
                                            " and output channels ", l.output_shape[0]));
    }
    if (l.kind == LayerKind::kAdd && l.inputs.size() < 2) {
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

// Transformer Engine refuses a recipe the GPU's tensor cores lack (quantization.py,
// check_fp8_support / check_mxfp8_support / check_nvfp4_support): FP8 needs compute
// capability 8.9+, MXFP8 and NVFP4 10.0+ (Blackwell). A profile states the first by an
// FP8 peak and the second by an FP4 peak (the block-scaled tensor cores came together).
absl::Status ValidateWorkloadOnProfile(const Workload& w, const SystemProfile& p) {
  const std::string gpu = absl::StrCat("profile ", Abbreviated(p.name), " (", Abbreviated(p.accelerator.name), ")");
  if (w.precision == Precision::kFp4 && !(p.accelerator.peak_tflops_fp4 > 0)) {
    return Bad("workload.precision",
               absl::StrCat("PRECISION_FP4 needs FP4 tensor cores; ", gpu, " has no accelerator.peak_tflops_fp4"));
  }
  if (w.precision == Precision::kFp8 && !(p.accelerator.peak_tflops_fp8 > 0)) {
    return Bad("workload.precision", absl::StrCat("PRECISION_FP8 needs FP8 tensor cores (compute capability 8.9+); ",
                                                  gpu, " has no accelerator.peak_tflops_fp8"));
  }
  if (w.precision == Precision::kFp8 && w.quant_recipe == QuantRecipe::kMxfp8 &&
      !(p.accelerator.peak_tflops_fp4 > 0)) {
    return Bad("workload.quant_recipe",
               absl::StrCat("QUANT_RECIPE_MXFP8 needs Blackwell's block-scaled tensor cores (compute capability "
                            "10.0+, which also run FP4); ",
                            gpu, " has no accelerator.peak_tflops_fp4"));
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
  // Today's largest runs train on ~10^14 tokens; 10^18 leaves room and keeps the time,
  // energy and cost to train printable.
  PARAPLAN_RETURN_IF_ERROR(InRange("workload.training_tokens", w.training_tokens, 0, 1e18, false));
  const Precision moments = w.optimizer_moments;
  if (moments != Precision::kFp32 && moments != Precision::kBf16 && moments != Precision::kFp16) {
    return Bad("workload.optimizer_moments", "2-byte (BF16, FP16) or fp32 moments");
  }
  if (w.optimizer == Optimizer::kMuon && w.kind != Workload::Kind::kTransformer) {
    return Bad("workload.optimizer", "Muon orthogonalises a transformer's weight matrices; layer graphs run Adam or SGD");
  }
  if (moments != Precision::kFp32 && w.optimizer != Optimizer::kAdam) {
    return Bad("workload.optimizer_moments",
               "2-byte moments are Adam's (Megatron-Core's precision-aware optimizer runs Adam only)");
  }
  return absl::OkStatus();
}

}  // namespace paraplan
