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
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
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

constexpr int kMeasurementsPerIngest = 10;

// What every thread of a run shares: the stubs, the fixed requests, the run's ids.
struct Load {
  Options opt;
  std::unique_ptr<paraplan::v1::Planner::Stub> planner;
  std::unique_ptr<paraplan::v1::Measurements::Stub> measurements;
  std::unique_ptr<paraplan::v1::Profiles::Stub> profiles;
  paraplan::v1::EstimateRequest estimate;  // GPT-3 175B, TP8 PP8 DP16 on dgx-a100-80gb
  paraplan::v1::PlanRequest plan;          // GPT-3 175B on 1,024 GPUs
  std::string run_id;                      // pid and start time: ids unique to this run
  std::string ingest_profile = "dgx-a100-80gb";
  paraplan::v1::SystemProfile writers_profile;  // writers: the run's own copy
  bool soak = false, writers = false;
};

Load MakeLoad(const Options& opt) {
  Load l;
  l.opt = opt;
  auto channel = grpc::CreateChannel(opt.server, grpc::InsecureChannelCredentials());
  l.planner = paraplan::v1::Planner::NewStub(channel);
  l.measurements = paraplan::v1::Measurements::NewStub(channel);
  l.profiles = paraplan::v1::Profiles::NewStub(channel);
  l.estimate.set_profile("dgx-a100-80gb");
  l.estimate.set_model("gpt3-175b");
  auto* c = l.estimate.mutable_config();
  c->set_tensor_parallel(8);
  c->set_pipeline_parallel(8);
  c->set_data_parallel(16);
  c->set_micro_batch_size(1);
  c->set_global_batch_size(1536);
  c->set_recompute(paraplan::v1::RECOMPUTE_SELECTIVE);
  c->set_sequence_parallel(true);
  l.plan.set_profile("dgx-a100-80gb");
  l.plan.set_model("gpt3-175b");
  l.plan.add_gpus(1024);
  l.plan.set_global_batch_size(1536);
  l.plan.set_top_k(10);
  // So that a soak can rerun on the same database.
  l.run_id = std::to_string(getpid()) + "-" +
             std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
  l.soak = opt.rpc == "soak";
  l.writers = opt.rpc == "writers";
  return l;
}

// Writers: a copy of dgx-a100-80gb of the run's own, so calibrations and updates leave
// the built-in alone; 8 writer threads and the estimate probe.
grpc::Status MakeWritersProfile(Load* l) {
  grpc::ClientContext get_ctx;
  paraplan::v1::GetProfileRequest get;
  get.set_name("dgx-a100-80gb");
  grpc::Status s = l->profiles->GetProfile(&get_ctx, get, &l->writers_profile);
  if (!s.ok()) return s;
  l->writers_profile.set_name("writers-" + l->run_id.substr(0, l->run_id.find('-')));
  l->writers_profile.set_version(0);
  grpc::ClientContext create_ctx;
  paraplan::v1::UpdateProfileRequest create;
  *create.mutable_profile() = l->writers_profile;
  create.set_create_if_missing(true);
  paraplan::v1::SystemProfile created;
  s = l->profiles->UpdateProfile(&create_ctx, create, &created);
  if (!s.ok()) return s;
  l->ingest_profile = l->writers_profile.name();
  l->opt.threads = 9;
  return s;
}

