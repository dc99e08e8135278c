// Estimates, collective listings, fit reports and microbenchmark fits, struct -> proto
// (adapter.h).
#include <cmath>
#include <string>
#include <vector>

#include "server/adapter.h"
#include "estimator/calibration/microbench.h"
#include "server/adapter_internal.h"

namespace paraplan::adapter {

using internal::AlgorithmToProto;

namespace {

const char* DtypeName(Precision p) {
  switch (p) {
    case Precision::kFp8:
      return "fp8";
    case Precision::kFp4:
      return "fp4";
    case Precision::kFp16:
      return "fp16";
    case Precision::kFp32:
      return "fp32";
    case Precision::kBf16:
      break;
  }
  return "bf16";
}

}  // namespace

v1::CollectiveUse ToProto(const CollectiveUse& u) {
  v1::CollectiveUse q;
  q.set_dimension(u.dimension);
  q.set_kind(static_cast<v1::CollectiveKind>(static_cast<int>(u.kind) + 1));
  q.set_algorithm(AlgorithmToProto(u.algorithm));
  q.set_level(u.level);
  q.set_level_name(u.level_name);
  q.set_group_size(u.group_size);
  q.set_stride(u.stride);
  q.set_bytes(u.bytes);
  q.set_calls(u.calls);
  q.set_seconds_per_call(u.seconds_per_call);
  q.set_overlapped(u.overlapped);
  return q;
}

v1::Estimate ToProto(const Estimate& e) {
  v1::Estimate out;
  *out.mutable_config() = ToProto(e.config);
  out.set_iteration_time_s(e.iteration_time_s);
  v1::TimeBreakdown* t = out.mutable_time();
  t->set_compute_s(e.time.compute_s);
  t->set_recompute_s(e.time.recompute_s);
  t->set_tp_comm_s(e.time.tp_comm_s);
  t->set_spatial_comm_s(e.time.spatial_comm_s);
  t->set_cp_comm_s(e.time.cp_comm_s);
  t->set_ep_comm_s(e.time.ep_comm_s);
  t->set_pp_comm_s(e.time.pp_comm_s);
  t->set_pipeline_bubble_s(e.time.pipeline_bubble_s);
  t->set_dp_comm_s(e.time.dp_comm_s);
  t->set_optimizer_s(e.time.optimizer_s);
  t->set_data_loading_s(e.time.data_loading_s);
  t->set_overhead_s(e.time.overhead_s);
  t->set_offload_s(e.time.offload_s);
  v1::MemoryBreakdown* m = out.mutable_memory();
  m->set_weights_bytes(e.memory.weights_bytes);
  m->set_gradients_bytes(e.memory.gradients_bytes);
  m->set_optimizer_bytes(e.memory.optimizer_bytes);
  m->set_activations_bytes(e.memory.activations_bytes);
  m->set_buffers_bytes(e.memory.buffers_bytes);
  m->set_overhead_bytes(e.memory.overhead_bytes);
  m->set_total_bytes(e.memory.total_bytes);
  m->set_capacity_bytes(e.memory.capacity_bytes);
  m->set_fits(e.memory.fits);
  m->set_host_bytes(e.memory.host_bytes);
  m->set_peak_at_optimizer_step(e.memory.peak_at_optimizer_step);
  out.set_samples_per_s(e.samples_per_s);
  out.set_tokens_per_s(e.tokens_per_s);
  out.set_model_tflops_per_gpu(e.model_tflops_per_gpu);
  out.set_mfu(e.mfu);
  out.set_energy_per_iteration_j(e.energy_per_iteration_j);
  out.set_cost_per_iteration_usd(e.cost_per_iteration_usd);
  out.set_time_to_train_s(e.time_to_train_s);
  out.set_energy_to_train_j(e.energy_to_train_j);
  out.set_cost_to_train_usd(e.cost_to_train_usd);
  out.set_bottleneck(e.bottleneck);
  for (const std::string& w : e.warnings) out.add_warnings(w);
  for (const CollectiveUse& u : e.collectives) *out.add_collectives() = ToProto(u);
  out.set_profile_name(e.profile_name);
  out.set_profile_version(e.profile_version);
  out.set_num_gpus(e.num_gpus);
  out.set_memory_headroom_ratio(e.memory_headroom_ratio);
  out.mutable_interval()->set_low_s(e.interval.low_s);
  out.mutable_interval()->set_high_s(e.interval.high_s);
  out.mutable_interval()->set_confidence(e.interval.confidence);
  out.set_in_envelope(e.in_envelope);
  for (const std::string& n : e.envelope_notes) out.add_envelope_notes(n);
  for (const std::string& q : e.equivalents) out.add_equivalents(q);
  return out;
}

v1::FitReport ToProto(const FitReport& r) {
  v1::FitReport out;
  out.set_num_measurements(r.num_measurements);
  out.set_mape_before_ratio(r.mape_before_ratio);
  out.set_mape_after_ratio(r.mape_after_ratio);
  out.set_cv_mape_ratio(r.cv_mape_ratio);
  for (const ParameterChange& p : r.parameters) {
    v1::ParameterChange* c = out.add_parameters();
    c->set_name(p.name);
    c->set_before(p.before);
    c->set_after(p.after);
    c->set_fitted(p.fitted);
    c->set_reason(p.reason);
    c->set_stddev(p.stddev);
    c->set_lower_bound(p.lower_bound);
    c->set_upper_bound(p.upper_bound);
    c->set_at_bound(p.at_bound);
    c->set_sensitivity_ratio(p.sensitivity_ratio);
    c->set_cv_folds_fitted(p.cv_folds_fitted);
  }
  out.set_num_available(r.num_available);
  out.set_num_used(r.num_used);
  out.set_sampling_note(r.sampling_note);
  out.set_num_groups(r.num_groups);
  out.set_cv_valid(r.cv_valid);
  out.set_cv_folds(r.cv_folds);
  out.set_cv_method(r.cv_method);
  out.set_num_peak_measurements(r.num_peak_measurements);
  out.set_memory_cv_valid(r.memory_cv_valid);
  out.set_memory_cv_mape_ratio(r.memory_cv_mape_ratio);
  out.set_current_mape_ratio(r.current_mape_ratio);
  out.set_promote(r.promote);
  out.set_promotion_reason(r.promotion_reason);
  out.set_extrapolation_valid(r.extrapolation_valid);
  out.set_cv_extrapolation_mape(r.cv_extrapolation_mape_ratio);
  out.set_extrapolation_base_mape(r.extrapolation_base_mape_ratio);
  out.set_extrapolation_method(r.extrapolation_method);
  out.set_scope(r.scope);
  out.set_model_gap(r.model_gap);
  for (const StratumDisagreement& d : r.disagreements) {
    v1::StratumDisagreement* x = out.add_disagreements();
    x->set_parameter(d.parameter);
    x->set_narrow_regime(d.narrow_regime);
    x->set_narrow_value(d.narrow_value);
    x->set_narrow_stddev(d.narrow_stddev);
    x->set_wide_regime(d.wide_regime);
    x->set_wide_value(d.wide_value);
    x->set_wide_stddev(d.wide_stddev);
  }
  return out;
}

// `file_of[i]`: the file point i came from. At most 100 points off by more than 5 %.
v1::FitNetworkResponse ToProto(const NetworkFitReport& r, const std::vector<std::string>& file_of) {
  v1::FitNetworkResponse out;
  out.set_level(r.level);
  out.set_collective_overhead_us(r.collective_overhead_us);
  out.set_latency_us(r.latency_us);
  out.set_efficiency(r.efficiency);
  out.set_curve_points(static_cast<int>(r.curve.size()));
  out.set_points(static_cast<int>(r.points.size()));
  out.set_within_5_percent(r.within_5_percent);
  out.set_max_error_ratio(r.max_error_ratio);
  for (const std::string& n : r.notes) out.add_notes(n);
  for (size_t i = 0; i < r.points.size(); ++i) {
    const NetworkFitPoint& p = r.points[i];
    if (std::abs(p.predicted_s / p.measured_s - 1) <= 0.05 || out.missed_size() >= 100) continue;
    v1::CollectiveFitPoint* m = out.add_missed();
    m->set_file(file_of[i]);
    m->set_collective(CollectiveKindName(p.kind));
    m->set_ranks(p.ranks);
    m->set_bytes(p.bytes);
    m->set_measured_s(p.measured_s);
    m->set_predicted_s(p.predicted_s);
  }
  return out;
}

// At most 200 points off by more than 10 %.
v1::FitGemmResponse ToProto(const GemmFitReport& r) {
  v1::FitGemmResponse out;
  out.set_matmul_efficiency(r.matmul_efficiency);
  out.set_matmul_efficiency_fp8(r.matmul_efficiency_fp8);
  out.set_matmul_half_efficiency_gflop(r.matmul_half_efficiency_gflop);
  out.set_matmul_pipeline_depth(r.matmul_pipeline_depth);
  out.set_launch_floor_us(r.launch_floor_us);
  out.set_launch_floor_fp8_us(r.launch_floor_fp8_us);
  out.set_points(static_cast<int>(r.points.size()));
  out.set_within_10_percent(r.within_10_percent);
  for (const GemmFitPoint& p : r.points) {
    if (std::abs(p.predicted_s / p.sample.seconds - 1) <= 0.10 || out.missed_size() >= 200) continue;
    v1::GemmFitPoint* m = out.add_missed();
    m->set_m(static_cast<int64_t>(p.sample.m));
    m->set_n(static_cast<int64_t>(p.sample.n));
    m->set_k(static_cast<int64_t>(p.sample.k));
    m->set_dtype(DtypeName(p.sample.precision));
    m->set_measured_s(p.sample.seconds);
    m->set_predicted_s(p.predicted_s);
  }
  return out;
}

}  // namespace paraplan::adapter
