// Pipeline partitions, layouts, activation offloading and the zero-bubble schedule,
// checked against numbers computed by hand from their published formulas.
#include <algorithm>

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

using testing::Bf16Costs;
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
  const ModelCosts m = testing::Costs(w, c, p, w.precision);
  const BlockCosts& layer = m.layers[40];
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
  const ModelCosts m = testing::Costs(w, c, p, w.precision);
  const double layer = 134217728.0 + 100663296.0;
  EXPECT_DOUBLE_EQ(m.layers[10].offloaded_bytes, layer);
  // The planner derives these costs from the shape's without offloading.
  ParallelConfig plain = c;
  plain.offload_modules = 0;
  absl::StatusOr<ModelCosts> without = ComputeModelCosts(w, ModelShape::Of(plain.Normalized()), hw, coll);
  ASSERT_TRUE(without.ok());
  const ModelCosts derived = WithExpertOffload(*without);
  ASSERT_EQ(derived.layers.size(), m.layers.size());
  for (size_t i = 0; i < m.layers.size(); ++i) {
    EXPECT_DOUBLE_EQ(derived.layers[i].activation_bytes, m.layers[i].activation_bytes) << i;
    EXPECT_DOUBLE_EQ(derived.layers[i].offloaded_bytes, m.layers[i].offloaded_bytes) << i;
    EXPECT_DOUBLE_EQ(derived.layers[i].TotalS(), m.layers[i].TotalS()) << i;
  }
  const double moved = 23 * layer * 4 - layer;
  EXPECT_NEAR(base->memory.activations_bytes - off->memory.activations_bytes, moved, 1);
  EXPECT_NEAR(off->memory.host_bytes - base->memory.host_bytes, moved, 1);
  const StageCosts s = ComputeStageCosts(m, 4, 1);
  const double copy = s.slowest.offloaded_bytes / 50e9;  // PCIe Gen5 x16 as the profile states it
  const double ovl = hw.overlap_efficiency();
  // Each pass's copies hide behind its critical path: compute, the exposed TP and expert
  // collectives (half the all-to-all each way) and the host-bound stretches.
  auto fwd_path = [](const BlockCosts& b) { return b.fwd_s + b.tp_fwd_s + 0.5 * b.ep_s + b.host_fwd_s; };
  auto bwd_path = [](const BlockCosts& b) {
    return b.bwd_s + b.recompute_s + b.tp_bwd_s + 0.5 * b.ep_s + b.host_s - b.host_fwd_s;
  };
  const BlockCosts& st = s.slowest;
  EXPECT_GT(st.host_s, 0);  // the head's and the embedding's launches outlast their work
  EXPECT_GT(st.tp_fwd_s, 0);
  EXPECT_GT(st.ep_s, 0);
  const double exposed = 8 * (std::max(0.0, copy - ovl * fwd_path(st)) + std::max(0.0, copy - ovl * bwd_path(st)));
  EXPECT_NEAR(off->time.offload_s - base->time.offload_s, exposed, 1e-9);
  // The fill and drain (3 stage steps under 1F1B) take each stage's copies beyond its
  // compute too, averaged over the stages: 23, 24, 23 and 24 layers (k x 94 / 4), the
  // embedding beside the first, the head beside the last.
  const BlockCosts& l = m.layers[10];
  const double c1 = l.offloaded_bytes / 50e9;
  auto stage_copies = [&](int n, const BlockCosts& end) {
    const double fwd = n * fwd_path(l) + fwd_path(end), bwd = n * bwd_path(l) + bwd_path(end);
    return std::max(0.0, n * c1 - ovl * fwd) + std::max(0.0, n * c1 - ovl * bwd);
  };
  const BlockCosts none;
  const double mean_copies =
      (stage_copies(23, m.pre) + stage_copies(24, none) + stage_copies(23, none) + stage_copies(24, m.post)) / 4;
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

