#include "estimator/system/collectives.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace paraplan {

namespace {
// ceil(log2(v)) for v >= 1 (0 below), exactly, without the libm call.
double Log2Ceil(int v) { return v <= 1 ? 0.0 : static_cast<double>(32 - __builtin_clz(static_cast<unsigned>(v - 1))); }
// A ring all-reduce and NCCL's double binary tree over `p` ranks, given one step's latency
// and the ring's per-rank rate.
double RingTime(double bytes, int p, double latency, double bw) {
  return 2 * (p - 1.0) * latency + 2 * (p - 1.0) / p * bytes / bw;
}
double TreeTime(double bytes, int p, double latency, double bw) { return 2 * Log2Ceil(p) * latency + 2 * bytes / bw; }
// A ring all-gather (or reduce-scatter) of `bytes` in all over `p` ranks.
double GatherTime(double bytes, int p, double latency, double bw) {
  return (p - 1.0) * latency + (p - 1.0) / p * bytes / bw;
}
bool IsTorus(const NetworkRates& l) {
  return (l.topology == Topology::kTorus2D || l.topology == Topology::kTorus3D) && !l.torus_dims.empty();
}
}  // namespace

Collectives::Collectives(const Hardware& hw) : hw_(hw) {
  const auto& levels = hw_.levels();
  active_.assign(levels.size(), 0);
  relief_.assign(levels.size(), 1);
  shape_.assign(levels.size(), Shape::kSwitched);
  reduces_in_network_.assign(levels.size(), 0);
  sized_.assign(levels.size(), 0);
  gpn_ = hw_.gpus_per_node();
  for (size_t i = 0; i < levels.size(); ++i) {
    domain_.push_back(levels[i].domain_size);
    reduces_in_network_[i] = levels[i].in_network_reduction && (i == 0 || reduces_in_network_[i - 1]);
    sized_[i] = !levels[i].curve.empty() || (i > 0 && sized_[i - 1]);
  }
  for (size_t i = 1; i < levels.size(); ++i) {
    active_[i] = levels[i - 1].domain_size;
    if (IsTorus(levels[i])) shape_[i] = Shape::kTorus;
    if (levels[i].topology == Topology::kDragonfly && levels[i].global_links_per_group > 0) {
      shape_[i] = Shape::kDragonfly;
    }
  }
}

Collectives::Collectives(const Hardware& hw, const JobLayout& layout) : Collectives(hw) {
  spread_ = layout.node_spread();
  const auto& levels = hw_.levels();
  for (size_t i = 1; i < levels.size(); ++i) {
    const double below = levels[i - 1].domain_size;
    active_[i] = std::max<double>(1, layout.GpusInDomain(levels[i - 1].domain_size));
    // A domain's uplinks carry domain x bandwidth / taper; the job's GPUs in it share
    // them, each never above its own port's rate (Leiserson 1985: a fat tree's capacity
    // per level; over-subscription matters only under load).
    const double t = levels[i].oversubscription;
    relief_[i] = t / std::max(1.0, t * active_[i] / below);
  }
}

GroupSpan Collectives::Place(int size, int64_t stride) const {
  GroupSpan g;
  g.size = std::max(1, size);
  g.stride = std::max<int64_t>(1, stride);
  g.spread = spread_;
  const size_t n = domain_.size();
  if (g.size == 1 || n == 0) {
    g.inner = g.size;
    return g;
  }
  const int64_t gpn = gpn_;
  int64_t extent = int64_t{g.size} * g.stride;
  // Scattered placement stretches a group that spans nodes over spread x as many.
  if (extent > gpn) extent *= spread_;
  int level = static_cast<int>(n) - 1;
  for (size_t i = 0; i < n; ++i) {
    if (domain_[i] >= extent) {
      level = static_cast<int>(i);
      break;
    }
  }
  g.level = level;
  if (level == 0) {
    g.inner = g.size;
  } else {
    const int64_t inner_domain = domain_[level - 1];
    if (spread_ > 1 && inner_domain >= gpn) {
      const int64_t per_node = g.stride < gpn ? std::min<int64_t>(g.size, gpn / g.stride) : 1;
      const int64_t node_stride = std::max<int64_t>(1, g.stride / gpn) * spread_;
      const int64_t nodes = std::max<int64_t>(1, inner_domain / gpn / node_stride);
      g.inner = static_cast<int>(std::min<int64_t>(g.size, per_node * nodes));
    } else {
      g.inner = g.stride >= inner_domain
                    ? 1
                    : static_cast<int>(std::min<int64_t>(g.size, inner_domain / g.stride));
    }
  }
  return g;
}

