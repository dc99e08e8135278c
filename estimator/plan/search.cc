#include "estimator/plan/search.h"


#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <cstdint>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "estimator/inputs/validate.h"
#include "estimator/iteration/assemble.h"
#include "estimator/iteration/comm_schedule.h"
#include "estimator/iteration/estimate.h"
#include "estimator/iteration/stage_costs.h"
#include "estimator/plan/ranking.h"
#include "estimator/plan/recompute_fallback.h"
#include "estimator/plan/search_space.h"
#include "estimator/plan/worker_state.h"
#include "estimator/system/collectives.h"
#include "estimator/system/hardware.h"
#include "estimator/workloads/model_costs.h"

namespace paraplan {

namespace {

// True once the request's deadline has passed or its caller cancelled it.
bool Expired(const PlanRequest& r) { return Interrupt{r.deadline, r.cancelled}.Requested(); }

// The overlap flags and rank orders of a setting that fits (`mem` its memory), each
// assembled and offered.
void OfferFitting(const SearchSpace& space, int global_batch, const ModelCosts& model, const StageCosts& stages,
                  const SystemContext& sys, QuantileFactors* quantile, ParallelConfig c, MemoryBreakdown* mem,
                  WorkerState* st) {
  const PlanConstraints& k = space.request->constraints;
  const int zero = c.zero_stage, pp = c.pipeline_parallel, dp = c.data_parallel;
  // What the flags and the rank order leave alone is assembled once (AssembleShared).
  CandidateResult shared;
  bool have_shared = false;
  bool outranked = false;  // no variant could rank (Outranked): counted, not assembled
  VariantCache by_order;  // what a rank order decides, for the flags' variants
  for (bool og : FlagValues(k.overlap_grad_reduce)) {
    c.overlap_grad_reduce = og;
    // A flag the framework ignores (DeepSpeed's pipeline engine) is left off unless asked for.
    if (og && zero <= 2 && k.overlap_grad_reduce == Flag::kAny && !OverlapsGradientReduction(c)) continue;
    // Overlapping the parameter all-gather with the forward costs no memory and
    // hides what it can: with sharded states it is always on, where the framework runs it.
    c.overlap_param_gather = true;
    const bool gather_overlaps = zero >= 3 || (zero > 0 && OverlapsParameterGather(c));
    for (int opg = gather_overlaps ? 1 : 0; opg < (gather_overlaps ? 2 : 1); ++opg) {
      c.overlap_param_gather = opg;
      // The two rank orders differ only where pipeline and data parallelism both
      // span ranks: else they place every group alike.
      for (int order = 0; order < (pp > 1 && dp > 1 ? 2 : 1); ++order) {
        c.rank_order = order ? RankOrder::kTpCpEpPpDp : RankOrder::kTpCpEpDpPp;
        if (const FrameworkRefusal r = RefusedByFramework(k.framework, c); r.field != nullptr) {
          st->NoteRefusal(c, r, /*fit=*/true);
          continue;
        }
        if (!have_shared) {
          AssembleShared(model, stages, c, sys, &shared, mem);
          have_shared = true;
          CandidateResult bound;
          BoundVariants(c, sys, shared, &bound);
          outranked = Outranked(space, global_batch, quantile->Of(c), bound, *st);
        }
        ++st->evaluated;
        ++st->feasible;
        if (outranked) continue;
        Scored s;
        s.result = shared;
        AssembleVariant(model, stages, c, sys, &s.result, &by_order);
        Offer(space, global_batch, model, c, quantile->Of(c), std::move(s), st);
      }
    }
  }
}

// A setting that does not fit (`mem` its memory), tried with the shape's light recompute
// modules where dropping what they can drop (at most `light_share` of the end stages'
// activations, and the allocator's share of them) could make it fit; true when it fits
// with them (and was offered).
bool OfferWithLightRecompute(const SearchSpace& space, int global_batch, const SystemContext& sys, double capacity,
                             QuantileFactors* quantile, ParallelConfig c, const MemoryBreakdown& without,
                             double light_share, RecomputeFallback* fallback, WorkerState* st) {
  if (fallback == nullptr) return false;
  if (without.total_bytes - capacity > light_share * (without.activations_bytes + without.overhead_bytes)) return false;
  const ModelCosts* model = fallback->Model();
  const StageCosts* stages = model != nullptr ? fallback->Stages() : nullptr;
  if (stages == nullptr) return false;
  c.recompute = Recompute::kSelective;
  c.recompute_modules = fallback->modules();
  c.moe_dispatcher = model->moe_dispatcher;
  MemoryBreakdown mem;
  AssembleMemory(*model, *stages, c, sys, &mem);
  if (!(mem.total_bytes <= capacity && mem.fits)) return false;
  OfferFitting(space, global_batch, *model, *stages, sys, quantile, c, &mem, st);
  return true;
}

// Every ZeRO stage, offload, schedule, overlap flag and rank order of `c` (its degrees
// and stages set), within `capacity` bytes.
void SearchSettings(const SearchSpace& space, int gpus, int global_batch, const Shape& shape, const ModelCosts& model,
                    const StageCosts& stages, double capacity, QuantileFactors* quantile, ParallelConfig c,
                    RecomputeFallback* fallback, WorkerState* st) {
  const PlanConstraints& k = space.request->constraints;
  const SystemContext& sys = space.systems[space.Slot(gpus)];
  const int overlap_grad = static_cast<int>(FlagValues(k.overlap_grad_reduce).size());
  const int pp = c.pipeline_parallel, v = c.virtual_pipeline_stages, dp = c.data_parallel;
  PipelineSchedule schedules_v1[] = {PipelineSchedule::k1F1B, PipelineSchedule::kGPipe, PipelineSchedule::kZeroBubble};
  PipelineSchedule schedules_v[] = {PipelineSchedule::kInterleaved1F1B};
  const PipelineSchedule* sched = v > 1 ? schedules_v : schedules_v1;
  const int num_sched = pp == 1 ? 1 : (v > 1 ? 1 : 3);
  // The largest share of a stage's activations that offloading the experts' inputs moves,
  // and that light recompute modules drop, over the stages that bound memory.
  double offload_share = 0, light_share = 0;
  MemoryStageList held;
  for (int i = 0, n = MemoryStages(stages, &held); i < n; ++i) {
    const StageMemory& m = *held[i];
    if (m.activation_bytes_per_mb <= 0) continue;
    offload_share = std::max(offload_share, m.expert_offloadable_bytes_per_mb / m.activation_bytes_per_mb);
    light_share = std::max(light_share, m.light_recompute_bytes_per_mb / m.activation_bytes_per_mb);
  }
  const bool muon = space.request->workload.optimizer == Optimizer::kMuon;  // ZeRO 0 or 1 (ValidateMuonConfig)
  for (int zero = 0; zero <= (muon ? 1 : 3); ++zero) {
    if (!Permits(k.zero_stage, zero)) continue;
    if (zero > 0 && dp * shape.cp * shape.spatial == 1) continue;  // nothing to shard
    c.zero_stage = zero;
    if (A2aOverlapMeetsFsdpPipeline(c)) continue;  // refused (ValidateA2aOverlap)
    for (int off = 0; off < (k.allow_offload ? 8 : 1); ++off) {
      if ((off & 4) && c.offload_modules != 0) continue;  // one way of moving activations
      if ((off & 1) && muon) continue;  // Muon's step stays on the GPU
      c.offload.optimizer = off & 1;
      c.offload.weights = off & 2;
      c.offload.activations = off & 4;
      for (int si = 0; si < num_sched; ++si) {
        c.pipeline_schedule = sched[si];
        if (!Permits(k.pipeline_schedule, c.pipeline_schedule)) continue;
        // GPipe has 1F1B's bubble and holds every micro-batch's activations: never
        // better, searched only when asked for.
        if (c.pipeline_schedule == PipelineSchedule::kGPipe && k.pipeline_schedule.empty()) continue;
        st->enumerated += overlap_grad * 2;
        // What the framework refuses whatever the rank order (OfferFitting tries the other)
        // is never assembled, nor the closest of what does not fit: its memory is read only
        // for the answer's example while nothing ran.
        c.rank_order = RankOrder::kTpCpEpDpPp;
        const FrameworkRefusal refusal = RefusedByFramework(k.framework, c);
        if (refusal.field != nullptr && st->feasible > 0) continue;
        MemoryBreakdown mem;
        AssembleMemory(model, stages, c, sys, &mem);
        if (refusal.field != nullptr) {
          st->NoteRefusal(c, refusal, mem.total_bytes <= capacity && mem.fits);
          continue;
        }
        if (!(mem.total_bytes <= capacity && mem.fits)) {
          if (OfferWithLightRecompute(space, global_batch, sys, capacity, quantile, c, mem, light_share, fallback, st)) {
            continue;
          }
          const double shortfall = mem.total_bytes - capacity;
          st->shape_shortfall_after_offload =
              std::min(st->shape_shortfall_after_offload, shortfall - offload_share * mem.activations_bytes);
          if (shortfall < st->best_shortfall_bytes ||
              (shortfall == st->best_shortfall_bytes && ConfigBefore(c, st->shortfall_config))) {
            st->best_shortfall_bytes = shortfall;
            st->shortfall_config = c;
            st->shortfall_total_bytes = mem.total_bytes;
          }
          continue;
        }
        OfferFitting(space, global_batch, model, stages, sys, quantile, c, &mem, st);
      }
    }
  }
}

// Every pipeline layout (stages, virtual stages, end-stage layers) of a shape whose
// per-layer costs are `model`, each with every setting (SearchSettings).
void SearchLayouts(const SearchSpace& space, int gpus, int global_batch, const Shape& shape, const ModelCosts& model,
                   ParallelConfig c, RecomputeFallback* fallback, WorkerState* st) {
  const PlanRequest& req = *space.request;
  const PlanConstraints& k = req.constraints;
  c.moe_dispatcher = model.moe_dispatcher;  // DeepEP where the costs weighed it faster
  QuantileFactors quantile(space, gpus, model);
  const int rest = gpus / shape.Inner();
  const double capacity = space.hws.front()->capacity_bytes() * (1.0 - k.memory_headroom_ratio);
  // Every stage holds a layer and keeps at least its activations for one micro-batch
  // (offloading keeps the chunk it computes): a shape whose lightest layer alone exceeds
  // the memory fits under no pipeline, ZeRO or offload setting.
  double lightest = INFINITY;
  for (const BlockCosts& l : model.layers) lightest = std::min(lightest, l.activation_bytes);
  if (lightest > capacity) return;
  for (int pp : Allowed(Divisors(rest, rest), k.pipeline_parallel, k.max_pipeline_parallel)) {
    if (Expired(req)) {
      st->truncated = true;
      return;
    }
    if (pp > space.num_layers) continue;
    const int dp = rest / pp;
    if (!Permits(k.data_parallel, dp)) continue;
    if (global_batch % (int64_t{dp} * shape.mbs) != 0) continue;
    if ((int64_t{shape.tp} * shape.cp * dp) % (int64_t{shape.ep} * shape.etp) != 0) continue;
    const int m = global_batch / (dp * shape.mbs);
    const Interleaving il = InterleavingsOf(space, pp);
    for (int v : il.vs) {
      if (!Permits(k.virtual_pipeline_stages, v)) continue;
      if (c.moe_a2a_overlap && pp > 1 && v == 1) continue;  // the overlap needs virtual stages
      if (v > 1 && m % pp != 0) continue;  // interleaving needs m divisible by pp
      // Interleaved: the end stages one slot short where layers + 2 divide; otherwise the
      // ends balanced against the embedding and the head where that is faster.
      const EndLayers ends = v > 1 ? EndLayers{il.end_layers, il.end_layers} : BalancedEndLayers(model, pp);
      c.first_pipeline_stage_layers = ends.first;
      c.last_pipeline_stage_layers = ends.last;
      c.pipeline_parallel = pp;
      c.data_parallel = dp;
      c.virtual_pipeline_stages = v;
      if (fallback != nullptr) fallback->SetLayout(pp, v, ends.first, ends.last);
      SearchSettings(space, gpus, global_batch, shape, model, ComputeStageCosts(model, pp, v, ends.first, ends.last),
                     capacity, &quantile, c, fallback, st);
    }
  }
}

// Megatron-Core's fine-grained activation offloading of the experts' saved inputs
// (expert_fc1, moe_act: the Megatron-MoE model zoo's choice where a MoE configuration
// does not fit otherwise) is tried for a MoE shape none of whose layouts fit, where
// moving activations off could make one fit and the framework runs it (not under full
// recompute, which keeps nothing to move).
bool TryExpertOffload(const SearchSpace& space, ParallelConfig c, const WorkerState& st) {
  if (!space.transformer || !space.spec.is_moe() || c.recompute == Recompute::kFull ||
      st.shape_shortfall_after_offload > 0) {
    return false;
  }
  c.offload_modules = kOffloadExpertFc1 | kOffloadMoeAct;
  return RefusedByFramework(space.request->constraints.framework, c).field == nullptr;
}

void SearchShape(const SearchSpace& space, int gpus, int global_batch, const Shape& shape, WorkerState* st) {
  const PlanRequest& req = *space.request;
  ParallelConfig c = ShapeConfig(req.constraints, shape, global_batch);
  c.tp_comm_overlap = ResolvedTpCommOverlap(req.workload, c);
  // The per-layer costs depend only on the shape's part of the configuration.
  ModelShape ms = ModelShape::Of(c);
  ms.weigh_deepep = shape.weigh_deepep;
  const size_t slot = space.Slot(gpus);
  absl::StatusOr<ModelCosts> model = ComputeModelCosts(req.workload, ms, *space.hws[slot], *space.colls[slot],
                                                       Interrupt{req.deadline, req.cancelled}, &st->memo);
  if (!model.ok()) {
    if (Expired(req)) {  // stopped by the deadline: the search is cut short, not failed
      st->truncated = true;
      return;
    }
    st->error = model.status();
    return;
  }
  const int64_t feasible = st->feasible;
  st->shape_shortfall_after_offload = INFINITY;
  const unsigned light = LightRecomputeModules(space, c);
  std::optional<RecomputeFallback> fallback;
  if (light != 0) fallback.emplace(space, gpus, ms, light);
  SearchLayouts(space, gpus, global_batch, shape, *model, c, fallback ? &*fallback : nullptr, st);
  if (st->feasible > feasible || !TryExpertOffload(space, c, *st)) return;
  c.offload_modules = kOffloadExpertFc1 | kOffloadMoeAct;
  SearchLayouts(space, gpus, global_batch, shape, WithExpertOffload(*std::move(model)), c, nullptr, st);
}

}  // namespace

namespace {

// The all-to-all overlap asked of every plan: refused where no plan could run it, by
// the rules a configuration's validation applies (the framework's, the workload's).
absl::Status ValidateA2aOverlapConstraint(const PlanRequest& request) {
  if (!request.constraints.moe_a2a_overlap) return absl::OkStatus();
  ParallelConfig probe;
  probe.moe_a2a_overlap = true;
  const Framework fw = request.constraints.framework;
  if (const FrameworkRefusal r = RefusedByFramework(fw, probe); r.field != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("constraints.moe_a2a_overlap: ", r.reason, " (", FrameworkName(fw), ")"));
  }
  if (const char* why = A2aOverlapRefusedByWorkload(request.workload)) {
    return absl::InvalidArgumentError(absl::StrCat("constraints.moe_a2a_overlap: ", why));
  }
  return absl::OkStatus();
}

absl::Status ValidatePlanRequest(const PlanRequest& request, const SystemProfile& profile) {
  if (absl::Status s = ValidateWorkload(request.workload); !s.ok()) return s;
  if (absl::Status s = ValidateProfile(profile); !s.ok()) return s;
  if (absl::Status s = ValidateWorkloadOnProfile(request.workload, profile); !s.ok()) return s;
  if (request.gpus.empty()) return absl::InvalidArgumentError("gpus: give at least one GPU count");
  for (int g : request.gpus) {
    if (g <= 0) return absl::InvalidArgumentError(absl::StrCat("gpus: ", g, " must be positive"));
    if (g > profile.NumGpus()) {
      return absl::InvalidArgumentError(absl::StrCat("gpus: ", g, " exceeds the ", profile.NumGpus(),
                                                     " GPUs of profile \"", profile.name, "\""));
    }
  }
  if (request.global_batch_size <= 0 || request.global_batch_size > kMaxPlanGlobalBatchSize) {
    return absl::InvalidArgumentError(absl::StrCat("global_batch_size: ", request.global_batch_size,
                                                   " must be in 1..", kMaxPlanGlobalBatchSize));
  }
  if (request.top_k < 0 || request.top_k > kMaxTopK) {
    return absl::InvalidArgumentError(absl::StrCat("top_k: ", request.top_k, " must be in 0..", kMaxTopK));
  }
  const double q = request.objective_quantile;
  // Bounded so that exp(quantile x scale) stays finite (scale <= 10, ValidateProfile).
  if (!(q >= 0 && q <= kMaxObjectiveQuantile)) {
    return absl::InvalidArgumentError(absl::StrCat("objective_quantile: ", q, " must be in [0, ",
                                                   kMaxObjectiveQuantile, "] (0.9 = time@p90)"));
  }
  if (q > 0 && request.objective != Objective::kTime) {
    return absl::InvalidArgumentError("objective_quantile: applies to the time objective only");
  }
  // What the framework does not run whatever the configuration (Muon elsewhere than
  // Megatron-Core, whose runs the search keeps at ZeRO 0 / 1; multi-token prediction
  // under DeepSpeed or PyTorch FSDP): no plan.
  const Framework fw = request.constraints.framework;
  if (const FrameworkRefusal r = WorkloadRefusedByFramework(request.workload, fw); r.field != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(r.field, ": ", r.reason, FrameworkName(fw)));
  }
  const double headroom = request.constraints.memory_headroom_ratio;
  if (!(headroom >= 0 && headroom < 1)) {
    return absl::InvalidArgumentError("constraints.memory_headroom_ratio: must be in [0, 1)");
  }
  // Context parallelism's ring attention runs fused kernels only (RunsFusedAttention).
  const std::vector<int>& cps = request.constraints.context_parallel;
  if (request.constraints.flash_attention == Flag::kOff && !cps.empty() &&
      std::all_of(cps.begin(), cps.end(), [](int cp) { return cp > 1; })) {
    return absl::InvalidArgumentError(
        "constraints.context_parallel: ring attention runs fused attention kernels only, and "
        "constraints.flash_attention is off");
  }
  return ValidateA2aOverlapConstraint(request);
}

