#include "estimator/iteration/comm_schedule.h"

#include <algorithm>

#include "estimator/inputs/cp_exchange.h"
#include "estimator/iteration/assemble.h"

namespace paraplan {

namespace {

struct Builder {
  const SystemProfile& profile;
  const Collectives& coll;
  std::vector<CollectiveUse> out;

  void Add(const char* dim, CollectiveKind kind, const GroupSpan& g, double bytes, double calls, bool overlapped,
           CollectiveAlgorithm algo = CollectiveAlgorithm::kAuto) {
    if (g.size <= 1 || bytes <= 0 || calls <= 0) return;
    CollectiveUse u;
    u.dimension = dim;
    u.kind = kind;
    u.level = g.level;
    if (g.level < static_cast<int>(profile.network_levels.size())) u.level_name = profile.network_levels[g.level].name;
    u.group_size = g.size;
    u.stride = g.stride;
    u.bytes = bytes;
    u.calls = calls;
    u.overlapped = overlapped;
    u.algorithm = CollectiveAlgorithm::kRing;
    switch (kind) {
      case CollectiveKind::kAllReduce:
        u.seconds_per_call = coll.AllReduce(bytes, g, algo, &u.algorithm);
        break;
      case CollectiveKind::kAllGather:
        u.seconds_per_call = coll.AllGather(bytes, g);
        break;
      case CollectiveKind::kReduceScatter:
        u.seconds_per_call = coll.ReduceScatter(bytes, g);
        break;
      case CollectiveKind::kAllToAll:
        u.seconds_per_call = coll.AllToAll(bytes, g);
        break;
      case CollectiveKind::kSendRecv:
        u.seconds_per_call = coll.SendRecv(bytes, g.level);
        break;
    }
    out.push_back(u);
  }
  // DeepEP's dispatch or combine: the all-to-all of `bytes` (every copy) sent once per
  // node and rank it touches, forwarded inside the node (hierarchical where it crosses
  // nodes; where it stays in one, or is priced as a plain all-to-all, a direct exchange).
  void AddDedupAllToAll(const GroupSpan& g, double bytes, const TokenSpread& spread, double calls,
                        bool overlapped) {
    const size_t before = out.size();
    Add("ep", CollectiveKind::kAllToAll, g, bytes, calls, overlapped);
    if (out.size() == before) return;  // nothing to send
    Collectives::DedupFlows flows;
    out.back().seconds_per_call = coll.DedupAllToAll(bytes, spread, g, &flows);
    if (flows.to_node > 0) out.back().algorithm = CollectiveAlgorithm::kHierarchical;
    out.back().dedup_to_node_bytes = flows.to_node;
    out.back().dedup_to_rank_bytes = flows.to_rank;
  }
};

// What the per-layer collectives of one transformer stage read: the resolved spec, the
// tokens of one micro-batch on a GPU (after CP), TP, the element size, the stage's layers
// and the micro-batches; of the sequence-parallel all-gathers, the bytes an element and
// the share that move quantised (QuantisedSpGatherBytes: the attention's but MLA's, the
// dense MLPs'; as transformer_costs.cc charges them).
struct LayerScope {
  const TransformerSpec& spec;
  double T, t, p, layers, m;
  double gather_q = 0, gather_q_share = 0;
};

// Megatron-LM: two TP all-reduces of T x h forward and two backward per layer (and two
// more when full recompute re-runs the forward); with sequence parallelism each becomes
// an all-gather + reduce-scatter pair (Korthikanti et al. 2022, 4.2.2).
void AddTensorParallel(const LayerScope& s, const ParallelConfig& c, Builder* b) {
  const GroupSpan tp = b->coll.Place(c.tensor_parallel, 1);
  const double bytes = s.T * static_cast<double>(s.spec.hidden_size) * s.p;
  const double calls = (4 + (c.recompute == Recompute::kFull ? 2 : 0)) * s.layers * s.m;
  if (c.sequence_parallel && s.t > 1) {
    const double q_calls = calls * s.gather_q_share;
    const double q_bytes = s.T * static_cast<double>(s.spec.hidden_size) * s.gather_q;
    b->Add("tp", CollectiveKind::kAllGather, tp, q_bytes, q_calls, c.tp_comm_overlap.value_or(false));
    b->Add("tp", CollectiveKind::kAllGather, tp, bytes, calls - q_calls, c.tp_comm_overlap.value_or(false));
    b->Add("tp", CollectiveKind::kReduceScatter, tp, bytes, calls, c.tp_comm_overlap.value_or(false));
  } else {
    b->Add("tp", CollectiveKind::kAllReduce, tp, bytes, calls, c.tp_comm_overlap.value_or(false), c.tp_algorithm);
  }
}

// Context parallelism, by each layer kind's exchange (cp_exchange.h): the ring's c - 1 K/V
// block passes forward and twice that backward (Liu et al. 2023); Megatron-Core's
// sliding-window layers' all-to-alls (Q, K, V, O forward; dO, dQ, dK, dV backward) or
// K / V gathers (Transformer Engine again backward; torchtitan's FlexAttention on every
// layer of such a model once), reduce-scattering dK / dV.
void AddContextParallel(const LayerScope& s, const ParallelConfig& c, Builder* b) {
  const TransformerSpec& spec = s.spec;
  const GroupSpan cp = b->coll.Place(c.context_parallel, c.tensor_parallel);
  // Each K/V head's channels (MLA: every query head's key and value, nope + rope + v).
  const double kv_heads = spec.mla.enabled() ? spec.num_attention_heads : spec.num_kv_heads;
  const double head_kv = spec.mla.enabled() ? spec.mla.qk_nope_head_dim + spec.mla.qk_rope_head_dim +
                                                  spec.mla.v_head_dim
                                            : 2.0 * spec.head_dim;
  const double kv = s.T * kv_heads * head_kv / s.t * s.p;
  const double q = s.T * spec.num_attention_heads * head_kv / 2 / s.t * s.p;  // Q or O: half a head's K and V
  auto add = [&](CpExchange e, double share) {
    const double n = s.layers * share * s.m;  // this stage's layers of that kind, all micro-batches
    if (e == CpExchange::kRing) {
      b->Add("cp", CollectiveKind::kSendRecv, cp, kv, 3.0 * (c.context_parallel - 1) * n, true);
    } else if (e == CpExchange::kAllToAll) {
      b->Add("cp", CollectiveKind::kAllToAll, cp, q, 4 * n, false);       // Q, O, dO, dQ
      b->Add("cp", CollectiveKind::kAllToAll, cp, kv / 2, 4 * n, false);  // K, V, dK, dV
    } else {
      const double gathered = kv / 2 * c.context_parallel;
      b->Add("cp", CollectiveKind::kAllGather, cp, gathered, (e == CpExchange::kAllGather ? 4 : 2) * n, false);
      b->Add("cp", CollectiveKind::kReduceScatter, cp, gathered, 2 * n, false);
    }
  };
  const CpExchanges exchanges = CpExchangesOf(spec, c.tensor_parallel, c.context_parallel, c.framework);
  if (exchanges.full == exchanges.window) {
    add(exchanges.full, 1.0);
    return;
  }
  int windows = 0;
  for (int i = 0; i < spec.num_layers; ++i) windows += spec.IsWindowLayer(i) ? 1 : 0;
  const double window_share = double{1.0} * windows / std::max(1, spec.num_layers);
  add(exchanges.full, 1 - window_share);
  add(exchanges.window, window_share);
}

// MoE, by the dispatcher the estimate ran (ModelCosts::moe_dispatcher; transformer_comm.h
// Dispatch): dispatch and combine all-to-all forward and backward per MoE layer (GShard)
// over the expert grid (expert-TP innermost, then EP, as transformer_costs.cc places it),
// DeepEP's sent once per node and rank touched; or every token of the grid all-gathered
// and reduce-scattered back twice. Under moe_a2a_overlap they run beside another
// micro-batch's compute.
void AddExpertParallel(const LayerScope& s, const ParallelConfig& c, MoeDispatcher dispatcher, Builder* b) {
  const TransformerSpec& spec = s.spec;
  if (!spec.is_moe()) return;
  const int etp = c.ExpertTensorParallel();
  const double r = c.sequence_parallel && s.t > 1 ? 1 / s.t : 1;
  const double moe_layers = double{1.0} * spec.NumMoeLayers() * s.layers / spec.num_layers;  // this stage's share
  const double n = moe_layers * s.m;
  if (dispatcher == MoeDispatcher::kAllGather) {
    const GroupSpan grid = b->coll.Place(c.expert_parallel * etp, 1);
    const double gathered = s.T * r * static_cast<double>(spec.hidden_size) * s.p * grid.size;
    b->Add("ep", CollectiveKind::kAllGather, grid, gathered, 2 * n, false);
    b->Add("ep", CollectiveKind::kReduceScatter, grid, gathered, 2 * n, false);
    return;
  }
  const GroupSpan ep = b->coll.Place(c.expert_parallel, etp);
  const double sent = s.T * r * spec.moe.top_k * spec.moe.load_imbalance * static_cast<double>(spec.hidden_size) * s.p;
  if (dispatcher == MoeDispatcher::kDeepEp) {
    const TokenSpread spread{static_cast<double>(spec.moe.top_k), static_cast<double>(spec.moe.num_experts),
                             spec.moe.router_num_groups, spec.moe.router_group_topk};
    b->AddDedupAllToAll(ep, sent, spread, 4 * n, c.moe_a2a_overlap);
  } else {
    b->Add("ep", CollectiveKind::kAllToAll, ep, sent, 4 * n, c.moe_a2a_overlap);
  }
  if (etp > 1) {
    const GroupSpan etp_group = b->coll.Place(etp, 1);
    b->Add("etp", CollectiveKind::kAllGather, etp_group, sent * etp, 2 * n, false);
    b->Add("etp", CollectiveKind::kReduceScatter, etp_group, sent * etp, 2 * n, false);
  }
}

}  // namespace

std::vector<CollectiveUse> DescribeCollectives(const Workload& workload, const ParallelConfig& c,
                                               const SystemProfile& profile, const Collectives& coll,
                                               const ModelCosts& model, const StageCosts& stages) {
  Builder b{profile, coll, {}};
  const double m = std::max(1, c.NumMicroBatches());
  const double layers = std::max(1, stages.slowest_layers);
  using K = CollectiveKind;

  if (workload.kind == Workload::Kind::kTransformer) {
    const TransformerSpec spec = workload.transformer.Resolved();
    LayerScope scope{spec, double{1.0} * c.micro_batch_size * spec.seq_length / c.context_parallel,
                     static_cast<double>(c.tensor_parallel), BytesPerElement(workload.precision), layers, m};
    scope.gather_q = QuantisedSpGatherBytes(workload, c.framework);
    if (scope.gather_q > 0) {
      int dense = 0;
      for (int i = 0; i < spec.num_layers; ++i) dense += spec.IsMoeLayer(i) ? 0 : 1;
      const double dense_share = spec.num_layers > 0 ? static_cast<double>(dense) / spec.num_layers : 1;
      scope.gather_q_share = ((spec.mla.enabled() ? 0 : 1) + dense_share) / 2;
    }
    AddTensorParallel(scope, c, &b);
    AddContextParallel(scope, c, &b);
    AddExpertParallel(scope, c, model.moe_dispatcher, &b);
  }
  // Pipeline: one activation forward and one gradient backward per micro-batch and
  // chunk boundary.
  if (c.pipeline_parallel > 1) {
    b.Add("pp", K::kSendRecv, RankPair(coll, PipelineStride(c)), model.pp_send_bytes,
          2 * m * c.virtual_pipeline_stages, false);
    if (const double bytes = EmbeddingSyncBytes(model, c); bytes > 0) {  // the end stages' embedding copies
      b.Add("emb", K::kAllReduce, RankPair(coll, (c.pipeline_parallel - 1) * PipelineStride(c)), bytes, 1, false);
    }
  }
  // Data parallel, by ZeRO stage (as assemble.cc charges it).
  const DpGroups groups = PlaceDataParallel(c, coll);
  const double dense = stages.max_dense_params;
  const double experts = stages.max_expert_params;
  for (const auto& [g, params, expert] :
       {std::tuple{groups.dense, dense, false}, std::tuple{groups.expert, experts, true}}) {
    const double grad = params * GradientBytesOf(model, c).reduced;
    const double gather = params * WeightBytesOf(model, c).gathered;
    const bool ovl = OverlapsGradientReduction(c);
    switch (c.zero_stage) {
      case 0:
        b.Add("dp", K::kAllReduce, g, grad, 1, ovl, c.dp_algorithm);
        if (DeepSpeedBf16Optimizer(model, c)) b.Add("dp", K::kAllGather, g, gather, 1, false);
        break;
      case 1:
      case 2:
        b.Add("dp", K::kReduceScatter, g, grad, c.zero_stage == 1 ? 1 : m, ovl);
        b.Add("dp", K::kAllGather, g, gather, 1, OverlapsParameterGather(c));
        break;
      default: {
        // ZeRO-3 prefetches under either flag (DeepSpeed too: its bucket hooks).
        const bool prefetch = c.overlap_param_gather || c.overlap_grad_reduce;
        const Zero3Calls z = Zero3Collectives(model, stages, c, params, expert);
        if (ShardsOncePerIteration(c)) {  // gathered once, reduced once after the last backward
          b.Add("dp", K::kAllGather, g, z.gather_bytes, layers, prefetch);
          b.Add("dp", K::kReduceScatter, g, z.reduce_bytes, layers, false);
          break;
        }
        b.Add("dp", K::kAllGather, g, z.gather_bytes, (z.gathers + z.bwd_gathers) * layers * m, prefetch);
        b.Add("dp", K::kReduceScatter, g, z.reduce_bytes, z.reduces * layers * m, prefetch);
        break;
      }
    }
  }
  return std::move(b.out);
}

}  // namespace paraplan
