// `plan --emit`: the launcher arguments of the best plan for Megatron-LM, NeMo,
// DeepSpeed and torchtitan, through the real CLI against the shared server
// (cli_harness.h).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_harness.h"

namespace paraplan::cli_test {
namespace {

// ---------------------------------------------------------------------------------------
// plan --emit: launcher arguments of the best plan, for a search pinned down to one
// configuration (what the planner still chooses, overlap of the parameter gather and the
// rank order, is decided by its deterministic ranking). `planned`, when given, is the
// --framework the plan is searched for (else the launcher's own).

std::vector<std::string> Gpt3PinnedPlan(const std::string& framework, const std::string& planned = "") {
  std::vector<std::string> args = {"plan", "--profile", "dgx-a100-80gb@1", "--model", "gpt3-175b", "--gpus", "1024",
                                   "--global-batch", "1536", "--tp", "8", "--pp", "8", "--dp", "16", "--cp", "1",
                                   "--mbs", "1", "--vpp", "3", "--zero", "1", "--recompute", "selective", "--sp", "on",
                                   "--overlap-grad-reduce", "on", "--emit", framework};
  if (!planned.empty()) args.insert(args.end(), {"--framework", planned});
  return args;
}

constexpr char kGpt3Header[] =
    "1024 GPUs (128 nodes x 8)\n"
    "# plan: TP8 PP8 DP16 CP1 EP1, schedule interleaved 1f1b v3, micro-batch 1, global batch 1536, recompute "
    "selective, sequence parallel, ZeRO-1, bf16\n";

TEST_F(ServerTest, PlanEmitMegatron) {
  const Result r = P(Gpt3PinnedPlan("megatron"));
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, absl::StrCat("# Megatron-LM pretrain_gpt.py arguments for gpt3-175b on dgx-a100-80gb@1: ",
                                kGpt3Header,
                                "torchrun --nproc_per_node 8 --nnodes 128 pretrain_gpt.py \\\n"
                                "    --tensor-model-parallel-size 8 \\\n"
                                "    --pipeline-model-parallel-size 8 \\\n"
                                "    --num-layers-per-virtual-pipeline-stage 4 \\\n"
                                "    --context-parallel-size 1 \\\n"
                                "    --expert-model-parallel-size 1 \\\n"
                                "    --sequence-parallel \\\n"
                                "    --micro-batch-size 1 \\\n"
                                "    --global-batch-size 1536 \\\n"
                                "    --recompute-granularity selective \\\n"
                                "    --use-distributed-optimizer \\\n"
                                "    --overlap-grad-reduce \\\n"
                                "    --overlap-param-gather \\\n"
                                "    --attention-dropout 0.1 \\\n"
                                "    --hidden-dropout 0.1 \\\n"
                                "    --num-layers 96 \\\n"
                                "    --hidden-size 12288 \\\n"
                                "    --ffn-hidden-size 49152 \\\n"
                                "    --num-attention-heads 96 \\\n"
                                "    --seq-length 2048 \\\n"
                                "    --max-position-embeddings 2048 \\\n"
                                "    --bf16\n"));
}

TEST_F(ServerTest, PlanEmitNemo) {
  const Result r = P(Gpt3PinnedPlan("nemo"));
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, absl::StrCat("# NeMo megatron_gpt_pretraining.py (Hydra overrides of megatron_gpt_config.yaml) "
                                "for gpt3-175b on dgx-a100-80gb@1: ",
                                kGpt3Header,
                                "python examples/nlp/language_modeling/megatron_gpt_pretraining.py \\\n"
                                "    trainer.devices=8 \\\n"
                                "    trainer.num_nodes=128 \\\n"
                                "    trainer.precision=bf16-mixed \\\n"
                                "    model.micro_batch_size=1 \\\n"
                                "    model.global_batch_size=1536 \\\n"
                                "    model.tensor_model_parallel_size=8 \\\n"
                                "    model.pipeline_model_parallel_size=8 \\\n"
                                "    model.virtual_pipeline_model_parallel_size=3 \\\n"
                                "    +model.context_parallel_size=1 \\\n"
                                "    model.expert_model_parallel_size=1 \\\n"
                                "    model.sequence_parallel=true \\\n"
                                "    model.activations_checkpoint_granularity=selective \\\n"
                                "    model.activations_checkpoint_method=null \\\n"
                                "    model.activations_checkpoint_num_layers=null \\\n"
                                "    model.encoder_seq_length=2048 \\\n"
                                "    model.max_position_embeddings=2048 \\\n"
                                "    model.num_layers=96 \\\n"
                                "    model.hidden_size=12288 \\\n"
                                "    model.ffn_hidden_size=49152 \\\n"
                                "    model.num_attention_heads=96 \\\n"
                                "    model.share_embeddings_and_output_weights=true \\\n"
                                "    model.optim.name=distributed_fused_adam \\\n"
                                "    +model.optim.overlap_grad_sync=true \\\n"
                                "    +model.optim.overlap_param_sync=true\n"));
}

