#include "estimator/iteration/stage_costs.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/inlined_vector.h"

#include "estimator/inputs/parallel_config.h"
#include "estimator/iteration/pipeline_schedule.h"

namespace paraplan {

namespace {

// The first chunk's share of a stage's activations (even chunks where it holds none).
double Chunk0Share(double chunk0, double stage, int chunks_per_stage) {
  return stage > 0 ? chunk0 / stage : 1.0 / std::max(1, chunks_per_stage);
}

StageMemory MemoryOf(const BlockCosts& stage, const BlockCosts& chunk, int layers, int index, int chunks_per_stage) {
  StageMemory m;
  m.index = index;
  m.offloaded_bytes_per_mb = stage.offloaded_bytes;
  m.expert_offloadable_bytes_per_mb = stage.expert_offloadable_bytes;
  m.light_recompute_bytes_per_mb = stage.light_recompute_bytes;
  m.layers = layers;
  m.params = stage.params;
  m.expert_params = stage.expert_params;
  m.activation_bytes_per_mb = stage.activation_bytes;
  m.transient_bytes = stage.transient_bytes;
  m.chunk_activation_bytes_per_mb = chunk.activation_bytes;
  m.chunk0_share = Chunk0Share(chunk.activation_bytes, stage.activation_bytes, chunks_per_stage);
  return m;
}

// Whether some block of `model` moves saved tensors to the host (offload_modules).
bool Offloads(const ModelCosts& model) {
  const double layers = model.prefix.empty() ? 0.0 : model.prefix.back().offloaded_bytes;
  return layers + model.pre.offloaded_bytes + model.post.offloaded_bytes > 0;
}

// The chunks of a pipeline split: the first layer of each chunk, in chunk order (chunk k
// = virtual stage k / pp on stage k % pp); an even split unless the end stages' counts
// are given.
class Chunks {
 public:
  Chunks(const ModelCosts& model, int pp, int v, int first_layers, int last_layers)
      : model_(model),
        pp_(pp),
        chunks_(pp * v),
        layers_(static_cast<int>(model.layers.size())),
        offloads_(Offloads(model)) {
    // Each boundary computed once here (the sums below read each twice or more).
    begins_.resize(chunks_ + 1);
    const int middle = layers_ - first_layers - last_layers;
    if ((first_layers > 0 || last_layers > 0) && v == 1 && first_layers >= 0 && middle >= 0 &&
        (pp == 2 ? middle == 0 : pp > 2 && middle % (pp - 2) == 0)) {
      // Ends given and the middle stages even (how Megatron-Core lays them out without
      // virtual stages): the boundaries by arithmetic, nothing allocated (the search asks
      // this for many candidate ends).
      const int per = pp > 2 ? middle / (pp - 2) : 0;
      for (int k = 1; k < chunks_; ++k) begins_[k] = first_layers + (k - 1) * per;
    } else if (first_layers > 0 || last_layers > 0) {
      ParallelConfig layout;
      layout.pipeline_parallel = pp;
      layout.virtual_pipeline_stages = v;
      layout.first_pipeline_stage_layers = first_layers;
      layout.last_pipeline_stage_layers = last_layers;
      const std::vector<int> counts = layout.PipelineChunkLayers(layers_);
      for (int k = 0; k < chunks_; ++k) begins_[k + 1] = std::clamp(begins_[k] + std::max(0, counts[k]), 0, layers_);
      return;
    } else {
      for (int k = 1; k < chunks_; ++k) begins_[k] = static_cast<int>(int64_t{k} * layers_ / chunks_);
    }
    begins_[chunks_] = layers_;
  }
  int v() const { return chunks_ / pp_; }
  int Begin(int chunk) const { return begins_[chunk]; }
  int Layers(int stage) const {
    int n = 0;
    for (int chunk = stage; chunk < chunks_; chunk += pp_) n += Begin(chunk + 1) - Begin(chunk);
    return n;
  }
  // The stage's time per micro-batch (its chunks, and the embedding / head on the end
  // stages), from the prefix sums.
  double TotalS(int stage) const {
    double t = 0;
    for (int chunk = stage; chunk < chunks_; chunk += pp_) {
      t += model_.prefix_total_s[Begin(chunk + 1)] - model_.prefix_total_s[Begin(chunk)];
    }
    if (stage == 0) t += model_.pre.TotalS();
    if (stage == pp_ - 1) t += model_.post.TotalS();
    return t;
  }
  // What a stage's offloaded tensors' copies take per micro-batch beyond the compute they
  // hide behind (OffloadExposedS): with its time, the stage's pace (a stage of more
  // layers may pace the pipeline where an end stage's head computes longer).
  double ExposedCopiesS(int stage) const {
    if (!offloads_) return 0;
    BlockCosts sums;
    for (int chunk = stage; chunk < chunks_; chunk += pp_) {
      sums.AddSums(BlockCosts::Between(model_.prefix[Begin(chunk)], model_.prefix[Begin(chunk + 1)]));
    }
    if (stage == 0) sums.AddSums(model_.pre);
    if (stage == pp_ - 1) sums.AddSums(model_.post);
    // (The steady state's steps are paired where the layers pair them.)
    return OffloadExposedS(sums, model_, {}, {}, Paired(sums) ? 1.0 : 0.0);
  }
  // The terms of a stage's memory that Outweighs compares, from the prefix sums alone
  // (transient bytes left 0): what the search can afford for every stage.
  StageMemory Sums(int stage) const {
    StageMemory m;
    m.index = stage;
    for (int chunk = stage; chunk < chunks_; chunk += pp_) {
      const BlockCosts& a = model_.prefix[Begin(chunk)];
      const BlockCosts& b = model_.prefix[Begin(chunk + 1)];
      m.params += b.params - a.params;
      m.expert_params += b.expert_params - a.expert_params;
      m.activation_bytes_per_mb += b.activation_bytes - a.activation_bytes;
      m.offloaded_bytes_per_mb += b.offloaded_bytes - a.offloaded_bytes;
    }
    double chunk0 = model_.prefix[Begin(stage + 1)].activation_bytes - model_.prefix[Begin(stage)].activation_bytes;
    if (stage == 0) {
      m.params += model_.pre.params;
      m.expert_params += model_.pre.expert_params;
      m.activation_bytes_per_mb += model_.pre.activation_bytes;
      m.offloaded_bytes_per_mb += model_.pre.offloaded_bytes;
      chunk0 += model_.pre.activation_bytes;
    }
    m.chunk0_share = Chunk0Share(chunk0, m.activation_bytes_per_mb, v());
    return m;
  }
  // The stage's costs in full, its first chunk's, and its layer count.
  void Stage(int stage, BlockCosts* s, BlockCosts* first_chunk, int* layers) const {
    *s = BlockCosts();
    *first_chunk = BlockCosts();
    *layers = 0;
    for (int chunk = stage; chunk < chunks_; chunk += pp_) {
      const int begin = Begin(chunk), end = Begin(chunk + 1);
      BlockCosts c = BlockCosts::Between(model_.prefix[begin], model_.prefix[end]);
      for (int l = begin; l < end; ++l) c.transient_bytes = std::max(c.transient_bytes, model_.transient_bytes[l]);
      *layers += end - begin;
      if (chunk == stage) *first_chunk = c;
      s->Add(c);
    }
    if (stage == 0) {
      s->Add(model_.pre);
      first_chunk->Add(model_.pre);
    }
    if (stage == pp_ - 1) s->Add(model_.post);
    if (stage == pp_ - 1 && pp_ > 1 && model_.stage_embedding_copy_params > 0) {
      s->params += model_.stage_embedding_copy_params;  // its weights, gradients and states
      s->tensors += 1;
      s->weight_tensors += 1;
    }
  }

