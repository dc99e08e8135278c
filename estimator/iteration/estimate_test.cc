#include <algorithm>
#include <cmath>

#include "absl/strings/str_join.h"
#include "estimator/iteration/estimate.h"
#include "estimator/system/collectives.h"
#include "estimator/system/hardware.h"
#include "estimator/testing/test_util.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::Config;
using testing::Model;
using testing::Profile;

// A system of round numbers with every calibrated loss switched off, so that each term
// of the breakdown can be computed by hand: 100 TFLOP/s at efficiency 1 (also for fused
// attention), 1000 GB/s HBM at efficiency 1, no SM count (no wave quantisation), a
// 1-FLOP small-GEMM tail, no fixed attention work per query tile, 8 GPUs per node on
// 100 GB/s NVLink, 10 GB/s per GPU across nodes, no link latency, ~0 per collective call
// and ~0 host time per kernel (no launch-bound time). What remains is
// Hardware::kernel_gap_s, 1 us per kernel.
SystemProfile RoundNumberSystem() {
  SystemProfile p;
  p.name = "round-numbers";
  p.gpus_per_node = 8;
  p.num_nodes = 2;
  Accelerator& a = p.accelerator;
  a.peak_tflops_bf16 = 100;
  a.peak_tflops_fp16 = 100;
  a.peak_tflops_fp32 = 10;
  a.memory_gib = 80;
  a.memory_bandwidth_gbytes_per_s = 1000;
  a.busy_power_w = 500;
  a.idle_power_w = 100;
  a.sm_count = 0;
  NetworkLevel nvlink;
  nvlink.name = "nvlink";
  nvlink.domain_size = 8;
  nvlink.bandwidth_gbytes_per_s = 100;
  NetworkLevel ib;
  ib.name = "infiniband";
  ib.domain_size = 0;
  ib.bandwidth_gbytes_per_s = 10;
  p.network_levels = {nvlink, ib};
  p.host.memory_gib = 1024;
  p.host.pcie_gbytes_per_s = 10;
  p.price_per_gpu_hour_usd = 1;
  Calibration& c = p.calibration;
  c.matmul_efficiency = 1;
  c.matmul_half_efficiency_gflop = 1e-9;
  c.memory_bound_efficiency = 1;
  c.attention_efficiency_fwd = 1;
  c.attention_efficiency_bwd = 1;
  c.attention_half_keys_fwd = 1e-9;  // (0 is the default's 280 keys)
  c.attention_half_keys_bwd = 1e-9;
  c.attention_softmax_head_dim_fwd = 1e-9;  // (0 is the default's 22 units)
  c.attention_softmax_head_dim_bwd = 1e-9;
  c.cudnn_attention_softmax_head_dim_fwd = 1e-9;
  c.cudnn_attention_softmax_head_dim_bwd = 1e-9;
  c.collective_overhead_us = 1e-9;
  c.kernel_overhead_us = 1e-9;
  for (const NetworkLevel& l : p.network_levels) {
    NetworkCalibration n;
    n.level = l.name;
    n.efficiency = 1;
    c.network.push_back(n);
  }
  return p;
}

// 4 layers, hidden 1024, 16 heads of 64, MLP 4096 (not gated), sequence 2048,
// vocabulary 32768, BF16.
Workload RoundNumberTransformer() {
  Workload w;
  w.name = "round-numbers";
  TransformerSpec& t = w.transformer;
  t.num_layers = 4;
  t.hidden_size = 1024;
  t.num_attention_heads = 16;
  t.num_kv_heads = 16;
  t.ffn_hidden_size = 4096;
  t.seq_length = 2048;
  t.vocab_size = 32768;
  return w;
}

// The breakdown of RoundNumberTransformer (fused attention) on RoundNumberSystem, term by
// term, from the formulas with the numbers written out (the tests below). The 1-FLOP GEMM
// tail is left out (a relative 1e-10).
struct RoundNumberHand {
  const SystemProfile p = RoundNumberSystem();
  const Workload w = RoundNumberTransformer();
  static constexpr double R = 100e12, hbm = 1000e9, nvlink = 100e9, gap = 1e-6;
  // Micro-batch 1: T = 2048 tokens, e = T h = 2^21 activation elements, 2 bytes each.
  static constexpr double T = 2048, h = 1024, s = 2048, V = 32768, e = T * h;
  // A GEMM of M x N x K (CUTLASS tiles, Hardware::MatmulTime) takes 2 M N (K + 64) / R
  // plus the kernel gap: its 2 M N K FLOPs at the peak rate, slowed by K / (K + 64) for
  // the tiles' 64-deep mainloop prologue. Every GEMM here is compute-bound: the least
  // intense, T x h x h, does 410 FLOP per byte of operands against R / hbm = 100.
  static double gemm(double M, double N, double K) { return 2 * M * N * (K + 64) / R + gap; }
  // A linear layer's backward is a data-gradient GEMM (M x K x N) and a weight-gradient
  // GEMM (K x N x M) (Narayanan et al. SC'21).
  static double gemm_bwd(double M, double N, double K) { return gemm(M, K, N) + gemm(K, N, M); }
  //
  // One layer, forward: QKV (T x 3h x h), projection (T x h x h), MLP up (T x 4h x h) and
  // down (T x h x 4h): 539.56 us + 4 us; fused causal attention, 4 b s^2 h / 2 = 2 s^2 h
  // = 8.59 GFLOP: 85.90 us + 1 us; memory-bound, no kernel gap of their own: attention
  // LayerNorm 4e, bias-dropout-add 7e, context permute 4e, MLP LayerNorm 4e,
  // bias-dropout-add 7e, GeLU 16e: 42e bytes = 88.08 us. Total 718.53 us.
  // Backward: the GEMMs' 1065.69 + 8 us, attention 2.5x its forward FLOPs in 3 kernels
  // (214.75 + 3 us), memory-bound ops twice the forward traffic (176.16 us): 1467.60 us.
  const double layer_fwd = gemm(T, 3 * h, h) + gemm(T, h, h) + gemm(T, 4 * h, h) + gemm(T, h, 4 * h) +
                           2 * s * s * h / R + gap + 42 * e / hbm;
  const double layer_bwd = gemm_bwd(T, 3 * h, h) + gemm_bwd(T, h, h) + gemm_bwd(T, 4 * h, h) +
                           gemm_bwd(T, h, 4 * h) + 2.5 * 2 * s * s * h / R + 3 * gap + 2 * 42 * e / hbm;
  // Embedding: lookup (read + write, 4e bytes) and dropout (read, write, mask: 6e), two
  // kernels; backward twice: 3 (20.97 + 2) us = 68.91 us.
  const double pre = 3 * (10 * e / hbm + 2 * gap);
  // LM head (T x V x h: 1460.29 + 1 us), final LayerNorm (4e) and Megatron's cross-
  // entropy op by op on the upcast logits: cast 2 + 4, max 4, subtract 8, exp 8, sum 4,
  // divide 8 = 38 T V bytes, in 1 kernel: 2558.53 + 1 us. Backward: the head's two GEMMs
  // (2794.41 + 2 us), the in-place multiply (8) and the cast back (4 + 2), LayerNorm
  // backward (14 T V + 8e bytes, 1 kernel: 956.30 + 1 us). Total 7774.53 us.
  const double post = gemm(T, V, h) + (4 * e + 38 * T * V) / hbm + gap + gemm_bwd(T, V, h) +
                      (14 * T * V + 8 * e) / hbm + gap;
  // Parameters: per layer 4h^2 + 4h (QKV, projection, two LayerNorms) + 8h^2 (MLP);
  // embedding V h; LM head V h and final LayerNorm 2h: P = 117,458,944.
  const double layer_params = 12 * h * h + 4 * h;
  const double P = 4 * layer_params + 2 * V * h + 2 * h;
  // Megatron-LM mixed-precision optimizer step: 42 bytes of HBM traffic per parameter
  // (grad norm 4, Adam 28, master-to-bf16 copy 6, zeroing the gradient 4), one kernel.
  static constexpr double bytes_per_param = 42;

