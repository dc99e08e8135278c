// --emit megatron-bridge: Megatron-Bridge's recipe runner (NVIDIA-NeMo/Megatron-Bridge,
// scripts/training/run_recipe.py, the README "Training entry points" at 067f987) with the
// plan as trailing KEY=VALUE overrides of the recipe's ConfigContainer: model.* (the
// GPT provider, Megatron-Core's TransformerConfig fields), train.*, ddp.*, dist.*,
// checkpoint.*, comm_overlap.*, mixed_precision. The recipe (model family, tokenizer,
// data) stays the user's; the model's shape is stated so the recipe cannot train another.
// The launcher test checks every key against those dataclasses at that commit
// (tests/launchers/megatron_bridge_keys.txt).
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/launcher_plan.h"

namespace paraplan::cli::launcher {

namespace {

// "KEY=VALUE" a line; lists quoted against shell globbing.
class Overrides {
 public:
  template <typename T>
  void Add(const std::string& key, const T& value) {
    std::string arg = absl::StrCat(key, "=", value);
    if (arg.find('[') != std::string::npos) arg = absl::StrCat("'", arg, "'");
    line_.Add(std::move(arg));
  }
  template <typename T>
  void Flag(const std::string& flag, const T& value) {
    line_.Add(flag, value);
  }
  std::string Render(const std::string& program) const { return line_.Render(program); }

