// CNN layer graphs: presets against their published sizes, halo geometry by hand, the
// tensors backward keeps in a DAG, memory per strategy, and plans with a spatial cut.
#include <algorithm>
#include <cmath>
#include <string>

#include "estimator/inputs/layer_graph.h"
#include "estimator/inputs/validate.h"
#include "estimator/iteration/assemble.h"
#include "estimator/iteration/estimate.h"
#include "estimator/iteration/stage_costs.h"
#include "estimator/plan/search.h"
#include "estimator/testing/test_util.h"
#include "estimator/workloads/model_costs.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::Config;
using testing::Model;
using testing::Profile;

using testing::DevicePathAbci;

ModelCosts Costs(const Workload& w, const ParallelConfig& c) {
  static const SystemProfile p = DevicePathAbci();
  const Hardware hw(p, w.precision);
  const Collectives coll(hw);
  absl::StatusOr<ModelCosts> m = ComputeModelCosts(w, ModelShape::Of(c.Normalized()), hw, coll);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : ModelCosts{};
}

double Params(const ModelCosts& m) {
  double n = 0;
  for (const BlockCosts& l : m.layers) n += l.params;
  return n;
}

// torchvision's model table (parameters; GFLOPS there are multiply-accumulates of the
// convolutions and linears at 224 x 224): resnet50 25,557,032 / 4.09; vgg16
// 138,357,544 / 15.47; alexnet 61,100,840 / 0.71.
TEST(CnnPresets, ParametersAndMultiplyAccumulatesMatchPublishedValues) {
  struct Want {
    const char* name;
    double params, gmacs;
  };
  for (const Want& want : {Want{"resnet50", 25557032, 4.09}, Want{"vgg16", 138357544, 15.47},
                           Want{"alexnet", 61100840, 0.71}}) {
    const ModelCosts m = Costs(Model(want.name), Config(1, 1, 1, 1, 1));
    EXPECT_DOUBLE_EQ(Params(m), want.params) << want.name;
    // model_flops_per_sample counts forward + backward (3 x forward) at 2 FLOPs a MAC.
    EXPECT_NEAR(m.model_flops_per_sample / 6 / 1e9, want.gmacs, 0.01 * want.gmacs) << want.name;
  }
}

// MLPerf HPC CosmoFlow on 4 x 128^3: five 2^3 convs (32 .. 512 filters, with bias) and
// fully connected 32768 -> 128 -> 64 -> 4.
TEST(CnnPresets, CosmoFlowParameters) {
  const double convs = (32 * 4 * 8 + 32) + (64 * 32 * 8 + 64) + (128 * 64 * 8 + 128) + (256 * 128 * 8 + 256) +
                       (512 * 256 * 8 + 512);
  const double fcs = (32768.0 * 128 + 128) + (128 * 64 + 64) + (64 * 4 + 4);
  EXPECT_DOUBLE_EQ(Params(Costs(Model("cosmoflow"), Config(1, 1, 1, 1, 1))), convs + fcs);
  const Workload big = Model("cosmoflow-512");
  EXPECT_EQ(big.layer_graph.layers[0].input_shape, (std::vector<int64_t>{4, 512, 512, 512}));
  EXPECT_EQ(big.layer_graph.layers.back().output_shape, (std::vector<int64_t>{4}));
}

TEST(LayerGeometry, WindowHaloByHand) {
  // 3x3 / 1 / pad 1: one row each side. 7x7 / 2 / pad 3: 3 before, 6 - 3 - 2 + 1 = 2
  // after. 2x2 / 2 (non-overlapping pool): none. 3x3 / 2 / pad 1 pool: 1 before, 0 after.
  // 3x3 / 1 / pad 2 / dilation 2: 2 and 2.
  EXPECT_EQ(WindowHalo(3, 1, 1, 1).before, 1);
  EXPECT_EQ(WindowHalo(3, 1, 1, 1).after, 1);
  EXPECT_EQ(WindowHalo(7, 2, 3, 1).before, 3);
  EXPECT_EQ(WindowHalo(7, 2, 3, 1).after, 2);
  EXPECT_EQ(WindowHalo(2, 2, 0, 1).before + WindowHalo(2, 2, 0, 1).after, 0);
  EXPECT_EQ(WindowHalo(3, 2, 1, 1).before, 1);
  EXPECT_EQ(WindowHalo(3, 2, 1, 1).after, 0);
  EXPECT_EQ(WindowHalo(3, 1, 2, 2).before, 2);
  EXPECT_EQ(WindowHalo(3, 1, 2, 2).after, 2);
  EXPECT_EQ(SpatialFactors(8, 2), (std::vector<int>{4, 2}));
  EXPECT_EQ(SpatialFactors(4, 2), (std::vector<int>{2, 2}));
  EXPECT_EQ(SpatialFactors(8, 3), (std::vector<int>{2, 2, 2}));
  EXPECT_EQ(SpatialFactors(6, 2), (std::vector<int>{3, 2}));
}

