// The input pipeline by hand: reads from local storage or a shared file system split
// over the job's nodes and capped per node, CPU decoding over the node's cores, staging,
// and an input-bound plan that names `io` as its bottleneck.
#include "estimator/system/input_pipeline.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "estimator/iteration/estimate.h"
#include "estimator/testing/test_util.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::Config;
using testing::Model;
using testing::Profile;

InputSystem Sys(DatasetLocation where, bool offloaded) {
  InputSystem in;
  in.sample_bytes = 110e3;  // an ImageNet JPEG
  in.location = where;
  in.local_bytes_per_s = 25e9;
  in.shared_bytes_per_s = 10e9;
  in.shared_node_bytes_per_s = 2e9;
  in.decode_s_per_sample = offloaded ? 0 : 10e-3;
  in.cpu_cores = 40;
  return in;
}

TEST(InputPipeline, ReadsAndDecodesByHand) {
  // 128 samples a node (14.08 MB), 16 nodes: local 14.08 MB / 25 GB/s = 0.5632 ms; the
  // shared file system gives each node 10 / 16 = 0.625 GB/s (under its 2 GB/s link):
  // 22.528 ms; decoding 128 samples of 10 ms on 40 cores, a sample per core at a time:
  // 4 rounds, 40 ms.
  InputTime t = InputPipelineTime(Sys(DatasetLocation::kSharedFs, false), 128, 16);
  EXPECT_DOUBLE_EQ(t.steady_s, 40e-3);
  t = InputPipelineTime(Sys(DatasetLocation::kSharedFs, true), 128, 16);
  EXPECT_DOUBLE_EQ(t.steady_s, 22.528e-3);
  EXPECT_DOUBLE_EQ(t.first_epoch_s, 22.528e-3);
  // Staged: the first epoch from the shared file system, later ones local.
  t = InputPipelineTime(Sys(DatasetLocation::kStaged, true), 128, 16);
  EXPECT_DOUBLE_EQ(t.steady_s, 0.5632e-3);
  EXPECT_DOUBLE_EQ(t.first_epoch_s, 22.528e-3);
  t = InputPipelineTime(Sys(DatasetLocation::kLocal, true), 128, 16);
  EXPECT_DOUBLE_EQ(t.first_epoch_s, 0.5632e-3);
  // Two nodes: 5 GB/s each by share, capped at the 2 GB/s client link: 7.04 ms.
  t = InputPipelineTime(Sys(DatasetLocation::kSharedFs, true), 128, 2);
  EXPECT_DOUBLE_EQ(t.steady_s, 7.04e-3);
}

// Decoding by format, by hand, on abci-v100-16gb's defaults: a 226 x 226 crop from a
// 25 KB stored image (smaller than its 153,228 one-byte elements: a JPEG) costs
// 51,076 pixels / 100 Mpixel/s = 510.76 us of one core; the same sample stored as a
// 613 KB float32 array is read as HDF5, 612,912 B / 0.4 GB/s = 1.53228 ms; tokens cost
// nothing. A stated decode cost wins over the format's.
TEST(InputPipeline, DecodesByFormat) {
  const SystemProfile p = Profile("abci-v100-16gb");
  const Hardware hw(p, Precision::kFp32);
  Workload w;
  w.kind = Workload::Kind::kLayerGraph;
  LayerSpec conv;
  conv.name = "conv";
  conv.kind = LayerKind::kConv;
  conv.input_shape = {3, 226, 226};
  conv.output_shape = {8, 226, 226};
  w.layer_graph.layers = {conv};
  w.dataset.sample_bytes = 25000;
  EXPECT_EQ(ResolvedFormat(w), DatasetFormat::kJpeg);
  EXPECT_NEAR(InputSystem::Of(p, w, hw).decode_s_per_sample, 226.0 * 226 / 50e6, 1e-15);
  EXPECT_DOUBLE_EQ(InputSystem::Of(p, w, hw).tensor_bytes, 4.0 * 3 * 226 * 226);
  w.dataset.sample_bytes = 4 * 3 * 226 * 226;
  EXPECT_EQ(ResolvedFormat(w), DatasetFormat::kHdf5);
  EXPECT_NEAR(InputSystem::Of(p, w, hw).decode_s_per_sample, 612912 / 0.4e9, 1e-15);
  w.dataset.format = DatasetFormat::kRaw;
  EXPECT_EQ(InputSystem::Of(p, w, hw).decode_s_per_sample, 0);
  w.dataset.decode_core_ms_per_sample = 3;
  EXPECT_DOUBLE_EQ(InputSystem::Of(p, w, hw).decode_s_per_sample, 3e-3);
  Workload gpt = Model("gpt3-175b");
  gpt.dataset.sample_bytes = 8192;
  EXPECT_EQ(ResolvedFormat(gpt), DatasetFormat::kTokens);
  EXPECT_EQ(InputSystem::Of(p, gpt, hw).decode_s_per_sample, 0);
}

