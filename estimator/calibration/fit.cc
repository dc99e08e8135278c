#include "estimator/calibration/fit.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "Eigen/Dense"
#include "absl/strings/str_format.h"
#include "ceres/ceres.h"

namespace paraplan {

namespace {

constexpr double kHuberDelta = 0.05;  // in log space: ~5 % relative error

// Prior width in a parameter's coordinate: a 30 % move (or 10 ms) costs one 5 % miss.
double PriorWidth(const CalibrationParam& p) { return p.additive ? 1.0 : std::log(1.3); }

// ln(predicted / measured) with the free parameters at theta; Jacobian by forward
// differences of a fixed coordinate step (every coordinate is O(1): a log ratio or a
// number of steps), taken toward the interior at an upper bound.
class TimeCost : public ceres::CostFunction {
 public:
  TimeCost(const CalibrationSample* sample, const SystemProfile* at,
           const std::vector<CalibrationParam>* params, const std::vector<int>* free)
      : sample_(sample), at_(at), params_(params), free_(free) {
    set_num_residuals(1);
    mutable_parameter_block_sizes()->push_back(static_cast<int>(free->size()));
  }

  bool Evaluate(double const* const* theta, double* residuals, double** jacobians) const override {
    constexpr double kStep = 1e-4;
    SystemProfile p = *at_;
    const size_t k = free_->size();
    for (size_t c = 0; c < k; ++c) Param(c).ref(p.calibration) = Param(c).Value(theta[0][c]);
    const double log_measured = std::log(sample_->measured_iteration_time_s);
    const double r0 = LogPredictedTime(*sample_, p) - log_measured;
    if (!std::isfinite(r0)) return false;
    residuals[0] = r0;
    if (jacobians == nullptr || jacobians[0] == nullptr) return true;
    for (size_t c = 0; c < k; ++c) {
      const CalibrationParam& q = Param(c);
      const double u = theta[0][c];
      const double h = u + kStep <= q.UpperU() ? kStep : -kStep;
      q.ref(p.calibration) = q.Value(u + h);
      const double r = LogPredictedTime(*sample_, p) - log_measured;
      q.ref(p.calibration) = q.Value(u);
      if (!std::isfinite(r)) return false;
      jacobians[0][c] = (r - r0) / h;
    }
    return true;
  }

 private:
  const CalibrationParam& Param(size_t c) const { return (*params_)[(*free_)[c]]; }

  const CalibrationSample* sample_;
  const SystemProfile* at_;
  const std::vector<CalibrationParam>* params_;
  const std::vector<int>* free_;
};

// Prior on one coordinate: u * weight (linear, so its Jacobian is exact).
class PriorCost : public ceres::CostFunction {
 public:
  PriorCost(int index, int size, double weight) : index_(index), size_(size), weight_(weight) {
    set_num_residuals(1);
    mutable_parameter_block_sizes()->push_back(size);
  }

  bool Evaluate(double const* const* theta, double* residuals, double** jacobians) const override {
    residuals[0] = theta[0][index_] * weight_;
    if (jacobians != nullptr && jacobians[0] != nullptr) {
      for (int c = 0; c < size_; ++c) jacobians[0][c] = c == index_ ? weight_ : 0.0;
    }
    return true;
  }

