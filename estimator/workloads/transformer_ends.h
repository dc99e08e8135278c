// The two ends of a transformer on one GPU for one micro-batch: the embedding the first
// pipeline stage runs, and the final norm, LM head and loss the last one runs, with
// multi-token prediction's depths where the model has them (the loss
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
// Multi-token prediction's depths (spec.mtp_num_layers) added to the last stage's block
// (`out->post`): each a layer like `out`'s last, the shared embedding and head again, and
// the projection; `out`'s layers, embedding (pre) and head (post) set before.
void AddMultiTokenPrediction(const Dims& x, const TransformerSpec& spec, const Hardware& hw, ModelCosts* out);

}  // namespace paraplan::transformer

#endif  // PARAPLAN_ESTIMATOR_WORKLOADS_TRANSFORMER_ENDS_H_
