// NamedLocks: in-process locks by name, handed out as Leases (store.h) — how SqliteStore
// implements LockCalibration (one process owns a SQLite file, so in-process is enough).
// A name is held by at most one Lease at a time; the Lease must not outlive its
// NamedLocks. Thread-safe.
#ifndef PARAPLAN_STORE_NAMED_LOCKS_H_
#define PARAPLAN_STORE_NAMED_LOCKS_H_

#include <memory>
#include <set>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "store/store.h"

namespace paraplan::store {

class NamedLocks {
 public:
  // wait: blocks until `name` is free; else nullptr at once when it is held.
  std::unique_ptr<Lease> Acquire(absl::string_view name, bool wait) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  class Held;
  void Release(const std::string& name) ABSL_LOCKS_EXCLUDED(mu_);

  absl::Mutex mu_;
  std::set<std::string> held_ ABSL_GUARDED_BY(mu_);
};

}  // namespace paraplan::store

#endif  // PARAPLAN_STORE_NAMED_LOCKS_H_
