// Backend: what the RPCs do, in terms of protos, the estimator and the store — without
// gRPC. The gRPC services (server.cc) only translate contexts and statuses.
// One class, a file per concern: backend.cc (profiles, estimate, plan),
// backend_measurements.cc (ingest, accuracy, gauges), backend_calibration.cc (explicit
// and automatic calibration), backend_fit.cc (microbenchmark fits), backend_network.cc
// (simulate, co-design); what they share is in backend_internal.h.
//
// Profiles are stored as serialized paraplan.v1.SystemProfile; version and created_at
// come from the store row. A profile reference is "NAME" (newest) or "NAME@N". The
// built-in profiles (BuiltinProfiles()) cannot be deleted.
//
// Automatic calibration (after `auto_calibrate_after` new measurements of a profile)
// runs on one background thread, never inside the Ingest call that triggers it; its
// schedule — at most one queued or running per profile, the back-off after a failure —
// is AutoCalibrator's (auto_calibrator.h). Stop() (or the destructor) drops the queue and
// waits for the calibration running, if any. An automatic calibration runs under the store's
// calibration lock of the profile (store.h LockCalibration), taken without waiting: of
// several servers sharing one PostgreSQL store, one calibrates and the others skip.
//
// Accuracy gauges (accuracy.h) are brought up to date after each ingest from what it
// stored, in work and memory that do not grow with the measurements already stored;
// every measurement is read at start-up (to replay histograms), by GetAccuracy and by a
// calibration, in pages, keeping only what each needs. RefreshGauges also brings them
// up to date with what other servers sharing the store wrote, so that every replica
// exports the same MAPE, bias and profile version after a refresh.
//
// Metrics never take a label value from a request unchecked: an ingest rejected for a
// profile that is not stored counts under profile="(unknown)", so the series are bounded
// by the stored profiles. Errors repeat a request's strings at most kMaxEchoedChars long.
//
// Thread-safe: the store serialises writes; profile create/update checks and writes
// under one lock; one calibration of a profile runs at a time here, calibrations of
// different profiles side by side. The fits, calibrations and simulations take an
// Interrupt (the caller's deadline and cancellation) and stop soon after it fires.
#ifndef PARAPLAN_SERVER_BACKEND_H_
#define PARAPLAN_SERVER_BACKEND_H_

#include <atomic>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "estimator/inputs/interrupt.h"
#include "estimator/inputs/system_profile.h"
#include "estimator/iteration/estimate.h"
#include "paraplan/v1/network.pb.h"
#include "paraplan/v1/services.pb.h"
#include "server/accuracy.h"
#include "server/auto_calibrator.h"
#include "server/calibration_operations.h"
#include "server/metrics.h"
#include "store/store.h"

namespace paraplan::server {

struct BackendOptions {
  int auto_calibrate_after = 20;  // 0 = never automatically
  int plan_threads = 2;
  int64_t max_plan_candidates = 0;  // 0 = no cap; past it a Plan answers truncated
  int max_ingest = 10000;           // measurements in one Ingest (the server's --max-ingest)
  CalibrationOperations::Limits calibration_operations;  // StartCalibration's bounds
};

class Backend {
 public:
  Backend(store::Store* store, Metrics* metrics, BackendOptions options);
  ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  // The metrics label of ingests for profiles that are not stored.
  static constexpr const char* kUnknownProfileLabel = "(unknown)";

  // Seeds the built-in profiles and loads accuracy metrics. A built-in profile stored by an
  // older release gets this release's as its next version while nothing but built-ins
  // were written to it (the default only where a built-in is the default; otherwise a
  // candidate to promote); nothing stored is overwritten.
  absl::Status Start();

  absl::StatusOr<v1::Estimate> Estimate(const v1::EstimateRequest& request);
  absl::StatusOr<v1::PlanResponse> Plan(const v1::PlanRequest& request, absl::Time deadline,
                                        const std::atomic<bool>* cancelled);
  v1::ListModelsResponse ListModels() const;

