// ParallelConfig: how one training job is split across GPUs (the "execution").
//
// Plain value type mirroring paraplan.v1.ParallelConfig. Degrees are >= 1 after
// Normalized(); NumGpus() is the product of the degrees that occupy distinct GPUs
// (expert parallelism reuses the data x context ranks, as in Megatron-LM).
#ifndef PARAPLAN_ESTIMATOR_INPUTS_PARALLEL_CONFIG_H_
#define PARAPLAN_ESTIMATOR_INPUTS_PARALLEL_CONFIG_H_

#include <cstdint>
#include <string>

namespace paraplan {

enum class Recompute { kNone, kSelective, kFull };
enum class PipelineSchedule { kDefault, k1F1B, kGPipe, kInterleaved1F1B, kZeroBubble };
// kTorus2D is the dimension-wise torus algorithm (2-D or 3-D); kTopoHalvingDoubling is
// halving-doubling with its large-message steps kept inside the innermost domain
// (rank reordering for the topology, after Nguyen & Wahib, CCGrid'21).
enum class CollectiveAlgorithm { kAuto, kRing, kTree, kHalvingDoubling, kHierarchical, kTorus2D, kTopoHalvingDoubling };
enum class CollectiveKind { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kSendRecv };
// Where a job's nodes sit in the cluster: packed (consecutive nodes, filling each leaf
// before the next) or scattered (nodes spread evenly over the whole cluster, as a busy
// scheduler leaves them).
enum class Placement { kPacked, kScattered };
// Placement of parallel dimensions on ranks, innermost first.
enum class RankOrder { kTpCpEpDpPp, kTpCpEpPpDp };

struct OffloadSpec {
  bool optimizer = false;
  bool weights = false;
  bool activations = false;
  bool any() const { return optimizer || weights || activations; }
};

struct ParallelConfig {
  int data_parallel = 1;
  int tensor_parallel = 1;
  int pipeline_parallel = 1;
  int context_parallel = 1;
  int expert_parallel = 1;
  bool sequence_parallel = false;
  int virtual_pipeline_stages = 1;
  int micro_batch_size = 1;
  int global_batch_size = 1;
  Recompute recompute = Recompute::kNone;
  int zero_stage = 0;
  PipelineSchedule pipeline_schedule = PipelineSchedule::kDefault;
  bool overlap_grad_reduce = false;
  bool overlap_param_gather = false;
  OffloadSpec offload;
  int spatial_parallel = 1;
  int filter_parallel = 1;
  int channel_parallel = 1;
  // Spatial parallelism splits layers [0, spatial_layers) of a layer graph (0 = all)
  // along `spatial_axes` of their spatial axes (first axis first; 0 = 1).
  int spatial_layers = 0;
  int spatial_axes = 1;
  bool flash_attention = false;
  // Kernels replayed from CUDA graphs (or torch.compile with cudagraphs): the host's
  // per-kernel launch cost mostly disappears.
  bool cuda_graphs = false;
  // Tensor-parallel collectives overlapped with the neighbouring GEMMs (Transformer
  // Engine userbuffers); otherwise the forward TP collectives are exposed.
  bool tp_comm_overlap = false;
  CollectiveAlgorithm dp_algorithm = CollectiveAlgorithm::kAuto;
  RankOrder rank_order = RankOrder::kTpCpEpDpPp;
  // Algorithm of the tensor-parallel all-reduces (kAuto = the cheapest applicable).
  CollectiveAlgorithm tp_algorithm = CollectiveAlgorithm::kAuto;
  Placement placement = Placement::kPacked;

  // Degrees <= 0 become 1; kDefault schedule becomes 1F1B or interleaved.
  ParallelConfig Normalized() const;
  // GPUs used: dp * tp * pp * cp * spatial * filter * channel.
  int64_t NumGpus() const;
  // Ranks inside one data-parallel replica's layer: tp * cp * spatial * filter * channel.
  int64_t InnerDegree() const {
    return int64_t{tensor_parallel} * context_parallel * spatial_parallel * filter_parallel *
           channel_parallel;
  }
  // Micro-batches per iteration per pipeline: global / (dp * micro).
  int NumMicroBatches() const;
  // "TP8 PP8 DP16 CP1 ..." — compact human form for tables and logs.
  std::string ShortString() const;
};

const char* RecomputeName(Recompute r);
const char* ScheduleName(PipelineSchedule s);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_INPUTS_PARALLEL_CONFIG_H_
