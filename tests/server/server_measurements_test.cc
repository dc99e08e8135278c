// Integration tests of ingest, accuracy and calibration against the real server in-process
// (fixture.h): idempotent ingest across restarts, per-item answers, concurrent writes,
// candidates and promotion, the calibration operations and automatic calibration.
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "paraplan/v1/services.grpc.pb.h"
#include "server/metrics.h"
#include "server/server.h"
#include "tests/server/fixture.h"

namespace paraplan::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST_F(ServerTest, IngestIsIdempotentAndSurvivesRestart) {
  std::vector<v1::Measurement> ms = PublicMeasurements();
  ASSERT_EQ(ms.size(), 9u);
  v1::Measurement bad = ms[0];
  bad.set_id("bad-time");
  bad.set_iteration_time_s(-1);
  v1::Measurement bad_config = ms[0];
  bad_config.set_id("bad-config");
  bad_config.mutable_config()->set_tensor_parallel(7);
  v1::Measurement unknown = ms[0];
  unknown.set_id("unknown-profile");
  unknown.set_profile("nowhere");
  std::vector<v1::Measurement> batch = ms;
  batch.push_back(bad);
  batch.push_back(bad_config);
  batch.push_back(unknown);
  v1::IngestMeasurementsResponse r = Ingest(batch);
  EXPECT_EQ(r.accepted(), 9);
  EXPECT_EQ(r.rejected(), 3);
  EXPECT_THAT(r.results(9).reason(), HasSubstr("iteration_time_s"));
  EXPECT_THAT(r.results(10).reason(), HasSubstr("config.tensor_parallel"));
  EXPECT_THAT(r.results(11).reason(), HasSubstr("nowhere"));
  EXPECT_GT(r.results(0).predicted_iteration_time_s(), 0);
  // Outside the physical bounds (once accepted: accuracy then read +Inf for good, and two
  // such made calibration store a NaN profile).
  std::vector<v1::Measurement> absurd;
  for (const auto& [id, t, gib] : {std::tuple{"tiny", 5e-324, 10.0}, {"huge", 1e300, 10.0}, {"mem", 1.0, 1.7e308}}) {
    v1::Measurement m = ms[0];
    m.set_id(id);
    m.set_iteration_time_s(t);
    m.set_peak_memory_gib(gib);
    absurd.push_back(m);
  }
  v1::IngestMeasurementsResponse refused = Ingest(absurd);
  EXPECT_EQ(refused.rejected(), 3);
  EXPECT_THAT(refused.results(0).reason(), HasSubstr("iteration_time_s: 4.94066e-324 is outside [1e-06, 1e+06]"));
  EXPECT_THAT(refused.results(1).reason(), HasSubstr("iteration_time_s: 1e+300 is outside [1e-06, 1e+06]"));
  EXPECT_THAT(refused.results(2).reason(), HasSubstr("peak_memory_gib: 1.7e+308 is outside [0, 100000]"));
  v1::IngestMeasurementsResponse again = Ingest(ms);
  EXPECT_EQ(again.duplicates(), 9);
  EXPECT_EQ(again.accepted(), 0);

  auto accuracy = [&] {
    grpc::ClientContext ctx;
    v1::GetAccuracyRequest req;
    req.set_profile("dgx-a100-80gb");
    req.set_label_key("source");
    v1::AccuracyReport rep;
    EXPECT_TRUE(measurements_->GetAccuracy(&ctx, req, &rep).ok());
    return rep;
  };
  const v1::AccuracyReport before = accuracy();
  EXPECT_EQ(before.overall().count(), 9);
  EXPECT_LT(before.overall().mape_ratio(), 0.05);
  EXPECT_EQ(before.by_label_size(), 2);  // Table 5 rows and the 2,240-GPU run cite different sources

