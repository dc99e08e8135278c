#include "sim/collective_flows.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace paraplan::sim {

namespace {

using Members = std::vector<int64_t>;

// NCCL-style rings over `m`: one channel per member a node holds (the node's members
// rotated by the channel index, so each channel leaves a node through another GPU's
// NIC), each run in both directions. `steps` steps, each moving `chunk` bytes of the
// whole buffer (split over channels and directions) to the next member.
void AddRingSteps(const Members& m, int gpn, int steps, double chunk, GroupProgram* out) {
  const size_t p = m.size();
  if (p <= 1 || steps <= 0) return;
  std::vector<Members> nodes;  // members by node, in ring order
  for (int64_t g : m) {
    if (nodes.empty() || nodes.back().front() / gpn != g / gpn) nodes.push_back({});
    nodes.back().push_back(g);
  }
  size_t channels = 1;
  for (const Members& n : nodes) channels = std::max(channels, n.size());
  if (nodes.size() == 1) channels = 1;  // inside one node: one ring (NVLink is a crossbar)
  std::vector<Members> rings;
  for (size_t c = 0; c < channels; ++c) {
    Members order;
    for (const Members& n : nodes) {
      for (size_t i = 0; i < n.size(); ++i) order.push_back(n[(i + c) % n.size()]);
    }
    rings.push_back(order);
  }
  const double piece = chunk / static_cast<double>(channels) / 2;
  const int emitted = std::min(steps, kMaxRingSteps);
  for (int s = 0; s < emitted; ++s) {
    Step step;
    step.latencies = steps / emitted + (s < steps % emitted ? 1 : 0);
    const double bytes = piece * step.latencies;
    for (const Members& r : rings) {
      for (size_t i = 0; i < p; ++i) {
        step.flows.push_back({r[i], r[(i + 1) % p], bytes});
        step.flows.push_back({r[i], r[(i + p - 1) % p], bytes});
      }
    }
    out->steps.push_back(std::move(step));
  }
}

// Merges programs that run at once, step by step (a merged step ends with its slowest).
void MergeInto(const std::vector<GroupProgram>& parts, GroupProgram* out) {
  size_t longest = 0;
  for (const GroupProgram& g : parts) longest = std::max(longest, g.steps.size());
  for (size_t s = 0; s < longest; ++s) {
    Step merged;
    for (const GroupProgram& g : parts) {
      if (s >= g.steps.size()) continue;
      merged.flows.insert(merged.flows.end(), g.steps[s].flows.begin(), g.steps[s].flows.end());
      merged.latencies = std::max(merged.latencies, g.steps[s].latencies);
    }
    out->steps.push_back(std::move(merged));
  }
}

// Rings over each member list at once (one phase of a hierarchical or torus algorithm),
// merged step by step into `out`.
void AddRingPhase(const std::vector<Members>& rings, int gpn, int steps, double chunk, GroupProgram* out) {
  std::vector<GroupProgram> parts(rings.size());
  for (size_t r = 0; r < rings.size(); ++r) AddRingSteps(rings[r], gpn, steps, chunk, &parts[r]);
  MergeInto(parts, out);
}

void RingAllReduce(const Members& m, int gpn, double bytes, GroupProgram* out) {
  const int p = static_cast<int>(m.size());
  AddRingSteps(m, gpn, 2 * (p - 1), bytes / p, out);
}

void RingGather(const Members& m, int gpn, double bytes, GroupProgram* out) {
  const int p = static_cast<int>(m.size());
  AddRingSteps(m, gpn, p - 1, bytes / p, out);
}

// NCCL's double binary tree (Sanders et al. 2009), pipelined: two complementary trees
// each reduce half the buffer up and broadcast it down; the pipeline moves 1/depth of
// it across every edge per step, so each phase is depth steps of depth-th shares:
// 2 ceil(log2 P) latencies + 2 N/B, the analytic Tree's structure. Across nodes with k
// members each, channel c runs the trees between the nodes' c-th members on N/k and
// the node's other members feed it over NVLink (NCCL's per-channel trees).
void DoubleBinaryTree(const Members& m, int gpn, double bytes, GroupProgram* out) {
  const size_t p = m.size();
  std::map<int64_t, Members> by_node;
  for (int64_t g : m) by_node[g / gpn].push_back(g);
  size_t k = by_node.begin()->second.size();
  for (const auto& [node, members] : by_node) {
    if (members.size() != k) k = 0;
  }
  std::vector<Members> nodes;
  if (by_node.size() <= 1 || k <= 1) {
    k = 1;  // one tree over the members themselves
    for (int64_t g : m) nodes.push_back({g});
  } else {
    for (const auto& [node, members] : by_node) nodes.push_back(members);
  }
  const size_t n = nodes.size();
  const int depth = std::max(1, static_cast<int>(std::ceil(std::log2(static_cast<double>(p)))));
  const double share = bytes / static_cast<double>(k) / depth;  // one channel, one step
  Step up, down;
  for (size_t c = 0; c < k; ++c) {
    for (int tree = 0; tree < 2; ++tree) {
      auto at = [&](size_t i) { return nodes[tree == 0 ? i : n - 1 - i][c]; };
      for (size_t i = 1; i < n; ++i) {
        const size_t parent = (i - 1) / 2;
        up.flows.push_back({at(i), at(parent), share / 2});
        down.flows.push_back({at(parent), at(i), share / 2});
      }
    }
    if (k > 1) {
      for (const Members& node : nodes) {
        for (size_t j = 0; j < k; ++j) {
          if (j == c) continue;
          up.flows.push_back({node[j], node[c], share});
          down.flows.push_back({node[c], node[j], share});
        }
      }
    }
  }
  for (int s = 0; s < depth; ++s) out->steps.push_back(up);
  for (int s = 0; s < depth; ++s) out->steps.push_back(down);
}

// Rabenseifner: recursive-halving reduce-scatter then recursive-doubling all-gather;
// the topology-aware order pairs the nearest members for the largest exchanges.
void HalvingDoubling(const Members& m, double bytes, bool innermost_first, GroupProgram* out) {
  const size_t p = m.size();
  const int steps = static_cast<int>(std::lround(std::log2(static_cast<double>(p))));
  std::vector<Step> rs;
  for (int k = 1; k <= steps; ++k) {
    const size_t distance = innermost_first ? size_t{1} << (k - 1) : size_t{1} << (steps - k);
    const double chunk = bytes / static_cast<double>(size_t{1} << k);
    Step s;
    for (size_t i = 0; i < p; ++i) s.flows.push_back({m[i], m[i ^ distance], chunk});
    rs.push_back(s);
  }
  for (const Step& s : rs) out->steps.push_back(s);
  for (auto it = rs.rbegin(); it != rs.rend(); ++it) out->steps.push_back(*it);
}

// Inner rings inside each node, an all-reduce ring across nodes per local position on
// bytes / inner, then the inner all-gather (Horovod / NCCL hierarchical form).
bool Hierarchical(const Members& m, int gpn, double bytes, GroupProgram* out) {
  std::map<int64_t, Members> by_node;
  for (int64_t g : m) by_node[g / gpn].push_back(g);
  const size_t inner = by_node.begin()->second.size();
  for (const auto& [node, members] : by_node) {
    if (members.size() != inner) return false;
  }
  if (inner <= 1 || by_node.size() <= 1) return false;
  std::vector<Members> in_node, across(inner);
  for (const auto& [node, members] : by_node) {
    in_node.push_back(members);
    for (size_t i = 0; i < inner; ++i) across[i].push_back(members[i]);
  }
  const int n = static_cast<int>(by_node.size());
  const int k = static_cast<int>(inner);
  AddRingPhase(in_node, gpn, k - 1, bytes / k, out);
  AddRingPhase(across, gpn, 2 * (n - 1), bytes / k / n, out);
  AddRingPhase(in_node, gpn, k - 1, bytes / k, out);
  return true;
}

// Logical 2-D torus: reduce-scatter along rows of x members, all-reduce the columns on
// bytes / x, all-gather along rows (Mikami et al. 2018); x = the largest divisor <= sqrt.
bool Torus2D(const Members& m, int gpn, double bytes, GroupProgram* out) {
  const size_t p = m.size();
  size_t x = static_cast<size_t>(std::sqrt(static_cast<double>(p)));
  while (x > 1 && p % x != 0) --x;
  if (x <= 1) return false;
  const size_t y = p / x;
  std::vector<Members> rows(y), cols(x);
  for (size_t i = 0; i < p; ++i) {
    rows[i / x].push_back(m[i]);
    cols[i % x].push_back(m[i]);
  }
  AddRingPhase(rows, gpn, static_cast<int>(x) - 1, bytes / x, out);
  AddRingPhase(cols, gpn, 2 * (static_cast<int>(y) - 1), bytes / x / y, out);
  AddRingPhase(rows, gpn, static_cast<int>(x) - 1, bytes / x, out);
  return true;
}

// Dimension-wise all-reduce on a physical torus (the TPU / Blue Gene pattern, as the
// analytic TorusDims): reduce-scatter inside each vertex, then along each torus
// dimension the group spans, then the mirror all-gathers; the buffer is split over the
// D dimensions used, share s starting on dimension s, so all of them carry traffic at
// once; each share runs at its own pace (a branch), as the analytic model's bandwidth
// term shared D ways assumes. Lines along a dimension are the members that differ only in that coordinate,
// in coordinate order (spaced hop vertices apart where the stride skips vertices).
bool TorusDims(const Members& m, const FlowTopology& topo, double bytes, GroupProgram* out) {
  if (topo.torus_dims.empty() || topo.torus_vertex_gpus <= 0) return false;
  const int64_t vertex_gpus = topo.torus_vertex_gpus;
  std::map<int64_t, Members> by_vertex;
  for (int64_t g : m) by_vertex[g / vertex_gpus].push_back(g);
  const size_t inner = by_vertex.begin()->second.size();
  for (const auto& [v, members] : by_vertex) {
    if (members.size() != inner) return false;
  }
  if (by_vertex.size() <= 1) return false;
  const size_t dims = topo.torus_dims.size();
  auto coords = [&](int64_t v) {
    std::vector<int64_t> c(dims);
    for (size_t d = 0; d < dims; ++d) {
      const int64_t k = std::max(1, topo.torus_dims[d]);
      c[d] = v % k;
      v /= k;
    }
    return c;
  };
  // Lines per dimension over the vertices (keyed by the other coordinates).
  std::vector<std::vector<std::vector<int64_t>>> lines(dims);  // vertex lists
  std::vector<size_t> used;
  for (size_t d = 0; d < dims; ++d) {
    std::map<std::vector<int64_t>, std::map<int64_t, int64_t>> by_rest;  // rest -> coord -> vertex
    for (const auto& [v, members] : by_vertex) {
      std::vector<int64_t> c = coords(v);
      const int64_t at = c[d];
      c[d] = -1;
      by_rest[c][at] = v;
    }
    for (const auto& [rest, line] : by_rest) {
      std::vector<int64_t> order;
      for (const auto& [at, v] : line) order.push_back(v);
      lines[d].push_back(std::move(order));
    }
    if (!lines[d].empty() && lines[d].front().size() > 1) used.push_back(d);
  }
  if (used.empty()) return false;
  double rest = bytes;
  if (inner > 1) {
    std::vector<Members> in_vertex;
    for (const auto& [v, members] : by_vertex) in_vertex.push_back(members);
    AddRingPhase(in_vertex, topo.gpus_per_node, static_cast<int>(inner) - 1, bytes / inner, out);
    rest = bytes / inner;
  }
  // Per share: the reduce-scatter passes over the used dimensions from its own first,
  // then the all-gathers in reverse; each pass is rings along that dimension's lines,
  // one per member position inside the vertex.
  std::vector<GroupProgram> shares(used.size());
  for (size_t s = 0; s < used.size(); ++s) {
    std::vector<GroupProgram> passes;
    double share = rest / used.size();
    for (size_t i = 0; i < used.size(); ++i) {
      const size_t d = used[(s + i) % used.size()];
      std::vector<Members> rings;
      for (const std::vector<int64_t>& line : lines[d]) {
        for (size_t j = 0; j < inner; ++j) {
          Members ring;
          for (int64_t v : line) ring.push_back(by_vertex[v][j]);
          rings.push_back(std::move(ring));
        }
      }
      const size_t k = lines[d].front().size();
      GroupProgram pass;
      AddRingPhase(rings, topo.gpus_per_node, static_cast<int>(k) - 1, share / k, &pass);
      passes.push_back(std::move(pass));
      share /= k;
    }
    for (const GroupProgram& pass : passes) shares[s].steps.insert(shares[s].steps.end(), pass.steps.begin(), pass.steps.end());
    for (auto it = passes.rbegin(); it != passes.rend(); ++it) {
      shares[s].steps.insert(shares[s].steps.end(), it->steps.begin(), it->steps.end());
    }
  }
  Step together;
  for (GroupProgram& share : shares) together.branches.push_back(std::move(share.steps));
  out->steps.push_back(std::move(together));
  if (inner > 1) {
    std::vector<Members> in_vertex;
    for (const auto& [v, members] : by_vertex) in_vertex.push_back(members);
    AddRingPhase(in_vertex, topo.gpus_per_node, static_cast<int>(inner) - 1, bytes / inner, out);
  }
  return true;
}

// DeepEP's dispatch as Collectives::DedupAllToAll prices it: one step in which each
// member sends `to_node` bytes to the member of the same local rank on every other node
// (RDMA) and `to_rank` to every other member of its node (its tokens and the forwarded
// ones), the two phases' latencies charged once each.
void DedupAllToAll(const Members& m, int gpn, double to_node, double to_rank, GroupProgram* out) {
  Step s;
  for (int64_t a : m) {
    for (int64_t b : m) {
      if (a == b) continue;
      if (a / gpn == b / gpn) {
        if (to_rank > 0) s.flows.push_back({a, b, to_rank});
      } else if (a % gpn == b % gpn && to_node > 0) {
        s.flows.push_back({a, b, to_node});
      }
    }
  }
  s.latencies = 2;
  out->steps.push_back(std::move(s));
}

}  // namespace

