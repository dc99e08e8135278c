// Measured features: the kinds of cost a configuration exercises that only measurements
// exercising them can calibrate — tensor, pipeline, context and expert parallelism, an
// MoE model, weights sharded by ZeRO-3 / FSDP, FP8 / FP4 linears, offloading, a CNN's
// spatial / filter / channel split — and the workload's kind (transformer or layer
// graph). Calibration records, per regime, the features its measurements covered
// (RegimeCalibration.measured_features); a prediction whose configuration has a
// feature no measurement of its regime had lies outside the calibration's envelope
// (iteration/uncertainty.h). Pure functions; thread-safe.
#ifndef PARAPLAN_ESTIMATOR_INPUTS_MEASURED_FEATURES_H_
#define PARAPLAN_ESTIMATOR_INPUTS_MEASURED_FEATURES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "estimator/inputs/parallel_config.h"
#include "estimator/inputs/workload.h"

namespace paraplan {

enum MeasuredFeature : unsigned {
  kFeatureTransformer = 1u << 0,
  kFeatureLayerGraph = 1u << 1,
  kFeatureTensorParallel = 1u << 2,
  kFeaturePipelineParallel = 1u << 3,
  kFeatureContextParallel = 1u << 4,
  kFeatureMoe = 1u << 5,
  kFeatureExpertParallel = 1u << 6,
  kFeatureShardedWeights = 1u << 7,
  kFeatureLowPrecision = 1u << 8,
  kFeatureOffload = 1u << 9,
  kFeatureCnnSplit = 1u << 10,
};

// The features of `c` (normalized or not) training `w`.
unsigned FeaturesOf(const Workload& w, const ParallelConfig& c);
// Their names, in bit order ("transformer", "tensor_parallel", "zero3", ...).
std::vector<std::string> FeatureNames(unsigned features);
// The bits of names FeatureNames gives; INVALID_ARGUMENT naming `field` and the unknown
// name otherwise.
absl::StatusOr<unsigned> FeaturesFromNames(const std::vector<std::string>& names, const std::string& field);
// "FP8 / FP4 linears", "ZeRO-3 sharded weights", ... for messages.
std::string DescribeFeatures(unsigned features);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_INPUTS_MEASURED_FEATURES_H_
