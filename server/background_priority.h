// Background CPU priority for the server's long fits. A calibration takes whole cores
// for up to seconds; on the 2-core machines the service runs on, two of them made every
// estimate and ingest beside them wait for the CPU. Fits therefore run on threads at
// nice +10 (Linux CFS weight 110 against 1,024 at nice 0: a runnable request thread gets
// ~90 % of a contended core), while requests keep the default priority. Nothing else
// changes: a fit alone still has the idle cores.
//
// Niceness is per thread on Linux (setpriority on the thread id) and an unprivileged
// thread cannot raise its priority back, so a fit runs on a thread of its own rather
// than lowering a gRPC worker that will serve requests afterwards. Thread-safe.
#ifndef PARAPLAN_SERVER_BACKGROUND_PRIORITY_H_
#define PARAPLAN_SERVER_BACKGROUND_PRIORITY_H_

#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

namespace paraplan::server {

// The nice value fits run at.
inline constexpr int kBackgroundNice = 10;

// Lowers the calling thread to kBackgroundNice (best effort: false where the system
// refuses). For threads that only ever run background work.
bool LowerThisThreadsPriority();

// Runs `fn` on a new thread at kBackgroundNice, waits for it and returns its result.
template <typename F>
std::invoke_result_t<F> RunAtBackgroundPriority(F&& fn) {
  std::optional<std::invoke_result_t<F>> result;
  std::thread worker([&] {
    LowerThisThreadsPriority();
    result.emplace(fn());
  });
  worker.join();
  return std::move(*result);
}

}  // namespace paraplan::server

#endif  // PARAPLAN_SERVER_BACKGROUND_PRIORITY_H_
