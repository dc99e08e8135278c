// Unit tests of the launcher arguments (client/launcher*.cc) for each framework: the
// flags and config keys a plan's configuration becomes, written out in full, and what a
// launcher refuses. Inputs: launch_inputs.h.
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/launcher.h"
#include "client/launcher_plan.h"
#include "gtest/gtest.h"
#include "tests/cli/launch_inputs.h"

namespace paraplan::cli {
namespace {

TEST(Launcher, MegatronMoeFp8) {
  EXPECT_EQ(Emit("megatron", MoeFp8()),
            "# Megatron-LM pretrain_gpt.py arguments for moe-test on lab@3: 64 GPUs (8 nodes x 8)\n"
            "# plan: TP2 PP2 DP8 CP2 EP4, schedule 1f1b, micro-batch 2, global batch 256, recompute full, sequence "
            "parallel, ZeRO-3, fp8\n"
            "# note: Megatron-FSDP needs CUDA_DEVICE_MAX_CONNECTIONS unset or above 1 (validate_args refuses 1)\n"
            "# note: CUDA graphs are not emitted: Megatron-Core graphs full recompute only as one full-iteration "
            "graph, which a dropless MoE layer cannot be captured in; the estimate took every launch as replayed "
            "from a graph\n"
            "torchrun --nproc_per_node 8 --nnodes 8 pretrain_gpt.py \\\n"
            "    --tensor-model-parallel-size 2 \\\n"
            "    --pipeline-model-parallel-size 2 \\\n"
            "    --context-parallel-size 2 \\\n"
            "    --expert-model-parallel-size 4 \\\n"
            "    --expert-tensor-parallel-size 2 \\\n"
            "    --sequence-parallel \\\n"
            "    --tp-comm-overlap \\\n"
            "    --micro-batch-size 2 \\\n"
            "    --global-batch-size 256 \\\n"
            "    --recompute-granularity full \\\n"
            "    --recompute-method uniform \\\n"
            "    --recompute-num-layers 1 \\\n"
            "    --use-megatron-fsdp \\\n"
            "    --data-parallel-sharding-strategy optim_grads_params \\\n"
            "    --use-distributed-optimizer \\\n"
            "    --no-gradient-accumulation-fusion \\\n"
            "    --ckpt-format fsdp_dtensor \\\n"
            "    --overlap-grad-reduce \\\n"
            "    --overlap-param-gather \\\n"
            "    --optimizer-cpu-offload \\\n"
            "    --num-layers 32 \\\n"
            "    --hidden-size 4096 \\\n"
            "    --ffn-hidden-size 14336 \\\n"
            "    --num-attention-heads 32 \\\n"
            "    --group-query-attention \\\n"
            "    --num-query-groups 8 \\\n"
            "    --swiglu \\\n"
            "    --seq-length 4096 \\\n"
            "    --max-position-embeddings 4096 \\\n"
            "    --untie-embeddings-and-output-weights \\\n"
            "    --num-experts 8 \\\n"
            "    --moe-router-topk 2 \\\n"
            "    --moe-ffn-hidden-size 14336 \\\n"
            "    --moe-token-dispatcher-type alltoall \\\n"
            "    --moe-grouped-gemm \\\n"
            "    --moe-permute-fusion \\\n"
            "    --bf16 \\\n"
            "    --fp8-format hybrid\n");
}

TEST(Launcher, TorchtitanMoeFp8) {
  EXPECT_EQ(Emit("torchtitan", MoeFp8()),
            "# torchtitan command line (overrides of a config function) for moe-test on lab@3: 64 GPUs (8 nodes x 8)\n"
            "# plan: TP2 PP2 DP8 CP2 EP4, schedule 1f1b, micro-batch 2, global batch 256, recompute full, sequence parallel, ZeRO-3, fp8\n"
            "# note: --module / --config: torchtitan ships no config function for moe-test; name yours (e.g. in torchtitan_recipes/), building 32 layers, hidden 4096, 32 heads (8 K/V), FFN 14336, vocabulary 32000, 8 experts (top 2) of FFN 14336; the flags below override its parallelism and batch\n"
            "# note: CUDA graphs are not emitted here; see the config function's options\n"
            "# note: FP8: add the float8 converter (tensorwise) to the model in the config function, with FSDP float8 all-gather; it has no command-line flag\n"
            "torchrun --nproc_per_node 8 --nnodes 8 -m torchtitan.train \\\n"
            "    --module YOUR_MODULE \\\n"
            "    --config YOUR_CONFIG \\\n"
            "    --parallelism.data_parallel_replicate_degree 1 \\\n"
            "    --parallelism.data_parallel_shard_degree 8 \\\n"
            "    --parallelism.tensor_parallel_degree 2 \\\n"
            "    --parallelism.enable_sequence_parallel \\\n"
            "    --parallelism.pipeline_parallel_degree 2 \\\n"
            "    --parallelism.pipeline_parallel_schedule 1F1B \\\n"
            "    --parallelism.num_pp_microbatches 16 \\\n"
            "    --parallelism.context_parallel_degree 2 \\\n"
            "    --parallelism.expert_parallel_degree 4 \\\n"
            "    --training.num_tokens_per_microbatch_per_dp_rank 8192 \\\n"
            "    --training.num_tokens_per_train_step 1048576 \\\n"
            "    --training.max_context_length 4096 \\\n"
            "    --training.mixed_precision_param bfloat16 \\\n"
            "    --training.enable_cpu_offload \\\n"
            "    --compile.enable \\\n"
            "    --compile.enable_async_tensor_parallel \\\n"
            "    activation-checkpoint:full\n");
}

// A plan with DeepEP says, under torchtitan, where the dispatcher is set: its config
// function (torchtitan's qwen3 config qwen3_moe_deepep runs it), for no flag names it.
TEST(Launcher, TorchtitanNamesWhereDeepEpIsSet) {
  LaunchInput in = MoeFp8();
  EXPECT_FALSE(absl::StrContains(Emit("torchtitan", in), "DeepEP"));
  in.config.set_moe_dispatcher(v1::MOE_DISPATCHER_DEEPEP);
  EXPECT_TRUE(absl::StrContains(Emit("torchtitan", in),
                                "# note: DeepEP: the token dispatcher is the config function's (torchtitan's qwen3 "
                                "config qwen3_moe_deepep runs it); it has no command-line flag\n"));
}

TEST(Launcher, NemoDenseFp16) {
  EXPECT_EQ(Emit("nemo", DenseFp16()),
            "# NeMo megatron_gpt_pretraining.py (Hydra overrides of megatron_gpt_config.yaml) for dense-test: 12 GPUs (2 nodes x 8)\n"
            "# plan: TP2 PP2 DP3 CP1 EP1, schedule gpipe, micro-batch 4, global batch 96, recompute none, ZeRO-2, fp16\n"
            "# note: NeMo has no gpipe schedule; it runs 1F1B\n"
            "# note: the estimate runs ZeRO-2 as Megatron-FSDP's optim_grads (a reduce-scatter every micro-batch, "
            "gradients sharded); NeMo 1.x's distributed_fused_adam syncs gradients once an iteration: --emit megatron "
            "or megatron-bridge runs it as estimated\n"
            "python examples/nlp/language_modeling/megatron_gpt_pretraining.py \\\n"
            "    trainer.devices=8 \\\n"
            "    trainer.num_nodes=2 \\\n"
            "    trainer.precision=16-mixed \\\n"
            "    model.micro_batch_size=4 \\\n"
            "    model.global_batch_size=96 \\\n"
            "    model.tensor_model_parallel_size=2 \\\n"
            "    model.pipeline_model_parallel_size=2 \\\n"
            "    model.virtual_pipeline_model_parallel_size=null \\\n"
            "    +model.context_parallel_size=1 \\\n"
            "    model.expert_model_parallel_size=1 \\\n"
            "    model.sequence_parallel=false \\\n"
            "    model.activations_checkpoint_granularity=null \\\n"
            "    model.activations_checkpoint_method=null \\\n"
            "    model.activations_checkpoint_num_layers=null \\\n"
            "    model.encoder_seq_length=2048 \\\n"
            "    model.max_position_embeddings=2048 \\\n"
            "    model.num_layers=24 \\\n"
            "    model.hidden_size=2048 \\\n"
            "    model.ffn_hidden_size=8192 \\\n"
            "    model.num_attention_heads=16 \\\n"
            "    model.share_embeddings_and_output_weights=true \\\n"
            "    model.cpu_offloading=true \\\n"
            "    model.cpu_offloading_weights=true \\\n"
            "    model.cpu_offloading_activations=true \\\n"
            "    model.optim.name=distributed_fused_adam \\\n"
            "    +model.optim.overlap_grad_sync=false \\\n"
            "    +model.optim.overlap_param_sync=false\n");
}

TEST(Launcher, DeepSpeedDenseFp16) {
  EXPECT_EQ(Emit("deepspeed", DenseFp16()),
            "# DeepSpeed ds_config.json and Megatron-DeepSpeed pretrain_gpt.py arguments for dense-test: 12 GPUs (2 "
            "nodes x 8)\n"
            "# plan: TP2 PP2 DP3 CP1 EP1, schedule gpipe, micro-batch 4, global batch 96, recompute none, ZeRO-2, "
            "fp16\n"
            "# note: DeepSpeed offloads parameters (offload_param) only with ZeRO stage 3\n"
            "# note: DeepSpeed offloads activations only when it checkpoints them; not emitted\n"
            "# note: DeepSpeed's pipeline engine supports ZeRO stages 0 and 1 only\n"
            "# note: DeepSpeed's pipeline engine has no gpipe schedule; it runs 1F1B\n"
            "cat > ds_config.json <<'EOF'\n"
            "{\n"
            "  \"train_batch_size\": 96,\n"
            "  \"train_micro_batch_size_per_gpu\": 4,\n"
            "  \"gradient_accumulation_steps\": 8,\n"
            "  \"zero_optimization\": {\n"
            "    \"stage\": 2,\n"
            "    \"overlap_comm\": false,\n"
            "    \"offload_param\": {\"device\": \"cpu\", \"pin_memory\": true}\n"
            "  },\n"
            "  \"bf16\": {\"enabled\": false},\n"
            "  \"fp16\": {\"enabled\": true}\n"
            "}\n"
            "EOF\n"
            "torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py \\\n"
            "    --tensor-model-parallel-size 2 \\\n"
            "    --pipeline-model-parallel-size 2 \\\n"
            "    --micro-batch-size 4 \\\n"
            "    --global-batch-size 96 \\\n"
            "    --num-layers 24 \\\n"
            "    --hidden-size 2048 \\\n"
            "    --ffn-hidden-size 8192 \\\n"
            "    --num-attention-heads 16 \\\n"
            "    --seq-length 2048 \\\n"
            "    --max-position-embeddings 2048 \\\n"
            "    --fp16 \\\n"
            "    --zero-stage=2 \\\n"
            "    --deepspeed \\\n"
            "    --deepspeed_config=ds_config.json\n");
}

// Under ZeRO-3 the ds_config pins the fetch and bucket settings the estimate assumed
// (DeepSpeed's defaults: deepspeed/runtime/zero/config.py), so a release that changes
// them does not change the plan.
TEST(Launcher, DeepSpeedZero3PinsTheFetchSettingsItWasEstimatedWith) {
  const std::string out = Emit("deepspeed", LlamaZero3());
  EXPECT_TRUE(absl::StrContains(out,
                                "    \"stage\": 3,\n"
                                "    \"overlap_comm\": true,\n"
                                "    \"stage3_prefetch_bucket_size\": 50000000,\n"
                                "    \"stage3_param_persistence_threshold\": 100000,\n"
                                "    \"stage3_max_live_parameters\": 1000000000,\n"
                                "    \"stage3_max_reuse_distance\": 1000000000,\n"
                                "    \"reduce_bucket_size\": 500000000"))
      << out;
  // Stages 1 and 2 leave DeepSpeed's buckets alone (the model does not read them there).
  EXPECT_FALSE(absl::StrContains(Emit("deepspeed", DenseFp16()), "reduce_bucket_size"));
}

TEST(Launcher, MegatronZero2AndVirtualStagesThatDoNotDivide) {
  LaunchInput in = DenseFp16();
  in.config.set_pipeline_schedule(v1::SCHEDULE_UNSPECIFIED);
  in.config.set_pipeline_parallel(5);  // 24 layers do not split into 5 x 2 stages
  in.config.set_virtual_pipeline_stages(2);
  in.config.set_data_parallel(1);
  const std::string out = Emit("megatron", in);
  EXPECT_NE(out.find("schedule interleaved 1f1b v2"), std::string::npos) << out;
  EXPECT_NE(out.find("    --num-virtual-stages-per-pipeline-rank 2 \\\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("--num-layers-per-virtual-pipeline-stage"), std::string::npos) << out;
  // ZeRO-2 as Megatron-FSDP's optim_grads (arguments.py, --data-parallel-sharding-strategy).
  EXPECT_NE(out.find("    --use-megatron-fsdp \\\n    --data-parallel-sharding-strategy optim_grads \\\n"
                     "    --use-distributed-optimizer \\\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("no ZeRO-2"), std::string::npos) << out;
  EXPECT_NE(out.find("    --fp16\n"), std::string::npos) << out;
  EXPECT_NE(out.find("# note: weight / activation offload is not emitted"), std::string::npos) << out;
  EXPECT_NE(out.find("10 GPUs (2 nodes x 8)"), std::string::npos) << out;
}

// Planned under NeMo in BF16, Adam ran as NeMo's performance scripts run it: Megatron-Core's
// precision-aware optimizer with fp32 moments (master remainders, decoupled gradients), so
// the launchers that can run it say so and the NeMo 1.x YAML says it cannot; under
// Megatron-FSDP too (its decoupled gradients), not under FP8 or another framework.
TEST(Launcher, NemoBf16PlansRunThePrecisionAwareOptimizer) {
  LaunchInput in = Gpt3();
  in.framework = v1::FRAMEWORK_NEMO;
  const std::string megatron = Emit("megatron", in);
  EXPECT_NE(megatron.find("    --use-precision-aware-optimizer \\\n"), std::string::npos) << megatron;
  EXPECT_EQ(megatron.find("--exp-avg-dtype"), std::string::npos) << megatron;
  const std::string bridge = Emit("megatron-bridge", in);
  EXPECT_TRUE(absl::StrContains(bridge, "optimizer.use_precision_aware_optimizer=true")) << bridge;
  EXPECT_FALSE(absl::StrContains(bridge, "exp_avg_dtype")) << bridge;
  EXPECT_TRUE(absl::StrContains(Emit("nemo", in), "precision-aware optimizer"));
  LaunchInput fsdp = in;
  fsdp.config.set_zero_stage(3);
  EXPECT_TRUE(absl::StrContains(Emit("megatron", fsdp), "--use-precision-aware-optimizer"));
  LaunchInput fp8 = in;
  fp8.workload.set_precision(v1::PRECISION_FP8);
  EXPECT_FALSE(absl::StrContains(Emit("megatron", fp8), "--use-precision-aware-optimizer"));
  in.framework = v1::FRAMEWORK_MEGATRON;
  EXPECT_FALSE(absl::StrContains(Emit("megatron", in), "--use-precision-aware-optimizer"));
}

// Muon as Megatron-Core runs it: --optimizer muon (layer-wise distributed beside
// --use-distributed-optimizer), Megatron-Bridge's Kimi-K2 recipe's keys; the launchers that
// cannot run it say so.
TEST(Launcher, MuonIsEmittedWhereMegatronRunsIt) {
  LaunchInput in = Gpt3();
  in.workload.set_optimizer(v1::OPTIMIZER_MUON);
  const std::string megatron = Emit("megatron", in);
  EXPECT_NE(megatron.find("    --optimizer muon \\\n"), std::string::npos) << megatron;
  EXPECT_NE(megatron.find("    --use-distributed-optimizer \\\n"), std::string::npos) << megatron;
  const std::string bridge = Emit("megatron-bridge", in);
  EXPECT_TRUE(absl::StrContains(bridge, "optimizer.optimizer=muon")) << bridge;
  EXPECT_TRUE(absl::StrContains(bridge, "optimizer.use_layer_wise_distributed_optimizer=true")) << bridge;
  EXPECT_TRUE(absl::StrContains(bridge, "ddp.use_distributed_optimizer=false")) << bridge;
  EXPECT_TRUE(absl::StrContains(Emit("nemo", in), "NeMo 1.x has no Muon"));
  EXPECT_TRUE(absl::StrContains(Emit("torchtitan", in), "Muon is modelled"));
  EXPECT_TRUE(absl::StrContains(Emit("deepspeed", in), "Muon is modelled"));
  in.workload.set_optimizer(v1::OPTIMIZER_ADAM);
  EXPECT_FALSE(absl::StrContains(Emit("megatron", in), "--optimizer muon"));
}

// A Qwen3-style MoE run as the Megatron-MoE model zoo launches it: experts folded over
// the TP ranks (expert-TP 1), DeepEP, the 1F1B all-to-all overlap, layernorm and moe_act
// recompute, end stages one layer short, MXFP8, CPU offload of a layer — each emitted as
// the Megatron-LM argument that runs it.
TEST(Launcher, MegatronMoeFoldingAndRecipes) {
  LaunchInput in = MoeFp8();
  v1::ParallelConfig& c = in.config;
  c.set_expert_tensor_parallel(1);
  c.set_moe_dispatcher(v1::MOE_DISPATCHER_DEEPEP);
  c.set_moe_a2a_overlap(true);
  c.set_recompute(v1::RECOMPUTE_SELECTIVE);
  c.add_recompute_modules("layernorm");
  c.add_recompute_modules("moe_act");
  c.set_first_pipeline_stage_layers(15);
  c.set_last_pipeline_stage_layers(15);
  c.set_cpu_offload_layers(1);
  c.set_zero_stage(1);
  c.set_fp8_param_gather(true);
  in.workload.set_quant_recipe(v1::QUANT_RECIPE_MXFP8);
  const std::string out = Emit("megatron", in);
  for (const char* arg : {"    --expert-tensor-parallel-size 1 \\\n", "    --moe-token-dispatcher-type flex \\\n",
                          "    --moe-flex-dispatcher-backend deepep \\\n", "    --overlap-moe-expert-parallel-comm \\\n",
                          "    --recompute-granularity selective \\\n",
                          "    --recompute-modules layernorm moe_act \\\n", "    --moe-grouped-gemm \\\n",
                          "    --decoder-first-pipeline-num-layers 15 \\\n",
                          "    --decoder-last-pipeline-num-layers 15 \\\n", "    --cpu-offloading-num-layers 1 \\\n",
                          "    --fp8-param-gather \\\n", "    --fp8-recipe mxfp8"}) {
    EXPECT_NE(out.find(arg), std::string::npos) << arg << "\n" << out;
  }
}

// The experts run as the estimate prices them: Transformer Engine's GroupedLinear and the
// fused permute, which Megatron-Core's TransformerConfig leaves off (moe_grouped_gemm,
// moe_permute_fusion default False; without grouped GEMM it builds SequentialMLP and its
// __post_init__ refuses moe_act among the recompute modules). Each Megatron-Core launcher
// states both for a MoE plan, none for a dense one.
TEST(Launcher, MegatronCoreLaunchersRunTheExpertsAsEstimated) {
  LaunchInput moe = FoldedMoe();
  moe.config.add_recompute_modules("moe_act");
  const std::vector<std::pair<const char*, std::vector<const char*>>> wanted = {
      {"megatron", {"    --moe-grouped-gemm \\\n", "    --moe-permute-fusion \\\n"}},
      {"megatron-bridge", {"    model.moe_grouped_gemm=true \\\n", "    model.moe_permute_fusion=true \\\n"}},
      {"nemo", {"    +model.moe_grouped_gemm=true \\\n", "    +model.moe_permute_fusion=true \\\n"}}};
  for (const auto& [framework, args] : wanted) {
    const std::string out = Emit(framework, moe);
    const std::string dense = Emit(framework, Gpt3());
    for (const char* arg : args) {
      EXPECT_TRUE(absl::StrContains(out, arg)) << framework << ": " << arg << "\n" << out;
      EXPECT_FALSE(absl::StrContains(dense, "grouped")) << framework << "\n" << dense;
    }
  }
}

// CUDA graphs as Megatron-Core runs them (TransformerConfig.__post_init__): a dense model's
// whole layers, or one full-iteration graph under full recompute; a dropless MoE model's
// attention, router and preprocessing through Transformer Engine (as Megatron-Bridge's
// MoE recipes), none under full recompute; and no graph around what selective recompute
// re-runs with dropout (Megatron's default: 0.1, core_attn recomputed) — each with a note
// where the estimate graphed more.
TEST(Launcher, CudaGraphsAsMegatronCoreRunsThem) {
  LaunchInput dense = Gpt3();  // selective recompute, dropout unstated (0.1)
  dense.config.set_cuda_graphs(true);
  std::string out = Emit("megatron", dense);
  EXPECT_TRUE(absl::StrContains(out, "    --cuda-graph-impl local \\\n    --cuda-graph-modules mlp \\\n")) << out;
  EXPECT_TRUE(absl::StrContains(out, "# note: CUDA graphs cover the layers' mlp (dropout beside")) << out;
  EXPECT_FALSE(absl::StrContains(out, "--enable-cuda-graph")) << out;
  dense.workload.mutable_transformer()->set_dropout(0);
  out = Emit("megatron", dense);
  EXPECT_TRUE(absl::StrContains(out, "    --cuda-graph-impl local \\\n")) << out;
  EXPECT_FALSE(absl::StrContains(out, "--cuda-graph-modules")) << out;
  dense.config.set_recompute(v1::RECOMPUTE_FULL);
  EXPECT_TRUE(absl::StrContains(Emit("megatron", dense), "    --cuda-graph-impl full_iteration \\\n"));
  EXPECT_TRUE(absl::StrContains(Emit("megatron-bridge", dense), "    model.cuda_graph_impl=full_iteration \\\n"));

  LaunchInput moe = FoldedMoe();  // selective recompute
  moe.config.set_cuda_graphs(true);
  moe.workload.mutable_transformer()->set_dropout(0);
  out = Emit("megatron", moe);
  EXPECT_TRUE(absl::StrContains(out, "    --cuda-graph-impl transformer_engine \\\n")) << out;
  EXPECT_TRUE(absl::StrContains(out, "    --cuda-graph-modules attn moe_router moe_preprocess \\\n")) << out;
  EXPECT_TRUE(absl::StrContains(out, "# note: CUDA graphs cover the layers' attn, moe_router, moe_preprocess")) << out;
  EXPECT_TRUE(absl::StrContains(Emit("megatron-bridge", moe),
                                "    'model.cuda_graph_modules=[attn,moe_router,moe_preprocess]' \\\n"));
  moe.workload.mutable_transformer()->clear_dropout();  // 0.1 beside the recomputed core_attn
  EXPECT_TRUE(absl::StrContains(Emit("megatron", moe), "    --cuda-graph-modules moe_router moe_preprocess \\\n"));
  moe.workload.mutable_transformer()->set_dropout(0);
  moe.config.add_recompute_modules("moe");  // "moe recompute is not supported with moe_router CUDA graph"
  EXPECT_TRUE(absl::StrContains(Emit("megatron", moe), "    --cuda-graph-modules attn \\\n"));
  moe.config.set_recompute(v1::RECOMPUTE_FULL);
  out = Emit("megatron", moe);
  EXPECT_FALSE(absl::StrContains(out, "--cuda-graph-impl")) << out;
  EXPECT_TRUE(absl::StrContains(out, "# note: CUDA graphs are not emitted")) << out;
}

// On a multi-node NVLink system (GB200 NVL72: 4 GPUs a node, 72 an NVLink domain) an expert
// grid wider than a node reaches the other nodes over NVLink only through Megatron-Core's
// HybridEP backend (TransformerConfig.moe_flex_dispatcher_backend: "only hybridep supports
// the MNNVL case"), which is the all-to-all the estimate priced; inside a node, or on
// 8-GPU nodes with a node-wide NVLink domain, DeepEP's.
TEST(Launcher, DeepEpOnAMultiNodeNvlinkDomainIsHybridEp) {
  LaunchInput in = FoldedMoe();  // EP 4 x expert-TP 1, DeepEP
  in.num_gpus = 64;
  in.gpus_per_node = 4;
  in.nvlink_domain = 72;
  in.config.set_expert_parallel(8);
  EXPECT_TRUE(absl::StrContains(Emit("megatron", in), "    --moe-flex-dispatcher-backend hybridep \\\n"));
  EXPECT_TRUE(absl::StrContains(Emit("megatron-bridge", in), "    model.moe_flex_dispatcher_backend=hybridep \\\n"));
  EXPECT_TRUE(absl::StrContains(Emit("nemo", in), "only Megatron-Core's HybridEP backend"));
  in.config.set_expert_parallel(4);  // the grid stays in its node
  EXPECT_TRUE(absl::StrContains(Emit("megatron", in), "    --moe-flex-dispatcher-backend deepep \\\n"));
  in.config.set_expert_parallel(8);
  in.gpus_per_node = 8;
  in.nvlink_domain = 8;  // a DGX: the NVLink domain is the node
  EXPECT_TRUE(absl::StrContains(Emit("megatron", in), "    --moe-flex-dispatcher-backend deepep \\\n"));
  EXPECT_FALSE(absl::StrContains(Emit("nemo", in), "HybridEP"));
}

// The four models (GPT-3 175B, Llama 3 70B, a Mixtral-shaped MoE, a DeepSeek-style
// MoE with MLA) through every launcher: each is emitted, and each output states the
// model's layer count and hidden size (and its expert count) as its framework reads them
// — a flag, a key or, where the framework builds the model in code, the note on what
// that code must build.
TEST(Launcher, EveryFrameworkStatesTheFourModels) {
  const std::vector<std::pair<const char*, LaunchInput>> models = {
      {"gpt3", Gpt3()}, {"llama3-70b", LlamaZero3()}, {"mixtral", MoeFp8()}, {"deepseek", DeepSeekStyle()}};
  for (const char* framework : {"megatron", "megatron-bridge", "nemo", "deepspeed", "torchtitan"}) {
    for (const auto& [name, in] : models) {
      const std::string text = Emit(framework, in);
      // As a flag, a key or the note's words: "--num-layers 96", "num_layers=96", "96 layers".
      const auto says = [&](const char* flag, const char* key, const char* words, int64_t n) {
        for (const std::string& form : {absl::StrCat(flag, " ", n), absl::StrCat(key, "=", n),
                                        absl::StrCat(n, " ", words), absl::StrCat(words, " ", n)}) {
          if (absl::StrContains(text, form)) return true;
        }
        return false;
      };
      const v1::TransformerSpec& t = in.workload.transformer();
      EXPECT_TRUE(says("--num-layers", "num_layers", "layers", t.num_layers()))
          << framework << " / " << name << ": no layer count\n" << text;
      EXPECT_TRUE(says("--hidden-size", "hidden_size", "hidden", t.hidden_size()))
          << framework << " / " << name << ": no hidden size\n" << text;
      if (t.has_moe()) {
        EXPECT_TRUE(says("--num-experts", "num_moe_experts", "experts", t.moe().num_experts()))
            << framework << " / " << name << ": no expert count\n" << text;
      }
    }
  }
}

// DeepSpeed's experts follow TP in the estimate; Megatron-DeepSpeed keeps them whole on
// every TP rank unless --enable-expert-tensor-parallelism says otherwise.
TEST(Launcher, DeepSpeedShardsTheExpertsOverTpAsEstimated) {
  LaunchInput in = MoeFp8();  // TP 2, EP 4
  EXPECT_TRUE(absl::StrContains(Emit("deepspeed", in), "    --enable-expert-tensor-parallelism \\\n"))
      << Emit("deepspeed", in);
  in.config.set_tensor_parallel(1);
  in.config.set_data_parallel(16);
  const std::string tp1 = Emit("deepspeed", in);
  EXPECT_FALSE(absl::StrContains(tp1, "--enable-expert-tensor-parallelism")) << tp1;
  // ZeRO-3 (MoeFp8's): its native MoE refuses it; AutoEP runs it.
  EXPECT_TRUE(absl::StrContains(tp1, "# note: Megatron-DeepSpeed's native MoE refuses ZeRO stage 3")) << tp1;
}

TEST(Launcher, LayerKindsMlaAndWindowsAreStated) {
  const std::set<std::string> known = MegatronFlags();
  LaunchInput ds = DeepSeekStyle();
  std::string out = Emit("megatron", ds);
  for (const char* arg : {"--multi-latent-attention \\\n", "--q-lora-rank 1536 \\\n", "--kv-lora-rank 512 \\\n",
                          "--qk-head-dim 128 \\\n", "--qk-pos-emb-head-dim 64 \\\n", "--v-head-dim 128 \\\n",
                          "--moe-layer-freq '[0]*3+[1]*58' \\\n",
                          "--moe-shared-expert-intermediate-size 2048 \\\n", "--mtp-num-layers 1 \\\n",
                          "--moe-router-num-groups 8 \\\n", "--moe-router-group-topk 4 \\\n",
                          "--use-precision-aware-optimizer \\\n", "--exp-avg-dtype bf16 \\\n",
                          "--exp-avg-sq-dtype bf16 \\\n"}) {
    EXPECT_NE(out.find(arg), std::string::npos) << arg << "\n" << out;
  }
  for (const std::string& flag : EmittedFlags(out)) EXPECT_TRUE(known.contains(flag)) << flag << "\n" << out;
  // Every other layer MoE: the contract's interval 2 is layers 1, 3, 5 ...
  ds.workload.mutable_transformer()->mutable_moe()->set_first_dense_layers(0);
  ds.workload.mutable_transformer()->mutable_moe()->set_moe_layer_interval(2);
  ds.workload.mutable_transformer()->set_num_layers(36);
  ds.workload.mutable_transformer()->mutable_sliding_window()->set_tokens(128);
  ds.workload.mutable_transformer()->mutable_sliding_window()->set_layer_interval(2);
  out = Emit("megatron", ds);
  for (const char* arg : {"--moe-layer-freq '[0,1]*18' \\\n", "--window-size '128,0' \\\n",
                          "--window-attn-skip-freq '[1,0]*18' \\\n"}) {
    EXPECT_NE(out.find(arg), std::string::npos) << arg << "\n" << out;
  }
  for (const std::string& flag : EmittedFlags(out)) EXPECT_TRUE(known.contains(flag)) << flag << "\n" << out;
  // Under context parallelism Transformer Engine cannot ring a windowed layer: each
  // layer's exchange is stated, as estimated — all-to-all where the heads a TP rank holds
  // (MLA: 32 / 2) split over the CP ranks, else all-gather (8 K/V heads / 2 over 8).
  ds.config.set_context_parallel(1);
  EXPECT_FALSE(absl::StrContains(Emit("megatron", ds), "--cp-comm-type"));  // nothing to exchange
  ds.config.set_context_parallel(2);
  out = Emit("megatron", ds);
  std::string a2a = "--cp-comm-type a2a", gather = "model.cp_comm_type=[all_gather";
  for (int i = 1; i < 36; ++i) {
    absl::StrAppend(&a2a, i % 2 == 0 ? " a2a" : " p2p");
    absl::StrAppend(&gather, i % 2 == 0 ? ",all_gather" : ",p2p");
  }
  EXPECT_NE(out.find(a2a + " \\\n"), std::string::npos) << out;
  for (const std::string& flag : EmittedFlags(out)) EXPECT_TRUE(known.contains(flag)) << flag << "\n" << out;
  ds.workload.mutable_transformer()->clear_mla();
  ds.config.set_context_parallel(8);
  EXPECT_TRUE(absl::StrContains(Emit("megatron-bridge", ds), gather + "]")) << Emit("megatron-bridge", ds);
  // Every MoE layer, no window: nothing to state.
  out = Emit("megatron", MoeFp8());
  EXPECT_EQ(out.find("--moe-layer-freq"), std::string::npos) << out;
  EXPECT_EQ(out.find("--window-size"), std::string::npos) << out;
  // Megatron-Bridge: the pattern as a list of the ConfigContainer's fields.
  const std::string bridge = Emit("megatron-bridge", DeepSeekStyle());
  EXPECT_TRUE(absl::StrContains(bridge, "'model.moe_layer_freq=[0,0,0,1,1,")) << bridge;
  EXPECT_TRUE(absl::StrContains(bridge, "model.moe_shared_expert_intermediate_size=2048")) << bridge;
  EXPECT_TRUE(absl::StrContains(bridge, "model.mtp_num_layers=1")) << bridge;
  EXPECT_TRUE(absl::StrContains(bridge, "model.moe_router_num_groups=8")) << bridge;
  EXPECT_TRUE(absl::StrContains(bridge, "model.moe_router_group_topk=4")) << bridge;
  EXPECT_TRUE(absl::StrContains(bridge, "optimizer.use_precision_aware_optimizer=true")) << bridge;
  EXPECT_TRUE(absl::StrContains(bridge, "optimizer.exp_avg_sq_dtype=bf16")) << bridge;
  EXPECT_TRUE(absl::StrContains(Emit("torchtitan", DeepSeekStyle()), "moments in fp32"));
  EXPECT_TRUE(absl::StrContains(Emit("nemo", DeepSeekStyle()), "moments in fp32"));
  EXPECT_TRUE(absl::StrContains(Emit("nemo", DeepSeekStyle()), "moe_router_num_groups=8"));
  EXPECT_TRUE(absl::StrContains(Emit("torchtitan", DeepSeekStyle()), "routed within 4 of 8 expert groups"));
  EXPECT_TRUE(absl::StrContains(Emit("nemo", DeepSeekStyle()), "no multi-token prediction"));
  // MLA's latent norms are Megatron-Core's qk_layernorm (gpt_layer_specs.py).
  EXPECT_NE(Emit("megatron", DeepSeekStyle()).find("--qk-layernorm \\\n"), std::string::npos);
  EXPECT_TRUE(absl::StrContains(bridge, "model.qk_layernorm=true")) << bridge;
}

// Query / key norms (Qwen3) reach every launcher that can build them, and the others say so.
TEST(Launcher, QueryKeyNormsAreStated) {
  LaunchInput in = LlamaZero3();
  std::string out = Emit("megatron", in);
  EXPECT_EQ(out.find("--qk-layernorm"), std::string::npos) << out;
  in.workload.mutable_transformer()->set_qk_layernorm(true);
  out = Emit("megatron", in);
  EXPECT_NE(out.find("--qk-layernorm \\\n"), std::string::npos) << out;
  EXPECT_TRUE(absl::StrContains(Emit("megatron-bridge", in), "model.qk_layernorm=true"));
  EXPECT_TRUE(absl::StrContains(Emit("nemo", in), "no query / key norms"));
  EXPECT_TRUE(absl::StrContains(Emit("deepspeed", in), "no query / key norms"));
}

TEST(Launcher, LayerPatternExpressions) {
  using launcher::LayerPatternExpression;
  EXPECT_EQ(LayerPatternExpression({1, 1, 1, 1}), "[1]*4");
  EXPECT_EQ(LayerPatternExpression({0, 0, 0, 1, 1, 1, 1, 1}), "[0]*3+[1]*5");
  EXPECT_EQ(LayerPatternExpression({0, 0, 1, 1, 1}), "[0,0,1,1,1]");  // as short as "[0]*2+[1]*3"
  EXPECT_EQ(LayerPatternExpression({0, 1, 0, 1}), "[0,1]*2");
  EXPECT_EQ(LayerPatternExpression({1, 0, 1}), "[1,0,1]");  // no period fits
  EXPECT_EQ(LayerPatternExpression({0, 0, 0, 1, 0, 1}), "[0,0,0,1,0,1]");  // the plain list is shortest
}

TEST(Launcher, UnknownFrameworkListsTheValidOnes) {
  absl::StatusOr<std::string> s = LauncherArguments("jax", MoeFp8());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message(),
            "--emit: unknown framework \"jax\"; valid: megatron, megatron-bridge, nemo, deepspeed, torchtitan");
  EXPECT_TRUE(IsLauncher("nemo"));
  EXPECT_FALSE(IsLauncher("Nemo"));
}

TEST(Launcher, LayerGraphsAndCnnSplitsAreRefused) {
  LaunchInput cnn;
  cnn.workload.set_name("resnet");
  cnn.workload.mutable_layer_graph()->add_sample_shape(3);
  absl::StatusOr<std::string> s = LauncherArguments("megatron", cnn);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("\"resnet\" is a layer graph"), std::string::npos) << s.status();
  LaunchInput spatial = MoeFp8();
  spatial.config.set_spatial_parallel(2);
  s = LauncherArguments("torchtitan", spatial);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace paraplan::cli
