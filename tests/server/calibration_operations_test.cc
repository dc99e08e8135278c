// CalibrationOperations with work the test controls: one operation per profile, the
// bound on running ones, the deadline, trimming of finished ones, Stop cancelling.
#include "server/calibration_operations.h"

#include <atomic>
#include <string>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace paraplan::server {
namespace {

using ::testing::HasSubstr;

// Work that reports one phase, then runs until `release` or its Interrupt fires.
CalibrationOperations::Work Blocking(absl::Notification* release, const std::string& version = "v") {
  return [release, version](const Interrupt& stop, const CalibrationOperations::PhaseSink& phase)
             -> absl::StatusOr<v1::CalibrateResponse> {
    phase("fitting");
    while (!release->HasBeenNotified()) {
      if (absl::Status s = stop.Check("calibration"); !s.ok()) return s;
      absl::SleepFor(absl::Milliseconds(2));
    }
    v1::CalibrateResponse r;
    r.mutable_profile()->set_name(version);
    r.set_stored(true);
    return r;
  };
}

v1::CalibrationOperation WaitUntilFinished(const CalibrationOperations& ops, const std::string& id) {
  for (int i = 0; i < 5000; ++i) {
    absl::StatusOr<v1::CalibrationOperation> op = ops.Get(id);
    if (!op.ok() || op->state() != v1::CalibrationOperation::STATE_RUNNING) return op.ok() ? *op : v1::CalibrationOperation();
    absl::SleepFor(absl::Milliseconds(2));
  }
  return {};
}

TEST(CalibrationOperations, OnePerProfileAndABoundOnAllOfThem) {
  CalibrationOperations ops({.max_running = 2, .max_kept = 8, .timeout = absl::Minutes(1)});
  absl::Notification release;
  absl::StatusOr<v1::CalibrationOperation> a = ops.Start("a", false, Blocking(&release));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->state(), v1::CalibrationOperation::STATE_RUNNING);
  EXPECT_THAT(a->id(), HasSubstr("cal-"));
  EXPECT_GT(a->started_at_unix_ms(), 0);
  // The same profile again: the one running, not a second.
  absl::StatusOr<v1::CalibrationOperation> again = ops.Start("a", true, Blocking(&release));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->id(), a->id());
  EXPECT_FALSE(again->dry_run());
  ASSERT_TRUE(ops.Start("b", false, Blocking(&release)).ok());
  // A third profile while two run: refused, not queued.
  absl::StatusOr<v1::CalibrationOperation> c = ops.Start("c", false, Blocking(&release));
  EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
  // The phase shows while it runs; the result once done.
  for (int i = 0; i < 10000 && ops.Get(a->id())->phase() != "fitting"; ++i) absl::SleepFor(absl::Milliseconds(1));
  EXPECT_EQ(ops.Get(a->id())->phase(), "fitting");
  release.Notify();
  const v1::CalibrationOperation done = WaitUntilFinished(ops, a->id());
  EXPECT_EQ(done.state(), v1::CalibrationOperation::STATE_DONE);
  EXPECT_TRUE(done.result().stored());
  EXPECT_GE(done.finished_at_unix_ms(), done.started_at_unix_ms());
  // With both finished, a new one may start.
  WaitUntilFinished(ops, ops.Start("b", false, Blocking(&release))->id());
  EXPECT_TRUE(ops.Start("c", false, Blocking(&release)).ok());
}

TEST(CalibrationOperations, EndsAtItsTimeoutAndKeepsTheMostRecent) {
  CalibrationOperations ops({.max_running = 4, .max_kept = 2, .timeout = absl::Milliseconds(50)});
  absl::Notification never;
  const std::string first = ops.Start("a", false, Blocking(&never))->id();
  const v1::CalibrationOperation late = WaitUntilFinished(ops, first);
  EXPECT_EQ(late.state(), v1::CalibrationOperation::STATE_FAILED);
  EXPECT_EQ(late.error().code(), static_cast<int>(absl::StatusCode::kDeadlineExceeded));
  // Two more finish: the first is no longer kept.
  WaitUntilFinished(ops, ops.Start("b", false, Blocking(&never))->id());
  WaitUntilFinished(ops, ops.Start("c", false, Blocking(&never))->id());
  EXPECT_EQ(ops.Get(first).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ops.Get("").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CalibrationOperations, StopCancelsWhatRuns) {
  CalibrationOperations ops({});
  absl::Notification never;
  const std::string id = ops.Start("a", false, Blocking(&never))->id();
  ops.Stop();  // returns: the work saw its cancellation
  const absl::StatusOr<v1::CalibrationOperation> op = ops.Get(id);
  ASSERT_TRUE(op.ok());
  EXPECT_EQ(op->state(), v1::CalibrationOperation::STATE_FAILED);
  EXPECT_EQ(op->error().code(), static_cast<int>(absl::StatusCode::kCancelled));
  EXPECT_EQ(ops.Start("b", false, Blocking(&never)).status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace paraplan::server
