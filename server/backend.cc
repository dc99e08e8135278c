#include "server/backend.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "estimator/calibration/calibrate.h"
#include "estimator/catalog/presets.h"
#include "estimator/inputs/validate.h"
#include "estimator/iteration/estimate.h"
#include "estimator/plan/search.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "server/accuracy.h"
#include "server/adapter.h"
#include "server/log.h"
#include "server/profile_override.h"

namespace paraplan::server {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

bool ValidName(const std::string& n) {
  if (n.empty() || n.size() > 63) return false;
  for (size_t i = 0; i < n.size(); ++i) {
    const char c = n[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-'))) return false;
  }
  return true;
}

absl::Status CheckName(const std::string& name, const char* field) {
  if (ValidName(name)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      field, ": \"", Abbreviated(name), "\" must match [a-z0-9][a-z0-9._-]{0,62}"));
}

// Row -> proto with the server-assigned fields.
absl::StatusOr<v1::SystemProfile> Decode(const store::ProfileRow& row) {
  v1::SystemProfile p;
  if (!p.ParseFromString(row.body)) {
    return absl::DataLossError(absl::StrCat("profile \"", row.name, "\" version ", row.version, " is corrupt"));
  }
  p.set_name(row.name);
  p.set_version(row.version);
  p.mutable_created_at()->set_seconds(row.created_at_unix_ms / 1000);
  p.mutable_created_at()->set_nanos(static_cast<int>(row.created_at_unix_ms % 1000) * 1000000);
  p.set_origin(row.origin);
  p.set_promoted(row.promoted);
  p.set_is_default(row.is_default);
  return p;
}

// What is stored: the profile without server-assigned fields.
std::string Encode(v1::SystemProfile p) {
  p.clear_version();
  p.clear_created_at();
  p.clear_origin();
  p.clear_promoted();
  p.clear_is_default();
  return p.SerializeAsString();
}

// INVALID_ARGUMENT naming the first double or float under `m` that is NaN or infinite.
// Checked on the proto because the adapter maps some of them (a NaN oversubscription
// becomes 1), so the estimator's validation would never see them, yet they would be
// stored. `skip` names a field (of any message) left out: server-written reports.
absl::Status CheckFiniteNumbers(const google::protobuf::Message& m, const std::string& path,
                                absl::string_view skip) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection* r = m.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(m, &fields);  // the fields that are set
  for (const FieldDescriptor* f : fields) {
    if (f->name() == skip) continue;
    const std::string at = absl::StrCat(path, ".", f->name());
    const int n = f->is_repeated() ? r->FieldSize(m, f) : 1;
    for (int i = 0; i < n; ++i) {
      const std::string item = f->is_repeated() ? absl::StrCat(at, "[", i, "]") : at;
      double v = 0;
      switch (f->cpp_type()) {
        case FieldDescriptor::CPPTYPE_DOUBLE:
          v = f->is_repeated() ? r->GetRepeatedDouble(m, f, i) : r->GetDouble(m, f);
          break;
        case FieldDescriptor::CPPTYPE_FLOAT:
          v = f->is_repeated() ? r->GetRepeatedFloat(m, f, i) : r->GetFloat(m, f);
          break;
        case FieldDescriptor::CPPTYPE_MESSAGE: {
          const google::protobuf::Message& sub =
              f->is_repeated() ? r->GetRepeatedMessage(m, f, i) : r->GetMessage(m, f);
          if (absl::Status s = CheckFiniteNumbers(sub, item, skip); !s.ok()) return s;
          continue;
        }
        default:
          continue;
      }
      if (!std::isfinite(v)) return absl::InvalidArgumentError(absl::StrCat(item, ": must be a finite number"));
    }
  }
  return absl::OkStatus();
}

