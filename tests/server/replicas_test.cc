// Two paraplan servers (replicas) on one PostgreSQL database, in-process on loopback
// ports, driven through the generated gRPC stubs and /metrics over HTTP: what is written
// through one (profile versions, measurements, calibrations, promotions, deletions) is
// read through the other at once; the gauges of shared state (MAPE, bias, profile
// version) agree on both; automatic calibration runs once, not once per replica. The
// database is a fresh one on a throwaway PostgreSQL server (store/postgres_test_instance.h);
// without PostgreSQL binaries the tests are skipped, saying so.
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/postgres_test_instance.h"
#include "store/store.h"
#include "tests/server/fixture.h"

namespace paraplan::server {
namespace {

using ::testing::HasSubstr;

struct Replica {
  std::unique_ptr<RunningServer> server;
  std::unique_ptr<v1::Profiles::Stub> profiles;
  std::unique_ptr<v1::Measurements::Stub> measurements;

  std::string Metrics() const { return HttpGet(server->metrics_port(), "/metrics"); }

  v1::SystemProfile Get(const std::string& ref, grpc::StatusCode* code = nullptr) {
    grpc::ClientContext ctx;
    v1::GetProfileRequest req;
    req.set_name(ref);
    v1::SystemProfile p;
    const grpc::Status s = profiles->GetProfile(&ctx, req, &p);
    if (code != nullptr) *code = s.error_code();
    return p;
  }
  v1::ListProfileVersionsResponse Versions(const std::string& name) {
    grpc::ClientContext ctx;
    v1::ListProfileVersionsRequest req;
    req.set_name(name);
    v1::ListProfileVersionsResponse out;
    profiles->ListProfileVersions(&ctx, req, &out);
    return out;
  }
  v1::IngestMeasurementsResponse Ingest(const std::vector<v1::Measurement>& ms) {
    grpc::ClientContext ctx;
    v1::IngestMeasurementsRequest req;
    for (const v1::Measurement& m : ms) *req.add_measurements() = m;
    v1::IngestMeasurementsResponse resp;
    EXPECT_TRUE(measurements->IngestMeasurements(&ctx, req, &resp).ok());
    return resp;
  }
  v1::AccuracyReport Accuracy(const std::string& profile) {
    grpc::ClientContext ctx;
    v1::GetAccuracyRequest req;
    req.set_profile(profile);
    v1::AccuracyReport rep;
    EXPECT_TRUE(measurements->GetAccuracy(&ctx, req, &rep).ok());
    return rep;
  }
};

class ReplicasTest : public ServerTest {
 protected:
  // ServerTest's own server (SQLite) is not used: each test starts its replicas.
  void SetUp() override {
    std::string why;
    pg_ = store::PostgresTestInstance::Shared(&why);
    if (pg_ == nullptr) GTEST_SKIP() << "PostgreSQL not available: " << why;
    absl::StatusOr<std::string> url = pg_->NewDatabase();
    ASSERT_TRUE(url.ok()) << url.status();
    url_ = *url;
  }
  void TearDown() override {
    for (auto& r : replicas_) r->server->Shutdown(absl::Seconds(5));
    replicas_.clear();
  }

  Replica& StartReplica(int auto_calibrate_after) {
    ServerOptions o;
    o.listen = "127.0.0.1:0";
    o.db_path = url_;
    o.metrics_listen = "127.0.0.1:0";
    o.log_level = LogLevel::kWarn;
    o.auto_calibrate_after = auto_calibrate_after;
    o.limits.write_rate_per_s = 0;
    absl::StatusOr<std::unique_ptr<RunningServer>> s = StartServer(o);
    EXPECT_TRUE(s.ok()) << s.status();
    auto r = std::make_unique<Replica>();
    r->server = std::move(*s);
    auto channel =
        grpc::CreateChannel("127.0.0.1:" + std::to_string(r->server->port()), grpc::InsecureChannelCredentials());
    r->profiles = v1::Profiles::NewStub(channel);
    r->measurements = v1::Measurements::NewStub(channel);
    replicas_.push_back(std::move(r));
    return *replicas_.back();
  }

