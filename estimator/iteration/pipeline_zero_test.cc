// Pipeline partitions, the zero-bubble schedule and sharded data parallelism, checked
// against numbers computed by hand from their published formulas.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "estimator/iteration/assemble.h"
#include "estimator/iteration/estimate.h"
#include "estimator/iteration/pipeline_schedule.h"
#include "estimator/iteration/stage_costs.h"
#include "estimator/system/collectives.h"
#include "estimator/system/hardware.h"
#include "estimator/testing/test_util.h"
#include "estimator/workloads/model_costs.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::Config;
using testing::Profile;

// BLOOM-176B (Le Scao et al. 2022): 70 layers, hidden 14336, 112 heads, sequence 2048,
// vocabulary 250,880, trained with TP 4 x PP 12.
Workload Bloom() {
  Workload w;
  w.name = "bloom-176b";
  w.transformer.num_layers = 70;
  w.transformer.hidden_size = 14336;
  w.transformer.num_attention_heads = 112;
  w.transformer.seq_length = 2048;
  w.transformer.vocab_size = 250880;
  return w;
}

// `w`'s per-layer costs under `c` on `p` in 16-bit precision.
ModelCosts Bf16Costs(const Workload& w, const ParallelConfig& c, const SystemProfile& p) {
  const Hardware hw(p, Precision::kBf16);
  const Collectives coll(hw);
  absl::StatusOr<ModelCosts> m = ComputeModelCosts(w, ModelShape::Of(c.Normalized()), hw, coll);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : ModelCosts();
}

// Qwen3-235B's 94 layers over PP 32 x v 3 (the Megatron-MoE model zoo's run, with the
// embedding and the loss each counted as a layer): 2 layers on the first and last
// stages, 3 on every other; the first stage keeps the embedding's parameters beside its 2.
TEST(Pipeline, NinetyFourLayersOverThirtyTwoStagesOfThree) {
  const SystemProfile p = Profile("dgx-h100-80gb");
  const Hardware hw(p, Precision::kBf16);
  const Collectives coll(hw);
  ParallelConfig c = Config(2, 32, 4, 1, 2048);
  c.virtual_pipeline_stages = 3;
  c.first_pipeline_stage_layers = 2;
  c.last_pipeline_stage_layers = 2;
  c.sequence_parallel = true;
  c.expert_parallel = 8;
  c.expert_tensor_parallel = 1;
  const Workload w = testing::Model("qwen3-235b-a22b");
  absl::StatusOr<Estimate> e = EstimateIteration(w, c, p);
  ASSERT_TRUE(e.ok()) << e.status();
  absl::StatusOr<ModelCosts> m = ComputeModelCosts(w, ModelShape::Of(c.Normalized()), hw, coll);
  ASSERT_TRUE(m.ok());
  const StageCosts s = ComputeStageCosts(*m, 32, 3, 2, 2);
  const BlockCosts& layer = m->layers[0];
  // The pace: 3 layers, or 2 beside the embedding or the LM head (151,936 x 4,096).
  EXPECT_NEAR(s.slowest_total_s,
              std::max({3 * layer.TotalS(), 2 * layer.TotalS() + m->pre.TotalS(), 2 * layer.TotalS() + m->post.TotalS()}),
              1e-12);
  EXPECT_NEAR(s.first.params, 2 * layer.params + m->pre.params, 1);
  EXPECT_NEAR(s.last.params, 2 * layer.params + m->post.params, 1);
  // The first stage's first chunk is the embedding alone.
  EXPECT_NEAR(s.first.chunk_activation_bytes_per_mb, m->pre.activation_bytes, 1);
}

// Megatron-Core's interleaved warm-up on the first rank: (p - 1) x 2 + (v - 1) x p forwards
// and one more, p micro-batches of each chunk in turn — every chunk's p, then p - 1 more
// of chunk 0. By hand, in first-stage micro-batches:
// - PP 16, v 8, chunk 0 the embedding alone (Llama 3.1 405B with the embedding's slot
//   accounted; its activations ~0 of the stage's): 16 (the even-chunk formula p + (p - 1) / v
//   says 17.875);
// - 7 layers over v 2 as 3 + 4: 4 x 7 + 3 x 3 = 37 layers = 4 + 9/7; even chunks: 4 + 3/2;
//   the all-to-all overlap warms up one chunk-0 micro-batch more: 4 + 12/7;
// - never more than the micro-batches there are; 1F1B p; GPipe all of them.
// And end to end: Llama 3 8B at PP 4, v 2 with 7 layers on the first stage (3 + 4): the
// first stage holds its activations for 4 micro-batches and chunk 0's (the embedding and 3
// layers) for 3 more.
TEST(Pipeline, InterleavedWarmUpFillsChunkZeroLast) {
  ParallelConfig c = Config(4, 16, 2, 1, 768);
  c.virtual_pipeline_stages = 8;
  c.pipeline_schedule = PipelineSchedule::kInterleaved1F1B;
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(c, 384, 0), 16);
  c = Config(1, 4, 1, 1, 16);
  c.virtual_pipeline_stages = 2;
  c.pipeline_schedule = PipelineSchedule::kInterleaved1F1B;
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(c, 16, 3.0 / 7), 4 + 9.0 / 7);
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(c, 16, 0.5), 4 + 1.5);
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(c, 4, 0.5), 4);
  c.moe_a2a_overlap = true;
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(c, 16, 3.0 / 7), 4 + 12.0 / 7);
  c.moe_a2a_overlap = false;
  c.pipeline_schedule = PipelineSchedule::k1F1B;
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(c, 16, 0.5), 4);
  c.pipeline_schedule = PipelineSchedule::kGPipe;
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(c, 16, 0.5), 16);

  const SystemProfile p = Profile("dgx-h100-80gb");
  const Workload w = testing::Model("llama3-8b");
  c = Config(1, 4, 1, 1, 16);
  c.virtual_pipeline_stages = 2;
  c.first_pipeline_stage_layers = 7;
  c.last_pipeline_stage_layers = 9;
  c.flash_attention = true;
  c = c.Normalized();
  const Hardware hw(p, w.precision);
  const Collectives coll(hw);
  absl::StatusOr<ModelCosts> m = ComputeModelCosts(w, ModelShape::Of(c), hw, coll);
  ASSERT_TRUE(m.ok()) << m.status();
  const StageCosts s = ComputeStageCosts(*m, 4, 2, 7, 9);
  const double layer = m->layers[0].activation_bytes;
  EXPECT_NEAR(s.first.activation_bytes_per_mb, m->pre.activation_bytes + 7 * layer, 1);
  EXPECT_NEAR(s.first.chunk_activation_bytes_per_mb, m->pre.activation_bytes + 3 * layer, 1);
  absl::StatusOr<Estimate> e = EstimateIteration(w, c, p);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_NEAR(e->memory.activations_bytes,
              4 * s.first.activation_bytes_per_mb + 3 * s.first.chunk_activation_bytes_per_mb +
                  s.first.transient_bytes,
              1);
}

