#include "estimator/inputs/workload.h"

#include <iterator>

namespace paraplan {

const char* LayerKindName(LayerKind k) { return kLayerKindNames[static_cast<int>(k)]; }

bool LayerKindNamed(const std::string& name, LayerKind* kind) {
  for (size_t i = 0; i < std::size(kLayerKindNames); ++i) {
    if (name == kLayerKindNames[i]) {
      *kind = static_cast<LayerKind>(i);
      return true;
    }
  }
  return false;
}

double BytesPerElement(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return 4;
    case Precision::kFp8:  // FP8 training keeps BF16 activations/weights (Transformer Engine)
    case Precision::kFp4:
    case Precision::kBf16:
    case Precision::kFp16:
      return 2;
  }
  return 2;
}

QuantRecipe ResolvedRecipe(const Workload& w) {
  if (!LowPrecisionLinears(w.precision)) return QuantRecipe::kDefault;
  if (w.quant_recipe != QuantRecipe::kDefault) return w.quant_recipe;
  return w.precision == Precision::kFp4 ? QuantRecipe::kNvfp4 : QuantRecipe::kDelayedScaling;
}

double QuantisedBytesPerElement(QuantRecipe r) {
  switch (r) {
    case QuantRecipe::kDefault:
      return 2;
    case QuantRecipe::kDelayedScaling:
    case QuantRecipe::kCurrentScaling:
    case QuantRecipe::kBlockwise:
      return 1;
    case QuantRecipe::kMxfp8:
      return 1 + 1.0 / 32;
    case QuantRecipe::kNvfp4:
      return 0.5 + 1.0 / 16;
  }
  return 2;
}

double QuantisedOrientations(QuantRecipe r, bool fp8_any_layout) {
  const bool per_tensor = r == QuantRecipe::kDelayedScaling || r == QuantRecipe::kCurrentScaling;
  return per_tensor && fp8_any_layout ? 1 : 2;
}

TransformerSpec TransformerSpec::Resolved() const {
  TransformerSpec r = *this;
  if (r.num_kv_heads <= 0) r.num_kv_heads = r.num_attention_heads;
  if (r.head_dim <= 0 && r.num_attention_heads > 0) r.head_dim = r.hidden_size / r.num_attention_heads;
  // Saturating: Resolved() may run before validation bounds hidden_size (fuzz finding).
  if (r.ffn_hidden_size <= 0) {
    r.ffn_hidden_size = r.hidden_size <= 0                   ? 0  // refused by validation (fuzz finding)
                        : r.hidden_size > (int64_t{1} << 60) ? (int64_t{1} << 62)
                                                             : 4 * r.hidden_size;
  }
  if (r.sliding_window.layer_interval <= 0) r.sliding_window.layer_interval = 1;
  if (r.moe.num_experts > 1) {
    if (r.moe.top_k <= 0) r.moe.top_k = 1;
    if (r.moe.expert_ffn_hidden_size <= 0) r.moe.expert_ffn_hidden_size = r.ffn_hidden_size;
    if (r.moe.moe_layer_interval <= 0) r.moe.moe_layer_interval = 1;
    if (r.moe.shared_expert_ffn_hidden_size <= 0) r.moe.shared_expert_ffn_hidden_size = r.moe.expert_ffn_hidden_size;
    if (r.moe.load_imbalance <= 0) r.moe.load_imbalance = kDefaultLoadImbalance;
  }
  return r;
}

int TransformerSpec::NumMoeLayers() const {
  int n = 0;
  for (int i = 0; i < num_layers; ++i) n += IsMoeLayer(i) ? 1 : 0;
  return n;
}

}  // namespace paraplan