  // A user profile: the built-in A100 with `matmul_efficiency`, written through `r`.
  void CreateProfile(Replica& r, const std::string& name, double matmul_efficiency) {
    v1::SystemProfile p = r.Get("dgx-a100-80gb");
    p.set_name(name);
    p.mutable_calibration()->set_matmul_efficiency(matmul_efficiency);
    grpc::ClientContext ctx;
    v1::CreateProfileRequest req;
    *req.mutable_profile() = p;
    v1::SystemProfile out;
    ASSERT_TRUE(r.profiles->CreateProfile(&ctx, req, &out).ok());
  }

  // `copies` of the public measurements for `profile`, ids tagged `tag`, iteration times
  // spread a little so that each copy is its own measurement.
  std::vector<v1::Measurement> Copies(const std::string& profile, const std::string& tag, int first, int copies) {
    std::vector<v1::Measurement> out;
    for (int c = first; c < first + copies; ++c) {
      for (v1::Measurement m : PublicMeasurements()) {
        m.set_id(absl::StrCat(tag, "-", c, "-", m.id()));
        m.set_profile(profile);
        m.set_iteration_time_s(m.iteration_time_s() * (1 + 0.002 * c));
        out.push_back(m);
      }
    }
    return out;
  }

  static int CalibrationVersions(const v1::ListProfileVersionsResponse& h) {
    int n = 0;
    for (const v1::SystemProfile& v : h.versions()) n += v.origin() == "calibration";
    return n;
  }

