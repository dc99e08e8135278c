#include "estimator/iteration/stage_costs.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "estimator/inputs/parallel_config.h"

namespace paraplan {

namespace {
StageMemory MemoryOf(const BlockCosts& stage, const BlockCosts& chunk) {
  StageMemory m;
  m.params = stage.params;
  m.expert_params = stage.expert_params;
  m.activation_bytes_per_mb = stage.activation_bytes;
  m.transient_bytes = stage.transient_bytes;
  m.chunk_activation_bytes_per_mb = chunk.activation_bytes;
  return m;
}
}  // namespace

StageCosts ComputeStageCosts(const ModelCosts& model, int pp, int v, int first_layers, int last_layers) {
  StageCosts out;
  out.pp = pp;
  out.v = v;
  const int layers = static_cast<int>(model.layers.size());
  const int chunks = pp * v;
  // First layer of each chunk, in chunk order (chunk k = virtual stage k / pp on stage
  // k % pp); an even split unless the end stages' counts are given.
  std::vector<int> begins;
  if (first_layers > 0 || last_layers > 0) {
    ParallelConfig layout;
    layout.pipeline_parallel = pp;
    layout.virtual_pipeline_stages = v;
    layout.first_pipeline_stage_layers = first_layers;
    layout.last_pipeline_stage_layers = last_layers;
    const std::vector<int> counts = layout.PipelineChunkLayers(layers);
    begins.resize(chunks + 1);
    for (int k = 0; k < chunks; ++k) begins[k + 1] = std::clamp(begins[k] + std::max(0, counts[k]), 0, layers);
  }
  auto begin_of = [&](int chunk) {
    return begins.empty() ? static_cast<int>(int64_t{chunk} * layers / chunks) : begins[chunk];
  };
  double sum_total = 0;
  for (int stage = 0; stage < pp; ++stage) {
    BlockCosts s;
    BlockCosts first_chunk;
    int stage_layers = 0;
    for (int chunk = stage; chunk < chunks; chunk += pp) {
      BlockCosts c;
      const int begin = begin_of(chunk);
      const int end = begin_of(chunk + 1);
      for (int l = begin; l < end; ++l) {
        c.Add(model.layers[l]);
      }
      stage_layers += end - begin;
      if (chunk == stage) first_chunk = c;
      s.Add(c);
    }
    if (stage == 0) {
      s.Add(model.pre);
      first_chunk.Add(model.pre);
    }
    if (stage == pp - 1) s.Add(model.post);
    const double total = s.TotalS();
    sum_total += total;
    if (stage == 0 || total > out.slowest_total_s) {
      out.slowest = s;
      out.slowest_total_s = total;
      out.slowest_layers = stage_layers;
    }
    if (stage == 0) out.first = MemoryOf(s, first_chunk);
    if (stage == pp - 1) out.last = MemoryOf(s, first_chunk);
  }
  out.mean_total_s = sum_total / pp;
  return out;
}

}  // namespace paraplan
