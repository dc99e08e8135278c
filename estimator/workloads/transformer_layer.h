// One transformer layer's costs on one GPU for one micro-batch, assembled from its
// sub-blocks (transformer_blocks.h: the attention core, the attention's linears, the
// residual path, the MLP): compute, the exposed tensor- and context-parallel collectives,
// the host's launches beyond the GPU's time (split at a MoE layer's token dispatch),
// recompute and what each recompute choice keeps. transformer_costs.cc builds the layers
// of a model with it. Pure functions. Internal to estimator/workloads.
#ifndef PARAPLAN_ESTIMATOR_WORKLOADS_TRANSFORMER_LAYER_H_
#define PARAPLAN_ESTIMATOR_WORKLOADS_TRANSFORMER_LAYER_H_

#include "estimator/system/hardware.h"
#include "estimator/workloads/model_costs.h"
#include "estimator/workloads/transformer_blocks.h"
#include "estimator/workloads/transformer_comm.h"
#include "estimator/workloads/transformer_recompute.h"

namespace paraplan::transformer {

// An attention core and context parallelism's exchange around it (the ring, or under a
// sliding window in Megatron-Core the all-to-all or all-gather: WindowCpExchange).
struct Core {
  Part part;
  CpCosts cp;
};

// What every layer of one configuration shares: the system, the TP collectives, and the
// host's time per kernel and per checkpoint.
struct LayerContext {
  const Hardware& hw;
  const ModelShape& shape;
  const TpCollectives& tpc;
  double ovl = 0;
  double host_kernel_s = 0;  // eager launches, or ~nothing beyond the GPU gap under graphs
  double checkpoint_s = 0;   // each checkpointed region (one per layer) per micro-batch
};

// One layer from its sub-blocks: the attention core, the attention's linears, the
// residual path and the MLP (dense or MoE, `extras`); `mla_up` the MLA up-projections
// (nullptr without MLA), `ep_s` the expert-parallel time, `moe_kernels` the router's and
// dispatcher's kernels forward, `ep_calls` the EP collectives per direction.
// `host_launch`, where given, receives the host's time launching the layer's kernels,
// by pass (the backward's with what it recomputes): no step of it runs shorter.
BlockCosts AssembleLayer(const LayerContext& L, const Dims& x, const Core& attention, const Part& attn, const Part& resid,
                         const Part& mlp, const Part* mla_up, const MlpExtras& extras, double ep_s, double moe_kernels,
                         double ep_calls, PassTimes* host_launch = nullptr);

}  // namespace paraplan::transformer

#endif  // PARAPLAN_ESTIMATOR_WORKLOADS_TRANSFORMER_LAYER_H_
