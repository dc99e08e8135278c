#include "estimator/validate.h"

#include "estimator/estimate.h"
#include "estimator/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using ::testing::HasSubstr;
using testing::Config;
using testing::Model;

void ExpectInvalid(const Workload& w, const ParallelConfig& c, const std::string& field) {
  const absl::Status s = ValidateConfig(w, c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << field;
  EXPECT_THAT(std::string(s.message()), HasSubstr(field));
}

TEST(Validate, ConfigErrorsNameTheField) {
  const Workload w = Model("gpt3-175b");
  ExpectInvalid(w, Config(7, 1, 1, 1, 8), "config.tensor_parallel");
  ExpectInvalid(w, Config(8, 97, 1, 1, 8), "config.pipeline_parallel");  // 97 stages, 96 layers
  EXPECT_TRUE(ValidateConfig(w, Config(8, 5, 1, 1, 8)).ok());  // uneven: stages of 19 and 20 layers
  ExpectInvalid(w, Config(8, 1, 3, 1, 8), "config.global_batch_size");
  ExpectInvalid(w, Config(-1, 1, 1, 1, 8), "config.tensor_parallel");
  ExpectInvalid(w, Config(8, 1, 1, 1, 0), "config.global_batch_size");
  ParallelConfig cp = Config(1, 1, 1, 1, 8);
  cp.context_parallel = 3;
  ExpectInvalid(w, cp, "config.context_parallel");
  ParallelConfig ep = Config(1, 1, 1, 1, 8);
  ep.expert_parallel = 2;
  ExpectInvalid(w, ep, "config.expert_parallel");
  ParallelConfig zero = Config(1, 1, 1, 1, 8);
  zero.zero_stage = 4;
  ExpectInvalid(w, zero, "config.zero_stage");
  ParallelConfig v = Config(8, 8, 1, 1, 12);
  v.virtual_pipeline_stages = 2;
  v.pipeline_schedule = PipelineSchedule::k1F1B;
  ExpectInvalid(w, v, "config.virtual_pipeline_stages");  // schedule not interleaved
  v.pipeline_schedule = PipelineSchedule::kInterleaved1F1B;
  ExpectInvalid(w, v, "config.global_batch_size");  // 12 micro-batches, 8 stages
  ParallelConfig cnn = Config(1, 1, 1, 1, 8);
  cnn.spatial_parallel = 2;
  ExpectInvalid(w, cnn, "config.spatial_parallel");
  EXPECT_TRUE(ValidateConfig(w, Config(8, 8, 2, 1, 64)).ok());
  EXPECT_TRUE(ValidateConfigForGpus(w, Config(8, 8, 2, 1, 64), 128).ok());
  const absl::Status s = ValidateConfigForGpus(w, Config(8, 8, 2, 1, 64), 256);
  EXPECT_THAT(std::string(s.message()), HasSubstr("multiply to 128 GPUs, not num_gpus 256"));
}

TEST(Validate, KvHeadsBoundTensorParallelism) {
  ExpectInvalid(Model("llama3-70b"), Config(16, 1, 1, 1, 8), "config.tensor_parallel");
  EXPECT_TRUE(ValidateConfig(Model("llama3-70b"), Config(8, 1, 1, 1, 8)).ok());
}

TEST(Validate, WorkloadErrorsNameTheField) {
  Workload w = Model("llama3-8b");
  w.transformer.hidden_size = 0;
  EXPECT_THAT(std::string(ValidateWorkload(w).message()), HasSubstr("workload.transformer.hidden_size"));
  w = Model("llama3-8b");
  w.transformer.num_kv_heads = 5;
  EXPECT_THAT(std::string(ValidateWorkload(w).message()), HasSubstr("workload.transformer.num_kv_heads"));
  w = Model("llama3-8b");
  w.transformer.hidden_size = 4097;
  EXPECT_THAT(std::string(ValidateWorkload(w).message()), HasSubstr("workload.transformer.hidden_size"));
  w = Model("mixtral-8x7b");
  w.transformer.moe.top_k = 9;
  EXPECT_THAT(std::string(ValidateWorkload(w).message()), HasSubstr("workload.transformer.moe.top_k"));
  Workload g;
  g.kind = Workload::Kind::kLayerGraph;
  EXPECT_THAT(std::string(ValidateWorkload(g).message()), HasSubstr("workload.layer_graph.layers"));
}

TEST(Validate, ProfileErrorsNameTheField) {
  SystemProfile p = testing::Profile("dgx-a100-80gb");
  EXPECT_TRUE(ValidateProfile(p).ok());
  p.network_levels[0].bandwidth_gbytes_per_s = -1;
  EXPECT_THAT(std::string(ValidateProfile(p).message()),
              HasSubstr("profile.network_levels[0].bandwidth_gbytes_per_s"));
  p = testing::Profile("dgx-a100-80gb");
  p.calibration.matmul_efficiency = 1.5;
  EXPECT_THAT(std::string(ValidateProfile(p).message()), HasSubstr("profile.calibration.matmul_efficiency"));
  p = testing::Profile("dgx-a100-80gb");
  p.accelerator.memory_gib = 0;
  EXPECT_THAT(std::string(ValidateProfile(p).message()), HasSubstr("profile.accelerator.memory_gib"));
  p = testing::Profile("dgx-a100-80gb");
  p.network_levels.clear();
  EXPECT_THAT(std::string(ValidateProfile(p).message()), HasSubstr("profile.network_levels"));
}

TEST(Validate, EstimateRejectsBadInputWithoutCrashing) {
  absl::StatusOr<Estimate> e =
      EstimateIteration(Model("gpt3-175b"), Config(5, 1, 1, 1, 1), testing::Profile("dgx-a100-80gb"));
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace paraplan
