// How context parallelism exchanges a sliding-window layer's attention, as Transformer
// Engine lets Megatron-Core run it: the estimator prices that exchange
// (workloads/transformer_blocks.cc) and `--emit megatron` / `--emit megatron-bridge` state
// it per layer (cp_comm_type), so a plan runs as it was estimated. Plain integers only;
// no dependencies.
#ifndef PARAPLAN_ESTIMATOR_INPUTS_CP_EXCHANGE_H_
#define PARAPLAN_ESTIMATOR_INPUTS_CP_EXCHANGE_H_

namespace paraplan {

// Transformer Engine's cp_comm_type: the K/V ring (p2p), all-to-alls that trade sequence
// for heads around the core (a2a, DeepSpeed-Ulysses style), or an all-gather of K/V
// (all_gather).
enum class CpExchange { kRing, kAllToAll, kAllGather };

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

// Transformer Engine's name of `e` (cp_comm_type).
inline const char* CpExchangeName(CpExchange e) {
  switch (e) {
    case CpExchange::kAllToAll:
      return "a2a";
    case CpExchange::kAllGather:
      return "all_gather";
    case CpExchange::kRing:
      break;
  }
  return "p2p";
}

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_INPUTS_CP_EXCHANGE_H_
