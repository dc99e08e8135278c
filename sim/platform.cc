#include "sim/platform.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace paraplan::sim {

namespace sg4 = simgrid::s4u;

Platform::Platform(const SystemProfile& profile, const Hardware& hw, sg4::NetZone* zone)
    : zone_(zone), gpn_(std::max(1, profile.gpus_per_node)) {
  const std::vector<NetworkRates>& rates = hw.levels();
  for (size_t i = 0; i < rates.size() && i < profile.network_levels.size(); ++i) {
    const NetworkRates& r = rates[i];
    Level v;
    v.domain = std::max(1, r.domain_size);
    v.taper = std::max(1.0, r.oversubscription);
    // Hardware's bytes_per_s is the fully-loaded rate (bandwidth / taper x efficiency);
    // a GPU's own port runs untapered.
    v.port = r.bytes_per_s * v.taper;
    v.latency = r.latency_s;
    v.torus = (r.topology == Topology::kTorus2D || r.topology == Topology::kTorus3D) && !r.torus_dims.empty();
    v.dims = r.torus_dims;
    v.rail = r.rail_optimized;
    if (r.topology == Topology::kDragonfly && r.global_links_per_group > 0 && i > 0) {
      // Direct links between two groups: the group's global links spread evenly over
      // the other groups, at least one (Kim et al. ISCA'08).
      const double groups = std::max(1.0, static_cast<double>(rates.back().domain_size) / rates[i - 1].domain_size);
      v.pair = std::max(1.0, r.global_links_per_group / std::max(1.0, groups - 1)) * r.global_link_bytes_per_s;
    }
    levels_.push_back(v);
  }
  if (levels_.empty()) levels_.push_back(Level{});
}

sg4::Host* Platform::HostOf(int64_t gpu) {
  auto it = hosts_.find(gpu);
  if (it != hosts_.end()) return it->second;
  sg4::Host* h = zone_->create_host(absl::StrCat("gpu", gpu), 1e9)->seal();
  hosts_[gpu] = h;
  return h;
}

void Platform::AddRoute(int64_t a, int64_t b) {
  if (a == b || !routed_.emplace(std::make_pair(a, b), ComputeLatency(a, b)).second) return;
  std::vector<sg4::LinkInRoute> path;
  for (sg4::Link* l : Path(a, b)) path.emplace_back(l);
  zone_->add_route(HostOf(a)->get_netpoint(), HostOf(b)->get_netpoint(), nullptr, nullptr, path, false);
}

double Platform::RouteLatency(int64_t a, int64_t b) const {
  const auto it = routed_.find({a, b});
  return it != routed_.end() ? it->second : ComputeLatency(a, b);
}

double Platform::ComputeLatency(int64_t a, int64_t b) const {
  if (a == b) return 0;
  const size_t top = TopLevel(a, b);
  const Level& l = levels_[top];
  if (top > 0 && l.torus) {
    const int64_t vertex = levels_[top - 1].domain;
    return l.latency * static_cast<double>(std::max<size_t>(1, TorusRoute(top, a / vertex, b / vertex).size()));
  }
  return l.latency;
}

std::vector<std::string> Platform::RouteLinks(int64_t a, int64_t b) {
  std::vector<std::string> names;
  for (sg4::Link* l : Path(a, b)) names.push_back(l->get_name());
  return names;
}

sg4::Link* Platform::Make(const std::string& name, double bytes_per_s) {
  auto it = links_.find(name);
  if (it != links_.end()) return it->second;
  // Zero latency: see the header (CM02 shares by route latency otherwise).
  sg4::Link* l = zone_->create_link(name, std::max(1.0, bytes_per_s))->set_latency(0)->seal();
  links_[name] = l;
  return l;
}

size_t Platform::TopLevel(int64_t a, int64_t b) const {
  for (size_t i = 0; i < levels_.size(); ++i) {
    if (a / levels_[i].domain == b / levels_[i].domain) return i;
  }
  return levels_.size() - 1;
}