  Estimate Of(const ParallelConfig& config) const {
    absl::StatusOr<Estimate> r = EstimateIteration(w, config, p);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : Estimate{};
  }
  static double Near(double expected) { return 1e-9 * expected + 1e-12; }
  // Two micro-batches of 1 on one rank's layers, embedding and head.
  double Compute() const { return 2 * (pre + 4 * (layer_fwd + layer_bwd) + post); }
};

// Data parallelism in one node, without and with the distributed optimizer.
TEST(Estimate, DataParallelBreakdownMatchesHandComputation) {
  const RoundNumberHand H;
  // DP 8 in one node, 2 micro-batches of 1, no ZeRO, no overlap.
  ParallelConfig dp8_config = Config(1, 1, 8, 1, 16);
  dp8_config.flash_attention = true;
  const Estimate dp8 = H.Of(dp8_config);
  const double compute = H.Compute();  // 33.18 ms
  // Ring all-reduce (Thakur et al. 2005) of the fp32 gradients: 2 (P-1)/P x 4 P bytes /
  // 100 GB/s = 8.22 ms.
  const double ring_ar = 2 * 7.0 / 8 * 4 * H.P / H.nvlink;
  // Optimizer: all 117.5 M parameters on every rank: 4.93 ms + one kernel gap.
  const double optimizer = H.P * H.bytes_per_param / H.hbm + H.gap;
  EXPECT_NEAR(dp8.time.compute_s, compute, H.Near(compute));
  EXPECT_NEAR(dp8.time.dp_comm_s, ring_ar, H.Near(ring_ar));
  EXPECT_NEAR(dp8.time.optimizer_s, optimizer, H.Near(optimizer));
  EXPECT_EQ(dp8.time.pipeline_bubble_s, 0);
  EXPECT_EQ(dp8.time.pp_comm_s, 0);
  EXPECT_EQ(dp8.time.tp_comm_s, 0);
  EXPECT_EQ(dp8.time.recompute_s, 0);
  EXPECT_NEAR(dp8.time.overhead_s, 0, 1e-12);
  EXPECT_NEAR(dp8.iteration_time_s, compute + ring_ar + optimizer, H.Near(compute));
  EXPECT_EQ(dp8.bottleneck, "compute");
  // Cost: 8 GPUs at $1 per GPU-hour. Energy: 500 W while computing or stepping the
  // optimizer, 100 W while waiting for the all-reduce (no node power).
  EXPECT_NEAR(dp8.cost_per_iteration_usd, 8 * dp8.iteration_time_s / 3600, 1e-15);
  const double energy = 8 * (500 * (compute + optimizer) + 100 * ring_ar);
  EXPECT_NEAR(dp8.energy_per_iteration_j, energy, H.Near(energy));

  // ZeRO-1 (distributed optimizer): reduce-scatter the fp32 gradients and all-gather the
  // bf16 weights, (P-1)/P x (4 + 2) P bytes = 6.17 ms; each rank updates P / 8.
  ParallelConfig zero1_config = dp8_config;
  zero1_config.zero_stage = 1;
  const Estimate zero1 = H.Of(zero1_config);
  const double rs_ag = 7.0 / 8 * (4 + 2) * H.P / H.nvlink;
  const double optimizer_shard = H.P / 8 * H.bytes_per_param / H.hbm + H.gap;
  EXPECT_NEAR(zero1.time.dp_comm_s, rs_ag, H.Near(rs_ag));
  EXPECT_NEAR(zero1.time.optimizer_s, optimizer_shard, H.Near(optimizer_shard));
  EXPECT_NEAR(zero1.time.compute_s, compute, H.Near(compute));
}

TEST(Estimate, TwoNodeRingMatchesHandComputation) {
  const RoundNumberHand H;
  // DP 16 over two nodes, 1 micro-batch: the ring crosses InfiniBand with every GPU
  // driving its own 10 GB/s share, 8 x 10 = 80 GB/s per node pair (below NVLink's 100).
  // Ring 2 (15/16) 4P / 80 GB/s = 1.875 x 4P / 80 GB/s beats the double binary tree
  // (2 x 4P / 80 GB/s) and the hierarchical form (reduce-scatter and all-gather in the
  // node, 2 (7/8) 4P / 100 GB/s, plus a 2-node ring over 4P / 8 at 10 GB/s: 1.25 x 4P /
  // 100 GB/s; together 3 x 4P / 100 GB/s = 2.4 x 4P / 80 GB/s).
  ParallelConfig dp16_config = Config(1, 1, 16, 1, 16);
  dp16_config.flash_attention = true;
  const Estimate dp16 = H.Of(dp16_config);
  const double ring_two_nodes = 2 * 15.0 / 16 * 4 * H.P / 80e9;
  EXPECT_NEAR(dp16.time.dp_comm_s, ring_two_nodes, H.Near(ring_two_nodes));
  EXPECT_NEAR(dp16.time.compute_s, H.Compute() / 2, H.Near(H.Compute()));
}