LayerSpec Conv2d(int64_t c, int64_t hw, int64_t k, int64_t s, int64_t pad) {
  LayerSpec l;
  l.kind = LayerKind::kConv;
  l.input_shape = {c, hw, hw};
  l.output_shape = {64, (hw + 2 * pad - k) / s + 1, (hw + 2 * pad - k) / s + 1};
  l.kernel_shape = {k, k};
  l.stride = {s, s};
  l.padding = {pad, pad};
  return l;
}

TEST(LayerGeometry, HaloVolumesOnOneAndTwoAxes) {
  int exchanges = 0;
  // 3x3 / 1 / pad 1 on 64 x 56 x 56, rows split 2 ways: one neighbour, 1 row of 56 x 64.
  const LayerSpec c3 = Conv2d(64, 56, 3, 1, 1);
  EXPECT_DOUBLE_EQ(HaloElementsPerSample(c3, {2}, &exchanges), 1 * 56 * 64);
  EXPECT_EQ(exchanges, 1);
  // 4 ways: an interior rank gets a row from each side.
  EXPECT_DOUBLE_EQ(HaloElementsPerSample(c3, {4}, &exchanges), 2 * 56 * 64);
  // 2 x 2 over two axes: rows then columns; the column slab spans the rank's 28 rows plus
  // the row received: 1 x 28 x 64 + 1 x 29 x 64.
  EXPECT_DOUBLE_EQ(HaloElementsPerSample(c3, {2, 2}, &exchanges), (28 + 29) * 64.0);
  EXPECT_EQ(exchanges, 2);
  // 7x7 / 2 / pad 3 on 3 x 224 x 224: 2 ways -> max(3, 2) = 3 rows of 224 x 3; 4 ways -> 5
  // rows; 4 x 4 over two axes: 5 rows of 56 columns, then 5 columns of 56 + 5 rows.
  const LayerSpec c7 = Conv2d(3, 224, 7, 2, 3);
  EXPECT_DOUBLE_EQ(HaloElementsPerSample(c7, {2}, &exchanges), 3 * 224 * 3);
  EXPECT_DOUBLE_EQ(HaloElementsPerSample(c7, {4}, &exchanges), 5 * 224 * 3);
  EXPECT_DOUBLE_EQ(HaloElementsPerSample(c7, {4, 4}, &exchanges), 5 * 56 * 3 + 5 * 61 * 3);
  // Overlapping max pool 3x3 / 2 / pad 1 on 64 x 112 x 112, 4 ways: 1 row before, none after.
  LayerSpec pool = Conv2d(64, 112, 3, 2, 1);
  pool.kind = LayerKind::kPool;
  EXPECT_DOUBLE_EQ(HaloElementsPerSample(pool, {4}, &exchanges), 1 * 112 * 64);
  // A 3-D conv 3^3 / 1 / pad 1 on 32 x 64^3, depth split 4 ways: 2 planes of 64 x 64 x 32.
  LayerSpec c3d;
  c3d.kind = LayerKind::kConv;
  c3d.input_shape = {32, 64, 64, 64};
  c3d.output_shape = {32, 64, 64, 64};
  c3d.kernel_shape = {3, 3, 3};
  c3d.padding = {1, 1, 1};
  EXPECT_DOUBLE_EQ(HaloElementsPerSample(c3d, {4}, &exchanges), 2 * 64 * 64 * 32.0);
  // A 1x1 conv and a fully connected layer need nothing.
  EXPECT_EQ(HaloElementsPerSample(Conv2d(64, 56, 1, 1, 0), {4}, &exchanges), 0);
  EXPECT_EQ(exchanges, 0);
}

