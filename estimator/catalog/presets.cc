#include "estimator/catalog/presets.h"

#include <tuple>

namespace paraplan {

namespace {

Workload Transformer(const char* name, int layers, int64_t hidden, int heads, int kv_heads,
                     int64_t ffn, int64_t seq, int64_t vocab, bool gated, bool tied,
                     double training_tokens) {
  Workload w;
  w.name = name;
  w.kind = Workload::Kind::kTransformer;
  TransformerSpec& t = w.transformer;
  t.num_layers = layers;
  t.hidden_size = hidden;
  t.num_attention_heads = heads;
  t.num_kv_heads = kv_heads;
  t.ffn_hidden_size = ffn;
  t.seq_length = seq;
  t.vocab_size = vocab;
  t.gated_mlp = gated;
  t.tied_embeddings = tied;
  if (gated) {
    // Llama / Mixtral: RMSNorm and no dropout (Touvron et al. 2023, sec. 2.2; the Llama 3
    // and Mixtral reference implementations apply no dropout).
    t.normalization = Normalization::kRmsNorm;
    t.dropout = 0;
  }
  w.precision = Precision::kBf16;
  w.training_tokens = training_tokens;
  return w;
}

}  // namespace

std::vector<Workload> ModelPresets() {
  std::vector<Workload> p;
  // Brown et al. 2020 (GPT-3), Table 2.1; vocabulary padded to 51,200 as in Megatron-LM.
  p.push_back(Transformer("gpt3-175b", 96, 12288, 96, 0, 49152, 2048, 51200, false, true, 300e9));
  // Meta Llama 3 model card / "The Llama 3 Herd of Models" (2024), Table 3.
  p.push_back(Transformer("llama3-8b", 32, 4096, 32, 8, 14336, 8192, 128256, true, false, 15e12));
  p.push_back(Transformer("llama3-70b", 80, 8192, 64, 8, 28672, 8192, 128256, true, false, 15e12));
  p.push_back(Transformer("llama3-405b", 126, 16384, 128, 8, 53248, 8192, 128256, true, false, 15.6e12));
  // Korthikanti et al. 2022, Table 3 (Megatron-LM GPT models).
  p.push_back(Transformer("megatron-22b", 48, 6144, 64, 0, 24576, 2048, 51200, false, false, 0));
  p.push_back(Transformer("megatron-530b", 105, 20480, 128, 0, 81920, 2048, 51200, false, false, 270e9));
  p.push_back(Transformer("megatron-1t", 128, 25600, 160, 0, 102400, 2048, 51200, false, false, 0));
  // Jiang et al. 2024 (Mixtral of Experts): 8 experts, top-2, SwiGLU.
  Workload mixtral = Transformer("mixtral-8x7b", 32, 4096, 32, 8, 14336, 4096, 32000, true, false, 0);
  mixtral.transformer.moe.num_experts = 8;
  mixtral.transformer.moe.top_k = 2;
  mixtral.transformer.moe.expert_ffn_hidden_size = 14336;
  mixtral.transformer.moe.moe_layer_interval = 1;
  p.push_back(mixtral);
  // Qwen3 Technical Report (Yang et al. 2025, Table 2) and the models' config.json:
  // every layer MoE, 128 experts, top-8, no shared expert, heads of 128 (hidden / heads
  // differs), 36T pre-training tokens at 4,096 (stage 1).
  for (const auto& [name, layers, hidden, heads, expert_ffn] :
       {std::tuple{"qwen3-235b-a22b", 94, 4096, 64, 1536}, std::tuple{"qwen3-30b-a3b", 48, 2048, 32, 768}}) {
    Workload q = Transformer(name, layers, hidden, heads, 4, 3 * hidden, 4096, 151936, true, false, 36e12);
    q.transformer.head_dim = 128;
    q.transformer.moe.num_experts = 128;
    q.transformer.moe.top_k = 8;
    q.transformer.moe.expert_ffn_hidden_size = expert_ffn;
    q.transformer.moe.moe_layer_interval = 1;
    p.push_back(q);
  }
  for (Workload& w : CnnPresets()) p.push_back(std::move(w));
  return p;
}

std::optional<Workload> FindModelPreset(absl::string_view name) {
  for (Workload& w : ModelPresets()) {
    if (w.name == name) return w;
  }
  return std::nullopt;
}

}  // namespace paraplan