// Validates a user-supplied profile with the estimator's rules.
absl::Status ValidateUserProfile(const v1::SystemProfile& p) {
  if (absl::Status s = CheckName(p.name(), "profile.name"); !s.ok()) return s;
  if (absl::Status s = CheckFiniteNumbers(p, "profile", "fit_report"); !s.ok()) return s;
  absl::StatusOr<SystemProfile> sp = adapter::FromProto(p);
  if (!sp.ok()) return sp.status();
  return ValidateProfile(*sp);
}

// GPU memory capacity of each version of a profile (GiB), to judge observed peaks.
using Capacities = std::map<int, double>;

double CapacityOf(const Capacities& caps, int version) {
  auto it = caps.find(version);
  return it == caps.end() ? 0 : it->second;
}

// Rows per store read where whole measurements (with bodies) are read in pages.
constexpr int kRowsPerPage = 512;

// Calls `each` on every row that `fetch(after_seq)` pages through (store *After reads
// with `page` rows a page), oldest first; only one page is held at a time.
template <typename Fetch, typename Each>
absl::Status ForEachPaged(int page, Fetch fetch, Each each) {
  for (int64_t after = 0;;) {
    auto rows = fetch(after);
    if (!rows.ok()) return rows.status();
    for (const auto& r : *rows) {
      each(r);
      after = r.seq;
    }
    if (rows->size() < static_cast<size_t>(page)) return absl::OkStatus();
  }
}

}  // namespace

absl::StatusOr<std::pair<std::string, int>> ParseProfileRef(const std::string& ref, const char* field) {
  const size_t at = ref.find('@');
  if (ref.empty()) return absl::InvalidArgumentError(absl::StrCat(field, ": missing profile name"));
  if (at == std::string::npos) return std::make_pair(ref, 0);
  int version = 0;
  if (!absl::SimpleAtoi(ref.substr(at + 1), &version) || version <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": \"", Abbreviated(ref), "\" is not NAME or NAME@VERSION (VERSION >= 1)"));
  }
  return std::make_pair(ref.substr(0, at), version);
}

namespace {
std::set<std::string> BuiltinNames() {
  std::set<std::string> out;
  for (const SystemProfile& p : BuiltinProfiles()) out.insert(p.name);
  return out;
}
}  // namespace

Backend::Backend(store::Store* store, Metrics* metrics, BackendOptions options)
    : store_(store), metrics_(metrics), options_(options), accuracy_(store, metrics), builtin_names_(BuiltinNames()) {}

Backend::~Backend() { Stop(); }

void Backend::Stop() {
  std::thread worker;
  {
    absl::MutexLock lock(&auto_mu_);
    stopping_ = true;
    auto_queue_.clear();
    auto_queued_.clear();
    worker = std::move(auto_thread_);
  }
  if (worker.joinable()) worker.join();
}

absl::Status Backend::Start() {
  for (const SystemProfile& p : BuiltinProfiles()) {
    absl::StatusOr<bool> seeded = store_->SeedProfile(p.name, Encode(adapter::ToProto(p)));
    if (!seeded.ok()) return seeded.status();
  }
  absl::StatusOr<std::vector<store::ProfileRow>> all = store_->ListLatestProfiles("", 1 << 30);
  if (!all.ok()) return all.status();
  for (const store::ProfileRow& r : *all) {
    if (absl::Status s = UpdateAccuracy(r.name, /*replay_histograms=*/true); !s.ok()) return s;
  }
  RefreshGauges();
  return absl::OkStatus();
}

absl::StatusOr<v1::SystemProfile> Backend::Load(const std::string& name, int version) {
  absl::StatusOr<store::ProfileRow> row = store_->GetProfile(name, version);
  if (!row.ok()) return row.status();
  return Decode(*row);
}