// With one micro-batch, moe_a2a_overlap pairs no step (its forward and its backward run
// alone), so the all-to-all is as exposed as without it, and the offloaded modules' copies
// hide behind as much: the overlap changes neither.
TEST(Pipeline, OffloadCopiesRunBesideTheUnpairedAllToAll) {
  const SystemProfile p = Profile("dgx-h100-80gb");
  const Workload w = testing::Model("qwen3-235b-a22b");
  ParallelConfig c = Config(1, 1, 16, 1, 16);
  c.flash_attention = true;
  c.expert_parallel = 16;
  c.expert_tensor_parallel = 1;
  c.offload_modules = kOffloadExpertFc1 | kOffloadMoeAct;
  absl::StatusOr<Estimate> alone = EstimateIteration(w, c, p);
  c.moe_a2a_overlap = true;
  absl::StatusOr<Estimate> paired = EstimateIteration(w, c, p);
  ASSERT_TRUE(alone.ok() && paired.ok()) << alone.status() << paired.status();
  EXPECT_GT(alone->time.offload_s, 0);  // the copies outlast what they hide behind
  EXPECT_NEAR(paired->time.offload_s, alone->time.offload_s, 1e-9);
  EXPECT_NEAR(paired->time.ep_comm_s, alone->time.ep_comm_s, 1e-9);
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

// Under ZeRO-3 with the weights offloaded (ZeRO-Infinity's offload_param) every shard
// lives on the host and the GPU computes with the modules gathered into its two buffers:
// twice the data parallelism, which shards GPT-OSS-120B's experts over two ranks where
// they had one, holds no more (H200s, TP 8, PP 8: 1.2 % more while two modules' share of
// the shards stayed beside buffers that now gather the experts too,
// property_sweep.py --wide seed 118). By hand: no weight bytes on the GPU; the buffers
// twice the largest layer's parameters in 16 bits beside the send buffers.
TEST(Pipeline, Zero3OffloadedWeightsLiveInTheGatherBuffers) {
  const SystemProfile p = Profile("dgx-h200-141gb");
  const Workload w = testing::Model("gpt-oss-120b");
  ParallelConfig c = Config(8, 8, 2, 2, 8);
  c.expert_parallel = 2;
  c.zero_stage = 3;
  c.flash_attention = true;
  c.offload.weights = c.offload.optimizer = true;
  absl::StatusOr<Estimate> a = EstimateIteration(w, c, p);
  c.data_parallel = 4;
  c.global_batch_size = 16;
  absl::StatusOr<Estimate> b = EstimateIteration(w, c, p);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_LE(b->memory.total_bytes, a->memory.total_bytes);
  EXPECT_EQ(a->memory.weights_bytes, 0);
  const ModelCosts m = testing::Bf16Costs(w, c, p);
  double layer = 0;
  for (const BlockCosts& l : m.layers) layer = std::max(layer, l.params);
  EXPECT_GE(a->memory.buffers_bytes, 2 * layer * 2 * (1 - 1e-12));
}

// ZeRO-Infinity-style offloaded weights and activations cross the host link on every
// stage; where an end stage paces (its head, or MTP depths) beside stages of more layers,
// those stages' larger copies bound the pace, hidden behind the pacing path. One more MTP
// layer, which lengthens the last stage, never speeds the step up (GPT-3 175B on 64 H200s,
// PP 8 v 3 with 11 layers on each end stage: 2.3 % faster while the copies were the
// pacing stage's own, property_sweep.py --wide seed 108).
TEST(Pipeline, GenericOffloadCopiesOfTheFullestStageBoundThePace) {
  const SystemProfile p = Profile("dgx-h200-141gb");
  Workload w = testing::Model("gpt3-175b");
  w.precision = Precision::kFp8;
  w.quant_recipe = QuantRecipe::kBlockwise;
  ParallelConfig c = Config(4, 8, 2, 1, 16);
  c.virtual_pipeline_stages = 3;
  c.pipeline_schedule = PipelineSchedule::kInterleaved1F1B;
  c.first_pipeline_stage_layers = c.last_pipeline_stage_layers = 11;
  c.zero_stage = 2;
  c.overlap_grad_reduce = true;
  c.flash_attention = true;
  c.offload.optimizer = c.offload.weights = c.offload.activations = true;
  double before = 0;
  for (int mtp = 0; mtp <= 2; ++mtp) {
    w.transformer.mtp_num_layers = mtp;
    absl::StatusOr<Estimate> e = EstimateIteration(w, c, p);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_GT(e->time.offload_s, 0);
    EXPECT_GE(e->iteration_time_s, before) << mtp << " MTP layers";
    before = e->iteration_time_s;
  }
}

}  // namespace
}  // namespace paraplan

namespace paraplan {
namespace {

// Offloaded weights stream module by module: the GPU keeps the stage's two largest
// modules' worth, Llama 3 8B's LM head (128,256 x 4,096) on the last stage. Twice the
// layers then never holds less: until stop 68 the GPU kept two layers' share of the whole
// stage, so at 64 layers over 8 stages it kept a quarter of the head (5.83 -> 5.73 GiB,
// property_sweep.py --wide seed 102).
TEST(Pipeline, OffloadedWeightsKeepTheLargestModulesOnTheGpu) {
  const SystemProfile p = Profile("gb300-nvl72");
  Workload w = testing::Model("llama3-8b");
  w.transformer.seq_length = 8192;
  ParallelConfig c = Config(1, 8, 32, 1, 32);
  c.context_parallel = 4;
  c.zero_stage = 2;
  c.recompute = Recompute::kFull;
  c.flash_attention = true;
  c.offload.weights = true;
  absl::StatusOr<Estimate> a = EstimateIteration(w, c, p);
  w.transformer.num_layers *= 2;
  absl::StatusOr<Estimate> b = EstimateIteration(w, c, p);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_GE(b->memory.total_bytes, a->memory.total_bytes);
  // 16-bit weights, not sharded under ZeRO 2: at least the head twice on the last stage.
  EXPECT_GE(b->memory.weights_bytes, 2 * 128256.0 * 4096 * 2 * (1 - 1e-12));
}

}  // namespace
}  // namespace paraplan