 private:
  CommandLine line_;
};

const char* Dispatcher(v1::MoeDispatcher d) {
  return d == v1::MOE_DISPATCHER_ALLGATHER ? "allgather" : d == v1::MOE_DISPATCHER_DEEPEP ? "flex" : "alltoall";
}

const char* Fp8Recipe(v1::QuantRecipe r) {
  switch (r) {
    case v1::QUANT_RECIPE_CURRENT_SCALING:
      return "tensorwise";
    case v1::QUANT_RECIPE_BLOCKWISE:
      return "blockwise";
    case v1::QUANT_RECIPE_MXFP8:
      return "mxfp8";
    default:
      return "delayed";
  }
}

void Parallelism(const Plan& p, Notes* notes, Overrides* o) {
  const v1::ParallelConfig& c = *p.c;
  AddCoreParallelism(p, "model.", o);
  if (c.tp_comm_overlap()) o->Add("comm_overlap.tp_comm_overlap", "true");
  if (p.foreign_schedule()) {
    notes->Add(absl::StrCat("Megatron-Core has no ", ScheduleName(p.schedule), " schedule; it runs 1F1B"));
  }
  if (p.pp_inside_dp()) notes->Add("rank order tp-cp-ep-pp-dp is not a ConfigContainer setting; Megatron-Core's is tp-cp-ep-dp-pp");
  o->Add("train.micro_batch_size", p.mbs);
  o->Add("train.global_batch_size", p.gbs);
  // Megatron-Core's TransformerConfig recompute_granularity / method / num_layers / modules.
  if (p.recompute == v1::RECOMPUTE_NONE) {
    o->Add("model.recompute_granularity", "null");
  } else {
    o->Add("model.recompute_granularity", RecomputeName(p.recompute));
    if (p.recompute == v1::RECOMPUTE_FULL) {
      o->Add("model.recompute_method", "uniform");
      o->Add("model.recompute_num_layers", 1);
    } else if (c.recompute_modules_size() > 0) {
      o->Add("model.recompute_modules", absl::StrCat("[", absl::StrJoin(c.recompute_modules(), ","), "]"));
    }
  }
  if (c.offload_modules_size() > 0) {
    o->Add("model.fine_grained_activation_offloading", "true");
    o->Add("model.offload_modules", absl::StrCat("[", absl::StrJoin(c.offload_modules(), ","), "]"));
  }
  if (c.cpu_offload_layers() > 0) {
    o->Add("model.cpu_offloading", "true");
    o->Add("model.cpu_offloading_num_layers", c.cpu_offload_layers());
  }
  if (c.offload().optimizer() || c.offload().weights() || c.offload().activations()) {
    notes->Add("ZeRO-style offload is not emitted (Megatron-Core offloads whole layers: cpu_offloading_num_layers)");
  }
  const CudaGraphLaunch graphs = MegatronCudaGraphs(p);
  if (!graphs.impl.empty()) o->Add("model.cuda_graph_impl", graphs.impl);
  if (!graphs.modules.empty()) o->Add("model.cuda_graph_modules", absl::StrCat("[", absl::StrJoin(graphs.modules, ","), "]"));
  if (!graphs.note.empty()) notes->Add(graphs.note);
}

void Shape(const Plan& p, Notes* notes, Overrides* o) {
  const v1::TransformerSpec& t = *p.t;
  o->Add("model.num_layers", t.num_layers());
  o->Add("model.hidden_size", t.hidden_size());
  o->Add("model.ffn_hidden_size", p.ffn);
  o->Add("model.num_attention_heads", t.num_attention_heads());
  o->Add("model.num_query_groups", p.kv_heads);
  if (p.own_head_dim()) o->Add("model.kv_channels", t.head_dim());
  o->Add("model.seq_length", t.seq_length());
  o->Add("model.vocab_size", t.vocab_size());
  if (t.normalization() == v1::NORMALIZATION_RMSNORM) {
    o->Add("model.normalization", "RMSNorm");
    o->Add("model.position_embedding_type", "rope");
    o->Add("model.add_bias_linear", "false");
    notes->Add("RMSNorm models are emitted with rotary embeddings and no linear biases (the workload states neither)");
  }
  o->Add("model.gated_linear_unit", Bool(t.gated_mlp()));
  if (t.qk_layernorm() || t.has_mla()) o->Add("model.qk_layernorm", Bool(true));  // MLA: its latent norms
  o->Add("model.hidden_dropout", Dropout(t));  // absent = 0.1, as estimated (a recipe's provider may say 0)
  o->Add("model.attention_dropout", Dropout(t));
  o->Add("model.share_embeddings_and_output_weights", Bool(t.tied_embeddings()));
  if (t.has_mla()) notes->Add("MLA needs an MLA model provider (its q/kv LoRA ranks); choose such a recipe");
  const std::vector<int> windows = WindowLayers(t);
  if (std::find(windows.begin(), windows.end(), 1) != windows.end()) {
    o->Add("model.window_size", absl::StrCat("[", t.sliding_window().tokens(), ",0]"));
    o->Add("model.window_attn_skip_freq", absl::StrCat("[", absl::StrJoin(windows, ","), "]"));
  }
  // TransformerConfig.cp_comm_type, a type a layer: windowed layers cannot ring.
  if (const std::vector<std::string> types = CpCommTypes(p); !types.empty()) {
    o->Add("model.cp_comm_type", absl::StrCat("[", absl::StrJoin(types, ","), "]"));
  }
  if (t.mtp_num_layers() > 0) o->Add("model.mtp_num_layers", t.mtp_num_layers());
  if (p.moe()) {
    const v1::MoeSpec& m = t.moe();
    o->Add("model.num_moe_experts", m.num_experts());
    o->Add("model.moe_router_topk", std::max(1, m.top_k()));
    if (m.expert_ffn_hidden_size() > 0) o->Add("model.moe_ffn_hidden_size", m.expert_ffn_hidden_size());
    if (m.num_shared_experts() > 0) {
      o->Add("model.moe_shared_expert_intermediate_size", SharedExpertWidth(m));
    }
    if (m.router_num_groups() > 0) {
      o->Add("model.moe_router_num_groups", m.router_num_groups());
      o->Add("model.moe_router_group_topk", m.router_group_topk());
    }
    const std::vector<int> moe_layers = MoeLayers(t);
    if (std::find(moe_layers.begin(), moe_layers.end(), 0) != moe_layers.end()) {
      o->Add("model.moe_layer_freq", absl::StrCat("[", absl::StrJoin(moe_layers, ","), "]"));
    }
    o->Add("model.moe_token_dispatcher_type", Dispatcher(p.c->moe_dispatcher()));
    if (p.c->moe_dispatcher() == v1::MOE_DISPATCHER_DEEPEP) {
      o->Add("model.moe_flex_dispatcher_backend", p.mnnvl_experts() ? "hybridep" : "deepep");
    }
    // GroupedLinear experts and the fused permute, as estimated (launcher_megatron.cc):
    // stated, for TransformerConfig defaults both to off and a recipe's provider may too.
    o->Add("model.moe_grouped_gemm", "true");
    o->Add("model.moe_permute_fusion", "true");
    if (p.c->moe_a2a_overlap()) {
      o->Add("model.overlap_moe_expert_parallel_comm", "true");
      o->Add("model.delay_wgrad_compute", "true");
      A2aOverlapNote(p, notes);
    }
  }
}

void Precision(const Plan& p, Notes* notes, Overrides* o) {
  switch (p.precision) {
    case v1::PRECISION_FP16:
      o->Add("mixed_precision", "fp16_mixed");
      break;
    case v1::PRECISION_FP32:
      notes->Add("fp32 training: no mixed_precision recipe is set");
      break;
    default:
      o->Add("mixed_precision", "bf16_mixed");
  }
  if (p.precision_aware_optimizer) o->Add("optimizer.use_precision_aware_optimizer", "true");
  if (!p.moments_16bit.empty()) {  // OptimizerConfig, dtype names as str_to_dtype reads them
    o->Add("optimizer.exp_avg_dtype", p.moments_16bit);
    o->Add("optimizer.exp_avg_sq_dtype", p.moments_16bit);
  }
  if (p.grads_16bit) {
    // Megatron-Bridge's performance recipes set both (MixedPrecisionConfig.setup copies its
    // own value over the DDP config's); a recipe-name override has no field to set.
    notes->Add("the estimate keeps and reduces gradients in 16 bits, as NeMo's performance recipes do: set "
               "cfg.mixed_precision.grad_reduce_in_fp32 = cfg.ddp.grad_reduce_in_fp32 = False in the recipe");
  }
  if (p.precision == v1::PRECISION_FP8) {
    o->Add("model.fp8", "hybrid");
    o->Add("model.fp8_recipe", Fp8Recipe(p.recipe));
    if (p.c->fp8_param_gather()) o->Add("model.fp8_param", "true");
  }
  if (p.precision == v1::PRECISION_FP4) {
    o->Add("model.fp4", "e2m1");
    o->Add("model.fp4_recipe", "nvfp4");
  }
}

void DataParallel(const Plan& p, Notes* notes, Overrides* o) {
  const v1::ParallelConfig& c = *p.c;
  if (p.zero >= 2) {
    // Megatron-FSDP (the bridge's ConfigContainer validates FSDP from dist and ddp): ZeRO-2
    // shards gradients and optimizer states (optim_grads), ZeRO-3 also the weights.
    o->Add("dist.use_megatron_fsdp", "true");
    o->Add("ddp.use_megatron_fsdp", "true");
    o->Add("ddp.data_parallel_sharding_strategy", p.zero == 2 ? "optim_grads" : "optim_grads_params");
    o->Add("checkpoint.ckpt_format", "fsdp_dtensor");
    if (p.pp > 1 || p.moe()) notes->Add("Megatron-FSDP here does not combine with pipeline or expert parallelism");
  }
  const bool distributed = p.zero >= 1;
  if (p.muon) {
    // As Megatron-Bridge's Kimi-K2 recipe runs Muon (recipes/kimi/kimi_k2.py): the
    // layer-wise distributed optimizer, not Megatron's, under ZeRO 1.
    o->Add("optimizer.optimizer", "muon");
    o->Add("optimizer.use_layer_wise_distributed_optimizer", Bool(distributed));
    o->Add("ddp.use_distributed_optimizer", "false");
    o->Add("optimizer.use_distributed_optimizer", "false");
  } else {
    o->Add("ddp.use_distributed_optimizer", Bool(distributed));
    o->Add("optimizer.use_distributed_optimizer", Bool(distributed));
  }
  o->Add("ddp.overlap_grad_reduce", Bool(c.overlap_grad_reduce()));
  if (c.overlap_grad_reduce()) o->Add("ddp.overlap_param_gather", Bool(c.overlap_param_gather() && distributed));
}

}  // namespace

std::string MegatronBridge(const Plan& p) {
  Notes notes;
  Overrides o;
  o.Flag("--recipe", "YOUR_RECIPE");
  o.Flag("--mode", "pretrain");
  o.Flag("--seq_length", p.t->seq_length());
  notes.Add("YOUR_RECIPE: a Megatron-Bridge pretrain recipe for this model family (tokenizer, data); the overrides "
            "below set the planned shape and parallelism on it");
  Parallelism(p, &notes, &o);
  Shape(p, &notes, &o);
  Precision(p, &notes, &o);
  DataParallel(p, &notes, &o);
  const std::string program = absl::StrCat("torchrun --nproc-per-node ", p.per_node, " --nnodes ", p.nodes,
                                           " scripts/training/run_recipe.py");
  return absl::StrCat(Header("Megatron-Bridge run_recipe.py (ConfigContainer overrides)", p), notes.text(),
                      o.Render(program));
}

}  // namespace paraplan::cli::launcher