// The warm-up by rank (Megatron-Core's get_pp_rank_microbatches: 2 (p - i - 1) + (v - 1) p
// forwards and one more on rank i, p of a chunk at a time from chunk 0), by hand in stage
// micro-batches with even chunks:
// - Llama 3.1 405B's layout (PP 16, v 8, one layer a chunk): rank 1 runs 28 + 112 + 1 =
//   141 chunks, every chunk's 16 and 13 more of chunk 0: 16 + 13/8;
// - PP 8, v 3, the last rank: 16 + 1 = 17 chunks, 8 of chunk 0, 8 of chunk 1, 1 of
//   chunk 2: 17/3 (not the one micro-batch 1F1B's last stage keeps);
// - 1F1B: rank i keeps p - i; GPipe every micro-batch on every rank.
TEST(Pipeline, WarmUpByRank) {
  ParallelConfig c = Config(4, 16, 2, 1, 768);
  c.virtual_pipeline_stages = 8;
  c.pipeline_schedule = PipelineSchedule::kInterleaved1F1B;
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(c, 384, 1.0 / 8, 1), 16 + 13.0 / 8);
  c = Config(1, 8, 1, 1, 64);
  c.virtual_pipeline_stages = 3;
  c.pipeline_schedule = PipelineSchedule::kInterleaved1F1B;
  EXPECT_NEAR(InFlightMicroBatches(c, 64, 1.0 / 3, 7), 17.0 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(c, 64, 1.0 / 3, 0), 8 + 7.0 / 3);
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(c, 4, 1.0 / 3, 0), 4);
  c.pipeline_schedule = PipelineSchedule::k1F1B;
  c.virtual_pipeline_stages = 1;
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(c, 64, 1, 3), 5);
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(c, 64, 1, 7), 1);
  c.pipeline_schedule = PipelineSchedule::kGPipe;
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(c, 64, 1, 7), 64);
}

// Memory is the heaviest stage's, wherever it sits. BLOOM over 12 stages (1F1B, no
// recompute): the first stage holds 5 layers (and the embedding) for 12 micro-batches, the
// second 6 layers for 11 — 66 layers' activations against ~61. Llama 3 8B at PP 4 with 4
// layers on each end stage: the two middle stages hold 12 layers each, whose 16-bit
// weights (ZeRO 1 shards only the optimizer) are the peak's, and whose gradient reduction
// is the one the step waits for.
TEST(Pipeline, TheHeaviestStageSetsTheMemory) {
  const SystemProfile a100 = Profile("dgx-a100-80gb");
  ParallelConfig c = Config(4, 12, 8, 1, 192);
  c.zero_stage = 1;
  const ModelCosts bloom = Bf16Costs(Bloom(), c, a100);
  const StageCosts s = ComputeStageCosts(bloom, 12, 1);
  ASSERT_GE(s.middles, 1);
  EXPECT_EQ(s.middle[0].index, 1);
  const BlockCosts& layer = bloom.layers[0];
  EXPECT_NEAR(s.middle[0].activation_bytes_per_mb, 6 * layer.activation_bytes, 1);
  absl::StatusOr<Estimate> e = EstimateIteration(Bloom(), c, a100);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_NEAR(e->memory.activations_bytes, 66 * layer.activation_bytes + s.middle[0].transient_bytes, 1);
  EXPECT_GT(66 * layer.activation_bytes, 12 * (5 * layer.activation_bytes + bloom.pre.activation_bytes));

  const SystemProfile h100 = Profile("dgx-h100-80gb");
  const Workload llama = testing::Model("llama3-8b");
  c = Config(1, 4, 2, 1, 64);
  c.zero_stage = 1;
  c.flash_attention = true;
  c.first_pipeline_stage_layers = 4;
  c.last_pipeline_stage_layers = 4;
  const ModelCosts m = Bf16Costs(llama, c, h100);
  EXPECT_NEAR(ComputeStageCosts(m, 4, 1, 4, 4).max_dense_params, 12 * m.layers[0].params, 1);
  e = EstimateIteration(llama, c, h100);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_NEAR(e->memory.weights_bytes, 2 * 12 * m.layers[0].params, 1);
}

// An earlier stage can hold fewer activations than a later one it outweighs term by term:
// 16 layers over PP 4 x v 2 (chunk k = layers 2k, 2k + 1), activations by hand so that the
// first stage's chunk 0 holds none (20 bytes a micro-batch, all in chunk 4) and the
// second's 19 (9 in chunk 1, 10 in chunk 5). Warm-up: the first rank 2 x 3 + 4 + 1 = 11
// chunk forwards, 4 of each chunk and 3 more of chunk 0: 4 x 20 = 80 bytes; the second
// 9, 4 of each and 1 more of its chunk 0: 4 x 19 + 9 = 85. The second is kept.
TEST(Pipeline, AMiddleStageCanHoldMoreThanTheFirstItWeighsLessThan) {
  ModelCosts m;
  const double act[16] = {0, 0, 4.5, 4.5, 1, 1, 1, 1, 10, 10, 5, 5, 1, 1, 1, 1};
  for (double a : act) {
    BlockCosts l;
    l.params = 1;
    l.activation_bytes = a;
    l.fwd_s = 1;
    m.layers.push_back(l);
  }
  const StageCosts s = ComputeStageCosts(m, 4, 2);
  EXPECT_DOUBLE_EQ(s.first.activation_bytes_per_mb, 20);
  ASSERT_GE(s.middles, 1);
  EXPECT_EQ(s.middle[0].index, 1);
  EXPECT_DOUBLE_EQ(s.middle[0].activation_bytes_per_mb, 19);
  ParallelConfig c = Config(1, 4, 1, 1, 8);
  c.virtual_pipeline_stages = 2;
  c.pipeline_schedule = PipelineSchedule::kInterleaved1F1B;
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(c, 8, s.first.chunk0_share, 0) * 20, 80);
  EXPECT_DOUBLE_EQ(InFlightMicroBatches(c, 8, s.middle[0].chunk0_share, 1) * 19, 85);
}

