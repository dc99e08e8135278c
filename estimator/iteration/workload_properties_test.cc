// Metamorphic checks of the estimator against the work and how it is split, over the
// configurations the planner ranks for a spread of models and profiles
// (testing/property_scenarios.h). Independent of the model's sums: a larger batch takes
// between once and twice the time; a larger model (depth, sequence, width, routed tokens,
// more parts) never runs faster nor needs less memory; recomputing or sharding more, and
// sequence parallelism and flash attention, never hold more; full recompute is never
// free; weak scaling never speeds up; 1F1B never holds more than GPipe and zero-bubble is
// never slower than 1F1B.
#include <functional>
#include <string>
#include <vector>

#include "estimator/inputs/validate.h"
#include "estimator/iteration/estimate.h"
#include "estimator/testing/property_scenarios.h"
#include "estimator/testing/test_util.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using testing::Breakdowns;
using testing::Case;
using testing::ForEachCase;
using testing::kTolerance;

// Twice the global batch at the same degrees: twice the micro-batches. Never faster, and
// never more than twice as long (the pipeline's fill and the step are paid once); never
// less memory (as many micro-batches in flight or more).
TEST(WorkloadProperties, DoubleBatchTakesBetweenOnceAndTwiceTheTime) {
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
TEST(WorkloadProperties, MoreRecomputeHoldsNoMoreActivations) {
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

// What a GPU holds: its weights, gradients and optimizer states; its activations; all.
double State(const MemoryBreakdown& m) { return m.weights_bytes + m.gradients_bytes + m.optimizer_bytes; }
double Activations(const MemoryBreakdown& m) { return m.activations_bytes; }
double Total(const MemoryBreakdown& m) { return m.total_bytes; }

// A higher ZeRO stage shards more: the weights, gradients and optimizer states a GPU
// holds never grow with the stage (one pipeline stage, so the peak's stage is the same;
// the gathers' buffers of ZeRO-3 may outweigh its savings at a small data-parallel
// degree, so the total is not compared).
TEST(WorkloadProperties, HigherZeroStageHoldsNoMoreState) {
  int pairs = 0;
  ForEachCase([&](Case& x) {
    if (x.config.pipeline_parallel > 1) return;
    std::vector<std::pair<int, double>> by_stage;
    for (int z = 0; z <= 3; ++z) {
      x.config.zero_stage = z;
      auto e = EstimateIteration(x.workload, x.config, x.profile);
      if (e.ok()) by_stage.emplace_back(z, State(e->memory));
    }
    for (size_t i = 1; i < by_stage.size(); ++i) {
      EXPECT_LE(by_stage[i].second, by_stage[i - 1].second * (1 + kTolerance))
          << x.what << " ZeRO " << by_stage[i - 1].first << " -> " << by_stage[i].first;
      ++pairs;
    }
  });
  EXPECT_GT(pairs, 300);
}

// Estimates each ranked configuration, as `change` may restate it for the comparison
// (`base`), and as `change` changes it (`changed`; false: the change does not apply),
// and checks that `held` of the changed one is at most the base's (`at_least`: at
// least). A configuration the estimator refuses (a degree that does not divide, a
// schedule the micro-batches no longer fit) is skipped.
using ConfigChange = std::function<bool(const Case&, ParallelConfig* base, ParallelConfig* changed)>;
void ExpectHeldAfter(const std::string& what, const ConfigChange& change,
                     const std::function<double(const MemoryBreakdown&)>& held, bool at_least, int min_pairs) {
  int pairs = 0;
  ForEachCase([&](Case& x) {
    ParallelConfig before = x.config, changed = x.config;
    if (!change(x, &before, &changed)) return;
    auto base = EstimateIteration(x.workload, before, x.profile);
    auto after = EstimateIteration(x.workload, changed, x.profile);
    if (!base.ok() || !after.ok()) return;
    if (at_least) {
      EXPECT_GE(held(after->memory), held(base->memory) * (1 - kTolerance)) << x.what << " at " << what;
    } else {
      EXPECT_LE(held(after->memory), held(base->memory) * (1 + kTolerance)) << x.what << " at " << what;
    }
    ++pairs;
  });
  EXPECT_GT(pairs, min_pairs) << what;
}

// Twice a degree over half the replicas (the same GPUs): twice the tensor-parallel degree
// (both without ZeRO: under it the replicas shard what tensor parallelism does not --
// norms, routers, MLA's down-projections -- so halving them may add state) or twice the
// expert-parallel degree (folded over the same ranks) holds half the sharded weights,
// gradients, optimizer states and sequence-parallel activations and as much of the rest:
// never more memory (one pipeline stage, so the peak's stage is the same; its moment may
// move between the backward and the optimizer step, so its parts are not compared).
// Twice the context-parallel degree keeps half of every sequence's activations, and a
// CNN split spatially over twice the GPUs half of the split layers' (a pipeline keeps at
// most its depth of micro-batches in flight however many more a replica runs): never
// more activations.
TEST(WorkloadProperties, MoreModelParallelismHoldsNoMore) {
  const auto halve_dp = [](const Case& x, ParallelConfig* c) {
    if (x.config.data_parallel % 2 != 0) return false;
    c->data_parallel /= 2;
    return true;
  };
  const auto transformer = [](const Case& x) { return x.workload.kind == Workload::Kind::kTransformer; };
  ExpectHeldAfter(
      "twice the TP",
      [&](const Case& x, ParallelConfig* base, ParallelConfig* c) {
        if (x.config.pipeline_parallel > 1 || !halve_dp(x, c)) return false;
        base->zero_stage = c->zero_stage = 0;
        c->expert_tensor_parallel = x.config.ExpertTensorParallel();
        c->tensor_parallel *= 2;
        return true;
      },
      Total, /*at_least=*/false, 20);
  ExpectHeldAfter(
      "twice the EP",
      [&](const Case& x, ParallelConfig*, ParallelConfig* c) {
        if (x.config.pipeline_parallel > 1 || !transformer(x) || !x.workload.transformer.is_moe()) return false;
        c->expert_parallel *= 2;
        return true;
      },
      Total, /*at_least=*/false, 20);
  ExpectHeldAfter(
      "twice the CP",
      [&](const Case& x, ParallelConfig*, ParallelConfig* c) {
        if (!transformer(x) || !halve_dp(x, c)) return false;
        c->context_parallel *= 2;
        return true;
      },
      Activations, /*at_least=*/false, 100);
  ExpectHeldAfter(
      "twice the spatial split",
      [&](const Case& x, ParallelConfig*, ParallelConfig* c) {
        if (transformer(x) || !halve_dp(x, c)) return false;
        c->spatial_parallel *= 2;
        return true;
      },
      Activations, /*at_least=*/false, 20);
}

// Twice the samples a micro-batch over half the micro-batches (the same global batch):
// every micro-batch in flight holds twice the activations, and a pipeline keeps no fewer
// samples in flight, so a GPU never needs less memory.
TEST(WorkloadProperties, LargerMicroBatchesNeverNeedLessMemory) {
  ExpectHeldAfter(
      "twice the micro-batch",
      [](const Case& x, ParallelConfig*, ParallelConfig* c) {
        if (x.config.NumMicroBatches() % 2 != 0) return false;
        c->micro_batch_size *= 2;
        return true;
      },
      Total, /*at_least=*/true, 300);
}

// Twice the replicas at the same per-replica batch (weak scaling): the same work a GPU,
// over a wider data-parallel group whose collectives take at least as long. A sharded
// optimizer's step (and its offload) shrinks with the group, so it is left out.
TEST(WorkloadProperties, WeakScalingNeverFaster) {
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

// Sequence parallelism shards the activations a tensor-parallel group keeps: with it on,
// a GPU never needs more memory than with it off.
TEST(WorkloadProperties, SequenceParallelNeverNeedsMoreMemory) {
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
TEST(WorkloadProperties, FlashNeverNeedsMoreMemoryAndRecomputeIsNeverFree) {
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
      // DeepSpeed ZeRO-3 keeps the tensors within stage3_max_reuse_distance elements
      // gathered from forward into backward: a fixed number, so twice the tensors
      // re-gather more than twice as many; the excess is at most one more gather of each
      // tensor, less than the base's whole data-parallel time.
      const bool reuse_distance = x.config.framework == Framework::kDeepSpeed && x.config.zero_stage >= 3;
      EXPECT_LE(b->iteration_time_s,
                (2 * a->iteration_time_s + (reuse_distance ? a->time.dp_comm_s : 0.0)) * (1 + kTolerance))
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
TEST(WorkloadProperties, TwiceTheLayersNeverFasterNorMoreThanTwiceTheTime) {
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
TEST(WorkloadProperties, LongerSequencesNeverFaster) {
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
TEST(WorkloadProperties, WiderModelsNeverFaster) {
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
TEST(WorkloadProperties, MoreRoutedTokensNeverFaster) {
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
TEST(WorkloadProperties, MorePartsNeverFaster) {
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
        // (A change the framework does not run, MTP under DeepSpeed, does not apply.)
        [&change](Workload* w, ParallelConfig* c) {
          return IsTransformer(*w) && change(w) && WorkloadRefusedByFramework(*w, c->framework).field == nullptr;
        },
        /*at_most_twice=*/false, 20);
  }
}

// Pipeline schedules at the same degrees: 1F1B holds at most as many micro-batches as
// GPipe (never more memory), and the zero-bubble schedule fills the bubble with weight
// gradients 1F1B leaves idle (never slower). Interleaved stages and schedules a framework
// refuses are left out.
TEST(WorkloadProperties, SchedulesKeepTheirOrder) {
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

}  // namespace
}  // namespace paraplan
