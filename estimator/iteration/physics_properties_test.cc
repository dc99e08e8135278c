// Metamorphic checks of the estimator: changes to the machine or the batch whose effect
// on the answer physics fixes in sign, checked over the configurations the planner
// ranks for a spread of models and profiles (dense, MoE, MLA, FP8, CNN; A100 to GB200).
// Independent of the model's sums: a faster part never makes an iteration slower nor
// changes its memory, more memory changes no time and no byte, a larger batch never
// takes less time or more than proportionally more, recomputing more or sharding more
// never holds more.
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "estimator/iteration/estimate.h"
#include "estimator/plan/search.h"
#include "estimator/system/hardware.h"
#include "estimator/testing/test_util.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

struct Scenario {
  std::string model, profile;
  int gpus = 0, global_batch = 0;
  Framework framework = Framework::kAny;
  bool low_precision = false;  // FP8 (FP4 on a GPU with FP4 tensor cores)
  bool offload = false;        // the planner may offload (tight memory)
};

std::vector<Scenario> Scenarios() {
  return {
      {"gpt3-175b", "dgx-a100-80gb", 512, 1536},
      {"llama3-70b", "dgx-h100-80gb", 64, 512},
      {"llama3-70b", "dgx-h100-80gb", 64, 512, Framework::kAny, true},
      {"llama3-8b", "dgx-h100-80gb", 16, 256, Framework::kTorchtitan},
      {"llama3-8b", "dgx-h100-80gb", 16, 256, Framework::kPytorchFsdp},
      {"deepseek-v3", "gb200-nvl72", 256, 1024},
      {"qwen3-30b-a3b", "dgx-h100-80gb", 16, 512},
      {"mixtral-8x7b", "dgx-b200-180gb", 64, 512, Framework::kDeepSpeed},
      {"gpt-oss-120b", "dgx-h200-141gb", 64, 512, Framework::kNemo},
      {"resnet50", "abci-v100-16gb", 64, 2048},
      {"cosmoflow", "abci-v100-16gb", 64, 64},
      {"gpt3-175b", "dgx-h100-80gb", 4096, 2048, Framework::kAny, true},
      {"gpt3-175b", "dgx-a100-80gb", 1536, 1536, Framework::kDeepSpeed},
      {"llama3-70b", "dgx-h100-80gb", 256, 256, Framework::kTorchtitan},
      {"qwen3-235b-a22b", "dgx-h100-80gb", 256, 1024},
      {"kimi-k2", "gb300-nvl72", 512, 2048},
      {"megatron-22b", "dgx-a100-80gb", 8, 4},
      {"llama3.1-405b", "dgx-b200-180gb", 128, 256, Framework::kNemo, true},
      {"llama3-70b", "dgx-a100-80gb", 8, 64, Framework::kAny, false, true},
      {"cosmoflow-512", "abci-v100-16gb", 256, 64},
  };
}

Workload WorkloadOf(const Scenario& s) {
  Workload w = testing::Model(s.model);
  if (s.low_precision) {
    w.precision = testing::Profile(s.profile).accelerator.peak_tflops_fp4 > 0 ? Precision::kFp4 : Precision::kFp8;
  }
  return w;
}

// The planner's request for `s`, its `n` best plans.
PlanRequest RequestOf(const Scenario& s, int n) {
  PlanRequest r;
  r.workload = WorkloadOf(s);
  r.gpus = {s.gpus};
  r.global_batch_size = s.global_batch;
  r.top_k = n;
  r.constraints.framework = s.framework;
  r.constraints.allow_offload = s.offload;
  return r;
}

// Up to `n` configurations the planner ranks for `s`: the best and those after them.
std::vector<ParallelConfig> Configs(const Scenario& s, int n) {
  const PlanRequest r = RequestOf(s, n);
  auto plan = Plan(r, testing::Profile(s.profile));
  std::vector<ParallelConfig> out;
  if (!plan.ok() || plan->plans.empty()) {
    ADD_FAILURE() << s.model << " on " << s.profile << ": no plan (" << plan.status() << ")";
    return out;
  }
  for (const Estimate& e : plan->plans) out.push_back(e.config);
  return out;
}

std::string Describe(const ParallelConfig& c) {
  return absl::StrCat("TP", c.tensor_parallel, " PP", c.pipeline_parallel, " DP", c.data_parallel, " CP",
                      c.context_parallel, " EP", c.expert_parallel, " ETP", c.ExpertTensorParallel(), " v",
                      c.virtual_pipeline_stages, " mbs", c.micro_batch_size, " gbs", c.global_batch_size, " ZeRO",
                      c.zero_stage, " recompute ", static_cast<int>(c.recompute), " schedule ",
                      static_cast<int>(c.pipeline_schedule), " sp ", c.sequence_parallel, " spatial ",
                      c.spatial_parallel, " filter ", c.filter_parallel, " channel ", c.channel_parallel,
                      " stages' layers ", c.first_pipeline_stage_layers, "/", c.last_pipeline_stage_layers,
                      " recompute modules ", c.recompute_modules, " offload layers ", c.cpu_offload_layers,
                      " offload modules ", c.offload_modules);
}