// CPU offloading of 3 layers a stage (Llama 3 70B, TP 8, PP 4, 8 micro-batches of 1,
// 1F1B: 4 in flight on the first stage): 3 layers' activations of every micro-batch in
// flight leave the GPU but one layer's (the buffer); the weights stay (Megatron-Core's
// cpu_offloading_weights = False); the host holds exactly what left, and the transfers
// cost time only where they outlast the stage's compute.
TEST(Pipeline, CpuOffloadLayers) {
  const SystemProfile p = Profile("dgx-h100-80gb");
  const Workload w = testing::Model("llama3-70b");
  ParallelConfig c = Config(8, 4, 1, 1, 8);
  c.flash_attention = true;
  absl::StatusOr<Estimate> base = EstimateIteration(w, c, p);
  c.cpu_offload_layers = 3;
  absl::StatusOr<Estimate> off = EstimateIteration(w, c, p);
  ASSERT_TRUE(base.ok() && off.ok()) << base.status() << off.status();
  const Hardware hw(p, w.precision);
  const Collectives coll(hw);
  absl::StatusOr<ModelCosts> m = ComputeModelCosts(w, ModelShape::Of(c.Normalized()), hw, coll);
  ASSERT_TRUE(m.ok());
  const BlockCosts& layer = m->layers[40];
  const double activations = 3 * layer.activation_bytes * 4 - layer.activation_bytes;
  EXPECT_EQ(base->memory.weights_bytes, off->memory.weights_bytes);
  EXPECT_NEAR(base->memory.activations_bytes - off->memory.activations_bytes, activations, 1);
  EXPECT_LT(off->memory.total_bytes, base->memory.total_bytes);
  EXPECT_NEAR(off->memory.host_bytes - base->memory.host_bytes, activations, 1);
  EXPECT_GE(off->iteration_time_s, base->iteration_time_s);
  c.cpu_offload_layers = 20;  // 80 layers over 4 stages: nothing left on the GPU
  EXPECT_EQ(EstimateIteration(w, c, p).status().code(), absl::StatusCode::kInvalidArgument);
}

// Megatron-Core's fine-grained activation offloading of expert_fc1 and moe_act
// (Qwen3-235B, TP 2 with SP, EP 8, PP 4, 8 micro-batches of 4,096 tokens, 1F1B: 4 in
// flight on the first stage). Each MoE layer's experts take 4,096 / 2 x 8 = 16,384 rows:
// fc1's input 16,384 x 4,096 x 2 bytes = 134,217,728 and the gated activation's input
// 16,384 x 2 x 1,536 x 2 bytes = 100,663,296 leave for the host. The first stage's 23
// layers keep them for 4 micro-batches but one layer's; the copies cost time only where
// they outlast the slowest stage's forward (out) and backward (back in).
TEST(Pipeline, FineGrainedActivationOffloading) {
  const SystemProfile p = Profile("dgx-h100-80gb");
  const Workload w = testing::Model("qwen3-235b-a22b");
  ParallelConfig c = Config(2, 4, 8, 1, 64);
  c.sequence_parallel = true;
  c.flash_attention = true;
  c.expert_parallel = 8;
  c.expert_tensor_parallel = 1;
  absl::StatusOr<Estimate> base = EstimateIteration(w, c, p);
  c.offload_modules = kOffloadExpertFc1 | kOffloadMoeAct;
  absl::StatusOr<Estimate> off = EstimateIteration(w, c, p);
  ASSERT_TRUE(base.ok() && off.ok()) << base.status() << off.status();
  const Hardware hw(p, w.precision);
  const Collectives coll(hw);
  absl::StatusOr<ModelCosts> m = ComputeModelCosts(w, ModelShape::Of(c.Normalized()), hw, coll);
  ASSERT_TRUE(m.ok());
  const double layer = 134217728.0 + 100663296.0;
  EXPECT_DOUBLE_EQ(m->layers[10].offloaded_bytes, layer);
  // The planner derives these costs from the shape's without offloading.
  ParallelConfig plain = c;
  plain.offload_modules = 0;
  absl::StatusOr<ModelCosts> without = ComputeModelCosts(w, ModelShape::Of(plain.Normalized()), hw, coll);
  ASSERT_TRUE(without.ok());
  const ModelCosts derived = WithExpertOffload(*without);
  ASSERT_EQ(derived.layers.size(), m->layers.size());
  for (size_t i = 0; i < m->layers.size(); ++i) {
    EXPECT_DOUBLE_EQ(derived.layers[i].activation_bytes, m->layers[i].activation_bytes) << i;
    EXPECT_DOUBLE_EQ(derived.layers[i].offloaded_bytes, m->layers[i].offloaded_bytes) << i;
    EXPECT_DOUBLE_EQ(derived.layers[i].TotalS(), m->layers[i].TotalS()) << i;
  }
  const double moved = 23 * layer * 4 - layer;
  EXPECT_NEAR(base->memory.activations_bytes - off->memory.activations_bytes, moved, 1);
  EXPECT_NEAR(off->memory.host_bytes - base->memory.host_bytes, moved, 1);
  const StageCosts s = ComputeStageCosts(*m, 4, 1);
  const double copy = s.slowest.offloaded_bytes / 50e9;  // PCIe Gen5 x16 as the profile states it
  const double ovl = hw.overlap_efficiency();
  const double exposed = 8 * (std::max(0.0, copy - ovl * s.slowest.fwd_s) +
                              std::max(0.0, copy - ovl * (s.slowest.bwd_s + s.slowest.recompute_s)));
  EXPECT_NEAR(off->time.offload_s - base->time.offload_s, exposed, 1e-9);
  // The fill and drain (3 stage steps under 1F1B) take each stage's copies beyond its
  // compute too, averaged over the stages: 23, 24, 23 and 24 layers (k x 94 / 4), the
  // embedding beside the first, the head beside the last.
  const BlockCosts& l = m->layers[10];
  const double c1 = l.offloaded_bytes / 50e9;
  auto stage_copies = [&](int n, const BlockCosts& end) {
    return std::max(0.0, n * c1 - ovl * (n * l.fwd_s + end.fwd_s)) +
           std::max(0.0, n * c1 - ovl * (n * (l.bwd_s + l.recompute_s) + end.bwd_s + end.recompute_s));
  };
  const BlockCosts none;
  const double mean_copies =
      (stage_copies(23, m->pre) + stage_copies(24, none) + stage_copies(23, none) + stage_copies(24, m->post)) / 4;
  EXPECT_NEAR(s.mean_pace_s - s.mean_total_s, mean_copies, 1e-12);
  const double bubble = off->time.pipeline_bubble_s - base->time.pipeline_bubble_s;
  EXPECT_NEAR(bubble, 3 * mean_copies, 1e-9);
  EXPECT_NEAR(off->iteration_time_s - base->iteration_time_s, exposed + bubble, 1e-6);
  // Megatron-Core's own refusals, and two ways of moving the same activations.
  c.offload.activations = true;
  EXPECT_EQ(EstimateIteration(w, c, p).status().code(), absl::StatusCode::kInvalidArgument);
  c.offload.activations = false;
  c.offload_modules = kOffloadAttnProj;
  EXPECT_EQ(EstimateIteration(w, c, p).status().code(), absl::StatusCode::kInvalidArgument);
  c.offload_modules = kOffloadMoeAct;
  c.recompute = Recompute::kSelective;
  c.recompute_modules = kRecomputeMoe;
  EXPECT_EQ(EstimateIteration(w, c, p).status().code(), absl::StatusCode::kInvalidArgument);
  c.recompute = Recompute::kFull;
  c.recompute_modules = 0;
  EXPECT_EQ(EstimateIteration(w, c, p).status().code(), absl::StatusCode::kInvalidArgument);
}