int Collectives::LevelOfStride(int64_t stride) const {
  const size_t n = domain_.size();
  if (stride >= gpn_) stride *= spread_;
  for (size_t i = 0; i < n; ++i) {
    if (domain_[i] > stride) return static_cast<int>(i);
  }
  return n == 0 ? 0 : static_cast<int>(n) - 1;
}

int64_t Collectives::ClusterStride(const GroupSpan& g) const {
  return g.stride >= gpn_ ? g.stride * g.spread : g.stride;
}

int64_t Collectives::TorusHop(int level, const GroupSpan& g) const {
  const NetworkRates& l = hw_.levels()[level];
  const int64_t vertex = hw_.levels()[level - 1].domain_size;
  int64_t hop = std::max<int64_t>(1, ClusterStride(g) / std::max<int64_t>(1, vertex));
  // Strides that skip whole rows move along the next dimension instead.
  for (int d : l.torus_dims) {
    if (d <= 1 || hop < d || hop % d != 0) break;
    hop /= d;
  }
  return hop;
}

double Collectives::RingRate(int level, int64_t members, const GroupSpan& g, double bytes) const {
  const NetworkRates& l = hw_.levels()[level];
  members = std::max<int64_t>(1, members);
  if (shape_[level] == Shape::kSwitched) return l.BytesPerS(bytes) * relief_[level] * members;
  if (shape_[level] == Shape::kTorus) {
    // Both directions of the ring's dimension (bidirectional rings); the vertex's GPUs
    // in other groups and the interleaved groups between members share those links.
    const double hop = static_cast<double>(TorusHop(level, g));
    return 2 * l.BytesPerS(bytes) * members / (hop * active_[level]);
  }
  double rate = l.BytesPerS(bytes) * relief_[level] * members;
  if (shape_[level] == Shape::kDragonfly) {
    // A ring enters the next group over the direct links of that pair, or with Valiant
    // routing over half of all the group's global links (Kim et al. ISCA'08); the
    // job's rings leaving the group share them.
    const double groups = std::max(1.0, static_cast<double>(hw_.levels().back().domain_size) /
                                            hw_.levels()[level - 1].domain_size);
    const double pair = std::max(1.0, l.global_links_per_group / std::max(1.0, groups - 1));
    const double links = std::max(pair, l.global_links_per_group / 2.0);
    rate = std::min(rate, links * l.global_link_bytes_per_s * members / active_[level]);
  }
  return rate;
}

double Collectives::UniformRate(int level, double bytes) const {
  const auto& levels = hw_.levels();
  const NetworkRates& l = levels[level];
  double rate = level == 0 ? l.BytesPerS(bytes) : l.BytesPerS(bytes) * relief_[level];
  if (level == 0) return rate;
  if (shape_[level] == Shape::kTorus) {
    // Uniform traffic crosses k/4 links a dimension on average (bidirectional k-ring);
    // a vertex injects into 2 x dims links.
    double hops = 0;
    for (int d : l.torus_dims) hops += d / 4.0;
    rate = 2.0 * l.torus_dims.size() * l.BytesPerS(bytes) / (std::max(1.0, hops) * active_[level]);
  } else if (shape_[level] == Shape::kDragonfly) {
    rate = std::min(rate, l.global_links_per_group * l.global_link_bytes_per_s / active_[level]);
  }
  for (int i = 0; i < level; ++i) rate = std::min(rate, levels[i].BytesPerS(bytes));
  return rate;
}

double Collectives::RingBandwidth(const GroupSpan& g, double bytes) const {
  const auto& levels = hw_.levels();
  if (levels.empty()) return std::numeric_limits<double>::infinity();
  // A ring (NCCL runs one per channel) leaves each domain of level i - 1 once; the
  // domain's members together drive its links at level i, so each level gives the ring
  // its per-GPU rate times the members one domain holds (a node's NICs for the first
  // network level, a rack's uplinks for the next).
  double bw = levels[0].BytesPerS(bytes);
  for (int i = 1; i <= g.level; ++i) {
    const int64_t members =
        i == g.level ? g.inner
                     : std::min<int64_t>(g.size, std::max<int64_t>(1, domain_[i - 1] / ClusterStride(g)));
    // Switched levels inline (the search's common case), the others in RingRate.
    bw = std::min(bw, shape_[i] == Shape::kSwitched ? levels[i].BytesPerS(bytes) * relief_[i] * std::max<int64_t>(1, members)
                                                    : RingRate(i, members, g, bytes));
  }
  return bw;
}

