// Workload: what is trained — the model's shape, its precision, its data.
//
// Plain value types mirroring paraplan.v1.Workload (no protobuf here). A workload holds
// either a transformer or a layer graph (CNN); the estimator reaches both through the
// per-layer costs of workloads/model_costs.h. Zero in an optional field means the
// documented default; Resolved() fills those in. Thread-safe as values.
#ifndef PARAPLAN_ESTIMATOR_INPUTS_WORKLOAD_H_
#define PARAPLAN_ESTIMATOR_INPUTS_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <vector>

namespace paraplan {

// kFp8 / kFp4: the linear layers' GEMMs in that format (Transformer Engine), everything
// else in BF16.
enum class Precision { kBf16, kFp16, kFp8, kFp32, kFp4 };
inline bool LowPrecisionLinears(Precision p) { return p == Precision::kFp8 || p == Precision::kFp4; }

// How low-precision linears scale their tensors (Transformer Engine recipes):
// delayed scaling (per tensor, amax history), current scaling (per tensor, this step's
// amax), blockwise (1 x 128 activations, 128 x 128 weights: DeepSeek-V3), MXFP8 (1 x 32
// blocks, E8M0 scales: Blackwell), NVFP4 (1 x 16 blocks of FP4 with E4M3 scales and a
// per-tensor scale, 16 x 16 random Hadamard transforms on the weight-gradient GEMM's
// inputs, stochastic rounding of gradients). kDefault: delayed scaling for FP8, NVFP4 for
// FP4 (ResolvedRecipe).
enum class QuantRecipe { kDefault, kDelayedScaling, kCurrentScaling, kBlockwise, kMxfp8, kNvfp4 };

// The optimizer's state per parameter: Adam (two moments) or SGD with momentum (one).
enum class Optimizer { kAdam, kSgdMomentum, kMuon };
// Megatron-LM / DeepSpeed (16-bit weights, fp32 master in the optimizer, persistent fp32
// gradient buffer), the same with a 16-bit gradient buffer reduced in 16 bits (kBf16Grads:
// Megatron's --grad-reduce-in-bf16, grad_reduce_in_fp32 = False in NeMo's and
// Megatron-Bridge's performance recipes) or PyTorch autocast / FSDP (fp32 parameters
// with 16-bit copies per step, fp32 gradients that exist from backward to the optimizer
// step). kDefault: the framework's (ResolvedMixedPrecision, workloads/model_costs.h).
enum class MixedPrecision { kDefault, kMasterInOptimizer, kFp32Params, kBf16Grads };

// Bytes of one element stored in the training precision (weights, activations).
double BytesPerElement(Precision p);

struct MoeSpec {
  int num_experts = 0;  // 0 = dense model
  int top_k = 0;
  int64_t expert_ffn_hidden_size = 0;  // 0 = ffn_hidden_size
  int moe_layer_interval = 0;          // 0 = 1 (every layer)
  // Experts every token passes through beside the routed ones, each of hidden
  // shared_expert_ffn_hidden_size (0 = expert_ffn_hidden_size).
  int num_shared_experts = 0;
  int64_t shared_expert_ffn_hidden_size = 0;
  int first_dense_layers = 0;  // the first k layers are dense (DeepSeek-V3: 3)
  // Tokens at the busiest expert over the mean (>= 1; 0 = kDefaultLoadImbalance): the
  // busiest expert's GEMMs, stored activations and all-to-all set the pace.
  double load_imbalance = 0;
  // Group-limited routing (Megatron-Core moe_router_num_groups / moe_router_group_topk):
  // the experts form router_num_groups equal groups and each token's top_k lie in
  // router_group_topk of them (DeepSeek-V3: 8 / 4, at most 4 nodes a token). 0 = no limit.
  int router_num_groups = 0;
  int router_group_topk = 0;
};

// Force-balanced routing, as Megatron-Core's MoE performance runs are measured
// (--moe-router-force-load-balancing; Megatron-MoE model zoo): every expert gets the mean.
inline constexpr double kDefaultLoadImbalance = 1.0;

// DeepSeek's multi-head latent attention (DeepSeek-V2 sec. 2.1; Megatron-Core
// MLASelfAttention): queries through a q_lora_rank bottleneck (0 = none), keys and values
// through a shared kv_lora_rank latent; each head's query and key have a qk_nope_head_dim
// part and a qk_rope_head_dim part (the rope key shared by all heads), its value
// v_head_dim. Set when kv_lora_rank > 0.
struct MlaSpec {
  int64_t q_lora_rank = 0;
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
  bool enabled() const { return kv_lora_rank > 0; }
};

// Every layer_interval-th layer (from the first; 0 = 1) attends over the last `tokens`
// keys only (GPT-OSS: 128 tokens, every other layer). tokens = 0: full attention.
struct SlidingWindow {
  int64_t tokens = 0;
  int layer_interval = 0;
};

enum class Normalization { kLayerNorm, kRmsNorm };

// Megatron-LM's default hidden / attention dropout (arguments.py: --hidden-dropout 0.1,
// --attention-dropout 0.1).
inline constexpr double kDefaultDropout = 0.1;

struct TransformerSpec {
  int num_layers = 0;
  int64_t hidden_size = 0;
  int num_attention_heads = 0;
  int num_kv_heads = 0;           // 0 = num_attention_heads
  int64_t ffn_hidden_size = 0;    // 0 = 4 * hidden_size
  int64_t seq_length = 0;
  int64_t vocab_size = 0;
  bool gated_mlp = false;         // SwiGLU: gate, up and down matrices
  MoeSpec moe;
  bool tied_embeddings = false;
  Normalization normalization = Normalization::kLayerNorm;  // RMSNorm: scale only
  double dropout = kDefaultDropout;  // 0 = no dropout kernels, no masks stored
  // Channels per attention head (Megatron's kv_channels); 0 = hidden / heads. Q and the
  // output projection are heads x head_dim wide, K and V kv_heads x head_dim.
  int64_t head_dim = 0;
  MlaSpec mla;
  SlidingWindow sliding_window;
  // Multi-token prediction depths (DeepSeek-V3 sec. 2.2; Megatron-Core --mtp-num-layers):
  // each adds on the last stage one layer like the model's last, the shared embedding
  // and LM head again with their loss, and a 2h -> h projection. 0 = none.
  int mtp_num_layers = 0;
  // A norm over each head's query and key before rope (Qwen3; Megatron-Core
  // --qk-layernorm: TENorm over head_dim, of `normalization`'s kind). Ignored with MLA,
  // whose latent norms are always counted.
  bool qk_layernorm = false;