// One call of `kind` by thread `t` (`seq`: its running count of ingested ids and updates).
grpc::Status Call(const Load& l, Kind kind, int t, long* seq) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  if (kind == kEstimate) {
    paraplan::v1::EstimateResponse r;
    return l.planner->Estimate(&ctx, l.estimate, &r);
  }
  if (kind == kPlan) {
    paraplan::v1::PlanResponse r;
    return l.planner->Plan(&ctx, l.plan, &r);
  }
  if (kind == kCalibrate) {
    paraplan::v1::CalibrateRequest req;
    req.set_profile(l.ingest_profile);
    paraplan::v1::CalibrateResponse r;
    grpc::Status s = l.measurements->Calibrate(&ctx, req, &r);
    // Too few measurements yet, or another calibration of it running: not a stall.
    const bool busy = s.error_code() == grpc::StatusCode::FAILED_PRECONDITION ||
                      s.error_code() == grpc::StatusCode::ABORTED;
    return busy ? grpc::Status::OK : s;
  }
  if (kind == kUpdate) {
    paraplan::v1::UpdateProfileRequest req;
    *req.mutable_profile() = l.writers_profile;
    req.mutable_profile()->set_description("writers run, update " + std::to_string((*seq)++));
    paraplan::v1::SystemProfile r;
    return l.profiles->UpdateProfile(&ctx, req, &r);
  }
  paraplan::v1::IngestMeasurementsRequest req;
  for (int k = 0; k < kMeasurementsPerIngest; ++k) {
    *req.add_measurements() = SoakMeasurement(
        "soak-" + l.run_id + "-" + std::to_string(t) + "-" + std::to_string((*seq)++), l.ingest_profile);
  }
  paraplan::v1::IngestMeasurementsResponse r;
  grpc::Status s = l.measurements->IngestMeasurements(&ctx, req, &r);
  if (s.ok() && r.accepted() != kMeasurementsPerIngest) {
    s = grpc::Status(grpc::StatusCode::INTERNAL, "ingest accepted " + std::to_string(r.accepted()) + " of " +
                                                     std::to_string(kMeasurementsPerIngest) + " new measurements");
  }
  return s;
}

// Thread `t`'s loop until `end`: its calls tallied in `tally` (one per kind).
void Work(const Load& l, int t, std::chrono::steady_clock::time_point end, std::atomic<bool>* first_error,
          std::vector<Tally>* tally) {
  std::mt19937 rng(1234u + static_cast<unsigned>(t));  // the same sequence of kinds per run
  std::discrete_distribution<int> pick({double(l.opt.mix[0]), double(l.opt.mix[1]), double(l.opt.mix[2])});
  const Kind fixed = l.opt.rpc == "plan" ? kPlan : kEstimate;
  long seq = 0;
  while (std::chrono::steady_clock::now() < end) {
    const Kind kind = l.soak ? static_cast<Kind>(pick(rng)) : l.writers ? (t < 8 ? WriterRole(t) : kEstimate) : fixed;
    const auto start = std::chrono::steady_clock::now();
    const grpc::Status s = Call(l, kind, t, &seq);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    Tally& k = (*tally)[kind];
    if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++k.throttled;
    } else if (!s.ok()) {
      ++k.errors;
      if (first_error->exchange(false)) {
        std::fprintf(stderr, "error (%s): %d %s\n", kKindNames[kind], s.error_code(), s.error_message().c_str());
      }
    } else {
      k.ms.push_back(ms);
    }
  }
}

// Every thread's latencies of one kind, sorted.
std::vector<double> Sorted(const std::vector<std::vector<Tally>>& tallies, Kind k) {
  std::vector<double> all;
  for (const auto& per_thread : tallies) all.insert(all.end(), per_thread[k].ms.begin(), per_thread[k].ms.end());
  std::sort(all.begin(), all.end());
  return all;
}

// One line per kind called; returns the errors and the successful calls of all kinds.
std::pair<long, size_t> PrintKinds(const Options& opt, const std::vector<std::vector<Tally>>& tallies,
                                   double elapsed) {
  long total_errors = 0;
  size_t total_ok = 0;
  for (int k = 0; k < kKinds; ++k) {
    const std::vector<double> all = Sorted(tallies, static_cast<Kind>(k));
    long errors = 0, throttled = 0;
    for (const auto& per_thread : tallies) errors += per_thread[k].errors, throttled += per_thread[k].throttled;
    total_errors += errors;
    total_ok += all.size();
    if (all.empty() && errors == 0 && throttled == 0) continue;
    std::printf("rpc=%s threads=%d seconds=%.1f requests=%zu errors=%ld throttled=%ld qps=%.1f p50_ms=%.3f "
                "p90_ms=%.3f p99_ms=%.3f max_ms=%.3f\n",
                kKindNames[k], opt.threads, opt.seconds, all.size(), errors, throttled, all.size() / elapsed,
                Percentile(all, 0.5), Percentile(all, 0.9), Percentile(all, 0.99), all.empty() ? 0.0 : all.back());
  }
  return {total_errors, total_ok};
}

