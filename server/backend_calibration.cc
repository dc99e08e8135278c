// Backend: calibration — the explicit Calibrate (one per profile at a time here, ended by
// its caller's deadline) and the automatic ones, which AutoCalibrator schedules on its
// background thread.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/cleanup/cleanup.h"
#include "estimator/calibration/calibrate.h"
#include "estimator/calibration/samples.h"
#include "server/adapter.h"
#include "server/background_priority.h"
#include "server/backend.h"
#include "server/backend_internal.h"
#include "server/log.h"

namespace paraplan::server {

void Backend::RunAutoCalibration(const std::string& profile) {
  // One calibration of a profile at a time here (an explicit one runs first) and among
  // every server on this store: replicas on one PostgreSQL database all see the same
  // measurements become due; the one that gets the store's lock calibrates, the others
  // leave it to that one.
  if (!BeginCalibration(profile, Interrupt{}).ok()) return;
  absl::Cleanup end = [this, &profile] { EndCalibration(profile); };
  absl::StatusOr<std::unique_ptr<store::Lease>> lease = store_->LockCalibration(profile, /*wait=*/false);
  if (!lease.ok()) {
    WriteLogLine(LogLevel::kWarn, absl::StrCat("event=auto_calibration profile=", LogQuote(profile),
                                               " msg=", LogQuote(lease.status().message())));
    return;
  }
  if (*lease == nullptr) return;  // another server is calibrating this profile now
  // Still due? An explicit Calibrate, or another server's, may have run since this one
  // was queued (its measurements no longer count).
  absl::StatusOr<int> pending = store_->CountMeasurementsSinceCalibration(profile);
  if (!pending.ok() || !auto_calibrator_.Due(profile, *pending)) return;
  absl::StatusOr<v1::CalibrateResponse> c = FitAndStore(profile, false, Interrupt{}, nullptr);
  if (c.ok()) return;  // success resets the back-off (FitAndStore)
  auto_calibrator_.Failed(profile, *pending);  // not retried until the pending measurements double
  WriteLogLine(LogLevel::kWarn, absl::StrCat("event=auto_calibration profile=", LogQuote(profile),
                                             " code=", absl::StatusCodeToString(c.status().code()),
                                             " msg=", LogQuote(c.status().message())));
}

absl::Status Backend::BeginCalibration(const std::string& profile, const Interrupt& stop) {
  absl::MutexLock lock(&calibrating_mu_);
  const auto free = [this, &profile]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(calibrating_mu_) {
    return !calibrating_.contains(profile);
  };
  // Waits in short slices so that a cancelled caller leaves at once.
  while (!free()) {
    if (stop.Requested()) {
      return absl::Status(stop.Check("calibration").code(),
                          absl::StrCat("another calibration of profile \"", profile, "\" is running on this server"));
    }
    calibrating_mu_.AwaitWithTimeout(absl::Condition(&free), absl::Milliseconds(50));
  }
  calibrating_.insert(profile);
  return absl::OkStatus();
}

void Backend::EndCalibration(const std::string& profile) {
  absl::MutexLock lock(&calibrating_mu_);
  calibrating_.erase(profile);
}

namespace {

void Say(const CalibrationOperations::PhaseSink& phase, const std::string& what) {
  if (phase) phase(what);
}

}  // namespace

absl::StatusOr<v1::CalibrateResponse> Backend::Calibrate(const std::string& profile, bool dry_run,
                                                         const Interrupt& stop,
                                                         const CalibrationOperations::PhaseSink& phase) {
  if (profile.empty()) return absl::InvalidArgumentError("profile: missing profile name");
  absl::StatusOr<v1::SystemProfile> base = Load(profile, 0);  // NOT_FOUND without waiting
  if (!base.ok()) return base.status();
  Say(phase, "waiting for the calibration of this profile running here");
  if (absl::Status s = BeginCalibration(profile, stop); !s.ok()) return s;
  absl::Cleanup end = [this, &profile] { EndCalibration(profile); };
  // And among the servers sharing the store (the automatic calibrations of replicas).
  Say(phase, "waiting for the store's calibration lock");
  std::unique_ptr<store::Lease> lease;
  while (lease == nullptr) {
    absl::StatusOr<std::unique_ptr<store::Lease>> l = store_->LockCalibration(profile, /*wait=*/false);
    if (!l.ok()) return l.status();
    lease = *std::move(l);
    if (lease != nullptr) break;
    if (absl::Status s = stop.Check("calibration"); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("another server is calibrating profile \"", profile, "\"; ",
                                                 s.message()));
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  return FitAndStore(profile, dry_run, stop, phase);
}

absl::StatusOr<std::optional<v1::CalibrateResponse>> Backend::UpToDate(const v1::SystemProfile& base) {
  absl::StatusOr<int> pending = store_->CountMeasurementsSinceCalibration(base.name(), /*limit=*/1);
  if (!pending.ok()) return pending.status();
  absl::StatusOr<std::optional<store::CalibrationRunRow>> last = store_->LastCalibration(base.name());
  if (!last.ok()) return last.status();
  if (*pending > 0 || !last->has_value() ||
      ((*last)->to_version != base.version() && (*last)->from_version != base.version())) {
    return std::nullopt;  // a new fit is due
  }
  v1::CalibrateResponse out;
  absl::StatusOr<v1::SystemProfile> fitted = Load(base.name(), (*last)->to_version);
  if (!fitted.ok()) return fitted.status();
  *out.mutable_profile() = *fitted;
  if (!out.mutable_report()->ParseFromString((*last)->report)) return absl::DataLossError("stored fit report");
  out.set_up_to_date(true);
  return out;
}

absl::StatusOr<v1::CalibrateResponse> Backend::FitAndStore(const std::string& profile, bool dry_run,
                                                           const Interrupt& stop,
                                                           const CalibrationOperations::PhaseSink& phase) {
  absl::StatusOr<v1::SystemProfile> base = Load(profile, 0);  // the latest, now that no other calibration runs
  if (!base.ok()) return base.status();
  if (!dry_run) {
    // Nothing new since the last calibration of this version: the same fit again would
    // store a second identical version.
    absl::StatusOr<std::optional<v1::CalibrateResponse>> same = UpToDate(*base);
    if (!same.ok()) return same.status();
    if (same->has_value()) return **std::move(same);
  }
  absl::StatusOr<SystemProfile> sp = adapter::FromProto(*base);
  if (!sp.ok()) return sp.status();
  // The measurements are read in pages and kept within a bound (BoundedSamples: the most
  // recent few of each configuration, of a uniform choice of configurations in each band
  // of GPU counts), so memory
  // does not grow with the store; the fit subsamples further. Measurements stored while
  // the fit runs are not in it: they count toward the next automatic calibration. The
  // read (O(store): SQLite and decoding, most of a calibration's CPU beside a busy ingest
  // stream) and the fit run at background priority: estimates and ingests beside them
  // keep the CPU.
  int64_t fitted_through = 0, read_rows = 0;
  absl::StatusOr<CalibrationResult> result = RunAtBackgroundPriority([&]() -> absl::StatusOr<CalibrationResult> {
    BoundedSamples kept(kCalibrationSamplesPerConfiguration, kCalibrationConfigurationsPerBand);
    absl::Status read = ForEachPaged(
        kRowsPerPage,
        [&](int64_t after) -> absl::StatusOr<std::vector<store::MeasurementRow>> {
          if (absl::Status s = stop.Check("calibration"); !s.ok()) return s;
          Say(phase, absl::StrCat("reading measurements (", read_rows, " read)"));
          return store_->MeasurementsAfter(profile, after, kRowsPerPage);
        },
        [&](const store::MeasurementRow& r) {
          fitted_through = r.seq;
          ++read_rows;
          v1::Measurement m;
          if (!m.ParseFromString(r.body)) return;
          absl::StatusOr<Workload> w = adapter::FromProto(m.workload());
          absl::StatusOr<ParallelConfig> c = adapter::FromProto(m.config());
          if (!w.ok() || !c.ok()) return;
          if (absl::StatusOr<Framework> f = adapter::FrameworkFromProto(m.framework()); f.ok()) c->framework = *f;
          kept.Add({*std::move(w), *c, m.iteration_time_s(), m.peak_memory_gib(), m.out_of_memory()});
        });
    if (!read.ok()) return read;
    const std::vector<CalibrationSample> samples = kept.Take();
    Say(phase, absl::StrCat("fitting ", samples.size(), " of ", read_rows, " measurements"));
    return CalibrateProfile(*sp, samples, stop);
  });
  if (!result.ok()) return result.status();
  v1::SystemProfile next = *base;
  *next.mutable_calibration() = adapter::ToProto(result->profile.calibration);
  v1::FitReport report = adapter::ToProto(result->report);
  report.set_based_on_version(base->version());
  *next.mutable_fit_report() = report;
  v1::CalibrateResponse out;
  *out.mutable_report() = report;
  if (dry_run) {
    next.clear_version();
    next.clear_created_at();
    next.set_origin("calibration");
    *out.mutable_profile() = next;
    return out;
  }
  // Guarded promotion: the new version becomes the default only when its grouped
  // cross-validated error beats the current version's on the same measurements;
  // otherwise it is kept as a candidate (`PromoteProfile` can still promote it).
  const bool promote = result->report.promote;
  Say(phase, "storing");
  absl::StatusOr<int> version = store_->RecordCalibration(profile, Encode(next), base->version(),
                                                          result->report.num_measurements,
                                                          report.SerializeAsString(), promote, fitted_through);
  if (!version.ok()) return version.status();
  auto_calibrator_.Reset(profile);  // the next automatic one is due after N more again
  metrics_->RecordCalibration(profile);
  if (promote) metrics_->SetProfileVersion(profile, *version);
  metrics_->SetCalibrationAge(profile, 0);
  metrics_->SetCalibrationDisagreements(profile, static_cast<int>(result->report.disagreements.size()));
  absl::StatusOr<v1::SystemProfile> stored = Load(profile, *version);
  if (!stored.ok()) return stored.status();
  *out.mutable_profile() = *stored;
  out.set_stored(true);
  return out;
}

absl::StatusOr<v1::CalibrationOperation> Backend::StartCalibration(const v1::CalibrateRequest& request) {
  const std::string profile = request.profile();
  if (profile.empty()) return absl::InvalidArgumentError("profile: missing profile name");
  if (absl::StatusOr<v1::SystemProfile> base = Load(profile, 0); !base.ok()) return base.status();
  return operations_.Start(profile, request.dry_run(),
                           [this, profile, dry_run = request.dry_run()](
                               const Interrupt& stop, const CalibrationOperations::PhaseSink& phase) {
                             return Calibrate(profile, dry_run, stop, phase);  // fits at background priority
                           });
}

absl::StatusOr<v1::CalibrationOperation> Backend::GetCalibration(const v1::GetCalibrationRequest& request) const {
  return operations_.Get(request.operation_id());
}

}  // namespace paraplan::server
