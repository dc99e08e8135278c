// Collectives: alpha-beta costs of NCCL-style collectives on a hierarchy of network
// levels (NVLink domain, leaf, spine, ...).
//
// A group is `size` ranks spaced `stride` apart in the rank space; Place() finds the
// outermost level it crosses and how many members share each inner domain. Costs:
//  ring all-reduce        2(P-1)a + 2(P-1)/P N/B          (Thakur et al. 2005)
//  halving-doubling       2 log2(P) a + 2(P-1)/P N/B       (Nguyen & Wahib, CCGrid'21)
//  tree (NCCL double binary tree) 2 log2(P) a + 2 N/B
//  hierarchical           RS inside the domain, all-reduce across, AG inside
//  2D torus               RS along X, all-reduce along Y on N/X, AG along X
// Every call also pays the profile's fixed collective_overhead (launch, rendezvous):
// with the per-step latency and the bandwidth term this reproduces nccl-tests' bus-
// bandwidth curve (latency-bound below a few MiB, near the link rate above).
// Bandwidth across a level is the per-GPU rate times the members that share a domain
// (each GPU drives its own NIC share, as NCCL's multi-channel rings do), capped by the
// inner level's rate.
//
// Topology and placement (with a JobLayout): every group of a dimension runs its
// collective at once, so a level's links are shared by the job's GPUs in a domain of
// the level below. A fat tree's r:1 taper then bites only as far as the job fills the
// domain (a job holding a quarter of a 2:1 leaf crosses it at full rate); a torus ring
// whose members sit h vertices apart shares each link with the h - 1 interleaved
// groups and uses both directions; a dragonfly group's ring leaves it over the direct
// global links to the next group (or half of all of them, routed through a third).
// Halving-doubling runs step by step, each step on the level its partner distance
// crosses; the topology-aware variant keeps its large steps innermost. Without a
// layout, domains are taken as full (the job fills them). Thread-safe (read-only after
// construction).
#ifndef PARAPLAN_ESTIMATOR_SYSTEM_COLLECTIVES_H_
#define PARAPLAN_ESTIMATOR_SYSTEM_COLLECTIVES_H_

#include <cstdint>

#include "estimator/inputs/parallel_config.h"
#include "estimator/system/hardware.h"
#include "estimator/system/placement.h"

namespace paraplan {

struct GroupSpan {
  int size = 1;
  int level = 0;  // outermost level the group crosses
  int inner = 1;  // members per domain of level (level - 1); = size when level == 0
  int64_t stride = 1;  // rank distance between consecutive members
  int64_t spread = 1;  // cluster nodes between consecutive job nodes (placement)
};

// Where one token's copies go (Collectives::DedupAllToAll): to `copies` distinct experts
// of `experts` spread evenly over the group's ranks (drawn without replacement; 0: each
// copy drawn independently). With group-limited routing (Megatron-Core
// moe_router_num_groups / moe_router_group_topk, moe_utils.py group_limited_topk;
// DeepSeek-V3: 8 / 4, "node-limited routing", DeepSeek-AI 2024 sec. 2.1.2) the experts
// form `groups` equal contiguous groups and a token's copies all lie in `group_topk` of
// them (0: no limit).
struct TokenSpread {
  double copies = 1;
  double experts = 0;
  int groups = 0;
  int group_topk = 0;
};

class Collectives {
 public:
  explicit Collectives(const Hardware& hw);
  Collectives(const Hardware& hw, const JobLayout& layout);

  GroupSpan Place(int size, int64_t stride) const;
  // Level that connects rank r with rank r + stride.
  int LevelOfStride(int64_t stride) const;

