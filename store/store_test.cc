#include "store/store.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "store/postgres_test_instance.h"

namespace paraplan::store {
namespace {

// The suite runs against each implementation: "sqlite" (a temporary file) and
// "postgresql" (a fresh database on a throwaway server, postgres_test_instance.h;
// skipped, saying why, where PostgreSQL cannot run).
class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/paraplan_store_XXXXXX";
    dir_ = mkdtemp(tmpl);
    if (GetParam() == "postgresql") {
      std::string why;
      PostgresTestInstance* pg = PostgresTestInstance::Shared(&why);
      if (pg == nullptr) GTEST_SKIP() << "PostgreSQL not available: " << why;
      absl::StatusOr<std::string> url = pg->NewDatabase();
      ASSERT_TRUE(url.ok()) << url.status();
      path_ = *url;
    } else {
      path_ = dir_ + "/test.db";
    }
    absl::StatusOr<std::unique_ptr<Store>> opened = Store::Open(path_);
    ASSERT_TRUE(opened.ok()) << opened.status();
    store_ = std::move(*opened);
  }
  void TearDown() override {
    store_.reset();
    std::system(("rm -rf " + dir_).c_str());
  }
  MeasurementRow Row(const std::string& id, const std::string& profile = "p") {
    MeasurementRow r;
    r.id = id;
    r.profile_name = profile;
    r.profile_version = 1;
    r.iteration_time_s = 2;
    r.predicted_iteration_time_s = 1.9;
    r.body = "body-" + id;
    return r;
  }
  std::string dir_, path_;  // path_: the Store::Open target
  std::unique_ptr<Store> store_;
};

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, ::testing::Values("sqlite", "postgresql"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST_P(StoreTest, VersionsAreImmutableAndReadable) {
  EXPECT_EQ(*store_->PutProfileVersion("p", "one", "user"), 1);
  EXPECT_EQ(*store_->PutProfileVersion("p", "two", "user"), 2);
  EXPECT_EQ(store_->GetProfile("p", 1)->body, "one");
  EXPECT_EQ(store_->GetProfile("p", 2)->body, "two");
  EXPECT_EQ(store_->GetProfile("p")->version, 2);
  EXPECT_EQ(store_->GetProfile("p", 7).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->GetProfile("q").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->ListProfileVersions("p")->size(), 2u);
}

TEST_P(StoreTest, SeedNeverOverwrites) {
  EXPECT_TRUE(*store_->SeedProfile("p", "builtin"));
  ASSERT_TRUE(store_->PutProfileVersion("p", "mine", "user").ok());
  EXPECT_FALSE(*store_->SeedProfile("p", "builtin again"));
  EXPECT_EQ(store_->GetProfile("p")->body, "mine");
  EXPECT_EQ(store_->GetProfile("p", 1)->origin, "builtin");
}

// Create writes version 1 with its origin and refuses a name that has versions, naming
// it; nothing is written then.
TEST_P(StoreTest, CreateRefusesAnExistingName) {
  absl::StatusOr<int> v = store_->CreateProfile("p", "mine", "user");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, 1);
  EXPECT_EQ(store_->GetProfile("p")->origin, "user");
  absl::StatusOr<int> again = store_->CreateProfile("p", "theirs", "user");
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(again.status().message(), "profile \"p\" exists; UpdateProfile writes a new version");
  EXPECT_EQ(store_->ListProfileVersions("p")->size(), 1u);
  EXPECT_EQ(store_->GetProfile("p")->body, "mine");
  EXPECT_EQ(store_->CreateProfile("", "x", "user").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(StoreTest, ListPaginates) {
  for (const char* n : {"a", "b", "c", "d"}) ASSERT_TRUE(store_->PutProfileVersion(n, n, "user").ok());
  ASSERT_TRUE(store_->PutProfileVersion("b", "b2", "user").ok());
  auto page1 = *store_->ListLatestProfiles("", 2);
  ASSERT_EQ(page1.size(), 2u);
  EXPECT_EQ(page1[1].name, "b");
  EXPECT_EQ(page1[1].body, "b2");
  auto page2 = *store_->ListLatestProfiles(page1.back().name, 2);
  ASSERT_EQ(page2.size(), 2u);
  EXPECT_EQ(page2[0].name, "c");
  EXPECT_TRUE(store_->ListLatestProfiles("d", 2)->empty());
}

TEST_P(StoreTest, MeasurementsAreIdempotentAndCascade) {
  ASSERT_TRUE(store_->PutProfileVersion("p", "x", "user").ok());
  ASSERT_TRUE(store_->InsertMeasurement(Row("m1")).ok());
  MeasurementRow dup = Row("m1");
  dup.iteration_time_s = 99;
  EXPECT_EQ(store_->InsertMeasurement(dup).code(), absl::StatusCode::kAlreadyExists);
  auto rows = *store_->ListMeasurements("p");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].iteration_time_s, 2);
  EXPECT_EQ(store_->InsertMeasurement(Row("m2", "nope")).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(*store_->DeleteProfile("p"), 1);
  EXPECT_FALSE(*store_->HasMeasurement("m1"));
  EXPECT_EQ(store_->DeleteProfile("p").status().code(), absl::StatusCode::kNotFound);
}

// Paging by seq and the ratio order against a brute-force sort: ties broken by seq,
// untimed rows (out of memory, no prediction) left out, through_seq respected, and
// neighbours of keys that are not stored.
TEST_P(StoreTest, PagesAndRatioOrderStatistics) {
  ASSERT_TRUE(store_->PutProfileVersion("p", "x", "user").ok());
  ASSERT_TRUE(store_->PutProfileVersion("q", "x", "user").ok());
  std::vector<MeasurementRow> rows;
  for (int i = 0; i < 60; ++i) {
    MeasurementRow r = Row(absl::StrCat("m", i), i % 7 == 0 ? "q" : "p");
    r.predicted_iteration_time_s = 1.0 + (i * 37 % 11) * 0.25;  // many ties
    r.out_of_memory = i % 9 == 4;
    if (i % 13 == 5) r.predicted_iteration_time_s = 0;  // no prediction
    rows.push_back(r);
  }
  ASSERT_TRUE(store_->InsertMeasurements(rows).ok());
  // Paging reads every row of "p" once, in seq order, bodies only in MeasurementsAfter.
  std::vector<MeasurementSummary> all;
  for (int64_t after = 0;;) {
    auto page = *store_->MeasurementSummariesAfter("p", after, 7);
    if (page.empty()) break;
    EXPECT_LE(page.size(), 7u);
    for (const auto& s : page) {
      EXPECT_GT(s.seq, after);
      after = s.seq;
      all.push_back(s);
    }
  }
  const auto full = *store_->ListMeasurements("p");
  ASSERT_EQ(all.size(), full.size());
  std::vector<RatioKey> order;
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].seq, full[i].seq);
    const bool timed = !full[i].out_of_memory && full[i].predicted_iteration_time_s > 0;
    EXPECT_EQ(all[i].timed, timed);
    if (!timed) continue;
    EXPECT_EQ(all[i].ratio, full[i].predicted_iteration_time_s / full[i].iteration_time_s);
    order.push_back({all[i].ratio, all[i].seq});
  }
  auto page = *store_->MeasurementsAfter("p", full[2].seq, 3);
  ASSERT_EQ(page.size(), 3u);
  EXPECT_EQ(page[0].id, full[3].id);
  EXPECT_EQ(page[0].body, full[3].body);

  const auto less = [](const RatioKey& a, const RatioKey& b) {
    return a.ratio < b.ratio || (a.ratio == b.ratio && a.seq < b.seq);
  };
  for (const int64_t through : {all.back().seq, all[all.size() / 2].seq}) {
    std::vector<RatioKey> sorted;
    for (const RatioKey& k : order) {
      if (k.seq <= through) sorted.push_back(k);
    }
    std::sort(sorted.begin(), sorted.end(), less);
    ASSERT_GT(sorted.size(), 10u);
    for (size_t i = 0; i < sorted.size(); ++i) {
      auto at = *store_->RatioAtRank("p", static_cast<int64_t>(i), through);
      ASSERT_TRUE(at.has_value());
      EXPECT_EQ(at->seq, sorted[i].seq) << i;
      auto next = *store_->NextRatio("p", sorted[i], through);
      auto prev = *store_->PreviousRatio("p", sorted[i], through);
      EXPECT_EQ(next.has_value(), i + 1 < sorted.size());
      if (next) {
        EXPECT_EQ(next->seq, sorted[i + 1].seq);
      }
      EXPECT_EQ(prev.has_value(), i > 0);
      if (prev) {
        EXPECT_EQ(prev->seq, sorted[i - 1].seq);
      }
    }
    EXPECT_FALSE(store_->RatioAtRank("p", static_cast<int64_t>(sorted.size()), through)->has_value());
    // A key that is not stored: between its neighbours.
    const RatioKey probe{sorted[3].ratio, through + 1000};
    auto after_probe = *store_->NextRatio("p", probe, through);
    auto upper = std::upper_bound(sorted.begin(), sorted.end(), probe, less);
    EXPECT_EQ(after_probe.has_value(), upper != sorted.end());
    if (after_probe) {
      EXPECT_EQ(after_probe->seq, upper->seq);
    }
    auto before_probe = *store_->PreviousRatio("p", probe, through);
    ASSERT_TRUE(before_probe.has_value());
    EXPECT_EQ(before_probe->seq, (upper - 1)->seq);
  }
  EXPECT_FALSE(store_->RatioAtRank("none", 0, 1 << 30)->has_value());
}

