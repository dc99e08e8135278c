// Accuracy bookkeeping on the real Backend, Store (a temporary SQLite file) and Metrics:
//  - the gauges paraplan_prediction_mape_ratio / _bias_ratio equal GetAccuracy's overall
//    MAPE and median ratio after every ingest (ties, out-of-memory runs, concurrent
//    ingests), after deleting and re-creating a profile, and after a restart;
//  - memory: an ingest reads only what is new. This binary replaces the global operator
//    new to count the bytes allocated (and the peak held) while one call runs; with
//    20,000 stored measurements (over 10 MB of rows) an ingest must allocate less than
//    256 KiB (about 16 KB now; 23 MB when every ingest re-read them all), and
//    GetAccuracy, which reads them all, must never hold a quarter of their bytes (it holds ~1.6 MB).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/backend.h"
#include "server/metrics.h"
#include "store/store.h"
#include "tests/server/prometheus_text.h"

// --- allocation accounting (whole process; the tests run no other threads meanwhile) ---
namespace {
std::atomic<int64_t> g_allocated{0};  // bytes ever allocated
std::atomic<int64_t> g_live{0};       // bytes allocated and not freed
std::atomic<int64_t> g_peak{0};       // greatest g_live since ResetPeak()
constexpr size_t kHeader = alignof(std::max_align_t);

void* Allocate(size_t n) {
  void* p = std::malloc(n + kHeader);
  if (p == nullptr) throw std::bad_alloc();
  *static_cast<size_t*>(p) = n;
  g_allocated += static_cast<int64_t>(n);
  const int64_t live = g_live += static_cast<int64_t>(n);
  int64_t peak = g_peak.load();
  while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
  }
  return static_cast<char*>(p) + kHeader;
}

void Free(void* p) {
  if (p == nullptr) return;
  void* base = static_cast<char*>(p) - kHeader;
  g_live -= static_cast<int64_t>(*static_cast<size_t*>(base));
  std::free(base);
}
}  // namespace

void* operator new(size_t n) { return Allocate(n); }
void* operator new[](size_t n) { return Allocate(n); }
void operator delete(void* p) noexcept { Free(p); }
void operator delete[](void* p) noexcept { Free(p); }
void operator delete(void* p, size_t) noexcept { Free(p); }
void operator delete[](void* p, size_t) noexcept { Free(p); }

namespace paraplan::server {
namespace {

constexpr char kProfile[] = "dgx-a100-80gb";

// What one call allocates: total bytes, and the most it held at once beyond what was
// held before.
struct Allocation {
  int64_t total = 0;
  int64_t peak = 0;
};

template <typename F>
Allocation Measure(F f) {
  const int64_t before_total = g_allocated.load();
  const int64_t before_live = g_live.load();
  g_peak = before_live;
  f();
  return {g_allocated.load() - before_total, g_peak.load() - before_live};
}

// GPT-22B, TP 8 on one node (Korthikanti et al. 2022): every measurement gets the same
// prediction, so measured times drawn from a small set give many equal ratios.
v1::Measurement RunOf(const std::string& id, const std::string& profile, double seconds, bool oom = false) {
  v1::Measurement m;
  m.set_id(id);
  m.set_profile(profile);
  v1::Workload* w = m.mutable_workload();
  w->set_name("GPT-22B");
  w->set_precision(v1::PRECISION_FP16);
  v1::TransformerSpec* t = w->mutable_transformer();
  t->set_num_layers(48);
  t->set_hidden_size(6144);
  t->set_num_attention_heads(64);
  t->set_ffn_hidden_size(24576);
  t->set_seq_length(2048);
  t->set_vocab_size(51200);
  v1::ParallelConfig* c = m.mutable_config();
  c->set_tensor_parallel(8);
  c->set_micro_batch_size(4);
  c->set_global_batch_size(4);
  c->set_recompute(v1::RECOMPUTE_FULL);
  m.set_iteration_time_s(seconds);
  m.set_out_of_memory(oom);
  if (!oom) m.set_peak_memory_gib(40 + seconds);
  (*m.mutable_labels())["cluster"] = id.size() % 2 ? "a" : "b";
  return m;
}

class AccuracyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/paraplan_accuracy_XXXXXX";
    dir_ = mkdtemp(tmpl);
    Open();
  }
  void TearDown() override {
    Close();
    std::system(("rm -rf " + dir_).c_str());
  }
  void Open() {
    auto s = store::Store::Open(dir_ + "/paraplan.db");
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
    metrics_ = std::make_unique<Metrics>();
    BackendOptions o;
    o.auto_calibrate_after = 0;  // no background thread: the allocation counts are this thread's
    backend_ = std::make_unique<Backend>(store_.get(), metrics_.get(), o);
    ASSERT_TRUE(backend_->Start().ok());
  }
  void Close() {
    backend_.reset();
    metrics_.reset();
    store_.reset();
  }

  v1::IngestMeasurementsResponse Ingest(const std::vector<v1::Measurement>& ms) {
    v1::IngestMeasurementsRequest req;
    for (const v1::Measurement& m : ms) *req.add_measurements() = m;
    absl::StatusOr<v1::IngestMeasurementsResponse> r = backend_->Ingest(req);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : v1::IngestMeasurementsResponse();
  }

  v1::AccuracyReport Accuracy(const std::string& profile, const std::string& label_key = "") {
    v1::GetAccuracyRequest req;
    req.set_profile(profile);
    req.set_label_key(label_key);
    absl::StatusOr<v1::AccuracyReport> r = backend_->Accuracy(req);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : v1::AccuracyReport();
  }