// Tied embeddings over pipeline stages: the last stage keeps a copy of the word embedding
// for the LM head (as many parameters as an untied head: the same memory) and all-reduces
// its fp32 gradient with the first stage's once an iteration. PP 2 x DP 8 puts the two
// stages 8 ranks apart, on two nodes: a 2-rank ring over InfiniBand moves 2 (1/2) 4 V h
// bytes at 10 GB/s, 13.4 ms. Without stages the embedding is the head: V h fewer
// parameters, no all-reduce.
TEST(Estimate, TiedEmbeddingsSyncTheEndStagesCopies) {
  const RoundNumberHand H;
  Workload tied = H.w;
  tied.transformer.tied_embeddings = true;
  ParallelConfig c = Config(1, 2, 8, 1, 16);
  c.flash_attention = true;
  absl::StatusOr<Estimate> t = EstimateIteration(tied, c, H.p);
  const Estimate u = H.Of(c);
  ASSERT_TRUE(t.ok()) << t.status();
  const double sync = 4 * H.V * H.h / 10e9;
  EXPECT_NEAR(t->time.dp_comm_s - u.time.dp_comm_s, sync, H.Near(sync));
  EXPECT_EQ(t->memory.total_bytes, u.memory.total_bytes);
  const auto emb = std::find_if(t->collectives.begin(), t->collectives.end(),
                                [](const CollectiveUse& k) { return k.dimension == "emb"; });
  ASSERT_NE(emb, t->collectives.end());
  EXPECT_EQ(emb->group_size, 2);
  EXPECT_DOUBLE_EQ(emb->bytes, 4 * H.V * H.h);
  c = Config(1, 1, 16, 1, 16);
  c.flash_attention = true;
  absl::StatusOr<Estimate> t1 = EstimateIteration(tied, c, H.p);
  const Estimate u1 = H.Of(c);
  ASSERT_TRUE(t1.ok());
  EXPECT_LT(t1->time.dp_comm_s, u1.time.dp_comm_s);  // V h fewer gradients reduced
  EXPECT_LT(t1->memory.weights_bytes, u1.memory.weights_bytes);
}

TEST(Estimate, PipelineBreakdownMatchesHandComputation) {
  const RoundNumberHand H;
  // PP 2 x DP 4, 1F1B, 4 micro-batches. Stage 0: embedding + 2 layers; stage 1 (the
  // slowest): 2 layers + LM head.
  ParallelConfig pp2_config = Config(1, 2, 4, 1, 16);
  pp2_config.flash_attention = true;
  const Estimate pp2 = H.Of(pp2_config);
  const double stage0 = H.pre + 2 * (H.layer_fwd + H.layer_bwd), stage1 = 2 * (H.layer_fwd + H.layer_bwd) + H.post;
  const double compute_pp = 4 * stage1;  // 48.59 ms
  // 1F1B bubble (Narayanan et al. SC'21): (p - 1) x the mean stage time: 8.29 ms.
  const double bubble = (2 - 1) * (stage0 + stage1) / 2;
  // One activation (T h x 2 bytes = 4 MiB) forward and one gradient backward per
  // micro-batch over NVLink (adjacent stages are 4 ranks apart, inside the node), and one
  // of each more that the fill and drain wait on (p - 1 = 1): 2 x (4 + 1) sends, 0.42 ms.
  const double pp_comm = 2 * (4 + 1) * (2 * H.e / H.nvlink);
  // DP over the larger stage's parameters (stage 1: 2 layers, LM head, final norm):
  // 2 (3/4) 4 x 58,730,496 bytes / 100 GB/s = 3.52 ms.
  const double P_last = 2 * H.layer_params + H.V * H.h + 2 * H.h;
  const double ring_ar_pp = 2 * 3.0 / 4 * 4 * P_last / H.nvlink;
  EXPECT_NEAR(pp2.time.compute_s, compute_pp, H.Near(compute_pp));
  EXPECT_NEAR(pp2.time.pipeline_bubble_s, bubble, H.Near(bubble));
  EXPECT_NEAR(pp2.time.pp_comm_s, pp_comm, H.Near(pp_comm));
  EXPECT_NEAR(pp2.time.dp_comm_s, ring_ar_pp, H.Near(ring_ar_pp));
  const double optimizer_pp = P_last * H.bytes_per_param / H.hbm + H.gap;
  EXPECT_NEAR(pp2.time.optimizer_s, optimizer_pp, H.Near(optimizer_pp));
}

// The collectives table lists a sliding-window layer's context-parallel exchange as
// Megatron-Core runs it: gpt-oss-120b (36 layers, every other windowed; 64 query and 8 K/V
// heads of 64) over CP 2, 4,096 tokens, 2 micro-batches: the 18 full layers ring (one K/V
// block of 2,048 x 8 x 128 x 2 B, 3 passes a layer and micro-batch), the 18 windowed ones
// all-to-all Q, O, dO, dQ (2,048 x 64 x 64 x 2 B) and K, V, dK, dV (2,048 x 8 x 64 x 2 B),
// 4 calls each a layer and micro-batch.
TEST(Estimate, CollectivesListTheWindowedLayersAllToAll) {
  ParallelConfig c = Config(1, 1, 1, 1, 2);
  c.context_parallel = 2;
  c.flash_attention = true;
  absl::StatusOr<Estimate> e = EstimateIteration(Model("gpt-oss-120b"), c, Profile("dgx-h100-80gb"));
  ASSERT_TRUE(e.ok()) << e.status();
  std::vector<CollectiveUse> cp;
  for (const CollectiveUse& u : e->collectives) {
    if (u.dimension == "cp") cp.push_back(u);
  }
  ASSERT_EQ(cp.size(), 3u);
  EXPECT_EQ(cp[0].kind, CollectiveKind::kSendRecv);
  EXPECT_DOUBLE_EQ(cp[0].bytes, 2048.0 * 8 * 128 * 2);
  EXPECT_DOUBLE_EQ(cp[0].calls, 3 * 18 * 2);
  EXPECT_EQ(cp[1].kind, CollectiveKind::kAllToAll);
  EXPECT_DOUBLE_EQ(cp[1].bytes, 2048.0 * 64 * 64 * 2);
  EXPECT_DOUBLE_EQ(cp[1].calls, 4 * 18 * 2);
  EXPECT_EQ(cp[2].kind, CollectiveKind::kAllToAll);
  EXPECT_DOUBLE_EQ(cp[2].bytes, 2048.0 * 8 * 64 * 2);
  EXPECT_DOUBLE_EQ(cp[2].calls, 4 * 18 * 2);
  // torchtitan's FlexAttention on all 36 layers: K and V gathered (2 x 2,048 x 8 x 64 x
  // 2 B each), their gradients reduce-scattered.
  c.framework = Framework::kTorchtitan;
  absl::StatusOr<Estimate> titan = EstimateIteration(Model("gpt-oss-120b"), c, Profile("dgx-h100-80gb"));
  ASSERT_TRUE(titan.ok()) << titan.status();
  cp.clear();
  for (const CollectiveUse& u : titan->collectives) {
    if (u.dimension == "cp") cp.push_back(u);
  }
  ASSERT_EQ(cp.size(), 2u);
  EXPECT_EQ(cp[0].kind, CollectiveKind::kAllGather);
  EXPECT_EQ(cp[1].kind, CollectiveKind::kReduceScatter);
  for (const CollectiveUse& u : cp) {
    EXPECT_DOUBLE_EQ(u.bytes, 2 * 2048.0 * 8 * 64 * 2);
    EXPECT_DOUBLE_EQ(u.calls, 2 * 36 * 2);
  }
}

