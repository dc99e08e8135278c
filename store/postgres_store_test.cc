// What only the PostgreSQL store has to show (the shared contract is store_test.cc's
// parameterised suite): its migrations from an older schema, a newer schema refused,
// several Stores on one database as several replicas use it (versions without gaps,
// measurements in commit order per profile, one seed, one calibration lock), reconnection
// after the server drops connections, and the target helpers of store.h.
#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "store/postgres_test_instance.h"
#include "store/store.h"

namespace paraplan::store {
namespace {

TEST(StoreTargets, PostgresUrisPickPostgresAndHideTheirPassword) {
  EXPECT_TRUE(Store::IsPostgresTarget("postgresql://h/db"));
  EXPECT_TRUE(Store::IsPostgresTarget("postgres://h/db"));
  EXPECT_FALSE(Store::IsPostgresTarget("paraplan.db"));
  EXPECT_FALSE(Store::IsPostgresTarget("/var/lib/postgresql/paraplan.db"));
  EXPECT_EQ(Store::Redacted("paraplan.db"), "paraplan.db");
  EXPECT_EQ(Store::Redacted("postgresql://u:s3cret@db:5432/p"), "postgresql://u:***@db:5432/p");
  EXPECT_EQ(Store::Redacted("postgresql://u@db/p"), "postgresql://u@db/p");
  EXPECT_EQ(Store::Redacted("postgres://u:p@ss@db/p?sslmode=require"), "postgres://u:***@db/p?sslmode=require");
  EXPECT_EQ(Store::Redacted("postgresql://db/p?user=u&password=s3cret&sslmode=require"),
            "postgresql://db/p?user=u&password=***&sslmode=require");
}

TEST(StoreTargets, UnreachableServerIsUnavailableWithoutThePassword) {
  absl::StatusOr<std::unique_ptr<Store>> s = Store::Open("postgresql://u:s3cret@127.0.0.1:1/none?connect_timeout=2");
  ASSERT_FALSE(s.ok());
  // UNIMPLEMENTED in a build without libpqxx.
  EXPECT_TRUE(s.status().code() == absl::StatusCode::kUnavailable ||
              s.status().code() == absl::StatusCode::kUnimplemented)
      << s.status();
  EXPECT_EQ(s.status().message().find("s3cret"), absl::string_view::npos) << s.status();
}

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    pg_ = PostgresTestInstance::Shared(&why);
    if (pg_ == nullptr) GTEST_SKIP() << "PostgreSQL not available: " << why;
    absl::StatusOr<std::string> url = pg_->NewDatabase();
    ASSERT_TRUE(url.ok()) << url.status();
    url_ = *url;
  }
  std::unique_ptr<Store> Open() {
    absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(url_);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }
  std::string Sql(const std::string& sql) {
    absl::StatusOr<std::string> out = pg_->Psql(url_, sql);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : "";
  }
  static MeasurementRow Row(const std::string& id, const std::string& profile = "p") {
    MeasurementRow r;
    r.id = id;
    r.profile_name = profile;
    r.profile_version = 1;
    r.iteration_time_s = 2;
    r.predicted_iteration_time_s = 1.9;
    r.body = "body-" + id;
    return r;
  }
  PostgresTestInstance* pg_ = nullptr;
  std::string url_;
};

