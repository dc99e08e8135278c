// The launchers beside Megatron-LM's: NeMo 1.x (Hydra overrides of megatron_gpt_config.yaml) and
// torchtitan's command line (overrides of a config function).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/launcher_plan.h"

namespace paraplan::cli::launcher {

namespace {

// NeMo 1.x's megatron_gpt_pretraining.py is a Hydra app: overrides on its command line,
// "section.key=value", and "+section.key=value" for a key its base config
// (examples/nlp/language_modeling/conf/megatron_gpt_config.yaml) does not have — Hydra's
// struct mode refuses those without the +. kNotInBaseConfig lists the keys emitted here
// that the base config at NVIDIA/NeMo 8cfedd7 lacks; the launcher test checks the list
// against that file (tests/launchers/nemo_gpt_config_keys.txt).
constexpr const char* kNotInBaseConfig[] = {
    "model.context_parallel_size",        "model.expert_tensor_parallel_size",
    "model.num_layers_in_first_pipeline_stage", "model.num_layers_in_last_pipeline_stage",
    "model.use_tp_pp_dp_mapping",         "model.recompute_modules",
    "model.num_moe_experts",              "model.moe_router_topk",
    "model.moe_token_dispatcher_type",    "model.moe_enable_deepep",
    "model.overlap_moe_expert_parallel_comm", "model.fp8_recipe",
    "model.optim.overlap_grad_sync",      "model.optim.overlap_param_sync",
    "model.moe_ffn_hidden_size",          "model.moe_layer_freq",
    "model.moe_shared_expert_intermediate_size", "model.delay_wgrad_compute",
    "model.moe_grouped_gemm",             "model.moe_permute_fusion",
    "model.cross_entropy_loss_fusion",    "model.moe_router_num_groups",
    "model.moe_router_group_topk",
};

class Hydra {
 public:
  // The prefix of the keys that follow ("trainer", "model", "model.optim").
  void Section(const std::string& prefix) { prefix_ = prefix; }
  template <typename T>
  void Add(const std::string& key, const T& value) {
    const std::string path = absl::StrCat(prefix_, ".", key);
    const bool added = std::find_if(std::begin(kNotInBaseConfig), std::end(kNotInBaseConfig),
                                    [&](const char* k) { return path == k; }) != std::end(kNotInBaseConfig);
    std::string arg = absl::StrCat(added ? "+" : "", path, "=", value);
    if (arg.find('[') != std::string::npos) arg = absl::StrCat("'", arg, "'");  // a list: no shell globbing
    line_.Add(std::move(arg));
  }
  std::string Render(const std::string& program) const { return line_.Render(program); }