absl::StatusOr<SystemProfile> Backend::RequestProfile(const std::string& ref_text,
                                                      const v1::SystemProfile* override_profile, std::string* warning) {
  if (override_profile == nullptr) {
    absl::StatusOr<std::pair<std::string, int>> ref = ParseProfileRef(ref_text, "profile");
    if (!ref.ok()) return ref.status();
    absl::StatusOr<v1::SystemProfile> stored = Load(ref->first, ref->second);
    if (!stored.ok()) return stored.status();
    return adapter::FromProto(*stored);
  }
  v1::SystemProfile used = *override_profile;
  if (!ref_text.empty()) {
    absl::StatusOr<std::pair<std::string, int>> ref = ParseProfileRef(ref_text, "profile");
    if (!ref.ok()) return ref.status();
    if (used.name().empty()) used.set_name(ref->first);
    if (used.name() != ref->first) {
      return absl::InvalidArgumentError(absl::StrCat("profile_override.name: \"", Abbreviated(used.name()),
                                                     "\" is not the profile the request names (\"",
                                                     Abbreviated(ref->first), "\")"));
    }
    if (used.version() == 0) used.set_version(ref->second);
    if (ref->second != 0 && used.version() != ref->second) {
      return absl::InvalidArgumentError(absl::StrCat("profile_override.version: ", used.version(),
                                                     " is not the version the request names (", ref->second, ")"));
    }
  }
  if (used.name().empty()) {
    return absl::InvalidArgumentError(
        "profile_override.name: missing (name the stored profile it changes, here or in profile)");
  }
  if (absl::Status s = ValidateUserProfile(used); !s.ok()) {
    // The estimator's rules name fields "profile.X"; here they are the override's.
    std::string message(s.message());
    if (absl::StartsWith(message, "profile.")) message = absl::StrCat("profile_override.", message.substr(8));
    return absl::Status(s.code(), message);
  }
  absl::StatusOr<v1::SystemProfile> stored = Load(used.name(), used.version());
  if (stored.ok()) {
    used.set_version(stored->version());
    *warning = OverrideWarning(*stored, used);
  } else if (absl::IsNotFound(stored.status())) {
    used.set_version(0);
    *warning = UnstoredOverrideWarning(used);
  } else {
    return stored.status();
  }
  return adapter::FromProto(used);
}

absl::StatusOr<std::map<int, double>> Backend::CapacitiesOf(const std::string& name) {
  absl::StatusOr<std::vector<store::ProfileRow>> rows = store_->ListProfileVersions(name);
  if (!rows.ok()) return rows.status();
  std::map<int, double> out;
  for (const store::ProfileRow& r : *rows) {
    v1::SystemProfile p;
    if (p.ParseFromString(r.body)) out[r.version] = p.accelerator().memory_gib();
  }
  return out;
}

absl::StatusOr<v1::Workload> Backend::WorkloadOf(const v1::Workload* workload, const std::string& model) {
  if (workload != nullptr) return *workload;
  if (model.empty()) return absl::InvalidArgumentError("workload: missing (give workload or model)");
  std::optional<Workload> preset = FindModelPreset(model);
  if (!preset) {
    return absl::InvalidArgumentError(
        absl::StrCat("model: unknown preset \"", Abbreviated(model), "\" (see `paraplan models`)"));
  }
  return adapter::ToProto(*preset);
}

absl::StatusOr<v1::Workload> PresetWorkload(const std::string& model) {
  std::optional<Workload> preset = FindModelPreset(model);
  if (!preset) {
    std::vector<std::string> names;
    for (const Workload& w : ModelPresets()) names.push_back(w.name);
    return absl::InvalidArgumentError(absl::StrCat("model: unknown preset \"", Abbreviated(model),
                                                   "\"; presets: ", absl::StrJoin(names, ", ")));
  }
  return adapter::ToProto(*preset);
}