// A stage paces the pipeline by its compute and by the offload copies that compute does
// not hide. By hand: layers of 1 ms forward and 2 ms backward moving 100 MB each to the
// host at 50 GB/s (2 ms each way), fully overlappable; 3 on the first stage, 1 on the
// last beside a head of 2.5 / 5 ms. The last stage computes longer (10.5 ms against 9)
// and hides its one copy; the first's 6 ms copies outlast its 3 ms forward by 3 ms
// (its backward, 6 ms, hides them): it paces at 12 ms.
TEST(Pipeline, OffloadCopiesAStageCannotHideSetThePace) {
  ModelCosts m;
  BlockCosts layer;
  layer.fwd_s = 1e-3;
  layer.bwd_s = 2e-3;
  layer.offloaded_bytes = 100e6;
  m.layers.assign(4, layer);
  m.post.fwd_s = 2.5e-3;
  m.post.bwd_s = 5e-3;
  m.host_copy_s_per_byte = 1 / 50e9;
  m.copy_overlap = 1;
  IndexLayers(&m);
  const StageCosts s = ComputeStageCosts(m, 2, 1, 3, 1);
  EXPECT_EQ(s.slowest_layers, 3);
  // A GPU computes its own stage's layers: (4 x 3 ms + 7.5 ms) / 2 stages on average.
  EXPECT_NEAR(s.mean_compute_s, 9.75e-3, 1e-12);
  EXPECT_NEAR(s.slowest_total_s, 9e-3, 1e-12);
  EXPECT_NEAR(OffloadExposedS(s.slowest, m), 3e-3, 1e-12);
  EXPECT_NEAR(SlowestStageS(m, 2, 1, 3, 1), 12e-3, 1e-12);
  // The fill and drain step at each stage's pace: (12 + 10.5) / 2 (the last stage's 2 ms
  // of copies hide behind its 3.5 / 7 ms), not the compute's (9 + 10.5) / 2.
  EXPECT_NEAR(s.mean_total_s, 9.75e-3, 1e-12);
  EXPECT_NEAR(s.mean_pace_s, 11.25e-3, 1e-12);
  // Without the copies the head's stage is the slower.
  m.host_copy_s_per_byte = 0;
  EXPECT_EQ(ComputeStageCosts(m, 2, 1, 3, 1).slowest_layers, 1);
  EXPECT_NEAR(SlowestStageS(m, 2, 1, 3, 1), 10.5e-3, 1e-12);
}

TEST(Pipeline, SeventyLayersOverTwelveStages) {
  const SystemProfile p = Profile("dgx-a100-80gb");
  const Hardware hw(p, Precision::kBf16);
  const Collectives coll(hw);
  ParallelConfig c = Config(4, 12, 8, 2, 2048, Recompute::kFull);
  ASSERT_TRUE(EstimateIteration(Bloom(), c, p).ok());
  absl::StatusOr<ModelCosts> m = ComputeModelCosts(Bloom(), ModelShape::Of(c.Normalized()), hw, coll);
  ASSERT_TRUE(m.ok());
  const StageCosts s = ComputeStageCosts(*m, 12, 1);
  // Stage k holds layers [70k/12, 70(k+1)/12): 5, 6, 6, 6, 6, 6, 5, 6, 6, 6, 6, 6.
  EXPECT_EQ(s.slowest_layers, 6);
  const BlockCosts& layer = m->layers[0];
  // The first stage holds 5 layers and the embedding; the last 6 layers and the head.
  EXPECT_NEAR(s.first.params, 5 * layer.params + m->pre.params, 1);
  EXPECT_NEAR(s.last.params, 6 * layer.params + m->post.params, 1);
  // The slowest stage (the last: 6 layers + LM head) sets the pace.
  EXPECT_NEAR(s.slowest_total_s, 6 * layer.TotalS() + m->post.TotalS(), 1e-12);
}

// ZB-H1 (Qi et al. 2023): bubble (p-1)(F + B - W) against 1F1B's (p-1)(F + B + W).
TEST(Pipeline, ZeroBubbleUsesTheWeightGradientShare) {
  const SystemProfile p = Profile("dgx-a100-80gb");
  const Workload w = testing::Model("gpt3-175b");
  ParallelConfig c = Config(8, 8, 1, 1, 64);
  c.pipeline_schedule = PipelineSchedule::k1F1B;
  absl::StatusOr<Estimate> one_f_one_b = EstimateIteration(w, c, p);
  c.pipeline_schedule = PipelineSchedule::kZeroBubble;
  absl::StatusOr<Estimate> zb = EstimateIteration(w, c, p);
  ASSERT_TRUE(one_f_one_b.ok() && zb.ok());
  const Hardware hw(p, Precision::kBf16);
  const Collectives coll(hw);
  absl::StatusOr<ModelCosts> m = ComputeModelCosts(w, ModelShape::Of(c.Normalized()), hw, coll);
  const StageCosts s = ComputeStageCosts(*m, 8, 1);
  const double share = s.slowest.wgrad_s / s.slowest_total_s;
  // Weight gradients are a third of a transformer layer's GEMM FLOPs: W ~ 1/3 of the
  // stage time at most, so the bubble shrinks to (1 - 2W/T) of 1F1B's.
  EXPECT_GT(share, 0.2);
  EXPECT_LT(share, 0.34);
  EXPECT_NEAR(one_f_one_b->time.pipeline_bubble_s, 7 * s.mean_total_s, 1e-9);
  EXPECT_NEAR(zb->time.pipeline_bubble_s, 7 * s.mean_total_s * (1 - 2 * share), 1e-9);
}

// A simple network: 8 GPUs per node at 100 GB/s, 10 GB/s across nodes, efficiency 1,
// no per-step latency, 20 us per collective call.
SystemProfile SimpleNet() {
  SystemProfile p = Profile("dgx-a100-80gb");
  p.network_levels[0].bandwidth_gbytes_per_s = 100;
  p.network_levels[0].latency_us = 0;
  p.network_levels[1].bandwidth_gbytes_per_s = 10;
  p.network_levels[1].latency_us = 0;
  p.calibration.network = {{"nvlink", 1.0, 1e-9, {}}, {"infiniband", 1.0, 1e-9, {}}};
  p.calibration.collective_overhead_us = 20;
  return p;
}