// Small files on a shared file system: every node's samples are opened through the one
// metadata service, 20,000 opens a second by default. 512 samples on each of 4 nodes:
// 2,048 / 20,000 = 102.4 ms, though the bytes (12.8 MB a node) take 1.28 ms. Loading on a
// quarter of the cores (a spatial group's root): 10 cores decode 512 samples of
// 510.76 us in 52 rounds, 26.56 ms; on all 40, 13 rounds.
TEST(InputPipeline, FileOpensAndLoaderCores) {
  InputSystem in;
  in.sample_bytes = 25e3;
  in.location = DatasetLocation::kSharedFs;
  in.shared_bytes_per_s = 40e9;
  in.shared_files_per_s = 20000;
  EXPECT_DOUBLE_EQ(InputPipelineTime(in, 512, 4).steady_s, 2048 / 20000.0);
  in.shared_files_per_s = 0;
  EXPECT_DOUBLE_EQ(InputPipelineTime(in, 512, 4).steady_s, 512 * 25e3 / 10e9);
  in.shared_bytes_per_s = 0;
  in.decode_s_per_sample = 510.76e-6;
  in.cpu_cores = 40;
  EXPECT_NEAR(InputPipelineTime(in, 512, 4, 0.25).steady_s, 52 * 510.76e-6, 1e-15);
  EXPECT_NEAR(InputPipelineTime(in, 512, 4, 1.0).steady_s, 13 * 510.76e-6, 1e-15);
}

// Loaders that keep fewer cores busy than they are given decode at the rate of those
// they keep busy: 1.5 cores a process (threads under one interpreter lock). A spatial
// root alone on its 10 cores: 512 x 510.76 us / 1.5 = 174.33 ms; four data-parallel
// loaders on the node's 40: 512 x 510.76 us / 6 = 43.58 ms. Processes that could keep
// 64 cores busy are bound by the cores again: 52 and 13 rounds.
TEST(InputPipeline, LoaderCoresPerProcess) {
  InputSystem in;
  in.decode_s_per_sample = 510.76e-6;
  in.cpu_cores = 40;
  in.loader_cores_per_process = 1.5;
  EXPECT_NEAR(InputPipelineTime(in, 512, 1, 0.25, 1).steady_s, 512 * 510.76e-6 / 1.5, 1e-15);
  EXPECT_NEAR(InputPipelineTime(in, 512, 1, 1.0, 4).steady_s, 512 * 510.76e-6 / 6, 1e-15);
  in.loader_cores_per_process = 64;
  EXPECT_NEAR(InputPipelineTime(in, 512, 1, 0.25, 1).steady_s, 52 * 510.76e-6, 1e-15);
  EXPECT_NEAR(InputPipelineTime(in, 512, 1, 1.0, 4).steady_s, 13 * 510.76e-6, 1e-15);
}