absl::StatusOr<v1::Estimate> Backend::Estimate(const v1::EstimateRequest& req) {
  absl::StatusOr<v1::Workload> wp = WorkloadOf(req.has_workload() ? &req.workload() : nullptr, req.model());
  if (!wp.ok()) return wp.status();
  if (!req.has_config()) return absl::InvalidArgumentError("config: missing");
  absl::StatusOr<Workload> w = adapter::FromProto(*wp);
  if (!w.ok()) return w.status();
  absl::StatusOr<ParallelConfig> c = adapter::FromProto(req.config());
  if (!c.ok()) return c.status();
  if (req.num_gpus() < 0) return absl::InvalidArgumentError("num_gpus: must not be negative");
  if (req.num_gpus() > 0) {
    if (absl::Status s = ValidateConfigForGpus(*w, *c, req.num_gpus()); !s.ok()) return s;
  }
  std::string warning;
  absl::StatusOr<SystemProfile> p =
      RequestProfile(req.profile(), req.has_profile_override() ? &req.profile_override() : nullptr, &warning);
  if (!p.ok()) return p.status();
  absl::StatusOr<paraplan::Estimate> e = EstimateIteration(*w, *c, *p);
  if (!e.ok()) return e.status();
  if (!warning.empty()) e->warnings.push_back(warning);
  return adapter::ToProto(*e);
}

absl::StatusOr<v1::PlanResponse> Backend::Plan(const v1::PlanRequest& req, absl::Time deadline,
                                               const std::atomic<bool>* cancelled) {
  absl::StatusOr<v1::Workload> wp = WorkloadOf(req.has_workload() ? &req.workload() : nullptr, req.model());
  if (!wp.ok()) return wp.status();
  absl::StatusOr<Workload> w = adapter::FromProto(*wp);
  if (!w.ok()) return w.status();
  absl::StatusOr<PlanRequest> pr = adapter::FromProto(req, *w);
  if (!pr.ok()) return pr.status();
  // A 100,000-layer graph takes a good part of a second to convert: check before searching.
  if (absl::Status s = Interrupt{deadline, cancelled}.Check("the plan"); !s.ok()) return s;
  std::string warning;
  absl::StatusOr<SystemProfile> p =
      RequestProfile(req.profile(), req.has_profile_override() ? &req.profile_override() : nullptr, &warning);
  if (!p.ok()) return p.status();
  pr->deadline = deadline;
  pr->cancelled = cancelled;
  pr->threads = options_.plan_threads;
  pr->max_candidates = options_.max_plan_candidates;
  absl::StatusOr<PlanResult> r = paraplan::Plan(*pr, *p);
  if (!r.ok()) return r.status();
  metrics_->RecordPlan(static_cast<double>(r->candidates_enumerated), static_cast<double>(r->candidates_feasible),
                       static_cast<double>(r->candidates_evaluated));
  v1::PlanResponse out;
  for (const paraplan::Estimate& e : r->plans) *out.add_plans() = adapter::ToProto(e);
  for (const paraplan::Estimate& e : r->pareto) *out.add_pareto() = adapter::ToProto(e);
  if (!warning.empty()) {
    for (v1::Estimate& e : *out.mutable_plans()) e.add_warnings(warning);
    for (v1::Estimate& e : *out.mutable_pareto()) e.add_warnings(warning);
  }
  out.set_candidates_enumerated(r->candidates_enumerated);
  out.set_candidates_feasible(r->candidates_feasible);
  out.set_candidates_evaluated(r->candidates_evaluated);
  out.set_search_time_s(r->search_time_s);
  out.set_truncated(r->truncated);
  out.set_infeasible_reason(r->infeasible_reason);
  return out;
}

v1::ListModelsResponse Backend::ListModels() const {
  v1::ListModelsResponse out;
  for (const Workload& w : ModelPresets()) *out.add_models() = adapter::ToProto(w);
  return out;
}

absl::StatusOr<v1::SystemProfile> Backend::CreateProfile(const v1::SystemProfile& profile) {
  return WriteProfile(profile, Existing::kMustNotExist);
}

absl::StatusOr<v1::SystemProfile> Backend::UpdateProfile(const v1::SystemProfile& profile, bool create_if_missing) {
  return WriteProfile(profile, create_if_missing ? Existing::kEither : Existing::kMustExist);
}