// The model's costs under `c` in bf16.
// The dense parameters of `c`'s one pipeline stage (layers + embedding + head).
double OneStageParams(const Workload& w, const ParallelConfig& c, const SystemProfile& p) {
  return ComputeStageCosts(Bf16Costs(w, c, p), 1, 1).first.params;
}

// `dp` ranks of a global batch of `gbs` under ZeRO-3 as `framework` runs it.
ParallelConfig Zero3(int dp, int gbs, Framework framework) {
  ParallelConfig c = Config(1, 1, dp, 1, gbs);
  c.zero_stage = 3;
  c.framework = framework;
  return c;
}

// ZeRO-3 / FSDP without prefetch: every micro-batch gathers each layer's weights before
// its forward and again before its backward and reduce-scatters its gradients.
TEST(ShardedDataParallel, Zero3GathersEveryLayerEveryMicroBatch) {
  const SystemProfile p = SimpleNet();
  const Workload w = testing::Model("llama3-8b");
  ParallelConfig c = Config(1, 1, 64, 1, 128);  // 8 nodes, one rank per GPU: m = 2
  c.zero_stage = 3;
  absl::StatusOr<Estimate> e = EstimateIteration(w, c, p);
  ASSERT_TRUE(e.ok()) << e.status();
  // Dense parameters of the one stage (layers + embedding + head), spread over 32 layers.
  const double per_layer = OneStageParams(w, c, p) / 32;
  // DP 64 over 8 nodes of 8: a ring at 8 x 10 GB/s per node, capped by NVLink 100 GB/s.
  const double bw = 80e9;
  const double ag = 20e-6 + 63.0 / 64 * per_layer * 2 / bw;  // 2-byte weights
  // Megatron-FSDP keeps and reduces gradients in the 2-byte compute dtype.
  const double rs = 20e-6 + 63.0 / 64 * per_layer * 2 / bw;
  EXPECT_NEAR(e->time.dp_comm_s, 2 * 32 * (ag + ag + rs), 1e-9);
}

// Prefetched (one layer ahead), the gathers run on their own stream beside the layers'
// work: a layer's forward hides its successor's all-gather, its backward the next
// all-gather and its successor's reduce-scatter. Each costs what outlasts the layer's
// work, or 20 % of the stretch they share (overlap_efficiency 0.8: the collective's SMs).
// The first gather of each pass and the last reduce-scatter have no layer beside them:
// of 32 layers' collectives, 31 are beside the 32 layers' work, and one gather forward,
// one backward and one reduce-scatter a micro-batch are exposed whole. The layer's work
// includes the host-bound stretches where the compute stream waits for its launches,
// shared between forward and backward as the GPU's work is.
TEST(ShardedDataParallel, Zero3PrefetchedCostsWhatOutlastsTheLayerOrItsSmShare) {
  SystemProfile p = SimpleNet();
  p.calibration.overlap_efficiency = 0.8;
  const Workload w = testing::Model("llama3-8b");
  ParallelConfig c = Config(1, 1, 64, 1, 128);  // m = 2
  c.zero_stage = 3;
  c.overlap_param_gather = true;
  for (const double bw : {80e9, 2e9}) {  // a node's NICs; a fortieth of them (gathers outlast the layer)
    p.network_levels[1].bandwidth_gbytes_per_s = bw / 8e9;
    absl::StatusOr<Estimate> e = EstimateIteration(w, c, p);
    ASSERT_TRUE(e.ok()) << e.status();
    const double per_layer = OneStageParams(w, c, p) / 32;
    const double ag = 20e-6 + 63.0 / 64 * per_layer * 2 / bw;
    const double rs = ag;  // 2-byte gradients
    const BlockCosts s = ComputeStageCosts(Bf16Costs(w, c, p), 1, 1).slowest;
    const double gpu_fwd = s.fwd_s, gpu_bwd = s.bwd_s + s.recompute_s;
    const double host_fwd = s.host_s * gpu_fwd / (gpu_fwd + gpu_bwd);
    ASSERT_GT(s.host_s, 0);  // eager launches of a micro-batch of one sequence outlast some kernels
    const double fwd = (gpu_fwd + host_fwd) / 32, bwd = (gpu_bwd + s.host_s - host_fwd) / 32;
    auto exposed = [](double comm, double work) { return std::max(comm - work, 0.2 * std::min(comm, work)); };
    const double beside_fwd = 31 * ag / 32, beside_bwd = 31 * (ag + rs) / 32;
    EXPECT_NEAR(e->time.dp_comm_s, 2 * (ag + ag + rs + 32 * (exposed(beside_fwd, fwd) + exposed(beside_bwd, bwd))),
                1e-9)
        << bw;
    // Both sides of the max are exercised: the slow network's gathers outlast the forward.
    EXPECT_EQ(ag > fwd, bw < 10e9) << ag << " " << fwd;
  }
}

// DeepSpeed ZeRO-3 without prefetch: one all-gather per weight tensor and pass (Llama 3
// 8B: 4 a layer, 32 layers, the word and position embeddings and the untied head: 131),
// but the head's backward follows its forward at once, so it stays gathered (130 in
// backward: any other tensor waits for the head's 2 x 525 M elements, over
// stage3_max_reuse_distance's 1e9); the gradients in reduce buckets of 5e8 elements (17
// for its 8.03 B parameters); every micro-batch. Its live set is two tensors' weights,
// not two layers'.
TEST(ShardedDataParallel, DeepSpeedZero3GathersTensorByTensor) {
  const SystemProfile p = SimpleNet();
  const Workload w = testing::Model("llama3-8b");
  ParallelConfig c = Zero3(64, 128, Framework::kDeepSpeed);  // m = 2
  absl::StatusOr<Estimate> e = EstimateIteration(w, c, p);
  ASSERT_TRUE(e.ok()) << e.status();
  const double params = OneStageParams(w, c, p);
  ASSERT_NEAR(params, 8.03e9, 0.01e9);
  const double tensors = 32 * 4 + 2 + 1;
  const double ag = 20e-6 + 63.0 / 64 * params * 2 / tensors / 80e9;
  const double rs = 20e-6 + 63.0 / 64 * 5e8 * 2 / 80e9;  // fp16 / bf16 communication_data_type
  EXPECT_NEAR(e->time.dp_comm_s, 2 * ((2 * tensors - 1) * ag + 17 * rs), 1e-9);

  // The same run under FSDP gathers a layer at a time, and holds two layers.
  c.framework = Framework::kAny;
  absl::StatusOr<Estimate> fsdp = EstimateIteration(w, c, p);
  ASSERT_TRUE(fsdp.ok());
  const double layer_bytes = Bf16Costs(w, c, p).layers[0].params * 2;
  EXPECT_NEAR(fsdp->memory.buffers_bytes - e->memory.buffers_bytes, 2 * layer_bytes - 2 * layer_bytes / 4, 1e3);
}