double Collectives::Latency(const GroupSpan& g) const {
  const auto& levels = hw_.levels();
  if (levels.empty()) return 0;
  const NetworkRates& l = levels[g.level];
  return shape_[g.level] == Shape::kTorus ? l.latency_s * TorusHop(g.level, g) : l.latency_s;
}


double Collectives::Ring(double bytes, const GroupSpan& g) const {
  return RingTime(bytes, g.size, Latency(g), RingBandwidth(g, bytes));
}

double Collectives::Tree(double bytes, const GroupSpan& g) const {
  return TreeTime(bytes, g.size, Latency(g), RingBandwidth(g, bytes));
}

double Collectives::HalvingDoubling(double bytes, const GroupSpan& g) const {
  return HalvingDoublingSteps(bytes, g, false);
}

double Collectives::HalvingDoublingSteps(double bytes, const GroupSpan& g, bool innermost_first) const {
  const double p = g.size;
  const int steps = static_cast<int>(Log2Ceil(g.size));
  if ((1 << steps) != g.size || g.level == 0) {
    return 2 * Log2Ceil(g.size) * Latency(g) + 2 * (p - 1) / p * bytes / RingBandwidth(g, bytes);
  }
  // Rabenseifner (Thakur et al. 2005): reduce-scatter by recursive halving, step k
  // exchanging bytes / 2^k with the partner 2^(steps-k) members away, then the mirror
  // all-gather. Every rank sends at once, so a step that crosses a level runs at that
  // level's per-GPU rate under full load. The topology-aware order (Nguyen & Wahib,
  // CCGrid'21) pairs the nearest members for the largest exchanges.
  double t = 0;
  for (int k = 1; k <= steps; ++k) {
    const int64_t distance = innermost_first ? int64_t{1} << (k - 1) : int64_t{1} << (steps - k);
    const int level = LevelOfStride(distance * g.stride);
    const double chunk = bytes / static_cast<double>(int64_t{1} << k);
    t += 2 * (hw_.levels()[level].latency_s + chunk / UniformRate(level, chunk));
  }
  return t;
}

double Collectives::Gather(double bytes, const GroupSpan& g) const {
  if (g.size <= 1 || bytes <= 0) return 0;
  return GatherTime(bytes, g.size, Latency(g), RingBandwidth(g, bytes));
}

double Collectives::Hierarchical(double bytes, const GroupSpan& g) const {
  if (g.level == 0 || g.inner <= 1 || g.inner >= g.size) return Ring(bytes, g);
  // The members inside one domain of the level below, placed as they sit (a rack's 136
  // members still span 34 nodes).
  const GroupSpan inner = Place(g.inner, g.stride);
  // Domains need not hold equal shares (256 ranks over racks of 136): ceil.
  GroupSpan outer{(g.size + g.inner - 1) / g.inner, g.level, 1, g.stride * g.inner};
  return Gather(bytes, inner) + std::min(Ring(bytes / g.inner, outer), Tree(bytes / g.inner, outer)) +
         Gather(bytes, inner);
}

double Collectives::Torus2D(double bytes, const GroupSpan& g) const {
  const auto& levels = hw_.levels();
  if (g.level > 0 && !levels[g.level].torus_dims.empty()) return TorusDims(bytes, g);
  // A logical 2-D torus on a switched level (Mikami et al. 2018): sqrt factoring.
  int x = static_cast<int>(std::sqrt(static_cast<double>(g.size)));
  while (x > 1 && g.size % x != 0) --x;
  if (x <= 1) return Ring(bytes, g);
  const int y = g.size / x;
  GroupSpan gx{x, g.level, 1};
  GroupSpan gy{y, g.level, 1};
  return Gather(bytes, gx) + Ring(bytes / x, gy) + Gather(bytes, gx);
}

