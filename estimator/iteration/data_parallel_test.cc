// Sharded data parallelism (ZeRO 1-3, FSDP, DeepSpeed's and torchtitan's variants): the
// data-parallel collectives and what of them the layers' work hides, checked against
// numbers computed by hand.
#include <algorithm>
#include <cmath>
#include <string>

#include "estimator/iteration/assemble.h"
#include "estimator/iteration/data_parallel.h"
#include "estimator/iteration/estimate.h"
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

// FSDP's two gathered layers are the largest layer's parts that a group shards: Mixtral
// 8x7B at TP 2, EP 4, DP 4 has one expert-DP rank (2 x 4 / (4 x 2)), so its experts stay
// whole and only the layer's dense weights are gathered: attention 4,096 x (4,096 + 2 x
// 1,024) + 4,096 x 4,096 over TP 2 (20.97 M), two RMSNorms and the router (4,096 x 8),
// two layers of them in bf16 beside ZeRO-2's buffers. DeepSeek-V3's largest layers are
// its MoE ones, not the three dense layers first.
TEST(ShardedDataParallel, Zero3GathersTheShardedPartsOfTheLargestLayer) {
  const SystemProfile p = SimpleNet();
  const Workload w = testing::Model("mixtral-8x7b");
  ParallelConfig c = Config(2, 1, 4, 1, 64);
  c.expert_parallel = 4;
  c.zero_stage = 2;
  absl::StatusOr<Estimate> z2 = EstimateIteration(w, c, p);
  c.zero_stage = 3;
  absl::StatusOr<Estimate> z3 = EstimateIteration(w, c, p);
  ASSERT_TRUE(z2.ok() && z3.ok()) << z2.status() << z3.status();
  const double dense = (4096.0 * (4096 + 2 * 1024) + 4096.0 * 4096) / 2 + 2 * 4096 + 4096 * 8;
  EXPECT_NEAR(z3->memory.buffers_bytes - z2->memory.buffers_bytes, 2 * dense * 2, 0.01 * 2 * dense * 2);
  const ModelCosts m = Bf16Costs(testing::Model("deepseek-v3"), Config(1, 1, 8, 1, 64), p);
  ASSERT_GT(m.layers.back().params, 2 * m.layers[0].params);
  EXPECT_EQ(m.max_layer_dense_params + m.max_layer_expert_params, m.layers.back().params);
}

