#include "estimator/inputs/measured_features.h"

#include <iterator>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace paraplan {

namespace {

struct Feature {
  MeasuredFeature bit;
  const char* name;
  const char* description;
};

constexpr Feature kFeatures[] = {
    {kFeatureTransformer, "transformer", "a transformer"},
    {kFeatureLayerGraph, "layer_graph", "a layer graph"},
    {kFeatureTensorParallel, "tensor_parallel", "tensor parallelism"},
    {kFeaturePipelineParallel, "pipeline_parallel", "pipeline parallelism"},
    {kFeatureContextParallel, "context_parallel", "context parallelism"},
    {kFeatureMoe, "moe", "a mixture-of-experts model"},
    {kFeatureExpertParallel, "expert_parallel", "expert parallelism"},
    {kFeatureShardedWeights, "zero3", "weights sharded by ZeRO-3 / FSDP"},
    {kFeatureLowPrecision, "fp8_fp4", "FP8 / FP4 linears"},
    {kFeatureOffload, "offload", "offloading to the host"},
    {kFeatureCnnSplit, "cnn_split", "a spatial, filter or channel split"},
};

}  // namespace

unsigned FeaturesOf(const Workload& w, const ParallelConfig& raw) {
  const ParallelConfig c = raw.Normalized();
  unsigned f = 0;
  const bool transformer = w.kind == Workload::Kind::kTransformer;
  f |= transformer ? kFeatureTransformer : kFeatureLayerGraph;
  if (c.tensor_parallel > 1) f |= kFeatureTensorParallel;
  if (c.pipeline_parallel > 1) f |= kFeaturePipelineParallel;
  if (c.context_parallel > 1) f |= kFeatureContextParallel;
  if (transformer && w.transformer.is_moe()) f |= kFeatureMoe;
  if (c.expert_parallel > 1) f |= kFeatureExpertParallel;
  if (c.zero_stage >= 3) f |= kFeatureShardedWeights;
  if (w.precision == Precision::kFp8 || w.precision == Precision::kFp4) f |= kFeatureLowPrecision;
  if (c.offload.optimizer || c.offload.weights || c.offload.activations || c.cpu_offload_layers > 0 ||
      c.offload_modules != 0) {
    f |= kFeatureOffload;
  }
  if (c.spatial_parallel > 1 || c.filter_parallel > 1 || c.channel_parallel > 1) f |= kFeatureCnnSplit;
  return f;
}

std::vector<std::string> FeatureNames(unsigned features) {
  std::vector<std::string> out;
  for (const Feature& f : kFeatures) {
    if (features & f.bit) out.push_back(f.name);
  }
  return out;
}

absl::StatusOr<unsigned> FeaturesFromNames(const std::vector<std::string>& names, const std::string& field) {
  unsigned bits = 0;
  for (const std::string& n : names) {
    const Feature* found = nullptr;
    for (const Feature& f : kFeatures) {
      if (n == f.name) found = &f;
    }
    if (found == nullptr) {
      std::vector<std::string> all;
      for (const Feature& f : kFeatures) all.push_back(f.name);
      return absl::InvalidArgumentError(absl::StrCat(field, ": unknown feature \"", n.substr(0, 64), "\"; one of ",
                                                     absl::StrJoin(all, ", ")));
    }
    bits |= found->bit;
  }
  return bits;
}

std::string DescribeFeatures(unsigned features) {
  std::vector<std::string> out;
  for (const Feature& f : kFeatures) {
    if (features & f.bit) out.push_back(f.description);
  }
  return absl::StrJoin(out, ", ");
}

}  // namespace paraplan