// DeepSpeed runs no interleaved schedule: the pinned plan is searched for any framework
// (--framework any) and what DeepSpeed cannot express becomes notes.
TEST_F(ServerTest, PlanEmitDeepSpeed) {
  const Result r = P(Gpt3PinnedPlan("deepspeed", "any"));
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, absl::StrCat("# DeepSpeed ds_config.json and Megatron-DeepSpeed pretrain_gpt.py arguments for "
                                "gpt3-175b on dgx-a100-80gb@1: ",
                                kGpt3Header,
                                "# note: DeepSpeed's pipeline engine has no interleaved 1f1b schedule; it runs 1F1B\n"
                                "cat > ds_config.json <<'EOF'\n"
                                "{\n"
                                "  \"train_batch_size\": 1536,\n"
                                "  \"train_micro_batch_size_per_gpu\": 1,\n"
                                "  \"gradient_accumulation_steps\": 96,\n"
                                "  \"zero_optimization\": {\n"
                                "    \"stage\": 1,\n"
                                "    \"overlap_comm\": true\n"
                                "  },\n"
                                "  \"activation_checkpointing\": {\"partition_activations\": false, "
                                "\"cpu_checkpointing\": false},\n"
                                "  \"bf16\": {\"enabled\": true},\n"
                                "  \"fp16\": {\"enabled\": false}\n"
                                "}\n"
                                "EOF\n"
                                "torchrun --nproc_per_node 8 --nnodes 128 pretrain_gpt.py \\\n"
                                "    --tensor-model-parallel-size 8 \\\n"
                                "    --pipeline-model-parallel-size 8 \\\n"
                                "    --sequence-parallel \\\n"
                                "    --micro-batch-size 1 \\\n"
                                "    --global-batch-size 1536 \\\n"
                                "    --attention-dropout 0.1 \\\n"
                                "    --hidden-dropout 0.1 \\\n"
                                "    --num-layers 96 \\\n"
                                "    --hidden-size 12288 \\\n"
                                "    --ffn-hidden-size 49152 \\\n"
                                "    --num-attention-heads 96 \\\n"
                                "    --seq-length 2048 \\\n"
                                "    --max-position-embeddings 2048 \\\n"
                                "    --recompute-granularity selective \\\n"
                                "    --bf16 \\\n"
                                "    --zero-stage=1 \\\n"
                                "    --deepspeed \\\n"
                                "    --deepspeed_config=ds_config.json\n"));
}

// torchtitan runs no ZeRO-1: as above.
TEST_F(ServerTest, PlanEmitTorchtitan) {
  const Result r = P(Gpt3PinnedPlan("torchtitan", "any"));
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, absl::StrCat("# torchtitan command line (overrides of a config function) for gpt3-175b on "
                                "dgx-a100-80gb@1: ",
                                kGpt3Header,
                                "# note: --module / --config: torchtitan ships no config function for gpt3-175b; name yours (e.g. in torchtitan_recipes/), building 96 layers, hidden 12288, 96 heads (96 K/V), FFN 49152, vocabulary 51200; the flags below override its parallelism and batch\n"
                                "# note: torchtitan has no ZeRO-1: data parallelism is replicated (DDP), optimizer states unsharded (more memory than planned)\n"
                                "torchrun --nproc_per_node 8 --nnodes 128 -m torchtitan.train \\\n"
                                "    --module YOUR_MODULE \\\n"
                                "    --config YOUR_CONFIG \\\n"
                                "    --parallelism.data_parallel_replicate_degree 16 \\\n"
                                "    --parallelism.data_parallel_shard_degree 1 \\\n"
                                "    --parallelism.tensor_parallel_degree 8 \\\n"
                                "    --parallelism.enable_sequence_parallel \\\n"
                                "    --parallelism.pipeline_parallel_degree 8 \\\n"
                                "    --parallelism.pipeline_parallel_schedule Interleaved1F1B \\\n"
                                "    --parallelism.pipeline_parallel_layers_per_stage 4 \\\n"
                                "    --parallelism.num_pp_microbatches 96 \\\n"
                                "    --parallelism.context_parallel_degree 1 \\\n"
                                "    --training.num_tokens_per_microbatch_per_dp_rank 2048 \\\n"
                                "    --training.num_tokens_per_train_step 3145728 \\\n"
                                "    --training.max_context_length 2048 \\\n"
                                "    --training.mixed_precision_param bfloat16 \\\n"
                                "    activation-checkpoint:selective\n"));
}