TEST_F(PostgresStoreTest, MigratesVersionOneDatabase) {
  // The schema as migration 1 created it, with rows.
  Sql(R"sql(
CREATE TABLE schema_version (one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one), version INTEGER NOT NULL);
CREATE TABLE profiles (name BYTEA PRIMARY KEY);
CREATE TABLE profile_versions (
  name BYTEA NOT NULL REFERENCES profiles(name) ON DELETE CASCADE, version INTEGER NOT NULL,
  created_at_ms BIGINT NOT NULL, origin BYTEA NOT NULL, body BYTEA NOT NULL, PRIMARY KEY (name, version));
CREATE TABLE measurements (
  seq BIGINT GENERATED ALWAYS AS IDENTITY (CACHE 1) PRIMARY KEY, id BYTEA NOT NULL UNIQUE,
  profile_name BYTEA NOT NULL REFERENCES profiles(name) ON DELETE CASCADE, profile_version INTEGER NOT NULL,
  iteration_time_s DOUBLE PRECISION NOT NULL CHECK (iteration_time_s <> 'NaN'),
  predicted_iteration_time_s DOUBLE PRECISION NOT NULL CHECK (predicted_iteration_time_s <> 'NaN'),
  peak_memory_gib DOUBLE PRECISION NOT NULL CHECK (peak_memory_gib <> 'NaN'),
  predicted_memory_gib DOUBLE PRECISION NOT NULL CHECK (predicted_memory_gib <> 'NaN'),
  predicted_fits BOOLEAN NOT NULL, out_of_memory BOOLEAN NOT NULL, observed_at_ms BIGINT NOT NULL,
  ingested_at_ms BIGINT NOT NULL, body BYTEA NOT NULL);
CREATE INDEX measurements_by_profile ON measurements(profile_name, seq);
CREATE TABLE calibration_runs (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  profile_name BYTEA NOT NULL REFERENCES profiles(name) ON DELETE CASCADE, from_version INTEGER NOT NULL,
  to_version INTEGER NOT NULL, created_at_ms BIGINT NOT NULL, num_measurements INTEGER NOT NULL,
  last_measurement_seq BIGINT NOT NULL, report BYTEA NOT NULL);
CREATE INDEX calibration_runs_by_profile ON calibration_runs(profile_name, id);
INSERT INTO profiles(name) VALUES ('old');
INSERT INTO profile_versions(name, version, created_at_ms, origin, body) VALUES ('old', 1, 1000, 'builtin', 'v1');
INSERT INTO profile_versions(name, version, created_at_ms, origin, body) VALUES ('old', 2, 2000, 'user', 'v2');
INSERT INTO measurements(id, profile_name, profile_version, iteration_time_s, predicted_iteration_time_s,
  peak_memory_gib, predicted_memory_gib, predicted_fits, out_of_memory, observed_at_ms, ingested_at_ms, body)
  VALUES ('m', 'old', 1, 2.0, 1.5, 0, 0, TRUE, FALSE, 0, 0, 'b');
INSERT INTO schema_version(version) VALUES (1);
)sql");
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  auto rows = *store->ListProfileVersions("old");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0].promoted);
  EXPECT_EQ(rows[0].promoted_at_unix_ms, 1000);
  EXPECT_FALSE(rows[0].is_default);
  EXPECT_EQ(rows[1].promoted_at_unix_ms, 2000);
  EXPECT_TRUE(rows[1].is_default);
  EXPECT_EQ(store->GetProfile("old")->body, "v2");
  EXPECT_EQ(*store->PutProfileVersion("old", "v3", "user", false), 3);
  EXPECT_EQ(store->GetProfile("old")->version, 2);
  EXPECT_TRUE(store->CheckIntegrity().ok());
  // Migration 3 indexed the measurement stored before it.
  auto median = store->RatioAtRank("old", 0, 1 << 30);
  ASSERT_TRUE(median.ok()) << median.status();
  ASSERT_TRUE(median->has_value());
  EXPECT_EQ((*median)->ratio, 0.75);
  EXPECT_EQ(Sql("SELECT version FROM schema_version"), "4\n");
  EXPECT_EQ(Sql("SELECT count(*) FROM pg_indexes WHERE indexname = 'measurements_by_ratio'"), "1\n");
  // Migration 4: the default version is found through an index in its order.
  EXPECT_EQ(Sql("SELECT count(*) FROM pg_indexes WHERE indexname = 'profile_versions_default'"), "1\n");
  // Reopening does not migrate again.
  store.reset();
  store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_FALSE(store->GetProfile("old", 3)->promoted);
}

TEST_F(PostgresStoreTest, NewerSchemaIsRefused) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->CheckIntegrity().ok());
  Sql("UPDATE schema_version SET version = 99");
  EXPECT_EQ(store->CheckIntegrity().code(), absl::StatusCode::kDataLoss);
  absl::StatusOr<std::unique_ptr<Store>> newer = Store::Open(url_);
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), absl::StatusCode::kFailedPrecondition) << newer.status();
  EXPECT_NE(newer.status().message().find("newer than this build"), absl::string_view::npos) << newer.status();
}

// Replicas starting together migrate once and seed once; concurrent writers of one
// profile number its versions 1..n without a gap or a conflict.
TEST_F(PostgresStoreTest, ConcurrentReplicasMigrateSeedAndNumberVersionsOnce) {
  constexpr int kReplicas = 4;
  std::vector<std::unique_ptr<Store>> stores(kReplicas);
  std::atomic<int> seeded{0}, failed{0};
  {
    std::vector<std::thread> threads;
    for (int i = 0; i < kReplicas; ++i) {
      threads.emplace_back([&, i] {
        absl::StatusOr<std::unique_ptr<Store>> s = Store::Open(url_);
        if (!s.ok()) {
          ++failed;
          return;
        }
        stores[i] = std::move(*s);
        absl::StatusOr<bool> seed = stores[i]->SeedProfile("builtin", "b");
        if (!seed.ok()) ++failed;
        if (seed.ok() && *seed) ++seeded;
      });
    }
    for (std::thread& t : threads) t.join();
  }
  ASSERT_EQ(failed.load(), 0);
  EXPECT_EQ(seeded.load(), 1);
  EXPECT_EQ(Sql("SELECT count(*) FROM schema_version"), "1\n");
  constexpr int kWrites = 10;
  {
    std::vector<std::thread> threads;
    for (int i = 0; i < kReplicas; ++i) {
      threads.emplace_back([&, i] {
        for (int k = 0; k < kWrites; ++k) {
          if (!stores[i]->PutProfileVersion("shared", absl::StrCat(i, "-", k), "user", k % 2 == 0).ok()) ++failed;
        }
      });
    }
    for (std::thread& t : threads) t.join();
  }
  EXPECT_EQ(failed.load(), 0);
  auto versions = *stores[0]->ListProfileVersions("shared");
  ASSERT_EQ(versions.size(), static_cast<size_t>(kReplicas * kWrites));
  for (size_t i = 0; i < versions.size(); ++i) EXPECT_EQ(versions[i].version, static_cast<int>(i) + 1);
  // Exactly one default, the same through every replica.
  int defaults = 0;
  for (const ProfileRow& r : versions) defaults += r.is_default;
  EXPECT_EQ(defaults, 1);
  for (const auto& s : stores) EXPECT_EQ(s->GetProfile("shared")->version, stores[0]->GetProfile("shared")->version);
}