 private:
  const ModelCosts& model_;
  const int pp_, chunks_, layers_;
  const bool offloads_;  // Offloads(model_)
  // The first layer of each chunk, and the layer count last (chunks_ + 1 entries: at most
  // a layer a chunk, so inline up to 128 chunks).
  absl::InlinedVector<int, 129> begins_;
};

// The schedules a split with `v` chunks a stage can run under, as far as a stage's
// warm-up goes: 1F1B-like (GPipe holds m everywhere), or interleaved with and without the
// all-to-all overlap's extra chunk.
struct WarmUps {
  ParallelConfig c[2];
  int n = 0;
  WarmUps(int pp, int v) {
    c[0].pipeline_parallel = c[1].pipeline_parallel = pp;
    c[0].virtual_pipeline_stages = c[1].virtual_pipeline_stages = v;
    c[0].pipeline_schedule = c[1].pipeline_schedule = v > 1 ? PipelineSchedule::kInterleaved1F1B : PipelineSchedule::k1F1B;
    c[1].moe_a2a_overlap = true;
    n = v > 1 ? 2 : 1;
  }
};

// Whether stage `a` holds at least what `b` does, whatever the micro-batch count and
// schedule: every term its memory is made of, and its activations times the micro-batches
// its warm-up keeps in flight (an earlier stage keeps more, but a first chunk that is the
// embedding alone can leave it fewer: Llama 3.1 405B's 16 against the next rank's 17.6).
bool Outweighs(const StageMemory& a, const StageMemory& b, const WarmUps& w) {
  if (!(a.params - a.expert_params >= b.params - b.expert_params && a.expert_params >= b.expert_params &&
        a.activation_bytes_per_mb >= b.activation_bytes_per_mb && a.transient_bytes >= b.transient_bytes &&
        a.offloaded_bytes_per_mb >= b.offloaded_bytes_per_mb)) {
    return false;
  }
  // The held count grows with the warm-up's forwards (fewer on later ranks) and with the
  // first chunk's share: an earlier stage with no lighter first chunk holds no fewer.
  if (a.index <= b.index && a.chunk0_share >= b.chunk0_share) return true;
  constexpr int kMany = 1 << 30;  // micro-batches: the warm-up, not m, bounds what is held
  for (int i = 0; i < w.n; ++i) {
    const double ha = InFlightMicroBatches(w.c[i], kMany, a.chunk0_share, a.index);
    const double hb = InFlightMicroBatches(w.c[i], kMany, b.chunk0_share, b.index);
    if (a.activation_bytes_per_mb * ha < b.activation_bytes_per_mb * hb ||
        a.offloaded_bytes_per_mb * ha < b.offloaded_bytes_per_mb * hb) {
      return false;
    }
  }
  return true;
}

// Keeps the middle stages no earlier stage outweighs, at most kMemoryMiddleStages of
// them: where more, those with the most bytes at one parameter byte and one micro-batch
// each.
template <typename NoteParams>
void KeepHeavyMiddleStages(const ModelCosts& model, const Chunks& chunks, int pp, StageCosts* out,
                           NoteParams note_params) {
  absl::InlinedVector<StageMemory, kMemoryMiddleStages + 1> kept;  // (more only past the bound, then cut)
  const StageMemory* heaviest_before = &out->first;
  const WarmUps warm_ups(pp, chunks.v());
  auto outweighs = [&](const StageMemory& a, const StageMemory& b) { return Outweighs(a, b, warm_ups); };
  // A stage whose transient bytes are the largest any layer has outweighs another from
  // the other's sums alone.
  auto by_sums = [&](const StageMemory& a, const StageMemory& sums) {
    return a.transient_bytes >= model.max_layer_transient_bytes && outweighs(a, sums);
  };
  for (int stage = 1; stage + 1 < pp; ++stage) {
    const StageMemory sums = chunks.Sums(stage);
    note_params(sums);
    bool decided = by_sums(*heaviest_before, sums);
    for (size_t i = 0; i < kept.size() && !decided; ++i) decided = by_sums(kept[i], sums);
    if (decided) continue;
    BlockCosts s, first_chunk;
    int layers = 0;
    chunks.Stage(stage, &s, &first_chunk, &layers);
    const StageMemory m = MemoryOf(s, first_chunk, layers, stage, chunks.v());
    if (outweighs(*heaviest_before, m)) continue;
    bool outweighed = false;
    for (const StageMemory& k : kept) outweighed = outweighed || outweighs(k, m);
    if (!outweighed) kept.push_back(m);
  }
  if (kept.size() > kMemoryMiddleStages) {
    auto bytes = [](const StageMemory& m) { return m.params + m.activation_bytes_per_mb + m.transient_bytes; };
    std::stable_sort(kept.begin(), kept.end(),
                     [&](const StageMemory& a, const StageMemory& b) { return bytes(a) > bytes(b); });
    kept.resize(kMemoryMiddleStages);
    std::sort(kept.begin(), kept.end(), [](const StageMemory& a, const StageMemory& b) { return a.index < b.index; });
  }
  out->middles = static_cast<int>(kept.size());
  std::copy(kept.begin(), kept.end(), out->middle.begin());
}

}  // namespace

double SlowestStageS(const ModelCosts& model, int pp, int v, int first_layers, int last_layers, double cap) {
  const Chunks chunks(model, pp, v, first_layers, last_layers);
  double slowest = 0;
  for (int stage = 0; stage < pp && slowest < cap; ++stage) {
    slowest = std::max(slowest, chunks.TotalS(stage) + chunks.ExposedCopiesS(stage));
  }
  return slowest;
}

StageCosts ComputeStageCosts(const ModelCosts& given, int pp, int v, int first_layers, int last_layers) {
  // Costs built by hand (tests) are indexed here, on a copy (nothing built otherwise:
  // the search calls this per layout).
  std::optional<ModelCosts> indexed;
  if (!given.Indexed()) {
    indexed.emplace(given);
    IndexLayers(&*indexed);
  }
  const ModelCosts& model = indexed.has_value() ? *indexed : given;
  StageCosts out;
  out.pp = pp;
  out.v = v;
  const Chunks chunks(model, pp, v, first_layers, last_layers);
  // The slowest stage sets the pace; only it and the two end stages (memory) are summed
  // in full.
  double sum_total = 0, sum_pace = 0, slowest = 0;
  int slowest_stage = 0;
  for (int stage = 0; stage < pp; ++stage) {
    out.max_stage_layers =
        std::max(out.max_stage_layers, chunks.Layers(stage) + (stage == pp - 1 ? model.mtp_layers : 0));
    const double total = chunks.TotalS(stage);
    sum_total += total;
    const double pace = total + chunks.ExposedCopiesS(stage);
    sum_pace += pace;
    if (stage == 0 || pace > slowest) {
      slowest = pace;
      slowest_stage = stage;
    }
  }
  out.mean_total_s = sum_total / pp;
  out.mean_pace_s = sum_pace / pp;
  const auto compute = [](const BlockCosts& b) { return b.fwd_s + b.bwd_s + b.recompute_s; };
  out.mean_compute_s = (compute(model.prefix.back()) + compute(model.pre) + compute(model.post)) / pp;
  BlockCosts s, first_chunk;
  int layers = 0;
  chunks.Stage(slowest_stage, &s, &first_chunk, &layers);
  out.slowest = s;
  out.slowest_total_s = s.TotalS();
  out.slowest_layers = layers;
  chunks.Stage(0, &s, &first_chunk, &layers);
  out.first = MemoryOf(s, first_chunk, layers, 0, v);
  if (pp > 1) chunks.Stage(pp - 1, &s, &first_chunk, &layers);
  out.last = MemoryOf(s, first_chunk, layers, pp - 1, v);
  out.last.head_activation_bytes_per_mb = model.post.activation_bytes;
  auto note_params = [&out](const StageMemory& m) {
    out.max_dense_params = std::max(out.max_dense_params, m.params - m.expert_params);
    out.max_expert_params = std::max(out.max_expert_params, m.expert_params);
  };
  note_params(out.first);
  note_params(out.last);
  KeepHeavyMiddleStages(model, chunks, pp, &out, note_params);
  return out;
}

}  // namespace paraplan