  // Defaults filled in (kv heads, ffn size, MoE fields).
  TransformerSpec Resolved() const;
  bool is_moe() const { return moe.num_experts > 1; }
  // Whether layer i (from 0) is an MoE layer: past the first_dense_layers, every
  // moe_layer_interval-th layer.
  bool IsMoeLayer(int i) const {
    if (moe.num_experts <= 1 || i < moe.first_dense_layers) return false;
    const int interval = moe.moe_layer_interval > 0 ? moe.moe_layer_interval : 1;
    return (i + 1) % interval == 0;
  }
  // Number of MoE layers among num_layers.
  int NumMoeLayers() const;
  // Whether layer i (from 0) attends over a sliding window shorter than the sequence.
  bool IsWindowLayer(int i) const {
    if (sliding_window.tokens <= 0 || sliding_window.tokens >= seq_length) return false;
    const int interval = sliding_window.layer_interval > 0 ? sliding_window.layer_interval : 1;
    return i % interval == 0;
  }
};

// What a layer of a CNN layer graph computes: convolution, pooling, batch norm, ReLU /
// another activation, dropout, a residual add, concatenation, flatten, fully connected,
// the softmax loss.
enum class LayerKind { kConv, kPool, kNorm, kRelu, kActivation, kDropout, kAdd, kConcat, kFlatten, kFc, kSoftmax };
// The API's name of each kind (paraplan.v1.Layer.kind), in enumerator order.
inline constexpr const char* kLayerKindNames[] = {"conv",    "pool",   "norm",    "relu", "activation", "dropout",
                                                  "add",     "concat", "flatten", "fc",   "softmax"};
const char* LayerKindName(LayerKind k);
// The kind `name` names; false when it names none.
bool LayerKindNamed(const std::string& name, LayerKind* kind);

// One layer of a CNN layer graph. Shapes are per sample: channels, then the spatial
// axes (L for 1-D, H W for 2-D, D H W for 3-D). Per-axis vectors (kernel, stride,
// padding, dilation) list the spatial axes in the same order; absent entries mean
// kernel 1, stride 1 (a pool's stride: its kernel, as PyTorch), padding 0, dilation 1.
struct LayerSpec {
  std::string name;
  LayerKind kind = LayerKind::kConv;
  std::vector<int64_t> input_shape;
  std::vector<int64_t> output_shape;
  std::vector<int64_t> kernel_shape;
  std::vector<int64_t> stride;
  std::vector<int64_t> padding;   // per side
  std::vector<int64_t> dilation;
  int64_t groups = 1;             // grouped convolution; 0 = 1
  std::vector<std::string> inputs;  // layers read (by name); empty = the previous layer
  bool bias = true;               // conv / fc learn a bias
};

struct LayerGraphSpec {
  std::vector<LayerSpec> layers;
  std::vector<int64_t> sample_shape;
};

enum class DatasetLocation { kLocal, kSharedFs, kStaged };

enum class DatasetFormat { kUnspecified, kTokens, kJpeg, kHdf5, kRaw };

struct DatasetSpec {
  int64_t sample_bytes = 0;
  int64_t num_samples = 0;
  DatasetLocation location = DatasetLocation::kLocal;
  double decode_core_ms_per_sample = 0;  // CPU decode + augmentation per sample; 0 = none
  bool decode_offloaded = false;         // GPU / DPU decoding
  double fraction = 1;                   // share of samples read per epoch, (0, 1]
  DatasetFormat format = DatasetFormat::kUnspecified;  // JPEG: decoding matters
};

struct Workload {
  enum class Kind { kTransformer, kLayerGraph };
  std::string name;
  Kind kind = Kind::kTransformer;
  TransformerSpec transformer;
  LayerGraphSpec layer_graph;
  Precision precision = Precision::kBf16;
  QuantRecipe quant_recipe = QuantRecipe::kDefault;  // FP8 / FP4 only
  Optimizer optimizer = Optimizer::kAdam;
  MixedPrecision mixed_precision = MixedPrecision::kDefault;
  // Adam's moments: kFp32, or kBf16 / kFp16 (2 bytes each; Megatron-Core's
  // precision-aware optimizer, model_costs.cc SetPrecisionBytes).
  Precision optimizer_moments = Precision::kFp32;
  DatasetSpec dataset;
  double training_tokens = 0;  // 0 = unknown
};

// The recipe the workload's linears run: kDefault resolved by precision (Transformer
// Engine's delayed scaling for FP8, NVFP4 for FP4; workloads/model_costs.h resolves it by
// framework), kDefault for 16- and 32-bit precisions.
QuantRecipe ResolvedRecipe(const Workload& w);

// Bytes of one quantised element with its share of the scales: 1 for the per-tensor and
// blockwise FP8 recipes, 1 + 1/32 for MXFP8 (an E8M0 scale per 32), 1/2 + 1/16 for NVFP4
// (an E4M3 scale per 16); 2 (16-bit) for kDefault.
double QuantisedBytesPerElement(QuantRecipe r);

// Quantised copies a weight keeps for its GEMMs: 2 (the row-wise and the column-wise or
// transposed orientation), but 1 for the per-tensor FP8 recipes (delayed, current
// scaling) on GPUs whose FP8 GEMMs take any operand layout: Transformer Engine's
// is_non_tn_fp8_gemm_supported (compute capability 10.x-11.x, >= 13) reuses the row-wise
// data where Hopper's TN-only FP8 GEMMs need a transpose. MXFP8, NVFP4 and blockwise scale
// each orientation apart, so they keep two everywhere.
double QuantisedOrientations(QuantRecipe r, bool fp8_any_layout);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_INPUTS_WORKLOAD_H_