// Searches the work items (gpu count, shape), shared out round-robin to `states.size()`
// workers, each stopping at the deadline or the candidate cap. The items are never
// listed whole: each worker enumerates each count's shapes itself (the same list in the
// same order) and takes every threads-th item of the whole sequence. A list of every
// count's shapes held 2.27 million items for DeepSeek-V3 over 64 GPU counts (127 MB,
// grown to 235 MB: the server's peak memory +230 MB, and most of a second of page
// faults before any search, in which a 2 s deadline on a loaded machine left none).
void RunWorkers(const SearchSpace& space, const IntList& micro_batches, std::vector<WorkerState>* states) {
  const PlanRequest& request = *space.request;
  const int threads = static_cast<int>(states->size());
  std::atomic<int64_t> enumerated_total{0};
  auto work = [&](int t) {
    WorkerState& st = (*states)[t];
    int64_t index = 0;  // the item's place in the whole sequence
    for (int g : space.gpu_counts) {
      if (Expired(request)) {
        st.truncated = true;
        return;
      }
      for (const Shape& shape : EnumerateShapes(space, g, micro_batches)) {
        if (index++ % threads != t) continue;
        if (Expired(request) || (request.max_candidates > 0 &&
                                 enumerated_total.load(std::memory_order_relaxed) >= request.max_candidates)) {
          st.truncated = true;
          return;
        }
        const int64_t before = st.enumerated;
        SearchShape(space, g, request.global_batch_size, shape, &st);
        enumerated_total.fetch_add(st.enumerated - before, std::memory_order_relaxed);
        if (!st.error.ok()) return;
      }
    }
  };
  if (threads == 1) {
    work(0);
    return;
  }
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(work, t);
  for (std::thread& th : pool) th.join();
}