// A small plan of a GQA / SwiGLU model: full recompute, ZeRO-3, TP overlap, and the rank
// order the planner prefers here (data parallel inside the node: FSDP's gathers on NVLink,
// the pipeline's sends across nodes; its collectives cost the work beside them a share).
TEST_F(ServerTest, PlanEmitLlamaFullRecomputeZero3) {
  const std::vector<std::string> plan = {
      "plan", "--profile", "dgx-h100-80gb@1", "--model", "llama3-8b", "--gpus", "16", "--global-batch", "64",
      "--tp", "2", "--pp", "2", "--dp", "4", "--cp", "1", "--mbs", "1", "--vpp", "1", "--zero", "3", "--recompute",
      "full", "--sp", "on", "--flash", "on", "--overlap-grad-reduce", "on", "--schedule", "1f1b", "--tp-comm-overlap"};
  const std::string header =
      "for llama3-8b on dgx-h100-80gb@1: 16 GPUs (2 nodes x 8)\n"
      "# plan: TP2 PP2 DP4 CP1 EP1, schedule 1f1b, micro-batch 1, global batch 64, recompute full, sequence "
      "parallel, ZeRO-3, bf16\n";
  std::vector<std::string> args = plan;
  args.insert(args.end(), {"--emit", "megatron"});
  Result r = P(args);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, absl::StrCat("# Megatron-LM pretrain_gpt.py arguments ", header,
                                "# note: Megatron-FSDP needs CUDA_DEVICE_MAX_CONNECTIONS unset or above 1 (validate_args "
                                "refuses 1)\n"
                                "# note: rotary position embeddings and linears without bias, as RMSNorm models (Llama, "
                                "Mixtral, Qwen, DeepSeek) have them: the workload does not state either; check the "
                                "model's own (rope base, attention bias)\n"
                                "torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py \\\n"
                                "    --tensor-model-parallel-size 2 \\\n"
                                "    --pipeline-model-parallel-size 2 \\\n"
                                "    --context-parallel-size 1 \\\n"
                                "    --expert-model-parallel-size 1 \\\n"
                                "    --decoder-first-pipeline-num-layers 17 \\\n"
                                "    --decoder-last-pipeline-num-layers 15 \\\n"
                                "    --sequence-parallel \\\n"
                                "    --tp-comm-overlap \\\n"
                                "    --micro-batch-size 1 \\\n"
                                "    --global-batch-size 64 \\\n"
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
                                "    --normalization RMSNorm \\\n"
                                "    --position-embedding-type rope \\\n"
                                "    --disable-bias-linear \\\n"
                                "    --attention-dropout 0 \\\n"
                                "    --hidden-dropout 0 \\\n"
                                "    --num-layers 32 \\\n"
                                "    --hidden-size 4096 \\\n"
                                "    --ffn-hidden-size 14336 \\\n"
                                "    --num-attention-heads 32 \\\n"
                                "    --group-query-attention \\\n"
                                "    --num-query-groups 8 \\\n"
                                "    --swiglu \\\n"
                                "    --seq-length 8192 \\\n"
                                "    --max-position-embeddings 8192 \\\n"
                                "    --untie-embeddings-and-output-weights \\\n"
                                "    --bf16\n"));
  args = plan;
  args.insert(args.end(), {"--emit", "torchtitan"});
  r = P(args);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, absl::StrCat("# torchtitan command line (overrides of a config function) ", header,
                                "# note: --module llama3 --config llama3_8b: torchtitan's config function for 32 layers, hidden 4096, 32 heads (8 K/V), FFN 14336, vocabulary 128256; the flags below override its parallelism and batch\n"
                                "torchrun --nproc_per_node 8 --nnodes 2 -m torchtitan.train \\\n"
                                "    --module llama3 \\\n"
                                "    --config llama3_8b \\\n"
                                "    --parallelism.data_parallel_replicate_degree 1 \\\n"
                                "    --parallelism.data_parallel_shard_degree 4 \\\n"
                                "    --parallelism.tensor_parallel_degree 2 \\\n"
                                "    --parallelism.enable_sequence_parallel \\\n"
                                "    --parallelism.pipeline_parallel_degree 2 \\\n"
                                "    --parallelism.pipeline_parallel_schedule 1F1B \\\n"
                                "    --parallelism.num_pp_microbatches 16 \\\n"
                                "    --parallelism.context_parallel_degree 1 \\\n"
                                "    --training.num_tokens_per_microbatch_per_dp_rank 8192 \\\n"
                                "    --training.num_tokens_per_train_step 524288 \\\n"
                                "    --training.max_context_length 8192 \\\n"
                                "    --training.mixed_precision_param bfloat16 \\\n"
                                "    --compile.enable \\\n"
                                "    --compile.enable_async_tensor_parallel \\\n"
                                "    activation-checkpoint:full\n"));
}

