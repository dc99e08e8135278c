// What only the SQLite store has to show (the shared contract is store_test.cc's
// parameterised suite; PostgreSQL's own: postgres_store_test.cc): its migrations from a
// version-1 file, the default version found through its index afterwards, and a reopen
// that migrates nothing again.
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "store/sqlite_util.h"
#include "store/store.h"

namespace paraplan::store {
namespace {

TEST(SqliteStoreTest, MigratesVersionOneDatabase) {
  char tmpl[] = "/tmp/paraplan_store_XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string old_path = dir + "/old.db";
  {
    Database db;
    ASSERT_TRUE(db.Open(old_path).ok());
    // The schema as migration 1 created it.
    ASSERT_TRUE(db.ExecScript(R"sql(
CREATE TABLE profiles (
  name TEXT PRIMARY KEY
);
CREATE TABLE profile_versions (
  name TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
  version INTEGER NOT NULL,
  created_at_ms INTEGER NOT NULL,
  origin TEXT NOT NULL,
  body BLOB NOT NULL,
  PRIMARY KEY (name, version)
);
CREATE TABLE measurements (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  profile_name TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
  profile_version INTEGER NOT NULL,
  iteration_time_s REAL NOT NULL,
  predicted_iteration_time_s REAL NOT NULL,
  peak_memory_gib REAL NOT NULL,
  predicted_memory_gib REAL NOT NULL,
  predicted_fits INTEGER NOT NULL,
  out_of_memory INTEGER NOT NULL,
  observed_at_ms INTEGER NOT NULL,
  ingested_at_ms INTEGER NOT NULL,
  body BLOB NOT NULL
);
CREATE INDEX measurements_by_profile ON measurements(profile_name, seq);
CREATE TABLE calibration_runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  profile_name TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
  from_version INTEGER NOT NULL,
  to_version INTEGER NOT NULL,
  created_at_ms INTEGER NOT NULL,
  num_measurements INTEGER NOT NULL,
  last_measurement_seq INTEGER NOT NULL,
  report BLOB NOT NULL
);
INSERT INTO profiles(name) VALUES ('old');
INSERT INTO profile_versions(name, version, created_at_ms, origin, body) VALUES ('old', 1, 1000, 'builtin', 'v1');
INSERT INTO profile_versions(name, version, created_at_ms, origin, body) VALUES ('old', 2, 2000, 'user', 'v2');
INSERT INTO measurements(id, profile_name, profile_version, iteration_time_s, predicted_iteration_time_s,
  peak_memory_gib, predicted_memory_gib, predicted_fits, out_of_memory, observed_at_ms, ingested_at_ms, body)
  VALUES ('m', 'old', 1, 2.0, 1.5, 0, 0, 1, 0, 0, 0, 'b');
PRAGMA user_version = 1;
)sql").ok());
  }
  absl::StatusOr<std::unique_ptr<Store>> opened = Store::Open(old_path);
  ASSERT_TRUE(opened.ok()) << opened.status();
  Store& old = **opened;
  auto rows = *old.ListProfileVersions("old");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0].promoted);
  EXPECT_EQ(rows[0].promoted_at_unix_ms, 1000);
  EXPECT_FALSE(rows[0].is_default);
  EXPECT_TRUE(rows[1].promoted);
  EXPECT_EQ(rows[1].promoted_at_unix_ms, 2000);
  EXPECT_TRUE(rows[1].is_default);
  EXPECT_EQ(old.GetProfile("old")->body, "v2");  // same default as before the upgrade
  // The upgraded database works with the new API, and reopening does not migrate again.
  EXPECT_EQ(*old.PutProfileVersion("old", "v3", "user", false), 3);
  EXPECT_EQ(old.GetProfile("old")->version, 2);
  ASSERT_TRUE(old.PromoteProfileVersion("old", 1).ok());
  EXPECT_EQ(old.GetProfile("old")->version, 1);
  EXPECT_TRUE(old.CheckIntegrity().ok());
  opened->reset();
  opened = Store::Open(old_path);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ((*opened)->GetProfile("old")->version, 1);
  EXPECT_FALSE((*opened)->GetProfile("old", 3)->promoted);
  {
    Database db;
    ASSERT_TRUE(db.Open(old_path).ok());
    EXPECT_EQ(*db.QueryInt("PRAGMA user_version"), 4);
    // Migration 4: the default version is found through an index in its order, not by
    // sorting every version.
    EXPECT_EQ(*db.QueryInt("SELECT count(*) FROM sqlite_master WHERE name = 'profile_versions_default'"), 1);
    absl::StatusOr<Statement> plan = db.Prepare(
        "EXPLAIN QUERY PLAN SELECT d.version FROM profile_versions d WHERE d.name = 'old' ORDER BY "
        "d.promoted_at_ms IS NULL, d.promoted_at_ms DESC, d.version DESC LIMIT 1");
    ASSERT_TRUE(plan.ok()) << plan.status();
    std::string steps;
    while (*plan->Step()) absl::StrAppend(&steps, plan->ColumnText(3), "\n");
    EXPECT_NE(steps.find("profile_versions_default"), std::string::npos) << steps;
    EXPECT_EQ(steps.find("TEMP B-TREE"), std::string::npos) << steps;
  }
  // Migration 3 indexed the measurement stored before it.
  auto median = (*opened)->RatioAtRank("old", 0, 1 << 30);
  ASSERT_TRUE(median.ok()) << median.status();
  ASSERT_TRUE(median->has_value());
  EXPECT_EQ((*median)->ratio, 0.75);
  opened->reset();
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace paraplan::store