// One configuration the planner ranks for a scenario, with what estimating it needs.
struct Case {
  const Workload& workload;
  const SystemProfile& profile;
  ParallelConfig config;
  std::string what;  // the scenario and the configuration, for a failure's message
};

// Calls `f` on up to 40 ranked configurations of every scenario.
void ForEachCase(const std::function<void(Case&)>& f) {
  for (const Scenario& s : Scenarios()) {
    const SystemProfile profile = testing::Profile(s.profile);
    const Workload w = WorkloadOf(s);
    for (const ParallelConfig& c : Configs(s, 40)) {
      Case x{w, profile, c, absl::StrCat(s.model, " on ", s.profile, " ", Describe(c))};
      f(x);
    }
  }
}

// Estimates every configuration under its profile and under `changed(profile)` and hands
// each pair to `check`; returns how many pairs were checked.
int ForEachPair(const std::function<void(SystemProfile*)>& changed,
                const std::function<void(const std::string&, const Estimate&, const Estimate&)>& check) {
  int pairs = 0;
  ForEachCase([&](Case& x) {
    SystemProfile other = x.profile;
    changed(&other);
    auto a = EstimateIteration(x.workload, x.config, x.profile);
    auto b = EstimateIteration(x.workload, x.config, other);
    if (!a.ok() || !b.ok()) {
      ADD_FAILURE() << x.what << ": " << a.status() << " / " << b.status();
      return;
    }
    check(x.what, *a, *b);
    ++pairs;
  });
  return pairs;
}

constexpr double kTolerance = 1e-9;

// Both answers' time terms, side by side, for a failure's message.
std::string Breakdowns(const Estimate& a, const Estimate& b) {
  const auto terms = [](const TimeBreakdown& t) {
    return std::vector<std::pair<const char*, double>>{
        {"compute", t.compute_s},   {"recompute", t.recompute_s}, {"tp", t.tp_comm_s},
        {"spatial", t.spatial_comm_s}, {"cp", t.cp_comm_s},       {"ep", t.ep_comm_s},
        {"pp", t.pp_comm_s},        {"bubble", t.pipeline_bubble_s}, {"dp", t.dp_comm_s},
        {"optimizer", t.optimizer_s}, {"data", t.data_loading_s}, {"overhead", t.overhead_s},
        {"offload", t.offload_s}};
  };
  std::string out;
  const auto x = terms(a.time), y = terms(b.time);
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].second != y[i].second) absl::StrAppend(&out, "\n  ", x[i].first, " ", x[i].second, " -> ", y[i].second);
  }
  return out;
}

// Exposed communication and an exposed input pipeline both follow the compute stream:
// the loaders prefetch beside the GPU's work and the host's launches, not while the loop
// waits on a collective (ExposeInput, assemble.cc). Where both are exposed, a faster GPU
// shortens the stretch they share and the two waits follow each other for longer, so
// faster compute may lengthen the iteration there, and only there.
bool InputAndCommBothExposed(const Estimate& e) {
  const TimeBreakdown& t = e.time;
  return t.data_loading_s > 0 && t.tp_comm_s + t.spatial_comm_s + t.cp_comm_s + t.ep_comm_s + t.pp_comm_s +
                                         t.pipeline_bubble_s + t.dp_comm_s >
                                     0;
}

void ExpectNoSlower(const std::function<void(SystemProfile*)>& faster, bool compute = false) {
  int exempt = 0;
  const int pairs = ForEachPair(faster, [&](const std::string& what, const Estimate& base, const Estimate& fast) {
    // What a GPU holds does not depend on how fast anything runs; the stated interval
    // holds the prediction.
    EXPECT_EQ(fast.memory.total_bytes, base.memory.total_bytes) << what;
    for (const Estimate* e : {&base, &fast}) {
      EXPECT_TRUE(e->interval.low_s > 0 && e->interval.low_s <= e->iteration_time_s &&
                  e->iteration_time_s <= e->interval.high_s)
          << what << ": " << e->interval.low_s << " <= " << e->iteration_time_s << " <= " << e->interval.high_s;
    }
    if (compute && InputAndCommBothExposed(base)) {
      ++exempt;
      return;
    }
    EXPECT_LE(fast.iteration_time_s, base.iteration_time_s * (1 + kTolerance))
        << what << "\n  base " << base.iteration_time_s << " s, faster part " << fast.iteration_time_s << " s"
        << Breakdowns(base, fast);
    EXPECT_LE(fast.energy_per_iteration_j, base.energy_per_iteration_j * (1 + kTolerance))
        << what << "\n  base " << base.energy_per_iteration_j << " J, faster part " << fast.energy_per_iteration_j
        << " J" << Breakdowns(base, fast);
  });
  EXPECT_GT(pairs - exempt, 200);
}

TEST(PhysicsProperties, FasterNetworkNeverSlower) {
  ExpectNoSlower([](SystemProfile* p) {
    for (NetworkLevel& l : p->network_levels) l.bandwidth_gbytes_per_s *= 1.5;
  });
}