  // `bytes` is the full buffer size on each rank.
  // `used`, when given, receives the algorithm charged (kAuto resolved).
  double AllReduce(double bytes, const GroupSpan& g,
                   CollectiveAlgorithm algo = CollectiveAlgorithm::kAuto,
                   CollectiveAlgorithm* used = nullptr) const;
  // `bytes` is the full (gathered) size; each rank contributes bytes / P.
  double AllGather(double bytes, const GroupSpan& g) const;
  double ReduceScatter(double bytes, const GroupSpan& g) const { return AllGather(bytes, g); }
  // An all-gather of `gather_bytes` and a reduce-scatter of `scatter_bytes` over one
  // group (ZeRO's pair): AllGather and ReduceScatter's times, the group's latency and
  // ring rate taken once where no level it crosses has a message-size curve.
  void GatherAndScatter(double gather_bytes, double scatter_bytes, const GroupSpan& g, double* gather_s,
                        double* scatter_s) const;
  // `bytes` is what each rank sends in total (split evenly over the group).
  double AllToAll(double bytes, const GroupSpan& g) const;
  // An all-to-all where each token goes to `spread.copies` destinations drawn evenly over
  // the group, sent once per other domain of the group's outer level and forwarded inside
  // the domain (DeepEP's normal kernels, DeepSeek-AI 2025: RDMA to the same local rank of
  // each node touched, then NVLink). `bytes` counts every copy, as AllToAll's does.
  // `flows`, when given, receives what each peer is sent, in bytes: the same local rank of
  // each other node (`to_node`, the RDMA phase; 0 inside one domain) and each other rank
  // of its own node (`to_rank`: its own tokens and those it forwards); both 0 where it is
  // priced as a plain all-to-all (one copy a token, or no network levels).
  struct DedupFlows {
    double to_node = 0;
    double to_rank = 0;
  };
  double DedupAllToAll(double bytes, const TokenSpread& spread, const GroupSpan& g, DedupFlows* flows = nullptr) const;
  double SendRecv(double bytes, int level) const;
  // The share of a node-wide ring's thread blocks (one an SM, what overlap_efficiency's
  // interference was measured beside) a collective over `g` holds: a ring across nodes
  // runs kOneRankPerNodeChannels of NCCL's channels for each member it has in a node, up
  // to kNodeRingChannels, what one inside a node's GPUs runs.
  double SmShare(const GroupSpan& g) const;

 private:
  DedupFlows DedupAllToAllFlows(double bytes, const TokenSpread& spread, const GroupSpan& g) const;
  // Per-rank ring rate for a `bytes` buffer (levels may have a size-dependent curve).
  double RingBandwidth(const GroupSpan& g, double bytes) const;
  // Rate of one ring crossing `level` with `members` of it per domain of the level below.
  double RingRate(int level, int64_t members, const GroupSpan& g, double bytes) const;
  // Per-GPU rate when every GPU of the job sends across `level` at once.
  double UniformRate(int level, double bytes) const;
  // Torus levels: vertices between consecutive members along the ring's first dimension.
  int64_t TorusHop(int level, const GroupSpan& g) const;
  int64_t ClusterStride(const GroupSpan& g) const;
  double TorusDims(double bytes, const GroupSpan& g) const;
  double HalvingDoublingSteps(double bytes, const GroupSpan& g, bool innermost_first) const;
  double Gather(double bytes, const GroupSpan& g) const;  // all-gather without the call cost
  // One step's latency: the level's, times the hops between members on a torus.
  double Latency(const GroupSpan& g) const;
  double Ring(double bytes, const GroupSpan& g) const;
  double Tree(double bytes, const GroupSpan& g) const;
  double HalvingDoubling(double bytes, const GroupSpan& g) const;
  double Hierarchical(double bytes, const GroupSpan& g) const;
  double Torus2D(double bytes, const GroupSpan& g) const;

  const Hardware& hw_;
  int64_t spread_ = 1;
  // Per level i >= 1: the job's GPUs in one domain of level i - 1, and the factor by
  // which the level's rate exceeds its fully-loaded (bandwidth / taper) value.
  std::vector<double> active_;
  std::vector<double> relief_;
  enum class Shape : char { kSwitched, kTorus, kDragonfly };
  std::vector<Shape> shape_;  // per level, what RingRate / UniformRate must model
  // Per level: whether it and every level inside it reduce in their switches, and
  // whether any of them has a message-size curve (a ring's rate then depends on bytes).
  std::vector<char> reduces_in_network_;
  std::vector<char> sized_;
  std::vector<int64_t> domain_;  // per level, its domain's GPUs (Place's walk, kept close)
  int64_t gpn_ = 1;              // GPUs per node
};

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_SYSTEM_COLLECTIVES_H_