absl::StatusOr<std::vector<GroupProgram>> ExpandCollective(const SimCollective& op, const FlowTopology& topo,
                                                           int64_t max_flows) {
  const int gpn = std::max(1, topo.gpus_per_node);
  std::vector<GroupProgram> out;
  int64_t flows = 0;
  for (const Members& m : op.groups) {
    GroupProgram g;
    const size_t p = m.size();
    if (p <= 1 || op.bytes <= 0) {
      out.push_back(g);
      continue;
    }
    const bool pow2 = (p & (p - 1)) == 0;
    switch (op.kind) {
      case CollectiveKind::kAllReduce:
        switch (op.algorithm) {
          case CollectiveAlgorithm::kTree:
            DoubleBinaryTree(m, gpn, op.bytes, &g);
            break;
          case CollectiveAlgorithm::kHalvingDoubling:
          case CollectiveAlgorithm::kTopoHalvingDoubling:
            if (pow2) {
              HalvingDoubling(m, op.bytes, op.algorithm == CollectiveAlgorithm::kTopoHalvingDoubling, &g);
            } else {
              RingAllReduce(m, gpn, op.bytes, &g);
            }
            break;
          case CollectiveAlgorithm::kHierarchical:
            if (!Hierarchical(m, gpn, op.bytes, &g)) RingAllReduce(m, gpn, op.bytes, &g);
            break;
          case CollectiveAlgorithm::kTorus2D:
            if (!TorusDims(m, topo, op.bytes, &g) && !Torus2D(m, gpn, op.bytes, &g)) {
              RingAllReduce(m, gpn, op.bytes, &g);
            }
            break;
          default:
            RingAllReduce(m, gpn, op.bytes, &g);
            break;
        }
        break;
      case CollectiveKind::kAllGather:
      case CollectiveKind::kReduceScatter:
        RingGather(m, gpn, op.bytes, &g);
        break;
      case CollectiveKind::kAllToAll: {
        if (flows + static_cast<int64_t>(p * (p - 1)) > max_flows) break;  // refused below
        if (op.dedup_to_node_bytes > 0 || op.dedup_to_rank_bytes > 0) {
          DedupAllToAll(m, gpn, op.dedup_to_node_bytes, op.dedup_to_rank_bytes, &g);
          break;
        }
        Step s;
        for (size_t i = 0; i < p; ++i) {
          for (size_t j = 0; j < p; ++j) {
            if (i != j) s.flows.push_back({m[i], m[j], op.bytes / p});
          }
        }
        // One latency per peer, as the analytic (p - 1) alpha charges the sends' issue.
        s.latencies = static_cast<int>(p - 1);
        g.steps.push_back(std::move(s));
        break;
      }
      case CollectiveKind::kSendRecv: {
        Step s;
        for (size_t i = 0; i < (p == 2 ? 1 : p); ++i) s.flows.push_back({m[i], m[(i + 1) % p], op.bytes});
        g.steps.push_back(std::move(s));
        break;
      }
    }
    ForEachFlow(g.steps, [&flows](const Flow&) { ++flows; });
    if (op.kind == CollectiveKind::kAllToAll && g.steps.empty()) flows += static_cast<int64_t>(p * (p - 1));
    if (flows > max_flows) {
      return absl::InvalidArgumentError(
          absl::StrCat("the simulation would replay more than ", max_flows,
                       " point-to-point flows (the limit); simulate a smaller job (fewer GPUs or smaller groups)"));
    }
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace paraplan::sim
