// Backend: measurements — ingest (each checked, estimated and stored with its
// prediction in one transaction), the accuracy report and the gauges kept from them.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "estimator/inputs/units.h"
#include "estimator/inputs/validate.h"
#include "estimator/iteration/estimate.h"
#include "server/accuracy.h"
#include "server/adapter.h"
#include "server/backend.h"
#include "server/backend_internal.h"
#include "server/log.h"

namespace paraplan::server {

namespace {


}  // namespace

std::string Backend::ProfileLabel(const std::string& name, std::map<std::string, bool>* known) {
  if (name.empty()) return kUnknownProfileLabel;
  auto it = known->find(name);
  if (it == known->end()) it = known->emplace(name, store_->GetProfile(name).ok()).first;
  return it->second ? name : kUnknownProfileLabel;
}

struct Backend::IngestCheck {
  enum class Verdict { kStore, kDuplicate, kRejected };
  Verdict verdict = Verdict::kRejected;
  std::string id;       // as answered (abbreviated when too long)
  std::string profile;  // its metrics label's source; empty when unknown
  std::string reason;   // kRejected
  store::MeasurementRow row;  // kStore
  double capacity_gib = 0;    // kStore: the profile version's GPU memory
};

absl::StatusOr<Backend::IngestCheck> Backend::CheckMeasurement(const v1::Measurement& given, int index,
                                                               const std::set<std::string>& stored_ids) {
  IngestCheck out;
  out.id = given.id();
  auto reject = [&out](absl::string_view reason) {
    out.verdict = IngestCheck::Verdict::kRejected;
    out.reason = std::string(reason);
    return out;
  };
  // A measurement may name a preset (`model`) instead of inlining its workload: the
  // preset's workload is filled in before validation and stored with it.
  v1::Measurement filled;
  const bool from_preset = !given.has_workload() && !given.model().empty();
  if (from_preset) filled = given;
  const v1::Measurement& m = from_preset ? filled : given;
  const std::string field = absl::StrCat("measurements[", index, "]");
  if (m.id().empty() || m.id().size() > 200) {
    out.id = Abbreviated(m.id());  // not echoed whole: it may be megabytes
    return reject(absl::StrCat(field, ".id: must be 1 to 200 characters"));
  }
  absl::StatusOr<std::pair<std::string, int>> ref = ParseProfileRef(m.profile(), "profile");
  if (!ref.ok()) return reject(ref.status().message());
  out.profile = ref->first;
  const std::string& profile = ref->first;
  if (absl::Status s = ValidateMeasured(m.iteration_time_s(), m.peak_memory_gib()); !s.ok()) {
    return reject(s.message());
  }
  absl::StatusOr<bool> dup = store_->HasMeasurement(m.id());
  if (!dup.ok()) return dup.status();  // nothing of this request is stored yet
  if (*dup || stored_ids.contains(m.id())) {
    out.verdict = IngestCheck::Verdict::kDuplicate;
    return out;
  }
  absl::StatusOr<v1::SystemProfile> pp = Load(profile, ref->second);
  if (!pp.ok()) return reject(pp.status().message());
  if (from_preset) {
    absl::StatusOr<v1::Workload> preset = PresetWorkload(m.model());
    if (!preset.ok()) return reject(preset.status().message());
    *filled.mutable_workload() = *std::move(preset);
  }
  absl::StatusOr<Workload> w = m.has_workload() ? adapter::FromProto(m.workload())
                                                : absl::InvalidArgumentError("workload: missing (give workload or model)");
  absl::StatusOr<ParallelConfig> c = adapter::FromProto(m.config());
  absl::StatusOr<SystemProfile> p = adapter::FromProto(*pp);
  absl::StatusOr<Framework> framework = adapter::FrameworkFromProto(m.framework());
  if (c.ok() && framework.ok()) c->framework = *framework;  // what ran it, where frameworks differ
  absl::Status bad = !w.ok()           ? w.status()
                     : !c.ok()         ? c.status()
                     : !framework.ok() ? framework.status()
                                       : p.status();
  absl::StatusOr<paraplan::Estimate> e = bad.ok() ? EstimateIteration(*w, *c, *p) : bad;
  if (!e.ok()) return reject(e.status().message());
  if (e->num_gpus > p->NumGpus()) {
    return reject(absl::StrCat("config: uses ", e->num_gpus, " GPUs; profile \"", profile, "\" has ", p->NumGpus()));
  }
  // A profile stored before validation bounded every value may still predict nonsense.
  if (!std::isfinite(e->iteration_time_s) || !std::isfinite(e->memory.total_bytes)) {
    return reject(absl::StrCat("profile \"", profile, "\" version ", pp->version(),
                               " predicts a non-finite time or memory; fix the profile"));
  }
  out.verdict = IngestCheck::Verdict::kStore;
  out.capacity_gib = p->accelerator.memory_gib;
  store::MeasurementRow& row = out.row;
  row.id = m.id();
  row.profile_name = profile;
  row.profile_version = pp->version();
  row.iteration_time_s = m.iteration_time_s();
  row.predicted_iteration_time_s = e->iteration_time_s;
  row.peak_memory_gib = m.peak_memory_gib();
  row.predicted_memory_gib = e->memory.total_bytes / kGiB;
  row.predicted_fits = e->memory.fits;
  row.out_of_memory = m.out_of_memory();
  row.observed_at_unix_ms = m.observed_at().seconds() * 1000 + m.observed_at().nanos() / 1000000;
  row.body = m.SerializeAsString();
  return out;
}

absl::StatusOr<v1::IngestMeasurementsResponse> Backend::Ingest(const v1::IngestMeasurementsRequest& req) {
  if (req.measurements_size() > options_.max_ingest) {
    return absl::InvalidArgumentError(absl::StrCat("measurements: at most ", options_.max_ingest, " per request"));
  }
  v1::IngestMeasurementsResponse out;
  std::map<std::string, bool> known;  // profile name -> stored (metrics labels)
  auto duplicate = [&](v1::IngestResult* r, const std::string& profile) {
    r->set_status(v1::IngestResult::STATUS_DUPLICATE);
    r->set_reason("already stored");
    out.set_duplicates(out.duplicates() + 1);
    metrics_->RecordIngest(ProfileLabel(profile, &known), "duplicate");
  };
  auto reject = [&](v1::IngestResult* r, absl::string_view reason, const std::string& profile) {
    r->set_status(v1::IngestResult::STATUS_REJECTED);
    r->set_reason(std::string(reason));
    out.set_rejected(out.rejected() + 1);
    metrics_->RecordIngest(ProfileLabel(profile, &known), "rejected");
  };
  // Items that passed every check, written together at the end: all or none.
  std::vector<std::pair<int, IngestCheck>> candidates;
  std::set<std::string> ids;  // of the candidates: a later copy in the request is a duplicate
  for (int i = 0; i < req.measurements_size(); ++i) {
    absl::StatusOr<IngestCheck> check = CheckMeasurement(req.measurements(i), i, ids);
    if (!check.ok()) return check.status();
    v1::IngestResult* r = out.add_results();
    r->set_id(check->id);
    switch (check->verdict) {
      case IngestCheck::Verdict::kRejected:
        reject(r, check->reason, check->profile);
        break;
      case IngestCheck::Verdict::kDuplicate:
        duplicate(r, check->profile);
        break;
      case IngestCheck::Verdict::kStore:
        ids.insert(check->row.id);
        candidates.emplace_back(i, *std::move(check));
        break;
    }
  }

  std::vector<store::MeasurementRow> rows;
  rows.reserve(candidates.size());
  for (const auto& [index, c] : candidates) rows.push_back(c.row);
  // One transaction: on error nothing of this request is stored, and the error says so.
  absl::StatusOr<std::vector<absl::Status>> stored = store_->InsertMeasurements(rows);
  if (!stored.ok()) return stored.status();
  std::map<std::string, int> touched;  // profile -> measurements stored
  for (size_t k = 0; k < candidates.size(); ++k) {
    const auto& [index, c] = candidates[k];
    const absl::Status& s = (*stored)[k];
    v1::IngestResult* r = out.mutable_results(index);
    const std::string& profile = c.row.profile_name;
    if (s.code() == absl::StatusCode::kAlreadyExists) {  // a concurrent ingest won
      duplicate(r, profile);
      continue;
    }
    if (!s.ok()) {  // e.g. the profile was deleted meanwhile
      reject(r, s.message(), profile);
      continue;
    }
    r->set_status(v1::IngestResult::STATUS_ACCEPTED);
    r->set_predicted_iteration_time_s(c.row.predicted_iteration_time_s);
    r->set_profile_version(c.row.profile_version);
    out.set_accepted(out.accepted() + 1);
    metrics_->RecordIngest(profile, "accepted");
    if (std::optional<double> ape = AbsRelativeError(c.row)) metrics_->ObservePredictionError(profile, *ape);
    if (std::optional<bool> hit = MemoryHit(c.row, c.capacity_gib)) metrics_->RecordMemoryPrediction(profile, *hit);
    ++touched[profile];
  }
  // The measurements are stored: what follows only updates metrics and schedules work,
  // and its failures are logged, never returned (the answer must say what was stored).
  for (const auto& [profile, stored_rows] : touched) {
    if (absl::Status s = UpdateAccuracy(profile, false); !s.ok()) {
      WriteLogLine(LogLevel::kWarn, absl::StrCat("event=update_accuracy profile=", LogQuote(profile),
                                                 " msg=", LogQuote(s.message())));
    }
    // The store counts (no further than the threshold) only when what this server
    // stored may have made the profile due (auto_calibrator.h).
    int64_t mark = 0;
    if (options_.auto_calibrate_after > 0 && auto_calibrator_.Stored(profile, stored_rows, &mark)) {
      absl::StatusOr<int> pending =
          store_->CountMeasurementsSinceCalibration(profile, auto_calibrator_.DueAt(profile));
      if (pending.ok()) auto_calibrator_.Counted(profile, *pending, mark);
      if (pending.ok() && auto_calibrator_.Due(profile, *pending) && auto_calibrator_.Schedule(profile)) {
        out.set_calibration_triggered(true);
      }
    }
  }
  return out;
}


absl::Status Backend::UpdateAccuracy(const std::string& profile, bool replay_histograms) {
  Capacities caps;
  AccuracyTracker::Observer replay;
  if (replay_histograms) {  // after a restart: counters and histograms from the store
    absl::StatusOr<Capacities> c = CapacitiesOf(profile);
    if (!c.ok()) return c.status();
    caps = *std::move(c);
    replay = [&](const store::MeasurementSummary& m) {
      if (std::optional<double> ape = AbsRelativeError(m)) metrics_->ObservePredictionError(profile, *ape);
      if (std::optional<bool> hit = MemoryHit(m, CapacityOf(caps, m.profile_version))) {
        metrics_->RecordMemoryPrediction(profile, *hit);
      }
    };
  }
  return accuracy_.Update(profile, replay).status();
}

absl::StatusOr<v1::AccuracyReport> Backend::Accuracy(const v1::GetAccuracyRequest& req) {
  if (req.profile().empty()) return absl::InvalidArgumentError("profile: missing profile name");
  if (req.recent() < 0) return absl::InvalidArgumentError("recent: must not be negative");
  absl::StatusOr<v1::SystemProfile> p = Load(req.profile(), 0);
  if (!p.ok()) return p.status();
  absl::StatusOr<Capacities> caps = CapacitiesOf(req.profile());
  if (!caps.ok()) return caps.status();
  // Every measurement is read, in pages; only its AccuracyPoint (and label) is kept, and
  // only until this call returns.
  std::vector<AccuracyPoint> points;
  std::map<std::string, std::vector<uint32_t>> groups;  // label value -> indexes in points
  absl::Status read;
  if (req.label_key().empty()) {
    read = ForEachPaged(
        AccuracyTracker::kPageSize,
        [&](int64_t after) {
          return store_->MeasurementSummariesAfter(req.profile(), after, AccuracyTracker::kPageSize);
        },
        [&](const store::MeasurementSummary& m) {
          points.push_back(PointOf(m, CapacityOf(*caps, m.profile_version)));
        });
  } else {
    read = ForEachPaged(
        kRowsPerPage, [&](int64_t after) { return store_->MeasurementsAfter(req.profile(), after, kRowsPerPage); },
        [&](const store::MeasurementRow& r) {
          v1::Measurement m;
          if (m.ParseFromString(r.body)) {
            auto it = m.labels().find(req.label_key());
            groups[it == m.labels().end() ? "" : it->second].push_back(static_cast<uint32_t>(points.size()));
          }
          points.push_back(PointOf(r, CapacityOf(*caps, r.profile_version)));
        });
  }
  if (!read.ok()) return read;
  v1::AccuracyReport out;
  out.set_profile(req.profile());
  out.set_profile_version(p->version());
  *out.mutable_overall() = Stats(points, 0, points.size());
  const size_t recent = req.recent() == 0 ? 100 : static_cast<size_t>(req.recent());
  *out.mutable_recent() = Stats(points, points.size() - std::min(recent, points.size()), points.size());
  for (const auto& [value, group] : groups) (*out.mutable_by_label())[value] = Stats(points, group);
  return out;
}


void Backend::RefreshGauges() {
  absl::MutexLock lock(&gauges_mu_);
  absl::StatusOr<std::vector<store::ProfileRow>> all = store_->ListLatestProfiles("", 1 << 30);
  if (!all.ok()) return;
  std::set<std::string> names;
  for (const store::ProfileRow& r : *all) names.insert(r.name);
  for (const std::string& gone : gauged_) {  // deleted since the last refresh
    if (names.contains(gone)) continue;
    accuracy_.Forget(gone);
    metrics_->ForgetProfile(gone);
  }
  gauged_ = std::move(names);
  const int64_t now_ms = absl::ToUnixMillis(absl::Now());
  for (const store::ProfileRow& r : *all) {
    // What any server sharing the store stored since the last update.
    if (absl::Status s = UpdateAccuracy(r.name, /*replay_histograms=*/false); !s.ok()) {
      WriteLogLine(LogLevel::kWarn, absl::StrCat("event=update_accuracy profile=", LogQuote(r.name),
                                                 " msg=", LogQuote(s.message())));
    }
    metrics_->SetProfileVersion(r.name, r.version);
    int64_t since = r.created_at_unix_ms;
    absl::StatusOr<std::optional<store::CalibrationRunRow>> last = store_->LastCalibration(r.name);
    if (last.ok() && last->has_value()) since = (*last)->created_at_unix_ms;
    metrics_->SetCalibrationAge(r.name, static_cast<double>(now_ms - since) / 1000.0);
  }
}

}  // namespace paraplan::server
