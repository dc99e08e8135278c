// The automatic calibrations' schedule: which profile is due, a queue holding each
// profile at most once, one background thread (at background priority, started on first
// use) that runs them one after another, and the back-off after a failure.
//
// Contract. A profile is due when the measurements stored since its last calibration
// reach `after`; after a failed automatic calibration at N pending, it waits until they
// reach N + max(after, N) (they double), so retries that keep failing cost O(n) in all
// rather than O(n) every few ingests; a success or the profile's deletion resets the
// wait. Schedule() queues a due profile unless it is queued already; asked while that
// profile's calibration runs, it is looked at again when that one ends. What a
// calibration does is `run`'s (Backend::RunAutoCalibration): it calls Due() to check it is
// still due and Failed() when it fails. Stop() (or the destructor) drops the queue and
// waits for the calibration running, if any; nothing is queued after it. Thread-safe.
//
// Counting what is pending costs the store O(pending) rows, so it tallies what this
// server stored since its last count (Stored) and asks for a count (Counted) only when
// that tally could reach the threshold: a profile whose calibrations keep failing, with
// 300,000 measurements pending, no longer costs every ingest a 300,000-row count. What
// other servers on the same store ingest is not in the tally; it is in the count, so
// with replicas a calibration comes at most as late as this server's own share allows.
#ifndef PARAPLAN_SERVER_AUTO_CALIBRATOR_H_
#define PARAPLAN_SERVER_AUTO_CALIBRATOR_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace paraplan::server {

class AutoCalibrator {
 public:
  using Run = std::function<void(const std::string& profile)>;
  // after >= 1: measurements since the last calibration that make one due.
  AutoCalibrator(int after, Run run) : after_(after), run_(std::move(run)) {}
  ~AutoCalibrator() { Stop(); }
  AutoCalibrator(const AutoCalibrator&) = delete;
  AutoCalibrator& operator=(const AutoCalibrator&) = delete;

  // Measurements since the last calibration that make `profile` due now (with its
  // back-off): a count need go no higher.
  int DueAt(const std::string& profile) ABSL_LOCKS_EXCLUDED(mu_);
  // Whether `pending` measurements since the last calibration make `profile` due.
  bool Due(const std::string& profile, int pending) ABSL_LOCKS_EXCLUDED(mu_);
  // This server stored `rows` measurements of `profile`: whether they may make it due,
  // so that the store's count is worth asking for (true when no count is known yet).
  // `*mark` (when given) is the tally as it stands after these rows, for Counted.
  bool Stored(const std::string& profile, int rows, int64_t* mark = nullptr) ABSL_LOCKS_EXCLUDED(mu_);
  // The store counted `pending` (up to DueAt), asked after the Stored call that gave
  // `mark`: the base of the tally from now on. What concurrent ingests tallied after that
  // mark stays in the tally (their rows may or may not be in the count: counting them
  // twice costs an early count at worst, dropping them a calibration that never comes).
  void Counted(const std::string& profile, int pending, int64_t mark = INT64_MAX) ABSL_LOCKS_EXCLUDED(mu_);
  // Queues `profile`; false when it is queued already, running (then it is looked at
  // again when it ends) or the calibrator is stopped.
  bool Schedule(const std::string& profile) ABSL_LOCKS_EXCLUDED(mu_);
  // An automatic calibration of `profile` failed with `pending` measurements: back off.
  void Failed(const std::string& profile, int pending) ABSL_LOCKS_EXCLUDED(mu_);
  // A calibration of `profile` succeeded, or the profile was deleted: no back-off, and
  // the next count is the store's.
  void Reset(const std::string& profile) ABSL_LOCKS_EXCLUDED(mu_);
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  int Threshold(const std::string& profile) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || !queue_.empty(); }
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);

  const int after_;
  const Run run_;
  absl::Mutex mu_;
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> queued_ ABSL_GUARDED_BY(mu_);  // the names in queue_
  std::string running_ ABSL_GUARDED_BY(mu_);           // empty when none
  bool again_ ABSL_GUARDED_BY(mu_) = false;            // asked for running_ while it ran
  // Measurements since calibration when the last automatic one of a profile failed.
  std::map<std::string, int> failed_at_ ABSL_GUARDED_BY(mu_);
  // Per profile: the store's last count and what this server stored since (-1: unknown).
  struct Tally {
    int counted = -1;
    int64_t since = 0;
  };
  std::map<std::string, Tally> tally_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_ ABSL_GUARDED_BY(mu_);  // started on first use
};

}  // namespace paraplan::server

#endif  // PARAPLAN_SERVER_AUTO_CALIBRATOR_H_