absl::StatusOr<v1::SystemProfile> Backend::WriteProfile(const v1::SystemProfile& profile, Existing existing,
                                                        const std::string& origin) {
  if (absl::Status s = ValidateUserProfile(profile); !s.ok()) return s;
  absl::StatusOr<int> version;
  {
    // The existence check and the write are one step for this process; a create is one
    // transaction in the store too (replicas sharing a database).
    absl::MutexLock lock(&profile_write_mu_);
    if (existing == Existing::kMustNotExist) {
      version = store_->CreateProfile(profile.name(), Encode(profile), origin);
    } else {
      absl::StatusOr<store::ProfileRow> row = store_->GetProfile(profile.name());
      if (!row.ok() && row.status().code() != absl::StatusCode::kNotFound) return row.status();
      if (existing == Existing::kMustExist && !row.ok()) return row.status();
      version = store_->PutProfileVersion(profile.name(), Encode(profile), origin);
    }
  }
  if (!version.ok()) return version.status();
  metrics_->SetProfileVersion(profile.name(), *version);
  return Load(profile.name(), *version);
}

absl::StatusOr<v1::SystemProfile> Backend::PromoteProfile(const std::string& ref) {
  absl::StatusOr<std::pair<std::string, int>> r = ParseProfileRef(ref, "name");
  if (!r.ok()) return r.status();
  if (r->second == 0) return absl::InvalidArgumentError("name: give NAME@VERSION, the version to make the default");
  if (absl::Status s = store_->PromoteProfileVersion(r->first, r->second); !s.ok()) return s;
  metrics_->SetProfileVersion(r->first, r->second);
  return Load(r->first, r->second);
}

absl::StatusOr<v1::SystemProfile> Backend::GetProfile(const std::string& ref) {
  absl::StatusOr<std::pair<std::string, int>> r = ParseProfileRef(ref, "name");
  if (!r.ok()) return r.status();
  return Load(r->first, r->second);
}

absl::StatusOr<v1::ListProfilesResponse> Backend::ListProfiles(int page_size, const std::string& token) {
  if (page_size < 0) return absl::InvalidArgumentError("page_size: must not be negative");
  const int size = page_size == 0 ? 50 : std::min(page_size, 1000);
  absl::StatusOr<std::vector<store::ProfileRow>> rows = store_->ListLatestProfiles(token, size + 1);
  if (!rows.ok()) return rows.status();
  v1::ListProfilesResponse out;
  for (int i = 0; i < static_cast<int>(rows->size()) && i < size; ++i) {
    absl::StatusOr<v1::SystemProfile> p = Decode((*rows)[i]);
    if (!p.ok()) return p.status();
    *out.add_profiles() = *p;
  }
  if (static_cast<int>(rows->size()) > size) out.set_next_page_token((*rows)[size - 1].name);
  return out;
}

absl::StatusOr<int> Backend::DeleteProfile(const std::string& name) {
  if (name.empty()) return absl::InvalidArgumentError("name: missing profile name");
  if (builtin_names_.contains(name)) {
    // Deleting a profile deletes its measurements too; the built-in ones are shared by
    // every user of the server. (An authorization layer may let admins do it.)
    return absl::FailedPreconditionError(absl::StrCat(
        "profile \"", name, "\" is built in and cannot be deleted (its measurements would go with it); "
        "write a new version with UpdateProfile instead"));
  }
  absl::StatusOr<int> deleted = store_->DeleteProfile(name);
  if (deleted.ok()) {
    accuracy_.Forget(name);
    metrics_->ForgetProfile(name);
    absl::MutexLock lock(&auto_mu_);
    auto_failed_at_.erase(name);
  }
  return deleted;
}

absl::StatusOr<v1::ListProfileVersionsResponse> Backend::ListProfileVersions(const std::string& name) {
  if (name.empty()) return absl::InvalidArgumentError("name: missing profile name");
  absl::StatusOr<std::vector<store::ProfileRow>> rows = store_->ListProfileVersions(name);
  if (!rows.ok()) return rows.status();
  v1::ListProfileVersionsResponse out;
  for (const store::ProfileRow& r : *rows) {
    absl::StatusOr<v1::SystemProfile> p = Decode(r);
    if (!p.ok()) return p.status();
    *out.add_versions() = *p;
  }
  return out;
}

