// Definitions of launch_inputs.h.
#include "tests/cli/launch_inputs.h"

#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace paraplan::cli {

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
  m->set_router_num_groups(8);
  m->set_router_group_topk(4);
  in.workload.set_optimizer_moments(v1::PRECISION_BF16);  // DeepSeek-V3's AdamW moments
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

std::string Emit(const char* framework, const LaunchInput& in) {
  absl::StatusOr<std::string> s = LauncherArguments(framework, in);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : "";
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

std::set<std::string> MegatronFlags() { return ReadList(PARAPLAN_MEGATRON_FLAGS); }

}  // namespace paraplan::cli
