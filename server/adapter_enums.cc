// Enumerations, proto <-> struct (adapter_internal.h): an unknown value is
// INVALID_ARGUMENT naming the field.
#include <iterator>

#include "absl/strings/str_cat.h"
#include "server/adapter_internal.h"

namespace paraplan::adapter::internal {

absl::Status BadEnum(absl::string_view field, int value) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", value, " is not a known value"));
}

namespace {

// Proto values in the order of CollectiveAlgorithm's enumerators.
constexpr v1::CollectiveAlgorithm kAlgorithms[] = {
    v1::ALGORITHM_UNSPECIFIED, v1::ALGORITHM_RING,     v1::ALGORITHM_TREE,
    v1::ALGORITHM_HALVING_DOUBLING, v1::ALGORITHM_HIERARCHICAL, v1::ALGORITHM_TORUS_2D,
    v1::ALGORITHM_TOPO_HALVING_DOUBLING};

}  // namespace

v1::CollectiveAlgorithm AlgorithmToProto(CollectiveAlgorithm a) { return kAlgorithms[static_cast<int>(a)]; }

absl::StatusOr<CollectiveAlgorithm> AlgorithmFromProto(absl::string_view field, v1::CollectiveAlgorithm a) {
  for (size_t i = 0; i < std::size(kAlgorithms); ++i) {
    if (kAlgorithms[i] == a) return static_cast<CollectiveAlgorithm>(i);
  }
  return BadEnum(field, a);
}

absl::StatusOr<Recompute> FromProto(v1::Recompute r, absl::string_view field) {
  switch (r) {
    case v1::RECOMPUTE_UNSPECIFIED:
    case v1::RECOMPUTE_NONE:
      return Recompute::kNone;
    case v1::RECOMPUTE_SELECTIVE:
      return Recompute::kSelective;
    case v1::RECOMPUTE_FULL:
      return Recompute::kFull;
    default:
      return BadEnum(field, r);
  }
}

absl::StatusOr<Framework> FromProto(v1::Framework f, absl::string_view field) {
  if (f < v1::FRAMEWORK_UNSPECIFIED || f > v1::FRAMEWORK_PYTORCH_FSDP) return BadEnum(field, f);
  // The proto's values follow Framework's enumerators (kAny = unspecified).
  return static_cast<Framework>(f);
}

absl::StatusOr<MoeDispatcher> FromProto(v1::MoeDispatcher d, absl::string_view field) {
  switch (d) {
    case v1::MOE_DISPATCHER_UNSPECIFIED:
    case v1::MOE_DISPATCHER_ALLTOALL:
      return MoeDispatcher::kAllToAll;
    case v1::MOE_DISPATCHER_ALLGATHER:
      return MoeDispatcher::kAllGather;
    case v1::MOE_DISPATCHER_DEEPEP:
      return MoeDispatcher::kDeepEp;
    default:
      return BadEnum(field, d);
  }
}

v1::MoeDispatcher ToProto(MoeDispatcher d) {
  switch (d) {
    case MoeDispatcher::kAllToAll:
      return v1::MOE_DISPATCHER_ALLTOALL;
    case MoeDispatcher::kAllGather:
      return v1::MOE_DISPATCHER_ALLGATHER;
    case MoeDispatcher::kDeepEp:
      return v1::MOE_DISPATCHER_DEEPEP;
  }
  return v1::MOE_DISPATCHER_UNSPECIFIED;
}

absl::StatusOr<PipelineSchedule> FromProto(v1::PipelineSchedule s, absl::string_view field) {
  switch (s) {
    case v1::SCHEDULE_UNSPECIFIED:
      return PipelineSchedule::kDefault;
    case v1::SCHEDULE_1F1B:
      return PipelineSchedule::k1F1B;
    case v1::SCHEDULE_GPIPE:
      return PipelineSchedule::kGPipe;
    case v1::SCHEDULE_INTERLEAVED_1F1B:
      return PipelineSchedule::kInterleaved1F1B;
    case v1::SCHEDULE_ZERO_BUBBLE:
      return PipelineSchedule::kZeroBubble;
    default:
      return BadEnum(field, s);
  }
}

v1::Recompute ToProto(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return v1::RECOMPUTE_NONE;
    case Recompute::kSelective:
      return v1::RECOMPUTE_SELECTIVE;
    case Recompute::kFull:
      return v1::RECOMPUTE_FULL;
  }
  return v1::RECOMPUTE_UNSPECIFIED;
}

v1::PipelineSchedule ToProto(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::kDefault:
      return v1::SCHEDULE_UNSPECIFIED;
    case PipelineSchedule::k1F1B:
      return v1::SCHEDULE_1F1B;
    case PipelineSchedule::kGPipe:
      return v1::SCHEDULE_GPIPE;
    case PipelineSchedule::kInterleaved1F1B:
      return v1::SCHEDULE_INTERLEAVED_1F1B;
    case PipelineSchedule::kZeroBubble:
      return v1::SCHEDULE_ZERO_BUBBLE;
  }
  return v1::SCHEDULE_UNSPECIFIED;
}

absl::StatusOr<Precision> FromProto(v1::Precision p) {
  switch (p) {
    case v1::PRECISION_UNSPECIFIED:
    case v1::PRECISION_BF16:
      return Precision::kBf16;
    case v1::PRECISION_FP16:
      return Precision::kFp16;
    case v1::PRECISION_FP8:
      return Precision::kFp8;
    case v1::PRECISION_FP32:
      return Precision::kFp32;
    case v1::PRECISION_FP4:
      return Precision::kFp4;
    default:
      return BadEnum("workload.precision", p);
  }
}

v1::Precision ToProto(Precision p) {
  switch (p) {
    case Precision::kBf16:
      return v1::PRECISION_BF16;
    case Precision::kFp16:
      return v1::PRECISION_FP16;
    case Precision::kFp8:
      return v1::PRECISION_FP8;
    case Precision::kFp32:
      return v1::PRECISION_FP32;
    case Precision::kFp4:
      return v1::PRECISION_FP4;
  }
  return v1::PRECISION_UNSPECIFIED;
}

Flag FromProto(v1::PlanConstraints::Flag f) {
  switch (f) {
    case v1::PlanConstraints::FLAG_ON:
      return Flag::kOn;
    case v1::PlanConstraints::FLAG_OFF:
      return Flag::kOff;
    default:
      return Flag::kAny;
  }
}

}  // namespace paraplan::adapter::internal