// DeepSpeed ZeRO-3 prefetched (overlap_comm): each module's tensors gathered beside the
// module before, the gradient buckets reduced beside the backward. Llama 3 8B as above
// (131 tensors, 130 gathered again in backward, 17 buckets) over 32 layers: per layer
// 131 / 32 gathers forward and 130 / 32 backward, 17 / 32 reductions; the first gather
// of each pass and the last bucket wait for no module's work, whole each micro-batch.
TEST(ShardedDataParallel, DeepSpeedZero3PrefetchedExposesFirstGathersAndLastBucket) {
  SystemProfile p = SimpleNet();
  p.calibration.overlap_efficiency = 0.8;
  const Workload w = testing::Model("llama3-8b");
  ParallelConfig c = Zero3(64, 128, Framework::kDeepSpeed);  // m = 2
  c.overlap_param_gather = c.overlap_grad_reduce = true;
  absl::StatusOr<Estimate> e = EstimateIteration(w, c, p);
  ASSERT_TRUE(e.ok()) << e.status();
  const double params = OneStageParams(w, c, p);
  const double tensors = 32 * 4 + 2 + 1;
  const double ag = 20e-6 + 63.0 / 64 * params * 2 / tensors / 80e9;
  const double rs = 20e-6 + 63.0 / 64 * 5e8 * 2 / 80e9;
  const BlockCosts s = ComputeStageCosts(Bf16Costs(w, c, p), 1, 1).slowest;
  const double gpu_fwd = s.fwd_s, gpu_bwd = s.bwd_s + s.recompute_s;
  const double host_fwd = s.host_s * gpu_fwd / (gpu_fwd + gpu_bwd);
  const double fwd = (gpu_fwd + host_fwd) / 32, bwd = (gpu_bwd + s.host_s - host_fwd) / 32;
  // Eight ranks a node: the group's rings hold a node-wide ring's SMs (share 1).
  auto exposed = [](double comm, double work) { return std::max(comm - work, 0.2 * std::min(comm, work)); };
  const double beside_fwd = tensors / 32 * ag - ag / 32;
  const double beside_bwd = (tensors - 1) / 32 * ag - ag / 32 + 17.0 / 32 * rs - rs / 32;
  EXPECT_NEAR(e->time.dp_comm_s, 2 * (ag + ag + rs + 32 * (exposed(beside_fwd, fwd) + exposed(beside_bwd, bwd))),
              1e-9);
}

// DeepSpeed ZeRO-3 releases a tensor after its module unless it is used again within
// stage3_max_reuse_distance (1e9) elements. GPT-3 175B (96 layers of 4 weight tensors,
// word and position embeddings, tied head: 386 tensors of 453 M elements on average):
// without recompute the last two layer tensors stay gathered into their backward (the
// last is used again at once; the one before waits 2 x 453 M < 1e9 elements, the one
// before that 4 x 453 M > 1e9): 384 backward gathers.
// Under full recompute every tensor is gathered again for the recomputed forward, and in
// each layer only the last two of its 386 / 96 tensors stay from there into their
// backward (2 m x 453 M < 1e9 for m = 0, 1): 386 + 96 x (386 / 96 - 2) = 580.
TEST(ShardedDataParallel, DeepSpeedZero3RegathersWhatItReleased) {
  const SystemProfile p = SimpleNet();
  const Workload w = testing::Model("gpt3-175b");
  ParallelConfig c = Zero3(64, 128, Framework::kDeepSpeed);  // m = 2
  absl::StatusOr<Estimate> none = EstimateIteration(w, c, p);
  c.recompute = Recompute::kFull;
  absl::StatusOr<Estimate> full = EstimateIteration(w, c, p);
  ASSERT_TRUE(none.ok() && full.ok()) << none.status() << full.status();
  const double params = OneStageParams(w, c, p);
  const double tensors = 96 * 4 + 2;
  ASSERT_NEAR(params / tensors, 453e6, 1e6);
  const double ag = 20e-6 + 63.0 / 64 * params * 2 / tensors / 80e9;
  EXPECT_NEAR(full->time.dp_comm_s - none->time.dp_comm_s, 2 * (580 - 384) * ag, 1e-9);
  // The schedule lists the same calls: forward and backward gathers, every micro-batch.
  double gathers = 0;
  for (const CollectiveUse& use : full->collectives) {
    if (use.dimension == "dp" && use.kind == CollectiveKind::kAllGather) gathers += use.calls;
  }
  EXPECT_NEAR(gathers, 2 * (386 + 580), 1e-9);
}

// DeepSpeed before 0.6.0 synchronised the device at every ZeRO-3 fetch and looped over
// the ranks per gather, which the model leaves out: an estimate of a ZeRO-3 group of 256
// ranks or more under DeepSpeed says so; smaller groups, and other frameworks, do not.
TEST(ShardedDataParallel, DeepSpeedZero3AtScaleWarnsOfOldReleases) {
  const SystemProfile p = SimpleNet();
  const Workload w = testing::Model("llama3-8b");
  auto warns = [&](int dp, Framework f) {
    absl::StatusOr<Estimate> e = EstimateIteration(w, Zero3(dp, dp, f), p);
    EXPECT_TRUE(e.ok()) << e.status();
    if (!e.ok()) return false;
    return std::any_of(e->warnings.begin(), e->warnings.end(), [](const std::string& m) {
      return m.find("DeepSpeed releases before 0.6.0") != std::string::npos;
    });
  };
  EXPECT_TRUE(warns(256, Framework::kDeepSpeed));
  EXPECT_FALSE(warns(128, Framework::kDeepSpeed));
  EXPECT_FALSE(warns(256, Framework::kAny));
}

// ZeRO-2 keeps only a gradient shard: a reduce-scatter every micro-batch; ZeRO-1 (the
// distributed optimizer) reduce-scatters once per iteration.
TEST(ShardedDataParallel, Zero2ReducesEveryMicroBatch) {
  const SystemProfile p = SimpleNet();
  const Workload w = testing::Model("llama3-8b");
  ParallelConfig c = Config(1, 1, 64, 1, 256);  // m = 4
  c.zero_stage = 1;
  absl::StatusOr<Estimate> z1 = EstimateIteration(w, c, p);
  c.zero_stage = 2;
  absl::StatusOr<Estimate> z2 = EstimateIteration(w, c, p);
  ASSERT_TRUE(z1.ok() && z2.ok());
  const double params = OneStageParams(w, c, p);
  const double rs = 20e-6 + 63.0 / 64 * params * 4 / 80e9;
  const double ag = 20e-6 + 63.0 / 64 * params * 2 / 80e9;
  EXPECT_NEAR(z1->time.dp_comm_s, rs + ag, 1e-9);
  EXPECT_NEAR(z2->time.dp_comm_s, 4 * rs + ag, 1e-9);
}

