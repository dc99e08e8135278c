#include "estimator/calibration/select.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "estimator/iteration/estimate.h"

namespace paraplan {

namespace {

double Dot(const std::vector<double>& a, const std::vector<double>& b) {
  return std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
}

double Rms(const std::vector<double>& a) { return a.empty() ? 0 : std::sqrt(Dot(a, a) / a.size()); }

std::string Percent(double ratio) { return absl::StrFormat("%.2f %%", 100 * ratio); }

}  // namespace

double LogPredictedTime(const CalibrationSample& s, const SystemProfile& profile) {
  // Calibration's samples passed EstimateIteration on the base profile; the profiles
  // here differ only in calibration values within their ranges.
  absl::StatusOr<double> t = IterationTimeOfValidated(s.workload, s.config, profile);
  return t.ok() && *t > 0 ? std::log(*t) : NAN;
}

SystemProfile WithParams(const SystemProfile& at, const std::vector<CalibrationParam>& params,
                         absl::Span<const double> u, const std::vector<bool>& write) {
  SystemProfile p = at;
  for (size_t i = 0; i < params.size(); ++i) {
    if (write[i]) params[i].ref(p.calibration) = params[i].Value(u[i]);
  }
  return p;
}

std::vector<std::vector<double>> SensitivityColumns(const SystemProfile& at,
                                                    const std::vector<CalibrationParam>& params,
                                                    absl::Span<const double> u, const std::vector<bool>& free,
                                                    absl::Span<const CalibrationSample* const> samples) {
  const SystemProfile here = WithParams(at, params, u, free);
  std::vector<std::vector<double>> columns(params.size(), std::vector<double>(samples.size(), 0.0));
  for (size_t j = 0; j < params.size(); ++j) {
    const CalibrationParam& q = params[j];
    const double h = q.StepU();
    const double lo = std::max(q.LowerU(), u[j] - h);
    const double hi = std::min(q.UpperU(), u[j] + h);
    if (hi - lo < 1e-9) continue;
    SystemProfile minus = here, plus = here;
    q.ref(minus.calibration) = q.Value(lo);
    q.ref(plus.calibration) = q.Value(hi);
    for (size_t i = 0; i < samples.size(); ++i) {
      const double d = LogPredictedTime(*samples[i], plus) - LogPredictedTime(*samples[i], minus);
      columns[j][i] = std::isfinite(d) ? d * h / (hi - lo) : 0.0;
    }
  }
  return columns;
}

Selection SelectIdentifiable(const std::vector<CalibrationParam>& params,
                             const std::vector<std::vector<double>>& columns) {
  const size_t p = params.size();
  Selection sel;
  sel.free.assign(p, false);
  sel.sensitivity.resize(p);
  sel.reason.assign(p, "");
  for (size_t j = 0; j < p; ++j) sel.sensitivity[j] = Rms(columns[j]);
  // Greedy: the largest independent part first; `basis` is orthonormal and spans the
  // chosen columns.
  std::vector<std::vector<double>> basis;
  std::vector<size_t> chosen;
  auto residual = [&](size_t j) {
    std::vector<double> r = columns[j];
    for (int pass = 0; pass < 2; ++pass) {  // twice: classical Gram-Schmidt drifts
      for (const std::vector<double>& q : basis) {
        const double c = Dot(r, q);
        for (size_t i = 0; i < r.size(); ++i) r[i] -= c * q[i];
      }
    }
    return r;
  };
  while (true) {
    size_t best = p;
    double best_rms = 0;
    std::vector<double> best_r;
    for (size_t j = 0; j < p; ++j) {
      if (sel.free[j]) continue;
      std::vector<double> r = residual(j);
      const double rms = Rms(r);
      if (rms < kMinSensitivity || rms < kMinIndependentShare * sel.sensitivity[j]) continue;
      if (rms > best_rms) {
        best = j;
        best_rms = rms;
        best_r = std::move(r);
      }
    }
    if (best == p) break;
    sel.free[best] = true;
    chosen.push_back(best);
    const double norm = std::sqrt(Dot(best_r, best_r));
    for (double& v : best_r) v /= norm;
    basis.push_back(std::move(best_r));
  }
  for (size_t j = 0; j < p; ++j) {
    if (sel.free[j]) continue;
    const CalibrationParam& q = params[j];
    const double s = sel.sensitivity[j];
    std::string& why = sel.reason[j];
    why = absl::StrCat("moves predictions by ", Percent(s), " per ", q.StepName());
    const double independent = Rms(residual(j));
    if (s < kMinSensitivity || chosen.empty()) {
      absl::StrAppend(&why, " (needs ", Percent(kMinSensitivity), ")");
      if (!q.acts_on.empty()) absl::StrAppend(&why, "; it acts only on ", q.acts_on);
      continue;
    }
    // Nearly collinear: name the chosen parameters it most resembles.
    std::vector<std::pair<double, size_t>> cosines;
    const double norm_j = std::sqrt(Dot(columns[j], columns[j]));
    for (size_t k : chosen) {
      const double norm_k = std::sqrt(Dot(columns[k], columns[k]));
      cosines.push_back({std::abs(Dot(columns[j], columns[k])) / (norm_j * norm_k), k});
    }
    std::sort(cosines.rbegin(), cosines.rend());
    std::string like = params[cosines[0].second].name;
    if (cosines.size() > 1 && cosines[1].first > 0.5)
      absl::StrAppend(&like, " and ", params[cosines[1].second].name);
    absl::StrAppend(&why, ", but only ", Percent(independent), " of that independently of ", like, " (needs ",
                    Percent(kMinSensitivity), " and ", absl::StrFormat("%.0f %%", 100 * kMinIndependentShare),
                    " of its effect)");
  }
  return sel;
}

}  // namespace paraplan