// The expert rows of the table follow the dispatcher the estimate ran. Qwen3-30B-A3B (48
// MoE layers, h 2,048, top-8) on EP 16 over two H100 nodes, micro-batch 1 of 4,096
// tokens, 2 micro-batches: 4 all-to-alls of 4,096 x 8 x 2,048 x 2 B per layer and
// micro-batch; DeepEP's sent once per node and rank touched (Collectives::DedupAllToAll,
// checked by hand in its test) and marked hierarchical (inside one node, direct); the all-gather dispatcher
// gathers the grid's 16 x 4,096 tokens twice and reduce-scatters them twice.
TEST(Estimate, CollectivesFollowTheDispatcher) {
  ParallelConfig c = Config(1, 1, 16, 1, 32);
  c.expert_parallel = 16;
  const SystemProfile profile = Profile("dgx-h100-80gb");
  auto ep_rows = [&](MoeDispatcher d) {
    c.moe_dispatcher = d;
    absl::StatusOr<Estimate> e = EstimateIteration(Model("qwen3-30b-a3b"), c, profile);
    EXPECT_TRUE(e.ok()) << e.status();
    std::vector<CollectiveUse> ep;
    if (!e.ok()) return ep;
    for (const CollectiveUse& u : e->collectives) {
      if (u.dimension == "ep") ep.push_back(u);
    }
    return ep;
  };
  const double sent = 4096.0 * 8 * 2048 * 2;
  const std::vector<CollectiveUse> a2a = ep_rows(MoeDispatcher::kAllToAll);
  ASSERT_EQ(a2a.size(), 1u);
  EXPECT_EQ(a2a[0].kind, CollectiveKind::kAllToAll);
  EXPECT_DOUBLE_EQ(a2a[0].bytes, sent);
  EXPECT_DOUBLE_EQ(a2a[0].calls, 4 * 48 * 2);
  const std::vector<CollectiveUse> deepep = ep_rows(MoeDispatcher::kDeepEp);
  ASSERT_EQ(deepep.size(), 1u);
  EXPECT_EQ(deepep[0].algorithm, CollectiveAlgorithm::kHierarchical);
  EXPECT_GT(deepep[0].dedup_to_node_bytes, 0);
  EXPECT_GT(deepep[0].dedup_to_rank_bytes, 0);
  EXPECT_DOUBLE_EQ(deepep[0].bytes, sent);
  const Hardware hw(profile, Precision::kBf16);
  const Collectives coll(hw);
  EXPECT_DOUBLE_EQ(deepep[0].seconds_per_call, coll.DedupAllToAll(sent, {8, 128}, coll.Place(16, 1)));
  EXPECT_LT(deepep[0].seconds_per_call, a2a[0].seconds_per_call);
  // Inside one node (EP 8) DeepEP sends each rank a token once, no node-to-node phase: a
  // direct exchange, not a hierarchical one.
  c.data_parallel = 8;
  c.expert_parallel = 8;
  c.global_batch_size = 16;
  const std::vector<CollectiveUse> inside = ep_rows(MoeDispatcher::kDeepEp);
  ASSERT_EQ(inside.size(), 1u);
  EXPECT_NE(inside[0].algorithm, CollectiveAlgorithm::kHierarchical);
  EXPECT_EQ(inside[0].dedup_to_node_bytes, 0);
  EXPECT_GT(inside[0].dedup_to_rank_bytes, 0);
  c = Config(1, 1, 16, 1, 32);
  c.expert_parallel = 16;
  const std::vector<CollectiveUse> gather = ep_rows(MoeDispatcher::kAllGather);
  ASSERT_EQ(gather.size(), 2u);
  EXPECT_EQ(gather[0].kind, CollectiveKind::kAllGather);
  EXPECT_EQ(gather[1].kind, CollectiveKind::kReduceScatter);
  for (const CollectiveUse& u : gather) {
    EXPECT_DOUBLE_EQ(u.bytes, 16 * 4096.0 * 2048 * 2);
    EXPECT_DOUBLE_EQ(u.calls, 2 * 48 * 2);
  }
}

// At a pipeline-stage boundary each TP rank sends 1/t of the activation under Megatron
// (its scatter-gather, or sequence-parallel already) but all of it under DeepSpeed's
// pipeline engine: GPT-3 175B, micro-batch 1, TP 8 PP 2: 2,048 x 12,288 x 2 B =
// 50,331,648 B a send there, 6,291,456 B under Megatron; 2 sends a micro-batch either way.
// The receive buffers hold the whole activation in both (4 of them).
TEST(Estimate, DeepSpeedPipelineSendsTheWholeActivation) {
  ParallelConfig c = Config(8, 2, 1, 1, 4);
  c.sequence_parallel = false;
  const auto pp = [](const Estimate& e) {
    for (const CollectiveUse& u : e.collectives) {
      if (u.dimension == "pp") return u;
    }
    return CollectiveUse{};
  };
  absl::StatusOr<Estimate> megatron = EstimateIteration(Model("gpt3-175b"), c, Profile("dgx-a100-80gb"));
  c.framework = Framework::kDeepSpeed;
  absl::StatusOr<Estimate> deepspeed = EstimateIteration(Model("gpt3-175b"), c, Profile("dgx-a100-80gb"));
  ASSERT_TRUE(megatron.ok() && deepspeed.ok());
  EXPECT_DOUBLE_EQ(pp(*megatron).bytes, 2048.0 * 12288 * 2 / 8);
  EXPECT_DOUBLE_EQ(pp(*deepspeed).bytes, 2048.0 * 12288 * 2);
  EXPECT_DOUBLE_EQ(pp(*deepspeed).calls, 2 * 4);
  EXPECT_DOUBLE_EQ(megatron->memory.buffers_bytes, deepspeed->memory.buffers_bytes);
  EXPECT_GT(deepspeed->time.pp_comm_s, 4 * megatron->time.pp_comm_s);
  // Under sequence parallelism the activation is split already, whichever framework.
  c.sequence_parallel = true;
  absl::StatusOr<Estimate> sp = EstimateIteration(Model("gpt3-175b"), c, Profile("dgx-a100-80gb"));
  ASSERT_TRUE(sp.ok());
  EXPECT_DOUBLE_EQ(pp(*sp).bytes, 2048.0 * 12288 * 2 / 8);
}

