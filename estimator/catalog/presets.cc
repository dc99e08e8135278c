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
  // Qwen3 Technical Report (Yang et al. 2025, Table 2 and sec. 2: QK-Norm in place of
  // Qwen2's QKV bias) and the models' config.json: every layer MoE, 128 experts, top-8,
  // no shared expert, heads of 128 (hidden / heads differs), 36T pre-training tokens at
  // 4,096 (stage 1).
  for (const auto& [name, layers, hidden, heads, expert_ffn] :
       {std::tuple{"qwen3-235b-a22b", 94, 4096, 64, 1536}, std::tuple{"qwen3-30b-a3b", 48, 2048, 32, 768}}) {
    Workload q = Transformer(name, layers, hidden, heads, 4, 3 * hidden, 4096, 151936, true, false, 36e12);
    q.transformer.head_dim = 128;
    q.transformer.qk_layernorm = true;
    q.transformer.moe.num_experts = 128;
    q.transformer.moe.top_k = 8;
    q.transformer.moe.expert_ffn_hidden_size = expert_ffn;
    q.transformer.moe.moe_layer_interval = 1;
    p.push_back(q);
  }
  // Llama 3.1 405B is the model of "The Llama 3 Herd of Models" (Meta, 2024): as llama3-405b.
  Workload llama31 = Transformer("llama3.1-405b", 126, 16384, 128, 8, 53248, 8192, 128256, true, false, 15.6e12);
  p.push_back(llama31);
  // DeepSeek-V3 technical report (DeepSeek-AI 2024, sec. 4.2) and its config.json: 61
  // layers, the first 3 dense (FFN 18,432), then 256 routed experts of 2,048 (top-8) and
  // one shared; MLA with 128 heads, query latent 1,536, key/value latent 512, head
  // dimensions 128 + 64 (rope) and 128 (value); 14.8T tokens at 4,096; one multi-token
  // prediction depth (num_nextn_predict_layers 1; Megatron-Bridge's recipe trains it,
  // mtp_num_layers = 1); its routing picks 4 of 8 expert groups a token (n_group 8,
  // topk_group 4; sec. 2.1.2's node-limited routing). Kimi K2 (Moonshot AI 2025,
  // config.json): the same architecture with 64 heads, 384 experts, one dense layer, no
  // MTP, 15.5T tokens, one expert group (n_group 1: no limit).
  for (const auto& [name, heads, experts, dense, vocab, tokens, mtp, groups, group_topk] :
       {std::tuple{"deepseek-v3", 128, 256, 3, 129280, 14.8e12, 1, 8, 4},
        std::tuple{"kimi-k2", 64, 384, 1, 163840, 15.5e12, 0, 0, 0}}) {
    Workload d = Transformer(name, 61, 7168, heads, 0, 18432, 4096, vocab, true, false, tokens);
    d.transformer.mla = {1536, 512, 128, 64, 128};
    d.transformer.moe.num_experts = experts;
    d.transformer.moe.top_k = 8;
    d.transformer.moe.expert_ffn_hidden_size = 2048;
    d.transformer.moe.moe_layer_interval = 1;
    d.transformer.moe.num_shared_experts = 1;
    d.transformer.moe.first_dense_layers = dense;
    d.transformer.moe.router_num_groups = groups;
    d.transformer.moe.router_group_topk = group_topk;
    d.transformer.mtp_num_layers = mtp;
    p.push_back(d);
  }
  // gpt-oss-120b (OpenAI 2025 model card and config.json): 36 layers, hidden 2,880, 64
  // query heads of 64 over 8 K/V heads, 128 experts of 2,880 (top-4) in every layer,
  // every other layer (from the first) over a 128-token sliding window; 4,096-token
  // pre-training context. Training tokens unpublished.
  Workload oss = Transformer("gpt-oss-120b", 36, 2880, 64, 8, 2880, 4096, 201088, true, false, 0);
  oss.transformer.head_dim = 64;
  oss.transformer.moe.num_experts = 128;
  oss.transformer.moe.top_k = 4;
  oss.transformer.moe.expert_ffn_hidden_size = 2880;
  oss.transformer.moe.moe_layer_interval = 1;
  oss.transformer.sliding_window = {128, 2};
  p.push_back(oss);
  for (Workload& w : CnnPresets()) p.push_back(std::move(w));
  return p;
}

std::optional<Workload> FindModelPreset(absl::string_view name) {
  // Built once: the CNN graphs make the list ~200 us to build, which every preset
  // request (`model: "gpt3-175b"`) paid before.
  static const std::vector<Workload>* const kPresets = new std::vector<Workload>(ModelPresets());
  for (const Workload& w : *kPresets) {
    if (w.name == name) return w;
  }
  return std::nullopt;
}

}  // namespace paraplan