TEST(PhysicsProperties, FasterInnerLevelNeverSlower) {
  ExpectNoSlower([](SystemProfile* p) { p->network_levels.front().bandwidth_gbytes_per_s *= 1.5; });
}

TEST(PhysicsProperties, FasterOuterLevelNeverSlower) {
  ExpectNoSlower([](SystemProfile* p) { p->network_levels.back().bandwidth_gbytes_per_s *= 1.5; });
}

// Reducing in the network (NVLink SHARP / NVLS, InfiniBand SHARP) on every level: an
// all-reduce sends and receives its buffer once instead of twice, never slower.
TEST(PhysicsProperties, InNetworkReductionNeverSlower) {
  ExpectNoSlower([](SystemProfile* p) {
    for (NetworkLevel& l : p->network_levels) l.in_network_reduction = true;
  });
}

TEST(PhysicsProperties, LowerLatencyNeverSlower) {
  ExpectNoSlower([](SystemProfile* p) {
    for (NetworkLevel& l : p->network_levels) l.latency_us *= 0.5;
  });
}

TEST(PhysicsProperties, FasterTensorCoresNeverSlower) {
  ExpectNoSlower([](SystemProfile* p) {
    Accelerator& a = p->accelerator;
    for (double* peak : {&a.peak_tflops_bf16, &a.peak_tflops_fp16, &a.peak_tflops_fp8, &a.peak_tflops_fp4,
                         &a.peak_tflops_fp32}) {
      *peak *= 1.25;
    }
  }, /*compute=*/true);
}

TEST(PhysicsProperties, FasterMemoryNeverSlower) {
  ExpectNoSlower([](SystemProfile* p) { p->accelerator.memory_bandwidth_gbytes_per_s *= 1.25; }, /*compute=*/true);
}

// Faster host links, storage and file system, and more cores to decode on: the offload
// transfers and the input pipeline never slow an iteration.
TEST(PhysicsProperties, FasterHostAndStorageNeverSlower) {
  ExpectNoSlower([](SystemProfile* p) {
    p->host.pcie_gbytes_per_s *= 1.5;
    p->host.cpu_cores = p->host.cpu_cores > 0 ? 2 * p->host.cpu_cores : 0;
    p->storage.read_gbytes_per_s *= 1.5;
    p->storage.shared_fs_gbytes_per_s *= 1.5;
    p->storage.shared_fs_node_gbytes_per_s *= 1.5;
  });
}

TEST(PhysicsProperties, CheaperLaunchesNeverSlower) {
  ExpectNoSlower([](SystemProfile* p) {
    p->calibration.kernel_overhead_us = 5;
    p->calibration.collective_overhead_us = 5;
  });
}

// Each calibration value that says how well something runs, made better on its own on
// top of the values the profile resolves to: never slower.
TEST(PhysicsProperties, BetterCalibrationValuesNeverSlower) {
  const std::vector<std::pair<const char*, std::function<void(Calibration*)>>> better = {
      {"matmul_efficiency", [](Calibration* c) { c->matmul_efficiency *= 1.1; }},
      {"matmul_efficiency_fp8", [](Calibration* c) { c->matmul_efficiency_fp8 *= 1.1; }},
      {"matmul_half_efficiency_gflop", [](Calibration* c) { c->matmul_half_efficiency_gflop *= 0.5; }},
      {"matmul_pipeline_depth", [](Calibration* c) { c->matmul_pipeline_depth *= 0.5; }},
      {"memory_bound_efficiency", [](Calibration* c) { c->memory_bound_efficiency *= 1.1; }},
      {"overlap_efficiency", [](Calibration* c) { c->overlap_efficiency = std::min(1.0, c->overlap_efficiency + 0.1); }},
      {"ep_overlap_efficiency",
       [](Calibration* c) { c->ep_overlap_efficiency = std::min(1.0, c->ep_overlap_efficiency + 0.1); }},
      {"attention_efficiency", [](Calibration* c) {
         for (double* e : {&c->attention_efficiency_fwd, &c->attention_efficiency_bwd,
                           &c->cudnn_attention_efficiency_fwd, &c->cudnn_attention_efficiency_bwd}) {
           *e *= 1.1;
         }
       }},
      {"attention_half_keys", [](Calibration* c) {
         c->attention_half_keys_fwd *= 0.5;
         c->attention_half_keys_bwd *= 0.5;
       }},
      {"attention_softmax_head_dim", [](Calibration* c) {
         for (double* d : {&c->attention_softmax_head_dim_fwd, &c->attention_softmax_head_dim_bwd,
                           &c->cudnn_attention_softmax_head_dim_fwd, &c->cudnn_attention_softmax_head_dim_bwd}) {
           *d *= 0.5;
         }
       }},
      {"recompute_overhead_us", [](Calibration* c) { c->recompute_overhead_us *= 0.5; }},
      {"network efficiency", [](Calibration* c) {
         for (NetworkCalibration& n : c->network) n.efficiency = std::min(1.0, n.efficiency * 1.1);
       }},
      {"host paths", [](Calibration* c) {
         c->host_staging_efficiency = std::min(1.0, c->host_staging_efficiency * 1.5);
         c->jpeg_decode_mpixels_per_core_s *= 1.5;
         c->hdf5_read_gbytes_per_core_s *= 1.5;
         c->sample_handover_gbytes_per_s *= 1.5;
       }},
  };
  for (const auto& [name, improve] : better) {
    SCOPED_TRACE(name);
    ExpectNoSlower(
        [&](SystemProfile* p) {
          p->calibration = ResolvedCalibration(*p);
          improve(&p->calibration);
        },
        /*compute=*/true);
  }
}