// conv -> norm -> relu -> conv, and a residual add of the relu and the second conv:
// the sample (conv input), conv1's output (norm input) and the relu's output (kept by the
// relu and read by conv2) are kept; the norm's output (relu input) and the add's are not.
TEST(LayerGraph, KeptTensorsOfASmallResidualBlock) {
  LayerGraphSpec g;
  auto add = [&](const std::string& name, LayerKind kind, std::vector<std::string> in = {}) {
    LayerSpec l;
    l.name = name;
    l.kind = kind;
    l.inputs = std::move(in);
    g.layers.push_back(l);
  };
  add("conv1", LayerKind::kConv);
  add("bn", LayerKind::kNorm);
  add("relu", LayerKind::kRelu);
  add("conv2", LayerKind::kConv);
  add("sum", LayerKind::kAdd, {"relu", "conv2"});
  absl::StatusOr<std::vector<std::vector<int>>> in = ResolveInputs(g);
  ASSERT_TRUE(in.ok());
  EXPECT_EQ((*in)[4], (std::vector<int>{2, 3}));
  EXPECT_EQ(KeptTensors(g, *in), (std::vector<bool>{true, true, false, true, false, false}));
  g.layers[4].inputs = {"nope"};
  EXPECT_EQ(ResolveInputs(g).status().code(), absl::StatusCode::kInvalidArgument);
}

// ResNet-50 stores each kept tensor once: at batch 1 its activations are the sum of the
// elements of the tensors KeptTensors marks (4 bytes each in FP32; which tensors are kept
// is checked by hand on the small block above), each counted once here from the shapes.
TEST(LayerGraph, ResNetActivationsCountEachKeptTensorOnce) {
  const Workload w = Model("resnet50");
  absl::StatusOr<std::vector<std::vector<int>>> in = ResolveInputs(w.layer_graph);
  ASSERT_TRUE(in.ok());
  const std::vector<bool> kept = KeptTensors(w.layer_graph, *in);
  double elems = kept[0] ? 3 * 224 * 224 : 0;
  int dropouts = 0;
  for (size_t i = 0; i < w.layer_graph.layers.size(); ++i) {
    double n = 1;
    for (int64_t v : w.layer_graph.layers[i].output_shape) n *= v;
    if (kept[i + 1]) elems += n;
    dropouts += w.layer_graph.layers[i].kind == LayerKind::kDropout;
  }
  EXPECT_EQ(dropouts, 0);
  const ModelCosts m = Costs(w, Config(1, 1, 1, 1, 1));
  double bytes = 0;
  for (const BlockCosts& l : m.layers) bytes += l.activation_bytes;
  EXPECT_DOUBLE_EQ(bytes, 4 * elems);
  // Far fewer than one tensor per layer: BN outputs and residual sums are not kept.
  double all = 0;
  for (const LayerSpec& l : w.layer_graph.layers) {
    double n = 1;
    for (int64_t v : l.output_shape) n *= v;
    all += n;
  }
  EXPECT_LT(elems, 0.8 * all);
}

TEST(LayerGraph, FilterParallelHoldsWholeOutputsAndRecomputeNeverRaisesMemory) {
  const SystemProfile p = Profile("abci-v100-16gb");
  for (const char* name : {"resnet50", "vgg16", "alexnet", "cosmoflow"}) {
    const Workload w = Model(name);
    ParallelConfig data = Config(1, 1, 1, 4, 4);
    ParallelConfig filter = data;
    filter.filter_parallel = 2;
    filter.global_batch_size = 4;
    absl::StatusOr<Estimate> d = EstimateIteration(w, data, p);
    absl::StatusOr<Estimate> f = EstimateIteration(w, filter, p);
    ASSERT_TRUE(d.ok() && f.ok()) << name << d.status() << f.status();
    // Same micro-batch: the gathered outputs are whole, the weights halved.
    EXPECT_DOUBLE_EQ(f->memory.activations_bytes, d->memory.activations_bytes) << name;
    EXPECT_LT(f->memory.weights_bytes, 0.51 * d->memory.weights_bytes) << name;
    for (ParallelConfig c : {data, filter}) {
      ParallelConfig r = c;
      r.recompute = Recompute::kFull;
      absl::StatusOr<Estimate> a = EstimateIteration(w, c, p);
      absl::StatusOr<Estimate> b = EstimateIteration(w, r, p);
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_LE(b->memory.activations_bytes, a->memory.activations_bytes) << name;
      EXPECT_GT(b->time.recompute_s, 0) << name;
    }
  }
}