  store::PostgresTestInstance* pg_ = nullptr;
  std::string url_;
  std::vector<std::unique_ptr<Replica>> replicas_;
};

TEST_F(ReplicasTest, WritesThroughOneAreReadThroughTheOtherAtOnce) {
  Replica& a = StartReplica(0);
  Replica& b = StartReplica(0);
  // Both seeded the built-ins: once.
  EXPECT_EQ(b.Versions("dgx-a100-80gb").versions_size(), 1);

  // Profile versions.
  CreateProfile(a, "shared", 0.45);
  EXPECT_EQ(b.Get("shared").version(), 1);
  EXPECT_EQ(b.Get("shared").calibration().matmul_efficiency(), 0.45);
  {
    v1::SystemProfile p = b.Get("shared");
    p.set_description("written through b");
    grpc::ClientContext ctx;
    v1::UpdateProfileRequest req;
    *req.mutable_profile() = p;
    v1::SystemProfile out;
    ASSERT_TRUE(b.profiles->UpdateProfile(&ctx, req, &out).ok());
    EXPECT_EQ(out.version(), 2);
  }
  EXPECT_EQ(a.Get("shared").version(), 2);
  EXPECT_EQ(a.Get("shared").description(), "written through b");

  // Measurements, ingested through both at once; ids are idempotent across replicas.
  const std::vector<v1::Measurement> first = Copies("shared", "a", 0, 3), second = Copies("shared", "b", 3, 3);
  std::thread other([&] { EXPECT_EQ(b.Ingest(second).accepted(), static_cast<int>(second.size())); });
  EXPECT_EQ(a.Ingest(first).accepted(), static_cast<int>(first.size()));
  other.join();
  const v1::IngestMeasurementsResponse again = b.Ingest(first);
  EXPECT_EQ(again.duplicates(), static_cast<int>(first.size()));
  EXPECT_EQ(again.accepted(), 0);
  const v1::AccuracyReport through_a = a.Accuracy("shared"), through_b = b.Accuracy("shared");
  EXPECT_EQ(through_b.overall().count(), static_cast<int>(first.size() + second.size()));
  EXPECT_EQ(through_b.overall().mape_ratio(), through_a.overall().mape_ratio());

  // The gauges of shared state agree on both replicas (and with GetAccuracy).
  const std::string p = "{profile=\"shared\"}";
  for (Replica* r : {&a, &b}) {
    const std::string text = r->Metrics();
    ASSERT_THAT(text, HasSubstr("200 OK"));
    EXPECT_NEAR(SampleValue(text, "paraplan_prediction_mape_ratio" + p), through_a.overall().mape_ratio(), 1e-12);
    EXPECT_NEAR(SampleValue(text, "paraplan_prediction_bias_ratio" + p), through_a.overall().bias_ratio(), 1e-12);
    EXPECT_EQ(SampleValue(text, "paraplan_profile_version" + p), 2);
  }

  // A calibration through b: the new version is a's default at once.
  {
    grpc::ClientContext ctx;
    v1::CalibrateRequest req;
    req.set_profile("shared");
    v1::CalibrateResponse r;
    ASSERT_TRUE(b.measurements->Calibrate(&ctx, req, &r).ok());
    ASSERT_TRUE(r.report().promote()) << r.report().promotion_reason();
    EXPECT_EQ(r.profile().version(), 3);
  }
  EXPECT_EQ(a.Get("shared").version(), 3);
  EXPECT_EQ(a.Get("shared").origin(), "calibration");
  EXPECT_GT(a.Get("shared").calibration().matmul_efficiency(), 0.6);
  for (Replica* r : {&a, &b}) EXPECT_EQ(SampleValue(r->Metrics(), "paraplan_profile_version" + p), 3);

  // A rollback through a; then measurements through a only: b's gauges follow.
  {
    grpc::ClientContext ctx;
    v1::PromoteProfileRequest req;
    req.set_name("shared@2");
    v1::SystemProfile out;
    ASSERT_TRUE(a.profiles->PromoteProfile(&ctx, req, &out).ok());
  }
  EXPECT_EQ(b.Get("shared").version(), 2);
  EXPECT_EQ(a.Ingest(Copies("shared", "late", 6, 2)).accepted(), 18);
  const v1::AccuracyReport after = b.Accuracy("shared");
  EXPECT_EQ(after.overall().count(), 72);
  const std::string text_a = a.Metrics(), text_b = b.Metrics();
  EXPECT_EQ(SampleValue(text_b, "paraplan_profile_version" + p), 2);
  EXPECT_NEAR(SampleValue(text_b, "paraplan_prediction_mape_ratio" + p), after.overall().mape_ratio(), 1e-12);
  EXPECT_NEAR(SampleValue(text_b, "paraplan_prediction_bias_ratio" + p), after.overall().bias_ratio(), 1e-12);
  EXPECT_EQ(SampleValue(text_a, "paraplan_prediction_mape_ratio" + p),
            SampleValue(text_b, "paraplan_prediction_mape_ratio" + p));
  EXPECT_EQ(SampleValue(text_a, "paraplan_prediction_bias_ratio" + p),
            SampleValue(text_b, "paraplan_prediction_bias_ratio" + p));

  // Deleted through b, then created again through b with other measurements: a forgets
  // the old ones (its gauges describe the new profile only).
  {
    grpc::ClientContext ctx;
    v1::DeleteProfileRequest req;
    req.set_name("shared");
    v1::DeleteProfileResponse out;
    ASSERT_TRUE(b.profiles->DeleteProfile(&ctx, req, &out).ok());
  }
  grpc::StatusCode code = grpc::StatusCode::OK;
  a.Get("shared", &code);
  EXPECT_EQ(code, grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(a.Metrics(), ::testing::Not(HasSubstr("paraplan_profile_version" + p)));
  CreateProfile(b, "shared", 0.8);
  EXPECT_EQ(b.Ingest(Copies("shared", "new", 0, 1)).accepted(), 9);
  const v1::AccuracyReport renewed = a.Accuracy("shared");
  EXPECT_EQ(renewed.overall().count(), 9);
  const std::string renewed_a = a.Metrics();
  EXPECT_NEAR(SampleValue(renewed_a, "paraplan_prediction_mape_ratio" + p), renewed.overall().mape_ratio(), 1e-12);
  EXPECT_EQ(SampleValue(renewed_a, "paraplan_profile_version" + p), 1);
}

// Deleted and created again between two refreshes of the other replica: it must not
// add the new measurements to the counts of the old profile.
// Two replicas creating one new profile name at the same moment: exactly one succeeds
// (version 1), the other is ALREADY_EXISTS, as on one server; repeated over fresh names.
TEST_F(ReplicasTest, ConcurrentCreatesOfOneNameSucceedOnce) {
  Replica& a = StartReplica(0);
  Replica& b = StartReplica(0);
  v1::SystemProfile base = a.Get("dgx-a100-80gb");
  for (int round = 0; round < 10; ++round) {
    const std::string name = absl::StrCat("race-", round);
    std::atomic<int> ok{0}, exists{0};
    std::vector<std::thread> threads;
    for (Replica* r : {&a, &b}) {
      threads.emplace_back([&, r] {
        v1::CreateProfileRequest req;
        *req.mutable_profile() = base;
        req.mutable_profile()->set_name(name);
        req.mutable_profile()->set_version(0);
        grpc::ClientContext ctx;
        v1::SystemProfile out;
        const grpc::Status s = r->profiles->CreateProfile(&ctx, req, &out);
        if (s.ok()) ++ok;
        if (s.error_code() == grpc::StatusCode::ALREADY_EXISTS) ++exists;
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(ok.load(), 1) << name;
    EXPECT_EQ(exists.load(), 1) << name;
    grpc::ClientContext ctx;
    v1::ListProfileVersionsRequest req;
    req.set_name(name);
    v1::ListProfileVersionsResponse versions;
    ASSERT_TRUE(b.profiles->ListProfileVersions(&ctx, req, &versions).ok());
    EXPECT_EQ(versions.versions_size(), 1) << name;
  }
}

TEST_F(ReplicasTest, ProfileRecreatedUnderTheSameNameStartsAfreshOnTheOtherReplica) {
  Replica& a = StartReplica(0);
  Replica& b = StartReplica(0);
  CreateProfile(a, "again", 0.6);
  ASSERT_EQ(a.Ingest(Copies("again", "old", 0, 2)).accepted(), 18);
  const std::string p = "{profile=\"again\"}";
  ASSERT_EQ(SampleValue(b.Metrics(), "paraplan_profile_version" + p), 1);  // b has read the 18
  {
    grpc::ClientContext ctx;
    v1::DeleteProfileRequest req;
    req.set_name("again");
    v1::DeleteProfileResponse out;
    ASSERT_TRUE(a.profiles->DeleteProfile(&ctx, req, &out).ok());
  }
  CreateProfile(a, "again", 0.9);
  ASSERT_EQ(a.Ingest(Copies("again", "new", 5, 1)).accepted(), 9);
  const v1::AccuracyReport truth = a.Accuracy("again");
  ASSERT_EQ(truth.overall().count(), 9);
  const std::string text = b.Metrics();
  EXPECT_NEAR(SampleValue(text, "paraplan_prediction_mape_ratio" + p), truth.overall().mape_ratio(), 1e-12);
  EXPECT_NEAR(SampleValue(text, "paraplan_prediction_bias_ratio" + p), truth.overall().bias_ratio(), 1e-12);
}

TEST_F(ReplicasTest, AutomaticCalibrationRunsOnceNotOncePerReplica) {
  constexpr int kAfter = 100;
  Replica& a = StartReplica(kAfter);
  Replica& b = StartReplica(kAfter);
  CreateProfile(a, "busy", 0.5);
  ASSERT_EQ(a.Ingest(Copies("busy", "base", 0, 11)).accepted(), 99);  // one short of due

  // While a third party calibrates "busy" (the test holds the profile's calibration
  // lock, as a third replica would), the measurements that make it due reach both
  // replicas: both see it due, neither calibrates it.
  absl::StatusOr<std::unique_ptr<store::Store>> third = store::Store::Open(url_);
  ASSERT_TRUE(third.ok()) << third.status();
  absl::StatusOr<std::unique_ptr<store::Lease>> held = (*third)->LockCalibration("busy", false);
  ASSERT_TRUE(held.ok() && *held != nullptr) << held.status();
  EXPECT_TRUE(a.Ingest(Copies("busy", "a", 11, 1)).calibration_triggered());
  EXPECT_TRUE(b.Ingest(Copies("busy", "b", 12, 1)).calibration_triggered());
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(a.Versions("busy").versions_size(), 1);
  held->reset();

  // Due through both replicas at once: one calibration in all.
  std::thread other([&] { b.Ingest(Copies("busy", "b", 13, 1)); });
  a.Ingest(Copies("busy", "a", 14, 1));
  other.join();
  bool calibrated = false;
  for (int i = 0; i < 600 && !calibrated; ++i) {
    calibrated = b.Versions("busy").versions_size() >= 2;
    if (!calibrated) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(calibrated);
  std::this_thread::sleep_for(std::chrono::seconds(3));  // time for a second one, if any
  const v1::ListProfileVersionsResponse h = a.Versions("busy");
  EXPECT_EQ(h.versions_size(), 2);
  EXPECT_EQ(CalibrationVersions(h), 1);
  const std::string series = "paraplan_calibrations_total{profile=\"busy\"}";
  auto count = [&](Replica& r) {
    const double v = SampleValue(r.Metrics(), series);
    return std::isnan(v) ? 0.0 : v;
  };
  EXPECT_EQ(count(a) + count(b), 1);
}

}  // namespace
}  // namespace paraplan::server