// Micro-batches times chunks beyond an int (1e9 x 3 at PP 8, v 3) count as they are: the
// pipeline's sends are 2 (m v + p - 1) hops, in proportion to a small batch's (found by
// estimate_request_fuzzer: the product overflowed).
TEST(Estimate, PipelineSendsCountManyMicroBatches) {
  ParallelConfig c = Config(8, 8, 1, 1, 16);
  c.virtual_pipeline_stages = 3;
  c.pipeline_schedule = PipelineSchedule::kInterleaved1F1B;
  absl::StatusOr<Estimate> small = EstimateIteration(Model("gpt3-175b"), c, Profile("dgx-a100-80gb"));
  c.global_batch_size = 1'000'000'000;
  absl::StatusOr<Estimate> big = EstimateIteration(Model("gpt3-175b"), c, Profile("dgx-a100-80gb"));
  ASSERT_TRUE(small.ok() && big.ok()) << small.status() << big.status();
  EXPECT_TRUE(std::isfinite(big->time.pp_comm_s));
  EXPECT_NEAR(big->time.pp_comm_s / small->time.pp_comm_s, (1e9 * 3 + 7) / (16.0 * 3 + 7), 1e-3);
}

// torchtitan's launcher runs PyTorch's allocator with expandable segments: its overhead
// share (0.01 by default) replaces the default allocator's (0.07) on what is used.
TEST(Estimate, TorchtitanRunsWithExpandableSegments) {
  ParallelConfig c = testing::Config(1, 1, 8, 1, 8);
  c.zero_stage = 3;
  c.flash_attention = true;
  absl::StatusOr<Estimate> megatron = EstimateIteration(Model("llama3-8b"), c, Profile("dgx-h100-80gb"));
  c.framework = Framework::kTorchtitan;
  absl::StatusOr<Estimate> titan = EstimateIteration(Model("llama3-8b"), c, Profile("dgx-h100-80gb"));
  ASSERT_TRUE(megatron.ok() && titan.ok());
  const double used = titan->memory.total_bytes - titan->memory.overhead_bytes;
  EXPECT_NEAR(titan->memory.overhead_bytes, 1.5 * (1 << 30) + 0.01 * used, 1);
  const double used_m = megatron->memory.total_bytes - megatron->memory.overhead_bytes;
  EXPECT_NEAR(megatron->memory.overhead_bytes, 1.5 * (1 << 30) + 0.07 * used_m, 1);
}

// NeMo's performance scripts overlap TP collectives with the GEMMs on dense models at TP > 1
// (not under NVFP4; not on the MoE models they ship): unstated, an estimate under NeMo runs
// and answers it; stated, or under another framework, as given.
TEST(Estimate, NemoOverlapsTensorParallelCollectivesOnDenseModels) {
  ParallelConfig c = testing::Config(4, 1, 2, 1, 8);
  c.sequence_parallel = true;
  c.flash_attention = true;
  c.zero_stage = 1;
  c.framework = Framework::kNemo;
  auto overlap = [&](const Workload& w, const ParallelConfig& cfg, const char* profile = "dgx-h100-80gb") {
    absl::StatusOr<Estimate> e = EstimateIteration(w, cfg, Profile(profile));
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() && e->config.tp_comm_overlap.value_or(false);
  };
  absl::StatusOr<Estimate> nemo = EstimateIteration(Model("llama3-8b"), c, Profile("dgx-h100-80gb"));
  ASSERT_TRUE(nemo.ok());
  EXPECT_TRUE(nemo->config.tp_comm_overlap.value_or(false));
  ParallelConfig stated = c;
  stated.tp_comm_overlap = false;
  absl::StatusOr<Estimate> off = EstimateIteration(Model("llama3-8b"), stated, Profile("dgx-h100-80gb"));
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->config.tp_comm_overlap.value_or(true));
  EXPECT_LT(nemo->time.tp_comm_s, off->time.tp_comm_s);
  Workload fp4 = Model("llama3-8b");
  fp4.precision = Precision::kFp4;
  EXPECT_FALSE(overlap(fp4, c, "dgx-b200-180gb"));
  fp4.precision = Precision::kFp8;
  EXPECT_TRUE(overlap(fp4, c, "dgx-b200-180gb"));
  EXPECT_FALSE(overlap(Model("mixtral-8x7b"), c));
  ParallelConfig megatron = c;
  megatron.framework = Framework::kMegatron;
  EXPECT_FALSE(overlap(Model("llama3-8b"), megatron));
  ParallelConfig no_sp = c;
  no_sp.sequence_parallel = false;
  EXPECT_FALSE(overlap(Model("llama3-8b"), no_sp));
}

// Context parallelism's ring attention exists over fused kernels only (Megatron-Core's
// unfused DotProductAttention refuses it): a request without flash_attention is priced
// with it, answers flash_attention true and says so. Where the unfused core was priced,
// its s^2 scores made Llama 3 8B at 32 k tokens over CP 4 need more memory and its
// missing ring steps made it look faster.
TEST(Estimate, ContextParallelismRunsFusedAttention) {
  Workload w = Model("llama3-8b");
  w.transformer.seq_length = 32768;
  ParallelConfig c = Config(1, 1, 2, 1, 8);
  c.context_parallel = 4;
  absl::StatusOr<Estimate> unstated = EstimateIteration(w, c, Profile("dgx-h100-80gb"));
  c.flash_attention = true;
  absl::StatusOr<Estimate> flash = EstimateIteration(w, c, Profile("dgx-h100-80gb"));
  ASSERT_TRUE(unstated.ok() && flash.ok()) << unstated.status();
  EXPECT_EQ(unstated->iteration_time_s, flash->iteration_time_s);
  EXPECT_EQ(unstated->memory.total_bytes, flash->memory.total_bytes);
  EXPECT_TRUE(unstated->config.flash_attention);
  EXPECT_NE(std::find_if(unstated->warnings.begin(), unstated->warnings.end(),
                         [](const std::string& s) { return s.rfind("flash_attention taken as true", 0) == 0; }),
            unstated->warnings.end());
  for (const std::string& s : flash->warnings) EXPECT_EQ(s.find("flash_attention"), std::string::npos) << s;
}