  // The gauges agree with GetAccuracy over all measurements.
  void ExpectGaugesMatch(const std::string& profile, const std::string& where) {
    const v1::AccuracyReport rep = Accuracy(profile);
    const std::string text = metrics_->Text();
    const std::string labels = absl::StrCat("{profile=\"", profile, "\"}");
    EXPECT_NEAR(SampleValue(text, "paraplan_prediction_mape_ratio" + labels), rep.overall().mape_ratio(), 1e-12)
        << where;
    EXPECT_NEAR(SampleValue(text, "paraplan_prediction_bias_ratio" + labels), rep.overall().bias_ratio(), 1e-12)
        << where;
  }

  std::string dir_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<Backend> backend_;
};

TEST_F(AccuracyTest, GaugesEqualGetAccuracyAfterEveryIngestDeleteAndRestart) {
  std::mt19937 rng(7);
  const double seconds[] = {1.2, 1.3, 1.42, 1.42, 1.5, 1.7};  // ties in the ratio order
  int next_id = 0;
  auto batch = [&](const std::string& profile, int n) {
    std::vector<v1::Measurement> ms;
    for (int i = 0; i < n; ++i) {
      const bool oom = rng() % 7 == 0;
      ms.push_back(RunOf(absl::StrCat("m", next_id++), profile, seconds[rng() % 6], oom));
    }
    return ms;
  };
  for (int round = 0; round < 40; ++round) {
    const int n = 1 + static_cast<int>(rng() % 9);
    EXPECT_EQ(Ingest(batch(kProfile, n)).accepted(), n);
    ExpectGaugesMatch(kProfile, absl::StrCat("round ", round));
  }
  // Concurrent ingests: each reads what the others stored too.
  std::vector<std::vector<v1::Measurement>> batches;
  for (int t = 0; t < 4; ++t) batches.push_back(batch(kProfile, 40));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 40; k += 5) {
        Ingest(std::vector<v1::Measurement>(batches[t].begin() + k, batches[t].begin() + k + 5));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ExpectGaugesMatch(kProfile, "after concurrent ingests");

  // A deleted profile's state goes with it; one of the same name starts afresh.
  v1::SystemProfile copy = *backend_->GetProfile(kProfile);
  copy.set_name("copy");
  ASSERT_TRUE(backend_->CreateProfile(copy).ok());
  Ingest(batch("copy", 9));
  ExpectGaugesMatch("copy", "copy");
  ASSERT_TRUE(backend_->DeleteProfile("copy").ok());
  ASSERT_TRUE(backend_->CreateProfile(copy).ok());
  Ingest({RunOf("fresh-1", "copy", 1.3), RunOf("fresh-2", "copy", 1.7)});
  EXPECT_EQ(Accuracy("copy").overall().count(), 2);
  ExpectGaugesMatch("copy", "re-created");

  // After a restart the gauges come from the store, and ingests go on from there.
  Close();
  Open();
  ExpectGaugesMatch(kProfile, "after restart");
  Ingest(batch(kProfile, 3));
  ExpectGaugesMatch(kProfile, "after restart and ingest");
}

TEST_F(AccuracyTest, IngestAllocatesNothingPerStoredMeasurement) {
  // 20,000 measurements written straight to the store, each with a body as the server
  // writes it plus a 400-byte label: over 10 MB of rows.
  constexpr int kStored = 20000;
  std::vector<store::MeasurementRow> rows;
  for (int i = 0; i < kStored; ++i) {
    v1::Measurement m = RunOf(absl::StrCat("stored-", i), kProfile, 1.2 + (i % 50) * 0.01);
    (*m.mutable_labels())["note"] = std::string(400, 'x');
    store::MeasurementRow r;
    r.id = m.id();
    r.profile_name = kProfile;
    r.profile_version = 1;
    r.iteration_time_s = m.iteration_time_s();
    r.predicted_iteration_time_s = 1.48;
    r.peak_memory_gib = m.peak_memory_gib();
    r.body = m.SerializeAsString();
    rows.push_back(std::move(r));
  }
  ASSERT_TRUE(store_->InsertMeasurements(rows).ok());
  int64_t stored_bytes = 0;
  for (const store::MeasurementRow& r : rows) stored_bytes += static_cast<int64_t>(r.body.size());
  rows.clear();
  rows.shrink_to_fit();
  ASSERT_GT(stored_bytes, 10'000'000);
  Close();
  Open();  // start-up reads them once
  ExpectGaugesMatch(kProfile, "after start-up");

  for (int i = 0; i < 3; ++i) {
    const Allocation a = Measure([&] { EXPECT_EQ(Ingest({RunOf(absl::StrCat("new-", i), kProfile, 1.4)}).accepted(), 1); });
    EXPECT_LT(a.total, 256 << 10) << "ingest " << i << " allocated " << a.total << " bytes";
    EXPECT_LT(a.peak, 256 << 10) << "ingest " << i << " held " << a.peak << " bytes";
  }
  ExpectGaugesMatch(kProfile, "after ingests");

  // GetAccuracy reads everything but holds a few numbers per measurement and one page of
  // rows, never the rows themselves.
  v1::AccuracyReport rep;
  const Allocation a = Measure([&] { rep = Accuracy(kProfile, "cluster"); });
  EXPECT_EQ(rep.overall().count(), kStored + 3);
  EXPECT_EQ(rep.by_label().size(), 2u);
  EXPECT_LT(a.peak, stored_bytes / 4) << "GetAccuracy held " << a.peak << " bytes";
}

}  // namespace
}  // namespace paraplan::server