// The plans returned say which collectives they run and with which algorithm (the search
// itself never builds these lists; a few microseconds each for a transformer, up to a
// second for a 100,000-layer graph: past the deadline the rest are left without, and
// say so).
void ListCollectives(const SearchSpace& space, PlanResult* out) {
  const PlanRequest& request = *space.request;
  const Interrupt stop{request.deadline, request.cancelled};
  for (std::vector<Estimate>* list : {&out->plans, &out->pareto}) {
    for (Estimate& e : *list) {
      if (stop.Requested()) {
        e.warnings.push_back("collectives not listed: the request's deadline passed first");
        continue;
      }
      const ParallelConfig c = e.config.Normalized();
      const size_t slot = space.Slot(static_cast<int>(c.NumGpus()));
      absl::StatusOr<ModelCosts> model =
          ComputeModelCosts(request.workload, ModelShape::Of(c), *space.hws[slot], *space.colls[slot], stop);
      if (!model.ok()) continue;
      const StageCosts stages = ComputeStageCosts(*model, c.pipeline_parallel, c.virtual_pipeline_stages,
                                                 c.first_pipeline_stage_layers, c.last_pipeline_stage_layers);
      e.collectives = DescribeCollectives(request.workload, c, *space.profile, *space.colls[slot], *model, stages);
    }
  }
}

}  // namespace