std::string Backend::ProfileLabel(const std::string& name, std::map<std::string, bool>* known) {
  if (name.empty()) return kUnknownProfileLabel;
  auto it = known->find(name);
  if (it == known->end()) it = known->emplace(name, store_->GetProfile(name).ok()).first;
  return it->second ? name : kUnknownProfileLabel;
}

absl::StatusOr<v1::IngestMeasurementsResponse> Backend::Ingest(const v1::IngestMeasurementsRequest& req) {
  if (req.measurements_size() > options_.max_ingest) {
    return absl::InvalidArgumentError(absl::StrCat("measurements: at most ", options_.max_ingest, " per request"));
  }
  v1::IngestMeasurementsResponse out;
  std::map<std::string, bool> known;  // profile name -> stored (metrics labels)
  // Items that passed every check, written together at the end: all or none.
  struct Candidate {
    int index;
    store::MeasurementRow row;
    double capacity_gib;
  };
  std::vector<Candidate> candidates;
  std::set<std::string> ids;  // of the candidates: a later copy in the request is a duplicate
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
  for (int i = 0; i < req.measurements_size(); ++i) {
    // A measurement may name a preset (`model`) instead of inlining its workload: the
    // preset's workload is filled in before validation and stored with it.
    v1::Measurement filled;
    const bool from_preset = !req.measurements(i).has_workload() && !req.measurements(i).model().empty();
    if (from_preset) filled = req.measurements(i);
    const v1::Measurement& m = from_preset ? filled : req.measurements(i);
    v1::IngestResult* r = out.add_results();
    r->set_id(m.id());
    const std::string field = absl::StrCat("measurements[", i, "]");
    if (m.id().empty() || m.id().size() > 200) {
      r->set_id(Abbreviated(m.id()));  // not echoed whole: it may be megabytes
      reject(r, absl::StrCat(field, ".id: must be 1 to 200 characters"), "");
      continue;
    }
    absl::StatusOr<std::pair<std::string, int>> ref = ParseProfileRef(m.profile(), "profile");
    if (!ref.ok()) {
      reject(r, ref.status().message(), "");
      continue;
    }
    const std::string& profile = ref->first;
    if (absl::Status s = ValidateMeasured(m.iteration_time_s(), m.peak_memory_gib()); !s.ok()) {
      reject(r, s.message(), profile);
      continue;
    }
    absl::StatusOr<bool> dup = store_->HasMeasurement(m.id());
    if (!dup.ok()) return dup.status();  // nothing of this request is stored yet
    if (*dup || ids.contains(m.id())) {
      duplicate(r, profile);
      continue;
    }
    absl::StatusOr<v1::SystemProfile> pp = Load(profile, ref->second);
    if (!pp.ok()) {
      reject(r, pp.status().message(), profile);
      continue;
    }
    if (from_preset) {
      absl::StatusOr<v1::Workload> preset = PresetWorkload(m.model());
      if (!preset.ok()) {
        reject(r, preset.status().message(), profile);
        continue;
      }
      *filled.mutable_workload() = *std::move(preset);
    }
    absl::StatusOr<Workload> w = m.has_workload() ? adapter::FromProto(m.workload())
                                                  : absl::InvalidArgumentError("workload: missing (give workload or model)");
    absl::StatusOr<ParallelConfig> c = adapter::FromProto(m.config());
    absl::StatusOr<SystemProfile> p = adapter::FromProto(*pp);
    absl::Status bad = !w.ok() ? w.status() : !c.ok() ? c.status() : p.status();
    absl::StatusOr<paraplan::Estimate> e = bad.ok() ? EstimateIteration(*w, *c, *p) : bad;
    if (!e.ok()) {
      reject(r, e.status().message(), profile);
      continue;
    }
    if (e->num_gpus > p->NumGpus()) {
      reject(r, absl::StrCat("config: uses ", e->num_gpus, " GPUs; profile \"", profile, "\" has ", p->NumGpus()),
             profile);
      continue;
    }
    // A profile stored before validation bounded every value may still predict nonsense.
    if (!std::isfinite(e->iteration_time_s) || !std::isfinite(e->memory.total_bytes)) {
      reject(r, absl::StrCat("profile \"", profile, "\" version ", pp->version(),
                             " predicts a non-finite time or memory; fix the profile"),
             profile);
      continue;
    }
    Candidate cand{i, {}, p->accelerator.memory_gib};
    store::MeasurementRow& row = cand.row;
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
    ids.insert(row.id);
    candidates.push_back(std::move(cand));
  }

  std::vector<store::MeasurementRow> rows;
  rows.reserve(candidates.size());
  for (const Candidate& c : candidates) rows.push_back(c.row);
  // One transaction: on error nothing of this request is stored, and the error says so.
  absl::StatusOr<std::vector<absl::Status>> stored = store_->InsertMeasurements(rows);
  if (!stored.ok()) return stored.status();
  std::set<std::string> touched;
  for (size_t k = 0; k < candidates.size(); ++k) {
    const Candidate& c = candidates[k];
    const absl::Status& s = (*stored)[k];
    v1::IngestResult* r = out.mutable_results(c.index);
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
    touched.insert(profile);
  }
  // The measurements are stored: what follows only updates metrics and schedules work,
  // and its failures are logged, never returned (the answer must say what was stored).
  for (const std::string& profile : touched) {
    if (absl::Status s = UpdateAccuracy(profile, false); !s.ok()) {
      WriteLogLine(LogLevel::kWarn, absl::StrCat("event=update_accuracy profile=", LogQuote(profile),
                                                 " msg=", LogQuote(s.message())));
    }
    if (options_.auto_calibrate_after > 0 && AutoCalibrationDue(profile) && ScheduleAutoCalibration(profile)) {
      out.set_calibration_triggered(true);
    }
  }
  return out;
}

