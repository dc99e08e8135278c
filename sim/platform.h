// Platform: the profile's network as SimGrid hosts, links and routes, for the GPUs a
// simulation touches.
//
// Each GPU is a host. Level 0 (the NVLink / NVSwitch domain, the node) gives every GPU
// a port each way to a full crossbar. Above it, per level:
//  switched (switch, fat tree, ring, unknown): every GPU a NIC each way at the level-1
//    rate; every domain of level i - 1 an uplink and a downlink to level i of capacity
//    domain GPUs x rate(i) / taper(i) (a fat tree collapsed to one aggregate link per
//    domain and level: Leiserson 1985's capacity per level). Rail-optimised leaves: a
//    flow between different local ranks first crosses NVLink to the GPU of the
//    destination's rail (NCCL PXN), then leaves through that GPU's NIC.
//  torus (2-D / 3-D with torus_dims): the domains of the level below are vertices;
//    one link per neighbour, dimension and direction at the level's rate; dimension-
//    ordered routing, the shorter way round each ring (half-way: by the source
//    coordinate's parity, so opposite vertices use both directions). GPUs reach their vertex's router
//    over their level-0 ports.
//  dragonfly (global_links_per_group > 0): the domains below are groups; a group's
//    traffic leaves over its uplink, then the direct links of its group pair
//    (max(1, links / (groups - 1)) global links; minimal routing, no Valiant detour).
// Rates are Hardware's effective ones (calibrated efficiency and congestion applied;
// the size-dependent curve is applied per collective in simulate.cc). Links carry no
// latency: SimGrid's CM02 weights sharing by a flow's route latency (RTT unfairness);
// the per-level latency is returned by RouteLatency and charged once per step by the
// replay, as the alpha-beta model charges it.
//
// Build inside a SimGrid engine (simulate.cc's child process); not thread-safe.
#ifndef PARAPLAN_SIM_PLATFORM_H_
#define PARAPLAN_SIM_PLATFORM_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <simgrid/s4u.hpp>

#include "estimator/inputs/system_profile.h"
#include "estimator/system/hardware.h"

namespace paraplan::sim {

class Platform {
 public:
  // `zone` must be a full zone (routes are given host to host), not yet sealed.
  Platform(const SystemProfile& profile, const Hardware& hw, simgrid::s4u::NetZone* zone);

  simgrid::s4u::Host* HostOf(int64_t gpu);
  // Declares the route from GPU a to GPU b (idempotent); call before sealing the zone.
  void AddRoute(int64_t a, int64_t b);
  // One-way latency of a flow from a to b: the latency of the outermost level it
  // crosses (times the hops on a torus). 0 for a == b. Cached for declared routes.
  double RouteLatency(int64_t a, int64_t b) const;
  // Names of the links the route crosses, in order (for tests and diagnostics).
  std::vector<std::string> RouteLinks(int64_t a, int64_t b);

 private:
  struct Level {
    int64_t domain = 1;
    double port = 0;     // per GPU, one direction, before the taper
    double taper = 1;
    double latency = 0;
    double pair = 0;     // dragonfly: capacity of the direct links between two groups
    bool torus = false;
    bool rail = false;
    std::vector<int> dims;
  };

  simgrid::s4u::Link* Make(const std::string& name, double bytes_per_s);
  double ComputeLatency(int64_t a, int64_t b) const;
  // The first level whose domain holds both GPUs.
  size_t TopLevel(int64_t a, int64_t b) const;
  struct Hop {
    int64_t vertex;  // the vertex the hop leaves
    size_t dim;
    bool forward;
  };
  // Torus hops from vertex u to v: dimension-ordered, the shorter way round each ring.
  std::vector<Hop> TorusRoute(size_t level, int64_t u, int64_t v) const;
  std::vector<simgrid::s4u::Link*> Path(int64_t a, int64_t b);

  simgrid::s4u::NetZone* zone_;
  int gpn_;
  std::vector<Level> levels_;
  std::map<int64_t, simgrid::s4u::Host*> hosts_;
  std::map<std::string, simgrid::s4u::Link*> links_;
  std::map<std::pair<int64_t, int64_t>, double> routed_;  // declared routes, their latency
};

}  // namespace paraplan::sim

#endif  // PARAPLAN_SIM_PLATFORM_H_
