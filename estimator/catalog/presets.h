// Built-in model presets and built-in system profiles.
//
// Presets are published model shapes (GPT-3, Llama 3, Megatron); profiles are built
// from vendor specifications, cited beside each number in presets.cc / profiles.cc.
// Returned by value; thread-safe.
#ifndef PARAPLAN_ESTIMATOR_CATALOG_PRESETS_H_
#define PARAPLAN_ESTIMATOR_CATALOG_PRESETS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "estimator/inputs/system_profile.h"
#include "estimator/inputs/workload.h"

namespace paraplan {

// gpt3-175b, llama3-8b, llama3-70b, llama3-405b, megatron-22b, megatron-530b,
// megatron-1t, mixtral-8x7b and the CNNs below (workload.name is the preset name).
std::vector<Workload> ModelPresets();
// resnet50, vgg16, alexnet (224 x 224), cosmoflow (4 x 128^3), cosmoflow-512 (4 x 512^3):
// layer graphs (cnn_presets.cc).
std::vector<Workload> CnnPresets();
std::optional<Workload> FindModelPreset(absl::string_view name);

// dgx-a100-80gb, dgx-h100-80gb, abci-v100-16gb, dgx-h200-141gb, dgx-b200-180gb,
// dgx-b300-288gb, gb200-nvl72 (72-GPU NVLink domains of 4-GPU trays) and gb300-nvl72 —
// uncalibrated (calibration zeroed, so the physical defaults apply) except the Hopper
// profiles, which carry shares measured on an H100 (profiles.cc cites them).
std::vector<SystemProfile> BuiltinProfiles();

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_CATALOG_PRESETS_H_
