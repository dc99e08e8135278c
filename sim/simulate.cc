#include "sim/simulate.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include <simgrid/s4u.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "estimator/system/hardware.h"
#include "sim/collective_flows.h"
#include "sim/platform.h"

namespace paraplan::sim {

namespace sg4 = simgrid::s4u;

namespace {

constexpr int64_t kMaxFlows = 2'000'000;
// CPU seconds one simulation may use (a 4,096-GPU ring takes ~4).
constexpr rlim_t kCpuLimitS = 300;
// How often a waiting caller checks its interrupt while the child simulates.
constexpr int kPollMs = 20;

// Replays `steps` from the calling actor: per step, the latency of its slowest route
// (times the steps it stands for), then its flows and branches at once.
void Replay(const std::vector<Step>& steps, Platform& platform) {
  for (const Step& s : steps) {
    double latency = 0;
    for (const Flow& f : s.flows) latency = std::max(latency, platform.RouteLatency(f.src, f.dst));
    if (latency > 0) sg4::this_actor::sleep_for(latency * s.latencies);
    std::vector<sg4::CommPtr> comms;
    comms.reserve(s.flows.size());
    for (const Flow& f : s.flows) {
      comms.push_back(sg4::Comm::sendto_async(platform.HostOf(f.src), platform.HostOf(f.dst),
                                              static_cast<uint64_t>(std::max(1.0, std::round(f.bytes)))));
    }
    std::vector<sg4::ActorPtr> branches;
    for (const std::vector<Step>& b : s.branches) {
      branches.push_back(sg4::Actor::create("branch", sg4::this_actor::get_host(),
                                            [&b, &platform]() { Replay(b, platform); }));
    }
    for (sg4::CommPtr& c : comms) c->wait();  // (wait_all is no faster in 3.32)
    for (sg4::ActorPtr& a : branches) a->join();
  }
}

// Runs in a child process (SimGrid's engine lives once per process): builds the
// platform, replays every group program as one actor, writes each op's finish time.
void RunChild(const SystemProfile& profile, const Hardware& hw, const std::vector<std::vector<GroupProgram>>& programs,
              const Background& background, int fd) {
  int argc = 3;
  char arg0[] = "paraplan-sim";
  char arg1[] = "--log=root.thres:critical";
  char arg2[] = "--cfg=network/model:CM02";
  char* argv[] = {arg0, arg1, arg2, nullptr};
  sg4::Engine engine(&argc, argv);
  // Pure max-min sharing, as the analytic model's fair shares assume: CM02 without its
  // latency / bandwidth correction factors, no TCP window cap (gamma 0 = unbounded), no
  // acknowledgement cross-traffic on the reverse links, no per-link weight correction.
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");
  sg4::Engine::set_config("network/latency-factor:1");
  sg4::Engine::set_config("network/bandwidth-factor:1");
  sg4::Engine::set_config("network/weight-S:0");
  sg4::NetZone* zone = sg4::create_full_zone("cluster");
  Platform platform(profile, hw, zone);
  int remaining = 0;
  for (const auto& op : programs) {
    for (const GroupProgram& g : op) {
      ForEachFlow(g.steps, [&platform](const Flow& f) { platform.AddRoute(f.src, f.dst); });
      if (!g.steps.empty()) ++remaining;
    }
  }
  for (const auto& [a, b] : background.flows) platform.AddRoute(a, b);
  zone->seal();
  std::vector<double> finish(programs.size(), 0);
  std::vector<sg4::CommPtr> streams;  // background, cancelled when the last group ends
  if (!background.flows.empty() && remaining > 0) {
    for (const auto& [a, b] : background.flows) {
      streams.push_back(sg4::Comm::sendto_async(platform.HostOf(a), platform.HostOf(b), uint64_t{1} << 52));
    }
  }
  const double overhead = hw.collective_overhead_s();
  for (size_t o = 0; o < programs.size(); ++o) {
    for (const GroupProgram& g : programs[o]) {
      if (g.steps.empty()) continue;
      int64_t first = 0;
      ForEachFlow(g.steps, [&first](const Flow& f) { first = f.src; });
      sg4::Actor::create("group", platform.HostOf(first), [&platform, &finish, &remaining, &streams, &g, o, overhead]() {
        Replay(g.steps, platform);
        // The per-call cost (launch, rendezvous) once per op, as Collectives charges it.
        finish[o] = std::max(finish[o], sg4::Engine::get_clock() + overhead);
        if (--remaining == 0) {
          for (sg4::CommPtr& c : streams) c->cancel();
        }
      });
    }
  }
  engine.run();
  const ssize_t want = static_cast<ssize_t>(finish.size() * sizeof(double));
  if (write(fd, finish.data(), finish.size() * sizeof(double)) != want) _exit(3);
}

// The outermost network level any flow of `programs` crosses.
int OutermostLevel(const Hardware& hw, const std::vector<GroupProgram>& programs) {
  const std::vector<NetworkRates>& levels = hw.levels();
  int top = 0;
  for (const GroupProgram& g : programs) {
    ForEachFlow(g.steps, [&](const Flow& f) {
      for (int i = top + 1; i < static_cast<int>(levels.size()); ++i) {
        const int64_t d = std::max(1, levels[i - 1].domain_size);
        if (f.src / d != f.dst / d) top = i;
      }
    });
  }
  return top;
}

}  // namespace

absl::StatusOr<std::vector<double>> SimulateConcurrent(const SystemProfile& profile,
                                                       const std::vector<SimCollective>& ops,
                                                       const Background& background, int64_t max_hosts,
                                                       const Interrupt& stop) {
  const int64_t cluster = profile.NumGpus();
  std::set<int64_t> hosts;
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
    return absl::InvalidArgumentError(absl::StrCat("the simulation touches ", hosts.size(),
                                                   " GPUs; the limit is ", max_hosts, " GPUs"));
  }
  const Hardware hw(profile, Precision::kBf16);
  FlowTopology topo;
  topo.gpus_per_node = std::max(1, profile.gpus_per_node);
  for (size_t i = 1; i < hw.levels().size(); ++i) {
    const NetworkRates& l = hw.levels()[i];
    if ((l.topology == Topology::kTorus2D || l.topology == Topology::kTorus3D) && !l.torus_dims.empty()) {
      topo.torus_vertex_gpus = std::max(1, hw.levels()[i - 1].domain_size);
      topo.torus_dims = l.torus_dims;
      break;
    }
  }
  std::vector<std::vector<GroupProgram>> programs;
  int64_t flows = static_cast<int64_t>(background.flows.size());
  for (const SimCollective& op : ops) {
    absl::StatusOr<std::vector<GroupProgram>> p = ExpandCollective(op, topo, kMaxFlows - flows);
    if (!p.ok()) return p.status();
    for (const GroupProgram& g : *p) ForEachFlow(g.steps, [&flows](const Flow&) { ++flows; });
    programs.push_back(std::move(*p));
  }
  if (programs.empty()) return std::vector<double>{};
  // A level's size-dependent efficiency curve is a property of the call's message size,
  // not of a link: the op's flows grow by flat rate / rate at its size on the
  // outermost level it crosses, where the analytic bandwidth term is set.
  for (size_t i = 0; i < ops.size(); ++i) {
    if (hw.levels().empty()) break;
    const NetworkRates& l = hw.levels()[OutermostLevel(hw, programs[i])];
    const double at_size = l.BytesPerS(ops[i].bytes);
    if (l.curve.empty() || at_size <= 0) continue;
    const double scale = l.bytes_per_s / at_size;
    for (GroupProgram& g : programs[i]) ForEachFlow(g.steps, [scale](Flow& f) { f.bytes *= scale; });
  }
  if (absl::Status s = stop.Check("the SimGrid run"); !s.ok()) return s;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return absl::InternalError(absl::StrCat("pipe: errno ", errno));
  // The child inherits the caller's unwritten stdio buffers; SimGrid flushes them.
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return absl::InternalError(absl::StrCat("fork: errno ", errno));
  }
  if (pid == 0) {
    close(fds[0]);
    // A runaway replay ends by SIGXCPU instead of holding the caller.
    const rlimit cpu{kCpuLimitS, kCpuLimitS + 5};
    setrlimit(RLIMIT_CPU, &cpu);
    RunChild(profile, hw, programs, background, fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::vector<double> finish(programs.size(), 0);
  size_t got = 0;
  char* out = reinterpret_cast<char*>(finish.data());
  const size_t want = finish.size() * sizeof(double);
  // Read in slices of at most kPollMs so that an interrupt kills the child at once.
  absl::Status stopped;
  while (got < want) {
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, kPollMs);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) {
      stopped = stop.Check("the SimGrid run");
      if (!stopped.ok()) break;
      continue;
    }
    const ssize_t n = read(fds[0], out + got, want - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fds[0]);
  if (!stopped.ok()) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!stopped.ok()) return stopped;
  if (WIFSIGNALED(status)) {
    return absl::InternalError(WTERMSIG(status) == SIGXCPU
                                   ? absl::StrCat("the SimGrid run exceeded its CPU limit of ", kCpuLimitS, " s")
                                   : absl::StrCat("the SimGrid run died of signal ", WTERMSIG(status)));
  }
  if (got != want || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(absl::StrCat("the SimGrid run failed (exit status ", WEXITSTATUS(status), ")"));
  }
  return finish;
}

}  // namespace paraplan::sim
