// When long work must end early: the caller's deadline and its cancellation flag.
//
// The fits, the calibration and the simulation take one and call Check() between steps
// short enough (well under a CPU-second) that an abandoned call stops soon after its
// client left. Plain data; the flag belongs to the caller and outlives the call.
// Thread-safe to read.
#ifndef PARAPLAN_ESTIMATOR_INPUTS_INTERRUPT_H_
#define PARAPLAN_ESTIMATOR_INPUTS_INTERRUPT_H_

#include <atomic>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace paraplan {

struct Interrupt {
  absl::Time deadline = absl::InfiniteFuture();
  const std::atomic<bool>* cancelled = nullptr;  // null: cannot be cancelled

  bool Requested() const {
    return (cancelled != nullptr && cancelled->load(std::memory_order_relaxed)) || absl::Now() >= deadline;
  }
  // OK while the work may go on; else CANCELLED or DEADLINE_EXCEEDED saying what stopped.
  absl::Status Check(absl::string_view work) const {
    if (cancelled != nullptr && cancelled->load(std::memory_order_relaxed)) {
      return absl::CancelledError(absl::StrCat(work, ": stopped, the client cancelled"));
    }
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError(absl::StrCat(work, ": stopped at the request's deadline"));
    }
    return absl::OkStatus();
  }
};

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_INPUTS_INTERRUPT_H_