double Collectives::TorusDims(double bytes, const GroupSpan& g) const {
  // Dimension-wise all-reduce on a physical torus (the TPU / Blue Gene pattern): reduce-
  // scatter inside each vertex, then along x on bytes/inner, along y on what x left, ...
  // each a bidirectional ring on its own links; then the mirror all-gathers. The buffer
  // is split over the D dimensions used, each share starting on a different one, so all
  // 2D links carry traffic at once (the multi-dimensional rings of TPU pods; Jouppi et
  // al. ISCA'23): the bandwidth term is shared D ways, the latency steps are not.
  const NetworkRates& l = hw_.levels()[g.level];
  double t = 0;
  double rest = bytes;
  if (g.inner > 1) {
    const GroupSpan inner = Place(g.inner, g.stride);
    t += 2 * Gather(bytes, inner);
    rest = bytes / g.inner;
  }
  int64_t vertices = std::max(1, g.size / std::max(1, g.inner));
  const int64_t hop = TorusHop(g.level, g);
  // Skip the dimensions the stride jumps over whole.
  int64_t skip = std::max<int64_t>(1, ClusterStride(g) / hw_.levels()[g.level - 1].domain_size) / hop;
  const double per_link = l.BytesPerS(rest);
  double latency = 0, transfer = 0;
  int used = 0;
  bool first = true;
  for (int d : l.torus_dims) {
    if (vertices <= 1) break;
    if (skip >= d && d > 0) {
      skip /= d;
      continue;
    }
    const int64_t h = first ? hop : 1;
    const int64_t k = std::min<int64_t>(vertices, std::max<int64_t>(1, d / h));
    first = false;
    if (k <= 1) continue;
    const double rate = 2 * per_link * g.inner / (h * active_[g.level]);
    latency += 2 * (k - 1) * l.latency_s * h;
    transfer += 2.0 * (k - 1) / k * rest / rate;
    ++used;
    rest /= k;
    vertices = (vertices + k - 1) / k;
  }
  t += latency + transfer / std::max(1, used);
  if (vertices > 1) t += Ring(rest, GroupSpan{static_cast<int>(vertices), g.level, 1, g.stride, g.spread});
  return t;
}

double Collectives::AllReduce(double bytes, const GroupSpan& g, CollectiveAlgorithm algo,
                              CollectiveAlgorithm* used) const {
  if (used != nullptr) *used = algo == CollectiveAlgorithm::kAuto ? CollectiveAlgorithm::kRing : algo;
  if (g.size <= 1 || bytes <= 0) return 0;
  const double call = hw_.collective_overhead_s();
  switch (algo) {
    case CollectiveAlgorithm::kRing:
      return call + Ring(bytes, g);
    case CollectiveAlgorithm::kTree:
      return call + Tree(bytes, g);
    case CollectiveAlgorithm::kHalvingDoubling:
      return call + HalvingDoubling(bytes, g);
    case CollectiveAlgorithm::kHierarchical:
      return call + Hierarchical(bytes, g);
    case CollectiveAlgorithm::kTorus2D:
      return call + Torus2D(bytes, g);
    case CollectiveAlgorithm::kTopoHalvingDoubling:
      return call + HalvingDoublingSteps(bytes, g, true);
    case CollectiveAlgorithm::kAuto:
      break;
  }
  // What NCCL's tuner chooses: inside one NVLink domain only rings (its trees are built
  // across nodes); across nodes the cheaper of ring, double binary tree and the
  // node-aware hierarchical form by message size. A torus level uses the 2D torus
  // algorithm; halving-doubling only when asked (it suffers contention on real fabrics).
  const auto& levels = hw_.levels();
  // In-network reduction (NVLink SHARP / NCCL NVLS, InfiniBand SHARP) when every level
  // the group uses reduces in its switches: each rank sends its buffer into the switch
  // and receives the reduced result once, one latency each way (NVIDIA NCCL 2.17+ NVLS).
  // Ring, tree and in-network reduction share one step latency and one ring rate.
  const double latency = Latency(g);
  const double bw = RingBandwidth(g, bytes);
  using A = CollectiveAlgorithm;
  std::pair<double, A> best{RingTime(bytes, g.size, latency, bw), A::kRing};
  // Two ranks: in-network reduction takes what the ring does and a tree twice its
  // bandwidth term (the pipeline's embedding pair, every candidate); only a torus differs.
  if (g.size == 2 && (g.level == 0 || (levels[g.level].topology != Topology::kTorus2D &&
                                        levels[g.level].topology != Topology::kTorus3D))) {
    return call + best.first;
  }
  const double in_network = !levels.empty() && reduces_in_network_[g.level] ? 2 * latency + bytes / bw
                                                                           : std::numeric_limits<double>::infinity();
  auto consider = [&best](double t, A a) {
    if (t < best.first) best = {t, a};
  };
  // In-network reduction is reported as the ring it replaces (no separate algorithm).
  consider(in_network, A::kRing);
  if (g.level > 0) {
    consider(TreeTime(bytes, g.size, latency, bw), A::kTree);
    if (g.inner > 1 && g.inner < g.size) consider(Hierarchical(bytes, g), A::kHierarchical);
    const NetworkRates& l = levels[g.level];
    if (l.topology == Topology::kTorus2D || l.topology == Topology::kTorus3D) consider(Torus2D(bytes, g), A::kTorus2D);
  }
  if (used != nullptr) *used = best.second;
  return call + best.first;
}