  // /metrics agrees with GetAccuracy.
  const std::string text = server_->metrics().Text();
  EXPECT_THAT(text, HasSubstr("paraplan_prediction_mape_ratio{profile=\"dgx-a100-80gb\"} " +
                              std::to_string(before.overall().mape_ratio()).substr(0, 6)));
  EXPECT_THAT(text, HasSubstr("paraplan_measurements_ingested_total{profile=\"dgx-a100-80gb\",result=\"accepted\"} 9"));
  EXPECT_THAT(text, HasSubstr("paraplan_rpc_requests_total"));

  Restart();
  const v1::AccuracyReport after = accuracy();
  EXPECT_EQ(after.overall().count(), 9);
  EXPECT_DOUBLE_EQ(after.overall().mape_ratio(), before.overall().mape_ratio());
  EXPECT_EQ(Ingest(ms).duplicates(), 9);
  EXPECT_THAT(server_->metrics().Text(), HasSubstr("paraplan_prediction_error_ratio_count{profile=\"dgx-a100-80gb\"} 9"));
  EXPECT_NEAR(SampleValue(server_->metrics().Text(), "paraplan_prediction_mape_ratio{profile=\"dgx-a100-80gb\"}"),
              before.overall().mape_ratio(), 1e-12);
  EXPECT_TRUE(server_->CheckIntegrity().ok());
}

TEST_F(ServerTest, IngestRejectsItemByItem) {
  const std::vector<v1::Measurement> ms = PublicMeasurements();
  ASSERT_FALSE(ms.empty());
  std::vector<v1::Measurement> batch;
  auto add = [&](const std::string& id, std::function<void(v1::Measurement*)> mutate) {
    v1::Measurement m = ms[0];
    m.set_id(id);
    mutate(&m);
    batch.push_back(m);
  };
  add("", [](v1::Measurement*) {});                                                        // 0 empty id
  add(std::string(201, 'i'), [](v1::Measurement*) {});                                     // 1 long id
  add("nan", [](v1::Measurement* m) { m->set_iteration_time_s(std::nan("")); });           // 2
  add("inf", [](v1::Measurement* m) { m->set_iteration_time_s(1.0 / 0.0); });              // 3
  add("zero", [](v1::Measurement* m) { m->set_iteration_time_s(0); });                     // 4
  add("too-many-gpus", [](v1::Measurement* m) {  // 5: 8,192 GPUs on a 4,480-GPU cluster
    m->mutable_config()->set_data_parallel(1024);
    m->mutable_config()->set_global_batch_size(4096);
  });
  add("no-workload", [](v1::Measurement* m) { m->clear_workload(); });                     // 6
  add("bad-hidden", [](v1::Measurement* m) { m->mutable_workload()->mutable_transformer()->set_hidden_size(0); });
  add("bad-enum", [](v1::Measurement* m) { m->mutable_config()->set_recompute(static_cast<v1::Recompute>(8)); });
  add("pinned", [](v1::Measurement* m) { m->set_profile("dgx-a100-80gb@1"); });            // 9 accepted
  add("pinned", [](v1::Measurement*) {});                                                  // 10 duplicate in batch
  add("bad-version", [](v1::Measurement* m) { m->set_profile("dgx-a100-80gb@7"); });       // 11
  v1::IngestMeasurementsResponse r = Ingest(batch);
  ASSERT_EQ(r.results_size(), 12);
  EXPECT_EQ(r.accepted(), 1);
  EXPECT_EQ(r.duplicates(), 1);
  EXPECT_EQ(r.rejected(), 10);
  const char* reasons[] = {"id", "id", "iteration_time_s", "iteration_time_s", "iteration_time_s", "GPUs",
                           "workload", "workload.transformer.hidden_size", "config.recompute"};
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(r.results(i).status(), v1::IngestResult::STATUS_REJECTED) << i;
    EXPECT_THAT(r.results(i).reason(), HasSubstr(reasons[i])) << i;
  }
  EXPECT_EQ(r.results(9).status(), v1::IngestResult::STATUS_ACCEPTED);
  EXPECT_EQ(r.results(9).profile_version(), 1);
  EXPECT_EQ(r.results(10).status(), v1::IngestResult::STATUS_DUPLICATE);
  EXPECT_EQ(r.results(11).status(), v1::IngestResult::STATUS_REJECTED);
  grpc::ClientContext ctx;
  v1::GetAccuracyRequest req;
  req.set_profile("dgx-a100-80gb");
  v1::AccuracyReport rep;
  ASSERT_TRUE(measurements_->GetAccuracy(&ctx, req, &rep).ok());
  EXPECT_EQ(rep.overall().count(), 1);  // stored once
}