std::vector<Platform::Hop> Platform::TorusRoute(size_t level, int64_t u, int64_t v) const {
  std::vector<Hop> hops;
  const Level& t = levels_[level];
  int64_t cur = u, stride = 1;
  for (size_t d = 0; d < t.dims.size(); ++d) {
    const int64_t k = std::max(1, t.dims[d]);
    int64_t c = (cur / stride) % k;
    const int64_t target = (v / stride) % k;
    const int64_t delta = ((target - c) % k + k) % k;
    // Ties (the destination half-way round) alternate with the source's coordinate
    // parity, so that exchanges between opposite vertices use both directions (as
    // adaptive torus routers spread them); deterministic.
    const bool forward = 2 * delta < k || (2 * delta == k && c % 2 == 0);
    for (int64_t h = forward ? delta : k - delta; h > 0; --h) {
      hops.push_back({cur, d, forward});
      const int64_t next = forward ? (c + 1) % k : (c + k - 1) % k;
      cur += (next - c) * stride;
      c = next;
    }
    stride *= k;
  }
  return hops;
}

std::vector<sg4::Link*> Platform::Path(int64_t a, int64_t b) {
  std::vector<sg4::Link*> path;
  const double nvlink = levels_[0].port;
  const size_t top = TopLevel(a, b);
  if (top == 0) return {Make(absl::StrCat("nvo", a), nvlink), Make(absl::StrCat("nvi", b), nvlink)};
  const Level& t = levels_[top];
  if (top == 1 && t.torus) {
    // The node is the torus vertex: GPUs reach its router over their NVLink ports.
    const int64_t vertex = levels_[0].domain;
    path.push_back(Make(absl::StrCat("nvo", a), nvlink));
    for (const Hop& h : TorusRoute(top, a / vertex, b / vertex)) {
      path.push_back(Make(absl::StrCat("t", top, "_", h.vertex, "_", h.dim, h.forward ? "+" : "-"), t.port));
    }
    path.push_back(Make(absl::StrCat("nvi", b), nvlink));
    return path;
  }
  int64_t src = a;
  if (levels_[1].rail && a % gpn_ != b % gpn_) {
    // PXN: over NVLink to the node's GPU on the destination's rail, then its NIC.
    src = a / gpn_ * gpn_ + b % gpn_;
    path.push_back(Make(absl::StrCat("nvo", a), nvlink));
    path.push_back(Make(absl::StrCat("nvi", src), nvlink));
  }
  path.push_back(Make(absl::StrCat("nico", src), levels_[1].port));
  // Up out of src's domain of each level below `top` (and of top - 1 into a switched top).
  const size_t last_up = t.torus ? top - 1 : top;
  for (size_t i = 1; i <= last_up; ++i) {
    const int64_t d = src / levels_[i - 1].domain;
    path.push_back(Make(absl::StrCat("up", i, "_", d), levels_[i - 1].domain * levels_[i].port / levels_[i].taper));
  }
  const int64_t ga = src / levels_[top - 1].domain, gb = b / levels_[top - 1].domain;
  if (t.torus) {
    for (const Hop& h : TorusRoute(top, ga, gb)) {
      path.push_back(Make(absl::StrCat("t", top, "_", h.vertex, "_", h.dim, h.forward ? "+" : "-"), t.port));
    }
  } else if (t.pair > 0) {
    path.push_back(Make(absl::StrCat("gl", top, "_", ga, "_", gb), t.pair));
  }
  for (size_t i = last_up; i >= 1; --i) {  // down into b's domain of each level
    const int64_t d = b / levels_[i - 1].domain;
    path.push_back(Make(absl::StrCat("dn", i, "_", d), levels_[i - 1].domain * levels_[i].port / levels_[i].taper));
  }
  path.push_back(Make(absl::StrCat("nici", b), levels_[1].port));
  return path;
}

}  // namespace paraplan::sim
