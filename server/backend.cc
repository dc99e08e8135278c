#include "server/backend.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

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
#include "server/backend_internal.h"
#include "server/log.h"
#include "server/profile_override.h"

namespace paraplan::server {

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

namespace {

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

// Validates a user-supplied profile with the estimator's rules.
absl::Status ValidateUserProfile(const v1::SystemProfile& p) {
  if (absl::Status s = CheckName(p.name(), "profile.name"); !s.ok()) return s;
  if (absl::Status s = CheckFiniteNumbers(p, "profile", "fit_report"); !s.ok()) return s;
  absl::StatusOr<SystemProfile> sp = adapter::FromProto(p);
  if (!sp.ok()) return sp.status();
  return ValidateProfile(*sp);
}

}  // namespace

// What is stored: the profile without server-assigned fields.
std::string Encode(v1::SystemProfile p) {
  p.clear_version();
  p.clear_created_at();
  p.clear_origin();
  p.clear_promoted();
  p.clear_is_default();
  return p.SerializeAsString();
}

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
    : store_(store),
      metrics_(metrics),
      options_(options),
      accuracy_(store, metrics),
      builtin_names_(BuiltinNames()),
      auto_calibrator_(options.auto_calibrate_after, [this](const std::string& p) { RunAutoCalibration(p); }),
      operations_(options.calibration_operations) {}

Backend::~Backend() { Stop(); }

void Backend::Stop() {
  auto_calibrator_.Stop();
  operations_.Stop();
}

absl::Status Backend::SeedBuiltinProfile(const SystemProfile& p) {
  const std::string body = Encode(adapter::ToProto(p));
  absl::StatusOr<bool> seeded = store_->SeedProfile(p.name, body);
  if (!seeded.ok() || *seeded) return seeded.status();
  // Every start but the first after an upgrade: the default is this release's built-in.
  absl::StatusOr<store::ProfileRow> current = store_->GetProfile(p.name);
  if (!current.ok()) return current.status();
  if (current->origin == "builtin" && current->body == body) return absl::OkStatus();
  // Stored before: by an older release where its latest version is a different built-in.
  // One replica at a time (the profile's calibration lock; one holding it is busy with the
  // profile, and the next start looks again).
  absl::StatusOr<std::unique_ptr<store::Lease>> lease = store_->LockCalibration(p.name, /*wait=*/false);
  if (!lease.ok()) return lease.status();
  if (*lease == nullptr) return absl::OkStatus();
  absl::StatusOr<std::vector<store::ProfileRow>> versions = store_->ListProfileVersions(p.name);
  if (!versions.ok()) return versions.status();
  const store::ProfileRow& latest = versions->back();
  if (latest.origin != "builtin" || latest.body == body) return absl::OkStatus();
  const bool builtin_default = std::any_of(versions->begin(), versions->end(), [](const store::ProfileRow& r) {
    return r.is_default && r.origin == "builtin";
  });
  absl::StatusOr<int> version = store_->PutProfileVersion(p.name, body, "builtin", /*promote=*/builtin_default);
  if (!version.ok()) return version.status();
  WriteLogLine(LogLevel::kWarn, absl::StrCat("event=builtin_profile profile=", LogQuote(p.name), " version=", *version,
                                             builtin_default ? " default=true" : " default=false candidate=true"));
  return absl::OkStatus();
}

absl::Status Backend::Start() {
  for (const SystemProfile& p : BuiltinProfiles()) {
    if (absl::Status s = SeedBuiltinProfile(p); !s.ok()) return s;
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

absl::StatusOr<Workload> Backend::WorkloadOf(const v1::Workload* workload, const std::string& model) {
  if (workload != nullptr) return adapter::FromProto(*workload);
  if (model.empty()) return absl::InvalidArgumentError("workload: missing (give workload or model)");
  std::optional<Workload> preset = FindModelPreset(model);
  if (!preset) {
    return absl::InvalidArgumentError(
        absl::StrCat("model: unknown preset \"", Abbreviated(model), "\" (see `paraplan models`)"));
  }
  return *std::move(preset);
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
  absl::StatusOr<Workload> w = WorkloadOf(req.has_workload() ? &req.workload() : nullptr, req.model());
  if (!w.ok()) return w.status();
  if (!req.has_config()) return absl::InvalidArgumentError("config: missing");
  absl::StatusOr<ParallelConfig> c = adapter::FromProto(req.config());
  if (!c.ok()) return c.status();
  absl::StatusOr<Framework> framework = adapter::FrameworkFromProto(req.framework());
  if (!framework.ok()) return framework.status();
  if (absl::Status s = ValidateFramework(*framework, *c); !s.ok()) return s;
  c->framework = *framework;  // its implementation's costs, where frameworks differ
  if (req.num_gpus() < 0) return absl::InvalidArgumentError("num_gpus: must not be negative");
  if (req.num_gpus() > 0) {
    if (absl::Status s = ValidateConfigForGpus(*w, *c, req.num_gpus()); !s.ok()) return s;
  }
  absl::StatusOr<ProfiledEstimate> e = EstimateOnRequestProfile(
      req.profile(), req.has_profile_override() ? &req.profile_override() : nullptr, *w, *c);
  if (!e.ok()) return e.status();
  return adapter::ToProto(e->estimate);
}

absl::StatusOr<Backend::ProfiledEstimate> Backend::EstimateOnRequestProfile(const std::string& ref,
                                                                            const v1::SystemProfile* override_profile,
                                                                            const Workload& w,
                                                                            const ParallelConfig& c) {
  std::string warning;
  absl::StatusOr<SystemProfile> p = RequestProfile(ref, override_profile, &warning);
  if (!p.ok()) return p.status();
  absl::StatusOr<paraplan::Estimate> e = EstimateIteration(w, c, *p);
  if (!e.ok()) return e.status();
  if (!warning.empty()) e->warnings.push_back(warning);
  return ProfiledEstimate{*std::move(p), *std::move(e)};
}

absl::StatusOr<v1::PlanResponse> Backend::Plan(const v1::PlanRequest& req, absl::Time deadline,
                                               const std::atomic<bool>* cancelled) {
  absl::StatusOr<Workload> w = WorkloadOf(req.has_workload() ? &req.workload() : nullptr, req.model());
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

absl::StatusOr<v1::SystemProfile> Backend::CheckProfile(const v1::SystemProfile& profile) const {
  if (absl::Status s = ValidateUserProfile(profile); !s.ok()) return s;
  return profile;
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
    auto_calibrator_.Reset(name);
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


}  // namespace paraplan::server