int Backend::AutoCalibrationThreshold(const std::string& profile) {
  auto it = auto_failed_at_.find(profile);
  if (it == auto_failed_at_.end()) return options_.auto_calibrate_after;
  return it->second + std::max(options_.auto_calibrate_after, it->second);  // doubles after each failure
}

bool Backend::AutoCalibrationDue(const std::string& profile) {
  absl::StatusOr<int> pending = store_->CountMeasurementsSinceCalibration(profile);
  if (!pending.ok()) return false;
  absl::MutexLock lock(&auto_mu_);
  return *pending >= AutoCalibrationThreshold(profile);
}

bool Backend::ScheduleAutoCalibration(const std::string& profile) {
  absl::MutexLock lock(&auto_mu_);
  if (stopping_) return false;
  if (auto_running_ == profile) {
    auto_again_ = true;  // the worker looks again when this one is done
    return false;
  }
  if (!auto_queued_.insert(profile).second) return false;
  auto_queue_.push_back(profile);
  if (!auto_thread_.joinable()) auto_thread_ = std::thread(&Backend::AutoCalibrationLoop, this);
  return true;
}

void Backend::AutoCalibrationLoop() {
  for (;;) {
    std::string profile;
    {
      absl::MutexLock lock(&auto_mu_);
      auto_mu_.Await(absl::Condition(this, &Backend::HasAutoWork));
      if (stopping_) return;
      profile = std::move(auto_queue_.front());
      auto_queue_.pop_front();
      auto_queued_.erase(profile);
      auto_running_ = profile;
      auto_again_ = false;
    }
    RunAutoCalibration(profile);
    absl::MutexLock lock(&auto_mu_);
    auto_running_.clear();
    if (auto_again_ && !stopping_ && auto_queued_.insert(profile).second) auto_queue_.push_back(profile);
  }
}