TEST(Estimate, MoreDataParallelismNeverRaisesWeightMemoryUnderZero3) {
  const SystemProfile p = Profile("dgx-h100-80gb");
  double previous = 1e30;
  for (int dp : {1, 2, 4, 8, 16, 32}) {
    ParallelConfig c = Config(8, 1, dp, 1, 64);
    c.zero_stage = 3;
    absl::StatusOr<Estimate> e = EstimateIteration(Model("llama3-70b"), c, p);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_LE(e->memory.weights_bytes, previous);
    previous = e->memory.weights_bytes;
  }
}

// Stated for no framework, a configuration that none of the modelled stacks runs is priced
// and says so, naming what each refuses; one that a framework runs says nothing of it.
TEST(Estimate, WarnsWhereNoFrameworkRunsTheConfiguration) {
  const SystemProfile p = Profile("dgx-h100-80gb");
  ParallelConfig c = Config(8, 4, 2, 1, 64);
  c.pipeline_schedule = PipelineSchedule::kZeroBubble;  // no virtual stages: torchtitan's ZBV needs 2
  absl::StatusOr<Estimate> e = EstimateIteration(Model("llama3-70b"), c, p);
  ASSERT_TRUE(e.ok()) << e.status();
  const std::string all = absl::StrJoin(e->warnings, "\n");
  EXPECT_NE(all.find("no modelled framework runs this configuration as stated (FRAMEWORK_MEGATRON and "
                     "FRAMEWORK_NEMO: pipeline_schedule runs 1F1B or interleaved 1F1B only; FRAMEWORK_DEEPSPEED: "
                     "pipeline_schedule runs 1F1B only"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("FRAMEWORK_TORCHTITAN: pipeline_schedule zero-bubble runs as ZBVZeroBubble"), std::string::npos)
      << all;
  EXPECT_NE(all.find("FRAMEWORK_PYTORCH_FSDP: tensor_parallel runs data parallelism only"), std::string::npos) << all;
  for (PipelineSchedule s : {PipelineSchedule::k1F1B, PipelineSchedule::kZeroBubble}) {
    c.pipeline_schedule = s;
    c.virtual_pipeline_stages = s == PipelineSchedule::kZeroBubble ? 2 : 1;  // torchtitan's ZBV
    c.zero_stage = s == PipelineSchedule::kZeroBubble ? 3 : 1;
    e = EstimateIteration(Model("llama3-70b"), c, p);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_EQ(absl::StrJoin(e->warnings, "\n").find("no modelled framework"), std::string::npos)
        << absl::StrJoin(e->warnings, "\n");
  }
  // A stated framework's refusals are the request's validation (ValidateFramework), not a
  // warning.
  c.framework = Framework::kMegatron;
  e = EstimateIteration(Model("llama3-70b"), c, p);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(absl::StrJoin(e->warnings, "\n").find("no modelled framework"), std::string::npos);
}

TEST(Estimate, ZeroStagesShardExactlyTheirTerms) {
  const SystemProfile p = Profile("dgx-a100-80gb");
  auto memory = [&](int zero) {
    ParallelConfig c = Config(8, 1, 4, 1, 4);
    c.zero_stage = zero;
    return EstimateIteration(Model("llama3-8b"), c, p)->memory;
  };
  const MemoryBreakdown z0 = memory(0), z1 = memory(1), z2 = memory(2), z3 = memory(3);
  EXPECT_NEAR(z1.optimizer_bytes * 4, z0.optimizer_bytes, 1);
  EXPECT_EQ(z1.gradients_bytes, z0.gradients_bytes);
  EXPECT_EQ(z1.weights_bytes, z0.weights_bytes);
  // ZeRO-2 runs as Megatron-FSDP (optim_grads): a quarter of the gradients, kept in bf16
  // (2 bytes where the distributed optimizer's main gradients take 4).
  EXPECT_NEAR(z2.gradients_bytes * 4 * 2, z0.gradients_bytes, 1);
  EXPECT_EQ(z2.weights_bytes, z0.weights_bytes);
  EXPECT_NEAR(z3.weights_bytes * 4, z0.weights_bytes, 1);
  // Megatron-LM: 18 bytes per parameter without sharding (2 + 4 + 12).
  const double params = z0.weights_bytes / 2;
  EXPECT_NEAR((z0.weights_bytes + z0.gradients_bytes + z0.optimizer_bytes) / params, 18, 1e-9);
}

TEST(Estimate, BubbleShareFallsAsMicroBatchesGrow) {
  const SystemProfile p = Profile("dgx-a100-80gb");
  double previous = 1;
  for (int gbs : {8, 16, 32, 64, 128}) {
    absl::StatusOr<Estimate> e = EstimateIteration(Model("gpt3-175b"), Config(8, 8, 1, 1, gbs), p);
    ASSERT_TRUE(e.ok());
    const double share = e->time.pipeline_bubble_s / e->iteration_time_s;
    EXPECT_LT(share, previous);
    previous = share;
  }
}

TEST(Estimate, ModelThatCannotFitIsReportedAsNotFitting) {
  absl::StatusOr<Estimate> e =
      EstimateIteration(Model("gpt3-175b"), Config(8, 1, 1, 1, 1), Profile("dgx-a100-80gb"));
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e->memory.fits);
  EXPECT_EQ(e->bottleneck, "memory");
  EXPECT_GT(e->memory.total_bytes, e->memory.capacity_bytes);
  // GPT-3 175B under TP 8, per GPU: 96 layers of 12 h^2 / 8 + 4h (h = 12288:
  // 226,541,568), the embedding 51200 h / 8 (tied with the LM head) and the final norm 2h:
  // 21,826,658,304 parameters at 18 bytes (Megatron-LM: 2 + 4 + 12) = 393 GB, five
  // times the 80 GiB.
  const double params = 96 * 226541568.0 + 78643200 + 24576;
  const MemoryBreakdown& m = e->memory;
  EXPECT_NEAR(m.weights_bytes + m.gradients_bytes + m.optimizer_bytes, 18 * params, 1e-9 * 18 * params);
}

