// The two ends of a transformer on one GPU for one micro-batch: the embedding the first
// pipeline stage runs, and the final norm, LM head and loss the last one runs (the loss
// as the framework computes it: Megatron's op-by-op cross-entropy, or flash-attn's fused
// one under PyTorch FSDP). Internal to estimator/workloads, beside transformer_blocks.h.
#ifndef PARAPLAN_ESTIMATOR_WORKLOADS_TRANSFORMER_ENDS_H_
#define PARAPLAN_ESTIMATOR_WORKLOADS_TRANSFORMER_ENDS_H_

#include "estimator/system/collectives.h"
#include "estimator/workloads/transformer_blocks.h"

namespace paraplan::transformer {

// The vocabulary-parallel embedding (tp: its tensor-parallel group).
BlockCosts EmbeddingCosts(const Dims& x, const Hardware& hw, const Collectives& coll, const GroupSpan& tp,
                          double host_kernel_s);
// The final norm, the LM head and the loss; the head's parameters unless tied.
BlockCosts HeadCosts(const Dims& x, const TransformerSpec& spec, const Hardware& hw, const Collectives& coll,
                     const GroupSpan& tp, double host_kernel_s);

}  // namespace paraplan::transformer

#endif  // PARAPLAN_ESTIMATOR_WORKLOADS_TRANSFORMER_ENDS_H_