// ResNet-50 on one ABCI node (4 GPUs x 32 images) with an augmentation costing 100 ms of
// CPU a sample, loaded by worker processes that use every core: 128 samples on 40
// cores, 4 rounds of 100 ms = 400 ms a step, beyond the training loop's compute stream
// (the GPUs' compute and the host's launches beyond it), which they run beside.
TEST(InputPipeline, InputBoundPlanNamesIo) {
  Workload w = Model("resnet50");
  w.dataset.decode_core_ms_per_sample = 100;
  SystemProfile workers = Profile("abci-v100-16gb");
  workers.calibration.loader_cores_per_process = 0;
  absl::StatusOr<Estimate> e = EstimateIteration(w, Config(1, 1, 4, 32, 128), workers);
  ASSERT_TRUE(e.ok()) << e.status();
  const double busy = e->time.compute_s + e->time.recompute_s + e->time.overhead_s;
  ASSERT_LT(busy, 0.400 / 2);
  EXPECT_NEAR(e->time.data_loading_s, 0.400 - busy, 1e-12);
  EXPECT_EQ(e->bottleneck, "io");
  // Offloaded to the GPU / a DPU, the same step is compute-bound again.
  w.dataset.decode_offloaded = true;
  e = EstimateIteration(w, Config(1, 1, 4, 32, 128), workers);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->time.data_loading_s, 0);
  EXPECT_NE(e->bottleneck, "io");
}

// The same node as built, each of its 4 data-parallel processes loading on the one core
// a thread-pool loader keeps busy (Chainer's): 32 samples of 100 ms, 3.2 s a step; with
// 2.5 cores a process, 1.28 s.
TEST(InputPipeline, EachProcessLoadsOnTheCoresItKeepsBusy) {
  Workload w = Model("resnet50");
  w.dataset.decode_core_ms_per_sample = 100;
  SystemProfile p = Profile("abci-v100-16gb");
  ASSERT_EQ(p.calibration.loader_cores_per_process, 1);
  absl::StatusOr<Estimate> e = EstimateIteration(w, Config(1, 1, 4, 32, 128), p);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_NEAR(e->time.data_loading_s, 3.2 - (e->time.compute_s + e->time.recompute_s + e->time.overhead_s), 1e-12);
  p.calibration.loader_cores_per_process = 2.5;
  e = EstimateIteration(w, Config(1, 1, 4, 32, 128), p);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_NEAR(e->time.data_loading_s, 1.28 - (e->time.compute_s + e->time.recompute_s + e->time.overhead_s),
              1e-12);
}

// The node's CPUs draw power as the loaders keep them busy (host.cpu_power_w, here
// abci-v100-16gb's 300 W of 600 W beside the GPUs; idle at a quarter of it). GPUs set to
// draw 100 W busy or idle, so that a step's energy is 4 x 100 W x T plus the node's:
// decoding 128 samples of 100 ms is 12.8 core-seconds over 40 cores and T, and the node
// draws 600 - 300 x 0.75 x (1 - 12.8 / (40 T)); offloaded, 600 - 225 = 375 W.
TEST(InputPipeline, CpuPowerFollowsTheLoaders) {
  Workload w = Model("resnet50");
  w.dataset.decode_core_ms_per_sample = 100;
  SystemProfile p = Profile("abci-v100-16gb");
  p.accelerator.busy_power_w = 100;
  p.accelerator.idle_power_w = 100;
  // (energy, iteration time) of the step on `p`.
  auto step = [&](const SystemProfile& on) {
    absl::StatusOr<Estimate> e = EstimateIteration(w, Config(1, 1, 4, 32, 128), on);
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? std::pair{e->energy_per_iteration_j, e->iteration_time_s} : std::pair{0.0, 0.0};
  };
  // The 128 samples' reads from local storage at the default 17 / 3.5 J/GB.
  const double reads = 128.0 * w.dataset.sample_bytes * 1e-9 * 17 / 3.5;
  auto [energy, t] = step(p);
  ASSERT_GT(t, 0);
  const double busy = std::min(1.0, 12.8 / (40 * t));
  EXPECT_NEAR(energy, 4 * 100 * t + (600 - 300 * 0.75 * (1 - busy)) * t + reads, 1e-9);
  w.dataset.decode_offloaded = true;
  std::tie(energy, t) = step(p);
  EXPECT_NEAR(energy, 4 * 100 * t + 375 * t + reads, 1e-9);
  // Not stated: the node's 600 W all along, as before.
  p.host.cpu_power_w = 0;
  std::tie(energy, t) = step(p);
  EXPECT_NEAR(energy, (4 * 100 + 600) * t + reads, 1e-9);
}