TEST(Estimate, OffloadMovesStateToHost) {
  const SystemProfile p = Profile("dgx-a100-80gb");
  ParallelConfig c = Config(8, 1, 1, 1, 1);
  ParallelConfig off = c;
  off.offload.optimizer = true;
  absl::StatusOr<Estimate> a = EstimateIteration(Model("llama3-8b"), c, p);
  absl::StatusOr<Estimate> b = EstimateIteration(Model("llama3-8b"), off, p);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(b->memory.optimizer_bytes, 0);
  EXPECT_NEAR(b->memory.host_bytes, a->memory.optimizer_bytes, 1);
  // Llama 3 8B under TP 8, per GPU: 32 layers of attention 4096 x (32 + 2 x 8) x 128 / 8
  // + 32 x 128 x 4096 / 8, SwiGLU 3 x 4096 x 14336 / 8 and two RMSNorm scales 2 x 4096
  // (27,271,168); embedding and LM head 128256 x 4096 / 8 each, final RMSNorm 4096:
  // 1,004,015,616.
  const double params = 32 * 27271168.0 + 2 * 65667072.0 + 4096;
  EXPECT_NEAR(b->memory.host_bytes, 12 * params, 1e-9 * 12 * params);  // fp32 master, m, v
  // ZeRO-Offload (Ren et al. 2021): fp32 gradients to the host and bf16 weights back,
  // 6 bytes per parameter over 25 GB/s of PCIe: 241 ms; no optimizer step on the GPU.
  EXPECT_NEAR(b->time.offload_s, params * (4 + 2) / 25e9, 1e-9 * b->time.offload_s);
  EXPECT_EQ(b->time.optimizer_s, 0);
}

TEST(Estimate, TimeToTrainFollowsTheTokenBudget) {
  Workload w = Model("llama3-8b");
  w.training_tokens = 1e12;
  ParallelConfig c = Config(1, 1, 64, 1, 256);
  absl::StatusOr<Estimate> e = EstimateIteration(w, c, Profile("dgx-h100-80gb"));
  ASSERT_TRUE(e.ok());
  const double iterations = 1e12 / (256.0 * 8192);
  EXPECT_NEAR(e->time_to_train_s, iterations * e->iteration_time_s, 1e-6 * e->time_to_train_s);
  EXPECT_NEAR(e->cost_to_train_usd, iterations * e->cost_per_iteration_usd, 1e-6 * e->cost_to_train_usd);
}

// Two convolutions, a pool and a fully connected layer on 224 x 224 images.
Workload TinyCnn() {
  Workload cnn;
  cnn.name = "tiny-cnn";
  cnn.kind = Workload::Kind::kLayerGraph;
  cnn.layer_graph.layers = {
      testing::Layer("conv1", LayerKind::kConv, {3, 224, 224}, {64, 112, 112}, {7, 7}, {2, 2}, {3, 3}),
      testing::Layer("relu1", LayerKind::kRelu, {64, 112, 112}, {64, 112, 112}, {}, {}),
      testing::Layer("conv2", LayerKind::kConv, {64, 112, 112}, {128, 112, 112}, {3, 3}, {1, 1}, {1, 1}),
      testing::Layer("pool", LayerKind::kPool, {128, 112, 112}, {128, 56, 56}, {2, 2}, {2, 2}),
      testing::Layer("fc", LayerKind::kFc, {128, 56, 56}, {1000}, {}, {}),
  };
  return cnn;
}

TEST(Estimate, LayerGraphDataAndSpatialParallel) {
  const Workload cnn = TinyCnn();
  const SystemProfile p = testing::DevicePathAbci();  // host-staged below
  ParallelConfig data = Config(1, 1, 4, 32, 128);
  absl::StatusOr<Estimate> d = EstimateIteration(cnn, data, p);
  ASSERT_TRUE(d.ok()) << d.status();
  ParallelConfig spatial = Config(1, 1, 1, 32, 32);
  spatial.spatial_parallel = 4;
  absl::StatusOr<Estimate> s = EstimateIteration(cnn, spatial, p);
  ASSERT_TRUE(s.ok()) << s.status();
  // The 4 spatial ranks share one NVLink domain (abci-v100-16gb: 150 GB/s at the default
  // NCCL efficiency 0.8, 3 us per step, the default 35 us per collective call). A
  // point-to-point exchange costs call + latency + bytes / bandwidth.
  const double call = 35e-6, latency = 3e-6, bw = 150e9 * 0.8;
  auto send_recv = [&](double bytes) { return call + latency + bytes / bw; };
  // Halo exchange, rows split 4 ways: an interior rank needs, beyond its own rows, `pad`
  // rows before and d(k-1) - pad - s + 1 after. 7 x 7 / 2 / pad 3: 3 + 2 = 5 rows of
  // 224 x 3 channels; 3 x 3 / 1 / pad 1: 1 + 1 = 2 rows of 112 x 64; 2 x 2 / 2 pool:
  // none. 32 images, 2 bytes, once forward and once backward.
  const double halo_conv1 = 5.0 * 224 * 3 * 32 * 2;   // 215,040 bytes
  const double halo_conv2 = 2.0 * 112 * 64 * 32 * 2;  // 917,504 bytes
  const double halo = 2 * send_recv(halo_conv1) + 2 * send_recv(halo_conv2);
  // The fully connected layer all-gathers its row-split input forward and reduce-scatters
  // its gradient backward: a 4-rank ring over 32 x 128 x 56 x 56 x 2 bytes = 25.7 MB,
  // 3 steps of latency and 3/4 of the bytes: 204.6 us each way.
  const double fc_input = 32.0 * 128 * 56 * 56 * 2;
  const double gather = call + 3 * latency + 3.0 / 4 * fc_input / bw;
  EXPECT_NEAR(s->time.spatial_comm_s, halo + 2 * gather, 1e-12);  // one micro-batch
  EXPECT_EQ(s->time.tp_comm_s, 0);  // nothing split by filters or channels
  EXPECT_LT(s->memory.activations_bytes, d->memory.activations_bytes);
  ParallelConfig filter = Config(1, 1, 1, 32, 32);
  filter.filter_parallel = 4;
  absl::StatusOr<Estimate> f = EstimateIteration(cnn, filter, p);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_LT(f->memory.weights_bytes, d->memory.weights_bytes);
}

