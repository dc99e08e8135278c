// The Megatron command lines: Megatron-LM's pretrain_gpt.py, and Megatron-DeepSpeed's
// pretrain_gpt.py with its ds_config.json. Both launched by torchrun.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/launcher_plan.h"
#include "estimator/inputs/deepspeed_zero3.h"

namespace paraplan::cli::launcher {

namespace {

// torchrun's launcher flags (torch.distributed.run: --nproc_per_node, --nnodes).
std::string Torchrun(const Plan& p) {
  return absl::StrCat("torchrun --nproc_per_node ", p.per_node, " --nnodes ", p.nodes, " pretrain_gpt.py");
}

// The transformer's shape. Names: Megatron-LM megatron/training/arguments.py
// (_add_network_size_args and the TransformerConfig flags; the test checks them against
// tests/launchers/megatron_lm_flags.txt); Megatron-DeepSpeed megatron/arguments.py, which
// names the KV heads --num-key-value-heads, RMSNorm "rmsnorm" and rotary embeddings
// --use-rotary-position-embeddings. Megatron's defaults are GPT's (LayerNorm, learned
// absolute positions, biases, dropout 0.1): a model that differs says so.
void ModelShapeFlags(const Plan& p, bool deepspeed, CommandLine* f, Notes* notes) {
  const v1::TransformerSpec& t = *p.t;
  if (t.normalization() == v1::NORMALIZATION_RMSNORM) {
    f->Add("--normalization", deepspeed ? "rmsnorm" : "RMSNorm");
    // The workload states no position embedding or bias: RMSNorm models (Llama, Mixtral,
    // Qwen, DeepSeek) use rotary embeddings and linears without bias.
    if (deepspeed) {
      f->Add("--use-rotary-position-embeddings");
    } else {
      f->Add("--position-embedding-type", "rope");
    }
    f->Add("--disable-bias-linear");
    notes->Add("rotary position embeddings and linears without bias, as RMSNorm models (Llama, Mixtral, Qwen, "
               "DeepSeek) have them: the workload does not state either; check the model's own (rope base, "
               "attention bias)");
  }
  if (t.has_dropout()) {
    const std::string d = absl::StrCat(t.dropout());
    f->Add("--attention-dropout", d);
    f->Add("--hidden-dropout", d);
  }
  f->Add("--num-layers", t.num_layers());
  f->Add("--hidden-size", t.hidden_size());
  f->Add("--ffn-hidden-size", p.ffn);
  f->Add("--num-attention-heads", t.num_attention_heads());
  if (p.own_head_dim()) f->Add("--kv-channels", t.head_dim());  // default hidden / heads
  if (p.gqa()) {
    if (deepspeed) {
      f->Add("--num-key-value-heads", p.kv_heads);
    } else {
      f->Add("--group-query-attention");
      f->Add("--num-query-groups", p.kv_heads);
    }
  }
  if (t.gated_mlp()) f->Add("--swiglu");
  // Megatron-Core's --qk-layernorm: per-head query / key norms, or under MLA the latent
  // norms the estimate always counts (gpt_layer_specs.py: the up projections fused with
  // their norm only when qk_layernorm; DeepSeek-V3's launch scripts set it).
  if (t.qk_layernorm() || t.has_mla()) {
    if (deepspeed) {
      if (t.qk_layernorm() && !t.has_mla()) notes->Add("Megatron-DeepSpeed has no query / key norms: this runs without them");
    } else {
      f->Add("--qk-layernorm");
    }
  }
  if (t.has_mla()) {
    if (deepspeed) {
      notes->Add("Megatron-DeepSpeed has no multi-latent attention: this runs plain attention instead");
    } else {  // arguments.py, _add_mla_args
      const v1::MlaSpec& m = t.mla();
      f->Add("--multi-latent-attention");
      if (m.q_lora_rank() > 0) f->Add("--q-lora-rank", m.q_lora_rank());
      f->Add("--kv-lora-rank", m.kv_lora_rank());
      f->Add("--qk-head-dim", m.qk_nope_head_dim());
      f->Add("--qk-pos-emb-head-dim", m.qk_rope_head_dim());
      f->Add("--v-head-dim", m.v_head_dim());
    }
  }
  const std::vector<int> windows = WindowLayers(t);
  if (std::find(windows.begin(), windows.end(), 1) != windows.end()) {
    if (deepspeed) {
      notes->Add("Megatron-DeepSpeed has no sliding-window attention: every layer attends in full");
    } else {  // _add_network_size_args: window (left, right) and 1 = windowed layer
      f->Add("--window-size", absl::StrCat("'", t.sliding_window().tokens(), ",0'"));
      f->Add("--window-attn-skip-freq", absl::StrCat("'", LayerPatternExpression(windows), "'"));
    }
  }
  if (t.mtp_num_layers() > 0) {  // _add_mtp_args
    if (deepspeed) {
      notes->Add("Megatron-DeepSpeed has no multi-token prediction: the estimate's MTP layers are not trained");
    } else {
      f->Add("--mtp-num-layers", t.mtp_num_layers());
    }
  }
  f->Add("--seq-length", t.seq_length());
  f->Add("--max-position-embeddings", t.seq_length());  // required; >= seq-length
  if (!t.tied_embeddings()) f->Add("--untie-embeddings-and-output-weights");
}

// The degrees, the pipeline layout, batch sizes and recomputation.
void MegatronParallelFlags(const Plan& p, CommandLine* f, Notes* notes) {
  const v1::ParallelConfig& c = *p.c;
  // Megatron-LM arguments.py, _add_distributed_args: the degrees (data parallel is what
  // remains of the world size), virtual stages, rank order.
  f->Add("--tensor-model-parallel-size", p.tp);
  f->Add("--pipeline-model-parallel-size", p.pp);
  if (p.v > 1) {
    if (const int layers = p.LayersPerVirtualStage(); layers > 0) {
      f->Add("--num-layers-per-virtual-pipeline-stage", layers);
    } else {
      f->Add("--num-virtual-stages-per-pipeline-rank", p.v);
    }
  }
  if (p.foreign_schedule()) {
    notes->Add(absl::StrCat("Megatron-LM has no ", ScheduleName(p.schedule),
                            " schedule; it runs 1F1B (not the bubble and memory planned)"));
  }
  f->Add("--context-parallel-size", p.cp);
  // TransformerConfig.cp_comm_type, a type a layer: windowed layers cannot ring.
  if (const std::vector<std::string> types = CpCommTypes(p); !types.empty()) {
    f->Add("--cp-comm-type", absl::StrJoin(types, " "));
  }
  f->Add("--expert-model-parallel-size", p.ep);
  if (p.moe()) f->Add("--expert-tensor-parallel-size", p.etp);
  // Megatron-Core's uneven pipeline layout (arguments.py, _add_distributed_args).
  if (p.stage_layers() && c.first_pipeline_stage_layers() > 0) {
    f->Add("--decoder-first-pipeline-num-layers", c.first_pipeline_stage_layers());
  }
  if (p.stage_layers() && c.last_pipeline_stage_layers() > 0) {
    f->Add("--decoder-last-pipeline-num-layers", c.last_pipeline_stage_layers());
  }
  if (c.sequence_parallel()) f->Add("--sequence-parallel");
  if (c.tp_comm_overlap()) f->Add("--tp-comm-overlap");     // arguments.py, _add_distributed_args
  if (p.pp_inside_dp()) f->Add("--use-tp-pp-dp-mapping");   // order tp-cp-ep-pp-dp
  // Megatron-LM arguments.py, _add_training_args: batch sizes and recomputation.
  f->Add("--micro-batch-size", p.mbs);
  f->Add("--global-batch-size", p.gbs);
  if (p.recompute == v1::RECOMPUTE_FULL) {
    f->Add("--recompute-granularity", "full");
    f->Add("--recompute-method", "uniform");
    f->Add("--recompute-num-layers", 1);
  } else if (p.recompute == v1::RECOMPUTE_SELECTIVE) {
    f->Add("--recompute-granularity", "selective");
    if (c.recompute_modules_size() > 0) {
      f->Add("--recompute-modules", absl::StrJoin(c.recompute_modules(), " "));
    }
  }
}

// ZeRO as Megatron runs it, overlap, offloading, CUDA graphs.
void MegatronShardingFlags(const Plan& p, CommandLine* f, Notes* notes) {
  const v1::ParallelConfig& c = *p.c;
  // Megatron-LM arguments.py, _add_distributed_args / _add_training_args: sharding and
  // overlap (ZeRO-1 is the distributed optimizer; ZeRO-2 and ZeRO-3 are Megatron-FSDP).
  if (p.zero == 1) f->Add("--use-distributed-optimizer");
  // Muon: with --use-distributed-optimizer its LayerWiseDistributedOptimizer (validate_args:
  // "emerging optimizer check"), as estimated.
  if (p.muon) f->Add("--optimizer", "muon");
  if (p.zero >= 2) {
    // Megatron-FSDP (validate_args: the fsdp_dtensor checkpoint format, the distributed
    // optimizer; the Megatron-FSDP user guide's required flags), sharding gradients and
    // optimizer states (optim_grads, ZeRO-2) or also the weights (optim_grads_params).
    // PyTorch FSDP2 (--use-torch-fsdp2) would refuse expert and pipeline parallelism.
    f->Add("--use-megatron-fsdp");
    f->Add("--data-parallel-sharding-strategy", p.zero == 2 ? "optim_grads" : "optim_grads_params");
    f->Add("--use-distributed-optimizer");
    f->Add("--no-gradient-accumulation-fusion");
    f->Add("--ckpt-format", "fsdp_dtensor");
    notes->Add("Megatron-FSDP needs CUDA_DEVICE_MAX_CONNECTIONS unset or above 1 (validate_args refuses 1)");
  }
  if (c.overlap_grad_reduce()) f->Add("--overlap-grad-reduce");
  // The parameter all-gather, overlapped: validate_args allows it with the distributed
  // optimizer or Megatron-FSDP, and only beside --overlap-grad-reduce.
  if (c.overlap_param_gather() && c.overlap_grad_reduce() && p.zero >= 1) f->Add("--overlap-param-gather");
  if (c.offload().optimizer()) f->Add("--optimizer-cpu-offload");  // arguments.py, _add_training_args
  if (c.offload().weights() || c.offload().activations()) {
    notes->Add("weight / activation offload is not emitted: set Megatron-LM's --cpu-offloading options by hand");
  }
  if (c.cpu_offload_layers() > 0) {
    // TransformerConfig's flag; validate_args turns cpu_offloading on from it (the
    // --cpu-offloading flag itself is not on the command line), and TransformerConfig
    // refuses it beside pipeline parallelism or recomputation.
    f->Add("--cpu-offloading-num-layers", c.cpu_offload_layers());
    if (p.pp > 1 || p.recompute != v1::RECOMPUTE_NONE) {
      notes->Add("Megatron-LM refuses CPU offloading with pipeline parallelism or recomputation");
    }
  }
  if (c.offload_modules_size() > 0) {  // arguments.py, TransformerConfig's fine-grained offloading
    f->Add("--fine-grained-activation-offloading");
    f->Add("--offload-modules", absl::StrJoin(c.offload_modules(), " "));
  }
  if (c.fp8_param_gather()) f->Add("--fp8-param-gather");
  // arguments.py, _add_training_args: --cuda-graph-impl and --cuda-graph-modules (which
  // replace the deprecated --enable-cuda-graph).
  const CudaGraphLaunch graphs = MegatronCudaGraphs(p);
  if (!graphs.impl.empty()) f->Add("--cuda-graph-impl", graphs.impl);
  if (!graphs.modules.empty()) f->Add("--cuda-graph-modules", absl::StrJoin(graphs.modules, " "));
  if (!graphs.note.empty()) notes->Add(graphs.note);
}

// The experts: their count and width, which layers, the dispatcher.
void MegatronMoeFlags(const Plan& p, CommandLine* f, Notes* notes) {
  const v1::ParallelConfig& c = *p.c;
  // Megatron-LM arguments.py, _add_moe_args.
  const v1::MoeSpec& m = p.t->moe();
  f->Add("--num-experts", m.num_experts());
  f->Add("--moe-router-topk", std::max(1, m.top_k()));
  f->Add("--moe-ffn-hidden-size", m.expert_ffn_hidden_size() > 0 ? m.expert_ffn_hidden_size() : p.ffn);
  // Which layers are MoE, as a pattern: Megatron's integer N makes layers 0, N, 2N ...
  // MoE, the contract's interval the N-th, 2N-th ... after the dense first layers.
  const std::vector<int> moe_layers = MoeLayers(*p.t);
  if (std::find(moe_layers.begin(), moe_layers.end(), 0) != moe_layers.end()) {
    f->Add("--moe-layer-freq", absl::StrCat("'", LayerPatternExpression(moe_layers), "'"));
  }
  if (m.num_shared_experts() > 0) {  // one shared MLP as wide as all of them
    f->Add("--moe-shared-expert-intermediate-size", SharedExpertWidth(m));
  }
  if (m.router_num_groups() > 0) {  // group-limited routing
    f->Add("--moe-router-num-groups", m.router_num_groups());
    f->Add("--moe-router-group-topk", m.router_group_topk());
  }
  // _add_moe_args: the token dispatcher (DeepEP runs under the flex dispatcher, named as
  // its backend: TransformerConfig warns that moe_enable_deepep is deprecated) and the
  // EP all-to-all overlapped with another micro-batch (combined 1F1B).
  if (c.moe_dispatcher() == v1::MOE_DISPATCHER_ALLGATHER) {
    f->Add("--moe-token-dispatcher-type", "allgather");
  } else if (c.moe_dispatcher() == v1::MOE_DISPATCHER_DEEPEP) {
    f->Add("--moe-token-dispatcher-type", "flex");
    f->Add("--moe-flex-dispatcher-backend", p.mnnvl_experts() ? "hybridep" : "deepep");
  } else {
    f->Add("--moe-token-dispatcher-type", "alltoall");
  }
  // The experts as the estimate prices them: Transformer Engine's GroupedLinear, each
  // expert's GEMM on one of its streams (--moe-grouped-gemm; without it Megatron-Core
  // builds SequentialMLP, one module a local expert, and refuses moe_act among the
  // recompute modules), and the fused permute and un-permute (--moe-permute-fusion). Both
  // default to off (TransformerConfig.moe_grouped_gemm, moe_permute_fusion).
  f->Add("--moe-grouped-gemm");
  f->Add("--moe-permute-fusion");
  if (c.moe_a2a_overlap()) {  // weight gradients delayed to pair with the dispatch (README)
    f->Add("--overlap-moe-expert-parallel-comm");
    f->Add("--delay-wgrad-compute");
    A2aOverlapNote(p, notes);
  }
}

// The compute precision and its recipe.
void MegatronPrecisionFlags(const Plan& p, CommandLine* f) {
  // Megatron-LM arguments.py, _add_mixed_precision_args (--bf16, --fp16) and
  // _add_transformer_engine_args (--fp8-format); fp32 is the default.
  if (p.precision == v1::PRECISION_FP16) f->Add("--fp16");
  if (p.precision == v1::PRECISION_BF16 || p.precision == v1::PRECISION_FP8 || p.precision == v1::PRECISION_FP4) {
    f->Add("--bf16");
  }
  // 16-bit gradient buffers and reduction, as the estimate assumed (arguments.py: bf16
  // otherwise upgrades them to fp32).
  if (p.grads_16bit && p.precision != v1::PRECISION_FP16) f->Add("--grad-reduce-in-bf16");
  // _add_training_args: Transformer Engine's FusedAdam with 2-byte moments, or as NeMo's
  // performance scripts run BF16 Adam (and, by default, the fp32 master weights' 16-bit
  // remainders under BF16), as estimated.
  if (p.precision_aware_optimizer) f->Add("--use-precision-aware-optimizer");
  if (!p.moments_16bit.empty()) {
    f->Add("--exp-avg-dtype", p.moments_16bit);
    f->Add("--exp-avg-sq-dtype", p.moments_16bit);
  }
  // Planned under NeMo (or PyTorch FSDP), the loss was estimated fused: Megatron-Core's
  // fused cross-entropy (arguments.py: --cross-entropy-loss-fusion, native by default).
  if (p.fused_cross_entropy) f->Add("--cross-entropy-loss-fusion");
  if (p.precision == v1::PRECISION_FP8) f->Add("--fp8-format", "hybrid");
  // _add_transformer_engine_args: --fp8-recipe (tensorwise = current scaling) and the
  // FP4 format and recipe.
  if (p.precision == v1::PRECISION_FP8 && p.recipe != v1::QUANT_RECIPE_UNSPECIFIED) {
    f->Add("--fp8-recipe", p.recipe == v1::QUANT_RECIPE_CURRENT_SCALING ? "tensorwise"
                           : p.recipe == v1::QUANT_RECIPE_BLOCKWISE      ? "blockwise"
                           : p.recipe == v1::QUANT_RECIPE_MXFP8          ? "mxfp8"
                                                                         : "delayed");
  }
  if (p.precision == v1::PRECISION_FP4) {
    f->Add("--fp4-format", "e2m1");
    f->Add("--fp4-recipe", "nvfp4");
  }
}

// Megatron-DeepSpeed's MoE (arguments.py: --num-experts, --topk, --expert-interval,
// --moe-expert-parallel-size; transformer.py get_num_experts_per_layer: layer i, 1-based,
// holds experts when i % interval == 0, the contract's own pattern). What it cannot state
// is said in a note.
void DeepSpeedMoeFlags(const Plan& p, CommandLine* f, Notes* notes) {
  const v1::MoeSpec& m = p.t->moe();
  f->Add("--num-experts", m.num_experts());
  f->Add("--topk", m.top_k());
  f->Add("--expert-interval", std::max(1, m.moe_layer_interval()));
  if (p.ep > 1) f->Add("--moe-expert-parallel-size", p.ep);
  // The estimate shards the experts over TP as the attention (DeepSpeed's experts follow
  // TP); Megatron-DeepSpeed keeps them whole on every TP rank unless told
  // (arguments.py --enable-expert-tensor-parallelism, default off; layers.py
  // is_expert_without_slicing).
  if (p.tp > 1) f->Add("--enable-expert-tensor-parallelism");
  if (p.zero >= 3) {
    notes->Add("Megatron-DeepSpeed's native MoE refuses ZeRO stage 3 (DeepSpeed engine.py, "
               "_validate_zero3_moe_compatibility): the estimate's ZeRO-3 MoE runs as DeepSpeed's AutoEP "
               "(a Hugging Face model under deepspeed.initialize, no tensor parallelism), not as this command");
  }
  if (m.first_dense_layers() > 0) {
    notes->Add(absl::StrCat("Megatron-DeepSpeed places experts every --expert-interval layers from the first: the ",
                            m.first_dense_layers(), " dense first layers are not stated"));
  }
  if (m.expert_ffn_hidden_size() > 0 && m.expert_ffn_hidden_size() != p.ffn) {
    notes->Add(absl::StrCat("Megatron-DeepSpeed's experts are as wide as --ffn-hidden-size (", p.ffn,
                            "); the planned experts are ", m.expert_ffn_hidden_size(), " wide"));
  }
  if (m.num_shared_experts() > 0) {
    notes->Add("Megatron-DeepSpeed has no shared experts (its residual MoE is another design): not stated");
  }
  if (m.router_num_groups() > 0) {
    notes->Add("Megatron-DeepSpeed's gate has no group-limited routing: the router groups are not stated");
  }
}

}  // namespace

std::string Megatron(const Plan& p) {
  Notes notes;
  CommandLine f;
  MegatronParallelFlags(p, &f, &notes);
  MegatronShardingFlags(p, &f, &notes);
  ModelShapeFlags(p, /*deepspeed=*/false, &f, &notes);
  if (p.moe()) MegatronMoeFlags(p, &f, &notes);
  MegatronPrecisionFlags(p, &f);
  return absl::StrCat(Header("Megatron-LM pretrain_gpt.py arguments", p), notes.text(), f.Render(Torchrun(p)));
}

std::string DeepSpeed(const Plan& p) {
  const v1::ParallelConfig& c = *p.c;
  Notes notes;
  const bool fp16 = p.precision == v1::PRECISION_FP16;
  const bool bf16 = p.precision == v1::PRECISION_BF16 || p.precision == v1::PRECISION_FP8;
  // ds_config.json keys: DeepSpeed's configuration reference (deepspeed.ai/docs/config-json):
  // batch sizes, zero_optimization, activation_checkpointing, bf16 / fp16.
  std::string json =
      absl::StrCat("{\n  \"train_batch_size\": ", p.gbs, ",\n  \"train_micro_batch_size_per_gpu\": ", p.mbs,
                   ",\n  \"gradient_accumulation_steps\": ", p.micro_batches,
                   ",\n  \"zero_optimization\": {\n    \"stage\": ", p.zero,
                   ",\n    \"overlap_comm\": ", Bool(c.overlap_grad_reduce()));
  if (p.zero >= 3) {
    // The fetch and bucket settings the estimate assumed (deepspeed_zero3.h), pinned.
    absl::StrAppend(&json, ",\n    \"stage3_prefetch_bucket_size\": ", deepspeed::kPrefetchBucket,
                    ",\n    \"stage3_param_persistence_threshold\": ", deepspeed::kPersistenceThreshold,
                    ",\n    \"stage3_max_live_parameters\": ", deepspeed::kMaxLiveParameters,
                    ",\n    \"stage3_max_reuse_distance\": ", deepspeed::kMaxReuseDistance,
                    ",\n    \"reduce_bucket_size\": ", deepspeed::kReduceBucket);
  }
  if (!p.moments_16bit.empty()) {
    notes.Add("DeepSpeed's optimizers keep Adam's moments in fp32: the estimate's 2-byte moments are not run");
  }
  if (p.muon) notes.Add("Muon is modelled as Megatron-Core runs it; the DeepSpeed optimizer is not set here");
  if (c.offload().optimizer()) {
    absl::StrAppend(&json, ",\n    \"offload_optimizer\": {\"device\": \"cpu\", \"pin_memory\": true}");
  }
  if (c.offload().weights()) {
    absl::StrAppend(&json, ",\n    \"offload_param\": {\"device\": \"cpu\", \"pin_memory\": true}");
    if (p.zero < 3) notes.Add("DeepSpeed offloads parameters (offload_param) only with ZeRO stage 3");
  }
  absl::StrAppend(&json, "\n  },\n");
  if (p.recompute != v1::RECOMPUTE_NONE) {
    absl::StrAppend(&json, "  \"activation_checkpointing\": {\"partition_activations\": false, \"cpu_checkpointing\": ",
                    Bool(c.offload().activations()), "},\n");
  } else if (c.offload().activations()) {
    notes.Add("DeepSpeed offloads activations only when it checkpoints them; not emitted");
  }
  absl::StrAppend(&json, "  \"bf16\": {\"enabled\": ", Bool(bf16), "},\n  \"fp16\": {\"enabled\": ", Bool(fp16),
                  "}\n}\n");
  if (p.precision == v1::PRECISION_FP8 || p.precision == v1::PRECISION_FP4) {
    notes.Add(absl::StrCat("DeepSpeed has no ", p.precision == v1::PRECISION_FP8 ? "FP8" : "FP4",
                           " training setting; bf16 is emitted"));
  }
  if (p.pp > 1 && p.zero > 1) notes.Add("DeepSpeed's pipeline engine supports ZeRO stages 0 and 1 only");
  if (p.pp > 1 && (p.v > 1 || p.foreign_schedule())) {
    notes.Add(absl::StrCat("DeepSpeed's pipeline engine has no ", ScheduleName(p.schedule), " schedule; it runs 1F1B"));
  }

  CommandLine f;
  // Megatron-DeepSpeed megatron/arguments.py: the Megatron degrees, --no-pipeline-parallel
  // (DeepSpeed's pipeline engine off), --ds-sequence-parallel-size (DeepSpeed-Ulysses).
  f.Add("--tensor-model-parallel-size", p.tp);
  if (p.pp > 1) {
    f.Add("--pipeline-model-parallel-size", p.pp);
  } else {
    f.Add("--no-pipeline-parallel");
  }
  if (p.cp > 1) {
    f.Add("--ds-sequence-parallel-size", p.cp);
    notes.Add("context parallelism maps to DeepSpeed-Ulysses (all-to-all), not the ring exchange that was planned");
  }
  if (c.sequence_parallel() && p.cp > 1) {
    notes.Add("Megatron-DeepSpeed cannot combine --sequence-parallel with DeepSpeed-Ulysses; it is left out");
  } else if (c.sequence_parallel()) {
    f.Add("--sequence-parallel");
  }
  f.Add("--micro-batch-size", p.mbs);
  f.Add("--global-batch-size", p.gbs);
  ModelShapeFlags(p, /*deepspeed=*/true, &f, &notes);
  if (p.moe()) DeepSpeedMoeFlags(p, &f, &notes);
  // Megatron-DeepSpeed examples_deepspeed/pretrain_llama2_distributed.sh: recomputation.
  if (p.recompute == v1::RECOMPUTE_FULL) {
    f.Add("--deepspeed-activation-checkpointing");
    f.Add("--recompute-granularity", "full");
    f.Add("--recompute-method", "uniform");
  } else if (p.recompute == v1::RECOMPUTE_SELECTIVE) {
    f.Add("--recompute-granularity", "selective");
    if (std::string n = UnrunModulesNote(p, "Megatron-DeepSpeed", "re-runs the core attention"); !n.empty()) {
      notes.Add(n);
    }
  }
  if (fp16) f.Add("--fp16");
  if (bf16) f.Add("--bf16");
  // Megatron-DeepSpeed megatron/arguments.py (_add_zero_args) and deepspeed.add_config_arguments.
  f.Add(absl::StrCat("--zero-stage=", p.zero));
  f.Add("--deepspeed");
  f.Add("--deepspeed_config=ds_config.json");
  return absl::StrCat(Header("DeepSpeed ds_config.json and Megatron-DeepSpeed pretrain_gpt.py arguments", p),
                      notes.text(), "cat > ds_config.json <<'EOF'\n", json, "EOF\n", f.Render(Torchrun(p)));
}

}  // namespace paraplan::cli::launcher