// DeepSpeed's pipeline engine reduces the gradients and steps after the last micro-batch
// (deepspeed/runtime/pipe/schedule.py, TrainSchedule), and its ZeRO-1 / 2 optimizer
// gathers the updated parameters inside step() (stage_1_and_2.py): overlap_grad_reduce
// and overlap_param_gather hide nothing there, where under Megatron the same flags hide
// both. Without pipeline stages DeepSpeed's bucket hooks (overlap_comm) hide the
// reduction behind the last backward, never the gather.
TEST(ShardedDataParallel, DeepSpeedReducesAfterThePipelineAndGathersInTheStep) {
  const SystemProfile p = SimpleNet();
  const Workload w = testing::Model("llama3-8b");
  ParallelConfig c = Config(1, 2, 32, 1, 256);  // 8 micro-batches over 2 stages
  c.zero_stage = 1;
  auto dp_comm = [&](Framework f, bool overlap) {
    c.framework = f;
    c.overlap_grad_reduce = c.overlap_param_gather = overlap;
    absl::StatusOr<Estimate> e = EstimateIteration(w, c, p);
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? e->time.dp_comm_s : NAN;
  };
  // By hand: one reduce-scatter of the larger stage's gradients (bf16: DeepSpeed's
  // communication_data_type) and one all-gather of its bf16 weights over the 32 ranks of
  // 4 nodes, a ring through each node's 8 NICs of 10 GB/s.
  const StageCosts s = ComputeStageCosts(Bf16Costs(w, c, p), 2, 1);
  const double params = std::max(s.first.params, s.last.params);
  const double one_way = 20e-6 + 31.0 / 32 * params * 2 / 80e9;
  EXPECT_NEAR(dp_comm(Framework::kDeepSpeed, false), 2 * one_way, 1e-9);
  EXPECT_NEAR(dp_comm(Framework::kDeepSpeed, true), 2 * one_way, 1e-9);
  EXPECT_LT(dp_comm(Framework::kMegatron, true), dp_comm(Framework::kMegatron, false));

  // bf16 without ZeRO runs DeepSpeed's BF16_Optimizer: its states partitioned over the 32
  // ranks (Megatron's DDP keeps them whole), an all-reduce of the whole gradients and an
  // all-gather of the updated weights, both after the backward.
  c.zero_stage = 0;
  c.framework = Framework::kDeepSpeed;
  absl::StatusOr<Estimate> bf16 = EstimateIteration(w, c, p);
  c.framework = Framework::kMegatron;
  absl::StatusOr<Estimate> ddp = EstimateIteration(w, c, p);
  ASSERT_TRUE(bf16.ok() && ddp.ok());
  const double all_reduce = 20e-6 + 2 * 31.0 / 32 * params * 2 / 80e9;
  EXPECT_NEAR(bf16->time.dp_comm_s, all_reduce + one_way, 1e-9);
  EXPECT_NEAR(ddp->memory.optimizer_bytes / bf16->memory.optimizer_bytes, 32, 1e-6);
  c.zero_stage = 1;

  // Without stages: ZeRO-1's reduction hides behind the last backward, its gather does
  // not; without ZeRO, DeepSpeed's engine all-reduces after backward() returns.
  c = Config(1, 1, 64, 1, 256);
  c.zero_stage = 1;
  const double gather = 20e-6 + 63.0 / 64 * OneStageParams(w, c, p) * 2 / 80e9;
  EXPECT_NEAR(dp_comm(Framework::kDeepSpeed, false), 2 * gather, 1e-9);  // rs and ag alike: 2 bytes
  const double hooked = dp_comm(Framework::kDeepSpeed, true);
  EXPECT_GE(hooked, gather - 1e-12);
  EXPECT_LT(hooked, 1.5 * gather);
  c.zero_stage = 0;
  EXPECT_NEAR(dp_comm(Framework::kDeepSpeed, true), dp_comm(Framework::kDeepSpeed, false), 1e-12);
  EXPECT_LT(dp_comm(Framework::kMegatron, true), dp_comm(Framework::kMegatron, false));

  // An estimate that asks DeepSpeed for an overlap it does not run says so.
  auto warns = [&](Framework f) {
    c.framework = f;
    absl::StatusOr<Estimate> e = EstimateIteration(w, c, p);
    if (!e.ok()) return false;
    return std::any_of(e->warnings.begin(), e->warnings.end(),
                       [](const std::string& m) { return m.find("DeepSpeed reduces gradients after") == 0; });
  };
  EXPECT_TRUE(warns(Framework::kDeepSpeed));
  EXPECT_FALSE(warns(Framework::kMegatron));
  c.overlap_grad_reduce = c.overlap_param_gather = false;
  EXPECT_FALSE(warns(Framework::kDeepSpeed));
}