// The same plan under the distributed optimizer (one gradient reduction an iteration,
// pipeline sends every micro-batch): pipeline inside data parallel, which Megatron-LM
// states with --use-tp-pp-dp-mapping and torchtitan cannot place.
TEST_F(ServerTest, PlanEmitPipelineInsideDataParallel) {
  const std::vector<std::string> plan = {
      "plan", "--profile", "dgx-h100-80gb@1", "--model", "llama3-8b", "--gpus", "16", "--global-batch", "64",
      "--tp", "2", "--pp", "2", "--dp", "4", "--cp", "1", "--mbs", "1", "--vpp", "1", "--zero", "1", "--recompute",
      "full", "--sp", "on", "--flash", "on", "--overlap-grad-reduce", "on", "--schedule", "1f1b", "--tp-comm-overlap"};
  std::vector<std::string> args = plan;
  args.insert(args.end(), {"--emit", "megatron"});
  Result r = P(args);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_NE(r.out.find("    --use-tp-pp-dp-mapping \\\n"), std::string::npos) << r.out;
  args = plan;
  args.insert(args.end(), {"--emit", "torchtitan", "--framework", "any"});  // torchtitan runs no ZeRO-1
  r = P(args);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_NE(r.out.find("# note: torchtitan places pipeline stages outermost (tp-cp-dp-pp); the planned order "
                       "tp-cp-ep-pp-dp is not available\n"),
            std::string::npos)
      << r.out;
}

// Planned under NeMo, whose performance recipes keep and reduce gradients in 16 bits and
// fuse the cross-entropy (the estimate's defaults there), the plan runs as estimated
// elsewhere too: Megatron-LM gets --grad-reduce-in-bf16 (bf16 otherwise upgrades them to
// fp32) and --cross-entropy-loss-fusion, Megatron-Bridge a note naming the two recipe
// fields (its providers fuse the loss already); planned without a framework, neither.
TEST_F(ServerTest, PlanEmitSixteenBitGradients) {
  const std::vector<std::string> plan = {"plan", "--profile", "dgx-h100-80gb@1", "--model", "llama3-8b", "--gpus",
                                         "8", "--global-batch", "64", "--tp", "1", "--pp", "1", "--dp", "8",
                                         "--mbs", "1", "--zero", "1"};
  auto emit = [&](const std::string& framework, const std::string& launcher) {
    std::vector<std::string> args = plan;
    if (!framework.empty()) args.insert(args.end(), {"--framework", framework});
    args.insert(args.end(), {"--emit", launcher});
    Result r = P(args);
    EXPECT_EQ(r.code, 0) << Describe(r);
    return r.out;
  };
  EXPECT_TRUE(Contains(emit("nemo", "megatron"), "    --grad-reduce-in-bf16"));
  EXPECT_FALSE(Contains(emit("", "megatron"), "--grad-reduce-in-bf16"));
  EXPECT_TRUE(Contains(emit("nemo", "megatron"), "    --cross-entropy-loss-fusion"));
  EXPECT_FALSE(Contains(emit("", "megatron"), "--cross-entropy-loss-fusion"));
  EXPECT_TRUE(Contains(emit("nemo", "nemo"), "    +model.cross_entropy_loss_fusion=true"));
  EXPECT_FALSE(Contains(emit("", "nemo"), "cross_entropy_loss_fusion"));
  EXPECT_TRUE(Contains(emit("nemo", "megatron-bridge"),
                       "cfg.mixed_precision.grad_reduce_in_fp32 = cfg.ddp.grad_reduce_in_fp32 = False"));
  EXPECT_FALSE(Contains(emit("megatron", "megatron-bridge"), "grad_reduce_in_fp32"));
}

