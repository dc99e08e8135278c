// Muon's orthogonalisation as Megatron-Core runs it (optimizer "muon" / "dist_muon",
// emerging_optimizers' newton_schulz): each weight matrix's momentum-updated gradient goes
// through muon_num_ns_steps = 5 Newton-Schulz steps at its full size (muon_tp_mode
// "duplicated": a TP rank gathers the whole matrix and orthogonalises it itself; Q, K and V
// apart, muon_split_qkv), in fp32 with matmul precision "medium" (16-bit tensor cores).
// A step on an m x n matrix (m <= n) is three GEMMs: A = X X^T (m x m x n), B = b A + c A^2
// (m x m x m), X' = a X + B X (m x n x m). Embeddings, the LM head, norms and biases take
// Adam (muon_scalar_optimizer) and no such step.
//
// MuonStepTimes gives a model's orthogonalisation seconds per decoder layer on one GPU that
// does all of it, averaged over the layers: the matrices every rank of an expert group holds
// (attention, dense MLP, shared experts, router) and the routed experts' (all of them). The
// assembly divides them among the ranks that share the work (model_costs.h, MuonStepS).
#ifndef PARAPLAN_ESTIMATOR_WORKLOADS_MUON_H_
#define PARAPLAN_ESTIMATOR_WORKLOADS_MUON_H_

#include "estimator/inputs/workload.h"
#include "estimator/system/hardware.h"

namespace paraplan {

inline constexpr int kMuonNewtonSchulzSteps = 5;  // optimizer_config.py muon_num_ns_steps

struct MuonStepTimes {
  double dense_s_per_layer = 0;    // attention, dense MLP, shared experts, router
  double experts_s_per_layer = 0;  // every routed expert of the layer
};

// Seconds of one m x n matrix's orthogonalisation on `hw` (any order of m, n).
double NewtonSchulzSeconds(const Hardware& hw, double m, double n);

// `t` resolved (TransformerSpec::Resolved).
MuonStepTimes MuonStepTimesOf(const TransformerSpec& t, const Hardware& hw);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_WORKLOADS_MUON_H_
