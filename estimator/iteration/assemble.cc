#include "estimator/iteration/assemble.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "estimator/iteration/data_parallel.h"
#include "estimator/iteration/pipeline_schedule.h"

namespace paraplan {

namespace {

// The caching allocator's overhead share: torchtitan's launcher turns on expandable
// segments (run_train.sh: PYTORCH_ALLOC_CONF="expandable_segments:True"), and so do
// NeMo's Megatron-Bridge performance recipes (the env_vars of 218 of the 251 pretraining
// recipes of its models here, perf_recipes/ at 067f987), which leave far less reserved
// beyond what is allocated than the default allocator does. Megatron-LM's launchers
// leave the default.
double MemoryOverheadFraction(const Hardware& hw, const ParallelConfig& c) {
  return c.framework == Framework::kTorchtitan || c.framework == Framework::kNemo
             ? hw.expandable_segments_overhead_fraction()
             : hw.memory_overhead_fraction();
}

// Once per rank order of a setting (AssembleVariant keeps it in the search's
// VariantCache); PlaceDataParallel exports it. Writes `*out` in place: a copy of a
// returned value stalls on the narrower stores that made it. Without `experts` (a dense
// model) the expert group is left a single rank: nothing reduces over it.
void PlaceDp(const ParallelConfig& c, const Collectives& coll, bool experts, DpGroups* out) {
  // Context (and spatial) ranks sit just inside DP, hold the same weights and reduce
  // gradients with it; tensor-like ranks (tp, filter, channel) are innermost.
  const int64_t tp = c.tensor_parallel * int64_t{c.filter_parallel} * c.channel_parallel;
  const int64_t cp = int64_t{c.context_parallel} * c.spatial_parallel;
  const int64_t dp_stride = c.rank_order == RankOrder::kTpCpEpDpPp ? tp * cp : tp * cp * c.pipeline_parallel;
  DpGroups& g = *out;
  g.dense = coll.Place(c.data_parallel, dp_stride);
  if (cp > 1) {
    // With one pipeline stage the two orders are one placement (the search tries the
    // second only where pipeline and data parallelism both span ranks).
    if (c.rank_order == RankOrder::kTpCpEpDpPp || c.pipeline_parallel == 1) {
      g.dense = coll.Place(static_cast<int>(cp * c.data_parallel), tp);
    } else {
      // tp-cp-ep-pp-dp: the cp ranks are contiguous (stride tp) and the dp ranks sit
      // outside pp. The joint group crosses the wider of the two groups' levels; a domain
      // below that level holds the cp ranks of a member that fall in it (all of them when
      // the cp group stays inside one) times the dp members it holds.
      const GroupSpan cp_group = coll.Place(static_cast<int>(cp), tp);
      const GroupSpan dp_group = g.dense;
      g.dense.size = static_cast<int>(cp * c.data_parallel);
      g.dense.level = std::max(cp_group.level, dp_group.level);
      const int64_t per_cp = cp_group.level < g.dense.level ? cp : cp_group.inner;
      const int64_t per_dp = dp_group.level < g.dense.level ? c.data_parallel : dp_group.inner;
      g.dense.inner = g.dense.level == 0 ? g.dense.size
                                         : static_cast<int>(std::min<int64_t>(g.dense.size, per_cp * per_dp));
    }
  }
  g.expert = GroupSpan{};
  if (!experts) return;
  // Expert data parallelism sits outside the expert grid (etp x ep ranks, innermost);
  // under tp-cp-ep-pp-dp a grid wider than a stage's tp x cp ranks steps over pp.
  const int64_t grid = int64_t{c.ExpertTensorParallel()} * c.expert_parallel;
  const int64_t expert_stride =
      c.rank_order == RankOrder::kTpCpEpPpDp && grid >= tp * cp ? grid * c.pipeline_parallel : grid;
  g.expert = coll.Place(static_cast<int>(c.ExpertDataParallel()), expert_stride);
}

}  // namespace

double EmbeddingSyncBytes(const ModelCosts& model, const ParallelConfig& c) {
  return c.pipeline_parallel > 1 ? model.stage_embedding_copy_params * GradientBytesOf(model, c).reduced : 0;
}

double EmbeddingSyncS(const ModelCosts& model, const ParallelConfig& c, const Collectives& coll) {
  const double bytes = EmbeddingSyncBytes(model, c);
  return bytes > 0 ? coll.AllReduce(bytes, RankPair(coll, (c.pipeline_parallel - 1) * PipelineStride(c))) : 0;
}

GroupSpan RankPair(const Collectives& coll, int64_t stride) {
  GroupSpan pair = coll.Place(2, stride);
  pair.level = coll.LevelOfStride(stride);
  return pair;
}

DpGroups PlaceDataParallel(const ParallelConfig& c, const Collectives& coll) {
  DpGroups g;
  PlaceDp(c, coll, /*experts=*/true, &g);
  return g;
}



namespace {

// What a configuration's memory is made of that is the same on every pipeline stage.
struct MemoryTerms {
  int m = 1;  // micro-batches per iteration
  // ZeRO (Rajbhandari et al. SC'20): stage 1 shards optimizer states, 2 also gradients,
  // 3 also weights, over the data-parallel ranks (dense) and the expert ones.
  double opt_div_d = 1, opt_div_e = 1, grad_div_d = 1, grad_div_e = 1, w_div_d = 1, w_div_e = 1;
  double weight_held = 0;           // bytes per parameter held
  double compute_weight_bytes = 0;  // bytes per parameter the kernels read
  double grad_held = 0;             // bytes per parameter of the gradient buffer
  OptimizerCosts optimizer;         // the step this configuration runs
  bool grads_then_activations = false;
  bool once = false;   // ShardsOncePerIteration
  bool gpipe = false;
  double send_buffers = 0;  // gathered TP activation (SP), pipeline send / receive
  double overhead_fixed = 0, overhead_share = 0;
};

MemoryTerms MemoryTermsOf(const ModelCosts& model, const ParallelConfig& c, const Hardware& hw) {
  MemoryTerms t;
  t.m = std::max(1, c.NumMicroBatches());
  const double dpcp = double{1.0} * c.data_parallel * c.context_parallel * c.spatial_parallel;
  const double expert_dp = static_cast<double>(c.ExpertDataParallel());
  const bool shard_states = c.zero_stage >= 1 || DeepSpeedBf16Optimizer(model, c);
  t.opt_div_d = shard_states ? dpcp : 1;
  t.opt_div_e = shard_states ? expert_dp : 1;
  // torchtitan's pipeline stages accumulate their gradients unsharded (ShardsOncePerIteration).
  t.once = ShardsOncePerIteration(c);
  t.grad_div_d = c.zero_stage >= 2 && !t.once ? dpcp : 1;
  t.grad_div_e = c.zero_stage >= 2 && !t.once ? expert_dp : 1;
  t.w_div_d = c.zero_stage >= 3 ? dpcp : 1;
  t.w_div_e = c.zero_stage >= 3 ? expert_dp : 1;
  // Bytes per parameter of the weights the kernels read: fp32 parameters compute with
  // 16-bit copies.
  const WeightBytes weight = WeightBytesOf(model, c);
  t.weight_held = weight.held;
  t.compute_weight_bytes = model.fp32_params ? weight.gathered : weight.held;
  t.grad_held = GradientBytesOf(model, c).held;
  t.optimizer = OptimizerCostsOf(model, c);
  // Gradients that exist only from backward to the step (PyTorch, set_to_none) grow as
  // the activations are freed, layer by layer: at the peak, the larger of the two —
  // unless gradients accumulate over micro-batches or DDP's persistent fp32 buckets hold
  // them (ZeRO 0 with data parallelism).
  t.grads_then_activations = model.fp32_params && t.m == 1 && !(c.zero_stage == 0 && dpcp > 1);
  // The LM head's stored activations on the last stage are taken once (but under GPipe):
  // its loss runs backward right after its forward.
  t.gpipe = c.pipeline_schedule == PipelineSchedule::kGPipe;
  const bool whole = SendsWholeStageActivation(c.framework, c.sequence_parallel && c.tensor_parallel > 1);
  t.send_buffers = 4 * model.pp_send_bytes * (whole ? 1 : c.tensor_parallel);
  t.overhead_fixed = hw.memory_overhead_bytes();
  t.overhead_share = MemoryOverheadFraction(hw, c);
  return t;
}

// The largest module a stage computes with, in parameters: a layer, or the embedding or
// LM head on an end stage.
double LargestModuleParams(const ModelCosts& model, const ParallelConfig& c, const StageMemory& st) {
  const bool last = st.index == c.pipeline_parallel - 1;
  return std::max({model.max_layer_dense_params + model.max_layer_expert_params,
                   st.index == 0 ? model.pre.params : 0.0, last ? model.post.params : 0.0});
}

// Moves to the host what the configuration offloads of one stage's memory, `flight`
// micro-batches in flight.
void MoveToHost(const ModelCosts& model, const ParallelConfig& c, const StageMemory& st, double flight,
                MemoryBreakdown* mb) {
  if (c.offload.optimizer) {
    mb->host_bytes += mb->optimizer_bytes;
    mb->optimizer_bytes = 0;
  }
  if (c.offload.weights) {
    // Weights streamed module by module: the GPU keeps two of them (the one computing and
    // the one prefetched, double buffering), the stage's largest: a layer, or the
    // embedding or LM head on an end stage (until stop 68 two layers' share of the whole
    // stage, so a deeper model, whose share shrank, kept less of its LM head than the
    // head itself). Under ZeRO-3 (ZeRO-Infinity's offload_param) every shard lives on the
    // host and those two modules are the gather buffers (BufferBytes): no shard stays
    // (until stop 69 two modules' share of the shards stayed beside the buffers, so twice
    // the data parallelism, sharding the experts, held more).
    const double keep =
        c.zero_stage >= 3 ? 0.0 : st.params > 0 ? std::min(1.0, 2 * LargestModuleParams(model, c, st) / st.params) : 1.0;
    mb->host_bytes += mb->weights_bytes * (1 - keep);
    mb->weights_bytes *= keep;
  }
  if (c.offload.activations) {
    // KARMA (Wahib et al. SC'20): keep the chunk being computed and the one in flight.
    const double keep = std::min(mb->activations_bytes, 2 * st.chunk_activation_bytes_per_mb + st.transient_bytes);
    mb->host_bytes += mb->activations_bytes - keep;
    mb->activations_bytes = keep;
  }
  if (st.offloaded_bytes_per_mb > 0) {
    // Fine-grained activation offloading: what the named modules save waits on the host
    // for every micro-batch in flight; the GPU keeps one layer's as the group being
    // reloaded (Megatron-Core also keeps the last groups of a forward as a margin).
    const double layer = st.offloaded_bytes_per_mb / std::max(1, st.layers);
    mb->activations_bytes += layer;
    mb->host_bytes += std::max(0.0, st.offloaded_bytes_per_mb * flight - layer);
  }
  if (c.cpu_offload_layers > 0 && !model.layers.empty()) {
    // Megatron-Core CPU offloading: the offloaded layers' activations (every micro-batch
    // in flight) live on the host; one layer's stays as the buffer the transfers fill.
    // Weights stay: cpu_offloading_weights defaults to False (model_parallel_config.py)
    // and Megatron-Bridge's recipes set it so (scripts/performance/utils/overrides.py).
    const BlockCosts& layer = model.layers[model.layers.size() / 2];
    const double moved_a = std::min(
        mb->activations_bytes,
        std::max(0.0, c.cpu_offload_layers * layer.activation_bytes * flight - layer.activation_bytes));
    mb->activations_bytes -= moved_a;
    mb->host_bytes += moved_a;
  }
}

// The buffers beside a stage's `params`: the send buffers and the weights gathered for
// compute (ZeRO-3's prefetch, torchtitan's whole stage, torch.autocast's cache).
double BufferBytes(const ModelCosts& model, const ParallelConfig& c, const MemoryTerms& t, const StageMemory& st,
                   double params) {
  if (c.zero_stage >= 3 && !model.layers.empty() && c.framework == Framework::kDeepSpeed) {
    // DeepSpeed holds the module's tensors and those it prefetched: two weight tensors.
    const BlockCosts& l = model.layers[0];
    return t.send_buffers + 2 * l.params / std::max(1.0, l.weight_tensors) * t.compute_weight_bytes;
  }
  if (t.once) return t.send_buffers + params * t.compute_weight_bytes;  // the stage's weights, gathered
  if (c.zero_stage >= 3 && !model.layers.empty()) {
    // Two of the largest layer's weights gathered (the one computing, the one prefetched):
    // the parts their groups shard (experts whose expert-DP group is one rank stay whole);
    // with the weights offloaded, the stage's largest module whole, streamed from the host.
    const double gathered = c.offload.weights ? LargestModuleParams(model, c, st)
                                              : (t.w_div_d > 1 ? model.max_layer_dense_params : 0) +
                                                    (t.w_div_e > 1 ? model.max_layer_expert_params : 0);
    return t.send_buffers + 2 * gathered * t.compute_weight_bytes;
  }
  if (model.fp32_params) return t.send_buffers + params * t.compute_weight_bytes;  // torch.autocast's cache
  return t.send_buffers;
}

// One stage's peak (through the last backward, or at the optimizer step where that holds
// more), kept in `*best` where it holds more than the stages before.
void KeepStagePeak(const ModelCosts& model, const ParallelConfig& c, const MemoryTerms& t, const StageMemory& st,
                   MemoryBreakdown* best) {
  const double dense = st.params - st.expert_params;
  const double ex = st.expert_params;
  MemoryBreakdown mb;
  mb.weights_bytes = (dense / t.w_div_d + ex / t.w_div_e) * t.weight_held;
  mb.gradients_bytes = (dense / t.grad_div_d + ex / t.grad_div_e) * t.grad_held;
  mb.optimizer_bytes = (dense / t.opt_div_d + ex / t.opt_div_e) * t.optimizer.state_bytes_per_param;
  if (model.embedding_extra_state_bytes_per_param > 0) {
    // The embedding on the first stage, the LM head (and the embedding's copy) on the last.
    const bool last = st.index == c.pipeline_parallel - 1;
    const double embedding = (st.index == 0 ? model.pre.params : 0) +
                             (last ? model.post.params + (c.pipeline_parallel > 1 ? model.stage_embedding_copy_params : 0)
                                   : 0);
    mb.optimizer_bytes += embedding / t.opt_div_d * model.embedding_extra_state_bytes_per_param;
  }
  // Micro-batches the stage holds, by its place, with chunk 0's share of its activations.
  const double flight = InFlightMicroBatches(c, t.m, st.chunk0_share, st.index);
  const double head = t.gpipe ? 0 : st.head_activation_bytes_per_mb;
  mb.activations_bytes = (st.activation_bytes_per_mb - head) * flight + head + st.transient_bytes;
  MoveToHost(model, c, st, flight, &mb);
  // (Gradients that grow as the backward frees activations share their place on the GPU,
  // not what waits on the host.)
  if (t.grads_then_activations) mb.gradients_bytes = std::max(0.0, mb.gradients_bytes - mb.activations_bytes);
  mb.buffers_bytes = BufferBytes(model, c, t, st, dense + ex);
  auto total = [&t](MemoryBreakdown* b) {
    const double used =
        b->weights_bytes + b->gradients_bytes + b->optimizer_bytes + b->activations_bytes + b->buffers_bytes;
    b->overhead_bytes = t.overhead_fixed + t.overhead_share * used;
    b->total_bytes = used + b->overhead_bytes;
  };
  total(&mb);
  if (t.optimizer.fp32_grad_copy_at_step && !c.offload.optimizer) {
    // The optimizer step, after the last backward has freed the activations, with the
    // fp32 copies of its gradient shard beside the 16-bit buffer.
    MemoryBreakdown step = mb;
    step.activations_bytes = 0;
    step.peak_at_optimizer_step = true;
    step.gradients_bytes += (dense / t.opt_div_d + ex / t.opt_div_e) * 4;
    total(&step);
    if (step.total_bytes > mb.total_bytes) mb = step;
  }
  if (mb.total_bytes > best->total_bytes) *best = mb;
}

}  // namespace

void AssembleMemory(const ModelCosts& model, const StageCosts& stages,
                    const ParallelConfig& c, const SystemContext& sys, MemoryBreakdown* out) {
  const Hardware& hw = *sys.hw;
  const MemoryTerms terms = MemoryTermsOf(model, c, hw);
  MemoryBreakdown best;
  MemoryStageList held;
  const int n = MemoryStages(stages, &held);
  for (int i = 0; i < n; ++i) KeepStagePeak(model, c, terms, *held[i], &best);
  best.capacity_bytes = hw.capacity_bytes();
  best.fits = best.total_bytes <= best.capacity_bytes &&
              best.host_bytes <= hw.host_capacity_bytes_per_gpu();
  *out = best;
}

namespace {

// A spatial group's root hands every micro-batch's decoded samples to the group's other
// ranks before forward, outside the loaders' prefetch: through host memory by MPI where
// the implementation stages its tensors there (ChainerMN's multi-node iterator pickles
// the batch, mpi4py broadcasts it, each rank unpickles and stacks it; ParaDL), else a
// device broadcast (a pipelined broadcast moves the batch over each link once, as an
// all-gather of that size does).
double SampleBroadcast(const ParallelConfig& c, const SystemContext& sys, int m) {
  const int sp = c.spatial_parallel;
  if (sp <= 1 || sys.input.tensor_bytes <= 0) return 0;
  const Hardware& hw = *sys.hw;
  const double bytes = c.micro_batch_size * sys.input.tensor_bytes;
  if (hw.halo_host_staged() && hw.host_staging_bytes_per_s() > 0) {
    // Serialised once by the root and deserialised by every receiver at once, copied to
    // each receiver through host memory.
    const double serialise = hw.sample_handover_bytes_per_s() > 0 ? bytes / hw.sample_handover_bytes_per_s() : 0;
    return m * (serialise + (sp - 1) * bytes / hw.host_staging_bytes_per_s());
  }
  const GroupSpan g = sys.coll->Place(sp, int64_t{c.filter_parallel} * c.channel_parallel);
  return m * sys.coll->AllGather(bytes, g);
}

// The share of a stage's micro-batch steps in which Megatron-Core's combined 1F1B pairs
// one micro-batch's forward with another's backward, hiding the all-to-all
// (moe_a2a_overlap): the rest run alone. With a pipeline, the first stage's warmup of
// 2(pp - 1) + (v - 1) pp + 1 forward chunks (one more than interleaved 1F1B's, so that
// paired steps are independent) of m v, and as many cooldown backwards; without one, the
// first forward and the last backward (Megatron-LM pipeline_parallel/schedules.py,
// get_pp_rank_microbatches; combined_1f1b.py).
double A2aPairedShare(const ParallelConfig& c, int m) {
  const double total = static_cast<double>(m) * c.virtual_pipeline_stages;
  const double alone = c.pipeline_parallel > 1 ? 2.0 * (c.pipeline_parallel - 1) +
                                                     (c.virtual_pipeline_stages - 1.0) * c.pipeline_parallel + 1
                                               : 1.0;
  return total > 0 ? std::max(0.0, total - alone) / total : 0.0;
}

// How moe_a2a_overlap pairs the slowest stage's steps, whose costs count every step
// paired (PairLayer): the share of the steps that pair, and by pass what a step that runs
// alone pays beyond them (the hidden all-to-all half each way, the pooled host time
// where it was). Nothing paired: both 0.
struct Pairing {
  double share = 0;
  PassTimes alone;
};
Pairing PairingOf(const ParallelConfig& c, int m, const BlockCosts& s) {
  if (!Paired(s)) return {};
  return {A2aPairedShare(c, m),
          {0.5 * s.ep_paired_saving_s + s.host_paired_saving_fwd_s,
           0.5 * s.ep_paired_saving_s + s.host_paired_saving_s - s.host_paired_saving_fwd_s}};
}

// Offloaded weights, activations, modules' saved tensors and CPU-offloaded layers
// (ZeRO-Infinity-style, Megatron-Core's fine-grained activation offloading and its
// cpu_offload_layers): their PCIe / C2C traffic each micro-batch beyond what the stage's
// compute hides. `dp_in_passes_s`: the data-parallel stream's exposed seconds inside the
// micro-batches' passes (DataParallelExposed), which the copies also run beside.
double LayerOffload(const ModelCosts& model, const StageCosts& stages, const ParallelConfig& c, const Hardware& hw,
                    int m, double dp_in_passes_s) {
  const BlockCosts& s = stages.slowest;
  const bool layers_out = c.cpu_offload_layers > 0 && !model.layers.empty();
  if (!c.offload.weights && !c.offload.activations && !layers_out && s.offloaded_bytes <= 0) return 0;
  const double ovl = hw.overlap_efficiency();
  // The copies run on their own engines beside the stage's whole critical path: compute,
  // exposed collectives (with what moe_a2a_overlap's unpaired steps pay and the
  // data-parallel gathers and reductions the passes wait for, half in each pass),
  // host-bound stretches (CriticalPath).
  const PassTimes beside{0.5 * dp_in_passes_s / m, 0.5 * dp_in_passes_s / m};
  // (Steps alone wait for what pairing took off the layers, all of it per step: the share
  // they are of the steps weighs them.)
  const Pairing pairing = PairingOf(c, m, s);
  const double modules_s = OffloadExposedS(s, model, beside, pairing.alone, pairing.share);
  // Each micro-batch the offloaded weights, activations and
  // CPU-offloaded layers' activations go out and come back over the host link (PCIe, or
  // NVLink-C2C on a Grace-Blackwell tray), which they share with the modules' copies:
  // together they hide behind the stage's critical path once (until stop 68 each kind hid
  // behind all of it, so a shorter path exposed it twice or three times over).
  // The weights and activations are the most any stage holds, hidden behind the pacing
  // stage's path: where a stage of more layers moves more beside an end stage that paces
  // (with its head or MTP depths), that stage's exposure bounds the pace, at most
  // (1 - ovl) x the paths' difference over (until stop 69 the pacing stage's own, so one
  // more MTP layer that moved the pace to Kimi-K2's last stage made it 22 % faster).
  double params = s.params, activations = s.activation_bytes;
  if (c.offload.weights || c.offload.activations) {
    MemoryStageList held;
    const int n = MemoryStages(stages, &held);
    for (int i = 0; i < n; ++i) {
      params = std::max(params, held[i]->params);
      activations = std::max(activations, held[i]->activation_bytes_per_mb);
    }
  }
  double bytes = 0;
  if (c.offload.weights) bytes += 2 * params * WeightBytesOf(model, c).held;
  if (c.offload.activations) bytes += 2 * activations;
  if (layers_out) bytes += c.cpu_offload_layers * 2 * model.layers[model.layers.size() / 2].activation_bytes;
  if (bytes <= 0) return m * modules_s;
  const PassTimes pass = CriticalPath(s);
  const double window =
      pass.fwd + pass.bwd + beside.fwd + beside.bwd + (1 - pairing.share) * (pairing.alone.fwd + pairing.alone.bwd);
  const double link_s = bytes / hw.pcie_bytes_per_s() + 2 * s.offloaded_bytes * model.host_copy_s_per_byte;
  return m * std::max(modules_s, link_s - ovl * window);
}

// Input pipeline (read + decode, input_pipeline.h). A node serves the replicas on it:
// each replica's first rank loads its global_batch / dp samples once on its share of the
// node's cores (the ranks of one replica share them: Megatron's broadcast_data,
// ChainerMN's multi-node iterator), and a replica larger than a node loads on one node.
// The loaders prefetch the next batch while the training loop computes: beside the GPU's
// work and the host's launches beyond it (the loop's compute stream, busy or waiting for
// kernels), not beside its waits on exposed communication or the spatial root's
// hand-over of the batch, which follow the load (ChainerMN's in-process loader threads
// stall there; ParaDL's data-parallel runs grow with their all-reduce). What they take
// beyond that stretch is exposed, then the hand-over. Needs out->time's compute,
// recompute and overhead.
void InputLoading(const ParallelConfig& c, const SystemContext& sys, int m, CandidateResult* out) {
  const Hardware& hw = *sys.hw;
  TimeBreakdown& t = out->time;
  t.data_loading_s = 0;
  out->first_epoch_extra_s = 0;
  if (sys.input.sample_bytes > 0 || sys.input.decode_s_per_sample > 0) {
    const double replica_gpus = static_cast<double>(c.NumGpus()) / c.data_parallel;
    const double replicas_per_node = std::max(1.0, hw.gpus_per_node() / replica_gpus);
    const double node_samples = double(c.global_batch_size) / c.data_parallel * replicas_per_node;
    const double job_nodes = std::ceil(static_cast<double>(c.NumGpus()) / hw.gpus_per_node());
    const double core_share = std::min(1.0, replicas_per_node / hw.gpus_per_node());
    const InputTime in = InputPipelineTime(sys.input, node_samples, job_nodes, core_share, replicas_per_node);
    out->input_core_s = node_samples * sys.input.decode_s_per_sample;
    out->input_read_j = job_nodes * in.read_joules;
    const double loop = t.compute_s + t.recompute_s + t.overhead_s;
    t.data_loading_s = std::max(0.0, in.steady_s - loop);
    out->first_epoch_extra_s = std::max(0.0, in.first_epoch_s - loop) - t.data_loading_s;
  }
  t.data_loading_s += SampleBroadcast(c, sys, m);
}

// Idle CPU packages draw about a quarter of their full-load power: SPECpower_ssj2008
// results of two-socket Xeon Scalable servers put active idle at 20-30 % of full load.
constexpr double kCpuIdleShare = 0.25;

// The nodes' power beside their GPUs: flat, or with its CPUs' share following the input
// pipeline's work (decode core-seconds over the node's cores and the iteration).
double NodePowerW(const SystemContext& sys, const CandidateResult& r) {
  const int cores = sys.input.cpu_cores;
  if (sys.cpu_power_w <= 0 || cores <= 0 || r.iteration_time_s <= 0) return sys.node_power_w;
  const double busy = std::min(1.0, r.input_core_s / (cores * r.iteration_time_s));
  return sys.node_power_w - sys.cpu_power_w * (1 - kCpuIdleShare) * (1 - busy);
}

// Energy (GPUs busy for busy_s and idle the rest, the nodes' other power all along, their
// CPUs as busy as the input pipeline keeps them, the storage's energy for the bytes read)
// and cost of an assembled iteration.
void Tally(const ParallelConfig& c, const SystemContext& sys, CandidateResult* out) {
  const double gpus = static_cast<double>(c.NumGpus());
  const int64_t gpn = sys.hw->gpus_per_node();  // >= 1 (Hardware)
  const double nodes = static_cast<double>((c.NumGpus() + gpn - 1) / gpn);  // ceil, in integers
  const double idle_s = std::max(0.0, out->iteration_time_s - out->busy_s);
  out->energy_j = gpus * (sys.busy_power_w * out->busy_s + sys.idle_power_w * idle_s) +
                  nodes * NodePowerW(sys, *out) * out->iteration_time_s + out->input_read_j;
  out->cost_usd = gpus * out->iteration_time_s / 3600.0 * sys.price_per_gpu_hour_usd;
}


}  // namespace

void AssembleShared(const ModelCosts& model, const StageCosts& stages, const ParallelConfig& c,
                    const SystemContext& sys, CandidateResult* out, const MemoryBreakdown* memory) {
  const Hardware& hw = *sys.hw;
  const int m = std::max(1, c.NumMicroBatches());
  const BlockCosts& s = stages.slowest;
  TimeBreakdown& t = out->time;
  t = TimeBreakdown{};

  t.compute_s = m * (s.fwd_s + s.bwd_s);
  t.recompute_s = m * s.recompute_s;
  t.tp_comm_s = m * (s.tp_fwd_s + s.tp_bwd_s);
  t.spatial_comm_s = m * (s.spatial_fwd_s + s.spatial_bwd_s);
  t.cp_comm_s = m * s.cp_s;
  // (The steps alone pay back what pairing took off the layers: the all-to-all here, the
  // host-bound time in the overhead.)
  const double lone = Paired(s) ? 1 - A2aPairedShare(c, m) : 0;
  t.ep_comm_s = m * (s.ep_s + lone * s.ep_paired_saving_s);
  const double wgrad_share = stages.slowest_total_s > 0 ? s.wgrad_s / stages.slowest_total_s : 0;
  // The fill and drain run each stage at its pace: its compute and the offload copies it
  // cannot hide (a stage's forwards and backwards in the warm-up and cool-down move the
  // same tensors as in the steady state).
  t.pipeline_bubble_s = BubbleStages(c, wgrad_share) * stages.mean_pace_s;

  // Optimizer step: memory-bound over this GPU's shard of the parameters.
  const double dense = stages.max_dense_params;
  const double ex = stages.max_expert_params;
  const double dpcp = double{1.0} * c.data_parallel * c.context_parallel * c.spatial_parallel;
  const bool sharded_step = c.zero_stage >= 1 || DeepSpeedBf16Optimizer(model, c);
  const double shard = sharded_step ? dense / dpcp + ex / static_cast<double>(c.ExpertDataParallel()) : dense + ex;
  const OptimizerCosts step = OptimizerCostsOf(model, c);
  if (c.offload.optimizer) {
    // ZeRO-Offload (Ren et al. 2021): gradients to host, updated weights back, over PCIe.
    t.offload_s += shard * (GradientBytesOf(model, c).reduced + WeightBytesOf(model, c).held) /
                   hw.pcie_bytes_per_s();
  } else {
    // (Every stage steps its own layers and the iteration waits for the longest: Muon's
    // per-layer orthogonalisation on the stage of the most layers, not the pacing one.)
    t.optimizer_s = hw.MemoryTime(shard * step.bytes_per_param) + MuonStepS(model, c, stages.max_stage_layers);
  }
  // The step's kernels are launched from the host like the layers' (a distributed
  // optimizer's rank updates a 1/dp share of the tensors); what their launches take
  // beyond the GPU's time is host-bound.
  const double opt_tensors = sharded_step ? CeilCount(s.tensors / dpcp) : s.tensors;
  // (+ under 16-bit gradients the fp32 cast of each gradient tensor, a launch apiece at
  // kGradCastLaunchShare of an op's.)
  const double opt_kernels = c.offload.optimizer ? 0
                             : step.passes * OptimizerKernelsPerPass(opt_tensors, shard) +
                                   (step.fp32_grad_copy_at_step ? kGradCastLaunchShare * opt_tensors : 0);
  const double host_kernel_s = c.cuda_graphs ? hw.kernel_gap_s() : hw.kernel_overhead_s();
  const double optimizer_host_s = std::max(0.0, opt_kernels * host_kernel_s - t.optimizer_s);
  // DeepSpeed's BF16_Optimizer adds each micro-batch's gradients into the fp32 ones after
  // every backward of every stage: GPU time each micro-batch, its launches beyond it as
  // the layers' (overhead), and both in the fill and drain.
  double hp_grad_gpu_s = 0, hp_grad_host_s = 0;
  if (DeepSpeedBf16Optimizer(model, c)) {
    hp_grad_gpu_s = hw.MemoryTime(s.params * kHpGradAccumulateBytesPerParam);
    hp_grad_host_s = HostExcess(kHpGradAccumulateKernelsPerTensor * s.tensors, host_kernel_s, hp_grad_gpu_s);
    t.optimizer_s += m * hp_grad_gpu_s;
    t.pipeline_bubble_s += BubbleStages(c, wgrad_share) * (hp_grad_gpu_s + hp_grad_host_s);
  }

  MemoryBreakdown& mem = out->memory;
  if (memory != nullptr) {
    mem = *memory;
  } else {
    AssembleMemory(model, stages, c, sys, &mem);
  }
  // Every GPU computes its own stage's layers: on average the stages' mean, not the
  // slowest stage's.
  out->busy_s = m * stages.mean_compute_s + t.optimizer_s;

  // Framework overhead: per iteration, plus host-bound kernel launch time (the stage's
  // launches beyond its GPU time, every micro-batch, with what the combined 1F1B's steps
  // alone pay back, and the optimizer step's).
  t.overhead_s =
      hw.iteration_overhead_s() + m * (s.host_s + lone * s.host_paired_saving_s + hp_grad_host_s) + optimizer_host_s;
  InputLoading(c, sys, m, out);
}

void AssembleVariant(const ModelCosts& model, const StageCosts& stages, const ParallelConfig& c,
                     const SystemContext& sys, CandidateResult* out, VariantCache* cache) {
  const Hardware& hw = *sys.hw;
  const Collectives& coll = *sys.coll;
  const int m = std::max(1, c.NumMicroBatches());
  const BlockCosts& s = stages.slowest;
  TimeBreakdown& t = out->time;
  const Pairing pairing = PairingOf(c, m, s);
  const DataParallelInputs dp{model, stages, c, coll, hw, pairing.share, pairing.alone};
  VariantCache::Entry local;
  VariantCache::Entry& order = cache != nullptr ? cache->by_order[c.rank_order == RankOrder::kTpCpEpDpPp ? 0 : 1]
                                                : local;
  if (!order.filled) {
    PlaceDp(c, coll, stages.max_expert_params > 0, &order.groups);
    DataParallelCalls(dp, order.groups, stages.max_dense_params, stages.max_expert_params, &order.calls);
    if (c.pipeline_parallel > 1) {
      order.pp_level = coll.LevelOfStride(PipelineStride(c));
      order.hop_s = coll.SendRecv(model.pp_send_bytes, order.pp_level);
      order.embedding_sync_s = EmbeddingSyncS(model, c, coll);
    }
    order.filled = true;
  }

  // Pipeline point-to-point: one activation forward and one gradient backward per
  // micro-batch and chunk boundary, on the level that joins adjacent stages; the fill
  // and the drain wait on p - 1 of each beside the stages' compute in the bubble (the
  // first micro-batch's activation reaches the last stage through p - 1 sends, its
  // gradient returns through as many).
  // Traffic that leaves the node during the last micro-batch's backward (TP groups that
  // span nodes, with a CNN's spatial traffic beside them; the backward pipeline sends):
  // an overlapped DP reduction shares the node's NICs with it (see grad_sync).
  double beside_dp = 0;
  t.pp_comm_s = 0;
  if (c.pipeline_parallel > 1) {
    const double hop = order.hop_s;
    t.pp_comm_s = 2.0 * (static_cast<double>(m) * c.virtual_pipeline_stages + c.pipeline_parallel - 1) * hop;
    if (order.pp_level >= 1) beside_dp += c.virtual_pipeline_stages * hop;
  }
  const int64_t tp_size = int64_t{c.tensor_parallel} * c.filter_parallel * c.channel_parallel;
  if (OverlapsGradientReduction(c) && tp_size > hw.gpus_per_node() &&
      coll.Place(static_cast<int>(tp_size), 1).level >= 1) {
    beside_dp += s.tp_bwd_s + s.spatial_bwd_s;
  }

  // Data-parallel gradient reduction (and ZeRO parameter gathers).
  double dp_in_passes_s = 0;
  t.dp_comm_s = DataParallelExposed(dp, order.groups, stages.max_dense_params, stages.max_expert_params, beside_dp,
                                    m, order.calls, &dp_in_passes_s) +
                order.embedding_sync_s;
  // The offload copies run on beside the passes' waits for those collectives too.
  t.offload_s += LayerOffload(model, stages, c, hw, m, dp_in_passes_s);

  out->iteration_time_s = t.Sum();
  Tally(c, sys, out);
}

void BoundVariants(const ParallelConfig& c, const SystemContext& sys, const CandidateResult& shared,
                   CandidateResult* bound) {
  *bound = shared;
  bound->time.pp_comm_s = 0;
  bound->time.dp_comm_s = 0;
  bound->iteration_time_s = bound->time.Sum();
  Tally(c, sys, bound);
  // Tally's energy grows with the time while the nodes' power beside the GPUs stays at
  // least what their CPUs shed when idle; else no bound on energy.
  if (sys.cpu_power_w * (1 - kCpuIdleShare) > sys.node_power_w) bound->energy_j = 0;
}

void Assemble(const ModelCosts& model, const StageCosts& stages, const ParallelConfig& c,
              const SystemContext& sys, CandidateResult* out, const MemoryBreakdown* memory) {
  AssembleShared(model, stages, c, sys, out, memory);
  AssembleVariant(model, stages, c, sys, out);
}

}  // namespace paraplan
