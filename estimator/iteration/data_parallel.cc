#include "estimator/iteration/data_parallel.h"

#include <algorithm>
#include <cmath>

#include "estimator/inputs/deepspeed_zero3.h"

namespace paraplan {

namespace {

// DeepSpeed ZeRO-3's gathers per layer and micro-batch in backward (its recomputed
// forward included): a tensor released after its module runs is gathered again at its
// next use, and it is released unless the modules run in between hold fewer than
// stage3_max_reuse_distance elements (partitioned_param_coordinator.py,
// __params_to_release). `tensors` weight tensors on the stage, `n` a layer's, each of
// `size` elements; `post` the LM head's block (its backward follows its forward at once).
double DeepSpeedBackwardGathers(double tensors, double n, double size, double layers, const BlockCosts& post,
                                Recompute recompute) {
  constexpr double kR = deepspeed::kMaxReuseDistance;
  const double head = post.params;
  const double head_kept = std::min(tensors, post.weight_tensors);
  const double others = tensors - head_kept;
  double kept = head_kept;
  if (recompute != Recompute::kFull) {
    // Forward to backward, a tensor j tensors before the head waits while the rest of the
    // forward and the backward back to it run: 2 (head + j size) elements.
    kept += std::clamp(std::ceil((kR / 2 - head) / size), 0.0, others);
  } else {
    // Forward to recomputed forward: the layer's other tensors once, every later layer's
    // three times (forward, recomputed forward, backward), the head twice.
    const double last_layers = std::ceil((kR - 2 * head - (n - 1) * size) / (3 * n * size));
    kept += std::min(others, n * std::clamp(last_layers, 0.0, layers));
  }
  double bwd = (tensors - kept) / layers;
  // Recomputed forward to backward, a tensor m tensors before the layer's end waits 2 m size.
  if (recompute == Recompute::kFull) bwd += n - std::min(n, std::ceil(kR / (2 * size)));
  return bwd;
}

// The data-parallel groups' traffic (gradient reductions, ZeRO's parameter gathers) by
// the stretch of work it runs beside on its own stream. The dense and the expert groups
// share the stretch (and the node's NICs), so their traffic is summed before it is hidden.
struct DpTraffic {
  double first_fwd = 0;   // beside the first micro-batch's forward (ZeRO-1/2's parameter all-gather)
  double last_bwd = 0;    // beside the last micro-batch's backward (all-reduce, ZeRO-1's reduce-scatter)
  double every_bwd = 0;   // beside every micro-batch's backward (ZeRO-2's reduce-scatter)
  double layer_fwd = 0;   // beside each layer's forward, every micro-batch (ZeRO-3 / FSDP, one layer ahead)
  double layer_bwd = 0;   // beside each layer's backward, every micro-batch
  double exposed = 0;     // not overlapped: blocking collectives, prefetch fill and drain
  // The overlapped stretches' seconds, each weighted by the share of a node-wide ring's
  // SMs its collectives hold (Collectives::SmShare): their mean share is held / seconds.
  double first_fwd_held = 0, last_bwd_held = 0, every_bwd_held = 0, layer_fwd_held = 0, layer_bwd_held = 0;