void PrintRss(long pid, const std::vector<double>& rss) {
  std::ostringstream series;
  for (size_t i = 0; i < rss.size(); ++i) series << (i ? "," : "") << static_cast<long>(rss[i] + 0.5);
  std::printf("server_pid=%ld rss_mib_start=%.1f rss_mib_end=%.1f rss_mib_max=%.1f rss_mib_every_10s=%s\n", pid,
              rss.front(), rss.back(), *std::max_element(rss.begin(), rss.end()), series.str().c_str());
}

// Writers' bars (no ingest over 1 s, estimate p99 under 10 ms), printed; the run's
// profile deleted. 0 when met.
int WritersVerdict(const Load& l, const std::vector<std::vector<Tally>>& tallies, long total_errors) {
  const std::vector<double> ingest = Sorted(tallies, kIngest), estimate = Sorted(tallies, kEstimate);
  const double ingest_max = ingest.empty() ? 0 : ingest.back();
  const double estimate_p99 = Percentile(estimate, 0.99);
  const bool met = ingest_max <= 1000 && estimate_p99 < 10 && total_errors == 0 && !estimate.empty();
  std::printf("writers: ingest_max_ms=%.1f (bar 1000) estimate_p99_ms=%.2f (bar 10) %s\n", ingest_max, estimate_p99,
              met ? "met" : "MISSED");
  grpc::ClientContext del_ctx;
  paraplan::v1::DeleteProfileRequest del;
  del.set_name(l.ingest_profile);
  paraplan::v1::DeleteProfileResponse deleted;
  l.profiles->DeleteProfile(&del_ctx, del, &deleted);
  return met ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!Parse(argc, argv, &opt)) {
    std::fprintf(stderr,
                 "usage: rpc_load [--server HOST:PORT] [--rpc estimate|plan|soak|writers] [--threads N] [--seconds S]\n"
                 "                [--server-pid PID] [--mix ESTIMATE,PLAN,INGEST]\n");
    return 2;
  }
  Load load = MakeLoad(opt);
  if (load.writers) {
    if (grpc::Status s = MakeWritersProfile(&load); !s.ok()) {
      std::fprintf(stderr, "could not make the writers' profile: %d %s\n", s.error_code(), s.error_message().c_str());
      return 1;
    }
  }
  const int threads = load.opt.threads;
  std::atomic<bool> first_error{true};
  std::vector<std::vector<Tally>> tallies(threads, std::vector<Tally>(kKinds));
  const auto begin = std::chrono::steady_clock::now();
  const auto end = begin + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                               std::chrono::duration<double>(opt.seconds));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) workers.emplace_back([&, t] { Work(load, t, end, &first_error, &tallies[t]); });

  // Memory of the server while the load runs: at the start, every 10 s, at the end.
  std::vector<double> rss = {RssMib(opt.server_pid)};
  while (std::chrono::steady_clock::now() + std::chrono::seconds(10) < end) {
    std::this_thread::sleep_for(std::chrono::seconds(10));
    rss.push_back(RssMib(opt.server_pid));
  }
  for (auto& w : workers) w.join();
  rss.push_back(RssMib(opt.server_pid));
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();

  const auto [total_errors, total_ok] = PrintKinds(load.opt, tallies, elapsed);
  if (load.soak) {
    size_t ingests = 0;
    for (const auto& per_thread : tallies) ingests += per_thread[kIngest].ms.size();
    std::printf("measurements_stored=%zu\n", ingests * kMeasurementsPerIngest);
  }
  if (opt.server_pid > 0) PrintRss(opt.server_pid, rss);
  if (load.writers) return WritersVerdict(load, tallies, total_errors);
  if (load.soak) return total_errors > 0 ? 1 : 0;
  return total_errors > 0 && total_ok == 0 ? 1 : 0;
}