// torchtitan's FSDP2 under pipeline stages keeps a stage's weights gathered from the first
// micro-batch's forward to the last backward and reduce-scatters the accumulated
// gradients once, after it (torch.distributed.pipelining, stage.py): one all-gather and
// one reduce-scatter per layer an iteration, where without stages it gathers twice and
// reduces once per layer and micro-batch; the stage's 16-bit weights and its unsharded
// gradients are held. Each gather's copy-out (read and write the gathered weights) and
// each reduce-scatter's copy-in (read the 16-bit gradients, write the reduce dtype) run
// on the compute stream (FSDP2's per-parameter sharding).
TEST(ShardedDataParallel, TorchtitanPipelineGathersOnceAndReducesAfterTheLastBackward) {
  const SystemProfile p = SimpleNet();
  const Workload w = testing::Model("llama3-8b");
  ParallelConfig c = Config(1, 2, 32, 1, 256);  // 8 micro-batches over 2 stages of 16 layers
  c.zero_stage = 3;
  c.framework = Framework::kTorchtitan;
  absl::StatusOr<Estimate> tt = EstimateIteration(w, c, p);
  ASSERT_TRUE(tt.ok()) << tt.status();
  const ModelCosts m = Bf16Costs(w, c, p);
  const StageCosts s = ComputeStageCosts(m, 2, 1);
  const double params = std::max(s.first.params, s.last.params);
  // By hand, nothing prefetched: per layer an all-gather of its 16-bit weights and a
  // reduce-scatter of its gradients over 32 ranks on 4 nodes (8 NICs of 10 GB/s).
  const double layer = params / 16;
  const double ag = 20e-6 + 31.0 / 32 * layer * m.param_gather_bytes_per_param / 80e9;
  const double rs = 20e-6 + 31.0 / 32 * layer * GradientBytesOf(m, c).reduced / 80e9;
  // HBM at the default memory-bound efficiency, 0.7; a kernel's 1 us gap.
  const double hbm = p.accelerator.memory_bandwidth_gbytes_per_s * 1e9 * 0.7;
  auto copy_out = [&](double n) { return 2 * n * m.param_gather_bytes_per_param / hbm + 1e-6; };
  auto copy_in = [&](double n) {
    return n * (GradientBytesOf(m, c).reduced + m.param_gather_bytes_per_param) / hbm + 1e-6;
  };
  EXPECT_NEAR(tt->time.dp_comm_s, 16 * (ag + rs + copy_out(layer) + copy_in(layer)), 1e-9);
  // Held: the stage's weights in 16 bits and its gradients whole.
  EXPECT_GE(tt->memory.buffers_bytes, params * m.param_gather_bytes_per_param);
  EXPECT_NEAR(tt->memory.gradients_bytes / (params * GradientBytesOf(m, c).held), 1, 1e-5);

  // Without stages torchtitan gathers every layer twice but the last (kept gathered from
  // forward into backward) and reduces it once per micro-batch (4 of them), its gradients
  // sharded over the 64 ranks.
  c.pipeline_parallel = 1;
  c.data_parallel = 64;
  absl::StatusOr<Estimate> flat = EstimateIteration(w, c, p);
  ASSERT_TRUE(flat.ok()) << flat.status();
  const double flat_params = OneStageParams(w, c, p);
  const double flat_layer = flat_params / 32;
  const double flat_ag = 20e-6 + 63.0 / 64 * flat_layer * m.param_gather_bytes_per_param / 80e9;
  const double flat_rs = 20e-6 + 63.0 / 64 * flat_layer * GradientBytesOf(m, c).reduced / 80e9;
  EXPECT_NEAR(flat->time.dp_comm_s,
              4 * (63 * (flat_ag + copy_out(flat_layer)) + 32 * (flat_rs + copy_in(flat_layer))), 1e-9);
  EXPECT_NEAR(flat->memory.gradients_bytes / (flat_params * GradientBytesOf(m, c).held / 64), 1, 1e-5);
}

// The search assembles what the overlap flags and the rank order leave alone once per
// setting (AssembleShared) and the rest per variant (AssembleVariant): shared from one
// variant and finished for another, a candidate must come out as Assemble makes it.
TEST(Assemble, SharedPartIgnoresOverlapFlagsAndRankOrder) {
  const SystemProfile p = Profile("dgx-h100-80gb");
  const Workload w = testing::Model("llama3-70b");
  const Hardware hw(p, Precision::kBf16);
  const Collectives coll(hw);
  const SystemContext sys = MakeSystemContext(p, w, hw, coll);
  for (int zero : {0, 1, 3}) {
    ParallelConfig base = Config(2, 4, 8, 1, 256);
    base.zero_stage = zero;
    base.sequence_parallel = true;
    const ModelCosts m = Bf16Costs(w, base, p);
    const StageCosts stages = ComputeStageCosts(m, 4, 1);
    std::vector<ParallelConfig> variants;
    for (bool og : {false, true}) {
      for (bool opg : {false, true}) {
        for (RankOrder order : {RankOrder::kTpCpEpDpPp, RankOrder::kTpCpEpPpDp}) {
          ParallelConfig c = base;
          c.overlap_grad_reduce = og;
          c.overlap_param_gather = opg;
          c.rank_order = order;
          variants.push_back(c);
        }
      }
    }
    // One cache for the setting, as the search keeps it: filled by the first variant of
    // each rank order, read by the others.
    VariantCache cache;
    for (size_t i = 0; i < variants.size(); ++i) {
      CandidateResult whole, split, cached, bound;
      Assemble(m, stages, variants[i], sys, &whole);
      AssembleShared(m, stages, variants[variants.size() - 1 - i], sys, &split);
      // What the search prunes by: every variant's time, energy and cost at least the
      // bound's, which lacks exactly the pipeline sends and the data-parallel traffic.
      BoundVariants(variants[i], sys, split, &bound);
      EXPECT_LE(bound.iteration_time_s, whole.iteration_time_s) << "zero " << zero << " variant " << i;
      EXPECT_NEAR(bound.iteration_time_s + whole.time.pp_comm_s + whole.time.dp_comm_s, whole.iteration_time_s,
                  1e-12 * whole.iteration_time_s);
      EXPECT_LE(bound.energy_j, whole.energy_j) << i;
      EXPECT_LE(bound.cost_usd, whole.cost_usd) << i;
      EXPECT_GT(bound.energy_j, 0.9 * whole.energy_j * bound.iteration_time_s / whole.iteration_time_s) << i;
      EXPECT_EQ(bound.memory.total_bytes, whole.memory.total_bytes) << i;
      cached = split;
      AssembleVariant(m, stages, variants[i], sys, &split);
      AssembleVariant(m, stages, variants[i], sys, &cached, &cache);
      EXPECT_DOUBLE_EQ(cached.iteration_time_s, whole.iteration_time_s) << "zero " << zero << " variant " << i;
      EXPECT_DOUBLE_EQ(cached.time.dp_comm_s, whole.time.dp_comm_s) << i;
      EXPECT_DOUBLE_EQ(split.iteration_time_s, whole.iteration_time_s) << "zero " << zero << " variant " << i;
      EXPECT_DOUBLE_EQ(split.time.dp_comm_s, whole.time.dp_comm_s) << i;
      EXPECT_DOUBLE_EQ(split.time.pp_comm_s, whole.time.pp_comm_s) << i;
      EXPECT_DOUBLE_EQ(split.energy_j, whole.energy_j) << i;
      EXPECT_DOUBLE_EQ(split.cost_usd, whole.cost_usd) << i;
      EXPECT_DOUBLE_EQ(split.memory.total_bytes, whole.memory.total_bytes) << i;
    }
    // The variants differ where it matters: the rank order moves the pipeline's sends.
    CandidateResult a, b;
    Assemble(m, stages, variants[0], sys, &a);
    Assemble(m, stages, variants[1], sys, &b);
    EXPECT_NE(a.time.pp_comm_s, b.time.pp_comm_s) << "zero " << zero;
    EXPECT_GT(a.time.dp_comm_s, 0) << "zero " << zero;  // so the bound above is below, not equal
  }
}

}  // namespace
}  // namespace paraplan
