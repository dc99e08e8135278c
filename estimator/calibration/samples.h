// How calibration groups and chooses measurements: configuration groups (the unit of
// cross-validation and of the minimum-data rule), stratified subsampling down to the
// solver budget, and grouped cross-validation folds. All deterministic: the same
// measurements in the same order always give the same choice. Pure functions;
// thread-safe.
#ifndef PARAPLAN_ESTIMATOR_CALIBRATION_SAMPLES_H_
#define PARAPLAN_ESTIMATOR_CALIBRATION_SAMPLES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "estimator/calibration/calibrate.h"

namespace paraplan {

// The model a measurement trains, by name and size ("GPT-h1024-l24 h1024 l24 s1024").
std::string ModelKey(const CalibrationSample& s);
// Configuration group: model x TP x PP (x spatial x filter x channel for a CNN). Runs
// of one group differ only in data
// parallelism and batch sizes, so they are near-identical for the fit and must never
// straddle a cross-validation split.
std::string ConfigGroup(const CalibrationSample& s);
int CountGroups(absl::Span<const CalibrationSample> samples);
// The samples in an order of what they say (configuration, precision, what was
// measured), whatever order they came in: calibration reads them so, and the same
// measurements in any order calibrate to the same profile.
std::vector<CalibrationSample> CanonicalOrder(absl::Span<const CalibrationSample> samples);

// The measurements a calibration reads, kept within a bound however many the store
// holds: the `per_configuration` most recent of each configuration (model, every degree,
// batch sizes, recompute, ZeRO; repeats of one configuration are near-identical for the
// fit), of at most `max_configurations` configurations in each band of GPU counts
// (kGpuBands: one GPU, one 8-GPU node, up to 64, 512, 4,096, more), chosen uniformly
// within the band by a hash of the configuration (kept iff its hash's top `level` bits
// are zero; the band's level rises and halves its kept set whenever it outgrows the
// bound), so the choice does not depend on the order they arrive in, and thousands of
// single-node runs never crowd out the few large ones that alone inform the network
// between nodes. Samples are added oldest first.
class BoundedSamples {
 public:
  BoundedSamples(int per_configuration, int max_configurations);
  void Add(CalibrationSample s);
  // The kept samples, each configuration's in arrival order; ends this object's use.
  std::vector<CalibrationSample> Take();
  int64_t added() const { return added_; }
  int64_t kept() const;

 private:
  struct Kept {
    uint64_t hash = 0;
    std::vector<CalibrationSample> recent;  // a ring of per_configuration_
    size_t next = 0;                        // where the next replaces, once full
  };
  struct Band {
    int level = 0;
    std::map<std::string, Kept> kept;
    bool Admitted(uint64_t hash) const { return level == 0 || (hash >> (64 - level)) == 0; }
  };

  int per_configuration_;
  int max_configurations_;
  int64_t added_ = 0;
  std::map<int, Band> bands_;  // by kGpuBands index
};

// Upper GPU counts of BoundedSamples' bands (the last band has no upper end).
inline constexpr int64_t kGpuBands[] = {1, 8, 64, 512, 4096};

struct Subsample {
  std::vector<int> indices;  // ascending
  std::string note;          // "subsampled 400 of 1440, stratified by ..." or "all 15 ..."
};

// At most `budget` of `samples`, stratified by configuration shape: the strata are the
// finest prefix of (GPU count, TP, PP, model size, DP, micro-batch) that has at most
// `budget` distinct values, each stratum gets at least one measurement and the rest in
// proportion to its size (largest remainder), spread evenly over the finer keys inside
// it. All of them when there are no more than `budget`.
Subsample StratifiedSubsample(absl::Span<const CalibrationSample> samples, int budget);

struct Folds {
  std::vector<int> fold_of;  // per sample
  int num_folds = 0;
  int num_groups = 0;
  std::string method;  // in words, for the report
};

// Cross-validation folds by configuration group: min(max_folds, groups) folds (one group
// per fold = leave-one-group-out when there are few groups), groups dealt round-robin in
// (TP, PP, model) order so that each fold sees every kind of configuration.
Folds GroupedFolds(absl::Span<const CalibrationSample> samples, int max_folds);

}  // namespace paraplan

#endif  // PARAPLAN_ESTIMATOR_CALIBRATION_SAMPLES_H_
