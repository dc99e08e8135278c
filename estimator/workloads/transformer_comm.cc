#include "estimator/workloads/transformer_comm.h"

#include <algorithm>

namespace paraplan::transformer {

TpCollectives TpCosts(const Dims& x, const Collectives& coll, const GroupSpan& tp) {
  TpCollectives out;
  if (x.t <= 1) return out;
  const double bytes = x.T * x.h * x.p;
  out.all_reduce_s = coll.AllReduce(bytes, tp, x.tp_algorithm);
  out.all_gather_s = coll.AllGather(bytes, tp);
  out.all_gather_quantised_s =
      x.sp_gather_bytes > 0 ? coll.AllGather(x.T * x.h * x.sp_gather_bytes, tp) : out.all_gather_s;
  out.reduce_scatter_s = coll.ReduceScatter(bytes, tp);
  return out;
}

MoeDispatch Dispatch(const Dims& x, const Collectives& coll, const ModelShape& shape, double sent_rows,
                     const TokenSpread& spread, const GroupSpan& ep, const GroupSpan& etp_group) {
  MoeDispatch d;
  const int etp = shape.expert_tensor_parallel;
  const double bytes = sent_rows * x.h * x.p;
  d.dispatcher = shape.moe_dispatcher;
  if (shape.moe_dispatcher == MoeDispatcher::kAllGather) {
    const int grid = shape.expert_parallel * etp;
    if (grid <= 1) return d;
    const GroupSpan g = coll.Place(grid, 1);
    const double gathered = x.T * x.r * x.h * x.p * grid;  // each rank's own tokens, once
    d.seconds = 2 * (coll.AllGather(gathered, g) + coll.ReduceScatter(gathered, g));
    d.calls_per_direction = 2;
    return d;
  }
  double a2a = shape.moe_dispatcher == MoeDispatcher::kDeepEp ? coll.DedupAllToAll(bytes, spread, ep)
                                                              : coll.AllToAll(bytes, ep);
  if (shape.weigh_deepep && shape.moe_dispatcher == MoeDispatcher::kAllToAll) {
    const double dedup = coll.DedupAllToAll(bytes, spread, ep);
    if (dedup < a2a) {
      a2a = dedup;
      d.dispatcher = MoeDispatcher::kDeepEp;
    }
  }
  d.seconds = 4 * a2a;
  d.calls_per_direction = shape.expert_parallel > 1 ? 2 : 0;
  if (etp > 1) {
    d.seconds += 2 * (coll.AllGather(bytes * etp, etp_group) + coll.ReduceScatter(bytes * etp, etp_group));
    d.calls_per_direction += 2;
  }
  return d;
}

CpCosts ContextParallel(const Dims& x, const Collectives& coll, const GroupSpan& cp, const Part& core, double ovl,
                        CpExchange exchange) {
  CpCosts out;
  if (x.c <= 1) return out;
  const double kv_bytes = x.T * x.kv * (x.dqk + x.dv) / x.t * x.p;
  if (exchange == CpExchange::kAllToAll) {
    const double rows = x.T * x.a / x.t * x.p;  // this rank's queries x heads, in bytes a channel
    const double k = x.T * x.kv / x.t * x.dqk * x.p, v = x.T * x.kv / x.t * x.dv * x.p;
    const double pass = coll.AllToAll(rows * x.dqk, cp) + coll.AllToAll(k, cp) + coll.AllToAll(v, cp) +
                        coll.AllToAll(rows * x.dv, cp);
    out.fwd_exposed_s = pass;
    out.exposed_s = 2 * pass;
    out.calls_fwd = out.calls_bwd = 4;
    return out;
  }
  if (exchange == CpExchange::kAllGather || exchange == CpExchange::kGatherKept) {
    const double k = x.T * x.kv / x.t * x.dqk * x.p * x.c, v = x.T * x.kv / x.t * x.dv * x.p * x.c;  // gathered
    const double gather = coll.AllGather(k, cp) + coll.AllGather(v, cp);
    const bool again = exchange == CpExchange::kAllGather;  // Transformer Engine gathers again backward
    out.fwd_exposed_s = gather;
    out.exposed_s = gather + (again ? gather : 0) + coll.ReduceScatter(k, cp) + coll.ReduceScatter(v, cp);
    out.calls_fwd = 2;
    out.calls_bwd = again ? 4 : 2;
    return out;
  }
  const double step = coll.SendRecv(kv_bytes, cp.level);
  const double fwd = (x.c - 1) * step;
  const double bwd = 2 * (x.c - 1) * step;
  out.fwd_exposed_s = std::max(0.0, fwd - ovl * core.matmul_fwd_s);
  out.exposed_s = out.fwd_exposed_s + std::max(0.0, bwd - ovl * core.matmul_bwd_s);
  out.calls_fwd = x.c - 1;
  out.calls_bwd = 2 * (x.c - 1);
  return out;
}

}  // namespace paraplan::transformer