// Splitting only the early layers: CosmoFlow's 4^3 last block cannot be cut 8 ways, so
// splitting everything is rejected, and splitting the first three conv blocks is not.
TEST(LayerGraph, SpatialCutKeepsLateLayersWhole) {
  const Workload w = Model("cosmoflow");
  ParallelConfig all = Config(1, 1, 1, 8, 8);
  all.spatial_parallel = 8;
  EXPECT_EQ(ValidateConfig(w, all).code(), absl::StatusCode::kInvalidArgument);
  ParallelConfig early = all;
  early.spatial_layers = 9;  // conv1..pool3
  const SystemProfile p = Profile("abci-v100-16gb");
  absl::StatusOr<Estimate> e = EstimateIteration(w, early, p);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_GT(e->time.spatial_comm_s, 0);  // halos and the redistribution at the cut
  EXPECT_EQ(e->time.tp_comm_s, 0);       // no filter or channel split
  // Three axes of 2 instead of one of 8: smaller halo slabs.
  ParallelConfig cube = early;
  cube.spatial_axes = 3;
  absl::StatusOr<Estimate> c = EstimateIteration(w, cube, p);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_NE(c->time.spatial_comm_s, e->time.spatial_comm_s);
}

// The breakdown's exposed parts, field by field: a part left out of TimeBreakdown::Sum
// shows as a difference from the iteration time.
double Parts(const TimeBreakdown& t) {
  return t.compute_s + t.recompute_s + t.tp_comm_s + t.spatial_comm_s + t.cp_comm_s + t.ep_comm_s + t.pp_comm_s +
         t.pipeline_bubble_s + t.dp_comm_s + t.optimizer_s + t.data_loading_s + t.overhead_s + t.offload_s;
}

// ResNet-50 split over rows 4 ways up to its global pool (a 1 x 1 output), 2 pipeline
// stages: its halos, synchronised batch-norm statistics and the redistribution at the
// cut are spatial communication, none of it tensor-parallel, and the breakdown sums to
// the iteration (with and without full recompute). A filter split beside it books its
// gathers as tp_comm_s.
TEST(LayerGraph, SpatialCommIsItsOwnPartOfTheIteration) {
  const Workload w = Model("resnet50");
  const SystemProfile p = Profile("abci-v100-16gb");
  ParallelConfig c = Config(1, 2, 2, 8, 64);
  c.spatial_parallel = 4;
  while (w.layer_graph.layers[c.spatial_layers].name != "avgpool") ++c.spatial_layers;
  for (Recompute rc : {Recompute::kNone, Recompute::kFull}) {
    c.recompute = rc;
    absl::StatusOr<Estimate> e = EstimateIteration(w, c, p);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_GT(e->time.spatial_comm_s, 0);
    EXPECT_EQ(e->time.tp_comm_s, 0);
    EXPECT_NEAR(Parts(e->time), e->iteration_time_s, 1e-12 * e->iteration_time_s);
  }
  c.filter_parallel = 2;
  absl::StatusOr<Estimate> f = EstimateIteration(w, c, p);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_GT(f->time.spatial_comm_s, 0);
  EXPECT_GT(f->time.tp_comm_s, 0);
  EXPECT_NEAR(Parts(f->time), f->iteration_time_s, 1e-12 * f->iteration_time_s);
}

