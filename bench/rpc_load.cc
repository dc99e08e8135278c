// RPC load generator: drives a running paraplan-server with concurrent calls for a
// bounded time and prints throughput and latency percentiles.
//
//   rpc_load --server 127.0.0.1:50051 --rpc estimate|plan|soak|writers --threads 4 --seconds 10
//            [--server-pid PID] [--mix ESTIMATE,PLAN,INGEST]
//
// Estimate: GPT-3 175B, TP8 PP8 DP16 on dgx-a100-80gb. Plan: GPT-3 175B on 1,024 GPUs,
// global batch 1,536. Soak: each call picks Estimate, Plan or IngestMeasurements at
// random in the proportions of --mix (default 90,2,8); an ingest carries 10 measurements
// (GPT-22B, TP8 on one DGX A100 node) with ids unique to this run, so the database grows
// as it would in service. It reports p50/p99 and errors per RPC kind, the measurements
// this run stored (soak) and, with --server-pid, the server's resident memory (VmRSS) at
// the start, every 10 s and at the end; it exits 1 if any call failed.
// Writers (issue 21, "writes that do not stall"): on a copy of dgx-a100-80gb made for the
// run, 4 threads ingest 10 measurements a call, 2 calibrate it and 2 update it, while one
// probe thread estimates on dgx-a100-80gb; --threads is ignored. The bars: no ingest over
// 1 s, estimate p99 under 10 ms (both printed; exit 1 when missed).
// RESOURCE_EXHAUSTED (the server's write rate limit or plan concurrency limit) is counted
// apart as `throttled`, not as an error: it says the load exceeds a configured limit. Loopback only; every loop is bounded by --seconds.
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
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
  long server_pid = 0;  // 0 = memory not reported
  int mix[3] = {90, 2, 8};  // soak: estimate, plan, ingest weights
};

bool ParseMix(const std::string& v, int* mix) {
  char tail = 0;
  return std::sscanf(v.c_str(), "%d,%d,%d%c", &mix[0], &mix[1], &mix[2], &tail) == 3 && mix[0] >= 0 &&
         mix[1] >= 0 && mix[2] >= 0 && mix[0] + mix[1] + mix[2] > 0;
}

bool Parse(int argc, char** argv, Options* o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--server") o->server = v;
    else if (k == "--rpc") o->rpc = v;
    else if (k == "--threads") o->threads = std::max(1, std::atoi(v.c_str()));
    else if (k == "--seconds") o->seconds = std::min(3600.0, std::max(0.1, std::atof(v.c_str())));
    else if (k == "--server-pid") o->server_pid = std::atol(v.c_str());
    else if (k == "--mix") { if (!ParseMix(v, o->mix)) return false; }
    else return false;
  }
  return (argc % 2 == 1) &&
         (o->rpc == "estimate" || o->rpc == "plan" || o->rpc == "soak" || o->rpc == "writers");
}

// The server's resident set in MiB from /proc/PID/status (VmRSS), or -1.
double RssMib(long pid) {
  if (pid <= 0) return -1;
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;  // kB
  }
  return -1;
}

enum Kind { kEstimate, kPlan, kIngest, kCalibrate, kUpdate, kKinds };
const char* const kKindNames[kKinds] = {"estimate", "plan", "ingest", "calibrate", "update"};

// Latencies (ms) of successful calls and failures, for one thread and one kind.
struct Tally {
  std::vector<double> ms;
  long errors = 0;
  long throttled = 0;  // RESOURCE_EXHAUSTED
};

double Percentile(const std::vector<double>& sorted, double p) {
  return sorted.empty() ? 0.0 : sorted[std::min(sorted.size() - 1, size_t(p * sorted.size()))];
}

paraplan::v1::Measurement SoakMeasurement(const std::string& id, const std::string& profile) {
  paraplan::v1::Measurement m;
  m.set_id(id);
  m.set_profile(profile);
  paraplan::v1::Workload* w = m.mutable_workload();
  w->set_name("GPT-22B");
  w->set_precision(paraplan::v1::PRECISION_FP16);
  paraplan::v1::TransformerSpec* t = w->mutable_transformer();
  t->set_num_layers(48);
  t->set_hidden_size(6144);
  t->set_num_attention_heads(64);
  t->set_ffn_hidden_size(24576);
  t->set_seq_length(2048);
  t->set_vocab_size(51200);
  paraplan::v1::ParallelConfig* c = m.mutable_config();
  c->set_tensor_parallel(8);
  c->set_micro_batch_size(4);
  c->set_global_batch_size(4);
  c->set_recompute(paraplan::v1::RECOMPUTE_FULL);
  m.set_iteration_time_s(1.42);  // Korthikanti et al. 2022, Table 5
  return m;
}

