// Validation of the three inputs, with errors that name the field and the reason.
//
// Every check returns INVALID_ARGUMENT with a message of the form
// "<path>: <value> <reason>", e.g. "config.pipeline_parallel: 7 does not divide
// num_layers 96". A string from the request is echoed at most kMaxEchoedChars long
// (Abbreviated, echo.h), so an error always fits in gRPC metadata. Every function accepts any
// input, however malformed (none assumes another ran first). Pure functions; thread-safe.
#ifndef PARAPLAN_ESTIMATOR_INPUTS_VALIDATE_H_
#define PARAPLAN_ESTIMATOR_INPUTS_VALIDATE_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "estimator/inputs/echo.h"
#include "estimator/inputs/parallel_config.h"
#include "estimator/inputs/system_profile.h"
#include "estimator/inputs/workload.h"

namespace paraplan {

absl::Status ValidateWorkload(const Workload& workload);
absl::Status ValidateProfile(const SystemProfile& profile);
// What the workload asks of the profile's accelerator (FP4 needs FP4 tensor cores).
absl::Status ValidateWorkloadOnProfile(const Workload& workload, const SystemProfile& profile);
// Checks the configuration against the workload's shape (config is normalized first).
// Safe on a workload that ValidateWorkload would refuse (it never indexes an empty shape).
absl::Status ValidateConfig(const Workload& workload, const ParallelConfig& config);
// Whether `framework` runs the (normalized) configuration: INVALID_ARGUMENT naming the
// field it cannot run otherwise. Megatron-LM and NeMo: ZeRO 0, 1 (distributed optimizer)
// or 3 (FSDP), 1F1B or interleaved schedules. DeepSpeed (Megatron-DeepSpeed): no context
// parallelism, no folded or expert-TP experts, 1F1B only, no ZeRO 2/3 with pipeline
// stages. torchtitan: DDP or FSDP2 (ZeRO 0 or 3), zero-bubble as ZBV (v 2). PyTorch FSDP: data
// parallelism only (ZeRO 0, 2 or 3). kAny runs everything.
absl::Status ValidateFramework(Framework framework, const ParallelConfig& config);
// The same check, cheap enough for the search's inner loop: the refused field of a
// normalized configuration and why (field null: it runs).
struct FrameworkRefusal {
  const char* field = nullptr;
  const char* reason = nullptr;
};
FrameworkRefusal RefusedByFramework(Framework framework, const ParallelConfig& normalized);
// Why no configuration of `workload` runs Megatron-Core's all-to-all overlap (its
// TransformerConfig: a 16-bit model, at most one MTP layer); null: some may.
const char* A2aOverlapRefusedByWorkload(const Workload& workload);
// What of `workload` does not run under `framework`, whatever the configuration: Muon
// is modelled as Megatron-Core runs it, not under DeepSpeed, torchtitan or PyTorch FSDP;
// multi-token prediction is Megatron-Core's and torchtitan's (DeepSeek-V3's MTP module),
// neither DeepSpeed's nor PyTorch FSDP's stacks (Megatron-DeepSpeed, Hugging Face and
// llm-foundry models) have it. `field` is the workload's field, null where it runs.
FrameworkRefusal WorkloadRefusedByFramework(const Workload& workload, Framework framework);
// As above, and the degrees must multiply to exactly `num_gpus`.
absl::Status ValidateConfigForGpus(const Workload& workload, const ParallelConfig& config,
                                   int64_t num_gpus);

// Physical bounds of a measured training step, which ingest and calibration refuse to
// leave: no step is shorter than one kernel launch (~5 us on any GPU since Kepler; 1 us
// leaves room) nor longer than 10^6 s (11.6 days); no device's peak memory reaches
// 10^5 GiB (the largest accelerator of 2026, B300, holds 288 GB). Inside these bounds
// every ratio of prediction to measurement, and every sum of them, stays finite.
inline constexpr double kMinMeasuredIterationS = 1e-6;
inline constexpr double kMaxMeasuredIterationS = 1e6;
inline constexpr double kMaxMeasuredMemoryGiB = 1e5;
// INVALID_ARGUMENT naming "iteration_time_s" or "peak_memory_gib" and the bound.
absl::Status ValidateMeasured(double iteration_time_s, double peak_memory_gib);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_INPUTS_VALIDATE_H_
