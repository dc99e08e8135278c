// The configuration flags that plan, estimate and compare share: one vocabulary, two
// readings. plan reads each as a constraint (a list of allowed values); estimate and
// compare read each as the value of one ParallelConfig field.
//
//   --tp --pp --dp --cp --ep --vpp --mbs --zero   degrees / stage (integers >= 0)
//   --recompute none|selective|full
//   --schedule 1f1b|gpipe|interleaved|zero-bubble   (or the proto names)
//   --sp --flash --overlap-grad-reduce on|off      (plan also: any)
//   --cuda-graphs --tp-comm-overlap                switches (no value)
//   --global-batch B                               estimate/compare: the config's;
//                                                  plan: the request's
//
// Contract: ApplyConfigFlags sets the fields of `c` named by the flags given and leaves
// the others as they are (so flags override a --config file). ApplyConstraintFlags
// fills `k` from the same flags as lists, plus plan's own (--max-tp/pp/cp/mbs,
// --headroom, --allow-offload). Errors are INVALID_ARGUMENT naming the flag and the
// values it takes (a usage error). No I/O.
#ifndef PARAPLAN_CLIENT_CONFIG_FLAGS_H_
#define PARAPLAN_CLIENT_CONFIG_FLAGS_H_

#include "absl/status/status.h"
#include "client/args.h"
#include "paraplan/v1/services.pb.h"

namespace paraplan::cli {

// Whether any of the configuration flags above (except --global-batch) is given.
bool HasConfigFlags(const Args& a);

absl::Status ApplyConfigFlags(const Args& a, v1::ParallelConfig* c);

// estimate and compare without --config: the settings a flag leaves unsaid take the
// plan's choices, so that a plan's own degrees estimate as the plan did — flash attention
// on (a transformer), sequence parallelism with TP > 1, the gradient reduction overlapped,
// the ZeRO parameter gather overlapped. A flag given (--flash off, --sp off,
// --overlap-grad-reduce off) stands. A --config file is taken as written (the API's
// defaults: absent = off).
void ApplyPlanDefaults(const Args& a, bool transformer, v1::ParallelConfig* c);

absl::Status ApplyConstraintFlags(const Args& a, v1::PlanConstraints* k);

// --framework megatron|nemo|deepspeed|torchtitan|pytorch-fsdp (unset: unspecified).
absl::Status FrameworkFlag(const Args& a, v1::Framework* out);

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_CONFIG_FLAGS_H_
