#include "store/store.h"

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace paraplan::store {
namespace {

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/paraplan_store_XXXXXX";
    dir_ = mkdtemp(tmpl);
    path_ = dir_ + "/test.db";
    store_ = *Store::Open(path_);
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
  std::string dir_, path_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoreTest, VersionsAreImmutableAndReadable) {
  EXPECT_EQ(*store_->PutProfileVersion("p", "one", "user"), 1);
  EXPECT_EQ(*store_->PutProfileVersion("p", "two", "user"), 2);
  EXPECT_EQ(store_->GetProfile("p", 1)->body, "one");
  EXPECT_EQ(store_->GetProfile("p", 2)->body, "two");
  EXPECT_EQ(store_->GetProfile("p")->version, 2);
  EXPECT_EQ(store_->GetProfile("p", 7).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->GetProfile("q").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->ListProfileVersions("p")->size(), 2u);
}

TEST_F(StoreTest, SeedNeverOverwrites) {
  EXPECT_TRUE(*store_->SeedProfile("p", "builtin"));
  ASSERT_TRUE(store_->PutProfileVersion("p", "mine", "user").ok());
  EXPECT_FALSE(*store_->SeedProfile("p", "builtin again"));
  EXPECT_EQ(store_->GetProfile("p")->body, "mine");
  EXPECT_EQ(store_->GetProfile("p", 1)->origin, "builtin");
}

TEST_F(StoreTest, ListPaginates) {
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

TEST_F(StoreTest, MeasurementsAreIdempotentAndCascade) {
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

TEST_F(StoreTest, RecentAndSinceCalibration) {
  ASSERT_TRUE(store_->PutProfileVersion("p", "x", "user").ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(store_->InsertMeasurement(Row(absl::StrCat("m", i))).ok());
  auto recent = *store_->RecentMeasurements("p", 2);
  ASSERT_EQ(recent.size(), 2u);
  EXPECT_EQ(recent[0].id, "m3");
  EXPECT_EQ(recent[1].id, "m4");
  EXPECT_EQ(*store_->CountMeasurementsSinceCalibration("p"), 5);
  EXPECT_EQ(*store_->RecordCalibration("p", "calibrated", 1, 5, "report"), 2);
  EXPECT_EQ(*store_->CountMeasurementsSinceCalibration("p"), 0);
  ASSERT_TRUE(store_->InsertMeasurement(Row("m5")).ok());
  EXPECT_EQ(*store_->CountMeasurementsSinceCalibration("p"), 1);
  auto last = *store_->LastCalibration("p");
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->to_version, 2);
  EXPECT_EQ(store_->GetProfile("p")->origin, "calibration");
}

TEST_F(StoreTest, PersistsAcrossReopenAndBlobsRoundTrip) {
  const std::string blob("a\0b\0c", 5);
  ASSERT_TRUE(store_->PutProfileVersion("p", blob, "user").ok());
  ASSERT_TRUE(store_->InsertMeasurement(Row("m1")).ok());
  store_.reset();
  store_ = *Store::Open(path_);
  EXPECT_EQ(store_->GetProfile("p")->body, blob);
  EXPECT_TRUE(*store_->HasMeasurement("m1"));
  EXPECT_TRUE(store_->CheckIntegrity().ok());
}

TEST_F(StoreTest, ConcurrentInsertsAllLand) {
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

TEST_F(StoreTest, QuotesAreHarmless) {
  ASSERT_TRUE(store_->PutProfileVersion("it's", "x", "user").ok());
  ASSERT_TRUE(store_->InsertMeasurement(Row("o'clock", "it's")).ok());
  EXPECT_TRUE(*store_->HasMeasurement("o'clock"));
  EXPECT_EQ(*store_->CountMeasurementsSinceCalibration("it's"), 1);
}

}  // namespace
}  // namespace paraplan::store