// The writers' role of thread t (8 threads): 4 ingest, 2 calibrate, 2 update.
Kind WriterRole(int t) { return t < 4 ? kIngest : t < 6 ? kCalibrate : kUpdate; }

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!Parse(argc, argv, &opt)) {
    std::fprintf(stderr,
                 "usage: rpc_load [--server HOST:PORT] [--rpc estimate|plan|soak|writers] [--threads N] [--seconds S]\n"
                 "                [--server-pid PID] [--mix ESTIMATE,PLAN,INGEST]\n");
    return 2;
  }
  auto channel = grpc::CreateChannel(opt.server, grpc::InsecureChannelCredentials());
  auto planner = paraplan::v1::Planner::NewStub(channel);
  auto measurements = paraplan::v1::Measurements::NewStub(channel);

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

  // Ids unique to this run (pid and start time), so a soak can rerun on the same database.
  const std::string run_id = std::to_string(getpid()) + "-" +
                             std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
  constexpr int kMeasurementsPerIngest = 10;
  Kind fixed = opt.rpc == "plan" ? kPlan : kEstimate;
  const bool soak = opt.rpc == "soak";
  const bool writers = opt.rpc == "writers";
  std::string ingest_profile = "dgx-a100-80gb";
  auto profiles = paraplan::v1::Profiles::NewStub(channel);
  paraplan::v1::SystemProfile writers_profile;
  if (writers) {
    // A profile of the run's own, so calibrations and updates leave the built-in alone.
    grpc::ClientContext get_ctx;
    paraplan::v1::GetProfileRequest get;
    get.set_name("dgx-a100-80gb");
    grpc::Status s = profiles->GetProfile(&get_ctx, get, &writers_profile);
    if (s.ok()) {
      writers_profile.set_name("writers-" + run_id.substr(0, run_id.find('-')));
      writers_profile.set_version(0);
      grpc::ClientContext create_ctx;
      paraplan::v1::UpdateProfileRequest create;
      *create.mutable_profile() = writers_profile;
      create.set_create_if_missing(true);
      paraplan::v1::SystemProfile created;
      s = profiles->UpdateProfile(&create_ctx, create, &created);
    }
    if (!s.ok()) {
      std::fprintf(stderr, "could not make the writers' profile: %d %s\n", s.error_code(), s.error_message().c_str());
      return 1;
    }
    ingest_profile = writers_profile.name();
    opt.threads = 9;  // 8 writers and the estimate probe
  }

  std::atomic<bool> first_error{true};
  std::vector<std::vector<Tally>> tallies(opt.threads, std::vector<Tally>(kKinds));
  const auto begin = std::chrono::steady_clock::now();
  const auto end = begin + std::chrono::duration<double>(opt.seconds);
  std::vector<std::thread> workers;
  for (int t = 0; t < opt.threads; ++t) {
    workers.emplace_back([&, t] {
      std::mt19937 rng(1234u + static_cast<unsigned>(t));  // the same sequence of kinds per run
      std::discrete_distribution<int> pick({double(opt.mix[0]), double(opt.mix[1]), double(opt.mix[2])});
      long ingest_seq = 0;
      while (std::chrono::steady_clock::now() < end) {
        const Kind kind = soak ? static_cast<Kind>(pick(rng)) : writers ? (t < 8 ? WriterRole(t) : kEstimate) : fixed;
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        const auto start = std::chrono::steady_clock::now();
        grpc::Status s;
        if (kind == kEstimate) {
          paraplan::v1::EstimateResponse r;
          s = planner->Estimate(&ctx, est, &r);
        } else if (kind == kPlan) {
          paraplan::v1::PlanResponse r;
          s = planner->Plan(&ctx, plan, &r);
        } else if (kind == kCalibrate) {
          paraplan::v1::CalibrateRequest req;
          req.set_profile(ingest_profile);
          paraplan::v1::CalibrateResponse r;
          s = measurements->Calibrate(&ctx, req, &r);
          // Too few measurements yet, or another calibration of it running: not a stall.
          if (s.error_code() == grpc::StatusCode::FAILED_PRECONDITION ||
              s.error_code() == grpc::StatusCode::ABORTED) {
            s = grpc::Status::OK;
          }
        } else if (kind == kUpdate) {
          paraplan::v1::UpdateProfileRequest req;
          *req.mutable_profile() = writers_profile;
          req.mutable_profile()->set_description("writers run, update " + std::to_string(ingest_seq++));
          paraplan::v1::SystemProfile r;
          s = profiles->UpdateProfile(&ctx, req, &r);
        } else {
          paraplan::v1::IngestMeasurementsRequest req;
          for (int k = 0; k < kMeasurementsPerIngest; ++k) {
            *req.add_measurements() = SoakMeasurement(
                "soak-" + run_id + "-" + std::to_string(t) + "-" + std::to_string(ingest_seq++), ingest_profile);
          }
          paraplan::v1::IngestMeasurementsResponse r;
          s = measurements->IngestMeasurements(&ctx, req, &r);
          if (s.ok() && r.accepted() != kMeasurementsPerIngest) {
            s = grpc::Status(grpc::StatusCode::INTERNAL,
                             "ingest accepted " + std::to_string(r.accepted()) + " of " +
                                 std::to_string(kMeasurementsPerIngest) + " new measurements");
          }
        }
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        Tally& tally = tallies[t][kind];
        if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
          ++tally.throttled;
          continue;
        }
        if (!s.ok()) {
          ++tally.errors;
          if (first_error.exchange(false)) {
            std::fprintf(stderr, "error (%s): %d %s\n", kKindNames[kind], s.error_code(), s.error_message().c_str());
          }
          continue;
        }
        tally.ms.push_back(ms);
      }
    });
  }

  // Memory of the server while the load runs: at the start, every 10 s, at the end.
  std::vector<double> rss = {RssMib(opt.server_pid)};
  while (std::chrono::steady_clock::now() + std::chrono::seconds(10) < end) {
    std::this_thread::sleep_for(std::chrono::seconds(10));
    rss.push_back(RssMib(opt.server_pid));
  }
  for (auto& w : workers) w.join();
  rss.push_back(RssMib(opt.server_pid));
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();

  long total_errors = 0;
  size_t total_ok = 0;
  for (int k = 0; k < kKinds; ++k) {
    std::vector<double> all;
    long errors = 0, throttled = 0;
    for (const auto& per_thread : tallies) {
      all.insert(all.end(), per_thread[k].ms.begin(), per_thread[k].ms.end());
      errors += per_thread[k].errors;
      throttled += per_thread[k].throttled;
    }
    total_errors += errors;
    total_ok += all.size();
    if (all.empty() && errors == 0 && throttled == 0) continue;
    std::sort(all.begin(), all.end());
    std::printf("rpc=%s threads=%d seconds=%.1f requests=%zu errors=%ld throttled=%ld qps=%.1f p50_ms=%.3f "
                "p90_ms=%.3f p99_ms=%.3f max_ms=%.3f\n",
                kKindNames[k], opt.threads, opt.seconds, all.size(), errors, throttled, all.size() / elapsed,
                Percentile(all, 0.5), Percentile(all, 0.9), Percentile(all, 0.99), all.empty() ? 0.0 : all.back());
  }
  if (soak) {
    size_t ingests = 0;
    for (const auto& per_thread : tallies) ingests += per_thread[kIngest].ms.size();
    std::printf("measurements_stored=%zu\n", ingests * kMeasurementsPerIngest);
  }
  if (opt.server_pid > 0) {
    std::ostringstream series;
    for (size_t i = 0; i < rss.size(); ++i) series << (i ? "," : "") << static_cast<long>(rss[i] + 0.5);
    std::printf("server_pid=%ld rss_mib_start=%.1f rss_mib_end=%.1f rss_mib_max=%.1f rss_mib_every_10s=%s\n",
                opt.server_pid, rss.front(), rss.back(), *std::max_element(rss.begin(), rss.end()),
                series.str().c_str());
  }
  if (writers) {
    std::vector<double> ingest, estimate;
    for (const auto& per_thread : tallies) {
      ingest.insert(ingest.end(), per_thread[kIngest].ms.begin(), per_thread[kIngest].ms.end());
      estimate.insert(estimate.end(), per_thread[kEstimate].ms.begin(), per_thread[kEstimate].ms.end());
    }
    std::sort(estimate.begin(), estimate.end());
    const double ingest_max = ingest.empty() ? 0 : *std::max_element(ingest.begin(), ingest.end());
    const double estimate_p99 = Percentile(estimate, 0.99);
    const bool met = ingest_max <= 1000 && estimate_p99 < 10 && total_errors == 0 && !estimate.empty();
    std::printf("writers: ingest_max_ms=%.1f (bar 1000) estimate_p99_ms=%.2f (bar 10) %s\n", ingest_max, estimate_p99,
                met ? "met" : "MISSED");
    grpc::ClientContext del_ctx;
    paraplan::v1::DeleteProfileRequest del;
    del.set_name(ingest_profile);
    paraplan::v1::DeleteProfileResponse deleted;
    profiles->DeleteProfile(&del_ctx, del, &deleted);
    return met ? 0 : 1;
  }
  if (soak) return total_errors > 0 ? 1 : 0;
  return total_errors > 0 && total_ok == 0 ? 1 : 0;
}
