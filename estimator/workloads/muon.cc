#include "estimator/workloads/muon.h"

#include <algorithm>

namespace paraplan {

double NewtonSchulzSeconds(const Hardware& hw, double m, double n) {
  const double lo = std::min(m, n), hi = std::max(m, n);
  if (lo <= 0) return 0;
  // fp32 operands (4 bytes) at the 16-bit rate (matmul precision "medium").
  const double step = hw.BatchedMatmulTime(lo, lo, hi, 1, 4) + hw.BatchedMatmulTime(lo, lo, lo, 1, 4) +
                      hw.BatchedMatmulTime(lo, hi, lo, 1, 4);
  return kMuonNewtonSchulzSteps * step;
}

namespace {

// The attention's matrices (Megatron-Core's linear_qkv split into Q, K and V; MLA's down
// and up projections), out x in.
double AttentionSeconds(const TransformerSpec& t, const Hardware& hw) {
  const double h = static_cast<double>(t.hidden_size), a = t.num_attention_heads;
  if (!t.mla.enabled()) {
    const double d = t.head_dim > 0 ? static_cast<double>(t.head_dim) : h / a;
    return NewtonSchulzSeconds(hw, a * d, h) + 2 * NewtonSchulzSeconds(hw, t.num_kv_heads * d, h) +
           NewtonSchulzSeconds(hw, h, a * d);
  }
  const MlaSpec& m = t.mla;
  const double ql = static_cast<double>(m.q_lora_rank), kvl = static_cast<double>(m.kv_lora_rank);
  const double qk = static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim);
  const double q = ql > 0 ? NewtonSchulzSeconds(hw, ql, h) + NewtonSchulzSeconds(hw, a * qk, ql)
                          : NewtonSchulzSeconds(hw, a * qk, h);
  const double kv = NewtonSchulzSeconds(hw, kvl + static_cast<double>(m.qk_rope_head_dim), h) +
                    NewtonSchulzSeconds(hw, a * static_cast<double>(m.qk_nope_head_dim + m.v_head_dim), kvl);
  return q + kv + NewtonSchulzSeconds(hw, h, a * static_cast<double>(m.v_head_dim));
}

// An MLP of width f: fc1 (gate and up fused, one parameter) and fc2.
double MlpSeconds(const TransformerSpec& t, const Hardware& hw, double f) {
  if (f <= 0) return 0;
  const double h = static_cast<double>(t.hidden_size);
  return NewtonSchulzSeconds(hw, (t.gated_mlp ? 2 : 1) * f, h) + NewtonSchulzSeconds(hw, h, f);
}

}  // namespace

MuonStepTimes MuonStepTimesOf(const TransformerSpec& t, const Hardware& hw) {
  MuonStepTimes out;
  if (t.num_layers <= 0) return out;
  const double attention = AttentionSeconds(t, hw);
  const double dense_mlp = MlpSeconds(t, hw, static_cast<double>(t.ffn_hidden_size));
  double moe_dense = 0, experts = 0;
  if (t.is_moe()) {
    const MoeSpec& m = t.moe;
    moe_dense = NewtonSchulzSeconds(hw, m.num_experts, static_cast<double>(t.hidden_size)) +
                MlpSeconds(t, hw, m.num_shared_experts * static_cast<double>(m.shared_expert_ffn_hidden_size));
    experts = m.num_experts * MlpSeconds(t, hw, static_cast<double>(m.expert_ffn_hidden_size));
  }
  double dense = 0, routed = 0;
  for (int i = 0; i < t.num_layers; ++i) {
    const bool moe = t.IsMoeLayer(i);
    dense += attention + (moe ? moe_dense : dense_mlp);
    routed += moe ? experts : 0;
  }
  out.dense_s_per_layer = dense / t.num_layers;
  out.experts_s_per_layer = routed / t.num_layers;
  return out;
}

}  // namespace paraplan