TEST_P(StoreTest, RecentAndSinceCalibration) {
  ASSERT_TRUE(store_->PutProfileVersion("p", "x", "user").ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(store_->InsertMeasurement(Row(absl::StrCat("m", i))).ok());
  auto recent = *store_->RecentMeasurements("p", 2);
  ASSERT_EQ(recent.size(), 2u);
  EXPECT_EQ(recent[0].id, "m3");
  EXPECT_EQ(recent[1].id, "m4");
  EXPECT_EQ(*store_->CountMeasurementsSinceCalibration("p"), 5);
  EXPECT_EQ(*store_->CountMeasurementsSinceCalibration("p", 3), 3);  // counted no further
  EXPECT_EQ(*store_->CountMeasurementsSinceCalibration("p", 9), 5);
  EXPECT_EQ(*store_->RecordCalibration("p", "calibrated", 1, 5, "report"), 2);
  EXPECT_EQ(*store_->CountMeasurementsSinceCalibration("p"), 0);
  ASSERT_TRUE(store_->InsertMeasurement(Row("m5")).ok());
  EXPECT_EQ(*store_->CountMeasurementsSinceCalibration("p"), 1);
  auto last = *store_->LastCalibration("p");
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->to_version, 2);
  EXPECT_EQ(store_->GetProfile("p")->origin, "calibration");
}

