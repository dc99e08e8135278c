#include "sim/simulate.h"

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include <simgrid/s4u.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "estimator/hardware.h"
#include "sim/flows.h"

namespace paraplan::sim {

namespace sg4 = simgrid::s4u;

namespace {

constexpr int64_t kMaxFlows = 2'000'000;

// The profile's network as links: per GPU an NVLink port each way and a NIC each way;
// per domain of level i - 1 an uplink and a downlink to level i of capacity domain x
// port rate / taper (a fat tree collapsed to one aggregate link per domain and level);
// torus links between neighbouring vertices; dragonfly global links per group pair.
// Rates and latencies are those the analytic model uses (Hardware: efficiency, curve
// at the op's size is not applied: the fitted flat efficiency is).
class Platform {
 public:
  Platform(const SystemProfile& p, const Hardware& hw, sg4::NetZone* zone)
      : hw_(hw), zone_(zone), gpn_(std::max(1, p.gpus_per_node)) {
    for (size_t i = 0; i < p.network_levels.size(); ++i) {
      const NetworkLevel& l = p.network_levels[i];
      Level v;
      v.domain = hw.levels()[i].domain_size;
      v.port = hw.levels()[i].bytes_per_s * std::max(1.0, hw.levels()[i].oversubscription);
      v.taper = std::max(1.0, hw.levels()[i].oversubscription);
      v.latency = hw.levels()[i].latency_s;
      v.torus = (l.topology == Topology::kTorus2D || l.topology == Topology::kTorus3D) && !l.torus_dims.empty();
      v.dims = l.torus_dims;
      v.rail = l.rail_optimized;
      if (l.topology == Topology::kDragonfly && l.global_links_per_group > 0 && i > 0) {
        const double groups = std::max(1.0, static_cast<double>(hw.levels().back().domain_size) /
                                                hw.levels()[i - 1].domain_size);
        v.pair = std::max(1.0, l.global_links_per_group / std::max(1.0, groups - 1)) *
                 hw.levels()[i].global_link_bytes_per_s;
      }
      levels_.push_back(v);
      lat_.push_back(Fat(absl::StrCat("lat", i), levels_.back().latency));
    }
  }

  sg4::Host* HostOf(int64_t gpu) {
    auto it = hosts_.find(gpu);
    if (it != hosts_.end()) return it->second;
    sg4::Host* h = zone_->create_host(absl::StrCat("gpu", gpu), 1e9)->seal();
    hosts_[gpu] = h;
    return h;
  }

  void AddRoute(int64_t a, int64_t b) {
    if (!routed_.insert({a, b}).second) return;
    std::vector<sg4::LinkInRoute> path;
    for (sg4::Link* l : Path(a, b)) path.emplace_back(l);
    zone_->add_route(HostOf(a)->get_netpoint(), HostOf(b)->get_netpoint(), nullptr, nullptr, path, false);
  }

 private:
  struct Level {
    int64_t domain = 1;
    double port = 0, taper = 1, latency = 0, pair = 0;
    bool torus = false, rail = false;
    std::vector<int> dims;
  };

  sg4::Link* Make(const std::string& name, double bw, double latency = 0) {
    auto it = links_.find(name);
    if (it != links_.end()) return it->second;
    sg4::Link* l = zone_->create_link(name, bw)->set_latency(latency)->seal();
    links_[name] = l;
    return l;
  }
  sg4::Link* Fat(const std::string& name, double latency) {
    sg4::Link* l = zone_->create_link(name, 1e15)->set_latency(latency);
    l->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
    l->seal();
    return l;
  }

  // Torus hops from vertex u to v, dimension-ordered, shorter way round.
  void TorusHops(size_t lv, int64_t u, int64_t v, std::vector<sg4::Link*>* path) {
    const Level& t = levels_[lv];
    int64_t cur = u, stride = 1;
    for (size_t d = 0; d < t.dims.size(); ++d) {
      const int64_t k = std::max(1, t.dims[d]);
      int64_t c = (cur / stride) % k;
      const int64_t target = (v / stride) % k;
      const int64_t delta = ((target - c) % k + k) % k;
      const bool forward = delta <= k / 2;
      for (int64_t h = forward ? delta : k - delta; h > 0; --h) {
        path->push_back(Make(absl::StrCat("t", lv, "_", cur, "_", d, forward ? "+" : "-"), t.port, t.latency));
        const int64_t next = forward ? (c + 1) % k : (c + k - 1) % k;
        cur += (next - c) * stride;
        c = next;
      }
      stride *= k;
    }
  }

