// Unit tests that every flag and config key the launchers emit is one the framework
// defines, against the lists under tests/launchers/ (extracted from Megatron-LM, DeepSpeed,
// NeMo, torchtitan and Megatron-Bridge at pinned commits). Inputs: launch_inputs.h.
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "client/launcher.h"
#include "gtest/gtest.h"
#include "tests/cli/launch_inputs.h"

namespace paraplan::cli {
namespace {

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
                                "256 experts (top 8) of FFN 2048 + 1 shared, the first 3 layers dense, routed "
                                "within 4 of 8 expert groups, multi-latent "
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

}  // namespace
}  // namespace paraplan::cli