 private:
  std::string prefix_;
  CommandLine line_;
};

// Trainer devices and precision; the model's batch sizes and parallelism.
void NemoParallelism(const Plan& p, Hydra* y, Notes* notes) {
  const v1::ParallelConfig& c = *p.c;
  // NeMo examples/nlp/language_modeling/conf/megatron_gpt_config.yaml, trainer: (PyTorch
  // Lightning Trainer arguments; precision in Lightning's names).
  y->Section("trainer");
  y->Add("devices", p.per_node);
  y->Add("num_nodes", p.nodes);
  y->Add("precision", p.precision == v1::PRECISION_FP16   ? "16-mixed"
                      : p.precision == v1::PRECISION_FP32 ? "32"
                                                          : "bf16-mixed");
  // megatron_gpt_config.yaml, model: batch sizes and parallelism.
  y->Section("model");
  y->Add("micro_batch_size", p.mbs);
  y->Add("global_batch_size", p.gbs);
  AddCoreParallelism(p, "", y);
  if (p.pp_inside_dp()) y->Add("use_tp_pp_dp_mapping", "true");
  if (c.tp_comm_overlap()) y->Add("ub_tp_comm_overlap", "true");
  if (p.foreign_schedule())
    notes->Add(absl::StrCat("NeMo has no ", ScheduleName(p.schedule), " schedule; it runs 1F1B"));
}

// Activation checkpointing, NeMo 1.x's names.
void NemoRecompute(const Plan& p, Hydra* y) {
  const v1::ParallelConfig& c = *p.c;
  // megatron_gpt_config.yaml, model: activation checkpointing ("Activation Checkpointing").
  const bool full = p.recompute == v1::RECOMPUTE_FULL;
  y->Add("activations_checkpoint_granularity", p.recompute == v1::RECOMPUTE_NONE ? "null" : RecomputeName(p.recompute));
  y->Add("activations_checkpoint_method", full ? "uniform" : "null");
  y->Add("activations_checkpoint_num_layers", full ? "1" : "null");
  if (p.recompute == v1::RECOMPUTE_SELECTIVE && c.recompute_modules_size() > 0) {
    y->Add("recompute_modules", absl::StrCat("[", absl::StrJoin(c.recompute_modules(), ","), "]"));
  }
}

// The model's shape, and what NeMo 1.x's GPT config cannot state.
void NemoArchitecture(const Plan& p, Hydra* y, Notes* notes) {
  const v1::ParallelConfig& c = *p.c;
  const v1::TransformerSpec& t = *p.t;
  // megatron_gpt_config.yaml, model: architecture.
  y->Add("encoder_seq_length", t.seq_length());
  y->Add("max_position_embeddings", t.seq_length());
  y->Add("num_layers", t.num_layers());
  y->Add("hidden_size", t.hidden_size());
  y->Add("ffn_hidden_size", p.ffn);
  y->Add("num_attention_heads", t.num_attention_heads());
  if (p.gqa()) y->Add("num_query_groups", p.kv_heads);
  if (p.own_head_dim()) y->Add("kv_channels", t.head_dim());
  if (t.gated_mlp()) y->Add("activation", "fast-swiglu");
  if (t.qk_layernorm() && !t.has_mla()) {
    notes->Add("NeMo 1.x's GPT config states no query / key norms: use --emit megatron-bridge (NeMo 2)");
  }
  if (t.has_mla()) {
    notes->Add("NeMo 1.x's GPT model has no multi-latent attention: use --emit megatron-bridge (NeMo 2)");
  }
  if (t.mtp_num_layers() > 0) {
    notes->Add("NeMo 1.x's GPT model has no multi-token prediction: use --emit megatron-bridge (NeMo 2)");
  }
  const std::vector<int> windows = WindowLayers(t);
  if (std::find(windows.begin(), windows.end(), 1) != windows.end()) {
    notes->Add("NeMo 1.x's GPT config states no sliding windows: use --emit megatron-bridge (NeMo 2)");
  }
  y->Add("share_embeddings_and_output_weights", Bool(t.tied_embeddings()));
  if (p.moe()) {
    y->Add("num_moe_experts", t.moe().num_experts());
    y->Add("moe_router_topk", std::max(1, t.moe().top_k()));
    // TransformerConfig fields NeMo passes through from the model section.
    const v1::MoeSpec& m = t.moe();
    y->Add("moe_ffn_hidden_size", m.expert_ffn_hidden_size() > 0 ? m.expert_ffn_hidden_size() : p.ffn);
    const std::vector<int> moe_layers = MoeLayers(t);
    if (std::find(moe_layers.begin(), moe_layers.end(), 0) != moe_layers.end()) {
      y->Add("moe_layer_freq", absl::StrCat("[", absl::StrJoin(moe_layers, ","), "]"));
    }
    if (m.num_shared_experts() > 0) {
      y->Add("moe_shared_expert_intermediate_size", SharedExpertWidth(m));
    }
    if (m.router_num_groups() > 0) {
      y->Add("moe_router_num_groups", m.router_num_groups());
      y->Add("moe_router_group_topk", m.router_group_topk());
    }
    y->Add("moe_token_dispatcher_type", c.moe_dispatcher() == v1::MOE_DISPATCHER_ALLGATHER ? "allgather"
                                        : c.moe_dispatcher() == v1::MOE_DISPATCHER_DEEPEP  ? "flex"
                                                                                           : "alltoall");
    if (c.moe_dispatcher() == v1::MOE_DISPATCHER_DEEPEP) {
      y->Add("moe_enable_deepep", "true");
      if (p.mnnvl_experts()) {
        notes->Add("the experts' all-to-all spans nodes of one NVLink domain, which only Megatron-Core's HybridEP "
                   "backend carries over NVLink; NeMo 1.x names no backend: use --emit megatron-bridge");
      }
    }
    // GroupedLinear experts and the fused permute, as estimated (launcher_megatron.cc).
    y->Add("moe_grouped_gemm", "true");
    y->Add("moe_permute_fusion", "true");
    if (c.moe_a2a_overlap()) {
      y->Add("overlap_moe_expert_parallel_comm", "true");
      y->Add("delay_wgrad_compute", "true");
      A2aOverlapNote(p, notes);
    }
  }
}

// Transformer Engine FP8, 16-bit gradients, CPU offloading and CUDA graphs.
void NemoPrecisionAndOffload(const Plan& p, Hydra* y, Notes* notes) {
  const v1::ParallelConfig& c = *p.c;
  // megatron_gpt_config.yaml, model: Transformer Engine FP8 and CPU offloading.
  if (p.precision == v1::PRECISION_FP8) {
    y->Add("fp8", "true");
    y->Add("fp8_hybrid", "true");
    if (p.recipe == v1::QUANT_RECIPE_CURRENT_SCALING) y->Add("fp8_recipe", "tensorwise");
    if (p.recipe == v1::QUANT_RECIPE_BLOCKWISE) y->Add("fp8_recipe", "blockwise");
    if (p.recipe == v1::QUANT_RECIPE_MXFP8) y->Add("fp8_recipe", "mxfp8");
  }
  if (p.precision == v1::PRECISION_FP4) notes->Add("NVFP4 is not emitted for this NeMo config; set it by hand");
  // The fused loss the estimate priced under NeMo (or PyTorch FSDP): Megatron-Core's
  // TransformerConfig field, off by default (launcher_megatron.cc).
  if (p.fused_cross_entropy) y->Add("cross_entropy_loss_fusion", "true");
  if (!p.moments_16bit.empty()) {
    notes->Add("NeMo 1.x's optimizer keeps Adam's moments in fp32: the estimate's 2-byte moments need "
               "--emit megatron or megatron-bridge (use_precision_aware_optimizer)");
  } else if (p.precision_aware_optimizer) {
    notes->Add("the estimate runs Megatron-Core's precision-aware optimizer, as NeMo 2's performance scripts do "
               "for BF16 (fp32 master weights kept as 16-bit remainders): NeMo 1.x keeps whole fp32 master "
               "weights; --emit megatron or megatron-bridge runs it");
  }
  if (p.grads_16bit) {
    notes->Add("the estimate keeps and reduces gradients in 16 bits (NeMo 2's performance recipes: "
              "grad_reduce_in_fp32=False); NeMo 1.x keeps fp32 main gradients under megatron_amp_O2");
  }
  if (c.offload().weights() || c.offload().activations()) {
    y->Add("cpu_offloading", "true");
    y->Add("cpu_offloading_weights", Bool(c.offload().weights()));
    y->Add("cpu_offloading_activations", Bool(c.offload().activations()));
  }
  if (c.offload().optimizer()) notes->Add("optimizer offload is not emitted (no NeMo setting for it here)");
  if (c.cuda_graphs()) notes->Add("CUDA graphs are not emitted; enable them in NeMo by hand");
}

// FSDP (ZeRO-3) or the distributed optimizer (ZeRO-1/2) and its overlaps.
void NemoOptimizer(const Plan& p, Hydra* y, Notes* notes) {
  const v1::ParallelConfig& c = *p.c;
  if (p.muon) notes->Add("NeMo 1.x has no Muon: the estimate's optimizer needs --emit megatron or megatron-bridge");
  // megatron_gpt_config.yaml, model: fsdp (ZeRO-3) or optim.name distributed_fused_adam
  // (ZeRO-1/2) with its overlap_grad_sync / overlap_param_sync.
  if (p.zero == 3) {
    y->Add("fsdp", "true");
    y->Add("fsdp_sharding_strategy", "full");
    if (p.pp > 1) notes->Add("NeMo's FSDP does not combine with pipeline parallelism");
  } else if (p.zero > 0) {
    if (p.zero == 2) {
      notes->Add("the estimate runs ZeRO-2 as Megatron-FSDP's optim_grads (a reduce-scatter every micro-batch, "
                 "gradients sharded); NeMo 1.x's distributed_fused_adam syncs gradients once an iteration: "
                 "--emit megatron or megatron-bridge runs it as estimated");
    }
    y->Section("model.optim");
    y->Add("name", "distributed_fused_adam");
    y->Add("overlap_grad_sync", Bool(c.overlap_grad_reduce()));
    y->Add("overlap_param_sync", Bool(c.overlap_param_gather()));
  }
}

}  // namespace

std::string Nemo(const Plan& p) {
  Notes notes;
  Hydra y;
  NemoParallelism(p, &y, &notes);
  NemoRecompute(p, &y);
  NemoArchitecture(p, &y, &notes);
  NemoPrecisionAndOffload(p, &y, &notes);
  NemoOptimizer(p, &y, &notes);
  return absl::StrCat(Header("NeMo megatron_gpt_pretraining.py (Hydra overrides of megatron_gpt_config.yaml)", p),
                      notes.text(), y.Render("python examples/nlp/language_modeling/megatron_gpt_pretraining.py"));
}

// The config functions torchtitan ships for published models (the public functions of
// torchtitan/models/M/config_registry.py at pytorch/torchtitan b5bcd76, listed as
// config:M.F in tests/launchers/torchtitan_flags.txt) and the shape each builds (the
// model registries beside them; Meta's, DeepSeek's, Qwen's and OpenAI's published configs).
struct TorchtitanModel {
  const char* module;
  const char* config;
  int layers;
  int64_t hidden;
  int heads, kv_heads;
  int64_t ffn, vocab;
  int experts, top_k;
};
constexpr TorchtitanModel kTorchtitanModels[] = {
    {"llama3", "llama3_8b", 32, 4096, 32, 8, 14336, 128256, 0, 0},
    {"llama3", "llama3_70b", 80, 8192, 64, 8, 28672, 128256, 0, 0},
    {"llama3", "llama3_405b", 126, 16384, 128, 8, 53248, 128256, 0, 0},
    {"deepseek_v3", "deepseek_v3_671b", 61, 7168, 128, 128, 18432, 129280, 256, 8},
    {"qwen3", "qwen3_30b_a3b", 48, 2048, 32, 4, 6144, 151936, 128, 8},
    {"gpt_oss", "gpt_oss_120b", 36, 2880, 64, 8, 2880, 201088, 128, 4},
};

// The shipped config function that builds the planned model, or nullptr.
const TorchtitanModel* TorchtitanModelOf(const Plan& p) {
  const int experts = p.moe() ? p.t->moe().num_experts() : 0;
  const int top_k = p.moe() ? p.t->moe().top_k() : 0;
  for (const TorchtitanModel& m : kTorchtitanModels) {
    if (m.layers == p.t->num_layers() && m.hidden == p.t->hidden_size() && m.heads == p.t->num_attention_heads() &&
        m.kv_heads == p.kv_heads && m.ffn == p.ffn && m.vocab == p.t->vocab_size() && m.experts == experts &&
        m.top_k == top_k) {
      return &m;
    }
  }
  return nullptr;
}

// "96 layers, hidden 12288, 96 heads (96 K/V), FFN 49152, vocabulary 51200[, 8 experts
// (top 2) of FFN 14336 ...][, multi-latent attention ...][, a window ...]": what a config
// function has to build.
std::string ShapeOf(const Plan& p) {
  std::string out = absl::StrCat(p.t->num_layers(), " layers, hidden ", p.t->hidden_size(), ", ",
                                 p.t->num_attention_heads(), " heads (", p.kv_heads, " K/V), FFN ", p.ffn,
                                 ", vocabulary ", p.t->vocab_size());
  if (p.moe()) {
    const int64_t expert_ffn = p.t->moe().expert_ffn_hidden_size() > 0 ? p.t->moe().expert_ffn_hidden_size() : p.ffn;
    absl::StrAppend(&out, ", ", p.t->moe().num_experts(), " experts (top ", p.t->moe().top_k(), ") of FFN ",
                    expert_ffn);
    if (p.t->moe().num_shared_experts() > 0) absl::StrAppend(&out, " + ", p.t->moe().num_shared_experts(), " shared");
    if (p.t->moe().first_dense_layers() > 0) {
      absl::StrAppend(&out, ", the first ", p.t->moe().first_dense_layers(), " layers dense");
    }
    if (p.t->moe().router_num_groups() > 0) {  // torchtitan's num_expert_groups / num_limited_groups
      absl::StrAppend(&out, ", routed within ", p.t->moe().router_group_topk(), " of ",
                      p.t->moe().router_num_groups(), " expert groups");
    }
  }
  if (p.t->has_mla()) {
    const v1::MlaSpec& m = p.t->mla();
    absl::StrAppend(&out, ", multi-latent attention (query rank ", m.q_lora_rank(), ", key/value rank ",
                    m.kv_lora_rank(), ", head dims ", m.qk_nope_head_dim(), " + ", m.qk_rope_head_dim(), " / ",
                    m.v_head_dim(), ")");
  }
  if (p.t->sliding_window().tokens() > 0) {
    absl::StrAppend(&out, ", a ", p.t->sliding_window().tokens(), "-token window every ",
                    p.t->sliding_window().layer_interval(), " layers");
  }
  return out;
}

// torchtitan configures a run with a Python function returning its Trainer.Config
// (torchtitan_recipes/, torchtitan/config/README.md at pytorch/torchtitan b5bcd76); the
// "--section.option" flags still override it: ParallelismConfig, TrainingConfig and
// CompileConfig of torchtitan/config/configs.py, and activation checkpointing as a tyro
// subcommand (activation-checkpoint:none|selective|full; torchtitan/distributed/
// activation_checkpoint.py). Float8 is a model converter set in the config function,
// not on the command line. The launcher test checks the flags against those files.
std::string Torchtitan(const Plan& p) {
  const v1::ParallelConfig& c = *p.c;
  Notes notes;
  CommandLine f;
  const bool fsdp = p.zero == 3;
  const int64_t seq = p.t->seq_length();
  if (const TorchtitanModel* m = TorchtitanModelOf(p)) {
    f.Add("--module", m->module);
    f.Add("--config", m->config);
    notes.Add(absl::StrCat("--module ", m->module, " --config ", m->config, ": torchtitan's config function for ",
                           ShapeOf(p), "; the flags below override its parallelism and batch"));
  } else {
    f.Add("--module", "YOUR_MODULE");
    f.Add("--config", "YOUR_CONFIG");
    notes.Add(absl::StrCat("--module / --config: torchtitan ships no config function for ", p.model,
                           "; name yours (e.g. in torchtitan_recipes/), building ", ShapeOf(p),
                           "; the flags below override its parallelism and batch"));
  }
  f.Add("--parallelism.data_parallel_replicate_degree", fsdp ? 1 : p.dp);
  f.Add("--parallelism.data_parallel_shard_degree", fsdp ? p.dp : 1);
  if (p.zero == 1 || p.zero == 2) {
    notes.Add(
        absl::StrCat("torchtitan has no ZeRO-", p.zero,
                     ": data parallelism is replicated (DDP), optimizer states unsharded (more memory than planned)"));
  }
  f.Add("--parallelism.tensor_parallel_degree", p.tp);
  // tyro's booleans: --section.flag for true, --section.no-flag for false.
  if (p.tp > 1) {
    f.Add(c.sequence_parallel() ? "--parallelism.enable_sequence_parallel" : "--parallelism.no-enable_sequence_parallel");
  }
  f.Add("--parallelism.pipeline_parallel_degree", p.pp);
  if (p.pp > 1) {
    // Schedule names of torch.distributed.pipelining (get_schedule_class).
    const char* schedule = "1F1B";
    if (p.schedule == v1::SCHEDULE_INTERLEAVED_1F1B || p.v > 1) schedule = "Interleaved1F1B";
    if (p.schedule == v1::SCHEDULE_GPIPE) schedule = "GPipe";
    if (p.schedule == v1::SCHEDULE_ZERO_BUBBLE) {
      schedule = "ZBVZeroBubble";
      if (p.v != 2) notes.Add("torchtitan's zero-bubble schedule (ZBVZeroBubble) runs two stages per rank");
    }
    f.Add("--parallelism.pipeline_parallel_schedule", schedule);
    if (p.v > 1 && p.LayersPerVirtualStage() > 0) {
      f.Add("--parallelism.pipeline_parallel_layers_per_stage", p.LayersPerVirtualStage());
    }
    f.Add("--parallelism.num_pp_microbatches", p.micro_batches);
  }
  f.Add("--parallelism.context_parallel_degree", p.cp);
  if (p.ep > 1) f.Add("--parallelism.expert_parallel_degree", p.ep);
  if (c.moe_dispatcher() == v1::MOE_DISPATCHER_DEEPEP) {
    notes.Add("DeepEP: the token dispatcher is the config function's (torchtitan's qwen3 config qwen3_moe_deepep runs "
              "it); it has no command-line flag");
  }
  if (p.pp_inside_dp()) {
    notes.Add(
        "torchtitan places pipeline stages outermost (tp-cp-dp-pp); the planned order tp-cp-ep-pp-dp is not "
        "available");
  }
  // TrainingConfig: batches in tokens. A micro-batch per data-parallel rank is mbs
  // sequences; the step is the global batch (gradient accumulation fills the rest).
  f.Add("--training.num_tokens_per_microbatch_per_dp_rank", p.mbs * seq);
  f.Add("--training.num_tokens_per_train_step", p.gbs * seq);
  f.Add("--training.max_context_length", seq);
  f.Add("--training.mixed_precision_param", p.precision == v1::PRECISION_FP32 ? "float32" : "bfloat16");
  if (p.precision == v1::PRECISION_FP16) notes.Add("torchtitan has no fp16 mixed precision; bfloat16 is emitted");
  if (!p.moments_16bit.empty()) notes.Add("torchtitan's AdamW keeps its moments in fp32: the estimate's 2-byte moments are not run");
  if (p.muon) notes.Add("Muon is modelled as Megatron-Core runs it; torchtitan's optimizer is not set here");
  if (p.t->mtp_num_layers() > 0) {
    notes.Add("torchtitan builds DeepSeek-V3's MTP layers from its model registry (num_mtp_layers; without PP or CP), "
              "which these flags do not set");
  }
  if (p.offload_any()) {
    if (fsdp) {
      f.Add("--training.enable_cpu_offload");
    } else {
      notes.Add("torchtitan offloads to the CPU only with FSDP (ZeRO-3); not emitted");
    }
  }
  if (c.cuda_graphs()) notes.Add("CUDA graphs are not emitted here; see the config function's options");
  // CompileConfig: async TP takes effect only compiled.
  if (c.tp_comm_overlap()) {
    f.Add("--compile.enable");
    f.Add("--compile.enable_async_tensor_parallel");
  }
  if (p.precision == v1::PRECISION_FP4) notes.Add("torchtitan has no NVFP4 training; bfloat16 is emitted");
  if (p.precision == v1::PRECISION_FP8) {
    notes.Add(absl::StrCat("FP8: add the float8 converter (tensorwise) to the model in the config function",
                           fsdp ? ", with FSDP float8 all-gather" : "", "; it has no command-line flag"));
  }
  if (std::string n = UnrunModulesNote(p, "torchtitan", "(op-level) keeps every second matmul's output");
      !n.empty()) {
    notes.Add(n);
  }
  // The activation-checkpointing subcommand, last (tyro reads what follows as its own).
  f.Add(absl::StrCat("activation-checkpoint:", RecomputeName(p.recompute)));
  return absl::StrCat(Header("torchtitan command line (overrides of a config function)", p), notes.text(),
                      f.Render(absl::StrCat("torchrun --nproc_per_node ", p.per_node, " --nnodes ", p.nodes,
                                            " -m torchtitan.train")));
}

}  // namespace paraplan::cli::launcher