  // Adds one group's traffic, its collectives holding `share` of the reference SMs.
  void Add(const DpTraffic& g, double share) {
    first_fwd += g.first_fwd, first_fwd_held += share * g.first_fwd;
    last_bwd += g.last_bwd, last_bwd_held += share * g.last_bwd;
    every_bwd += g.every_bwd, every_bwd_held += share * g.every_bwd;
    layer_fwd += g.layer_fwd, layer_fwd_held += share * g.layer_fwd;
    layer_bwd += g.layer_bwd, layer_bwd_held += share * g.layer_bwd;
    exposed += g.exposed;
  }
};

// Hardware::ExposedBeside for `seconds` of traffic whose collectives hold `held` seconds'
// worth of a node-wide ring's SMs (their share, weighted by time): where the traffic fits
// its window the overlapped stretch costs 1 - overlap_efficiency of `held` (no division:
// this runs for every candidate of a search), else as ExposedBeside with the mean share.
double ExposedHeld(const Hardware& hw, double seconds, double held, double window) {
  if (!(seconds > 0)) return 0;
  if (seconds > window) return hw.ExposedBeside(seconds, window, held / seconds);
  return (1.0 - hw.overlap_efficiency()) * held;
}

// The stretches of one micro-batch's critical path that the data-parallel stream runs
// beside (CriticalPath): compute and the exposed collectives of the other dimensions,
// which use other links or other SMs' time (an expert all-to-all over NVLink beside an
// FSDP gather over InfiniBand), and the host-bound stretches, where the compute stream
// idles and a gather or reduction runs on.
using DpWindows = PassTimes;

struct DpContext {
  const ModelCosts& model;
  const StageCosts& stages;
  const ParallelConfig& c;
  const Collectives& coll;
  const Hardware& hw;
  int m;            // micro-batches per iteration
  DpWindows mb;     // one micro-batch's windows (averaged over paired and lone steps)
  DpWindows layer;  // one layer's
  double paired_share = 0;  // DataParallelInputs
  DpWindows layer_paired, layer_alone;  // one layer's in a paired step and in a lone one
};

// torchtitan's FSDP2 shards parameter by parameter: each all-gather lands in a flat
// buffer that a copy-out kernel splits into the parameters' own tensors (read and write
// the gathered bytes), and each reduce-scatter first copies the parameters' 16-bit
// gradients into a flat buffer of the reduce dtype -- both on the compute stream
// (torch/distributed/fsdp/_fully_shard: FSDPParamGroup.wait_for_unshard runs
// foreach_all_gather_copy_out, foreach_reduce runs foreach_reduce_scatter_copy_in before
// the reduce-scatter stream waits on it). Megatron-FSDP, FSDP1 and DeepSpeed gather into
// flat buffers the parameters are views of ("due to per-parameter sharding, FSDP2 issues
// more data copy than MFSDP": Megatron-FSDP's runtime_schedule.md).
struct Fsdp2Copies {
  double out = 0;  // per all-gather
  double in = 0;   // per reduce-scatter
};
Fsdp2Copies Fsdp2CopyTimes(const DpContext& x, double layer_params) {
  if (x.c.framework != Framework::kTorchtitan) return {};
  const double gathered = WeightBytesOf(x.model, x.c).gathered;
  const double reduced = GradientBytesOf(x.model, x.c).reduced;
  return {x.hw.MemoryTime(2 * layer_params * gathered),
          x.hw.MemoryTime(layer_params * (x.model.param_gather_bytes_per_param + reduced))};
}

// A prefetched pass over `layers` layers (ZeRO-3 / FSDP one layer ahead, DeepSpeed one
// module ahead) is a pipeline of its collectives beside the layers' work: the first
// collective of a pass (the forward's first gather, the backward's) waits for nothing to
// hide behind, and the last (the first layer's reduce-scatter) for nothing after it —
// the fill and drain of that pipeline, exposed in full each micro-batch (the next
// micro-batch's first gather shares the links with the previous one's last reduction).
// `seconds` of one call, and its share of a layer's traffic that is not beside the work.
struct PrefetchFill {
  double seconds = 0, per_layer = 0;
  static PrefetchFill Of(double call_s, double layers) { return {call_s, call_s / layers}; }
};

// One data-parallel group's traffic (`params` parameters, `k` its calls' seconds each)
// into `t`, by the stretch it runs beside.
void GroupDpTraffic(const DpContext& x, double params, bool expert, const DpCalls& k, DpTraffic* t) {
  const ParallelConfig& c = x.c;
  const bool overlap_reduce = OverlapsGradientReduction(c);
  if (c.zero_stage == 0) {
    (overlap_reduce ? t->last_bwd : t->exposed) += k.all_reduce;
    if (DeepSpeedBf16Optimizer(x.model, c)) t->exposed += k.all_gather;
    return;
  }
  if (c.zero_stage <= 2) {
    (OverlapsParameterGather(c) ? t->first_fwd : t->exposed) += k.all_gather;
    const double rs = k.reduce_scatter;
    if (c.zero_stage == 1) {
      // Distributed optimizer: one reduce-scatter of the accumulated gradients per
      // iteration, overlapped with the last micro-batch's backward.
      (overlap_reduce ? t->last_bwd : t->exposed) += rs;
    } else {
      // ZeRO-2 keeps only its gradient shard, so it reduce-scatters every micro-batch
      // (DeepSpeed stage 2: gradient buckets reduced during each backward; Rajbhandari et
      // al. SC'20 sec. 5.2).
      if (overlap_reduce) {
        t->every_bwd += rs;
      } else {
        t->exposed += x.m * rs;
      }
    }
    return;
  }
  const int m = x.m;
  const double layers = std::max(1, x.stages.slowest_layers);
  const bool prefetch = c.overlap_param_gather || c.overlap_grad_reduce;
  const Zero3Calls z = Zero3Collectives(x.model, x.stages, c, params, expert);
  if (c.framework == Framework::kDeepSpeed) {
    // DeepSpeed ZeRO-3 (Zero3Collectives): tensor by tensor, each gather hidden behind
    // the module before it where it is prefetched; the gradient buckets leave under
    // overlap_comm beside the backward, on their own stream but through the same links
    // as the backward's gathers, so the two share the backward's window -- as do the
    // dense and the expert groups' (summed in DpTraffic, hidden once by DpExposed).
    const double ag = k.all_gather;
    const double rs_layer = z.reduces * k.reduce_scatter;
    const bool ahead = prefetch && z.prefetch;
    // Prefetched, each pass's first gather has nothing before it to hide behind, nor the
    // last reduce bucket anything after it (PrefetchFill).
    const PrefetchFill fwd_fill = PrefetchFill::Of(ahead && z.gathers > 0 ? ag : 0, layers);
    const PrefetchFill bwd_fill = PrefetchFill::Of(ahead && z.bwd_gathers > 0 ? ag : 0, layers);
    const PrefetchFill drain =
        PrefetchFill::Of(c.overlap_grad_reduce && z.reduces > 0 ? k.reduce_scatter : 0, layers);
    if (ahead) t->layer_fwd += z.gathers * ag - fwd_fill.per_layer;
    t->layer_bwd += (ahead ? z.bwd_gathers * ag - bwd_fill.per_layer : 0) +
                    (c.overlap_grad_reduce ? rs_layer - drain.per_layer : 0);
    const double blocking = (ahead ? 0 : (z.gathers + z.bwd_gathers) * ag) + (c.overlap_grad_reduce ? 0 : rs_layer);
    t->exposed += m * (layers * blocking + fwd_fill.seconds + bwd_fill.seconds + drain.seconds);
    return;
  }
  // ZeRO-3 / FSDP: per layer and micro-batch, all-gather its weights before forward and
  // again before backward, reduce-scatter its gradients after backward (Zhao et al.
  // 2023, PyTorch FSDP, sec. 3.3; Megatron-FSDP reduce-scatters every micro-batch under
  // optim_grads_params). Prefetching one layer ahead hides a layer's collectives behind
  // the neighbouring layer's work and no further; each call pays its latency, which
  // dominates at thousands of ranks.
  const double ag_layer = k.all_gather;
  const double rs_layer = k.reduce_scatter;
  const Fsdp2Copies copies = Fsdp2CopyTimes(x, params / layers);
  if (ShardsOncePerIteration(c)) {
    // Each layer gathered once, prefetched beside the first micro-batch's forward; the
    // gradients reduce-scattered once after the last backward, one layer after another.
    (prefetch ? t->first_fwd : t->exposed) += layers * ag_layer;
    t->exposed += layers * (rs_layer + copies.out + copies.in);
    return;
  }
  // torchtitan keeps its last block gathered from forward into backward (apply_fsdp:
  // reshard_after_forward is off for the last block, "since FSDP would prefetch it
  // immediately"): layers - 1 gathers a backward.
  const bool last_kept = c.framework == Framework::kTorchtitan;
  const double bwd_gathers = last_kept ? (layers - 1) / layers : 1.0;
  if (prefetch) {
    // One layer ahead: the forward's first gather, the backward's first (unless the last
    // layer stayed gathered) and its last reduce-scatter have no layer's work beside them.
    const PrefetchFill fwd_fill = PrefetchFill::Of(ag_layer, layers);
    const PrefetchFill bwd_fill = PrefetchFill::Of(last_kept ? 0 : ag_layer, layers);
    const PrefetchFill drain = PrefetchFill::Of(rs_layer, layers);
    t->layer_fwd += ag_layer - fwd_fill.per_layer;
    t->layer_bwd += bwd_gathers * ag_layer - bwd_fill.per_layer + rs_layer - drain.per_layer;
    t->exposed += m * (fwd_fill.seconds + bwd_fill.seconds + drain.seconds);
  } else {
    t->exposed += m * layers * ((1 + bwd_gathers) * ag_layer + rs_layer);
  }
  t->exposed += m * layers * ((1 + bwd_gathers) * copies.out + copies.in);
}

// The calls GroupDpTraffic prices for one group (`params` parameters over `g`), each
// once: the gradients' all-reduce (ZeRO 0), the weights' all-gather, and the
// gradients' reduce-scatter (ZeRO 1-2) or ZeRO-3's per-layer gather and reduce.
void GroupCalls(const DataParallelInputs& in, const GroupSpan& g, double params, bool expert, DpCalls* out) {
  DpCalls& k = *out;
  k = DpCalls{};
  if (g.size <= 1 || params <= 0) return;
  const ParallelConfig& c = in.c;
  const Collectives& coll = in.coll;
  const double grad_bytes = params * GradientBytesOf(in.model, c).reduced;
  const double gather_bytes = params * WeightBytesOf(in.model, c).gathered;
  if (c.zero_stage == 0) {
    k.all_reduce = coll.AllReduce(grad_bytes, g, c.dp_algorithm);
    if (DeepSpeedBf16Optimizer(in.model, c)) k.all_gather = coll.AllGather(gather_bytes, g);
  } else if (c.zero_stage <= 2) {
    coll.GatherAndScatter(gather_bytes, grad_bytes, g, &k.all_gather, &k.reduce_scatter);
  } else {
    const Zero3Calls z = Zero3Collectives(in.model, in.stages, c, params, expert);
    coll.GatherAndScatter(z.gather_bytes, z.reduce_bytes, g, &k.all_gather, &k.reduce_scatter);
  }
}

// Adds one data-parallel group's traffic (`params` parameters reduced over `g`, `k` its
// calls) to `t`.
void AddDpTraffic(const DpContext& x, const GroupSpan& g, double params, bool expert, const DpCalls& k,
                  DpTraffic* t) {
  if (g.size <= 1 || params <= 0) return;
  const double sms = x.coll.SmShare(g);
  DpTraffic mine;
  GroupDpTraffic(x, params, expert, k, &mine);
  t->Add(mine, sms);
}

// What the data-parallel traffic adds to the iteration beyond the work it hides behind.
// `beside_dp`: traffic leaving the node while the last backward runs (pipeline sends, TP
// groups across nodes), with which an overlapped reduction over the network shares the
// node's NICs. Two transfers sharing a link at once each get half of it (max-min
// fairness): an overlapped reduction of d seconds beside a seconds of blocking traffic
// delays that traffic by min(a, d) (work-conserving link; in the limits d >> a and
// d << a the iteration grows by a and by d), d being what of the last backward's
// reduction runs beside it (under per-chunk sync chunk 0's share runs after it). That
// part of the reduction runs beside the blocking traffic, not beside the compute: the
// rest alone is hidden behind (or outlasts, or slows) the backward, so overlapping never
// costs more than the reduction run after the backward would.
double DpExposed(const DpContext& x, const DpTraffic& t, double beside_dp, double* in_passes_s) {
  const Hardware& hw = x.hw;
  const int m = x.m;
  const double layers = std::max(1, x.stages.slowest_layers);
  auto beside = [&](double seconds, double held, double window) { return ExposedHeld(hw, seconds, held, window); };
  // `seconds` of reduction (holding `held`) beside a backward of `window` whose blocking
  // traffic it shares the NICs with.
  auto beside_bwd = [&](double seconds, double held, double window) {
    const double shared = std::min(beside_dp, seconds);
    if (!(shared > 0)) return beside(seconds, held, window);
    const double rest = seconds - shared;
    return shared + beside(rest, held * (rest / seconds), window);
  };
  double first = 0, last = 0;
  double outside = 0;  // of first and last, what runs before the first forward or after the last backward
  if (SyncsPerModelChunk(x.c)) {
    // Chunk 0's share waits for nothing to hide behind (its gather before the first
    // forward, its reduction after the last backward); the other chunks' run beside p
    // chunk-passes each (the round's forwards of the chunk before, the last round's
    // backwards of the chunks after).
    const double per_chunk = 1.0 / x.c.virtual_pipeline_stages;  // (one division: this runs per candidate)
    const double rest = 1 - per_chunk;
    const double passes = rest * std::min(x.c.pipeline_parallel, m);  // (v - 1) p chunk-passes, in micro-batches
    auto chunked = [&](double seconds, double held, double pass_s) {
      return seconds * per_chunk + beside(rest * seconds, rest * held, passes * pass_s);
    };
    first = chunked(t.first_fwd, t.first_fwd_held, x.mb.fwd);
    // (Chunk 0's share runs after the backward, sharing no link.)
    last = t.last_bwd * per_chunk + beside_bwd(rest * t.last_bwd, rest * t.last_bwd_held, passes * x.mb.bwd);
    outside = (t.first_fwd + t.last_bwd) * per_chunk;
  } else {
    first = beside(t.first_fwd, t.first_fwd_held, x.mb.fwd);
    last = beside_bwd(t.last_bwd, t.last_bwd_held, x.mb.bwd);
  }
  double per_layer = beside(t.layer_fwd, t.layer_fwd_held, x.layer.fwd) + beside(t.layer_bwd, t.layer_bwd_held, x.layer.bwd);
  if (x.paired_share > 0) {
    // A paired step's layer traffic beside the pair's whole length; a lone step's beside
    // each of its passes.
    const double pooled = beside(t.layer_fwd + t.layer_bwd, t.layer_fwd_held + t.layer_bwd_held,
                                 x.layer_paired.fwd + x.layer_paired.bwd);
    const double apart = beside(t.layer_fwd, t.layer_fwd_held, x.layer_alone.fwd) +
                         beside(t.layer_bwd, t.layer_bwd_held, x.layer_alone.bwd);
    per_layer = x.paired_share * pooled + (1 - x.paired_share) * apart;
  }
  const double in_passes = m * beside_bwd(t.every_bwd, t.every_bwd_held, x.mb.bwd) + m * layers * per_layer;
  // The first forward's gathers and the last backward's reductions lengthen those passes
  // as the others' do theirs: the copy engines run on beside all of it (until stop 69
  // only beside the others', so with one micro-batch a longer pass hid its time twice,
  // once under the reductions and once under the copies).
  if (in_passes_s != nullptr) *in_passes_s = in_passes + first + last - outside;
  return t.exposed + first + last + in_passes;
}

}  // namespace

Zero3Calls Zero3Collectives(const ModelCosts& model, const StageCosts& stages, const ParallelConfig& c,
                            double params, bool expert) {
  const double layers = std::max(1, stages.slowest_layers);
  const double gather = params * WeightBytesOf(model, c).gathered / layers;
  const double grad = params * GradientBytesOf(model, c).reduced / layers;
  if (c.framework != Framework::kDeepSpeed) return {1, 1, gather, 1, grad, true};
  // DeepSpeed decides tensor by tensor (persistence threshold, live-parameter limit): the
  // group's own matrices share its parameters, not the other group's.
  const double expert_tensors = stages.slowest.expert_weight_tensors;
  const double n =
      std::max(1.0, (expert ? expert_tensors : stages.slowest.weight_tensors - expert_tensors) / layers);
  const double tensor_params = params / layers / n;
  Zero3Calls z;
  if (tensor_params >= deepspeed::kPersistenceThreshold) {
    z.gathers = n;
    z.bwd_gathers = DeepSpeedBackwardGathers(n * layers, n, tensor_params, layers, model.post, c.recompute);
  }
  z.gather_bytes = gather / n;
  const double bucket = std::min(params, static_cast<double>(deepspeed::kReduceBucket));
  z.reduces = bucket > 0 ? std::ceil(params / bucket) / layers : 0;
  z.reduce_bytes = bucket * GradientBytesOf(model, c).reduced;
  z.prefetch = tensor_params < deepspeed::kMaxLiveParameters;
  return z;
}

void DataParallelCalls(const DataParallelInputs& in, const DpGroups& groups, double dense, double expert,
                       DpCallTimes* out) {
  GroupCalls(in, groups.dense, dense, false, &out->dense);
  GroupCalls(in, groups.expert, expert, true, &out->expert);
}

double DataParallelExposed(const DataParallelInputs& in, const DpGroups& groups, double dense, double expert,
                           double beside_dp, int m, const DpCallTimes& calls, double* in_passes_s) {
  const double layers = std::max(1, in.stages.slowest_layers);
  const DpWindows paired = CriticalPath(in.stages.slowest);
  const double lone = 1 - in.paired_share;
  const DpWindows mb{paired.fwd + lone * in.alone.fwd, paired.bwd + lone * in.alone.bwd};
  DpContext dpx{in.model, in.stages, in.c, in.coll, in.hw, m, mb, {mb.fwd / layers, mb.bwd / layers}, 0, {}, {}};
  if (in.paired_share > 0) {
    dpx.paired_share = in.paired_share;
    dpx.layer_paired = {paired.fwd / layers, paired.bwd / layers};
    dpx.layer_alone = {(paired.fwd + in.alone.fwd) / layers, (paired.bwd + in.alone.bwd) / layers};
  }
  DpTraffic traffic;
  AddDpTraffic(dpx, groups.dense, dense, false, calls.dense, &traffic);
  AddDpTraffic(dpx, groups.expert, expert, true, calls.expert, &traffic);
  // An overlapped reduction shares the NICs only where it leaves the node.
  const bool dp_leaves_node = std::max(groups.dense.size > 1 ? groups.dense.level : 0,
                                       groups.expert.size > 1 ? groups.expert.level : 0) >= 1;
  return DpExposed(dpx, traffic, dp_leaves_node && OverlapsGradientReduction(in.c) ? beside_dp : 0.0, in_passes_s);
}

}  // namespace paraplan