  absl::StatusOr<v1::SystemProfile> CreateProfile(const v1::SystemProfile& profile);
  absl::StatusOr<v1::SystemProfile> UpdateProfile(const v1::SystemProfile& profile, bool create_if_missing);
  // Checks `profile` as a write would; stores nothing and answers it as given.
  absl::StatusOr<v1::SystemProfile> CheckProfile(const v1::SystemProfile& profile) const;
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
  // One calibration of a profile at a time on this server (others side by side); a call
  // waits for the running one until `stop` asks, then DEADLINE_EXCEEDED / CANCELLED.
  // When no measurement arrived since the last calibration of the version it would start
  // from, it fits nothing and answers that calibration's result with up_to_date (an
  // automatic and an explicit calibration of the same measurements store one version).
  // Among servers sharing a store, it runs under the store's calibration lock.
  // `phase`, when given, hears what it is doing.
  absl::StatusOr<v1::CalibrateResponse> Calibrate(const std::string& profile, bool dry_run = false,
                                                  const Interrupt& stop = {},
                                                  const CalibrationOperations::PhaseSink& phase = nullptr);
  // The same as an operation that outlives the call (calibration_operations.h).
  absl::StatusOr<v1::CalibrationOperation> StartCalibration(const v1::CalibrateRequest& request);
  absl::StatusOr<v1::CalibrationOperation> GetCalibration(const v1::GetCalibrationRequest& request) const;

  // Microbenchmarks as profile input (backend_fit.cc): fit, and unless dry_run write the
  // fitted profile as the next version with origin "microbenchmark".
  absl::StatusOr<v1::FitNetworkResponse> FitNetwork(const v1::FitNetworkRequest& request,
                                                    const Interrupt& stop = {});
  absl::StatusOr<v1::FitGemmResponse> FitGemm(const v1::FitGemmRequest& request, const Interrupt& stop = {});

  // The network as a design question (backend_network.cc): a configuration's
  // collectives replayed on SimGrid beside the estimate (UNIMPLEMENTED where the server
  // was built without SimGrid), and candidate designs ranked for a workload mix.
  absl::StatusOr<v1::SimulateResponse> Simulate(const v1::SimulateRequest& request, int max_gpus,
                                                const Interrupt& stop = {});
  absl::StatusOr<v1::CodesignResponse> Codesign(const v1::CodesignRequest& request, absl::Time deadline,
                                                const std::atomic<bool>* cancelled = nullptr);

  // Recomputes the per-profile gauges (accuracy from the measurements stored since the
  // last update by any server, version, calibration age) and drops those of profiles
  // deleted since the last call.
  void RefreshGauges();

  // Stops background work: queued automatic calibrations are dropped, the running one
  // (if any) is waited for, started calibrations are cancelled and waited for, and none
  // starts afterwards. Idempotent.
  void Stop();

