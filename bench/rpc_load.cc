// RPC load generator: drives a running paraplan-server with concurrent Estimate or Plan
// calls for a bounded time and prints throughput and latency percentiles.
//
//   rpc_load --server 127.0.0.1:50051 --rpc estimate|plan --threads 4 --seconds 10
//
// Estimate: GPT-3 175B, TP8 PP8 DP16 on dgx-a100-80gb. Plan: GPT-3 175B on 1,024 GPUs,
// global batch 1,536. Loopback only; every loop is bounded by --seconds.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "paraplan/v1/services.grpc.pb.h"

namespace {

struct Options {
  std::string server = "127.0.0.1:50051";
  std::string rpc = "estimate";
  int threads = 4;
  double seconds = 10;
};

bool Parse(int argc, char** argv, Options* o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--server") o->server = v;
    else if (k == "--rpc") o->rpc = v;
    else if (k == "--threads") o->threads = std::max(1, std::atoi(v.c_str()));
    else if (k == "--seconds") o->seconds = std::min(600.0, std::max(0.1, std::atof(v.c_str())));
    else return false;
  }
  return (argc % 2 == 1) && (o->rpc == "estimate" || o->rpc == "plan");
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!Parse(argc, argv, &opt)) {
    std::fprintf(stderr, "usage: rpc_load [--server HOST:PORT] [--rpc estimate|plan] [--threads N] [--seconds S]\n");
    return 2;
  }
  auto channel = grpc::CreateChannel(opt.server, grpc::InsecureChannelCredentials());
  auto stub = paraplan::v1::Planner::NewStub(channel);

  paraplan::v1::EstimateRequest est;
  est.set_profile("dgx-a100-80gb");
  est.set_model("gpt3-175b");
  auto* c = est.mutable_config();
  c->set_tensor_parallel(8);
  c->set_pipeline_parallel(8);
  c->set_data_parallel(16);
  c->set_micro_batch_size(1);
  c->set_global_batch_size(1536);
  c->set_recompute(paraplan::v1::RECOMPUTE_SELECTIVE);
  c->set_sequence_parallel(true);
  paraplan::v1::PlanRequest plan;
  plan.set_profile("dgx-a100-80gb");
  plan.set_model("gpt3-175b");
  plan.add_gpus(1024);
  plan.set_global_batch_size(1536);
  plan.set_top_k(10);

  std::atomic<long> errors{0};
  std::vector<std::vector<double>> latencies(opt.threads);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(opt.seconds);
  std::vector<std::thread> workers;
  for (int t = 0; t < opt.threads; ++t) {
    workers.emplace_back([&, t] {
      while (std::chrono::steady_clock::now() < end) {
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        const auto start = std::chrono::steady_clock::now();
        grpc::Status s;
        if (opt.rpc == "estimate") {
          paraplan::v1::EstimateResponse r;
          s = stub->Estimate(&ctx, est, &r);
        } else {
          paraplan::v1::PlanResponse r;
          s = stub->Plan(&ctx, plan, &r);
        }
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        if (!s.ok()) {
          if (++errors == 1) std::fprintf(stderr, "error: %s\n", s.error_message().c_str());
          continue;
        }
        latencies[t].push_back(ms);
      }
    });
  }
  for (auto& w : workers) w.join();
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) { return all.empty() ? 0.0 : all[std::min(all.size() - 1, size_t(p * all.size()))]; };
  std::printf("rpc=%s threads=%d seconds=%.1f requests=%zu errors=%ld qps=%.1f p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f max_ms=%.3f\n",
              opt.rpc.c_str(), opt.threads, opt.seconds, all.size(), errors.load(), all.size() / opt.seconds,
              pct(0.5), pct(0.9), pct(0.99), all.empty() ? 0.0 : all.back());
  return errors.load() > 0 && all.empty() ? 1 : 0;
}