TEST_F(ServerTest, ConcurrentWritesStayConsistent) {
  const std::vector<v1::Measurement> ms = PublicMeasurements();
  v1::SystemProfile p = Profile("dgx-a100-80gb");
  p.set_name("race");
  std::atomic<int> created{0}, exists{0}, accepted{0}, duplicates{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      {
        grpc::Status s = CreateProfile(p);
        (s.ok() ? created : exists)++;
      }
      grpc::ClientContext ctx;
      v1::IngestMeasurementsRequest req;
      for (const auto& m : ms) *req.add_measurements() = m;
      v1::IngestMeasurementsResponse resp;
      if (measurements_->IngestMeasurements(&ctx, req, &resp).ok()) {
        accepted += resp.accepted();
        duplicates += resp.duplicates();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(created.load(), 1);
  EXPECT_EQ(exists.load(), 5);
  EXPECT_EQ(Profile("race").version(), 1);
  EXPECT_EQ(accepted.load(), static_cast<int>(ms.size()));
  EXPECT_EQ(duplicates.load(), 5 * static_cast<int>(ms.size()));
  EXPECT_TRUE(server_->CheckIntegrity().ok());
}

TEST_F(ServerTest, AccuracyCountsMemoryHitsAndMisses) {
  std::vector<v1::Measurement> ms = PublicMeasurements();
  ASSERT_GE(ms.size(), 4u);
  // Every public run fits in 80 GB (the estimator agrees; asserted below).
  ms[0].set_peak_memory_gib(60);   // fits and fitted: hit
  ms[1].set_out_of_memory(true);   // predicted to fit, went OOM: miss
  ms[2].set_peak_memory_gib(500);  // "ran" above the 80 GiB capacity: miss
  // ms[3..]: no memory observation, not counted
  v1::IngestMeasurementsResponse in = Ingest(ms);
  EXPECT_EQ(in.accepted(), static_cast<int>(ms.size()));
  grpc::ClientContext ctx;
  v1::GetAccuracyRequest req;
  req.set_profile("dgx-a100-80gb");
  req.set_recent(2);
  req.set_label_key("no-such-label");
  v1::AccuracyReport rep;
  ASSERT_TRUE(measurements_->GetAccuracy(&ctx, req, &rep).ok());
  EXPECT_EQ(rep.overall().memory_hits(), 1);
  EXPECT_EQ(rep.overall().memory_misses(), 2);
  EXPECT_EQ(rep.overall().count(), static_cast<int>(ms.size()) - 1);  // the OOM run has no time
  EXPECT_EQ(rep.recent().count(), 2);
  ASSERT_EQ(rep.by_label_size(), 1);  // every row lacks the label: one group ""
  EXPECT_EQ(rep.by_label().at("").count(), rep.overall().count());
  EXPECT_GT(rep.overall().bias_ratio(), 0.5);
  EXPECT_LT(rep.overall().bias_ratio(), 1.5);
  EXPECT_LE(rep.overall().median_ape_ratio(), 2 * rep.overall().mape_ratio() + 1e-12);
  const std::string text = server_->metrics().Text();
  EXPECT_THAT(text, HasSubstr("paraplan_memory_predictions_total{profile=\"dgx-a100-80gb\",result=\"hit\"} 1"));
  EXPECT_THAT(text, HasSubstr("paraplan_memory_predictions_total{profile=\"dgx-a100-80gb\",result=\"miss\"} 2"));
  {
    grpc::ClientContext c2;
    v1::GetAccuracyRequest bad;
    bad.set_profile("nowhere");
    EXPECT_EQ(measurements_->GetAccuracy(&c2, bad, &rep).error_code(), grpc::StatusCode::NOT_FOUND);
  }
}

TEST_F(ServerTest, CalibrationThatDoesNotCrossValidateBetterStaysACandidate) {
  {
    grpc::ClientContext ctx;
    v1::CalibrateRequest req;
    req.set_profile("dgx-a100-80gb");
    v1::CalibrateResponse r;
    EXPECT_EQ(measurements_->Calibrate(&ctx, req, &r).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  }
  {  // One measurement is not enough to calibrate on.
    Ingest({PredictedMeasurements()[0]});
    grpc::ClientContext ctx;
    v1::CalibrateRequest req;
    req.set_profile("dgx-a100-80gb");
    v1::CalibrateResponse r;
    grpc::Status s = measurements_->Calibrate(&ctx, req, &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_THAT(s.error_message(), HasSubstr("needs at least 5 measurements"));
  }
  // Runs the defaults predict to within their noise: a fit to them does not
  // cross-validate better by the 2 % margin, so it is stored but not promoted.
  Ingest(PredictedMeasurements());
  {  // A dry run stores nothing.
    grpc::ClientContext ctx;
    v1::CalibrateRequest req;
    req.set_profile("dgx-a100-80gb");
    req.set_dry_run(true);
    v1::CalibrateResponse r;
    ASSERT_TRUE(measurements_->Calibrate(&ctx, req, &r).ok());
    EXPECT_FALSE(r.stored());
    EXPECT_EQ(r.report().num_measurements(), 9);
    EXPECT_EQ(Versions("dgx-a100-80gb").versions_size(), 1);
  }
  grpc::ClientContext ctx;
  v1::CalibrateRequest req;
  req.set_profile("dgx-a100-80gb");
  v1::CalibrateResponse r;
  ASSERT_TRUE(measurements_->Calibrate(&ctx, req, &r).ok());
  EXPECT_TRUE(r.stored());
  EXPECT_EQ(r.profile().version(), 2);
  EXPECT_EQ(r.report().num_measurements(), 9);
  EXPECT_TRUE(r.report().cv_valid());
  EXPECT_FALSE(r.report().promote());
  EXPECT_THAT(r.report().promotion_reason(), HasSubstr("not promoted: cross-validated"));
  EXPECT_FALSE(r.profile().is_default());
  EXPECT_EQ(r.profile().fit_report().based_on_version(), 1);
  // The default stays version 1; estimates use it unless version 2 is pinned.
  EXPECT_EQ(Profile("dgx-a100-80gb").version(), 1);
  v1::EstimateResponse e;
  ASSERT_TRUE(Estimate(Gpt3Estimate(), &e).ok());
  EXPECT_EQ(e.estimate().profile_version(), 1);
  v1::EstimateRequest pinned = Gpt3Estimate();
  pinned.set_profile("dgx-a100-80gb@2");
  ASSERT_TRUE(Estimate(pinned, &e).ok());
  EXPECT_EQ(e.estimate().profile_version(), 2);
  // Both are in the history, with their origin and promotion.
  const v1::ListProfileVersionsResponse h = Versions("dgx-a100-80gb");
  ASSERT_EQ(h.versions_size(), 2);
  EXPECT_EQ(h.versions(0).origin(), "builtin");
  EXPECT_TRUE(h.versions(0).is_default());
  EXPECT_EQ(h.versions(1).origin(), "calibration");
  EXPECT_FALSE(h.versions(1).promoted());
  // Promoting the candidate makes it the default; promoting version 1 rolls back.
  EXPECT_EQ(Promote("dgx-a100-80gb@2"), grpc::StatusCode::OK);
  EXPECT_EQ(Profile("dgx-a100-80gb").version(), 2);
  ASSERT_TRUE(Estimate(Gpt3Estimate(), &e).ok());
  EXPECT_EQ(e.estimate().profile_version(), 2);
  EXPECT_EQ(Promote("dgx-a100-80gb@1"), grpc::StatusCode::OK);
  EXPECT_EQ(Profile("dgx-a100-80gb").version(), 1);
  EXPECT_EQ(Promote("dgx-a100-80gb@7"), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Promote("dgx-a100-80gb"), grpc::StatusCode::INVALID_ARGUMENT);
}

// A profile whose matmul efficiency is far off what its jobs show: calibration fixes it,
// cross-validates far better, and becomes the default.
TEST_F(ServerTest, CalibrationThatCrossValidatesBetterIsPromoted) {
  Ingest(SlowA100());
  grpc::ClientContext ctx;
  v1::CalibrateRequest req;
  req.set_profile("slow-a100");
  v1::CalibrateResponse r;
  ASSERT_TRUE(measurements_->Calibrate(&ctx, req, &r).ok());
  EXPECT_TRUE(r.report().promote()) << r.report().promotion_reason();
  EXPECT_THAT(r.report().promotion_reason(), HasSubstr("promoted"));
  EXPECT_LT(r.report().cv_mape_ratio(), 0.5 * r.report().current_mape_ratio());
  EXPECT_TRUE(r.profile().is_default());
  EXPECT_EQ(Profile("slow-a100").version(), 2);
  EXPECT_GT(Profile("slow-a100").calibration().matmul_efficiency(), 0.6);
}

// Calibration as an operation: StartCalibration answers at once, GetCalibration follows
// it to the result Calibrate would give; calibrating the same measurements again stores
// nothing and says so; a new measurement makes the next one fit again.
TEST_F(ServerTest, StartedCalibrationRunsToItsResultAndIsNotRepeatedOnTheSameData) {
  const std::vector<v1::Measurement> ms = SlowA100();
  Ingest({ms.begin(), ms.end() - 1});
  v1::CalibrationOperation op;
  {
    grpc::ClientContext ctx;
    v1::CalibrateRequest req;
    req.set_profile("slow-a100");
    ASSERT_TRUE(measurements_->StartCalibration(&ctx, req, &op).ok());
  }
  EXPECT_EQ(op.state(), v1::CalibrationOperation::STATE_RUNNING);
  EXPECT_EQ(op.profile(), "slow-a100");
  v1::GetCalibrationRequest get;
  get.set_operation_id(op.id());
  for (int i = 0; i < 600 && op.state() == v1::CalibrationOperation::STATE_RUNNING; ++i) {
    absl::SleepFor(absl::Milliseconds(50));
    grpc::ClientContext ctx;
    ASSERT_TRUE(measurements_->GetCalibration(&ctx, get, &op).ok());
  }
  ASSERT_EQ(op.state(), v1::CalibrationOperation::STATE_DONE) << op.error().message();
  EXPECT_TRUE(op.result().stored());
  EXPECT_EQ(op.result().profile().version(), 2);
  EXPECT_TRUE(op.result().profile().is_default());
  EXPECT_EQ(op.result().report().num_measurements(), 8);
  // Again on the same measurements: the same answer, nothing stored.
  auto calibrate = [&] {
    grpc::ClientContext ctx;
    v1::CalibrateRequest req;
    req.set_profile("slow-a100");
    v1::CalibrateResponse r;
    EXPECT_TRUE(measurements_->Calibrate(&ctx, req, &r).ok());
    return r;
  };
  v1::CalibrateResponse same = calibrate();
  EXPECT_TRUE(same.up_to_date());
  EXPECT_FALSE(same.stored());
  EXPECT_EQ(same.profile().version(), 2);
  EXPECT_EQ(same.report().cv_mape_ratio(), op.result().report().cv_mape_ratio());
  EXPECT_EQ(Versions("slow-a100").versions_size(), 2);
  // One more measurement: a new fit, from version 2.
  Ingest({ms.back()});
  v1::CalibrateResponse next = calibrate();
  EXPECT_FALSE(next.up_to_date());
  EXPECT_TRUE(next.stored());
  EXPECT_EQ(next.report().num_measurements(), 9);
  EXPECT_EQ(next.profile().fit_report().based_on_version(), 2);
  EXPECT_EQ(Versions("slow-a100").versions_size(), 3);
  // Unknown and missing ids, and a profile that is not stored.
  {
    grpc::ClientContext ctx;
    get.set_operation_id("cal-0000000000000000");
    EXPECT_EQ(measurements_->GetCalibration(&ctx, get, &op).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  {
    grpc::ClientContext ctx;
    get.clear_operation_id();
    grpc::Status s = measurements_->GetCalibration(&ctx, get, &op);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("operation_id"));
  }
  {
    grpc::ClientContext ctx;
    v1::CalibrateRequest req;
    req.set_profile("no-such-profile");
    EXPECT_EQ(measurements_->StartCalibration(&ctx, req, &op).error_code(), grpc::StatusCode::NOT_FOUND);
  }
}

TEST_F(ServerTest, AutomaticCalibrationAfterNMeasurements) {
  auto_calibrate_after_ = 5;
  Restart();
  v1::IngestMeasurementsResponse r = Ingest(PredictedMeasurements());
  EXPECT_TRUE(r.calibration_triggered());
  // It runs in the background: version 2 appears (not cross-validating better, it is not
  // the default).
  ASSERT_TRUE(WaitForVersions("dgx-a100-80gb", 2));
  EXPECT_EQ(Profile("dgx-a100-80gb").version(), 1);
}

// Regression: auto-calibration ran inside the ingest RPC, under a mutex: one ingest
// waited for the whole fit while concurrent ingests each refitted the same data.
TEST_F(ServerTest, AutomaticCalibrationRunsInTheBackgroundOncePerProfile) {
  auto_calibrate_after_ = 300;
  Restart();
  v1::SystemProfile p = Profile("dgx-a100-80gb");
  p.set_name("busy");
  {
    ASSERT_TRUE(CreateProfile(p).ok());
  }
  // Six concurrent ingests of 54 fresh measurements each: the last makes one due.
  const std::vector<v1::Measurement> ms = PublicMeasurements();
  auto ingest = [&](const std::string& tag, int copies, v1::IngestMeasurementsResponse* resp) {
    grpc::ClientContext ctx;
    v1::IngestMeasurementsRequest req;
    for (int c = 0; c < copies; ++c) {
      for (const v1::Measurement& m : ms) {
        v1::Measurement* x = req.add_measurements();
        *x = m;
        x->set_id(absl::StrCat(tag, "-", c, "-", m.id()));
        x->set_profile("busy");
        // Each copy a configuration of its own (c + 1 times the batch, and the time), so
        // that a calibration keeps them all (it keeps a few of each configuration) and
        // its fit lasts long beside an ingest.
        x->mutable_config()->set_global_batch_size(m.config().global_batch_size() * (1 + c));
        x->set_iteration_time_s(m.iteration_time_s() * (1 + c) * (1 + 0.002 * c));
      }
    }
    const absl::Time start = absl::Now();
    EXPECT_TRUE(measurements_->IngestMeasurements(&ctx, req, resp).ok());
    return absl::Now() - start;
  };
  std::atomic<int> triggered{0}, accepted{0};
  std::vector<absl::Duration> took(6);
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      v1::IngestMeasurementsResponse resp;
      took[t] = ingest(absl::StrCat("t", t), 6, &resp);
      accepted += resp.accepted();
      triggered += resp.calibration_triggered();
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(accepted.load(), 324);
  EXPECT_EQ(triggered.load(), 1);
  ASSERT_TRUE(WaitForVersions("busy", 2));
  // One calibration of the same measurements, timed in the foreground.
  const absl::Time start = absl::Now();
  {
    grpc::ClientContext ctx;
    v1::CalibrateRequest req;
    req.set_profile("busy");
    req.set_dry_run(true);
    v1::CalibrateResponse r;
    ASSERT_TRUE(measurements_->Calibrate(&ctx, req, &r).ok());
  }
  const absl::Duration fit = absl::Now() - start;
  // No ingest waited for the fit (here ~1 s against ~30 ms an ingest).
  for (const absl::Duration d : took) EXPECT_LT(d, fit) << d << " vs fit " << fit;
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_EQ(Versions("busy").versions_size(), 2);  // one calibration, not one per ingest
  // Shutting down with a calibration queued or running stops cleanly.
  v1::IngestMeasurementsResponse resp;
  ingest("more", 40, &resp);
  EXPECT_TRUE(resp.calibration_triggered());
  Restart();
  EXPECT_TRUE(server_->CheckIntegrity().ok());
}

// Regression: each distinct profile string of a rejected ingest made a metrics series
// that was never freed (200 requests with 1 MB names: +226 MB).
TEST_F(ServerTest, RejectedIngestsOfUnknownProfilesShareOneSeries) {
  const std::vector<v1::Measurement> ms = PublicMeasurements();
  std::vector<v1::Measurement> batch;
  for (int i = 0; i < 30; ++i) {
    v1::Measurement m = ms[0];
    m.set_id(absl::StrCat("ghost-", i));
    m.set_profile(absl::StrCat("ghost-profile-", i, std::string(1000, 'x')));
    if (i % 3 == 1) m.set_iteration_time_s(-1);    // rejected before the profile is looked up
    if (i % 3 == 2) m.set_profile(absl::StrCat("ghost-", i, "@x"));  // not even a reference
    batch.push_back(m);
  }
  v1::Measurement real = ms[0];
  real.set_iteration_time_s(0);  // rejected, for a stored profile: labelled by it
  batch.push_back(real);
  v1::IngestMeasurementsResponse r = Ingest(batch);
  EXPECT_EQ(r.rejected(), 31);
  const std::string text = server_->metrics().Text();
  EXPECT_THAT(text, Not(HasSubstr("ghost")));
  EXPECT_EQ(SampleValue(text, "paraplan_measurements_ingested_total{profile=\"(unknown)\",result=\"rejected\"}"), 30);
  EXPECT_EQ(SampleValue(text, "paraplan_measurements_ingested_total{profile=\"dgx-a100-80gb\",result=\"rejected\"}"),
            1);
}

// Regression: ids were spliced into SQL; one with a NUL byte gave INTERNAL after the
// request's earlier items had been committed.
TEST_F(ServerTest, IngestTakesAnyIdAndSaysPerItemWhatWasStored) {
  std::vector<v1::Measurement> ms = PublicMeasurements();
  ms.resize(3);
  ms[0].set_id("plain");
  ms[1].set_id(std::string("nul\0byte", 8));
  ms[2].set_id("quote'); DROP TABLE measurements; --");
  v1::IngestMeasurementsResponse r = Ingest(ms);
  EXPECT_EQ(r.accepted(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(r.results(i).id(), ms[i].id());
  EXPECT_EQ(Ingest(ms).duplicates(), 3);
  grpc::ClientContext ctx;
  v1::GetAccuracyRequest req;
  req.set_profile("dgx-a100-80gb");
  v1::AccuracyReport rep;
  ASSERT_TRUE(measurements_->GetAccuracy(&ctx, req, &rep).ok());
  EXPECT_EQ(rep.overall().count(), 3);
  EXPECT_TRUE(server_->CheckIntegrity().ok());
}

}  // namespace
}  // namespace paraplan::server
