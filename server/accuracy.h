// Accuracy of stored predictions: the verdict on one measurement, the statistics that
// GetAccuracy reports, and AccuracyTracker, which keeps each profile's accuracy gauges
// current per ingest in bounded memory.
//
// Definitions (the same for GetAccuracy and the gauges): a measurement is TIMED when it
// did not run out of memory and both iteration times are > 0 (store.h); its absolute
// percentage error (APE) is |predicted - measured| / measured and its ratio predicted /
// measured, both of the prediction stored when it was ingested (a later calibration does
// not change them). MAPE = the mean APE, bias = the median ratio (the mean of the middle
// two for an even count), over ALL timed measurements of the profile: the gauges
// paraplan_prediction_mape_ratio and _bias_ratio equal GetAccuracy's `overall`.
//
// AccuracyTracker holds O(1) state per tracked profile — how far it has read (seq), the
// count, the APE sum and a cursor on the lower median in the store's ratio order — and
// never the measurements. Update() reads only the measurements stored since its last
// call (pages of bodiless summaries, in seq order) and moves the cursor at most one index
// step per measurement, so an ingest of k measurements costs O(k log n) time and O(k)
// memory whatever the n stored. A profile seen for the first time (start-up, or after
// Forget) is read once in pages, then one ranked lookup places the cursor. The gauges
// are set under the same lock as the state is advanced, so concurrent ingests cannot
// leave an older value behind. Thread-safe (one mutex; Update calls the store and
// Metrics under it, neither calls back).
//
// Several processes on one store (server replicas on PostgreSQL): Update reads what ANY
// of them stored since its last call — the store draws a profile's seqs in commit order
// (store.h), so "seq > read so far" misses nothing — and the gauges of every replica
// agree after an Update. A profile deleted by another process (and perhaps created
// again under its name) is noticed by one indexed lookup per Update (the first
// measurement counted is gone): its state is read afresh and its gauges reset.
#ifndef PARAPLAN_SERVER_ACCURACY_H_
#define PARAPLAN_SERVER_ACCURACY_H_

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "estimator/inputs/validate.h"
#include "paraplan/v1/services.pb.h"
#include "server/metrics.h"
#include "store/store.h"

namespace paraplan::server {

// APE of a measurement (MeasurementRow or MeasurementSummary); nullopt when not timed.
template <typename Row>
std::optional<double> AbsRelativeError(const Row& r) {
  // Rows stored before ingest bounded measured times (5e-324 s) are not counted: their
  // error would be infinite.
  if (r.out_of_memory || !(r.predicted_iteration_time_s > 0) || !(r.iteration_time_s >= kMinMeasuredIterationS) ||
      !(r.iteration_time_s <= kMaxMeasuredIterationS)) {
    return std::nullopt;
  }
  const double ape = std::abs(r.predicted_iteration_time_s - r.iteration_time_s) / r.iteration_time_s;
  if (!std::isfinite(ape)) return std::nullopt;
  return ape;
}

// Memory verdict; nullopt when nothing was observed. Hit: predicted to fit and ran
// without OOM within capacity, or predicted not to fit and went out of memory.
// `capacity_gib` 0 = unknown (the peak is then not compared).
template <typename Row>
std::optional<bool> MemoryHit(const Row& r, double capacity_gib) {
  if (r.out_of_memory) return !r.predicted_fits;
  if (r.peak_memory_gib > 0) return r.predicted_fits && (capacity_gib <= 0 || r.peak_memory_gib <= capacity_gib);
  return std::nullopt;
}

// What GetAccuracy keeps of one measurement while it reads them all (no body).
struct AccuracyPoint {
  double ape = -1;     // < 0: not timed
  double ratio = 0;    // predicted / measured when timed
  int8_t memory = -1;  // -1 nothing observed, 0 miss, 1 hit
};

template <typename Row>
AccuracyPoint PointOf(const Row& r, double capacity_gib) {
  AccuracyPoint p;
  if (std::optional<double> ape = AbsRelativeError(r)) {
    p.ape = *ape;
    p.ratio = r.predicted_iteration_time_s / r.iteration_time_s;
  }
  if (std::optional<bool> hit = MemoryHit(r, capacity_gib)) p.memory = *hit ? 1 : 0;
  return p;
}

// The statistics of `points` (all of them, or those at `indexes`).
v1::AccuracyStats Stats(const std::vector<AccuracyPoint>& points, size_t begin, size_t end);
v1::AccuracyStats Stats(const std::vector<AccuracyPoint>& points, const std::vector<uint32_t>& indexes);

class AccuracyTracker {
 public:
  struct Gauges {
    int64_t measurements = 0;  // all, timed or not; 0 = none stored (no gauges)
    int64_t timed = 0;
    double mape = 0;
    double bias = 0;  // 0 when none is timed
  };
  // Called for each measurement as Update reads it for the first time.
  using Observer = std::function<void(const store::MeasurementSummary&)>;

  AccuracyTracker(store::Store* store, Metrics* metrics) : store_(store), metrics_(metrics) {}

  // Reads what the store holds of `profile` beyond what was read before, sets the
  // profile's gauges (when it has measurements) and returns them. `observe`, if given,
  // sees each measurement read now (start-up replays the histograms through it).
  absl::StatusOr<Gauges> Update(const std::string& profile, const Observer& observe = nullptr)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Drops the profile's state (deleted; a profile of the same name starts afresh).
  void Forget(const std::string& profile) ABSL_LOCKS_EXCLUDED(mu_);
  size_t tracked() const ABSL_LOCKS_EXCLUDED(mu_);

  // Summaries read per store call.
  static constexpr int kPageSize = 1024;

 private:
  struct State {
    int64_t first_seq = 0;     // the first measurement counted; 0 = none yet
    int64_t read_through = 0;  // every measurement with seq <= this is counted
    int64_t measurements = 0;
    int64_t timed = 0;
    double ape_sum = 0;
    store::RatioKey lower;  // the timed one at rank (timed - 1) / 2 in ratio order
  };
  // Reads every measurement of `profile` into a fresh state.
  absl::StatusOr<State> Load(const std::string& profile, const Observer& observe);
  // Reads what the store holds of `profile` after s.read_through, page by page, handing
  // each summary to `observe` (if given) and then to `count`, which must advance
  // s.read_through; stops at the first error `count` returns.
  template <typename Count>
  absl::Status ReadAfter(const std::string& profile, const State& s, const Observer& observe, Count count);
  // Counts `m` (seq beyond s.read_through): the tallies, not the median.
  static void Tally(const store::MeasurementSummary& m, State& s);
  // Counts `m` and moves the lower median to keep its rank.
  absl::Status Add(const std::string& profile, const store::MeasurementSummary& m, State& s);
  absl::StatusOr<Gauges> GaugesOf(const std::string& profile, const State& s);
  // Whether the first measurement `s` counted is still stored (false: the profile was
  // deleted meanwhile, by this process or another).
  absl::StatusOr<bool> StillStored(const std::string& profile, const State& s);

  store::Store* store_;
  Metrics* metrics_;
  mutable absl::Mutex mu_;
  std::map<std::string, State> states_ ABSL_GUARDED_BY(mu_);
};

}  // namespace paraplan::server

#endif  // PARAPLAN_SERVER_ACCURACY_H_