// The storage draws its energy per byte read (profile.storage.*_joules_per_gbyte): 2
// nodes of 4 GPUs, 8 x 32 samples of 110,000 bytes a step = 28.16 MB, at 10 J/GB from
// local storage (0.2816 J) and 1,000 J/GB from the shared file system (28.16 J). GPUs
// and nodes flat at 100 W and 600 W.
TEST(InputPipeline, StorageEnergyFollowsTheBytesRead) {
  Workload w = Model("resnet50");
  w.dataset.sample_bytes = 110000;
  w.dataset.decode_offloaded = true;
  SystemProfile p = Profile("abci-v100-16gb");
  p.accelerator.busy_power_w = 100;
  p.accelerator.idle_power_w = 100;
  p.host.cpu_power_w = 0;
  p.storage.read_joules_per_gbyte = 10;
  p.storage.shared_fs_joules_per_gbyte = 1000;
  auto step = [&]() {
    absl::StatusOr<Estimate> e = EstimateIteration(w, Config(1, 1, 8, 32, 256), p);
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? e->energy_per_iteration_j - (8 * 100 + 2 * 600) * e->iteration_time_s : -1.0;
  };
  w.dataset.location = DatasetLocation::kLocal;
  EXPECT_NEAR(step(), 0.2816, 1e-9);
  w.dataset.location = DatasetLocation::kSharedFs;
  EXPECT_NEAR(step(), 28.16, 1e-9);
  // Staged: later epochs read the local copy.
  w.dataset.location = DatasetLocation::kStaged;
  EXPECT_NEAR(step(), 0.2816, 1e-9);
}

// CosmoFlow staged to local SSDs: the first epoch reads 4 x 16.8 MB a step from a shared
// file system giving the node 0.05 GB/s (1.342 s), later epochs read locally (25 GB/s of
// NVMe: 2.7 ms, hidden). Half the dataset is read per epoch (pruning).
TEST(InputPipeline, StagedDatasetPaysTheFirstEpochInTimeToTrain) {
  Workload w = Model("cosmoflow");
  w.dataset.format = DatasetFormat::kRaw;  // raw tensors: nothing to decode
  w.dataset.location = DatasetLocation::kStaged;
  w.dataset.fraction = 0.5;
  SystemProfile p = Profile("abci-v100-16gb");
  p.storage.shared_fs_gbytes_per_s = 0.05;
  p.storage.read_gbytes_per_s = 25;
  absl::StatusOr<Estimate> e = EstimateIteration(w, Config(1, 1, 4, 1, 4), p);
  ASSERT_TRUE(e.ok()) << e.status();
  const double busy = e->time.compute_s + e->time.recompute_s + e->time.overhead_s;
  const double bytes = 4.0 * 2 * 4 * 128 * 128 * 128;
  ASSERT_GT(busy, bytes / 25e9);
  EXPECT_EQ(e->time.data_loading_s, 0);
  const double extra = bytes / 0.05e9 - busy;
  const double epoch_steps = 524288 * 0.5 / 4;
  EXPECT_NEAR(e->time_to_train_s, epoch_steps * (e->iteration_time_s + extra), 1e-9 * e->time_to_train_s);
}

}  // namespace
}  // namespace paraplan