// A reader that pages by "seq > the last seen" (as the accuracy gauges do) misses no
// measurement that writers on other connections commit while it reads.
TEST_F(PostgresStoreTest, ReaderPagingBySeqMissesNoConcurrentCommit) {
  constexpr int kWriters = 4, kBatches = 40, kBatch = 5;
  std::vector<std::unique_ptr<Store>> writers;
  for (int i = 0; i < kWriters; ++i) writers.push_back(Open());
  std::unique_ptr<Store> reader = Open();
  ASSERT_TRUE(reader->PutProfileVersion("p", "x", "user").ok());
  std::atomic<bool> done{false};
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (int b = 0; b < kBatches; ++b) {
        std::vector<MeasurementRow> rows;
        for (int k = 0; k < kBatch; ++k) rows.push_back(Row(absl::StrCat(w, "-", b, "-", k)));
        absl::StatusOr<std::vector<absl::Status>> r = writers[w]->InsertMeasurements(rows);
        if (!r.ok()) ++failed;
      }
    });
  }
  std::set<int64_t> seen;
  int64_t through = 0;
  auto read_new = [&] {
    for (;;) {
      auto page = reader->MeasurementSummariesAfter("p", through, 7);
      ASSERT_TRUE(page.ok()) << page.status();
      for (const MeasurementSummary& m : *page) {
        EXPECT_TRUE(seen.insert(m.seq).second);
        through = m.seq;
      }
      if (page->size() < 7) return;
    }
  };
  std::thread stop([&] {
    for (std::thread& t : threads) t.join();
    done = true;
  });
  while (!done) read_new();
  stop.join();
  read_new();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(seen.size(), static_cast<size_t>(kWriters * kBatches * kBatch));
  EXPECT_EQ(reader->ListMeasurements("p")->size(), seen.size());
}

TEST_F(PostgresStoreTest, CalibrationLockSpansStores) {
  std::unique_ptr<Store> a = Open(), b = Open();
  absl::StatusOr<std::unique_ptr<Lease>> held = a->LockCalibration("p", false);
  ASSERT_TRUE(held.ok()) << held.status();
  ASSERT_NE(*held, nullptr);
  absl::StatusOr<std::unique_ptr<Lease>> refused = b->LockCalibration("p", false);
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ(*refused, nullptr);
  held->reset();
  absl::StatusOr<std::unique_ptr<Lease>> taken = b->LockCalibration("p", false);
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_NE(*taken, nullptr);
  // The lock lives on its holder's connection: when the holder's connection dies (its
  // process crashed), the lock is free again.
  Sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
      "AND pid <> pg_backend_pid() AND EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = pg_stat_activity.pid "
      "AND l.locktype = 'advisory')");
  absl::StatusOr<std::unique_ptr<Lease>> after_crash;
  for (int i = 0; i < 50; ++i) {  // the server releases it once it notices
    after_crash = a->LockCalibration("p", false);
    ASSERT_TRUE(after_crash.ok()) << after_crash.status();
    if (*after_crash != nullptr) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_NE(*after_crash, nullptr);
  taken->reset();  // its connection is gone: releasing says nothing and does not throw
}

// The server drops every connection (a restart, a failover): the next calls reconnect.
TEST_F(PostgresStoreTest, ReconnectsAfterTheServerDropsConnections) {
  std::unique_ptr<Store> store = Open();
  ASSERT_TRUE(store->PutProfileVersion("p", "x", "user").ok());
  ASSERT_TRUE(store->InsertMeasurement(Row("m1")).ok());
  Sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
      "AND pid <> pg_backend_pid()");
  EXPECT_EQ(store->GetProfile("p")->body, "x");
  EXPECT_TRUE(store->InsertMeasurement(Row("m2")).ok());
  EXPECT_EQ(store->ListMeasurements("p")->size(), 2u);
}

}  // namespace
}  // namespace paraplan::store
