// The collectives one transformer layer runs on its GPU, priced per call on the job's
// network (Collectives): tensor parallelism's all-reduce or all-gather / reduce-scatter
// pair, the MoE token dispatch and combine (all-to-all, DeepEP, all-gather), and context
// parallelism's ring of K/V blocks with what of it the attention core hides. Internal to
// estimator/workloads (transformer_costs.cc assembles them into layers); pure functions.
#ifndef PARAPLAN_ESTIMATOR_WORKLOADS_TRANSFORMER_COMM_H_
#define PARAPLAN_ESTIMATOR_WORKLOADS_TRANSFORMER_COMM_H_

#include "estimator/system/collectives.h"
#include "estimator/workloads/model_costs.h"
#include "estimator/workloads/transformer_blocks.h"

namespace paraplan::transformer {

// Tensor-parallel collectives of one activation tensor (b*s/c x h) —
// Shoeybi et al. 2019 (Megatron-LM): all-reduce; with sequence parallelism an
// all-gather + reduce-scatter pair of the same volume (Korthikanti et al. 2022, 4.2.2).
// Under FP8 / FP4 Transformer Engine's linears all-gather the sequence-parallel input (and
// in backward the row-parallel linear's output gradient) already quantised, at the
// recipe's bytes an element (distributed.py gather_along_first_dim: _all_gather_fp8,
// _mxfp8, _nvfp4, blockwise); reduce-scatters stay 16-bit.
struct TpCollectives {
  double all_reduce_s = 0;
  double all_gather_s = 0;
  double all_gather_quantised_s = 0;  // = all_gather_s unless the linears are FP8 / FP4
  double reduce_scatter_s = 0;
};
TpCollectives TpCosts(const Dims& x, const Collectives& coll, const GroupSpan& tp);

// Moving one MoE layer's tokens to their experts and back, forward and backward.
struct MoeDispatch {
  double seconds = 0;
  double calls_per_direction = 0;
  MoeDispatcher dispatcher = MoeDispatcher::kAllToAll;  // the one costed
};

// `sent_rows` token copies leave this GPU (its tokens x top_k x imbalance).
// All-to-all (GShard; Megatron-Core MoEAlltoAllTokenDispatcher): dispatch and combine
// each way; with expert-TP the received rows are all-gathered over it before the
// experts and reduce-scattered after. DeepEP: the same all-to-alls, one copy per node
// and per rank touched (`spread`: the token's top_k distinct experts, and the groups
// they are limited to). All-gather
// (MoEAllGatherTokenDispatcher): every token of the expert grid is gathered to every
// rank of it, the outputs reduce-scattered back, whatever top_k is. With
// `shape.weigh_deepep` the all-to-all is weighed against DeepEP and the faster kept.
MoeDispatch Dispatch(const Dims& x, const Collectives& coll, const ModelShape& shape, double sent_rows,
                     const TokenSpread& spread, const GroupSpan& ep, const GroupSpan& etp_group);

// Context parallelism's exchange of a layer's attention, exposed seconds and calls each
// way. Ring (ring attention): each rank passes its K/V block around the ring, c - 1
// steps forward and twice that backward (dK, dV); overlapped with the attention core
// (Liu et al. 2023, Ring Attention). All-to-all: Q, K, V before the core and O after it
// forward, dO before and dQ, dK, dV after backward, each of this rank's tensor; the
// core waits for them (exposed). All-gather: K and V gathered forward, again backward
// (Transformer Engine; not again where the gathered K / V are kept, PyTorch's flex), and
// dK, dV reduce-scattered; exposed too.
struct CpCosts {
  double exposed_s = 0, fwd_exposed_s = 0, calls_fwd = 0, calls_bwd = 0;
};
CpCosts ContextParallel(const Dims& x, const Collectives& coll, const GroupSpan& cp, const Part& core, double ovl,
                        CpExchange exchange = CpExchange::kRing);

}  // namespace paraplan::transformer

#endif  // PARAPLAN_ESTIMATOR_WORKLOADS_TRANSFORMER_COMM_H_
