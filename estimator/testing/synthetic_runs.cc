// Definitions of synthetic_runs.h.
#include "estimator/testing/synthetic_runs.h"

#include <cstdio>
#include <string>

#include "estimator/iteration/estimate.h"
#include "estimator/system/hardware.h"
#include "estimator/testing/test_util.h"

namespace paraplan::testing {

double Noise(uint32_t* state) {
  *state = *state * 1664525u + 1013904223u;
  return 1.0 + 0.02 * ((*state >> 8) / double(1 << 24) - 0.5);
}

void Measure(const SystemProfile& truth, const Workload& w, const ParallelConfig& c, double noise,
             std::vector<CalibrationSample>* out) {
  absl::StatusOr<Estimate> e = EstimateIteration(w, c, truth);
  if (!e.ok() || !e->memory.fits) return;
  CalibrationSample s;
  s.workload = w;
  s.config = c;
  s.measured_iteration_time_s = e->iteration_time_s * noise;
  s.measured_peak_memory_gib = e->memory.total_bytes / (1 << 30);
  out->push_back(s);
}

void Print(const FitReport& r) {
  for (const ParameterChange& p : r.parameters) {
    std::printf("%-30s %8.4g -> %8.4g [%d/%d folds] %s%s: %s\n", p.name.c_str(), p.before, p.after,
                p.cv_folds_fitted, r.cv_folds, p.fitted ? "fitted" : "kept", p.at_bound ? " AT BOUND" : "",
                p.reason.c_str());
  }
  std::printf("%s\n%s\n", r.sampling_note.c_str(), r.cv_method.c_str());
  std::printf("MAPE before %.2f%% after %.2f%% cross-validated %.2f%% (%d folds)\n%s\n",
              100 * r.mape_before_ratio, 100 * r.mape_after_ratio, 100 * r.cv_mape_ratio, r.cv_folds,
              r.promotion_reason.c_str());
}

SystemProfile Truth() {
  SystemProfile t = Profile("dgx-a100-80gb");
  t.calibration = ResolvedCalibration(t);
  t.calibration.matmul_efficiency *= 0.75;
  t.calibration.network[1].efficiency *= 0.5;
  return t;
}

Workload Gpt(int64_t hidden, int layers) {
  Workload w;
  w.name = "GPT-h" + std::to_string(hidden) + "-l" + std::to_string(layers);
  w.transformer.num_layers = layers;
  w.transformer.hidden_size = hidden;
  w.transformer.num_attention_heads = 16;
  w.transformer.seq_length = 1024;
  w.transformer.vocab_size = 51200;
  w.precision = Precision::kFp16;
  return w;
}

std::vector<CalibrationSample> SmallModels(const SystemProfile& truth, double noise) {
  std::vector<CalibrationSample> out;
  uint32_t rng = 7;
  for (const Workload& w : {Gpt(1024, 12), Gpt(1024, 24), Gpt(2048, 16)}) {
    for (int tp : {1, 2, 4, 8}) {
      for (int pp : {1, 2}) {
        if (tp * pp > 8) continue;
        for (int mbs : {1, 2, 4}) {
          ParallelConfig c =
              Config(tp, pp, 8 / (tp * pp), mbs, 16 * mbs * 8 / (tp * pp), Recompute::kFull);
          absl::StatusOr<Estimate> e = EstimateIteration(w, c, truth);
          if (!e.ok() || !e->memory.fits) continue;
          CalibrationSample s;
          s.workload = w;
          s.config = c;
          s.measured_iteration_time_s = e->iteration_time_s * (1 + noise * (Noise(&rng) - 1) / 0.01);
          out.push_back(s);
        }
      }
    }
  }
  return out;
}

std::vector<CalibrationSample> FourNodes(const SystemProfile& truth) {
  std::vector<CalibrationSample> out;
  uint32_t rng = 11;
  for (const Workload& w : {Gpt(2048, 16), Gpt(3072, 24)}) {
    for (int tp : {2, 4, 8, 16}) {
      for (int pp : {1, 2}) {
        for (int mbs : {1, 4}) {
          Measure(truth, w, Config(tp, pp, 32 / (tp * pp), mbs, 512, Recompute::kFull), Noise(&rng), &out);
        }
      }
    }
  }
  return out;
}

}  // namespace paraplan::testing