// Every calibration value left unstated means its default: stating the values the
// profile resolves to changes no figure.
TEST(PhysicsProperties, StatingTheDefaultsChangesNothing) {
  const int pairs = ForEachPair([](SystemProfile* p) { p->calibration = ResolvedCalibration(*p); },
                                [](const std::string& what, const Estimate& base, const Estimate& stated) {
                                  EXPECT_EQ(stated.iteration_time_s, base.iteration_time_s) << what;
                                  EXPECT_EQ(stated.memory.total_bytes, base.memory.total_bytes) << what;
                                  EXPECT_EQ(stated.energy_per_iteration_j, base.energy_per_iteration_j) << what;
                                  EXPECT_EQ(stated.interval.high_s, base.interval.high_s) << what;
                                });
  EXPECT_GT(pairs, 200);
}

TEST(PhysicsProperties, MoreMemoryChangesNoTimeAndNoByte) {
  const int pairs = ForEachPair([](SystemProfile* p) { p->accelerator.memory_gib *= 2; },
                                [](const std::string& what, const Estimate& base, const Estimate& big) {
                                  EXPECT_EQ(big.iteration_time_s, base.iteration_time_s) << what;
                                  EXPECT_EQ(big.memory.total_bytes, base.memory.total_bytes) << what;
                                  EXPECT_TRUE(big.memory.fits) << what;
                                });
  EXPECT_GT(pairs, 200);
}

// Twice the global batch at the same degrees: twice the micro-batches. Never faster, and
// never more than twice as long (the pipeline's fill and the step are paid once); never
// less memory (as many micro-batches in flight or more).
TEST(PhysicsProperties, DoubleBatchTakesBetweenOnceAndTwiceTheTime) {
  int pairs = 0;
  ForEachCase([&](Case& x) {
    auto a = EstimateIteration(x.workload, x.config, x.profile);
    x.config.global_batch_size *= 2;
    auto b = EstimateIteration(x.workload, x.config, x.profile);
    ASSERT_TRUE(a.ok() && b.ok()) << x.what << ": " << a.status() << " / " << b.status();
    EXPECT_GE(b->iteration_time_s, a->iteration_time_s * (1 - kTolerance)) << x.what;
    EXPECT_LE(b->iteration_time_s, 2 * a->iteration_time_s * (1 + kTolerance)) << x.what;
    EXPECT_GE(b->memory.total_bytes, a->memory.total_bytes * (1 - kTolerance)) << x.what;
    ++pairs;
  });
  EXPECT_GT(pairs, 200);
}

// Recomputing more keeps fewer activations on every stage: full recompute needs at most
// what selective needs at its peak, and selective at most what none needs (the peak's
// stage may change, so its parts are not compared).
TEST(PhysicsProperties, MoreRecomputeHoldsNoMoreActivations) {
  int triples = 0;
  ForEachCase([&](Case& x) {
    x.config.recompute_modules = 0;
    std::vector<Estimate> by_level;
    for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
      x.config.recompute = r;
      auto e = EstimateIteration(x.workload, x.config, x.profile);
      if (!e.ok()) return;  // a choice the framework does not run
      by_level.push_back(*e);
    }
    for (int i = 1; i < 3; ++i) {
      EXPECT_LE(by_level[i].memory.total_bytes, by_level[i - 1].memory.total_bytes * (1 + kTolerance))
          << x.what << " recompute level " << i;
    }
    ++triples;
  });
  EXPECT_GT(triples, 150);
}

// A higher ZeRO stage shards more: the weights, gradients and optimizer states a GPU
// holds never grow with the stage (one pipeline stage, so the peak's stage is the same;
// the gathers' buffers of ZeRO-3 may outweigh its savings at a small data-parallel
// degree, so the total is not compared).
TEST(PhysicsProperties, HigherZeroStageHoldsNoMoreState) {
  int pairs = 0;
  const auto state = [](const MemoryBreakdown& m) { return m.weights_bytes + m.gradients_bytes + m.optimizer_bytes; };
  ForEachCase([&](Case& x) {
    if (x.config.pipeline_parallel > 1) return;
    std::vector<std::pair<int, double>> by_stage;
    for (int z = 0; z <= 3; ++z) {
      x.config.zero_stage = z;
      auto e = EstimateIteration(x.workload, x.config, x.profile);
      if (e.ok()) by_stage.emplace_back(z, state(e->memory));
    }
    for (size_t i = 1; i < by_stage.size(); ++i) {
      EXPECT_LE(by_stage[i].second, by_stage[i - 1].second * (1 + kTolerance))
          << x.what << " ZeRO " << by_stage[i - 1].first << " -> " << by_stage[i].first;
      ++pairs;
    }
  });
  EXPECT_GT(pairs, 300);
}

