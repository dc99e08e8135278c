// The data-parallel groups' traffic and what it costs an iteration: gradient
// reductions, ZeRO's parameter gathers (per layer under ZeRO-3 / FSDP, tensor by tensor
// under DeepSpeed), FSDP2's copies, each on its own stream beside the stretch of work it
// hides behind, costing what outlasts that work or what its thread blocks take from it,
// and sharing the node's NICs with traffic that leaves the node beside it.
//
// Part of the search's inner loop (Assemble): allocates nothing.
#ifndef PARAPLAN_ESTIMATOR_ITERATION_DATA_PARALLEL_H_
#define PARAPLAN_ESTIMATOR_ITERATION_DATA_PARALLEL_H_

#include "estimator/inputs/parallel_config.h"
#include "estimator/iteration/stage_costs.h"
#include "estimator/system/collectives.h"
#include "estimator/system/hardware.h"
#include "estimator/workloads/model_costs.h"

namespace paraplan {

// Data-parallel gradient groups: where a configuration's ranks that reduce gradients
// together sit.
struct DpGroups {
  GroupSpan dense;   // dp x cp ranks that hold the same dense parameters
  GroupSpan expert;  // ranks that hold the same experts
};

// ZeRO-3's collectives per layer and micro-batch, for `params` parameters of the slowest
// stage. FSDP (and any framework but DeepSpeed) gathers a layer's weights in one call
// each pass and reduce-scatters its gradients in one. DeepSpeed ZeRO-3
// (deepspeed/runtime/zero/partitioned_param_coordinator.py; defaults from
// deepspeed/runtime/zero/config.py) gathers each weight tensor in a call of its own, none
// under stage3_param_persistence_threshold (1e5 elements: kept whole on every rank),
// prefetches the next tensor while one computes unless a tensor alone reaches
// stage3_max_live_parameters (1e9), and reduces gradients in reduce_bucket_size (5e8
// element) buckets. It releases a gathered tensor after its module runs unless its trace
// shows the tensor used again within stage3_max_reuse_distance (1e9) elements of the
// modules run in between (__params_to_release): the last tensors before the LM head's
// backward stay gathered into their backward, and under full recompute a layer's later
// tensors stay from their recomputed forward into their backward, its earlier ones are
// gathered a third time (tensors of a stage's mean size; DeepSpeedBackwardGathers).
struct Zero3Calls {
  double gathers = 0;       // all-gathers per layer and micro-batch in forward
  double bwd_gathers = 0;   // in backward, its recomputed forward included
  double gather_bytes = 0;  // each
  double reduces = 0;       // reduce-scatters per layer (may be a fraction: a bucket spans layers)
  double reduce_bytes = 0;  // each
  bool prefetch = true;     // the next gather may start while this one's module computes
};
// `expert`: the group of the experts' parameters (its own weight matrices), else the rest.
Zero3Calls Zero3Collectives(const ModelCosts& model, const StageCosts& stages, const ParallelConfig& c,
                            double params, bool expert);

// One candidate's costs the data-parallel traffic runs beside.
struct DataParallelInputs {
  const ModelCosts& model;
  const StageCosts& stages;
  const ParallelConfig& c;  // normalized
  const Collectives& coll;
  const Hardware& hw;
  // Under moe_a2a_overlap, the share of the steps that pair one micro-batch's forward with
  // another's backward (stages.slowest counts every step paired), and, by pass, the expert
  // all-to-all and host-bound time a step that runs alone (the first forward, the last
  // backward, a pipeline's warm-up and cool-down) pays beyond it. A paired step's
  // per-layer gathers and reductions run beside the pair's whole length, as its host time
  // is pooled; the others' beside each pass.
  double paired_share = 0;
  PassTimes alone;
};

// Seconds a call of one group's collectives takes (0 where the ZeRO stage runs none):
// what the overlap switches leave alone, so a setting's variants of one rank order share
// them.
struct DpCalls {
  double all_reduce = 0;      // the gradients (ZeRO 0)
  double all_gather = 0;      // the weights (ZeRO 1-2: the step's; ZeRO-3: a layer's or a tensor's)
  double reduce_scatter = 0;  // the gradients (ZeRO 1-2), a layer's or a bucket's (ZeRO-3)
};
struct DpCallTimes {
  DpCalls dense, expert;
};
// The calls of `dense` and `expert` parameters (the fuller end stage's) over `groups`,
// written into `out` (filled in place: the search keeps it in its VariantCache).
void DataParallelCalls(const DataParallelInputs& in, const DpGroups& groups, double dense, double expert,
                       DpCallTimes* out);

// Seconds the data-parallel traffic of `dense` and `expert` parameters over `groups`
// (`calls`: DataParallelCalls of the same) adds to an iteration of `m` micro-batches
// beyond the work it runs beside. `beside_dp`: traffic leaving the node while the last
// backward runs (pipeline sends, TP groups across nodes), with which an overlapped
// reduction over the network shares the node's NICs. `in_passes_s`, when given, receives
// the part exposed inside the micro-batches' passes (every micro-batch's reductions, the
// layers' gathers, the first forward's gathers and the last backward's reductions but
// for what a per-chunk sync runs before or after all passes), where the GPU's copy
// engines run on beside it.
double DataParallelExposed(const DataParallelInputs& in, const DpGroups& groups, double dense, double expert,
                           double beside_dp, int m, const DpCallTimes& calls, double* in_passes_s = nullptr);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_ITERATION_DATA_PARALLEL_H_