  std::vector<sg4::Link*> Path(int64_t a, int64_t b) {
    std::vector<sg4::Link*> path;
    const double nv = levels_[0].port;
    if (a / gpn_ == b / gpn_ || levels_.size() == 1) {
      path = {Make(absl::StrCat("nvo", a), nv), lat_[0], Make(absl::StrCat("nvi", b), nv)};
      return path;
    }
    size_t top = levels_.size() - 1;  // the first level whose domain holds both
    for (size_t i = 1; i < levels_.size(); ++i) {
      if (a / levels_[i].domain == b / levels_[i].domain) {
        top = i;
        break;
      }
    }
    if (levels_[top].torus) {
      path.push_back(Make(absl::StrCat("nvo", a), nv));
      TorusHops(top, a / levels_[top - 1].domain, b / levels_[top - 1].domain, &path);
      path.push_back(Make(absl::StrCat("nvi", b), nv));
      return path;
    }
    int64_t src = a;
    if (levels_[1].rail && a % gpn_ != b % gpn_) {
      // PXN: over NVLink to the GPU of the destination's rail, then its NIC.
      src = a / gpn_ * gpn_ + b % gpn_;
      path.push_back(Make(absl::StrCat("nvo", a), nv));
      path.push_back(Make(absl::StrCat("nvi", src), nv));
    }
    path.push_back(Make(absl::StrCat("nico", src), levels_[1].port));
    for (size_t i = 1; i <= top; ++i) {  // up out of src's level-(i-1) domain
      const int64_t d = src / levels_[i - 1].domain;
      path.push_back(Make(absl::StrCat("up", i, "_", d), levels_[i - 1].domain * levels_[i].port / levels_[i].taper));
    }
    path.push_back(lat_[top]);
    if (levels_[top].pair > 0) {
      const int64_t ga = src / levels_[top - 1].domain, gb = b / levels_[top - 1].domain;
      path.push_back(Make(absl::StrCat("gl", ga, "_", gb), levels_[top].pair));
    }
    for (size_t i = top; i >= 1; --i) {  // down into b's level-(i-1) domain
      const int64_t d = b / levels_[i - 1].domain;
      path.push_back(Make(absl::StrCat("dn", i, "_", d), levels_[i - 1].domain * levels_[i].port / levels_[i].taper));
    }
    path.push_back(Make(absl::StrCat("nici", b), levels_[1].port));
    return path;
  }

