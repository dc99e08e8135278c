#include "estimator/iteration/estimate.h"


#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "estimator/inputs/measured_features.h"
#include "estimator/inputs/validate.h"
#include "estimator/iteration/assemble.h"
#include "estimator/iteration/comm_schedule.h"
#include "estimator/iteration/stage_costs.h"
#include "estimator/iteration/uncertainty.h"
#include "estimator/system/collectives.h"
#include "estimator/system/hardware.h"
#include "estimator/workloads/model_costs.h"

namespace paraplan {

SystemContext MakeSystemContext(const SystemProfile& profile, const Workload& workload,
                                const Hardware& hw, const Collectives& coll) {
  SystemContext sys;
  sys.hw = &hw;
  sys.coll = &coll;
  sys.busy_power_w = profile.accelerator.BusyPowerW();
  sys.idle_power_w = profile.accelerator.idle_power_w;
  sys.node_power_w = profile.node_power_w;
  sys.cpu_power_w = profile.host.cpu_power_w;
  sys.price_per_gpu_hour_usd = profile.price_per_gpu_hour_usd;
  sys.sample_bytes = static_cast<double>(workload.dataset.sample_bytes);
  sys.input = InputSystem::Of(profile, workload, hw);
  return sys;
}

namespace {

// Ranks in a ZeRO-3 group from which pre-0.6 DeepSpeed's per-rank fetch work is worth a
// warning: ~6 us of host time a rank per gather (a narrow() and a copy a rank) idles the
// GPU ~1.5 ms a gather at 256, against a few ms of a large layer's module compute.
constexpr int64_t kOldDeepSpeedWarnRanks = 256;

std::string Bottleneck(const TimeBreakdown& t, const MemoryBreakdown& m) {
  if (!m.fits) return "memory";
  const std::pair<double, const char*> parts[] = {
      {t.compute_s, "compute"},          {t.recompute_s, "recompute"},
      {t.tp_comm_s, "tp_comm"},          {t.spatial_comm_s, "spatial_comm"},
      {t.cp_comm_s, "cp_comm"},          {t.ep_comm_s, "ep_comm"},
      {t.pp_comm_s, "pp_comm"},          {t.pipeline_bubble_s, "pipeline_bubble"},
      {t.dp_comm_s, "dp_comm"},          {t.optimizer_s, "optimizer"},
      {t.data_loading_s, "io"},          {t.overhead_s, "overhead"},
      {t.offload_s, "offload"}};
  const auto* best = &parts[0];
  for (const auto& p : parts) {
    if (p.first > best->first) best = &p;
  }
  return best->second;
}

// Stated for no framework (kAny), a transformer configuration that none of the modelled
// stacks runs as stated: the estimate prices it anyway (a fork or a new release may run
// it); the warning names what each refuses (RefusedByFramework), Megatron-LM and NeMo
// together (one rule set).
void WarnWhereNoFrameworkRuns(const Workload& workload, const ParallelConfig& c, std::vector<std::string>* w) {
  if (c.framework != Framework::kAny || workload.kind != Workload::Kind::kTransformer) return;
  const ParallelConfig n = c.Normalized();
  std::string why;
  for (Framework f : {Framework::kMegatron, Framework::kDeepSpeed, Framework::kTorchtitan, Framework::kPytorchFsdp}) {
    const FrameworkRefusal r = RefusedByFramework(f, n);
    std::string reason = r.field != nullptr ? absl::StrCat(r.field, " ", r.reason) : "";
    if (reason.empty()) {
      const FrameworkRefusal of_workload = WorkloadRefusedByFramework(workload, f);
      if (of_workload.field == nullptr) return;  // f runs it
      reason = absl::StrCat(of_workload.field, ": ", of_workload.reason, FrameworkName(f));
    }
    absl::StrAppend(&why, why.empty() ? "" : "; ",
                    f == Framework::kMegatron ? "FRAMEWORK_MEGATRON and FRAMEWORK_NEMO" : FrameworkName(f), ": ", reason);
  }
  w->push_back(absl::StrCat("no modelled framework runs this configuration as stated (", why,
                            "); a stated framework (--framework) keeps to what it runs"));
}

void AddWarnings(const Workload& workload, const SystemProfile& profile, const ParallelConfig& c,
                 const Estimate& e, std::vector<std::string>* w) {
  WarnWhereNoFrameworkRuns(workload, c, w);
  // The fast domain is the first network level's (an NVL72 rack's 72 GPUs span 18 trays).
  const int domain = !profile.network_levels.empty() && profile.network_levels[0].domain_size > 0
                         ? profile.network_levels[0].domain_size
                         : profile.gpus_per_node;
  if (domain > 0 && c.tensor_parallel > domain) {
    w->push_back(absl::StrFormat(
        "tensor_parallel %d spans %s domains (%d GPUs each): TP traffic crosses the slower network",
        c.tensor_parallel, profile.network_levels.empty() ? "node" : profile.network_levels[0].name, domain));
  }
  const DatasetSpec& d = workload.dataset;
  if (workload.kind == Workload::Kind::kLayerGraph && d.sample_bytes > 0 && d.format == DatasetFormat::kUnspecified &&
      d.decode_core_ms_per_sample <= 0 && !d.decode_offloaded) {
    w->push_back(ResolvedFormat(workload) == DatasetFormat::kJpeg
                     ? "dataset.format not given: samples smaller than their tensor are decoded as JPEG"
                     : "dataset.format not given: samples are read as HDF5 arrays");
  }
  if (!c.flash_attention && RunsFusedAttention(c)) {
    w->push_back("flash_attention taken as true: context parallelism's ring attention runs fused attention kernels "
                 "only");
  }
  const int m = c.NumMicroBatches();
  if (c.pipeline_parallel > 1 && m < c.pipeline_parallel) {
    w->push_back(absl::StrFormat(
        "%d micro-batches for %d pipeline stages: the pipeline never fills", m, c.pipeline_parallel));
  }
  if (!e.memory.fits) {
    w->push_back(absl::StrFormat("does not fit: %.1f GiB needed, %.1f GiB available",
                                 e.memory.total_bytes / (1 << 30), e.memory.capacity_bytes / (1 << 30)));
  } else if (e.memory.total_bytes > 0.95 * e.memory.capacity_bytes) {
    w->push_back("memory within 5% of capacity: allocator fragmentation may cause OOM");
  }
  if (c.NumGpus() > profile.NumGpus() && profile.NumGpus() > 0) {
    w->push_back(absl::StrFormat("uses %d GPUs; the profile's cluster has %d",
                                 c.NumGpus(), profile.NumGpus()));
  }
  if (e.time.pipeline_bubble_s > 0.2 * e.iteration_time_s) {
    w->push_back("pipeline bubble above 20% of the iteration: more micro-batches or virtual stages help");
  }
  if (c.offload.any()) w->push_back("offload uses PCIe; host memory and bandwidth are shared per node");
  if (c.zero_stage <= 2 && ((c.overlap_grad_reduce && !OverlapsGradientReduction(c)) ||
                            (c.overlap_param_gather && c.zero_stage >= 1 && !OverlapsParameterGather(c)))) {
    w->push_back(c.pipeline_parallel > 1 || c.zero_stage == 0
                     ? "DeepSpeed reduces gradients after the backward (its pipeline engine after the last "
                       "micro-batch) and gathers ZeRO's parameters inside its step: not overlapped"
                     : "DeepSpeed gathers ZeRO's parameters inside its optimizer step: not overlapped");
  }
  // DeepSpeed before 0.6.0 (PR #1453) synchronised the device at every ZeRO-3 module
  // fetch and looped over every rank in Python per gather (stage3.py
  // _synchronize_communication, partition_parameters.py _allgather_param): work the model
  // leaves out, which grows with the group (docs/model.md).
  const int64_t zero3_ranks = int64_t{c.data_parallel} * c.context_parallel;
  if (c.framework == Framework::kDeepSpeed && c.zero_stage >= 3 && zero3_ranks >= kOldDeepSpeedWarnRanks) {
    w->push_back(absl::StrFormat(
        "ZeRO-3 over %d ranks: DeepSpeed releases before 0.6.0 synchronise at every parameter fetch and loop "
        "over the ranks per gather; on those this step runs slower than predicted",
        zero3_ranks));
  }
  if (workload.kind == Workload::Kind::kLayerGraph && !profile.layer_timings.empty()) {
    int measured = 0;
    for (const LayerSpec& l : workload.layer_graph.layers) {
      for (const LayerTiming& t : profile.layer_timings) {
        if (t.workload == workload.name && t.layer == l.name) {
          ++measured;
          break;
        }
      }
    }
    if (measured > 0) {
      w->push_back(absl::StrFormat("compute of %d of %d layers from measured layer times on this profile",
                                   measured, workload.layer_graph.layers.size()));
    }
  }
  if (workload.kind == Workload::Kind::kTransformer && c.sequence_parallel && c.tensor_parallel == 1) {
    w->push_back("sequence_parallel has no effect with tensor_parallel 1");
  }
}

}  // namespace

Estimate ToEstimate(const Workload& workload, const SystemProfile& profile,
                    const ParallelConfig& config, double tokens_per_sample,
                    double model_flops_per_sample, const CandidateResult& r) {
  Estimate e;
  e.config = config;
  e.iteration_time_s = r.iteration_time_s;
  e.time = r.time;
  e.memory = r.memory;
  e.num_gpus = static_cast<int>(config.NumGpus());
  e.model_flops_per_token = tokens_per_sample > 0 ? model_flops_per_sample / tokens_per_sample : 0;
  const Uncertainty u =
      PredictionUncertainty(profile, e.num_gpus, e.model_flops_per_token, FeaturesOf(workload, config));
  const double spread = QuantileFactor(u.scale, 0.5 + kDefaultIntervalConfidence / 2);
  e.interval = {r.iteration_time_s / spread, r.iteration_time_s * spread, kDefaultIntervalConfidence};
  e.in_envelope = u.in_envelope;
  e.envelope_notes = u.notes;
  const double samples = config.global_batch_size;
  e.samples_per_s = samples / r.iteration_time_s;
  e.tokens_per_s = e.samples_per_s * tokens_per_sample;
  e.model_tflops_per_gpu = model_flops_per_sample * samples / r.iteration_time_s / e.num_gpus / 1e12;
  // MFU is quoted against the 16-bit dense peak even for FP8 training (the convention of
  // Megatron-LM, torchtitan and the Llama 3 report), so FP8 and BF16 runs compare.
  const Precision mfu_precision = LowPrecisionLinears(workload.precision) ? Precision::kBf16 : workload.precision;
  const double peak = profile.accelerator.PeakTflops(mfu_precision);
  e.mfu = peak > 0 ? e.model_tflops_per_gpu / peak : 0;
  e.energy_per_iteration_j = r.energy_j;
  e.cost_per_iteration_usd = r.cost_usd;
  double iterations = 0;
  if (workload.training_tokens > 0 && tokens_per_sample > 0) {
    iterations = workload.training_tokens / (samples * tokens_per_sample);
  }
  // One epoch reads the sampled share of the dataset (pruning / importance sampling).
  const double epoch = double(workload.dataset.num_samples) * workload.dataset.fraction / samples;
  if (iterations == 0) iterations = epoch;
  // A staged dataset's first epoch reads the shared file system.
  e.time_to_train_s = iterations * r.iteration_time_s + std::min(iterations, epoch) * r.first_epoch_extra_s;
  e.energy_to_train_j = iterations * r.energy_j;
  e.cost_to_train_usd = iterations * r.cost_usd;
  e.memory_headroom_ratio = r.memory.capacity_bytes > 0
                                ? 1.0 - r.memory.total_bytes / r.memory.capacity_bytes
                                : 0;
  e.bottleneck = Bottleneck(r.time, r.memory);
  e.profile_name = profile.name;
  e.profile_version = profile.version;
  AddWarnings(workload, profile, config, e, &e.warnings);
  return e;
}

namespace {

// One configuration on valid inputs: its costs, stages and assembled result.
struct Assembled {
  ModelCosts model;
  StageCosts stages;
  CandidateResult result;
};

absl::StatusOr<Assembled> AssembleValidated(const Workload& workload, const ParallelConfig& c,
                                            const SystemProfile& profile, const Hardware& hw,
                                            const Collectives& coll) {
  absl::StatusOr<ModelCosts> model = ComputeModelCosts(workload, ModelShape::Of(c), hw, coll);
  if (!model.ok()) return model.status();
  Assembled a;
  a.model = *std::move(model);
  a.stages = ComputeStageCosts(a.model, c.pipeline_parallel, c.virtual_pipeline_stages, c.first_pipeline_stage_layers,
                               c.last_pipeline_stage_layers);
  const SystemContext sys = MakeSystemContext(profile, workload, hw, coll);
  Assemble(a.model, a.stages, c, sys, &a.result);
  return a;
}

}  // namespace

absl::Status CheckFinite(const Estimate& e) {
  const std::pair<const char*, double> figures[] = {
      {"iteration_time_s", e.iteration_time_s},
      {"memory.total_bytes", e.memory.total_bytes},
      {"samples_per_s", e.samples_per_s},
      {"tokens_per_s", e.tokens_per_s},
      {"model_tflops_per_gpu", e.model_tflops_per_gpu},
      {"mfu", e.mfu},
      {"energy_per_iteration_j", e.energy_per_iteration_j},
      {"cost_per_iteration_usd", e.cost_per_iteration_usd},
      {"time_to_train_s", e.time_to_train_s},
      {"energy_to_train_j", e.energy_to_train_j},
      {"cost_to_train_usd", e.cost_to_train_usd},
      {"interval.low_s", e.interval.low_s},
      {"interval.high_s", e.interval.high_s},
  };
  for (const auto& [name, v] : figures) {
    if (!std::isfinite(v)) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": the workload's and profile's values make it overflow (", e.config.ShortString(),
          "); look for an absurdly small rate or large count"));
    }
  }
  return absl::OkStatus();
}