void Backend::RunAutoCalibration(const std::string& profile) {
  // One calibration of a profile at a time among every server on this store: replicas on
  // one PostgreSQL database all see the same measurements become due; the one that gets
  // the lock calibrates, the others leave it to that one.
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
  if (!pending.ok()) return;
  {
    absl::MutexLock lock(&auto_mu_);
    if (*pending < AutoCalibrationThreshold(profile)) return;
  }
  absl::StatusOr<v1::CalibrateResponse> c = Calibrate(profile);  // success clears auto_failed_at_
  if (c.ok()) return;
  {
    absl::MutexLock lock(&auto_mu_);
    // Not retried until the pending measurements have doubled (see backend.h).
    auto_failed_at_[profile] = *pending;
  }
  WriteLogLine(LogLevel::kWarn, absl::StrCat("event=auto_calibration profile=", LogQuote(profile),
                                             " code=", absl::StatusCodeToString(c.status().code()),
                                             " msg=", LogQuote(c.status().message())));
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

absl::StatusOr<v1::CalibrateResponse> Backend::Calibrate(const std::string& profile, bool dry_run,
                                                         const Interrupt& stop) {
  if (profile.empty()) return absl::InvalidArgumentError("profile: missing profile name");
  absl::StatusOr<v1::SystemProfile> base = Load(profile, 0);  // NOT_FOUND without waiting
  if (!base.ok()) return base.status();
  if (absl::Status s = BeginCalibration(profile, stop); !s.ok()) return s;
  absl::Cleanup end = [this, &profile] { EndCalibration(profile); };
  base = Load(profile, 0);  // the latest, now that no other calibration of it runs here
  if (!base.ok()) return base.status();
  absl::StatusOr<SystemProfile> sp = adapter::FromProto(*base);
  if (!sp.ok()) return sp.status();
  // The fit needs every measurement; they are read in pages, and only the samples kept.
  // Measurements stored while the fit runs are not in it: they still count toward the
  // next automatic calibration.
  std::vector<CalibrationSample> samples;
  int64_t fitted_through = 0;
  absl::Status read = ForEachPaged(
      kRowsPerPage,
      [&](int64_t after) -> absl::StatusOr<std::vector<store::MeasurementRow>> {
        if (absl::Status s = stop.Check("calibration"); !s.ok()) return s;
        return store_->MeasurementsAfter(profile, after, kRowsPerPage);
      },
      [&](const store::MeasurementRow& r) {
        fitted_through = r.seq;
        v1::Measurement m;
        if (!m.ParseFromString(r.body)) return;
        absl::StatusOr<Workload> w = adapter::FromProto(m.workload());
        absl::StatusOr<ParallelConfig> c = adapter::FromProto(m.config());
        if (!w.ok() || !c.ok()) return;
        samples.push_back({*w, *c, m.iteration_time_s(), m.peak_memory_gib(), m.out_of_memory()});
      });
  if (!read.ok()) return read;
  absl::StatusOr<CalibrationResult> result = CalibrateProfile(*sp, samples, stop);
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
  if (absl::Status s = ValidateUserProfile(next); !s.ok()) {  // never store what no estimate can use
    return absl::FailedPreconditionError(absl::StrCat("calibrating profile \"", profile, "\": ", s.message()));
  }
  const bool promote = result->report.promote;
  absl::StatusOr<int> version = store_->RecordCalibration(profile, Encode(next), base->version(),
                                                          result->report.num_measurements,
                                                          report.SerializeAsString(), promote, fitted_through);
  if (!version.ok()) return version.status();
  {
    absl::MutexLock auto_lock(&auto_mu_);
    auto_failed_at_.erase(profile);  // the next automatic one is due after N more again
  }
  metrics_->RecordCalibration(profile);
  if (promote) metrics_->SetProfileVersion(profile, *version);
  metrics_->SetCalibrationAge(profile, 0);
  absl::StatusOr<v1::SystemProfile> stored = Load(profile, *version);
  if (!stored.ok()) return stored.status();
  *out.mutable_profile() = *stored;
  out.set_stored(true);
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