// DeepSpeed decides tensor by tensor, so each ZeRO-3 group counts its own matrices: in
// Qwen3-30B-A3B at EP 4 a layer's expert group gathers its 32 local experts' fc1 and fc2
// (64 matrices of 2,048 x 1,536 and 768 x 2,048, each over the 100,000-element
// persistence threshold), the dense group the layer's other matrices, not 64 + those
// averaged over both groups' parameters (which made the dense group's calls many and
// tiny, and let twice the layers cut the data-parallel time in half where the average
// crossed the threshold).
TEST(ShardedDataParallel, DeepSpeedZero3MoeGroupsCountTheirOwnMatrices) {
  const SystemProfile p = Profile("gb300-nvl72");
  Workload w = testing::Model("qwen3-30b-a3b");
  ParallelConfig c = Zero3(64, 256, Framework::kDeepSpeed);
  c.expert_parallel = 4;
  c.micro_batch_size = 2;
  c.recompute = Recompute::kFull;
  c.flash_attention = true;
  const ModelCosts m = Bf16Costs(w, c.Normalized(), p);
  const StageCosts st = ComputeStageCosts(m, 1, 1);
  const double layers = 48;
  ASSERT_EQ(st.slowest_layers, layers);
  EXPECT_DOUBLE_EQ(st.slowest.expert_weight_tensors, layers * 64);
  const Zero3Calls experts = Zero3Collectives(m, st, c.Normalized(), st.max_expert_params, true);
  EXPECT_DOUBLE_EQ(experts.gathers, 64);
  const Zero3Calls dense = Zero3Collectives(m, st, c.Normalized(), st.max_dense_params, false);
  EXPECT_DOUBLE_EQ(dense.gathers, (st.slowest.weight_tensors - layers * 64) / layers);
  EXPECT_LT(dense.gathers, 8);
  double before = 0;
  for (int l : {44, 48, 88, 96}) {
    w.transformer.num_layers = l;
    absl::StatusOr<Estimate> e = EstimateIteration(w, c, p);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_GT(e->time.dp_comm_s, before) << l << " layers";
    before = e->time.dp_comm_s;
  }
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
// distributed optimizer) reduce-scatters once per iteration, its fp32 main gradients
// where ZeRO-2 (Megatron-FSDP's optim_grads) reduces them in bf16.
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
  const double ag = 20e-6 + 63.0 / 64 * params * 2 / 80e9;  // also a bf16 reduce-scatter
  EXPECT_NEAR(z1->time.dp_comm_s, rs + ag, 1e-9);
  EXPECT_NEAR(z2->time.dp_comm_s, 4 * ag + ag, 1e-9);
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

// Under an interleaved schedule Megatron-Core's DDP syncs model chunk by model chunk: a
// chunk's reduce-scatter starts once its last micro-batch has run backward, beside the
// p chunk-backwards of each chunk after it in the last round, and chunk 0's after the last
// backward, exposed; chunk 0's parameter gather comes before the first forward, the
// others' beside the p forwards of the chunk before. With v chunks of a stage the
// reduction's (v - 1) / v runs beside (v - 1) p chunk-backwards (one chunk's backward is
// a micro-batch's / v), its 1 / v exposed, and the gather likewise; each stretch costs
// what outlasts its window or 20 % of the time they share (overlap_efficiency 0.8).
// Without virtual stages a stage has one module: its reduction beside its last
// micro-batch's backward, its gather beside its first forward.
TEST(ShardedDataParallel, InterleavedStagesSyncChunkByChunk) {
  SystemProfile p = SimpleNet();
  p.calibration.overlap_efficiency = 0.8;
  const Workload w = testing::Model("llama3-8b");
  ParallelConfig c = Config(1, 2, 32, 1, 256);  // 8 micro-batches over 2 stages
  c.rank_order = RankOrder::kTpCpEpPpDp;  // the stages' pairs inside a node: 4 DP ranks a node
  c.zero_stage = 1;
  c.overlap_grad_reduce = c.overlap_param_gather = true;
  for (const double bw : {40e9, 0.4e9}) {  // 4 members a node x 10 GB/s; a hundredth (outlasts the windows)
    p.network_levels[1].bandwidth_gbytes_per_s = bw / 4e9;
    // The ring's collectives hold its share of a node-wide ring's SMs (4 GPUs of 8 a node).
    const Hardware hw(p, w.precision);
    const double share = Collectives(hw).SmShare(Collectives(hw).Place(32, 2));
    auto exposed = [share](double comm, double work) {
      return std::max(comm - work, 0.2 * share * std::min(comm, work));
    };
    for (const int v : {1, 4}) {
      c.virtual_pipeline_stages = v;
      c.pipeline_schedule = v > 1 ? PipelineSchedule::kInterleaved1F1B : PipelineSchedule::k1F1B;
      absl::StatusOr<Estimate> e = EstimateIteration(w, c, p);
      ASSERT_TRUE(e.ok()) << e.status();
      const StageCosts st = ComputeStageCosts(Bf16Costs(w, c, p), 2, v);
      const double params = std::max(st.first.params, st.last.params);
      const double rs = 20e-6 + 31.0 / 32 * params * 4 / bw;  // fp32 main gradients
      const double ag = 20e-6 + 31.0 / 32 * params * 2 / bw;  // bf16 weights
      const BlockCosts& s = st.slowest;
      const double gpu_fwd = s.fwd_s, gpu_bwd = s.bwd_s + s.recompute_s;
      const double host_fwd = s.host_s * gpu_fwd / (gpu_fwd + gpu_bwd);
      const double fwd = gpu_fwd + host_fwd, bwd = gpu_bwd + s.host_s - host_fwd;  // a micro-batch's
      const double rest = (v - 1.0) / v;
      const double expected = v == 1 ? exposed(ag, fwd) + exposed(rs, bwd)
                                     : ag / v + exposed(rest * ag, rest * 2 * fwd) + rs / v +
                                           exposed(rest * rs, rest * 2 * bwd);
      EXPECT_NEAR(e->time.dp_comm_s, expected, 1e-9) << bw << " v " << v;
      if (v == 4) {
        // Both sides of the max: the fast network hides what is beside the chunks, the slow
        // one outlasts them.
        EXPECT_EQ(rest * rs > rest * 2 * bwd, bw < 1e9) << rs << " " << bwd;
      }
    }
  }
  // DeepSpeed and torchtitan run no such per-chunk schedule (neither has Megatron's
  // interleaved DDP): the framework's own rules stand.
  c.framework = Framework::kTorchtitan;
  EXPECT_FALSE(SyncsPerModelChunk(c));
  c.framework = Framework::kNemo;
  EXPECT_TRUE(SyncsPerModelChunk(c));
}

// Chunk 0's share of an interleaved stage's reduction runs after the last backward, where
// no pipeline send shares the node's NICs with it: only the other chunks' share delays
// the sends. Counting the whole reduction there made overlap_grad_reduce cost Llama 3 8B
// (NeMo, 16 k tokens, PP 2 x v 2, DP 32 on H200s, full recompute) 0.13 % more than
// reducing after the backward; what remains is the SMs' share of the chunks' stretch
// (overlap_efficiency), 0.02 %.
TEST(ShardedDataParallel, ChunkZeroReductionSharesNoLinkWithTheSends) {
  Workload w = testing::Model("llama3-8b");
  w.transformer.seq_length = 16384;
  ParallelConfig c = Config(1, 2, 32, 4, 256, Recompute::kFull);
  c.virtual_pipeline_stages = 2;
  c.pipeline_schedule = PipelineSchedule::kInterleaved1F1B;
  c.zero_stage = 1;
  c.flash_attention = true;
  c.framework = Framework::kNemo;
  absl::StatusOr<Estimate> after = EstimateIteration(w, c, Profile("dgx-h200-141gb"));
  c.overlap_grad_reduce = true;
  absl::StatusOr<Estimate> overlapped = EstimateIteration(w, c, Profile("dgx-h200-141gb"));
  ASSERT_TRUE(after.ok() && overlapped.ok()) << after.status();
  EXPECT_LE(overlapped->iteration_time_s, after->iteration_time_s);
}

// An overlapped reduction shares the node's NICs with the pipeline's blocking sends: the
// part of it that runs beside them delays them as long, and only the rest runs beside the
// backward's compute (hidden but for 1 - overlap_efficiency of it, its ring holding a
// node's SMs): never more than the reduction run after the backward. ZeRO-2 as
// Megatron-FSDP runs it (a bf16 reduce-scatter every micro-batch) over 16 ranks on two
// nodes, the two stages a node apart.
TEST(ShardedDataParallel, AReductionBesideThePipelineSendsHidesWhatRunsBesideTheBackward) {
  const SystemProfile p = SimpleNet();
  Workload w = testing::Model("llama3-8b");
  ParallelConfig c = Config(1, 2, 16, 1, 64);  // m = 4
  c.zero_stage = 2;
  c.framework = Framework::kMegatron;
  absl::StatusOr<Estimate> after = EstimateIteration(w, c, p);
  c.overlap_grad_reduce = true;
  absl::StatusOr<Estimate> overlapped = EstimateIteration(w, c, p);
  ASSERT_TRUE(after.ok() && overlapped.ok()) << after.status() << overlapped.status();
  const StageCosts stages = ComputeStageCosts(Bf16Costs(w, c, p), 2, 1);
  // The ring over two nodes: 8 members a node share its NICs, 8 x 10 GB/s.
  const double d = 20e-6 + 15.0 / 16 * stages.max_dense_params * 2 / 80e9;
  const double hop = 20e-6 + 8192.0 * 4096 * 2 / 10e9;  // one activation gradient, one chunk
  ASSERT_LT(hop, d);
  EXPECT_NEAR(after->time.dp_comm_s - overlapped->time.dp_comm_s, 4 * 0.8 * (d - hop), 1e-9);
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

}  // namespace
}  // namespace paraplan
