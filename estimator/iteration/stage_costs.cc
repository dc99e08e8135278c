#include "estimator/iteration/stage_costs.h"

#include <algorithm>
#include <cstdint>

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

StageCosts ComputeStageCosts(const ModelCosts& model, int pp, int v) {
  StageCosts out;
  out.pp = pp;
  out.v = v;
  const int layers = static_cast<int>(model.layers.size());
  const int chunks = pp * v;
  double sum_total = 0;
  for (int stage = 0; stage < pp; ++stage) {
    BlockCosts s;
    BlockCosts first_chunk;
    int stage_layers = 0;
    for (int chunk = stage; chunk < chunks; chunk += pp) {
      BlockCosts c;
      // Chunk k holds layers [k L / chunks, (k + 1) L / chunks): even when L divides.
      const int begin = static_cast<int>(int64_t{chunk} * layers / chunks);
      const int end = static_cast<int>(int64_t{chunk + 1} * layers / chunks);
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