TEST_P(StoreTest, PersistsAcrossReopenAndBlobsRoundTrip) {
  const std::string blob("a\0b\0c", 5);
  ASSERT_TRUE(store_->PutProfileVersion("p", blob, "user").ok());
  ASSERT_TRUE(store_->InsertMeasurement(Row("m1")).ok());
  store_.reset();
  store_ = *Store::Open(path_);
  EXPECT_EQ(store_->GetProfile("p")->body, blob);
  EXPECT_TRUE(*store_->HasMeasurement("m1"));
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

TEST_P(StoreTest, ConcurrentInsertsAllLand) {
  ASSERT_TRUE(store_->PutProfileVersion("p", "x", "user").ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) ASSERT_TRUE(store_->InsertMeasurement(Row(absl::StrCat(t, "-", i))).ok());
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(store_->ListMeasurements("p")->size(), 200u);
}

TEST_P(StoreTest, QuotesAreHarmless) {
  ASSERT_TRUE(store_->PutProfileVersion("it's", "x", "user").ok());
  ASSERT_TRUE(store_->InsertMeasurement(Row("o'clock", "it's")).ok());
  EXPECT_TRUE(*store_->HasMeasurement("o'clock"));
  EXPECT_EQ(*store_->CountMeasurementsSinceCalibration("it's"), 1);
}

// Regression: ids and names were spliced into SQL; one with a NUL byte cut the
// statement short ("unrecognized token") after earlier rows of a request were committed.
TEST_P(StoreTest, AnyBytesAreData) {
  const std::string nul_name("p\0x", 3), nul_id("m\0'; DROP TABLE measurements; --", 33);
  ASSERT_TRUE(store_->PutProfileVersion(nul_name, "x", "user").ok());
  EXPECT_EQ(store_->GetProfile("p").status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(store_->InsertMeasurement(Row(nul_id, nul_name)).ok());
  EXPECT_TRUE(*store_->HasMeasurement(nul_id));
  EXPECT_FALSE(*store_->HasMeasurement("m"));
  EXPECT_EQ(store_->InsertMeasurement(Row(nul_id, nul_name)).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(*store_->CountMeasurementsSinceCalibration(nul_name), 1);
  EXPECT_EQ(store_->ListMeasurements(nul_name)->front().id, nul_id);
  EXPECT_EQ(*store_->RecordCalibration(nul_name, "y", 1, 1, "r"), 2);
  EXPECT_EQ(*store_->CountMeasurementsSinceCalibration(nul_name), 0);
  EXPECT_EQ(*store_->DeleteProfile(nul_name), 2);
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

TEST_P(StoreTest, BatchSaysPerRowWhatWasStored) {
  ASSERT_TRUE(store_->PutProfileVersion("p", "x", "user").ok());
  ASSERT_TRUE(store_->InsertMeasurement(Row("old")).ok());
  absl::StatusOr<std::vector<absl::Status>> r =
      store_->InsertMeasurements({Row("a"), Row("old"), Row("b", "nope"), Row("a"), Row("")});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 5u);
  EXPECT_TRUE((*r)[0].ok());
  EXPECT_EQ((*r)[1].code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ((*r)[2].code(), absl::StatusCode::kNotFound);
  EXPECT_EQ((*r)[3].code(), absl::StatusCode::kAlreadyExists);  // earlier in the same batch
  EXPECT_EQ((*r)[4].code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->ListMeasurements("p")->size(), 2u);
}

TEST_P(StoreTest, BatchIsAllOrNothing) {
  ASSERT_TRUE(store_->PutProfileVersion("p", "x", "user").ok());
  MeasurementRow bad = Row("bad");
  bad.predicted_iteration_time_s = std::nan("");  // SQLite stores NaN as NULL: NOT NULL fails; PostgreSQL: CHECK
  absl::StatusOr<std::vector<absl::Status>> r = store_->InsertMeasurements({Row("first"), bad, Row("last")});
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(*store_->HasMeasurement("first"));
  EXPECT_TRUE(store_->ListMeasurements("p")->empty());
  EXPECT_TRUE(store_->InsertMeasurements({Row("first")}).ok());  // the store is usable after
}

TEST_P(StoreTest, MeasurementsAfterTheFittedOnesStillCount) {
  ASSERT_TRUE(store_->PutProfileVersion("p", "x", "user").ok());
  for (const char* id : {"a", "b", "c"}) ASSERT_TRUE(store_->InsertMeasurement(Row(id)).ok());
  const int64_t fitted_through = store_->ListMeasurements("p")->at(0).seq;  // the fit saw "a" only
  ASSERT_TRUE(store_->RecordCalibration("p", "y", 1, 1, "r", true, fitted_through).ok());
  EXPECT_EQ(*store_->CountMeasurementsSinceCalibration("p"), 2);
}

TEST_P(StoreTest, ErrorsRepeatAtMost100BytesOfAName) {
  const std::string huge(10000, 'n');
  absl::Status s = store_->GetProfile(huge).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_LT(s.message().size(), 150u);
  EXPECT_NE(s.message().find(std::string(100, 'n') + "..."), std::string::npos) << s.message();
  EXPECT_LT(store_->DeleteProfile(huge).status().message().size(), 150u);
  ASSERT_TRUE(store_->PutProfileVersion("p", "x", "user").ok());
  EXPECT_LT(store_->GetProfile("p", 9).status().message().size(), 150u);
}

TEST_P(StoreTest, CandidateIsStoredButNotDefault) {
  EXPECT_EQ(*store_->PutProfileVersion("p", "one", "user"), 1);
  EXPECT_EQ(*store_->PutProfileVersion("p", "two", "user", /*promote=*/false), 2);
  ProfileRow def = *store_->GetProfile("p");
  EXPECT_EQ(def.version, 1);
  EXPECT_EQ(def.body, "one");
  EXPECT_TRUE(def.promoted);
  EXPECT_GT(def.promoted_at_unix_ms, 0);
  EXPECT_TRUE(def.is_default);
  ProfileRow cand = *store_->GetProfile("p", 2);
  EXPECT_EQ(cand.body, "two");
  EXPECT_FALSE(cand.promoted);
  EXPECT_EQ(cand.promoted_at_unix_ms, 0);
  EXPECT_FALSE(cand.is_default);
  EXPECT_TRUE(store_->GetProfile("p", 1)->is_default);
}

TEST_P(StoreTest, OnlyCandidatesMeansLatestIsDefault) {
  ASSERT_TRUE(store_->PutProfileVersion("p", "one", "user", false).ok());
  ASSERT_TRUE(store_->PutProfileVersion("p", "two", "user", false).ok());
  ProfileRow def = *store_->GetProfile("p");
  EXPECT_EQ(def.version, 2);
  EXPECT_FALSE(def.promoted);
  EXPECT_TRUE(def.is_default);
  EXPECT_FALSE(store_->GetProfile("p", 1)->is_default);
}

TEST_P(StoreTest, PromoteMakesDefaultAndRollsBack) {
  ASSERT_TRUE(store_->PutProfileVersion("p", "one", "user").ok());
  ASSERT_TRUE(store_->PutProfileVersion("p", "two", "user", false).ok());
  ASSERT_TRUE(store_->PromoteProfileVersion("p", 2).ok());
  ProfileRow def = *store_->GetProfile("p");
  EXPECT_EQ(def.version, 2);
  EXPECT_TRUE(def.promoted);
  EXPECT_TRUE(def.is_default);
  EXPECT_FALSE(store_->GetProfile("p", 1)->is_default);
  // Rollback: promoting the older version makes it the default at once, even within the
  // same millisecond.
  ASSERT_TRUE(store_->PromoteProfileVersion("p", 1).ok());
  EXPECT_EQ(store_->GetProfile("p")->version, 1);
  EXPECT_EQ(store_->GetProfile("p")->body, "one");
  EXPECT_GT(store_->GetProfile("p", 1)->promoted_at_unix_ms, store_->GetProfile("p", 2)->promoted_at_unix_ms);
  EXPECT_FALSE(store_->GetProfile("p", 2)->is_default);
  EXPECT_TRUE(store_->GetProfile("p", 2)->promoted);
  // A new promoted version after a rollback is the default again.
  EXPECT_EQ(*store_->PutProfileVersion("p", "three", "user"), 3);
  EXPECT_EQ(store_->GetProfile("p")->version, 3);
  // Back and forth.
  ASSERT_TRUE(store_->PromoteProfileVersion("p", 2).ok());
  EXPECT_EQ(store_->GetProfile("p")->version, 2);
  ASSERT_TRUE(store_->PromoteProfileVersion("p", 2).ok());  // promoting the default again
  EXPECT_EQ(store_->GetProfile("p")->version, 2);
}

TEST_P(StoreTest, PromoteMissingVersionIsNotFound) {
  ASSERT_TRUE(store_->PutProfileVersion("p", "one", "user").ok());
  absl::Status s = store_->PromoteProfileVersion("p", 7);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(s.message().find("\"p\""), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("7"), absl::string_view::npos) << s;
  EXPECT_EQ(store_->PromoteProfileVersion("nope", 1).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->PromoteProfileVersion("p", 0).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->GetProfile("p")->version, 1);
}

TEST_P(StoreTest, ListLatestReturnsDefaults) {
  ASSERT_TRUE(store_->PutProfileVersion("a", "a1", "user").ok());
  ASSERT_TRUE(store_->PutProfileVersion("a", "a2", "user", false).ok());
  ASSERT_TRUE(store_->PutProfileVersion("b", "b1", "user").ok());
  ASSERT_TRUE(store_->PutProfileVersion("b", "b2", "user").ok());
  ASSERT_TRUE(store_->PromoteProfileVersion("b", 1).ok());
  ASSERT_TRUE(store_->PutProfileVersion("c", "c1", "user").ok());
  ASSERT_TRUE(store_->PutProfileVersion("c", "c2", "user").ok());
  auto rows = *store_->ListLatestProfiles("", 10);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "a");
  EXPECT_EQ(rows[0].version, 1);
  EXPECT_EQ(rows[1].name, "b");
  EXPECT_EQ(rows[1].version, 1);
  EXPECT_EQ(rows[1].body, "b1");
  EXPECT_EQ(rows[2].name, "c");
  EXPECT_EQ(rows[2].version, 2);
  for (const ProfileRow& r : rows) {
    EXPECT_TRUE(r.is_default) << r.name;
    EXPECT_TRUE(r.promoted) << r.name;
  }
}

TEST_P(StoreTest, ListVersionsFlagsPromotedAndDefault) {
  ASSERT_TRUE(store_->PutProfileVersion("p", "one", "user").ok());
  ASSERT_TRUE(store_->PutProfileVersion("p", "two", "user").ok());
  ASSERT_TRUE(store_->PutProfileVersion("p", "three", "user", false).ok());
  ASSERT_TRUE(store_->PromoteProfileVersion("p", 1).ok());
  auto rows = *store_->ListProfileVersions("p");
  ASSERT_EQ(rows.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(rows[i].version, i + 1);
  EXPECT_TRUE(rows[0].promoted);
  EXPECT_TRUE(rows[1].promoted);
  EXPECT_FALSE(rows[2].promoted);
  EXPECT_TRUE(rows[0].is_default);
  EXPECT_FALSE(rows[1].is_default);
  EXPECT_FALSE(rows[2].is_default);
  EXPECT_EQ(store_->ListProfileVersions("q").status().code(), absl::StatusCode::kNotFound);
}

TEST_P(StoreTest, CalibrationCanLeaveDefault) {
  ASSERT_TRUE(store_->PutProfileVersion("p", "x", "user").ok());
  ASSERT_TRUE(store_->InsertMeasurement(Row("m1")).ok());
  EXPECT_EQ(*store_->RecordCalibration("p", "candidate", 1, 1, "report", /*promote=*/false), 2);
  EXPECT_EQ(store_->GetProfile("p")->version, 1);
  ProfileRow cand = *store_->GetProfile("p", 2);
  EXPECT_EQ(cand.origin, "calibration");
  EXPECT_FALSE(cand.promoted);
  EXPECT_FALSE(cand.is_default);
  auto last = *store_->LastCalibration("p");
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->to_version, 2);
  EXPECT_EQ(*store_->CountMeasurementsSinceCalibration("p"), 0);
  ASSERT_TRUE(store_->PromoteProfileVersion("p", 2).ok());
  EXPECT_EQ(store_->GetProfile("p")->body, "candidate");
}

TEST_P(StoreTest, SeedIsPromoted) {
  EXPECT_TRUE(*store_->SeedProfile("p", "builtin"));
  ProfileRow r = *store_->GetProfile("p");
  EXPECT_TRUE(r.promoted);
  EXPECT_TRUE(r.is_default);
}

TEST_P(StoreTest, NamesOrderBytewise) {
  // Bytewise like SQLite's BINARY collation, whatever the database's locale says.
  const std::vector<std::string> names = {"b", "B", "\xc3\xa9t\xc3\xa9", "a\x01", "a", "Z9", std::string("a\0b", 3)};
  for (const std::string& n : names) ASSERT_TRUE(store_->PutProfileVersion(n, n, "user").ok());
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::string> listed;
  const std::vector<ProfileRow> rows = *store_->ListLatestProfiles("", 100);
  for (const ProfileRow& r : rows) listed.push_back(r.name);
  EXPECT_EQ(listed, sorted);
  auto after = *store_->ListLatestProfiles("a", 2);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0].name, std::string("a\0b", 3));
  EXPECT_EQ(after[1].name, "a\x01");
}

TEST_P(StoreTest, CalibrationLockIsHeldByOneLeaseAtATime) {
  absl::StatusOr<std::unique_ptr<Lease>> first = store_->LockCalibration("p", /*wait=*/false);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_NE(*first, nullptr);
  absl::StatusOr<std::unique_ptr<Lease>> second = store_->LockCalibration("p", false);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*second, nullptr);
  absl::StatusOr<std::unique_ptr<Lease>> other = store_->LockCalibration("q", false);  // another name
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_NE(*other, nullptr);
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    absl::StatusOr<std::unique_ptr<Lease>> l = store_->LockCalibration("p", /*wait=*/true);
    got = l.ok() && *l != nullptr;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(got.load());  // still waiting
  first->reset();
  waiter.join();
  EXPECT_TRUE(got.load());
  absl::StatusOr<std::unique_ptr<Lease>> again = store_->LockCalibration("p", false);
  ASSERT_TRUE(again.ok());
  EXPECT_NE(*again, nullptr);
}