// Twice the replicas at the same per-replica batch (weak scaling): the same work a GPU,
// over a wider data-parallel group whose collectives take at least as long. A sharded
// optimizer's step (and its offload) shrinks with the group, so it is left out.
TEST(PhysicsProperties, WeakScalingNeverFaster) {
  int pairs = 0;
  ForEachCase([&](Case& x) {
    auto a = EstimateIteration(x.workload, x.config, x.profile);
    ASSERT_TRUE(a.ok()) << x.what << ": " << a.status();
    x.config.data_parallel *= 2;
    x.config.global_batch_size *= 2;
    if (x.config.NumGpus() > x.profile.NumGpus()) return;
    auto b = EstimateIteration(x.workload, x.config, x.profile);
    ASSERT_TRUE(b.ok()) << x.what << ": " << b.status();
    const auto unsharded = [](const Estimate& e) { return e.iteration_time_s - e.time.optimizer_s - e.time.offload_s; };
    EXPECT_GE(unsharded(*b), unsharded(*a) * (1 - kTolerance))
        << x.what << " at twice the replicas\n  base " << a->iteration_time_s << " s, wider "
        << b->iteration_time_s << " s" << Breakdowns(*a, *b);
    ++pairs;
  });
  EXPECT_GT(pairs, 300);
}

// The planner over more room: on GPUs with twice the memory every configuration that
// fitted still fits at the same time, so the best plan is never slower; and the best over
// every tensor-parallel degree is never slower than the best at any one of them.
TEST(PhysicsProperties, MoreRoomNeverGivesASlowerBestPlan) {
  for (const Scenario& s : Scenarios()) {
    PlanRequest r = RequestOf(s, 1);
    const SystemProfile base = testing::Profile(s.profile);
    SystemProfile roomy = base;
    roomy.accelerator.memory_gib *= 2;
    auto a = Plan(r, base);
    auto b = Plan(r, roomy);
    ASSERT_TRUE(a.ok() && b.ok()) << s.model << ": " << a.status() << " / " << b.status();
    ASSERT_FALSE(a->plans.empty() || b->plans.empty()) << s.model << " on " << s.profile;
    EXPECT_LE(b->plans[0].iteration_time_s, a->plans[0].iteration_time_s * (1 + kTolerance))
        << s.model << " on " << s.profile;
    for (int tp : {1, 2, 8}) {
      r.constraints.tensor_parallel = {tp};
      auto held = Plan(r, base);
      ASSERT_TRUE(held.ok()) << s.model << ": " << held.status();
      if (held->plans.empty()) continue;  // nothing fits at that degree
      EXPECT_GE(held->plans[0].iteration_time_s, a->plans[0].iteration_time_s * (1 - kTolerance))
          << s.model << " on " << s.profile << " at TP " << tp;
    }
  }
}

// The answer does not depend on how many workers searched: the same plans in the same
// order, the same Pareto front.
TEST(PhysicsProperties, PlansDoNotDependOnTheWorkerCount) {
  for (const Scenario& s : Scenarios()) {
    PlanRequest r = RequestOf(s, 20);
    const SystemProfile profile = testing::Profile(s.profile);
    r.threads = 1;
    auto one = Plan(r, profile);
    ASSERT_TRUE(one.ok()) << one.status();
    for (int threads : {2, 3}) {
      r.threads = threads;
      auto many = Plan(r, profile);
      ASSERT_TRUE(many.ok()) << many.status();
      const std::string what = absl::StrCat(s.model, " on ", s.profile, ", ", threads, " workers");
      ASSERT_EQ(many->plans.size(), one->plans.size()) << what;
      for (size_t i = 0; i < one->plans.size(); ++i) {
        EXPECT_EQ(many->plans[i].config.ShortString(), one->plans[i].config.ShortString()) << what << " #" << i;
        EXPECT_EQ(many->plans[i].iteration_time_s, one->plans[i].iteration_time_s) << what << " #" << i;
      }
      ASSERT_EQ(many->pareto.size(), one->pareto.size()) << what;
      for (size_t i = 0; i < one->pareto.size(); ++i) {
        EXPECT_EQ(many->pareto[i].config.ShortString(), one->pareto[i].config.ShortString()) << what << " front #" << i;
      }
      EXPECT_EQ(many->candidates_evaluated, one->candidates_evaluated) << what;
    }
  }
}

