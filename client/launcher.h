// Launcher arguments: the command-line flags or configuration snippet a training
// framework needs to run one plan (`paraplan plan … --emit FRAMEWORK`).
//
// Contract: LauncherArguments is a pure function of its input (no I/O, no RPC) and
// returns text for one of kLaunchers:
//   megatron    a torchrun command line for Megatron-LM's pretrain_gpt.py
//   megatron-bridge  a torchrun command line for Megatron-Bridge's run_recipe.py with the
//               plan as KEY=VALUE overrides of the recipe's ConfigContainer
//   nemo        the YAML overrides (trainer: / model:) of NeMo's megatron_gpt_config.yaml
//   deepspeed   a shell script: ds_config.json (here-document) and the deepspeed launch of
//               Megatron-DeepSpeed's pretrain_gpt.py with its TP/PP flags
//   torchtitan  the TOML sections of a torchtitan job config
// Each output starts with comment lines: what it is, the plan it encodes and one
// "note:" line per part of the plan the framework cannot express exactly. Everything the
// plan fixes is emitted; what it does not know (data paths, tokenizer, learning rate)
// is left to the user. Errors: INVALID_ARGUMENT for an unknown framework (the message
// lists the valid ones); FAILED_PRECONDITION when the workload is not a transformer or
// the plan splits what no framework here splits (CNN spatial / filter / channel).
// Degrees that are 0 mean 1, as in the API.
#ifndef PARAPLAN_CLIENT_LAUNCHER_H_
#define PARAPLAN_CLIENT_LAUNCHER_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "paraplan/v1/types.pb.h"

namespace paraplan::cli {

inline constexpr const char* kLaunchers[] = {"megatron", "megatron-bridge", "nemo", "deepspeed", "torchtitan"};

// Whether `name` is one of kLaunchers.
bool IsLauncher(absl::string_view name);
// "megatron, megatron-bridge, nemo, deepspeed, torchtitan".
std::string LauncherList();
// The framework whose runs a launcher's output starts, so that `plan --emit L` searches
// and estimates only what L runs (unless --framework says otherwise): megatron-bridge
// NeMo (its performance recipes: 16-bit gradient reduction); megatron and nemo (NeMo
// 1.x, a Megatron-Core trainer keeping fp32 main gradients under megatron_amp_O2)
// Megatron-LM; deepspeed DeepSpeed; torchtitan torchtitan. FRAMEWORK_UNSPECIFIED for a
// name not in kLaunchers.
v1::Framework LauncherFramework(absl::string_view launcher);

struct LaunchInput {
  v1::ParallelConfig config;
  v1::Workload workload;
  int num_gpus = 0;       // GPUs of the plan; 0 = the product of the config's degrees
  int gpus_per_node = 0;  // from the profile; 0 = one node holds all GPUs
  // GPUs one NVLink domain joins (the profile's innermost network level); above
  // gpus_per_node the system is multi-node NVLink (GB200 / GB300 NVL72). 0 = one node.
  int nvlink_domain = 0;
  std::string profile;    // "NAME@VERSION", for the header comment
  v1::Framework framework = v1::FRAMEWORK_UNSPECIFIED;  // the request's: its defaults shaped the estimate
};

absl::StatusOr<std::string> LauncherArguments(absl::string_view framework, const LaunchInput& in);

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_LAUNCHER_H_