TEST_P(StoreTest, ASecondStoreOnTheSameDatabaseSeesWritesAtOnce) {
  absl::StatusOr<std::unique_ptr<Store>> other = Store::Open(path_);
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE(store_->PutProfileVersion("p", "one", "user").ok());
  EXPECT_EQ((*other)->GetProfile("p")->body, "one");
  ASSERT_TRUE((*other)->InsertMeasurement(Row("m1")).ok());
  EXPECT_EQ(store_->InsertMeasurement(Row("m1")).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(*store_->CountMeasurementsSinceCalibration("p"), 1);
  EXPECT_EQ(*store_->RecordCalibration("p", "two", 1, 1, "r"), 2);
  EXPECT_EQ((*other)->GetProfile("p")->version, 2);
  EXPECT_EQ((*other)->LastCalibration("p")->value().to_version, 2);
  EXPECT_EQ(*(*other)->CountMeasurementsSinceCalibration("p"), 0);
  ASSERT_TRUE((*other)->PromoteProfileVersion("p", 1).ok());
  EXPECT_EQ(store_->GetProfile("p")->version, 1);
  EXPECT_EQ(*(*other)->DeleteProfile("p"), 2);
  EXPECT_EQ(store_->GetProfile("p").status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE((*other)->CheckIntegrity().ok());
}

}  // namespace
}  // namespace paraplan::store