double Collectives::AllGather(double bytes, const GroupSpan& g) const {
  if (g.size <= 1 || bytes <= 0) return 0;
  return hw_.collective_overhead_s() + Gather(bytes, g);
}

void Collectives::GatherAndScatter(double gather_bytes, double scatter_bytes, const GroupSpan& g, double* gather_s,
                                   double* scatter_s) const {
  *gather_s = *scatter_s = 0;
  if (g.size <= 1) return;
  const double call = hw_.collective_overhead_s();
  const double latency = Latency(g);
  const bool sized = !sized_.empty() && sized_[g.level];
  const double bw = RingBandwidth(g, gather_bytes);
  if (gather_bytes > 0) *gather_s = call + GatherTime(gather_bytes, g.size, latency, bw);
  if (scatter_bytes > 0) {
    *scatter_s = call + GatherTime(scatter_bytes, g.size, latency, sized ? RingBandwidth(g, scatter_bytes) : bw);
  }
}

double Collectives::AllToAll(double bytes, const GroupSpan& g) const {
  if (g.size <= 1 || bytes <= 0) return 0;
  const auto& levels = hw_.levels();
  const double p = g.size;
  const double call = hw_.collective_overhead_s();
  if (g.level == 0 || levels.empty()) {
    return call + (p - 1) * Latency(g) + (p - 1) / p * bytes / RingBandwidth(g, bytes);
  }
  // Traffic to members in the same inner domain rides the inner level; the rest
  // crosses `level` on this GPU's share of it.
  const double intra = bytes * (g.inner - 1) / p / UniformRate(g.level - 1, bytes);
  const double inter = bytes * (p - g.inner) / p / UniformRate(g.level, bytes);
  return call + (p - 1) * Latency(g) + std::max(intra, inter);
}

namespace {

// The chance that a token's `copies` experts all miss a given one of `parts` equal shares
// of `experts`: distinct experts, drawn without replacement (C(E - E/parts, k) / C(E, k));
// each copy drawn independently where `experts` is 0 (or fewer than the copies).
double MissesShare(double copies, double experts, double parts) {
  if (experts < copies) return std::pow(1 - 1 / parts, copies);
  const double elsewhere = experts - experts / parts;
  if (elsewhere < copies) return 0;
  if (copies > 64) {  // the same ratio of factorials, in constant time for wide top-k
    return std::exp(std::lgamma(elsewhere + 1) - std::lgamma(elsewhere - copies + 1) - std::lgamma(experts + 1) +
                    std::lgamma(experts - copies + 1));
  }
  double miss = 1;
  for (double i = 0; i < copies; ++i) miss *= (elsewhere - i) / (experts - i);
  return miss;
}

// The chance that a token misses a given one of `parts` equal contiguous shares of the
// experts. Under group-limited routing the token's router picks group_topk of the groups
// (taken as any group_topk equally likely) and then its copies among the picked groups'
// experts (the `pool`, drawn without replacement). A share holding whole groups is missed
// when j of its groups are picked (hypergeometric) and the copies avoid those j; a share
// of one group, when the group is not picked or the copies avoid the share. Shares that
// neither hold whole groups nor divide one are taken as unlimited.
double MissesPart(const TokenSpread& s, double parts) {
  const double groups = s.groups, picked = s.group_topk, experts = s.experts, k = s.copies;
  if (groups <= 0 || picked <= 0 || experts <= 0 ||
      (std::fmod(groups, parts) != 0 && std::fmod(parts, groups) != 0)) {
    return MissesShare(k, experts, parts);
  }
  const double pool = picked * experts / groups;
  if (parts > groups) return (1 - picked / groups) + picked / groups * MissesShare(k, pool, pool * parts / experts);
  const double held = groups / parts;  // groups in the share
  auto log_choose = [](double n, double r) { return std::lgamma(n + 1) - std::lgamma(r + 1) - std::lgamma(n - r + 1); };
  double miss = 0;
  for (double j = std::max(0.0, picked - (groups - held)); j <= std::min(held, picked); ++j) {
    const double p_j = std::exp(log_choose(held, j) + log_choose(groups - held, picked - j) - log_choose(groups, picked));
    miss += p_j * (j == 0 ? 1.0 : MissesShare(k, pool, pool / (j * experts / groups)));
  }
  return miss;
}

}  // namespace

