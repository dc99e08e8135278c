// How context parallelism exchanges a layer's attention where the model has sliding
// windows: as Transformer Engine lets Megatron-Core run it, and as PyTorch runs
// torchtitan's FlexAttention. The estimator prices that exchange
// (workloads/transformer_blocks.cc) and `--emit megatron` / `--emit megatron-bridge` state
// it per layer (cp_comm_type), so a plan runs as it was estimated. Header-only, on the
// estimator's input structs.
#ifndef PARAPLAN_ESTIMATOR_INPUTS_CP_EXCHANGE_H_
#define PARAPLAN_ESTIMATOR_INPUTS_CP_EXCHANGE_H_

#include "estimator/inputs/parallel_config.h"
#include "estimator/inputs/workload.h"

namespace paraplan {

// Transformer Engine's cp_comm_type: the K/V ring (p2p), all-to-alls that trade sequence
// for heads around the core (a2a, DeepSpeed-Ulysses style), or an all-gather of K/V
// (all_gather: gathered again backward). kGatherKept: PyTorch's context parallelism for
// FlexAttention, which all-gathers K and V before the core (flex_cp_allgather, a forward
// pre-hook), reduce-scatters their gradients, and keeps the gathered K / V for backward.
enum class CpExchange { kRing, kAllToAll, kAllGather, kGatherKept };

// Transformer Engine refuses its ring under a sliding window ("Context parallelism does
// not support sliding window attention with cp_comm_type='p2p'", context_parallel.py,
// attn_forward_func_with_cp). A Megatron-Core windowed layer therefore exchanges by
// all-to-all where the query and K/V heads a TP rank holds divide over the CP ranks
// (AttnFuncWithCPAndQKVOA2A splits heads), else by all-gather; full layers keep the ring
// (TransformerConfig.cp_comm_type takes one type a layer). Other stacks run their own
// ring (PyTorch's context_parallel). Heads: the query heads and K/V heads of the model.
inline CpExchange WindowCpExchange(int query_heads, int kv_heads, int tp, int cp, bool megatron_core) {
  if (cp <= 1 || !megatron_core || tp <= 0) return CpExchange::kRing;
  auto divides = [&](int heads) { return heads % tp == 0 && (heads / tp) % cp == 0; };
  return divides(query_heads) && divides(kv_heads) ? CpExchange::kAllToAll : CpExchange::kAllGather;
}

// The exchanges of the full and sliding-window layers of `spec` (resolved) at TP `tp` and
// CP `cp` under `framework`. torchtitan runs a model with windows through FlexAttention
// on every layer (models/gpt_oss/model.py: flex or varlen attention, and its context
// parallelism refuses varlen), so every layer gathers K / V (kGatherKept); Megatron-Core
// as WindowCpExchange says, MLA's K/V heads being its query heads; other stacks ring.
struct CpExchanges {
  CpExchange full = CpExchange::kRing, window = CpExchange::kRing;
};
inline CpExchanges CpExchangesOf(const TransformerSpec& spec, int tp, int cp, Framework framework) {
  const bool windowed = spec.num_layers > 0 && spec.IsWindowLayer(0);  // layer 0 is, whenever any is
  if (cp <= 1 || !windowed) return {};
  if (framework == Framework::kTorchtitan) return {CpExchange::kGatherKept, CpExchange::kGatherKept};
  const int heads = spec.num_attention_heads;
  return {CpExchange::kRing, WindowCpExchange(heads, spec.mla.enabled() ? heads : spec.num_kv_heads, tp, cp,
                                              RunsMegatronCore(framework))};
}

// Transformer Engine's name of `e` (cp_comm_type).
inline const char* CpExchangeName(CpExchange e) {
  switch (e) {
    case CpExchange::kAllToAll:
      return "a2a";
    case CpExchange::kAllGather:
    case CpExchange::kGatherKept:
      return "all_gather";
    case CpExchange::kRing:
      break;
  }
  return "p2p";
}

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_INPUTS_CP_EXCHANGE_H_