 private:
  int index_;
  int size_;
  double weight_;
};

// Solves for the free coordinates, starting from `u` (updated in place).
void Solve(const SystemProfile& at, const std::vector<CalibrationParam>& params,
           const std::vector<bool>& is_free, absl::Span<const CalibrationSample* const> samples,
           std::vector<double>* u) {
  std::vector<int> free;
  for (size_t j = 0; j < params.size(); ++j) {
    if (is_free[j]) free.push_back(static_cast<int>(j));
  }
  if (free.empty()) return;
  const int k = static_cast<int>(free.size());
  std::vector<double> theta(k);
  for (int i = 0; i < k; ++i) theta[i] = (*u)[free[i]];

  ceres::Problem problem;
  for (const CalibrationSample* s : samples) {
    problem.AddResidualBlock(new TimeCost(s, &at, &params, &free), new ceres::HuberLoss(kHuberDelta),
                             theta.data());
  }
  for (int i = 0; i < k; ++i) {
    problem.AddResidualBlock(new PriorCost(i, k, kHuberDelta / PriorWidth(params[free[i]])), nullptr,
                             theta.data());
  }
  for (int i = 0; i < k; ++i) {
    problem.SetParameterLowerBound(theta.data(), i, params[free[i]].LowerU());
    problem.SetParameterUpperBound(theta.data(), i, params[free[i]].UpperU());
  }
  // Levenberg-Marquardt on a dense k x k system; the fits here converge in 10-30
  // iterations, each costing (k + 1) estimates per measurement.
  ceres::Solver::Options options;
  options.max_num_iterations = 30;
  options.function_tolerance = 1e-7;
  options.parameter_tolerance = 1e-6;
  options.linear_solver_type = ceres::DENSE_QR;
  options.logging_type = ceres::SILENT;
  options.num_threads = 1;
  ceres::Solver::Summary summary;
  ceres::Solve(options, &problem, &summary);
  for (int i = 0; i < k; ++i) (*u)[free[i]] = theta[i];
}

// Gauss-Newton covariance of the free coordinates: sigma^2 (J^T J + P)^-1, J from the
// sensitivity columns (per step, divided by the step), P the prior's curvature, sigma^2
// the residual variance.
std::vector<double> StddevU(const SystemProfile& profile, const std::vector<CalibrationParam>& params,
                            const std::vector<bool>& is_free, const std::vector<std::vector<double>>& columns,
                            absl::Span<const CalibrationSample* const> samples) {
  std::vector<int> free;
  for (size_t j = 0; j < params.size(); ++j) {
    if (is_free[j]) free.push_back(static_cast<int>(j));
  }
  std::vector<double> out(params.size(), 0.0);
  const int n = static_cast<int>(samples.size());
  const int k = static_cast<int>(free.size());
  if (k == 0 || n == 0) return out;
  double ss = 0;
  for (const CalibrationSample* s : samples) {
    const double r = LogPredictedTime(*s, profile) - std::log(s->measured_iteration_time_s);
    if (std::isfinite(r)) ss += r * r;
  }
  const double sigma2 = ss / std::max(1, n - k);
  Eigen::MatrixXd j(n, k);
  for (int c = 0; c < k; ++c) {
    const double step = params[free[c]].StepU();
    for (int i = 0; i < n; ++i) j(i, c) = columns[free[c]][i] / step;
  }
  Eigen::MatrixXd h = j.transpose() * j;
  for (int c = 0; c < k; ++c) {
    const double w = kHuberDelta / PriorWidth(params[free[c]]);
    h(c, c) += w * w;
  }
  const Eigen::MatrixXd cov = sigma2 * h.ldlt().solve(Eigen::MatrixXd::Identity(k, k));
  for (int c = 0; c < k; ++c) out[free[c]] = std::sqrt(std::max(0.0, cov(c, c)));
  return out;
}

}  // namespace

TimeFit FitTimes(const SystemProfile& at, const std::vector<CalibrationParam>& params,
                 absl::Span<const CalibrationSample* const> samples, bool all_free) {
  TimeFit fit;
  fit.u.assign(params.size(), 0.0);
  std::vector<bool> fitted(params.size(), false);
  std::vector<std::vector<double>> columns;
  for (int round = 0;; ++round) {
    columns = SensitivityColumns(at, params, fit.u, fitted, samples);
    Selection sel = SelectIdentifiable(params, columns);
    if (all_free) {
      sel.free.assign(params.size(), true);
      for (std::string& why : sel.reason) why.clear();
    }
    const bool stable = round > 0 && sel.free == fitted;
    if (stable || round == kMaxFitRounds) {
      // Keep the set that was fitted; report the sensitivities at the fitted point.
      if (!stable) {
        for (size_t j = 0; j < params.size(); ++j) {
          if (fitted[j] && !sel.free[j]) {
            sel.reason[j].clear();
          } else if (!fitted[j] && sel.free[j]) {
            sel.reason[j] = absl::StrFormat(
                "moves predictions by %.2f %% per %s only once the others moved; kept, as selection did not "
                "settle within %d fits",
                100 * sel.sensitivity[j], params[j].StepName(), kMaxFitRounds);
          }
        }
        sel.free = fitted;
      }
      fit.selection = std::move(sel);
      break;
    }
    // A parameter that left the set goes back to its start.
    for (size_t j = 0; j < params.size(); ++j) {
      if (!sel.free[j]) fit.u[j] = 0;
    }
    fitted = sel.free;
    Solve(at, params, fitted, samples, &fit.u);
    fit.rounds = round + 1;
  }
  fit.profile = WithParams(at, params, fit.u, fitted);
  fit.stddev_u = StddevU(fit.profile, params, fitted, columns, samples);
  return fit;
}

}  // namespace paraplan