Collectives::DedupFlows Collectives::DedupAllToAllFlows(double bytes, const TokenSpread& spread,
                                                        const GroupSpan& g) const {
  DedupFlows f;
  if (g.size <= 1 || bytes <= 0 || spread.copies <= 0) return f;
  const double p = g.size;
  const double tokens = bytes / spread.copies;  // one copy of each token
  // A given rank of the group receives a token with probability `hit`, and then once,
  // however many of its experts it holds.
  const double hit = 1 - MissesPart(spread, p);
  if (g.level == 0) {
    f.to_rank = tokens * hit;
    return f;
  }
  // Another domain is sent a token once when its experts are touched; inside the domain
  // each rank hit gets it once, its own GPU's tokens and those it forwards for the other
  // domains' ranks: tokens x hit x p / inner to each other rank of the node.
  f.to_node = tokens * (1 - MissesPart(spread, p / g.inner));
  f.to_rank = tokens * hit * p / g.inner;
  return f;
}

double Collectives::DedupAllToAll(double bytes, const TokenSpread& spread, const GroupSpan& g,
                                  DedupFlows* flows) const {
  if (flows != nullptr) *flows = {};
  if (g.size <= 1 || bytes <= 0) return 0;
  if (hw_.levels().empty() || spread.copies <= 1) return AllToAll(bytes, g);
  const DedupFlows f = DedupAllToAllFlows(bytes, spread, g);
  if (flows != nullptr) *flows = f;
  // The kernels receive, inside the NVLink domain, no faster than their few SMs move
  // tokens (Hardware::ep_dispatch_bytes_per_s; its own tokens counted): below the link's
  // rate on Hopper and Blackwell.
  const double kernel = hw_.ep_dispatch_bytes_per_s();
  if (g.level == 0) {
    const double received = f.to_rank * g.size;
    const double link_s = AllToAll(received, g);
    if (kernel <= 0) return link_s;
    return std::max(link_s, hw_.collective_overhead_s() + (g.size - 1) * Latency(g) + received / kernel);
  }
  const double domains = g.size / g.inner;
  const double inter = (domains - 1) * f.to_node / UniformRate(g.level, bytes);
  double intra = (g.inner - 1) * f.to_rank / UniformRate(g.level - 1, bytes);
  if (kernel > 0) intra = std::max(intra, g.inner * f.to_rank / kernel);
  // Two phases (send, forward), each one kernel over every peer at once.
  return hw_.collective_overhead_s() + 2 * Latency(g) + std::max(intra, inter);
}

// NCCL's channels (one thread block each) for a ring. Inside an H100 node an all-gather
// runs 24 (measured, docs/microbench/h100_overlap_interference.jsonl's note); a
// communicator with one rank per node runs 2 (NCCL's "Channel 00/02", "01/02" in the
// logs of localRanks 1 communicators), doubled on Hopper and later (nccl
// src/graph/connect.cc: "4 compute channels per search channel to reach peak BW on
// <8 PPN"). With k ranks a node, each rank's NIC is taken to carry the rings one rank's
// does: k times as many channels, up to a node-wide ring's (an interpolation between
// those two ends, so that a second rank a node does not jump to a whole node's share).
// Beside a GEMM, blocks holding SMs slow it by ~1.2x their share of the SMs
// (8 of 132: 0.07; 24: 0.14-0.18), so the interference scales with the channels.
constexpr double kNodeRingChannels = 24;
constexpr double kOneRankPerNodeChannels = 4;

double Collectives::SmShare(const GroupSpan& g) const {
  if (g.size <= 1 || g.level < 1 || g.inner < 1) return 1.0;
  return std::min(1.0, kOneRankPerNodeChannels * g.inner / kNodeRingChannels);
}

double Collectives::SendRecv(double bytes, int level) const {
  const auto& levels = hw_.levels();
  if (bytes <= 0 || levels.empty()) return 0;
  level = std::clamp(level, 0, static_cast<int>(levels.size()) - 1);
  // Every pair of the dimension sends at once: the level's share under the job's load
  // (a torus neighbour has its own link).
  const double rate = levels[level].BytesPerS(bytes) * (shape_[level] == Shape::kTorus ? 1.0 : relief_[level]);
  return hw_.collective_overhead_s() + levels[level].latency_s + bytes / rate;
}

}  // namespace paraplan