// Booking spatial communication apart moves no time: per-layer costs with their spatial
// part booked as tensor-parallel time (as before spatial_comm_s) give the same
// iteration, bubble and data-parallel time. 2 pipeline stages of 2 layers, weights heavy
// enough that the overlapped gradient reduction (ZeRO 0, 1, 2) outlasts the last
// backward and the traffic beside it: a filter group of 8 spanning two 4-GPU nodes.
TEST(LayerGraph, SpatialCommCostsWhatItCostAsTensorParallel) {
  const Workload w = Model("cosmoflow");
  const SystemProfile p = Profile("abci-v100-16gb");
  const Hardware hw(p, w.precision);
  const Collectives coll(hw);
  const SystemContext sys = MakeSystemContext(p, w, hw, coll);
  ModelCosts apart;
  BlockCosts layer;
  layer.fwd_s = 1e-3;
  layer.bwd_s = 2e-3;
  layer.tp_fwd_s = layer.tp_bwd_s = 1e-4;
  layer.spatial_fwd_s = layer.spatial_bwd_s = 2e-3;
  layer.params = 1e8;
  apart.layers.assign(4, layer);
  apart.pp_send_bytes = 1e6;
  apart.weight_bytes_per_param = apart.grad_bytes_per_param = 4;
  apart.grad_reduce_bytes_per_param = apart.param_gather_bytes_per_param = 4;
  ModelCosts as_tp = apart;
  for (BlockCosts& l : as_tp.layers) {
    l.tp_fwd_s += l.spatial_fwd_s;
    l.tp_bwd_s += l.spatial_bwd_s;
    l.spatial_fwd_s = l.spatial_bwd_s = 0;
  }
  ParallelConfig c = Config(1, 2, 2, 8, 64);
  c.spatial_parallel = 4;
  c.spatial_layers = 9;
  c.filter_parallel = 8;
  c.overlap_grad_reduce = true;
  for (int zero : {0, 1, 2}) {
    c.zero_stage = zero;
    const ParallelConfig n = c.Normalized();
    ASSERT_TRUE(ValidateConfig(w, n).ok()) << ValidateConfig(w, n);
    CandidateResult a, b;
    Assemble(apart, ComputeStageCosts(apart, 2, 1), n, sys, &a);
    Assemble(as_tp, ComputeStageCosts(as_tp, 2, 1), n, sys, &b);
    const double near = 1e-12 * b.iteration_time_s;
    EXPECT_NEAR(a.time.spatial_comm_s, 4 * 2 * 4e-3, near) << zero;  // 4 micro-batches
    EXPECT_NEAR(a.time.tp_comm_s + a.time.spatial_comm_s, b.time.tp_comm_s, near) << zero;
    EXPECT_NEAR(a.time.pipeline_bubble_s, b.time.pipeline_bubble_s, near) << zero;
    EXPECT_NEAR(a.time.dp_comm_s, b.time.dp_comm_s, near) << zero;
    EXPECT_NEAR(a.iteration_time_s, b.iteration_time_s, near) << zero;
  }
}

// Measured layer times replace the modelled compute: AlexNet's 22 layers at 1 ms forward
// and 2 ms backward per sample, micro-batch 4, 2 micro-batches: 2 x 4 x 22 x 3 ms. Split
// over 2 filter ranks, its 5 convolutions and 3 fully connected layers take half.
TEST(LayerGraph, MeasuredLayerTimesReplaceTheModel) {
  const Workload w = Model("alexnet");
  ASSERT_EQ(w.layer_graph.layers.size(), 22u);
  SystemProfile p = Profile("abci-v100-16gb");
  for (const LayerSpec& l : w.layer_graph.layers) p.layer_timings.push_back({"alexnet", l.name, 1e-3, 2e-3});
  p.layer_timings.push_back({"vgg16", "conv1", 5, 5});  // another workload's: ignored
  absl::StatusOr<Estimate> e = EstimateIteration(w, Config(1, 1, 1, 4, 8), p);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_NEAR(e->time.compute_s, 2 * 4 * 22 * 3e-3, 1e-12);
  ASSERT_FALSE(e->warnings.empty());
  EXPECT_NE(std::find(e->warnings.begin(), e->warnings.end(),
                      "compute of 22 of 22 layers from measured layer times on this profile"),
            e->warnings.end());
  ParallelConfig filter = Config(1, 1, 1, 4, 8);
  filter.filter_parallel = 2;
  e = EstimateIteration(w, filter, p);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_NEAR(e->time.compute_s, 2 * 4 * (8 * 1.5e-3 + 14 * 3e-3), 1e-12);
  // Without timings the roofline applies and no such note is given.
  e = EstimateIteration(w, Config(1, 1, 1, 4, 8), Profile("abci-v100-16gb"));
  ASSERT_TRUE(e.ok());
  EXPECT_NE(e->time.compute_s, 2 * 4 * 22 * 3e-3);
  for (const std::string& note : e->warnings) EXPECT_EQ(note.find("measured layer times"), std::string::npos);
}

