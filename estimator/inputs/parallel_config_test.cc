// ParallelConfig's derived quantities against hand counts: the pipeline layout of
// uneven stages (Megatron-Core's first / last stage layer counts) and the expert grid.
#include "estimator/inputs/parallel_config.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace paraplan {
namespace {

using ::testing::ElementsAre;

// Layers of stage `s`'s chunks, virtual stage 0 first.
std::vector<int> StageChunks(const std::vector<int>& chunks, int pp, int s) {
  std::vector<int> out;
  for (size_t k = s; k < chunks.size(); k += pp) out.push_back(chunks[k]);
  return out;
}

TEST(PipelineChunkLayers, EvenSplitWithoutStageCounts) {
  ParallelConfig c;
  c.pipeline_parallel = 12;
  // BLOOM: 70 layers over 12 stages, chunk k holds [70k/12, 70(k+1)/12): 5 or 6 layers.
  const std::vector<int> chunks = c.PipelineChunkLayers(70);
  EXPECT_THAT(chunks, ElementsAre(5, 6, 6, 6, 6, 6, 5, 6, 6, 6, 6, 6));
}

// Qwen3-235B on PP 8 x v 4 (Megatron-MoE model zoo, account-for-embedding and -loss):
// 94 layers + embedding + loss = 96 slots of 3; the first stage holds 11 layers (its
// first chunk 2, beside the embedding), the last 11 (its last chunk 2, beside the loss),
// the six others 12 each, 3 a chunk.
TEST(PipelineChunkLayers, Qwen3OnEightStagesOfFourChunks) {
  ParallelConfig c;
  c.pipeline_parallel = 8;
  c.virtual_pipeline_stages = 4;
  c.first_pipeline_stage_layers = 11;
  c.last_pipeline_stage_layers = 11;
  const std::vector<int> chunks = c.PipelineChunkLayers(94);
  ASSERT_EQ(chunks.size(), 32u);
  EXPECT_THAT(StageChunks(chunks, 8, 0), ElementsAre(2, 3, 3, 3));
  EXPECT_THAT(StageChunks(chunks, 8, 7), ElementsAre(3, 3, 3, 2));
  for (int s = 1; s < 7; ++s) EXPECT_THAT(StageChunks(chunks, 8, s), ElementsAre(3, 3, 3, 3)) << s;
  EXPECT_EQ(std::accumulate(chunks.begin(), chunks.end(), 0), 94);
}

// 94 layers over PP 32 x v 3 = 96 chunks: the first chunk holds only the embedding, the
// last only the loss; every other chunk one layer.
TEST(PipelineChunkLayers, NinetyFourOverThirtyTwoByThree) {
  ParallelConfig c;
  c.pipeline_parallel = 32;
  c.virtual_pipeline_stages = 3;
  c.first_pipeline_stage_layers = 2;
  c.last_pipeline_stage_layers = 2;
  const std::vector<int> chunks = c.PipelineChunkLayers(94);
  ASSERT_EQ(chunks.size(), 96u);
  EXPECT_EQ(chunks.front(), 0);
  EXPECT_EQ(chunks.back(), 0);
  EXPECT_THAT(StageChunks(chunks, 32, 0), ElementsAre(0, 1, 1));
  EXPECT_THAT(StageChunks(chunks, 32, 31), ElementsAre(1, 1, 0));
  EXPECT_EQ(std::count(chunks.begin(), chunks.end(), 1), 94);
}

// Only the first stage given: the other three share the rest, as evenly as it goes.
TEST(PipelineChunkLayers, OneEndGiven) {
  ParallelConfig c;
  c.pipeline_parallel = 4;
  c.first_pipeline_stage_layers = 4;
  EXPECT_THAT(c.PipelineChunkLayers(30), ElementsAre(4, 8, 9, 9));
  c.first_pipeline_stage_layers = 0;
  c.last_pipeline_stage_layers = 6;
  EXPECT_THAT(c.PipelineChunkLayers(30), ElementsAre(8, 8, 8, 6));
}

// The expert grid folds over tp x cp x dp: 256 H100s at TP 2 PP 8 DP 16 hold 32 ranks
// per stage; EP 32 with expert-TP 1 fills them (no expert data parallelism), EP 8 with
// expert-TP 1 leaves 4 replicas, EP 8 with expert-TP = TP 2 leaves 2.
TEST(ExpertGrid, FoldsOverTheAttentionRanks) {
  ParallelConfig c;
  c.tensor_parallel = 2;
  c.pipeline_parallel = 8;
  c.data_parallel = 16;
  c.expert_parallel = 32;
  c.expert_tensor_parallel = 1;
  EXPECT_EQ(c.ExpertDataParallel(), 1);
  c.expert_parallel = 8;
  EXPECT_EQ(c.ExpertDataParallel(), 4);
  c.expert_tensor_parallel = 0;  // = tensor_parallel
  EXPECT_EQ(c.ExpertTensorParallel(), 2);
  EXPECT_EQ(c.ExpertDataParallel(), 2);
  EXPECT_EQ(c.Normalized().expert_tensor_parallel, 2);
  c.expert_tensor_parallel = 1;
  EXPECT_THAT(c.ShortString(), ::testing::HasSubstr("EP8 ETP1"));
}

}  // namespace
}  // namespace paraplan
