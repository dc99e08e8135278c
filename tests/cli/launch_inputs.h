// Launcher inputs for the CLI's launcher tests (launcher_test.cc,
// launcher_vocabulary_test.cc), built by hand: each a workload, a configuration and a
// cluster as `paraplan plan --emit` would hand them to client/launcher.cc, named for
// what it exercises; and the small readers those tests share.
#ifndef PARAPLAN_TESTS_CLI_LAUNCH_INPUTS_H_
#define PARAPLAN_TESTS_CLI_LAUNCH_INPUTS_H_

#include <set>
#include <string>
#include <vector>

#include "client/launcher.h"

namespace paraplan::cli {

// Mixtral-like MoE on 4 nodes of 8: TP2 PP2 DP8 CP2 EP4, FP8, full recompute, ZeRO-3,
// offloaded optimizer, CUDA graphs, TP overlap.
LaunchInput MoeFp8();
// A small dense model in fp16 on 12 GPUs: TP2 PP2 (GPipe) DP3, ZeRO-2, offloaded
// weights and activations, ffn and kv heads left 0.
LaunchInput DenseFp16();
// A Llama-like dense model (RMSNorm, SwiGLU, GQA, no dropout) under ZeRO-3 with CPU
// offload of layers.
LaunchInput LlamaZero3();
// MoeFp8 with folded experts (expert-TP 1), DeepEP, the all-to-all overlap, the
// distributed optimizer and selective recompute.
LaunchInput FoldedMoe();
// MLA, shared experts, dense first layers.
LaunchInput DeepSeekStyle();
// GPT-3 175B, TP8 PP8 DP16 over 3 virtual stages.
LaunchInput Gpt3();

// The launcher's text for `framework`; a failed emit fails the calling test and gives "".
std::string Emit(const char* framework, const LaunchInput& in);
// The non-comment lines of a list under tests/launchers.
std::set<std::string> ReadList(const char* path);
// Megatron-LM's flags at the commit tests/launchers/megatron_lm_flags.txt names.
std::set<std::string> MegatronFlags();
// The flags of the torchrun command line an emitted text ends with.
std::vector<std::string> EmittedFlags(const std::string& text);

}  // namespace paraplan::cli

#endif  // PARAPLAN_TESTS_CLI_LAUNCH_INPUTS_H_
