// Backend: what the RPCs do, in terms of protos, the estimator and the store — without
// gRPC. The gRPC services (server.cc) only translate contexts and statuses.
//
// Profiles are stored as serialized paraplan.v1.SystemProfile; version and created_at
// come from the store row. A profile reference is "NAME" (newest) or "NAME@N".
// Thread-safe: the store serialises writes; profile create/update checks and writes
// under one lock; one calibration runs at a time.
#ifndef PARAPLAN_SERVER_BACKEND_H_
#define PARAPLAN_SERVER_BACKEND_H_

#include <atomic>
#include <map>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "estimator/system_profile.h"
#include "paraplan/v1/services.pb.h"
#include "server/metrics.h"
#include "store/store.h"

namespace paraplan::server {

struct BackendOptions {
  int auto_calibrate_after = 20;  // 0 = never automatically
  int plan_threads = 2;
};

class Backend {
 public:
  Backend(store::Store* store, Metrics* metrics, BackendOptions options);

  // Seeds the built-in profiles (never overwrites) and loads accuracy metrics.
  absl::Status Start();

  absl::StatusOr<v1::Estimate> Estimate(const v1::EstimateRequest& request);
  absl::StatusOr<v1::PlanResponse> Plan(const v1::PlanRequest& request, absl::Time deadline,
                                        const std::atomic<bool>* cancelled);
  v1::ListModelsResponse ListModels() const;

  absl::StatusOr<v1::SystemProfile> CreateProfile(const v1::SystemProfile& profile);
  absl::StatusOr<v1::SystemProfile> UpdateProfile(const v1::SystemProfile& profile, bool create_if_missing);
  absl::StatusOr<v1::SystemProfile> GetProfile(const std::string& ref);
  // "NAME@V" becomes the default version of NAME (promotion or rollback).
  absl::StatusOr<v1::SystemProfile> PromoteProfile(const std::string& ref);
  absl::StatusOr<v1::ListProfilesResponse> ListProfiles(int page_size, const std::string& page_token);
  absl::StatusOr<int> DeleteProfile(const std::string& name);
  absl::StatusOr<v1::ListProfileVersionsResponse> ListProfileVersions(const std::string& name);

  absl::StatusOr<v1::IngestMeasurementsResponse> Ingest(const v1::IngestMeasurementsRequest& request);
  absl::StatusOr<v1::AccuracyReport> Accuracy(const v1::GetAccuracyRequest& request);
  // Fits the profile's default version to its measurements; stores the result as the
  // next version, promoted to the default only if the fit report says so; dry_run
  // stores nothing.
  absl::StatusOr<v1::CalibrateResponse> Calibrate(const std::string& profile, bool dry_run = false);

  // Microbenchmarks as profile input (backend_fit.cc): fit, and unless dry_run write the
  // fitted profile as the next version with origin "microbenchmark".
  absl::StatusOr<v1::FitNetworkResponse> FitNetwork(const v1::FitNetworkRequest& request);
  absl::StatusOr<v1::FitGemmResponse> FitGemm(const v1::FitGemmRequest& request);

  // Recomputes the per-profile gauges (version, calibration age) and drops those of
  // profiles deleted since the last call.
  void RefreshGauges();

 private:
  enum class Existing { kMustNotExist, kMustExist, kEither };
  absl::StatusOr<v1::SystemProfile> WriteProfile(const v1::SystemProfile& profile, Existing existing,
                                                 const std::string& origin = "user");
  // The profile a fit starts from ("NAME" or "NAME@N"), as the estimator sees it.
  absl::StatusOr<SystemProfile> LoadForFit(const std::string& ref);
  absl::StatusOr<v1::SystemProfile> Load(const std::string& name, int version);
  // Accelerator memory (GiB) of each stored version of `name`.
  absl::StatusOr<std::map<int, double>> CapacitiesOf(const std::string& name);
  absl::StatusOr<v1::Workload> WorkloadOf(const v1::Workload* workload, const std::string& model);
  absl::Status RefreshAccuracy(const std::string& profile, bool replay_histograms);

  store::Store* store_;
  Metrics* metrics_;
  BackendOptions options_;
  absl::Mutex calibrate_mu_;
  absl::Mutex profile_write_mu_;  // Create/Update: existence check + write
  absl::Mutex gauges_mu_;
  std::set<std::string> gauged_ ABSL_GUARDED_BY(gauges_mu_);  // profiles with gauges
};

// "NAME" or "NAME@N" -> (name, version; 0 = newest). INVALID_ARGUMENT on bad syntax.
absl::StatusOr<std::pair<std::string, int>> ParseProfileRef(const std::string& ref, const char* field);

}  // namespace paraplan::server

#endif  // PARAPLAN_SERVER_BACKEND_H_