  const Hardware& hw_;
  sg4::NetZone* zone_;
  int gpn_;
  std::vector<Level> levels_;
  std::vector<sg4::Link*> lat_;
  std::map<int64_t, sg4::Host*> hosts_;
  std::map<std::string, sg4::Link*> links_;
  std::set<std::pair<int64_t, int64_t>> routed_;
};

// Runs in a child process (SimGrid's engine lives once per process): builds the
// platform, replays every group program as one actor, writes each op's finish time.
void RunChild(const SystemProfile& profile, const std::vector<std::vector<GroupProgram>>& programs,
              const Background& background, int fd) {
  int argc = 3;
  char arg0[] = "paraplan-sim";
  char arg1[] = "--log=root.thres:critical";
  char arg2[] = "--cfg=network/model:CM02";
  char* argv[] = {arg0, arg1, arg2, nullptr};
  sg4::Engine engine(&argc, argv);
  // Pure max-min sharing: no TCP window cap, no cross-traffic of acknowledgements, no
  // latency/bandwidth correction factors (the analytic model has none).
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");
  sg4::Engine::set_config("network/latency-factor:1");
  sg4::Engine::set_config("network/bandwidth-factor:1");
  const Hardware hw(profile, Precision::kBf16);
  sg4::NetZone* zone = sg4::create_full_zone("cluster");
  Platform platform(profile, hw, zone);
  for (const auto& op : programs) {
    for (const GroupProgram& g : op) {
      for (const Step& s : g.steps) {
        for (const Flow& f : s.flows) platform.AddRoute(f.src, f.dst);
      }
    }
  }
  for (const auto& [a, b] : background.flows) platform.AddRoute(a, b);
  zone->seal();
  std::vector<double> finish(programs.size(), 0);
  int remaining = 0;
  const double overhead = hw.collective_overhead_s();
  for (size_t o = 0; o < programs.size(); ++o) {
    for (const GroupProgram& g : programs[o]) {
      if (g.steps.empty()) continue;
      ++remaining;
      sg4::Host* where = platform.HostOf(g.steps.front().flows.front().src);
      sg4::Actor::create("group", where, [&platform, &finish, &remaining, &g, o, overhead]() {
        for (const Step& s : g.steps) {
          std::vector<sg4::CommPtr> comms;
          comms.reserve(s.flows.size());
          for (const Flow& f : s.flows) {
            comms.push_back(sg4::Comm::sendto_async(platform.HostOf(f.src), platform.HostOf(f.dst),
                                                    static_cast<uint64_t>(std::max(1.0, f.bytes))));
          }
          sg4::Comm::wait_all(comms);
        }
        finish[o] = std::max(finish[o], sg4::Engine::get_clock() + overhead);
        --remaining;
      });
    }
  }
  if (!background.flows.empty()) {
    sg4::Host* where = platform.HostOf(background.flows.front().first);
    sg4::Actor::create("background", where, [&platform, &background, &remaining]() {
      std::vector<sg4::CommPtr> comms;
      for (const auto& [a, b] : background.flows) {
        comms.push_back(sg4::Comm::sendto_async(platform.HostOf(a), platform.HostOf(b), uint64_t{1} << 50));
      }
      while (remaining > 0) sg4::this_actor::sleep_for(1e-4);
      for (sg4::CommPtr& c : comms) c->cancel();
    });
  }
  engine.run();
  const ssize_t want = static_cast<ssize_t>(finish.size() * sizeof(double));
  if (write(fd, finish.data(), finish.size() * sizeof(double)) != want) _exit(3);
}

}  // namespace

absl::StatusOr<std::vector<double>> SimulateConcurrent(const SystemProfile& profile,
                                                       const std::vector<SimCollective>& ops,
                                                       const Background& background, int64_t max_hosts) {
  const int64_t cluster = profile.NumGpus();
  std::set<int64_t> hosts;
  std::vector<std::vector<GroupProgram>> programs;
  int64_t flows = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    for (const std::vector<int64_t>& g : ops[i].groups) {
      for (int64_t gpu : g) {
        if (gpu < 0 || gpu >= cluster) {
          return absl::InvalidArgumentError(absl::StrCat("ops[", i, "]: GPU ", gpu, " is outside the profile's ",
                                                         cluster, " GPUs"));
        }
        hosts.insert(gpu);
      }
    }
    absl::StatusOr<std::vector<GroupProgram>> p = ExpandCollective(ops[i], profile.gpus_per_node, kMaxFlows - flows);
    if (!p.ok()) return p.status();
    for (const GroupProgram& g : *p) {
      for (const Step& s : g.steps) flows += static_cast<int64_t>(s.flows.size());
    }
    programs.push_back(std::move(*p));
  }
  for (const auto& [a, b] : background.flows) {
    if (a < 0 || a >= cluster || b < 0 || b >= cluster || a == b) {
      return absl::InvalidArgumentError(absl::StrCat("background: flow ", a, " -> ", b, " is not between two of the ",
                                                     cluster, " GPUs"));
    }
    hosts.insert(a);
    hosts.insert(b);
  }
  if (static_cast<int64_t>(hosts.size()) > max_hosts) {
    return absl::InvalidArgumentError(absl::StrCat("the simulation touches ", hosts.size(), " GPUs; the limit is ",
                                                   max_hosts));
  }
  if (programs.empty()) return std::vector<double>{};
  int fds[2];
  if (pipe(fds) != 0) return absl::InternalError(absl::StrCat("pipe: errno ", errno));
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: errno ", errno));
  if (pid == 0) {
    close(fds[0]);
    RunChild(profile, programs, background, fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::vector<double> finish(programs.size(), 0);
  size_t got = 0;
  char* out = reinterpret_cast<char*>(finish.data());
  const size_t want = finish.size() * sizeof(double);
  while (got < want) {
    const ssize_t n = read(fds[0], out + got, want - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != want || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(absl::StrCat("the SimGrid run failed (exit status ", status, ")"));
  }
  return finish;
}

}  // namespace paraplan::sim