 private:
  // Start's seeding of one built-in profile.
  absl::Status SeedBuiltinProfile(const SystemProfile& p);
  // Marks `profile` as calibrating here, waiting (until `stop`) for one already running.
  absl::Status BeginCalibration(const std::string& profile, const Interrupt& stop)
      ABSL_LOCKS_EXCLUDED(calibrating_mu_);
  void EndCalibration(const std::string& profile) ABSL_LOCKS_EXCLUDED(calibrating_mu_);
  // Ingest's verdict on one measurement before anything is stored (backend_measurements.cc):
  // a row to store, a duplicate, or a rejection with its reason. `stored_ids`: the ids
  // already taken by earlier items of the request. A store error is returned as such.
  struct IngestCheck;
  absl::StatusOr<IngestCheck> CheckMeasurement(const v1::Measurement& given, int index,
                                               const std::set<std::string>& stored_ids);
  // The calibration itself, with this server's slot and the store's lock held.
  absl::StatusOr<v1::CalibrateResponse> FitAndStore(const std::string& profile, bool dry_run,
                                                    const Interrupt& stop,
                                                    const CalibrationOperations::PhaseSink& phase);
  // The last calibration's answer when no measurement arrived since it and it started
  // from or made `base`; nullopt when a new fit is due.
  absl::StatusOr<std::optional<v1::CalibrateResponse>> UpToDate(const v1::SystemProfile& base);
  enum class Existing { kMustNotExist, kMustExist, kEither };
  absl::StatusOr<v1::SystemProfile> WriteProfile(const v1::SystemProfile& profile, Existing existing,
                                                 const std::string& origin = "user");
  // The profile a fit starts from ("NAME" or "NAME@N"), as the estimator sees it.
  absl::StatusOr<SystemProfile> LoadForFit(const std::string& ref);
  template <typename Response>
  absl::Status StoreFitted(const SystemProfile& fitted, bool dry_run, Response* out);
  absl::StatusOr<v1::SystemProfile> Load(const std::string& name, int version);
  // The profile an Estimate or Plan request uses: the stored version `ref` names, or the
  // request's profile_override (validated; `warning` then says what it changed).
  absl::StatusOr<SystemProfile> RequestProfile(const std::string& ref, const v1::SystemProfile* override_profile,
                                               std::string* warning);
  // That profile and the estimate of `c` on it (the override's warning among the
  // estimate's warnings).
  struct ProfiledEstimate {
    SystemProfile profile;
    paraplan::Estimate estimate;
  };
  absl::StatusOr<ProfiledEstimate> EstimateOnRequestProfile(const std::string& ref,
                                                            const v1::SystemProfile* override_profile,
                                                            const Workload& w, const ParallelConfig& c);
  // Accelerator memory (GiB) of each stored version of `name`.
  absl::StatusOr<std::map<int, double>> CapacitiesOf(const std::string& name);
  absl::StatusOr<Workload> WorkloadOf(const v1::Workload* workload, const std::string& model);
  // Brings the profile's accuracy gauges up to date with what was stored since the last
  // call (accuracy.h: bounded work and memory); replay_histograms (start-up) also feeds
  // every stored measurement to the error histogram and memory counters.
  absl::Status UpdateAccuracy(const std::string& profile, bool replay_histograms);
  // The profile's name when it is stored, else kUnknownProfileLabel. `known` caches
  // answers within one request.
  std::string ProfileLabel(const std::string& name, std::map<std::string, bool>* known);

  // Automatic calibration (see the top of this file): one calibration of `profile`
  // if it is still due, on the AutoCalibrator's thread.
  void RunAutoCalibration(const std::string& profile);

  store::Store* store_;
  Metrics* metrics_;
  BackendOptions options_;
  AccuracyTracker accuracy_;
  absl::Mutex calibrating_mu_;
  std::set<std::string> calibrating_ ABSL_GUARDED_BY(calibrating_mu_);  // running here now
  absl::Mutex profile_write_mu_;  // Create/Update: existence check + write
  absl::Mutex gauges_mu_;
  std::set<std::string> gauged_ ABSL_GUARDED_BY(gauges_mu_);  // profiles with gauges
  const std::set<std::string> builtin_names_;

  AutoCalibrator auto_calibrator_;  // scheduling of RunAutoCalibration
  CalibrationOperations operations_;  // last member: its threads stop before the rest goes
};

// The workload of preset `model` (ListModels); INVALID_ARGUMENT naming `model` and
// listing the presets when there is none. Measurements that name a preset use it.
absl::StatusOr<v1::Workload> PresetWorkload(const std::string& model);

// "NAME" or "NAME@N" -> (name, version; 0 = newest). INVALID_ARGUMENT on bad syntax.
absl::StatusOr<std::pair<std::string, int>> ParseProfileRef(const std::string& ref, const char* field);

}  // namespace paraplan::server

#endif  // PARAPLAN_SERVER_BACKEND_H_
