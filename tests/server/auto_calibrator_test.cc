// AutoCalibrator: when a profile is due, the back-off after failures, one queue entry per
// profile, a second look when asked while running, and Stop. The calibrations are the
// test's own callback, which blocks until the test lets it go.
#include "server/auto_calibrator.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace paraplan::server {
namespace {

TEST(AutoCalibrator, DueAfterThresholdAndBacksOffByDoubling) {
  AutoCalibrator a(20, [](const std::string&) {});
  EXPECT_FALSE(a.Due("p", 19));
  EXPECT_TRUE(a.Due("p", 20));
  // Failed at 30 pending: due again at 30 + max(20, 30) = 60.
  a.Failed("p", 30);
  EXPECT_EQ(a.DueAt("p"), 60);
  EXPECT_FALSE(a.Due("p", 59));
  EXPECT_TRUE(a.Due("p", 60));
  // Failed at 10: 10 + max(20, 10) = 30 (at least `after` more).
  a.Failed("p", 10);
  EXPECT_FALSE(a.Due("p", 29));
  EXPECT_TRUE(a.Due("p", 30));
  EXPECT_TRUE(a.Due("q", 20));  // per profile
  a.Reset("p");
  EXPECT_TRUE(a.Due("p", 20));
}

// The store is asked to count only when what this server stored may have reached the
// threshold: 5 counted + 10 stored < 20; + 5 more reaches it. After a failure at 30 the
// base is 30 and the threshold 60.
TEST(AutoCalibrator, CountsOnlyWhenTheTallyMayReachTheThreshold) {
  AutoCalibrator a(20, [](const std::string&) {});
  EXPECT_TRUE(a.Stored("p", 1));  // no count known yet
  a.Counted("p", 5);
  EXPECT_FALSE(a.Stored("p", 10));
  EXPECT_TRUE(a.Stored("p", 5));
  a.Failed("p", 30);
  EXPECT_FALSE(a.Stored("p", 29));
  EXPECT_TRUE(a.Stored("p", 1));
  a.Reset("p");                   // a calibration succeeded: the next count is the store's
  EXPECT_TRUE(a.Stored("p", 1));
  EXPECT_TRUE(a.Stored("q", 1));  // per profile
}

// Concurrent ingests: one stores a row and asks the store to count (5); before its count
// comes back another stores 10 and tallies them. The count cannot be trusted to hold
// those 10, so they stay in the tally: 5 + 10 + 5 more reach 20. (Dropping them, as the
// tally once did, left 5 + 5: the last ingest of a burst saw no reason to count, and the
// calibration its rows made due never came — ServerTest.AutomaticCalibrationRuns-
// InTheBackgroundOncePerProfile failed so under load.)
TEST(AutoCalibrator, RowsTalliedWhileACountRunsStayTallied) {
  AutoCalibrator a(20, [](const std::string&) {});
  int64_t mark = 0;
  EXPECT_TRUE(a.Stored("p", 1, &mark));  // no count known yet
  EXPECT_TRUE(a.Stored("p", 10));        // another ingest, while the first one's count runs
  a.Counted("p", 5, mark);
  EXPECT_TRUE(a.Stored("p", 5));
}

// A run callback the test steps through: run i records its profile and waits until the
// test releases it (releases[i]).
struct Runs {
  absl::Mutex mu;
  std::vector<std::string> started ABSL_GUARDED_BY(mu);
  absl::Notification releases[8];

  void Run(const std::string& p) {
    size_t i;
    {
      absl::MutexLock lock(&mu);
      started.push_back(p);
      i = started.size() - 1;
    }
    releases[i].WaitForNotification();
  }
  // Waits (at most 10 s) until n runs have started.
  bool WaitStarted(size_t n) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    for (;;) {
      {
        absl::MutexLock lock(&mu);
        if (started.size() >= n) return true;
      }
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(1));
    }
  }
  std::vector<std::string> Started() {
    absl::MutexLock lock(&mu);
    return started;
  }
};

TEST(AutoCalibrator, OneEntryPerProfileAndASecondLookWhenAskedWhileRunning) {
  Runs runs;
  AutoCalibrator a(1, [&runs](const std::string& p) { runs.Run(p); });
  EXPECT_TRUE(a.Schedule("p"));
  ASSERT_TRUE(runs.WaitStarted(1));  // p runs
  EXPECT_FALSE(a.Schedule("p"));     // asked while it runs: looked at again after
  EXPECT_TRUE(a.Schedule("q"));
  EXPECT_FALSE(a.Schedule("q"));     // queued already
  runs.releases[0].Notify();         // p ends; q runs, then p again
  ASSERT_TRUE(runs.WaitStarted(2));
  runs.releases[1].Notify();
  ASSERT_TRUE(runs.WaitStarted(3));
  runs.releases[2].Notify();
  EXPECT_EQ(runs.Started(), (std::vector<std::string>{"p", "q", "p"}));
  a.Stop();
  EXPECT_FALSE(a.Schedule("r"));  // nothing is queued after Stop
}

TEST(AutoCalibrator, StopDropsTheQueueAndWaitsForTheRunningOne) {
  Runs runs;
  AutoCalibrator a(1, [&runs](const std::string& p) { runs.Run(p); });
  ASSERT_TRUE(a.Schedule("p"));
  ASSERT_TRUE(runs.WaitStarted(1));
  ASSERT_TRUE(a.Schedule("q"));
  std::thread releaser([&runs] {
    absl::SleepFor(absl::Milliseconds(100));
    runs.releases[0].Notify();
  });
  const absl::Time start = absl::Now();
  a.Stop();  // waits for p, never runs q
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(80));
  releaser.join();
  EXPECT_EQ(runs.Started(), (std::vector<std::string>{"p"}));
}

}  // namespace
}  // namespace paraplan::server