namespace {
// The configuration as the estimate runs it: normalised, the framework's defaults resolved
// (an estimate answers what it costed).
ParallelConfig RunConfig(const Workload& workload, const ParallelConfig& config) {
  ParallelConfig c = config.Normalized();
  c.tp_comm_overlap = ResolvedTpCommOverlap(workload, c);
  return c;
}
}  // namespace

absl::StatusOr<Estimate> EstimateIteration(const Workload& workload, const ParallelConfig& config,
                                           const SystemProfile& profile) {
  if (absl::Status s = ValidateWorkload(workload); !s.ok()) return s;
  if (absl::Status s = ValidateProfile(profile); !s.ok()) return s;
  if (absl::Status s = ValidateWorkloadOnProfile(workload, profile); !s.ok()) return s;
  if (absl::Status s = ValidateConfig(workload, config); !s.ok()) return s;
  const ParallelConfig c = RunConfig(workload, config);
  const Hardware hw(profile, workload.precision, c.NumGpus());
  const Collectives coll(hw, JobLayout(c.NumGpus(), profile.gpus_per_node, profile.num_nodes, c.placement));
  absl::StatusOr<Assembled> a = AssembleValidated(workload, c, profile, hw, coll);
  if (!a.ok()) return a.status();
  Estimate e = ToEstimate(workload, profile, c, a->model.tokens_per_sample, a->model.model_flops_per_sample, a->result);
  EchoResolvedDefaults(a->model, &e.config);
  e.collectives = DescribeCollectives(workload, c, profile, coll, a->model, a->stages);
  if (absl::Status s = CheckFinite(e); !s.ok()) return s;
  return e;
}

absl::StatusOr<double> IterationTimeOfValidated(const Workload& workload, const ParallelConfig& config,
                                                const SystemProfile& profile) {
  const ParallelConfig c = RunConfig(workload, config);
  const Hardware hw(profile, workload.precision, c.NumGpus());
  const Collectives coll(hw, JobLayout(c.NumGpus(), profile.gpus_per_node, profile.num_nodes, c.placement));
  absl::StatusOr<Assembled> a = AssembleValidated(workload, c, profile, hw, coll);
  if (!a.ok()) return a.status();
  return a->result.iteration_time_s;
}

}  // namespace paraplan