// Unless --framework says otherwise, --emit plans only what the launcher's framework runs:
// Llama 3 8B on 16 H100s is fastest under ZeRO-2 (Megatron-FSDP's optim_grads), which
// torchtitan does not run, and the interleaved GPT-3 plan pinned above is nothing DeepSpeed
// runs (exit 1, saying why).
TEST_F(ServerTest, PlanEmitPlansWhatTheLauncherRuns) {
  const std::vector<std::string> plan = {"plan", "--profile", "dgx-h100-80gb@1", "--model", "llama3-8b",
                                         "--gpus", "16", "--global-batch", "64"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = plan;
    args.insert(args.end(), extra.begin(), extra.end());
    return P(args);
  };
  // Searched for any framework (as before --emit implied one), the best is ZeRO-2, noted.
  Result r = with({"--emit", "torchtitan", "--framework", "any"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, ", ZeRO-2, ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "# note: torchtitan has no ZeRO-2")) << r.out;
  r = with({"--emit", "torchtitan"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, "# torchtitan command line")) << Describe(r);
  EXPECT_FALSE(Contains(r.out, "ZeRO-2")) << r.out;
  // Megatron-LM runs that ZeRO-2.
  r = with({"--emit", "megatron"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.out, ", ZeRO-2, ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "--data-parallel-sharding-strategy optim_grads \\\n")) << r.out;

  r = P(Gpt3PinnedPlan("deepspeed"));
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "FRAMEWORK_DEEPSPEED runs none of the configurations that fit (the first, TP8 PP8 "
                              "DP16 v3 mbs1"))
      << Describe(r);
  EXPECT_TRUE(Contains(r.err, "virtual_pipeline_stages no interleaved schedule")) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "(--emit deepspeed plans only what that launcher's framework runs; --framework "
                              "overrides)"))
      << Describe(r);
}

TEST_F(ServerTest, PlanEmitErrors) {
  // An unknown framework is a usage error naming the valid ones; nothing is asked of the server.
  Result r = RunCli({"--server", absl::StrCat("127.0.0.1:", FreePort()), "plan", "--profile", "dgx-a100-80gb",
                     "--model", "gpt3-175b", "--gpus", "8", "--global-batch", "8", "--emit", "jax"});
  EXPECT_EQ(r.code, 2) << Describe(r);
  EXPECT_TRUE(Contains(r.err,
                       "--emit: unknown framework \"jax\"; valid: megatron, megatron-bridge, nemo, deepspeed, torchtitan"))
      << Describe(r);
  // No plan fits: exit 1, the reason, nothing on stdout.
  r = P({"plan", "--profile", "abci-v100-16gb", "--model", "gpt3-175b", "--gpus", "8", "--global-batch", "8", "--emit",
         "megatron"});
  EXPECT_EQ(r.code, 1) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "no plan fits") && Contains(r.err, "nothing to --emit")) << Describe(r);
  EXPECT_EQ(r.out, "");
  // A CNN has no launcher.
  if (!g_paths.examples.empty()) {
    r = P({"plan", "--profile", "abci-v100-16gb", "--workload", g_paths.examples + "/cnn-small.json", "--gpus", "16",
           "--global-batch", "16", "--emit", "torchtitan"});
    EXPECT_EQ(r.code, 1) << Describe(r);
    EXPECT_TRUE(Contains(r.err, "is a layer graph (CNN)")) << Describe(r);
  }
}

// ---------------------------------------------------------------------------------------
// plan --report: the HTML page of a real plan.

}  // namespace
}  // namespace paraplan::cli_test
