// Synthetic measurements for the calibration tests (calibrate_test.cc, regimes_test.cc):
// runs timed by the model itself on a "true" profile whose values the test chose, with
// deterministic noise, so that a fit can be checked against the values it should recover.
#ifndef PARAPLAN_ESTIMATOR_TESTING_SYNTHETIC_RUNS_H_
#define PARAPLAN_ESTIMATOR_TESTING_SYNTHETIC_RUNS_H_

#include <cstdint>
#include <vector>

#include "estimator/calibration/calibrate.h"

namespace paraplan::testing {

// Deterministic +-1 % noise: 1 + [-0.01, 0.01), advancing `state`.
double Noise(uint32_t* state);

// A run of `c` as the cluster `truth` would time it, times `noise`; nothing when it
// fails or does not fit.
void Measure(const SystemProfile& truth, const Workload& w, const ParallelConfig& c, double noise,
             std::vector<CalibrationSample>* out);

// The dgx-a100-80gb profile as a "true" cluster whose matmuls run at three quarters of
// its resolved efficiency and whose inter-node network delivers half.
SystemProfile Truth();

// A GPT of `hidden` x `layers` (16 heads, sequence 1,024, vocabulary 51,200, fp16).
Workload Gpt(int64_t hidden, int layers);

// Small GPTs on one 8-GPU node at every TP and micro-batch: many short kernels, so the
// host's launch time shows (vTrain's regime). `noise`: the relative spread (0.01: +-1 %).
std::vector<CalibrationSample> SmallModels(const SystemProfile& truth, double noise);

// GPTs on four 8-GPU nodes with tensor parallelism up to 16 (across two nodes), where the
// network between nodes shows.
std::vector<CalibrationSample> FourNodes(const SystemProfile& truth);

// The report's parameter table and figures, for the test log.
void Print(const FitReport& r);

}  // namespace paraplan::testing

#endif  // PARAPLAN_ESTIMATOR_TESTING_SYNTHETIC_RUNS_H_