// A plan reads as its configuration estimates on its own: the search's shared and cached
// work changes no figure.
TEST(PhysicsProperties, PlansEstimateAsTheirConfigurations) {
  int plans = 0;
  for (const Scenario& s : Scenarios()) {
    const SystemProfile profile = testing::Profile(s.profile);
    auto plan = Plan(RequestOf(s, 40), profile);
    ASSERT_TRUE(plan.ok()) << plan.status();
    for (const std::vector<Estimate>* list : {&plan->plans, &plan->pareto}) {
      for (const Estimate& e : *list) {
        auto alone = EstimateIteration(WorkloadOf(s), e.config, profile);
        const std::string what = absl::StrCat(s.model, " on ", s.profile, " ", Describe(e.config));
        ASSERT_TRUE(alone.ok()) << what << ": " << alone.status();
        EXPECT_NEAR(e.iteration_time_s, alone->iteration_time_s, 1e-9 * alone->iteration_time_s) << what;
        EXPECT_NEAR(e.memory.total_bytes, alone->memory.total_bytes, 1e-9 * alone->memory.total_bytes) << what;
        EXPECT_NEAR(e.energy_per_iteration_j, alone->energy_per_iteration_j, 1e-9 * alone->energy_per_iteration_j)
            << what;
        EXPECT_EQ(e.bottleneck, alone->bottleneck) << what;
        ++plans;
      }
    }
  }
  EXPECT_GT(plans, 600);
}

// Sequence parallelism shards the activations a tensor-parallel group keeps: with it on,
// a GPU never needs more memory than with it off.
TEST(PhysicsProperties, SequenceParallelNeverNeedsMoreMemory) {
  int pairs = 0;
  ForEachCase([&](Case& x) {
    if (x.config.tensor_parallel <= 1) return;
    x.config.sequence_parallel = false;
    auto off = EstimateIteration(x.workload, x.config, x.profile);
    x.config.sequence_parallel = true;
    auto on = EstimateIteration(x.workload, x.config, x.profile);
    if (!off.ok() || !on.ok()) return;  // a framework that runs only one of them
    EXPECT_LE(on->memory.total_bytes, off->memory.total_bytes * (1 + kTolerance)) << x.what;
    ++pairs;
  });
  EXPECT_GT(pairs, 100);
}

// Flash attention keeps no score matrix: with it on, never more memory. Recomputing a
// layer's forward is work on top: full recompute is never faster than none. (Selective
// recompute is left out of the first: the model takes Megatron's core-attention
// checkpoint as nothing to drop under flash attention, so flash keeps its softmax
// statistics where the unfused path recomputes everything; Megatron-Core checkpoints the
// fused kernel too, dropping them for a second forward.)
TEST(PhysicsProperties, FlashNeverNeedsMoreMemoryAndRecomputeIsNeverFree) {
  int pairs = 0;
  ForEachCase([&](Case& x) {
    if (x.workload.kind != Workload::Kind::kTransformer || x.config.recompute == Recompute::kSelective) return;
    x.config.flash_attention = false;
    auto off = EstimateIteration(x.workload, x.config, x.profile);
    x.config.flash_attention = true;
    auto on = EstimateIteration(x.workload, x.config, x.profile);
    if (off.ok() && on.ok()) {
      EXPECT_LE(on->memory.total_bytes, off->memory.total_bytes * (1 + kTolerance)) << x.what;
      ++pairs;
    }
    x.config.recompute_modules = 0;
    x.config.recompute = Recompute::kNone;
    auto none = EstimateIteration(x.workload, x.config, x.profile);
    x.config.recompute = Recompute::kFull;
    auto full = EstimateIteration(x.workload, x.config, x.profile);
    if (none.ok() && full.ok()) {
      EXPECT_GE(full->iteration_time_s, none->iteration_time_s * (1 - kTolerance)) << x.what;
    }
  });
  EXPECT_GT(pairs, 200);
}

// A larger model at the same configuration: `grow` changes a copy of the workload and
// restates the configuration's layer counts for it (or says the change does not apply). The larger model never runs faster and never
// needs less memory; a change that at most doubles every layer's work (`at_most_twice`)
// never more than doubles the time.
void ExpectLargerNeverCheaper(const std::function<bool(Workload*, ParallelConfig*)>& grow, bool at_most_twice,
                              int min_pairs) {
  int pairs = 0;
  ForEachCase([&](Case& x) {
    Workload larger = x.workload;
    ParallelConfig same = x.config;
    if (!grow(&larger, &same)) return;
    auto a = EstimateIteration(x.workload, x.config, x.profile);
    auto b = EstimateIteration(larger, same, x.profile);
    ASSERT_TRUE(a.ok() && b.ok()) << x.what << ": " << a.status() << " / " << b.status();
    EXPECT_GE(b->iteration_time_s, a->iteration_time_s * (1 - kTolerance))
        << x.what << "\n  base " << a->iteration_time_s << " s, larger " << b->iteration_time_s << " s"
        << Breakdowns(*a, *b);
    if (at_most_twice) {
      EXPECT_LE(b->iteration_time_s, 2 * a->iteration_time_s * (1 + kTolerance))
          << x.what << "\n  base " << a->iteration_time_s << " s, larger " << b->iteration_time_s << " s"
          << Breakdowns(*a, *b);
    }
    EXPECT_GE(b->memory.total_bytes, a->memory.total_bytes * (1 - kTolerance)) << x.what;
    ++pairs;
  });
  EXPECT_GT(pairs, min_pairs);
}