// Halos wait for the slowest pair: 4 spatial ranks fit one ABCI node (NVLink, 150 GB/s x
// 0.8, 3 us), 8 span two, and the pair across the node boundary uses InfiniBand
// (6.25 GB/s x 0.8 a GPU, 5 us). A 3x3 / pad 1 conv on 8 x 64 x 64, rows split: an
// interior rank receives 2 rows of 64 x 8 channels, 4 samples, 4 bytes = 16,384 bytes,
// forward and backward, each paying the 35 us call.
TEST(LayerGraph, HaloAcrossNodesUsesTheNetwork) {
  Workload w;
  w.name = "one-conv";
  w.kind = Workload::Kind::kLayerGraph;
  w.precision = Precision::kFp32;
  LayerSpec conv;
  conv.name = "conv";
  conv.kind = LayerKind::kConv;
  conv.input_shape = {8, 64, 64};
  conv.output_shape = {8, 64, 64};
  conv.kernel_shape = {3, 3};
  conv.padding = {1, 1};
  w.layer_graph.layers = {conv};
  const double bytes = 2 * 64 * 8 * 4 * 4.0;
  for (int sp : {4, 8}) {
    ParallelConfig c = Config(1, 1, 1, 4, 4);
    c.spatial_parallel = sp;
    const ModelCosts m = Costs(w, c);
    const double per = sp == 4 ? 35e-6 + 3e-6 + bytes / (150e9 * 0.8) : 35e-6 + 5e-6 + bytes / (6.25e9 * 0.8);
    EXPECT_NEAR(m.layers[0].spatial_fwd_s, per, 1e-12) << sp;
    EXPECT_NEAR(m.layers[0].spatial_bwd_s, per, 1e-12) << sp;
    EXPECT_EQ(m.layers[0].tp_fwd_s + m.layers[0].tp_bwd_s, 0) << sp;
  }
}

// Host dispatch by hand: a tiny graph at micro-batch 1 launches, forward, the
// convolution and its bias add (2), the ReLU (1) and the fully connected layer and its bias
// (2); backward 3 + 1 + 3: 12 kernels. At 10 ms of host time a kernel (far above any of
// these kernels on the GPU) each layer's host time is its kernels' less its GPU time; under
// CUDA graphs the host keeps up.
TEST(LayerGraph, HostDispatchPerKernel) {
  Workload w;
  w.name = "tiny";
  w.kind = Workload::Kind::kLayerGraph;
  w.precision = Precision::kFp32;
  w.layer_graph.layers = {
      testing::Layer("conv", LayerKind::kConv, {3, 8, 8}, {8, 8, 8}, {3, 3}, {1, 1}),
      testing::Layer("relu", LayerKind::kRelu, {8, 8, 8}, {8, 8, 8}, {}, {}),
      testing::Layer("fc", LayerKind::kFc, {8, 8, 8}, {10}, {}, {}),
  };
  SystemProfile p = DevicePathAbci();
  p.calibration.kernel_overhead_us = 10000;
  const Hardware hw(p, w.precision);
  const Collectives coll(hw);
  ParallelConfig c = Config(1, 1, 1, 1, 1);
  absl::StatusOr<ModelCosts> m = ComputeModelCosts(w, ModelShape::Of(c.Normalized()), hw, coll);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->layers.size(), 3u);
  const double kernels[3][2] = {{2, 3}, {1, 1}, {2, 3}};
  for (int i = 0; i < 3; ++i) {
    const BlockCosts& l = m->layers[i];
    EXPECT_EQ(l.kernels, kernels[i][0] + kernels[i][1]) << i;
    EXPECT_NEAR(l.host_s, (kernels[i][0] + kernels[i][1]) * 10e-3 - (l.fwd_s + l.bwd_s), 1e-12) << i;
  }
  c.cuda_graphs = true;
  m = ComputeModelCosts(w, ModelShape::Of(c.Normalized()), hw, coll);
  ASSERT_TRUE(m.ok()) << m.status();
  for (const BlockCosts& l : m->layers) EXPECT_EQ(l.host_s, 0);
}

}  // namespace
}  // namespace paraplan