// The same spatial run as ParaDL's ChainerMN stack runs it (abci-v100-16gb as built):
// halos, the gather at the fully connected layer and the samples the group's root
// broadcasts all go through host memory by MPI, each byte copied out and back in over
// PCIe (12 GB/s) at the default staging efficiency 0.5, i.e. 6 GB/s; the samples are
// pickled and unpickled on the way (sample_handover_gbytes_per_s, 0.7 GB/s).
TEST(Estimate, LayerGraphSpatialStagedThroughTheHost) {
  const Workload cnn = TinyCnn();
  const SystemProfile p = Profile("abci-v100-16gb");
  ParallelConfig spatial = Config(1, 1, 1, 32, 32);
  spatial.spatial_parallel = 4;
  absl::StatusOr<Estimate> s = EstimateIteration(cnn, spatial, p);
  ASSERT_TRUE(s.ok()) << s.status();
  const double call = 35e-6, latency = 3e-6, bw = 150e9 * 0.8, staged = 12e9 * 0.5;
  // A halo: the device exchange, the host path's 18 us, and its bytes out and in.
  auto halo = [&](double bytes) { return call + latency + bytes / bw + 18e-6 + 2 * bytes / staged; };
  const double halos = 2 * halo(5.0 * 224 * 3 * 32 * 2) + 2 * halo(2.0 * 112 * 64 * 32 * 2);
  // The gather of the row-split 25.7 MB input: each rank's quarter out, the whole back in.
  const double fc_input = 32.0 * 128 * 56 * 56 * 2;
  const double gather = call + 3 * latency + 3.0 / 4 * fc_input / bw + (fc_input / 4 + fc_input) / staged;
  EXPECT_NEAR(s->time.spatial_comm_s, halos + 2 * gather, 1e-12);
  // The root pickles the 32 decoded samples (3 x 224 x 224 float32 each, 19.27 MB) once,
  // the receivers unpickle them at once, at 0.7 GB/s (27.5 ms), and the root sends 3
  // copies through host memory (9.6 ms).
  const double batch = 32 * 3 * 224 * 224 * 4.0;
  EXPECT_NEAR(s->time.data_loading_s, batch / 0.7e9 + 3 * batch / staged, 1e-12);
}

}  // namespace
// Megatron-Core's combined 1F1B hides the all-to-all only in steps that pair a forward
// with a backward (schedules.py get_pp_rank_microbatches): per micro-batch, the saving is
// the share of paired steps times the whole. Without a pipeline the first forward and the
// last backward run alone: m = 2 pairs 1/2, m = 8 pairs 7/8 (ratio 4/7). With PP 2 and 2
// virtual stages, 2 (pp - 1) + (v - 1) pp + 1 = 5 of m v chunks run alone: m = 4 pairs
// 3/8, m = 8 pairs 11/16 (ratio 6/11).
TEST(Estimate, AllToAllOverlapOnlyInPairedSteps) {
  const Workload w = Model("qwen3-235b-a22b");
  const SystemProfile p = Profile("dgx-h100-80gb");
  // Saving per micro-batch: (exposed without the overlap - exposed with it) / m.
  auto saving_per_mb = [&](int pp, int v, int gbs) {
    ParallelConfig c = Config(1, pp, 8, 1, gbs);
    c.expert_parallel = 8;
    c.virtual_pipeline_stages = v;
    if (v > 1) c.pipeline_schedule = PipelineSchedule::kInterleaved1F1B;
    absl::StatusOr<Estimate> plain = EstimateIteration(w, c, p);
    c.moe_a2a_overlap = true;
    absl::StatusOr<Estimate> overlapped = EstimateIteration(w, c, p);
    EXPECT_TRUE(plain.ok() && overlapped.ok()) << plain.status() << overlapped.status();
    if (!plain.ok() || !overlapped.ok()) return 0.0;
    return (plain->time.ep_comm_s - overlapped->time.ep_comm_s) / (gbs / 8);
  };
  const double m2 = saving_per_mb(1, 1, 16), m8 = saving_per_mb(1, 1, 64);
  ASSERT_GT(m8, 0);
  EXPECT_NEAR(m2 / m8, 4.0 / 7.0, 1e-9);
  const double pp_m4 = saving_per_mb(2, 2, 32), pp_m8 = saving_per_mb(2, 2, 64);
  ASSERT_GT(pp_m8, 0);
  EXPECT_NEAR(pp_m4 / pp_m8, 6.0 / 11.0, 1e-9);
}

// The overlap warms up one chunk more (get_pp_rank_microbatches): with PP 2 and v 2 the
// first stage holds 2 + 1/2 + 1/2 = 3 micro-batches' activations instead of 2.5.
TEST(Estimate, AllToAllOverlapHoldsOneChunkMore) {
  const Workload w = Model("qwen3-235b-a22b");
  ParallelConfig c = Config(1, 2, 8, 1, 64);
  c.expert_parallel = 8;
  c.virtual_pipeline_stages = 2;
  c.pipeline_schedule = PipelineSchedule::kInterleaved1F1B;
  const SystemProfile p = Profile("gb300-nvl72");
  absl::StatusOr<Estimate> plain = EstimateIteration(w, c, p);
  c.moe_a2a_overlap = true;
  absl::StatusOr<Estimate> overlapped = EstimateIteration(w, c, p);
  ASSERT_TRUE(plain.ok() && overlapped.ok()) << plain.status() << overlapped.status();
  EXPECT_NEAR(overlapped->memory.activations_bytes / plain->memory.activations_bytes, 3.0 / 2.5, 1e-9);
}

// Of what the pairing could hide, the schedule hides calibration.ep_overlap_efficiency
// (default 0.46): the saving is that share of the saving at 1, and nothing else moves.
TEST(Estimate, AllToAllOverlapHidesItsEfficiencyOfThePairedTime) {
  const Workload w = Model("qwen3-235b-a22b");
  ParallelConfig c = Config(1, 1, 8, 1, 64);
  c.expert_parallel = 8;
  auto saving = [&](double efficiency) {
    SystemProfile p = Profile("dgx-h100-80gb");
    p.calibration.ep_overlap_efficiency = efficiency;
    ParallelConfig plain = c;
    absl::StatusOr<Estimate> a = EstimateIteration(w, plain, p);
    plain.moe_a2a_overlap = true;
    absl::StatusOr<Estimate> b = EstimateIteration(w, plain, p);
    EXPECT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
    if (!a.ok() || !b.ok()) return 0.0;
    EXPECT_DOUBLE_EQ(a->time.compute_s, b->time.compute_s);
    return a->time.ep_comm_s - b->time.ep_comm_s;
  };
  const double all = saving(1.0);
  ASSERT_GT(all, 0);
  EXPECT_NEAR(saving(0.25) / all, 0.25, 1e-9);
  EXPECT_NEAR(saving(0) / all, 0.46, 1e-9);
}

// Values each within its range can still multiply past a double: the figure that
// overflows is named, and an accepted estimate passes.
TEST(Estimate, CheckFiniteNamesTheFigureThatOverflows) {
  absl::StatusOr<Estimate> e =
      EstimateIteration(testing::Model("llama3-8b"), testing::Config(1, 1, 8, 1, 64), testing::Profile("dgx-a100-80gb"));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(CheckFinite(*e).ok());
  Estimate bad = *e;
  bad.energy_to_train_j = INFINITY;
  absl::Status s = CheckFinite(bad);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("energy_to_train_j"), std::string::npos) << s;
  bad = *e;
  bad.interval.high_s = std::nan("");
  EXPECT_NE(CheckFinite(bad).message().find("interval.high_s"), std::string::npos);
}

}  // namespace paraplan