absl::StatusOr<PlanResult> Plan(const PlanRequest& request, const SystemProfile& profile) {
  const absl::Time start = absl::Now();
  if (absl::Status s = ValidatePlanRequest(request, profile); !s.ok()) return s;
  SearchSpace space;
  BuildSearchSpace(request, profile, &space);

  PlanResult out;
  const IntList micro_batches =
      Allowed(Divisors(request.global_batch_size, request.global_batch_size),
              request.constraints.micro_batch_size, request.constraints.max_micro_batch_size);
  const size_t k = static_cast<size_t>(request.top_k == 0 ? kDefaultTopK : request.top_k);
  const int threads = std::max(1, request.threads);
  std::vector<WorkerState> states;
  states.reserve(threads);
  for (int t = 0; t < threads; ++t) states.emplace_back(k);
  RunWorkers(space, micro_batches, &states);

  std::vector<Scored> best, candidates;
  std::vector<Scored> pooled[kObjectives];
  const WorkerState* shortfall_state = nullptr;
  const WorkerState* refused_state = nullptr;
  for (WorkerState& st : states) {
    if (!st.error.ok()) return st.error;
    out.candidates_enumerated += st.enumerated;
    out.candidates_feasible += st.feasible;
    out.candidates_evaluated += st.evaluated;
    out.truncated |= st.truncated;
    best.insert(best.end(), st.top.items().begin(), st.top.items().end());
    for (int o = 0; o < kObjectives; ++o) {
      pooled[o].insert(pooled[o].end(), st.pool[o].items().begin(), st.pool[o].items().end());
    }
    if (shortfall_state == nullptr || st.best_shortfall_bytes < shortfall_state->best_shortfall_bytes ||
        (st.best_shortfall_bytes == shortfall_state->best_shortfall_bytes &&
         ConfigBefore(st.shortfall_config, shortfall_state->shortfall_config))) {
      shortfall_state = &st;
    }
    if (st.RefusalBefore(refused_state)) refused_state = &st;
  }
  for (FoldedRow& row : FoldEquivalents(std::move(best), k)) {
    out.plans.push_back(ToEstimate(request.workload, profile, row.scored.config, row.scored.tokens_per_sample,
                                   row.scored.model_flops_per_sample, row.scored.result));
    out.plans.back().equivalents = std::move(row.equivalents);
  }
  // The front is drawn from the kPoolSize best by each objective over all workers: the
  // same candidates however many workers searched (each worker's pool holds its share of
  // them), so the same front.
  for (std::vector<Scored>& p : pooled) {
    std::sort(p.begin(), p.end(), Better);
    if (p.size() > WorkerState::kPoolSize) p.resize(WorkerState::kPoolSize);
    candidates.insert(candidates.end(), p.begin(), p.end());
  }
  for (const Scored* s : ParetoFront(candidates)) {
    out.pareto.push_back(ToEstimate(request.workload, profile, s->config, s->tokens_per_sample,
                                    s->model_flops_per_sample, s->result));
  }
  for (const std::vector<Estimate>* list : {&out.plans, &out.pareto}) {
    for (const Estimate& e : *list) {
      if (absl::Status s = CheckFinite(e); !s.ok()) return s;
    }
  }
  if (out.plans.empty()) out.infeasible_reason = InfeasibleReason(space, shortfall_state, refused_state, out.truncated);
  ListCollectives(space, &out);
  out.search_time_s = absl::ToDoubleSeconds(absl::Now() - start);
  return out;
}

}  // namespace paraplan