bool IsTransformer(const Workload& w) { return w.kind == Workload::Kind::kTransformer; }

// Twice the decoder layers, dense and MoE alike: every stage holds twice its share, the
// embedding and the loss stay.
TEST(PhysicsProperties, TwiceTheLayersNeverFasterNorMoreThanTwiceTheTime) {
  ExpectLargerNeverCheaper(
      [](Workload* w, ParallelConfig* c) {
        if (!IsTransformer(*w)) return false;
        w->transformer.num_layers *= 2;
        w->transformer.moe.first_dense_layers *= 2;
        c->first_pipeline_stage_layers *= 2;
        c->last_pipeline_stage_layers *= 2;
        return true;
      },
      /*at_most_twice=*/true, 300);
}

// Twice the tokens of a sample: more work in every layer (attention's quadratically).
TEST(PhysicsProperties, LongerSequencesNeverFaster) {
  ExpectLargerNeverCheaper(
      [](Workload* w, ParallelConfig*) {
        if (!IsTransformer(*w)) return false;
        w->transformer.seq_length *= 2;
        return true;
      },
      /*at_most_twice=*/false, 300);
}

// Twice the width: hidden size, heads (their dimension kept), feed-forward and expert
// widths; every GEMM is larger.
TEST(PhysicsProperties, WiderModelsNeverFaster) {
  ExpectLargerNeverCheaper(
      [](Workload* w, ParallelConfig*) {
        if (!IsTransformer(*w)) return false;
        TransformerSpec& t = w->transformer;
        if (t.head_dim == 0 && !t.mla.enabled()) t.head_dim = t.hidden_size / t.num_attention_heads;
        t.hidden_size *= 2;
        t.num_attention_heads *= 2;
        if (t.num_kv_heads > 0) t.num_kv_heads *= 2;
        if (t.ffn_hidden_size > 0) t.ffn_hidden_size *= 2;
        if (t.moe.expert_ffn_hidden_size > 0) t.moe.expert_ffn_hidden_size *= 2;
        if (t.moe.shared_expert_ffn_hidden_size > 0) t.moe.shared_expert_ffn_hidden_size *= 2;
        return true;
      },
      /*at_most_twice=*/false, 300);
}

// A token routed to one more expert, or a busier busiest expert: more expert work and
// traffic on the GPU that sets the pace.
TEST(PhysicsProperties, MoreRoutedTokensNeverFaster) {
  ExpectLargerNeverCheaper(
      [](Workload* w, ParallelConfig*) {
        MoeSpec& m = w->transformer.moe;
        if (!IsTransformer(*w) || !w->transformer.is_moe() || m.top_k >= m.num_experts) return false;
        ++m.top_k;
        return true;
      },
      /*at_most_twice=*/true, 60);
  ExpectLargerNeverCheaper(
      [](Workload* w, ParallelConfig*) {
        MoeSpec& m = w->transformer.moe;
        if (!IsTransformer(*w) || !w->transformer.is_moe()) return false;
        m.load_imbalance = 1.25 * (m.load_imbalance > 0 ? m.load_imbalance : kDefaultLoadImbalance);
        return true;
      },
      /*at_most_twice=*/true, 60);
}

// More of a model's parts at the same width and depth: a larger vocabulary, every head
// its own keys and values (GQA undone), query / key norms, dropout, one more predicted
// token, a shared expert, attention over the whole sequence where a window was.
TEST(PhysicsProperties, MorePartsNeverFaster) {
  const std::vector<std::pair<std::string, std::function<bool(Workload*)>>> grow = {
      {"twice the vocabulary", [](Workload* w) { w->transformer.vocab_size *= 2; return true; }},
      {"a key and value head per query head",
       [](Workload* w) {
         TransformerSpec& t = w->transformer;
         if (t.mla.enabled() || t.num_kv_heads == 0 || t.num_kv_heads == t.num_attention_heads) return false;
         t.num_kv_heads = t.num_attention_heads;
         return true;
       }},
      {"query and key norms",
       [](Workload* w) {
         if (w->transformer.qk_layernorm) return false;
         w->transformer.qk_layernorm = true;
         return true;
       }},
      {"dropout",
       [](Workload* w) {
         if (w->transformer.dropout > 0) return false;
         w->transformer.dropout = 0.1;
         return true;
       }},
      {"one more predicted token", [](Workload* w) { ++w->transformer.mtp_num_layers; return true; }},
      {"a shared expert",
       [](Workload* w) {
         if (!w->transformer.is_moe()) return false;
         ++w->transformer.moe.num_shared_experts;
         return true;
       }},
      {"no attention window",
       [](Workload* w) {
         if (w->transformer.sliding_window.tokens == 0) return false;
         w->transformer.sliding_window = SlidingWindow();
         return true;
       }},
  };
  for (const auto& [what, change] : grow) {
    SCOPED_TRACE(what);
    ExpectLargerNeverCheaper(
        [&change](Workload* w, ParallelConfig*) { return IsTransformer(*w) && change(w); },
        /*at_most_twice=*/false, 20);
  }
}

