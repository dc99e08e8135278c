// Unit tests of the CLI's plain-C++ outputs: launcher arguments (client/launcher*.cc),
// the report page (report/report.cc) and its SVG charts and escaping. Inputs are built
// by hand; expected texts are written out in full.
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "client/launcher.h"
#include "client/launcher_plan.h"
#include "gtest/gtest.h"
#include "report/html_escape.h"
#include "report/report.h"
#include "report/svg_chart.h"

namespace paraplan::cli {
namespace {

int Count(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

// Mixtral-like MoE on 4 nodes of 8: TP2 PP2 DP8 CP2 EP4, FP8, full recompute, ZeRO-3,
// offloaded optimizer, CUDA graphs, TP overlap.
LaunchInput MoeFp8() {
  LaunchInput in;
  v1::TransformerSpec* t = in.workload.mutable_transformer();
  in.workload.set_name("moe-test");
  t->set_num_layers(32);
  t->set_hidden_size(4096);
  t->set_num_attention_heads(32);
  t->set_num_kv_heads(8);
  t->set_ffn_hidden_size(14336);
  t->set_seq_length(4096);
  t->set_vocab_size(32000);
  t->set_gated_mlp(true);
  t->mutable_moe()->set_num_experts(8);
  t->mutable_moe()->set_top_k(2);
  in.workload.set_precision(v1::PRECISION_FP8);
  v1::ParallelConfig& c = in.config;
  c.set_tensor_parallel(2);
  c.set_pipeline_parallel(2);
  c.set_data_parallel(8);
  c.set_context_parallel(2);
  c.set_expert_parallel(4);
  c.set_micro_batch_size(2);
  c.set_global_batch_size(256);
  c.set_recompute(v1::RECOMPUTE_FULL);
  c.set_zero_stage(3);
  c.set_sequence_parallel(true);
  c.set_overlap_grad_reduce(true);
  c.set_overlap_param_gather(true);
  c.mutable_offload()->set_optimizer(true);
  c.set_cuda_graphs(true);
  c.set_tp_comm_overlap(true);
  in.num_gpus = 64;
  in.gpus_per_node = 8;
  in.profile = "lab@3";
  return in;
}

// A small dense model in fp16 on 12 GPUs of nodes of 8: TP2 PP2 (GPipe) DP3, ZeRO-2,
// no recompute, tied embeddings, offloaded weights and activations, ffn and kv heads left 0.
LaunchInput DenseFp16() {
  LaunchInput in;
  v1::TransformerSpec* t = in.workload.mutable_transformer();
  in.workload.set_name("dense-test");
  t->set_num_layers(24);
  t->set_hidden_size(2048);
  t->set_num_attention_heads(16);
  t->set_seq_length(2048);
  t->set_tied_embeddings(true);
  in.workload.set_precision(v1::PRECISION_FP16);
  v1::ParallelConfig& c = in.config;
  c.set_tensor_parallel(2);
  c.set_pipeline_parallel(2);
  c.set_data_parallel(3);
  c.set_micro_batch_size(4);
  c.set_global_batch_size(96);
  c.set_zero_stage(2);
  c.set_pipeline_schedule(v1::SCHEDULE_GPIPE);
  c.mutable_offload()->set_weights(true);
  c.mutable_offload()->set_activations(true);
  in.gpus_per_node = 8;
  return in;
}

std::string Emit(const char* framework, const LaunchInput& in) {
  absl::StatusOr<std::string> s = LauncherArguments(framework, in);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : "";
}

LaunchInput Gpt3();           // GPT-3 175B, TP8 PP8 DP16 (below)
LaunchInput DeepSeekStyle();  // MLA, shared experts, dense first layers (below)

TEST(Launcher, MegatronMoeFp8) {
  EXPECT_EQ(Emit("megatron", MoeFp8()),
            "# Megatron-LM pretrain_gpt.py arguments for moe-test on lab@3: 64 GPUs (8 nodes x 8)\n"
            "# plan: TP2 PP2 DP8 CP2 EP4, schedule 1f1b, micro-batch 2, global batch 256, recompute full, sequence "
            "parallel, ZeRO-3, fp8\n"
            "# note: Megatron-FSDP needs CUDA_DEVICE_MAX_CONNECTIONS unset or above 1 (validate_args refuses 1)\n"
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
            "    --enable-cuda-graph \\\n"
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

TEST(Launcher, NemoDenseFp16) {
  EXPECT_EQ(Emit("nemo", DenseFp16()),
            "# NeMo megatron_gpt_pretraining.py (Hydra overrides of megatron_gpt_config.yaml) for dense-test: 12 GPUs (2 nodes x 8)\n"
            "# plan: TP2 PP2 DP3 CP1 EP1, schedule gpipe, micro-batch 4, global batch 96, recompute none, ZeRO-2, fp16\n"
            "# note: NeMo has no gpipe schedule; it runs 1F1B\n"
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
  EXPECT_NE(out.find("# note: Megatron-LM has no ZeRO-2"), std::string::npos) << out;
  EXPECT_NE(out.find("    --use-distributed-optimizer \\\n"), std::string::npos) << out;
  EXPECT_NE(out.find("    --fp16\n"), std::string::npos) << out;
  EXPECT_NE(out.find("# note: weight / activation offload is not emitted"), std::string::npos) << out;
  EXPECT_NE(out.find("10 GPUs (2 nodes x 8)"), std::string::npos) << out;
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
                          "    --moe-enable-deepep \\\n", "    --overlap-moe-expert-parallel-comm \\\n",
                          "    --recompute-granularity selective \\\n",
                          "    --recompute-modules layernorm moe_act \\\n",
                          "    --decoder-first-pipeline-num-layers 15 \\\n",
                          "    --decoder-last-pipeline-num-layers 15 \\\n", "    --cpu-offloading-num-layers 1 \\\n",
                          "    --fp8-param-gather \\\n", "    --fp8-recipe mxfp8"}) {
    EXPECT_NE(out.find(arg), std::string::npos) << arg << "\n" << out;
  }
}

// Megatron-LM's flags at the commit tests/launchers/megatron_lm_flags.txt names.
std::set<std::string> MegatronFlags() {
  std::ifstream in(PARAPLAN_MEGATRON_FLAGS);
  std::set<std::string> flags;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') flags.insert(line);
  }
  return flags;
}

// The flags of the torchrun command line an emitted text ends with.
std::vector<std::string> EmittedFlags(const std::string& text) {
  std::vector<std::string> out;
  const size_t run = text.find("torchrun ");
  for (absl::string_view word :
       absl::StrSplit(text.substr(run == std::string::npos ? 0 : run), absl::ByAnyChar(" \n"), absl::SkipEmpty())) {
    if (absl::StartsWith(word, "--") && word != "--nproc_per_node" && word != "--nnodes") out.emplace_back(word);
  }
  return out;
}

// A Llama-like dense model (RMSNorm, SwiGLU, GQA, no dropout) under ZeRO-3 with CPU
// offload of layers, and a folded MoE: every flag paraplan emits is one Megatron-LM's
// parser defines (the extracted list, NVIDIA/Megatron-LM at a pinned commit), and the
// model's shape is stated.
LaunchInput LlamaZero3() {
  LaunchInput in;
  v1::TransformerSpec* t = in.workload.mutable_transformer();
  in.workload.set_name("llama-test");
  t->set_num_layers(80);
  t->set_hidden_size(8192);
  t->set_num_attention_heads(64);
  t->set_num_kv_heads(8);
  t->set_ffn_hidden_size(28672);
  t->set_seq_length(8192);
  t->set_vocab_size(128256);
  t->set_gated_mlp(true);
  t->set_normalization(v1::NORMALIZATION_RMSNORM);
  t->set_dropout(0);
  in.workload.set_precision(v1::PRECISION_BF16);
  v1::ParallelConfig& c = in.config;
  c.set_tensor_parallel(8);
  c.set_data_parallel(16);
  c.set_micro_batch_size(1);
  c.set_global_batch_size(128);
  c.set_zero_stage(3);
  c.set_sequence_parallel(true);
  c.set_overlap_grad_reduce(true);
  c.set_overlap_param_gather(true);
  c.set_cpu_offload_layers(2);
  in.num_gpus = 128;
  in.gpus_per_node = 8;
  return in;
}

TEST(Launcher, MegatronEmitsOnlyMegatronLmFlags) {
  const std::set<std::string> known = MegatronFlags();
  ASSERT_GT(known.size(), 500u) << "read " << PARAPLAN_MEGATRON_FLAGS;
  LaunchInput folded = MoeFp8();
  folded.config.set_expert_tensor_parallel(1);
  folded.config.set_moe_dispatcher(v1::MOE_DISPATCHER_DEEPEP);
  folded.config.set_moe_a2a_overlap(true);
  folded.config.set_zero_stage(1);
  folded.config.add_offload_modules("expert_fc1");
  folded.config.add_offload_modules("moe_act");
  for (const LaunchInput& in : {MoeFp8(), DenseFp16(), LlamaZero3(), folded, Gpt3(), DeepSeekStyle()}) {
    const std::string text = Emit("megatron", in);
    for (const std::string& flag : EmittedFlags(text)) {
      EXPECT_TRUE(known.contains(flag)) << flag << " is not a Megatron-LM flag\n" << text;
    }
  }
  // The all-to-all overlap as Megatron-Core pairs it, and what its launch needs.
  EXPECT_TRUE(absl::StrContains(Emit("megatron", folded),
                                "--overlap-moe-expert-parallel-comm \\\n    --delay-wgrad-compute"))
      << Emit("megatron", folded);
  EXPECT_TRUE(absl::StrContains(Emit("megatron", folded), "needs CUDA_DEVICE_MAX_CONNECTIONS above 1"));
  EXPECT_TRUE(absl::StrContains(Emit("megatron-bridge", folded), "model.delay_wgrad_compute=true"));
  EXPECT_TRUE(absl::StrContains(Emit("nemo", folded), "+model.delay_wgrad_compute=true"));
  EXPECT_TRUE(absl::StrContains(Emit("megatron", folded),
                                "--fine-grained-activation-offloading \\\n    --offload-modules expert_fc1 moe_act \\\n"))
      << Emit("megatron", folded);
  const std::string llama = Emit("megatron", LlamaZero3());
  for (const char* shape : {"--normalization RMSNorm", "--position-embedding-type rope", "--disable-bias-linear",
                            "--swiglu", "--group-query-attention", "--num-query-groups 8", "--attention-dropout 0",
                            "--hidden-dropout 0", "--untie-embeddings-and-output-weights"}) {
    EXPECT_NE(llama.find(shape), std::string::npos) << shape << "\n" << llama;
  }
  // ZeRO-3 as Megatron-FSDP with what validate_args requires of it.
  for (const char* fsdp : {"--use-megatron-fsdp", "--data-parallel-sharding-strategy optim_grads_params",
                           "--use-distributed-optimizer", "--no-gradient-accumulation-fusion",
                           "--ckpt-format fsdp_dtensor", "--overlap-param-gather", "--cpu-offloading-num-layers 2"}) {
    EXPECT_NE(llama.find(fsdp), std::string::npos) << fsdp << "\n" << llama;
  }
  EXPECT_EQ(llama.find("--use-torch-fsdp2"), std::string::npos) << llama;
}

// Megatron-DeepSpeed's flags and DeepSpeed's config keys at the commits
// tests/launchers/deepspeed_names.txt names: "flag --x" and "key x" lines.
std::set<std::string> DeepSpeedNames(const std::string& kind) {
  std::ifstream in(PARAPLAN_DEEPSPEED_NAMES);
  std::set<std::string> names;
  for (std::string line; std::getline(in, line);) {
    if (absl::StartsWith(line, kind + " ")) names.insert(line.substr(kind.size() + 1));
  }
  return names;
}

// Every flag of the emitted Megatron-DeepSpeed command line is one its parser (or
// DeepSpeed's add_config_arguments) defines, and every key of the emitted ds_config.json
// is one DeepSpeed reads; the model's shape is stated in DeepSpeed's names.
TEST(Launcher, DeepSpeedEmitsOnlyNamesDeepSpeedDefines) {
  const std::set<std::string> flags = DeepSpeedNames("flag"), keys = DeepSpeedNames("key");
  ASSERT_GT(flags.size(), 200u) << "read " << PARAPLAN_DEEPSPEED_NAMES;
  ASSERT_GT(keys.size(), 100u);
  LaunchInput llama = LlamaZero3();
  llama.config.set_cpu_offload_layers(0);
  llama.config.set_zero_stage(1);
  LaunchInput offload = MoeFp8();
  offload.config.set_pipeline_parallel(1);
  offload.config.mutable_offload()->set_weights(true);
  for (const LaunchInput& in : {MoeFp8(), DenseFp16(), llama, offload, Gpt3(), DeepSeekStyle()}) {
    const std::string text = Emit("deepspeed", in);
    for (const std::string& flag : EmittedFlags(text)) {
      const std::string name = flag.substr(0, flag.find('='));  // --zero-stage=1
      EXPECT_TRUE(flags.contains(name)) << name << " is not a Megatron-DeepSpeed flag\n" << text;
    }
    const size_t from = text.find("<<'EOF'\n"), to = text.find("\nEOF\n");
    ASSERT_TRUE(from != std::string::npos && to != std::string::npos) << text;
    const std::string config = text.substr(from, to - from);
    int seen = 0;
    for (size_t at = config.find('"'); at != std::string::npos; at = config.find('"', at + 1)) {
      const size_t end = config.find('"', at + 1);
      if (end == std::string::npos) break;
      if (config.compare(end + 1, 1, ":") == 0) {
        const std::string key = config.substr(at + 1, end - at - 1);
        EXPECT_TRUE(keys.contains(key)) << key << " is not a DeepSpeed config key\n" << config;
        ++seen;
      }
      at = end;
    }
    EXPECT_GE(seen, 8) << config;
  }
  const std::string text = Emit("deepspeed", llama);
  for (const char* shape : {"--normalization rmsnorm", "--use-rotary-position-embeddings", "--disable-bias-linear",
                            "--swiglu", "--num-key-value-heads 8", "--attention-dropout 0", "--hidden-dropout 0",
                            "--untie-embeddings-and-output-weights"}) {
    EXPECT_NE(text.find(shape), std::string::npos) << shape << "\n" << text;
  }
}

// NeMo's base config keys at the commit tests/launchers/nemo_gpt_config_keys.txt names.
// MoeFp8 with folded experts (expert-TP 1), DeepEP, the all-to-all overlap, the
// distributed optimizer and selective recompute (modules added by each test).
LaunchInput FoldedMoe() {
  LaunchInput folded = MoeFp8();
  folded.config.set_expert_tensor_parallel(1);
  folded.config.set_moe_dispatcher(v1::MOE_DISPATCHER_DEEPEP);
  folded.config.set_moe_a2a_overlap(true);
  folded.config.set_zero_stage(1);
  folded.config.set_recompute(v1::RECOMPUTE_SELECTIVE);
  return folded;
}

// The non-comment lines of a list under tests/launchers.
std::set<std::string> ReadList(const char* path) {
  std::ifstream in(path);
  std::set<std::string> keys;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') keys.insert(line);
  }
  return keys;
}

std::set<std::string> NemoKeys() { return ReadList(PARAPLAN_NEMO_KEYS); }

// Every override of the emitted NeMo command line names a key of megatron_gpt_config.yaml
// (path=value) or, with +, one it does not have — what Hydra's struct mode requires.
TEST(Launcher, NemoOverridesAddOnlyKeysTheBaseConfigLacks) {
  const std::set<std::string> base = NemoKeys();
  ASSERT_GT(base.size(), 150u) << "read " << PARAPLAN_NEMO_KEYS;
  LaunchInput folded = FoldedMoe();
  folded.config.add_recompute_modules("core_attn");
  folded.config.add_recompute_modules("moe_act");
  folded.workload.set_quant_recipe(v1::QUANT_RECIPE_CURRENT_SCALING);
  int added = 0;
  for (const LaunchInput& in : {MoeFp8(), DenseFp16(), LlamaZero3(), folded, Gpt3(), DeepSeekStyle()}) {
    const std::string text = Emit("nemo", in);
    const size_t run = text.find("\npython ");
    ASSERT_NE(run, std::string::npos) << text;
    for (absl::string_view word : absl::StrSplit(text.substr(run), absl::ByAnyChar(" \n"), absl::SkipEmpty())) {
      if (word == "\\" || word == "python" || absl::EndsWith(word, "megatron_gpt_pretraining.py")) continue;
      std::string arg(word);
      if (arg.size() > 1 && arg.front() == '\'') arg = arg.substr(1, arg.size() - 2);
      const size_t eq = arg.find('=');
      ASSERT_NE(eq, std::string::npos) << arg << "\n" << text;
      const bool plus = arg[0] == '+';
      const std::string path = arg.substr(plus ? 1 : 0, eq - (plus ? 1 : 0));
      EXPECT_EQ(base.contains(path), !plus) << arg << (plus ? ": the base config has it" : ": needs +") << "\n"
                                            << text;
      added += plus;
    }
  }
  EXPECT_GT(added, 5);
}

// torchtitan's command-line overrides at the commit tests/launchers/torchtitan_flags.txt
// names: every flag (and the activation-checkpoint subcommand) paraplan emits is one.
TEST(Launcher, TorchtitanEmitsOnlyItsCommandLineOverrides) {
  const std::set<std::string> known = ReadList(PARAPLAN_TORCHTITAN_FLAGS);
  ASSERT_GT(known.size(), 30u) << "read " << PARAPLAN_TORCHTITAN_FLAGS;
  LaunchInput dense = DenseFp16();
  dense.config.set_pipeline_schedule(v1::SCHEDULE_INTERLEAVED_1F1B);
  dense.config.set_virtual_pipeline_stages(2);
  for (const LaunchInput& input : {MoeFp8(), dense, LlamaZero3(), Gpt3(), DeepSeekStyle()}) {
    const std::string text = Emit("torchtitan", input);
    const size_t run = text.find("-m torchtitan.train");
    ASSERT_NE(run, std::string::npos) << text;
    int checked = 0;
    for (absl::string_view word :
         absl::StrSplit(text.substr(run + 19), absl::ByAnyChar(" \n"), absl::SkipEmpty())) {
      if (absl::StartsWith(word, "--") || absl::StartsWith(word, "activation-checkpoint:")) {
        EXPECT_TRUE(known.contains(std::string(word))) << word << " is not a torchtitan override\n" << text;
        ++checked;
      }
    }
    EXPECT_GT(checked, 8) << text;
    EXPECT_TRUE(absl::StrContains(text, "activation-checkpoint:")) << text;
    // A config function torchtitan ships is named as one the registry defines.
    const std::vector<std::string> words = absl::StrSplit(text.substr(run), absl::ByAnyChar(" \n"), absl::SkipEmpty());
    const auto value_of = [&](const std::string& flag) {
      const auto it = std::find(words.begin(), words.end(), flag);
      return it == words.end() || it + 1 == words.end() ? std::string() : *(it + 1);
    };
    const std::string module = value_of("--module"), config = value_of("--config");
    if (module != "YOUR_MODULE") {
      EXPECT_TRUE(known.contains(absl::StrCat("config:", module, ".", config))) << module << "." << config;
    }
  }
  // Llama 3 70B's shape is torchtitan's own llama3_70b; the Mixtral-shaped test model is
  // nothing torchtitan ships, so the user names a config function and is told its shape.
  EXPECT_TRUE(absl::StrContains(Emit("torchtitan", LlamaZero3()), "--module llama3 \\\n    --config llama3_70b"));
  EXPECT_TRUE(absl::StrContains(Emit("torchtitan", MoeFp8()), "--config YOUR_CONFIG"));
  EXPECT_TRUE(absl::StrContains(Emit("torchtitan", DeepSeekStyle()),
                                "256 experts (top 8) of FFN 2048 + 1 shared, the first 3 layers dense, multi-latent "
                                "attention (query rank 1536, key/value rank 512, head dims 128 + 64 / 128)"))
      << Emit("torchtitan", DeepSeekStyle());
}

// Megatron-Bridge's ConfigContainer keys and run_recipe.py's options at the commits
// tests/launchers/megatron_bridge_keys.txt names: every KEY=VALUE and flag paraplan emits
// is one, and the model's shape, parallelism and batch sizes are all stated.
TEST(Launcher, MegatronBridgeEmitsOnlyConfigContainerKeys) {
  const std::set<std::string> known = ReadList(PARAPLAN_BRIDGE_KEYS);
  ASSERT_GT(known.size(), 400u) << "read " << PARAPLAN_BRIDGE_KEYS;
  LaunchInput folded = FoldedMoe();
  folded.config.add_recompute_modules("moe_act");
  folded.config.set_cpu_offload_layers(2);
  folded.workload.set_quant_recipe(v1::QUANT_RECIPE_MXFP8);
  LaunchInput fine = FoldedMoe();
  fine.config.add_offload_modules("expert_fc1");
  fine.config.add_offload_modules("moe_act");
  EXPECT_TRUE(absl::StrContains(Emit("megatron-bridge", fine), "'model.offload_modules=[expert_fc1,moe_act]'"))
      << Emit("megatron-bridge", fine);
  for (const LaunchInput& input : {MoeFp8(), DenseFp16(), LlamaZero3(), folded, fine, Gpt3(), DeepSeekStyle()}) {
    const std::string text = Emit("megatron-bridge", input);
    const size_t run = text.find("scripts/training/run_recipe.py");
    ASSERT_NE(run, std::string::npos) << text;
    std::set<std::string> keys;
    std::vector<std::string> words = absl::StrSplit(text.substr(run + 30), absl::ByAnyChar(" \n"), absl::SkipEmpty());
    for (size_t i = 0; i < words.size(); ++i) {
      std::string w = words[i];
      if (w == "\\") continue;
      if (absl::StartsWith(w, "--")) {
        EXPECT_TRUE(known.contains(w)) << w << " is not a run_recipe.py option\n" << text;
        ++i;  // its value
        continue;
      }
      if (w.size() > 1 && w.front() == '\'') w = w.substr(1, w.size() - 2);
      const size_t eq = w.find('=');
      ASSERT_NE(eq, std::string::npos) << w << "\n" << text;
      keys.insert(w.substr(0, eq));
      EXPECT_TRUE(known.contains(w.substr(0, eq))) << w << " is not a ConfigContainer key\n" << text;
    }
    for (const char* k : {"model.tensor_model_parallel_size", "model.pipeline_model_parallel_size",
                          "model.context_parallel_size", "model.num_layers", "model.hidden_size",
                          "model.ffn_hidden_size", "model.num_attention_heads", "model.num_query_groups",
                          "model.seq_length", "model.vocab_size", "train.global_batch_size", "train.micro_batch_size"}) {
      EXPECT_TRUE(keys.contains(k)) << k << " not stated\n" << text;
    }
  }
  // ZeRO-3 as Megatron-FSDP; FP8 with its recipe; folded experts and DeepEP.
  EXPECT_TRUE(absl::StrContains(Emit("megatron-bridge", LlamaZero3()), "ddp.data_parallel_sharding_strategy=optim_grads_params"));
  const std::string moe = Emit("megatron-bridge", folded);
  EXPECT_TRUE(absl::StrContains(moe, "model.fp8_recipe=mxfp8")) << moe;
  EXPECT_TRUE(absl::StrContains(moe, "model.expert_tensor_parallel_size=1")) << moe;
  EXPECT_TRUE(absl::StrContains(moe, "model.moe_flex_dispatcher_backend=deepep")) << moe;
  EXPECT_TRUE(absl::StrContains(moe, "'model.recompute_modules=[moe_act]'")) << moe;
}

// DeepSeek-V3's shape (MLA, three dense layers first, one shared expert) and GPT-OSS's
// sliding windows (every other layer from the first) as Megatron-LM and Megatron-Bridge
// take them: each layer's kind is stated, not left to a default that builds another
// model (Megatron's integer --moe-layer-freq N makes layers 0, N, 2N ... MoE).
LaunchInput DeepSeekStyle() {
  LaunchInput in = MoeFp8();
  v1::TransformerSpec* t = in.workload.mutable_transformer();
  t->set_num_layers(61);
  v1::MoeSpec* m = t->mutable_moe();
  m->set_num_experts(256);
  m->set_top_k(8);
  m->set_expert_ffn_hidden_size(2048);
  m->set_num_shared_experts(1);
  m->set_first_dense_layers(3);
  v1::MlaSpec* mla = t->mutable_mla();
  mla->set_q_lora_rank(1536);
  mla->set_kv_lora_rank(512);
  mla->set_qk_nope_head_dim(128);
  mla->set_qk_rope_head_dim(64);
  mla->set_v_head_dim(128);
  t->set_mtp_num_layers(1);
  in.config.set_pipeline_parallel(1);
  in.config.set_data_parallel(16);
  in.config.set_zero_stage(1);
  return in;
}

// GPT-3 175B (Brown et al. 2020) as Narayanan et al. (SC'21) trained it: TP8 PP8 DP16,
// interleaved over 3 virtual stages, selective recompute with SP, bf16.
LaunchInput Gpt3() {
  LaunchInput in;
  v1::TransformerSpec* t = in.workload.mutable_transformer();
  in.workload.set_name("gpt3-175b");
  t->set_num_layers(96);
  t->set_hidden_size(12288);
  t->set_num_attention_heads(96);
  t->set_ffn_hidden_size(49152);
  t->set_seq_length(2048);
  t->set_vocab_size(51200);
  t->set_tied_embeddings(true);
  in.workload.set_precision(v1::PRECISION_BF16);
  v1::ParallelConfig& c = in.config;
  c.set_tensor_parallel(8);
  c.set_pipeline_parallel(8);
  c.set_data_parallel(16);
  c.set_virtual_pipeline_stages(3);
  c.set_pipeline_schedule(v1::SCHEDULE_INTERLEAVED_1F1B);
  c.set_micro_batch_size(1);
  c.set_global_batch_size(1536);
  c.set_recompute(v1::RECOMPUTE_SELECTIVE);
  c.set_sequence_parallel(true);
  c.set_zero_stage(1);
  in.num_gpus = 1024;
  in.gpus_per_node = 8;
  return in;
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

TEST(Launcher, LayerKindsMlaAndWindowsAreStated) {
  const std::set<std::string> known = MegatronFlags();
  LaunchInput ds = DeepSeekStyle();
  std::string out = Emit("megatron", ds);
  for (const char* arg : {"--multi-latent-attention \\\n", "--q-lora-rank 1536 \\\n", "--kv-lora-rank 512 \\\n",
                          "--qk-head-dim 128 \\\n", "--qk-pos-emb-head-dim 64 \\\n", "--v-head-dim 128 \\\n",
                          "--moe-layer-freq '[0]*3+[1]*58' \\\n",
                          "--moe-shared-expert-intermediate-size 2048 \\\n", "--mtp-num-layers 1 \\\n"}) {
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
  // Every MoE layer, no window: nothing to state.
  out = Emit("megatron", MoeFp8());
  EXPECT_EQ(out.find("--moe-layer-freq"), std::string::npos) << out;
  EXPECT_EQ(out.find("--window-size"), std::string::npos) << out;
  // Megatron-Bridge: the pattern as a list of the ConfigContainer's fields.
  const std::string bridge = Emit("megatron-bridge", DeepSeekStyle());
  EXPECT_TRUE(absl::StrContains(bridge, "'model.moe_layer_freq=[0,0,0,1,1,")) << bridge;
  EXPECT_TRUE(absl::StrContains(bridge, "model.moe_shared_expert_intermediate_size=2048")) << bridge;
  EXPECT_TRUE(absl::StrContains(bridge, "model.mtp_num_layers=1")) << bridge;
  EXPECT_TRUE(absl::StrContains(Emit("nemo", DeepSeekStyle()), "no multi-token prediction"));
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

TEST(HtmlEscape, EscapesMarkupQuotesAndControls) {
  EXPECT_EQ(HtmlEscape("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
  EXPECT_EQ(HtmlEscape("tab\tok\x01"), "tab\tok\xEF\xBF\xBD");
  EXPECT_EQ(HtmlEscape("\xC2\xB1 5 %"), "\xC2\xB1 5 %");
}

TEST(SvgChart, Ticks) {
  EXPECT_EQ(NiceTicks(0, 19.6, 6), (std::vector<double>{0, 5, 10, 15, 20}));
  EXPECT_EQ(NiceTicks(0, 72.6, 6), (std::vector<double>{0, 20, 40, 60, 80}));
  EXPECT_EQ(NiceTicks(3, 3, 5), (std::vector<double>{2.6, 2.8, 3, 3.2, 3.4}));
  EXPECT_EQ(LogTicks(17, 520), (std::vector<double>{10, 20, 50, 100, 200, 500, 1000}));
  EXPECT_EQ(LogTicks(0.002, 3e6), (std::vector<double>{0.001, 0.01, 0.1, 1, 10, 100, 1000, 1e4, 1e5, 1e6, 1e7}));
}

TEST(SvgChart, StackedBarsEscapeAndSkipUnusedSegments) {
  StackedBarChart ch;
  ch.title = "t<1>";
  ch.unit = "GiB";
  ch.segments = {{"weights", "#111111"}, {"unused", "#222222"}, {"<acts>", "#333333"}};
  ch.rows = {{"1", "#1 <TP8>", {10, 0, 30}, 80}, {"2", "#2 TP4", {20, 0, 20}, 80}};
  const std::string svg = StackedBarsSvg(ch);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart bars\"", 0), 0u) << svg;
  EXPECT_EQ(svg.substr(svg.size() - 6), "</svg>");
  EXPECT_NE(svg.find("aria-label=\"t&lt;1&gt;\""), std::string::npos);
  EXPECT_NE(svg.find("#1 &lt;TP8&gt;"), std::string::npos);
  EXPECT_NE(svg.find("&lt;acts&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("<TP8>"), std::string::npos);
  EXPECT_EQ(svg.find("unused"), std::string::npos) << "a segment no row uses has no legend entry";
  EXPECT_EQ(Count(svg, "<rect x="), 4 + 2) << "4 bar segments and 2 legend swatches";
  EXPECT_EQ(Count(svg, "data-plan=\"1\""), 1);
  EXPECT_EQ(Count(svg, "<line class=\"limit\""), 3) << "one capacity marker a row and one in the legend";
  EXPECT_NE(svg.find("<title>weights: 10 GiB (25.0 %)</title>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>#2 TP4: 40 GiB of 80 GiB capacity</title>"), std::string::npos) << svg;
  EXPECT_EQ(StackedBarsSvg(StackedBarChart{}).find("no data") != std::string::npos, true);
}

TEST(SvgChart, ScatterDrawsFrontsAndLogAxes) {
  ScatterChart ch;
  ch.title = "time vs cost";
  ch.x_label = "time (s)";
  ch.y_label = "cost ($)";
  ch.series = {{"front", "#4e79a7", true, true}, {"plans", "#e15759", false, false}};
  ch.points = {{0, 10, 5, "", "", "a"},
               {0, 20, 2, "", "", "b"},
               {0, 30, 6, "", "", "dominated"},
               {1, 10, 5, "1", "#1", "plan <1>"}};
  std::string svg = ScatterSvg(ch);
  EXPECT_EQ(Count(svg, "<circle"), 4 + 2) << "4 points and 2 legend marks";
  EXPECT_NE(svg.find("<polyline class=\"front\""), std::string::npos) << "a and b are both on the 2-D front";
  EXPECT_NE(svg.find("<title>plan &lt;1&gt;</title>"), std::string::npos);
  EXPECT_NE(svg.find(">#1</text>"), std::string::npos);
  EXPECT_EQ(svg.find("log scale"), std::string::npos);
  ch.log_x = true;
  ch.points.push_back({0, 0, 1, "", "", "zero time: left out on a log axis"});
  svg = ScatterSvg(ch);
  EXPECT_NE(svg.find("time (s), log scale"), std::string::npos);
  EXPECT_EQ(svg.find("zero time"), std::string::npos);
  EXPECT_NE(ScatterSvg(ScatterChart{}).find("no data"), std::string::npos);
}

v1::Estimate Plan(int tp, double seconds) {
  v1::Estimate e;
  e.mutable_config()->set_tensor_parallel(tp);
  e.mutable_config()->set_data_parallel(8 / tp);
  e.set_num_gpus(8);
  e.set_iteration_time_s(seconds);
  e.mutable_time()->set_compute_s(seconds * 0.75);
  e.mutable_time()->set_tp_comm_s(seconds * 0.25);
  e.mutable_memory()->set_weights_bytes(10.0 * (1 << 30));
  e.mutable_memory()->set_activations_bytes(30.0 * (1 << 30));
  e.mutable_memory()->set_total_bytes(40.0 * (1 << 30));
  e.mutable_memory()->set_capacity_bytes(80.0 * (1 << 30));
  e.set_cost_per_iteration_usd(seconds * 0.01);
  e.set_energy_per_iteration_j(seconds * 5000);
  e.set_bottleneck("<compute>");
  e.set_profile_name("lab");
  e.set_profile_version(2);
  return e;
}

ReportInput Report() {
  ReportInput in;
  *in.response.add_plans() = Plan(2, 1.5);
  *in.response.add_plans() = Plan(4, 1.8);
  *in.response.add_pareto() = Plan(2, 1.5);
  in.response.mutable_plans(1)->add_warnings("<script>alert(1)</script>");
  in.workload = "model <x>";
  in.request = "GPUs 8, global batch 64";
  in.profile = "lab@2";
  return in;
}

TEST(Report, SelfContainedEscapedPageWithChartsAndTable) {
  ReportInput in = Report();
  in.accuracy_error = "PERMISSION_DENIED: needs role reader";
  const std::string html = PlanReportHtml(in);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n", 0), 0u);
  EXPECT_EQ(html.substr(html.size() - 8), "</html>\n");
  EXPECT_EQ(Count(html, "<svg "), 4) << "time, memory and two Pareto charts";
  EXPECT_EQ(Count(html, "<tr data-plan="), 2);
  EXPECT_NE(html.find("<span id=\"profile\">lab@2</span>"), std::string::npos);
  EXPECT_NE(html.find("model &lt;x&gt;"), std::string::npos);
  EXPECT_NE(html.find("&lt;compute&gt;"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(Count(html, "<script"), 1) << "only the page's own inline script";
  EXPECT_EQ(html.find("<x>"), std::string::npos);
  EXPECT_NE(html.find("Profile accuracy: accuracy unknown: PERMISSION_DENIED: needs role reader"), std::string::npos);
  // Nothing is fetched: no src / href / url() / @import (the SVG namespace is a name, not a fetch).
  for (const char* ref : {"src=", "href=", "url(", "@import", "https://"}) {
    EXPECT_EQ(html.find(ref), std::string::npos) << ref;
  }
  EXPECT_EQ(Count(html, "http://"), 4) << "the xmlns of the 4 svg elements only";
}

TEST(Report, UncertaintyFromMeasuredAccuracy) {
  ReportInput in = Report();
  in.accuracy.emplace();
  EXPECT_EQ(UncertaintyText(in), "no measurements yet");
  in.accuracy->mutable_overall()->set_count(9);
  in.accuracy->mutable_overall()->set_mape_ratio(0.0261);
  in.accuracy->mutable_overall()->set_bias_ratio(1.023);
  EXPECT_EQ(UncertaintyText(in), "uncertainty \u00b12.6 % (MAPE over 9 measurements)");
  const std::string html = PlanReportHtml(in);
  EXPECT_NE(html.find("uncertainty \u00b12.6 % (MAPE over 9 measurements); median predicted / measured 1.023; best "
                      "plan 1.500 s per iteration, likely 1.461 s to 1.539 s"),
            std::string::npos)
      << html.substr(0, 3000);
  in.accuracy->mutable_overall()->set_count(1);
  EXPECT_EQ(UncertaintyText(in), "uncertainty \u00b12.6 % (MAPE over 1 measurement)");
}

TEST(Report, NoPlanSaysWhy) {
  ReportInput in;
  in.response.set_infeasible_reason("nothing fits: 90 GiB > 80 GiB <capacity>");
  in.workload = "big";
  in.profile = "lab@1";
  const std::string html = PlanReportHtml(in);
  EXPECT_NE(html.find("<h2>No plan fits</h2>"), std::string::npos);
  EXPECT_NE(html.find("nothing fits: 90 GiB &gt; 80 GiB &lt;capacity&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<svg"), std::string::npos);
}

// A what-if page: the two plans by name in the table, both charts and the warnings; no
// Pareto front, no rank numbers; the change escaped in its heading.
TEST(Report, WhatIfNamesTheTwoPlans) {
  ReportInput in = Report();
  in.response.clear_pareto();
  in.plan_labels = {"today", "what-if"};
  in.what_if = "accelerator.memory_gib=40 <b>";
  const std::string html = PlanReportHtml(in);
  EXPECT_NE(html.find("What if: <span id=\"what-if\">accelerator.memory_gib=40 &lt;b&gt;</span>"), std::string::npos);
  EXPECT_NE(html.find("<tr data-plan=\"1\"><td>today</td><td>8</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("<tr data-plan=\"2\"><td>what-if</td><td>8</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("what-if TP4 PP1 DP2: &lt;script&gt;"), std::string::npos) << "the warning names the side";
  EXPECT_EQ(Count(html, "<svg "), 2) << "time and memory, no Pareto front";
  EXPECT_EQ(html.find("#1"), std::string::npos);
  EXPECT_EQ(html.find("infeasible"), std::string::npos);
  // The change fits nothing: today alone and the reason.
  in.response.mutable_plans()->RemoveLast();
  in.response.set_infeasible_reason("nothing fits in 8 GiB");
  const std::string alone = PlanReportHtml(in);
  EXPECT_NE(alone.find("<p id=\"infeasible\">With the change no plan fits: nothing fits in 8 GiB</p>"),
            std::string::npos);
  EXPECT_EQ(Count(alone, "<tr data-plan="), 1);
}

}  // namespace
}  // namespace paraplan::cli
