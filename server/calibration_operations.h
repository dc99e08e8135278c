// CalibrationOperations: calibrations that outlive the call that started them.
//
// Start() runs a calibration on a thread of its own and answers at once with its
// operation (id, state, phase); Get() reads one back while it runs and after it ends.
// One operation per profile at a time: starting a profile that has one running returns
// that one. Everything is bounded: at most `max_running` run at once (more is
// RESOURCE_EXHAUSTED), each ends at `timeout` (DEADLINE_EXCEEDED, as a call's deadline
// would end it), and of the finished ones the `max_kept` most recent are kept, in memory
// only (a restarted server answers NOT_FOUND for earlier ids). Stop() cancels the running
// ones and waits for them; the destructor stops. Thread-safe.
#ifndef PARAPLAN_SERVER_CALIBRATION_OPERATIONS_H_
#define PARAPLAN_SERVER_CALIBRATION_OPERATIONS_H_

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "estimator/inputs/interrupt.h"
#include "paraplan/v1/services.pb.h"

namespace paraplan::server {

class CalibrationOperations {
 public:
  struct Limits {
    int max_running = 4;
    int max_kept = 64;  // finished operations kept for Get
    absl::Duration timeout = absl::Hours(1);
  };
  // Reports what the calibration is doing now (CalibrationOperation.phase).
  using PhaseSink = std::function<void(const std::string& phase)>;
  // The calibration itself: it stops when `stop` asks and reports its phases.
  using Work = std::function<absl::StatusOr<v1::CalibrateResponse>(const Interrupt& stop, const PhaseSink& phase)>;

  explicit CalibrationOperations(Limits limits) : limits_(limits) {}
  ~CalibrationOperations() { Stop(); }
  CalibrationOperations(const CalibrationOperations&) = delete;
  CalibrationOperations& operator=(const CalibrationOperations&) = delete;

  absl::StatusOr<v1::CalibrationOperation> Start(const std::string& profile, bool dry_run, Work work)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::CalibrationOperation> Get(const std::string& id) const ABSL_LOCKS_EXCLUDED(mu_);
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Op {
    v1::CalibrationOperation state;
    std::atomic<bool> cancelled{false};
    std::thread thread;
  };
  void Run(Op* op, const Work& work) ABSL_LOCKS_EXCLUDED(mu_);
  void SetPhase(Op* op, const std::string& phase) ABSL_LOCKS_EXCLUDED(mu_);
  // Drops the oldest finished operations beyond max_kept.
  void Trim() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Limits limits_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<Op>> ops_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> finished_ ABSL_GUARDED_BY(mu_);  // oldest first
  std::map<std::string, std::string> running_by_profile_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace paraplan::server

#endif  // PARAPLAN_SERVER_CALIBRATION_OPERATIONS_H_