// Switches that hide or remove work never slow an iteration: overlapping the gradient
// reduction and the parameter gather with compute, tensor-parallel collectives with the
// GEMMs beside them, replaying kernels from CUDA graphs. Graphs shorten the host's
// stretches, which exposed loaders and collectives share (InputAndCommBothExposed): there,
// and only there, they may lengthen an iteration.
TEST(PhysicsProperties, OverlapAndGraphsNeverSlower) {
  struct Switch {
    std::string name;
    std::function<bool(ParallelConfig*)> on;  // false: already on
    bool shortens_host = false;
  };
  const std::vector<Switch> switches = {
      {"overlap_grad_reduce",
       [](ParallelConfig* c) { return !c->overlap_grad_reduce && (c->overlap_grad_reduce = true); }},
      {"overlap_param_gather",
       [](ParallelConfig* c) { return !c->overlap_param_gather && (c->overlap_param_gather = true); }},
      {"tp_comm_overlap", [](ParallelConfig* c) { return !c->tp_comm_overlap && (c->tp_comm_overlap = true); }},
      {"cuda_graphs", [](ParallelConfig* c) { return !c->cuda_graphs && (c->cuda_graphs = true); }, true},
  };
  for (const Switch& sw : switches) {
    int pairs = 0;
    ForEachCase([&](Case& x) {
      ParallelConfig with = x.config;
      if (!sw.on(&with)) return;
      auto a = EstimateIteration(x.workload, x.config, x.profile);
      auto b = EstimateIteration(x.workload, with, x.profile);
      if (!a.ok() || !b.ok()) return;  // a switch the framework or the setting does not take
      if (sw.shortens_host && InputAndCommBothExposed(*a)) return;
      EXPECT_LE(b->iteration_time_s, a->iteration_time_s * (1 + kTolerance))
          << sw.name << ": " << x.what << "\n  off " << a->iteration_time_s << " s, on " << b->iteration_time_s
          << " s" << Breakdowns(*a, *b);
      ++pairs;
    });
    EXPECT_GT(pairs, 20) << sw.name;
  }
}
// Pipeline schedules at the same degrees: 1F1B holds at most as many micro-batches as
// GPipe (never more memory), and the zero-bubble schedule fills the bubble with weight
// gradients 1F1B leaves idle (never slower). Interleaved stages and schedules a framework
// refuses are left out.
TEST(PhysicsProperties, SchedulesKeepTheirOrder) {
  int pairs = 0;
  ForEachCase([&](Case& x) {
    if (x.config.pipeline_parallel <= 1 || x.config.virtual_pipeline_stages > 1) return;
    std::vector<absl::StatusOr<Estimate>> by;
    for (PipelineSchedule s : {PipelineSchedule::kGPipe, PipelineSchedule::k1F1B, PipelineSchedule::kZeroBubble}) {
      x.config.pipeline_schedule = s;
      by.push_back(EstimateIteration(x.workload, x.config, x.profile));
    }
    if (by[0].ok() && by[1].ok()) {
      EXPECT_LE(by[1]->memory.total_bytes, by[0]->memory.total_bytes * (1 + kTolerance)) << x.what;
      ++pairs;
    }
    if (by[1].ok() && by[2].ok()) {
      EXPECT_LE(by[2]->iteration_time_s, by[1]->iteration_time_s * (1 + kTolerance))
          << x.what << "\n  1F1B " << by[1]->iteration_time_s << " s, zero-bubble " << by[2]->iteration_time_s << " s"
          << Breakdowns(*by[1], *by[2]);
      ++pairs;
    }
  });
  EXPECT_GT(pairs, 50);
}

// How many plans are asked for changes which are shown, not which is best: the first of
// 40 is the one plan asked for alone, and the first 10 of 40 are the 10.
TEST(PhysicsProperties, AskingForMorePlansKeepsTheBest) {
  for (const Scenario& s : Scenarios()) {
    const SystemProfile profile = testing::Profile(s.profile);
    auto one = Plan(RequestOf(s, 1), profile);
    auto ten = Plan(RequestOf(s, 10), profile);
    auto many = Plan(RequestOf(s, 40), profile);
    ASSERT_TRUE(one.ok() && ten.ok() && many.ok()) << s.model;
    ASSERT_FALSE(one->plans.empty()) << s.model;
    const std::string what = absl::StrCat(s.model, " on ", s.profile);
    EXPECT_EQ(many->plans[0].config.ShortString(), one->plans[0].config.ShortString()) << what;
    EXPECT_EQ(many->plans[0].iteration_time_s, one->plans[0].iteration_time_s) << what;
    for (size_t i = 0; i < ten->plans.size(); ++i) {
      ASSERT_LT(i, many->plans.size()) << what;
      EXPECT_EQ(many->plans[i].config.ShortString(), ten->plans[i].config.ShortString()) << what << " #" << i;
    }
  }
}

}  // namespace
}  // namespace paraplan
