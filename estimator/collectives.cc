#include "estimator/collectives.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace paraplan {

namespace {
double Log2Ceil(int v) { return std::ceil(std::log2(std::max(1, v))); }
}  // namespace

GroupSpan Collectives::Place(int size, int64_t stride) const {
  GroupSpan g;
  g.size = std::max(1, size);
  g.stride = std::max<int64_t>(1, stride);
  const auto& levels = hw_.levels();
  if (g.size == 1 || levels.empty()) {
    g.inner = g.size;
    return g;
  }
  const int64_t extent = int64_t{g.size} * std::max<int64_t>(1, stride);
  int level = static_cast<int>(levels.size()) - 1;
  for (size_t i = 0; i < levels.size(); ++i) {
    if (levels[i].domain_size >= extent) {
      level = static_cast<int>(i);
      break;
    }
  }
  g.level = level;
  if (level == 0) {
    g.inner = g.size;
  } else {
    const int64_t inner_domain = levels[level - 1].domain_size;
    g.inner = stride >= inner_domain
                  ? 1
                  : static_cast<int>(std::min<int64_t>(g.size, inner_domain / std::max<int64_t>(1, stride)));
  }
  return g;
}

int Collectives::LevelOfStride(int64_t stride) const {
  const auto& levels = hw_.levels();
  for (size_t i = 0; i < levels.size(); ++i) {
    if (levels[i].domain_size > stride) return static_cast<int>(i);
  }
  return levels.empty() ? 0 : static_cast<int>(levels.size()) - 1;
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
        i == g.level ? g.inner : std::min<int64_t>(g.size, std::max<int64_t>(1, levels[i - 1].domain_size / g.stride));
    bw = std::min(bw, levels[i].BytesPerS(bytes) * std::max<int64_t>(1, members));
  }
  return bw;
}

double Collectives::Latency(const GroupSpan& g) const {
  const auto& levels = hw_.levels();
  return levels.empty() ? 0 : levels[g.level].latency_s;
}

double Collectives::Ring(double bytes, const GroupSpan& g) const {
  const double p = g.size;
  return 2 * (p - 1) * Latency(g) + 2 * (p - 1) / p * bytes / RingBandwidth(g, bytes);
}

double Collectives::Tree(double bytes, const GroupSpan& g) const {
  return 2 * Log2Ceil(g.size) * Latency(g) + 2 * bytes / RingBandwidth(g, bytes);
}

double Collectives::HalvingDoubling(double bytes, const GroupSpan& g) const {
  const double p = g.size;
  return 2 * Log2Ceil(g.size) * Latency(g) + 2 * (p - 1) / p * bytes / RingBandwidth(g, bytes);
}

double Collectives::Gather(double bytes, const GroupSpan& g) const {
  if (g.size <= 1 || bytes <= 0) return 0;
  const double p = g.size;
  return (p - 1) * Latency(g) + (p - 1) / p * bytes / RingBandwidth(g, bytes);
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
  int x = static_cast<int>(std::sqrt(static_cast<double>(g.size)));
  while (x > 1 && g.size % x != 0) --x;
  if (x <= 1) return Ring(bytes, g);
  const int y = g.size / x;
  GroupSpan gx{x, g.level, 1};
  GroupSpan gy{y, g.level, 1};
  return Gather(bytes, gx) + Ring(bytes / x, gy) + Gather(bytes, gx);
}

double Collectives::AllReduce(double bytes, const GroupSpan& g, CollectiveAlgorithm algo) const {
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
  double in_network = std::numeric_limits<double>::infinity();
  if (!levels.empty()) {
    bool all = true;
    for (int i = 0; i <= g.level; ++i) all = all && levels[i].in_network_reduction;
    if (all) in_network = 2 * Latency(g) + bytes / RingBandwidth(g, bytes);
  }
  if (g.level == 0) return call + std::min(Ring(bytes, g), in_network);
  double best = std::min({Ring(bytes, g), Tree(bytes, g), in_network});
  if (g.inner > 1 && g.inner < g.size) best = std::min(best, Hierarchical(bytes, g));
  if (!levels.empty() && levels[g.level].topology == Topology::kTorus2D) {
    best = std::min(best, Torus2D(bytes, g));
  }
  return call + best;
}

double Collectives::AllGather(double bytes, const GroupSpan& g) const {
  if (g.size <= 1 || bytes <= 0) return 0;
  return hw_.collective_overhead_s() + Gather(bytes, g);
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
  const double intra = bytes * (g.inner - 1) / p / levels[g.level - 1].BytesPerS(bytes);
  const double inter = bytes * (p - g.inner) / p / levels[g.level].BytesPerS(bytes);
  return call + (p - 1) * Latency(g) + std::max(intra, inter);
}

double Collectives::SendRecv(double bytes, int level) const {
  const auto& levels = hw_.levels();
  if (bytes <= 0 || levels.empty()) return 0;
  level = std::clamp(level, 0, static_cast<int>(levels.size()) - 1);
  return hw_.collective_overhead_s() + levels[level].latency_s + bytes / levels[level].BytesPerS(bytes);
}

}  // namespace paraplan
