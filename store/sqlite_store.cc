#include "store/sqlite_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "store/messages.h"
#include "store/sqlite_schema.h"
#include "store/sqlite_util.h"

namespace paraplan::store {

namespace {

int64_t NowMs() { return absl::ToUnixMillis(absl::Now()); }

}  // namespace

struct SqliteStore::Impl {
  Database db;
  absl::Mutex mu;
  // Reads run on connections of their own where the database is a file (WAL): a read
  // sees the last commit and never waits for a writer's transaction. There are
  // kReaders, so that an estimate's profile read does not wait behind a calibration's
  // page of 512 measurements either. In memory (tests) they share the writer's connection.
  static constexpr int kReaders = 4;
  Database readers[kReaders];
  absl::Mutex read_mu[kReaders];
  bool has_reader = false;

  // The first (ratio, seq) row of a ratio query: ?1 profile, ?2 through_seq, then ?3 ?4
  // = `key` or ?3 = `offset` when key is null. Caller holds mu.
  static absl::StatusOr<std::optional<RatioKey>> RatioQuery(Database& on, const char* sql,
                                                            absl::string_view profile_name, int64_t through_seq,
                                                            const RatioKey* key, int64_t offset = 0);

  // Latest version of `name`, 0 when the profile does not exist. Caller holds mu.
  absl::StatusOr<int> LatestVersion(absl::string_view name) { return LatestVersionOn(db, name); }
  static absl::StatusOr<int> LatestVersionOn(Database& on, absl::string_view name) {
    absl::StatusOr<Statement> s = on.Prepare("SELECT MAX(version) FROM profile_versions WHERE name = ?");
    if (!s.ok()) return s.status();
    s->BindText(1, name);
    absl::StatusOr<bool> row = s->Step();
    if (!row.ok()) return row.status();
    return *row ? static_cast<int>(s->ColumnInt(0)) : 0;
  }

  // NOT_FOUND unless `name` has at least one version. Caller holds mu.
  absl::Status RequireProfile(absl::string_view name) {
    absl::StatusOr<int> latest = LatestVersion(name);
    if (!latest.ok()) return latest.status();
    return *latest == 0 ? ProfileNotFound(name) : absl::OkStatus();
  }

  // The promoted_at_ms that makes a version of `name` its default now: max(now, the
  // name's greatest promoted_at_ms + 1), so a promotion wins even if the clock has not
  // advanced (or went back) since the last one. Caller holds mu.
  absl::StatusOr<int64_t> NextPromotionMs(absl::string_view name) {
    absl::StatusOr<Statement> s =
        db.Prepare("SELECT COALESCE(MAX(promoted_at_ms), 0) FROM profile_versions WHERE name = ?");
    if (!s.ok()) return s.status();
    s->BindText(1, name);
    absl::StatusOr<bool> row = s->Step();
    if (!row.ok()) return row.status();
    const int64_t max_promoted = *row ? s->ColumnInt(0) : 0;
    return std::max(NowMs(), max_promoted + 1);
  }

  absl::StatusOr<int> InsertVersion(absl::string_view name, absl::string_view body,
                                    absl::string_view origin, bool promote) {
    absl::StatusOr<int> latest = LatestVersion(name);
    if (!latest.ok()) return latest.status();
    if (*latest == 0) {
      if (absl::Status s = db.Exec("INSERT OR IGNORE INTO profiles(name) VALUES (?)", {name});
          !s.ok()) {
        return s;
      }
    }
    std::optional<int64_t> promoted_at;
    if (promote) {
      absl::StatusOr<int64_t> next = NextPromotionMs(name);
      if (!next.ok()) return next.status();
      promoted_at = *next;
    }
    absl::StatusOr<Statement> s = db.Prepare(
        "INSERT INTO profile_versions(name, version, created_at_ms, origin, body, promoted_at_ms) "
        "VALUES (?, ?, ?, ?, ?, ?)");
    if (!s.ok()) return s.status();
    s->BindText(1, name);
    s->BindInt(2, *latest + 1);
    s->BindInt(3, NowMs());
    s->BindText(4, origin);
    s->BindBlob(5, body);
    if (promoted_at.has_value()) {
      s->BindInt(6, *promoted_at);
    } else {
      s->BindNull(6);
    }
    if (absl::Status st = s->Run(); !st.ok()) return st;
    return *latest + 1;
  }
};

namespace {

// One read: the reader connection and its lock where there is one, else the writer's.
// (A template so that it needs no access to the private SqliteStore::Impl's name.)
template <typename Impl>
class ReadLock {
 public:
  // A free reader connection, else (all busy) the one the thread's id picks, waited for.
  explicit ReadLock(Impl& impl) : mu_(&impl.mu), db_(&impl.db) {
    if (impl.has_reader) {
      int pick = static_cast<int>(std::hash<std::thread::id>()(std::this_thread::get_id()) % Impl::kReaders);
      for (int i = 0; i < Impl::kReaders; ++i) {
        if (impl.read_mu[i].TryLock()) {
          mu_ = &impl.read_mu[i];
          db_ = &impl.readers[i];
          return;
        }
      }
      mu_ = &impl.read_mu[pick];
      db_ = &impl.readers[pick];
    }
    mu_->Lock();
  }
  ~ReadLock() { mu_->Unlock(); }
  ReadLock(const ReadLock&) = delete;
  ReadLock& operator=(const ReadLock&) = delete;
  Database& db() { return *db_; }

 private:
  absl::Mutex* mu_;
  Database* db_;
};

}  // namespace

SqliteStore::SqliteStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SqliteStore::~SqliteStore() = default;

absl::StatusOr<std::unique_ptr<Store>> SqliteStore::Open(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  if (absl::Status s = impl->db.Open(path); !s.ok()) return s;
  if (absl::Status s = MigrateSqlite(impl->db, path); !s.ok()) return s;
  if (!path.empty() && path != ":memory:" && !absl::StartsWith(path, "file:")) {
    for (Database& reader : impl->readers) {
      if (absl::Status s = reader.Open(path); !s.ok()) return s;
    }
    impl->has_reader = true;
  }
  return std::unique_ptr<Store>(new SqliteStore(std::move(impl)));
}

absl::StatusOr<int> SqliteStore::PutProfileVersion(absl::string_view name, absl::string_view body,
                                             absl::string_view origin, bool promote) {
  if (name.empty()) return absl::InvalidArgumentError("profile name must not be empty");
  absl::MutexLock lock(&impl_->mu);
  Transaction tx(&impl_->db);
  if (absl::Status s = tx.Begin(); !s.ok()) return s;
  absl::StatusOr<int> v = impl_->InsertVersion(name, body, origin, promote);
  if (!v.ok()) return v.status();
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  return v;
}

absl::StatusOr<int> SqliteStore::CreateProfile(absl::string_view name, absl::string_view body,
                                               absl::string_view origin) {
  if (name.empty()) return absl::InvalidArgumentError("profile name must not be empty");
  absl::MutexLock lock(&impl_->mu);
  Transaction tx(&impl_->db);
  if (absl::Status s = tx.Begin(); !s.ok()) return s;
  absl::StatusOr<int> latest = impl_->LatestVersion(name);
  if (!latest.ok()) return latest.status();
  if (*latest > 0) return ProfileExists(name);
  absl::StatusOr<int> v = impl_->InsertVersion(name, body, origin, /*promote=*/true);
  if (!v.ok()) return v.status();
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  return v;
}

absl::StatusOr<ProfileRow> SqliteStore::GetProfile(absl::string_view name, int version) {
  ReadLock read(*impl_);
  absl::StatusOr<Statement> s = read.db().Prepare(
      version > 0 ? absl::StrCat("SELECT ", kProfileColumns,
                                 " FROM profile_versions v WHERE v.name = ?1 AND v.version = ?2")
                  : absl::StrCat("SELECT ", kDefaultProfileColumns, " FROM profile_versions v WHERE v.name = ?1 ",
                                 "AND v.version = ", kDefaultVersionOfName1));
  if (!s.ok()) return s.status();
  s->BindText(1, name);
  if (version > 0) s->BindInt(2, version);
  absl::StatusOr<bool> row = s->Step();
  if (!row.ok()) return row.status();
  if (!*row) {
    if (version > 0) {
      absl::StatusOr<int> latest = Impl::LatestVersionOn(read.db(), name);
      if (latest.ok() && *latest > 0) {
        return VersionNotFound(name, version, *latest);
      }
    }
    return ProfileNotFound(name);
  }
  return ReadProfile(*s);
}

absl::StatusOr<std::vector<ProfileRow>> SqliteStore::ListLatestProfiles(absl::string_view after_name, int limit) {
  ReadLock read(*impl_);
  absl::StatusOr<Statement> s = read.db().Prepare(absl::StrCat(
      "SELECT ", kDefaultProfileColumns, " FROM profiles p JOIN profile_versions v ON v.name = p.name ",
      "AND v.version = ", kDefaultVersionOfP, " WHERE p.name > ? ORDER BY p.name LIMIT ?"));
  if (!s.ok()) return s.status();
  s->BindText(1, after_name);
  s->BindInt(2, limit);
  return AllRows(*s, ReadProfile);
}

absl::StatusOr<std::vector<ProfileRow>> SqliteStore::ListProfileVersions(absl::string_view name) {
  ReadLock read(*impl_);
  absl::StatusOr<Statement> s = read.db().Prepare(
      absl::StrCat("SELECT ", kProfileColumns, " FROM profile_versions v WHERE v.name = ?1 ORDER BY v.version"));
  if (!s.ok()) return s.status();
  s->BindText(1, name);
  absl::StatusOr<std::vector<ProfileRow>> out = AllRows(*s, ReadProfile);
  if (out.ok() && out->empty()) return ProfileNotFound(name);
  return out;
}

absl::Status SqliteStore::PromoteProfileVersion(absl::string_view name, int version) {
  absl::MutexLock lock(&impl_->mu);
  Transaction tx(&impl_->db);
  if (absl::Status s = tx.Begin(); !s.ok()) return s;
  absl::StatusOr<Statement> exists =
      impl_->db.Prepare("SELECT 1 FROM profile_versions WHERE name = ? AND version = ?");
  if (!exists.ok()) return exists.status();
  exists->BindText(1, name);
  exists->BindInt(2, version);
  absl::StatusOr<bool> row = exists->Step();
  if (!row.ok()) return row.status();
  if (!*row) {
    return VersionNotFound(name, version, 0);
  }
  absl::StatusOr<int64_t> at = impl_->NextPromotionMs(name);
  if (!at.ok()) return at.status();
  absl::StatusOr<Statement> s =
      impl_->db.Prepare("UPDATE profile_versions SET promoted_at_ms = ? WHERE name = ? AND version = ?");
  if (!s.ok()) return s.status();
  s->BindInt(1, *at);
  s->BindText(2, name);
  s->BindInt(3, version);
  if (absl::Status st = s->Run(); !st.ok()) return st;
  return tx.Commit();
}

absl::StatusOr<int> SqliteStore::DeleteProfile(absl::string_view name) {
  absl::MutexLock lock(&impl_->mu);
  Transaction tx(&impl_->db);
  if (absl::Status s = tx.Begin(); !s.ok()) return s;
  if (absl::Status st = impl_->RequireProfile(name); !st.ok()) return st;
  absl::StatusOr<int64_t> count = impl_->db.QueryInt("SELECT COUNT(*) FROM profile_versions WHERE name = ?", {name});
  if (!count.ok()) return count.status();
  if (absl::Status s = impl_->db.Exec("DELETE FROM profiles WHERE name = ?", {name}); !s.ok()) {
    return s;
  }
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  return static_cast<int>(*count);
}

absl::StatusOr<std::vector<absl::Status>> SqliteStore::InsertMeasurements(const std::vector<MeasurementRow>& rows) {
  absl::MutexLock lock(&impl_->mu);
  Transaction tx(&impl_->db);
  if (absl::Status s = tx.Begin(); !s.ok()) return s;
  absl::StatusOr<Statement> exists = impl_->db.Prepare("SELECT 1 FROM measurements WHERE id = ?");
  if (!exists.ok()) return exists.status();
  absl::StatusOr<Statement> insert = impl_->db.Prepare(
      "INSERT INTO measurements(id, profile_name, profile_version, iteration_time_s, "
      "predicted_iteration_time_s, peak_memory_gib, predicted_memory_gib, predicted_fits, "
      "out_of_memory, observed_at_ms, ingested_at_ms, body) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
  if (!insert.ok()) return insert.status();
  const int64_t now_ms = NowMs();
  std::vector<absl::Status> out;
  out.reserve(rows.size());
  for (const MeasurementRow& r : rows) {
    if (r.id.empty()) {
      out.push_back(absl::InvalidArgumentError("measurement id must not be empty"));
      continue;
    }
    if (absl::Status st = impl_->RequireProfile(r.profile_name); !st.ok()) {
      if (st.code() != absl::StatusCode::kNotFound) return st;
      out.push_back(st);
      continue;
    }
    exists->Reset();
    exists->BindText(1, r.id);
    absl::StatusOr<bool> found = exists->Step();
    if (!found.ok()) return found.status();
    if (*found) {
      out.push_back(MeasurementExists(r.id));
      continue;
    }
    insert->Reset();
    insert->BindText(1, r.id);
    insert->BindText(2, r.profile_name);
    insert->BindInt(3, r.profile_version);
    insert->BindDouble(4, r.iteration_time_s);
    insert->BindDouble(5, r.predicted_iteration_time_s);
    insert->BindDouble(6, r.peak_memory_gib);
    insert->BindDouble(7, r.predicted_memory_gib);
    insert->BindInt(8, r.predicted_fits ? 1 : 0);
    insert->BindInt(9, r.out_of_memory ? 1 : 0);
    insert->BindInt(10, r.observed_at_unix_ms);
    insert->BindInt(11, r.ingested_at_unix_ms > 0 ? r.ingested_at_unix_ms : now_ms);
    insert->BindBlob(12, r.body);
    // Any other failure (a constraint, I/O) returns here: the transaction rolls back and
    // no row of the batch is stored.
    if (absl::Status st = insert->Run(); !st.ok()) return st;
    out.push_back(absl::OkStatus());
  }
  if (absl::Status s = tx.Commit(); !s.ok()) return s;
  return out;
}

absl::StatusOr<bool> SqliteStore::HasMeasurement(absl::string_view id) {
  ReadLock read(*impl_);
  absl::StatusOr<int64_t> n = read.db().QueryInt("SELECT COUNT(*) FROM measurements WHERE id = ?", {id});
  if (!n.ok()) return n.status();
  return *n > 0;
}

absl::StatusOr<std::vector<MeasurementRow>> SqliteStore::ListMeasurements(absl::string_view profile_name, int limit) {
  ReadLock read(*impl_);
  absl::StatusOr<Statement> s = read.db().Prepare(absl::StrCat(
      "SELECT ", kMeasurementColumns, " FROM measurements WHERE profile_name = ? ORDER BY seq LIMIT ?"));
  if (!s.ok()) return s.status();
  s->BindText(1, profile_name);
  s->BindInt(2, limit > 0 ? limit : -1);
  return AllRows(*s, ReadMeasurement);
}

absl::StatusOr<std::vector<MeasurementRow>> SqliteStore::RecentMeasurements(absl::string_view profile_name, int n) {
  ReadLock read(*impl_);
  absl::StatusOr<Statement> s = read.db().Prepare(absl::StrCat(
      "SELECT * FROM (SELECT ", kMeasurementColumns,
      " FROM measurements WHERE profile_name = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq"));
  if (!s.ok()) return s.status();
  s->BindText(1, profile_name);
  s->BindInt(2, n);
  return AllRows(*s, ReadMeasurement);
}

absl::StatusOr<std::vector<MeasurementRow>> SqliteStore::MeasurementsAfter(absl::string_view profile_name,
                                                                     int64_t after_seq, int limit) {
  ReadLock read(*impl_);
  absl::StatusOr<Statement> s = read.db().Prepare(absl::StrCat(
      "SELECT ", kMeasurementColumns, " FROM measurements WHERE profile_name = ? AND seq > ? ORDER BY seq LIMIT ?"));
  if (!s.ok()) return s.status();
  s->BindText(1, profile_name);
  s->BindInt(2, after_seq);
  s->BindInt(3, std::max(limit, 1));
  return AllRows(*s, ReadMeasurement);
}

absl::StatusOr<std::vector<MeasurementSummary>> SqliteStore::MeasurementSummariesAfter(absl::string_view profile_name,
                                                                                 int64_t after_seq, int limit) {
  ReadLock read(*impl_);
  absl::StatusOr<Statement> s = read.db().Prepare(absl::StrCat(
      "SELECT ", kSummaryColumns, " FROM measurements WHERE profile_name = ? AND seq > ? ORDER BY seq LIMIT ?"));
  if (!s.ok()) return s.status();
  s->BindText(1, profile_name);
  s->BindInt(2, after_seq);
  s->BindInt(3, std::max(limit, 1));
  return AllRows(*s, ReadSummary);
}

absl::StatusOr<std::optional<RatioKey>> SqliteStore::Impl::RatioQuery(Database& on, const char* sql,
                                                                absl::string_view profile_name, int64_t through_seq,
                                                                const RatioKey* key, int64_t offset) {
  absl::StatusOr<Statement> s = on.Prepare(sql);
  if (!s.ok()) return s.status();
  s->BindText(1, profile_name);
  s->BindInt(2, through_seq);
  if (key != nullptr) {
    s->BindDouble(3, key->ratio);
    s->BindInt(4, key->seq);
  } else {
    s->BindInt(3, offset);
  }
  absl::StatusOr<bool> row = s->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<RatioKey>();
  return std::optional<RatioKey>(RatioKey{s->ColumnDouble(0), s->ColumnInt(1)});
}

absl::StatusOr<std::optional<RatioKey>> SqliteStore::RatioAtRank(absl::string_view profile_name, int64_t rank,
                                                           int64_t through_seq) {
  if (rank < 0) return std::optional<RatioKey>();
  ReadLock read(*impl_);
  return Impl::RatioQuery(read.db(), kRatioAtRank, profile_name, through_seq, nullptr, rank);
}

absl::StatusOr<std::optional<RatioKey>> SqliteStore::NextRatio(absl::string_view profile_name, const RatioKey& key,
                                                         int64_t through_seq) {
  ReadLock read(*impl_);
  absl::StatusOr<std::optional<RatioKey>> same = Impl::RatioQuery(read.db(), kNextSameRatio, profile_name, through_seq, &key);
  if (!same.ok() || same->has_value()) return same;
  return Impl::RatioQuery(read.db(), kNextRatio, profile_name, through_seq, &key);
}

absl::StatusOr<std::optional<RatioKey>> SqliteStore::PreviousRatio(absl::string_view profile_name, const RatioKey& key,
                                                             int64_t through_seq) {
  ReadLock read(*impl_);
  absl::StatusOr<std::optional<RatioKey>> same =
      Impl::RatioQuery(read.db(), kPreviousSameRatio, profile_name, through_seq, &key);
  if (!same.ok() || same->has_value()) return same;
  return Impl::RatioQuery(read.db(), kPreviousRatio, profile_name, through_seq, &key);
}

absl::StatusOr<int> SqliteStore::CountMeasurementsSinceCalibration(absl::string_view profile_name, int64_t limit) {
  ReadLock read(*impl_);
  absl::StatusOr<Statement> s = read.db().Prepare(
      "SELECT COUNT(*) FROM (SELECT 1 FROM measurements WHERE profile_name = ?1 AND seq > "
      "COALESCE((SELECT MAX(last_measurement_seq) FROM calibration_runs WHERE profile_name = ?1), 0) LIMIT ?2)");
  if (!s.ok()) return s.status();
  s->BindText(1, profile_name);
  s->BindInt(2, limit > 0 ? limit : -1);  // SQLite: a negative LIMIT is none
  absl::StatusOr<bool> row = s->Step();
  if (!row.ok()) return row.status();
  return *row ? static_cast<int>(s->ColumnInt(0)) : 0;
}

absl::StatusOr<int> SqliteStore::RecordCalibration(absl::string_view name, absl::string_view body, int from_version,
                                             int num_measurements, absl::string_view report, bool promote,
                                             int64_t last_measurement_seq) {
  absl::MutexLock lock(&impl_->mu);
  Transaction tx(&impl_->db);
  if (absl::Status s = tx.Begin(); !s.ok()) return s;
  if (absl::Status st = impl_->RequireProfile(name); !st.ok()) return st;
  absl::StatusOr<int> v = impl_->InsertVersion(name, body, "calibration", promote);
  if (!v.ok()) return v.status();
  absl::StatusOr<int64_t> last_seq =
      last_measurement_seq > 0
          ? absl::StatusOr<int64_t>(last_measurement_seq)
          : impl_->db.QueryInt("SELECT COALESCE(MAX(seq), 0) FROM measurements WHERE profile_name = ?", {name});
  if (!last_seq.ok()) return last_seq.status();
  absl::StatusOr<Statement> s = impl_->db.Prepare(
      "INSERT INTO calibration_runs(profile_name, from_version, to_version, created_at_ms, num_measurements, "
      "last_measurement_seq, report) VALUES (?,?,?,?,?,?,?)");
  if (!s.ok()) return s.status();
  s->BindText(1, name);
  s->BindInt(2, from_version);
  s->BindInt(3, *v);
  s->BindInt(4, NowMs());
  s->BindInt(5, num_measurements);
  s->BindInt(6, *last_seq);
  s->BindBlob(7, report);
  if (absl::Status st = s->Run(); !st.ok()) return st;
  if (absl::Status st = tx.Commit(); !st.ok()) return st;
  return v;
}

absl::StatusOr<std::optional<CalibrationRunRow>> SqliteStore::LastCalibration(absl::string_view name) {
  ReadLock read(*impl_);
  absl::StatusOr<Statement> s = read.db().Prepare(
      "SELECT profile_name, from_version, to_version, created_at_ms, num_measurements, report "
      "FROM calibration_runs WHERE profile_name = ? ORDER BY id DESC LIMIT 1");
  if (!s.ok()) return s.status();
  s->BindText(1, name);
  absl::StatusOr<bool> row = s->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<CalibrationRunRow>();
  CalibrationRunRow r;
  r.profile_name = s->ColumnText(0);
  r.from_version = static_cast<int>(s->ColumnInt(1));
  r.to_version = static_cast<int>(s->ColumnInt(2));
  r.created_at_unix_ms = s->ColumnInt(3);
  r.num_measurements = static_cast<int>(s->ColumnInt(4));
  r.report = s->ColumnText(5);
  return std::optional<CalibrationRunRow>(r);
}

absl::StatusOr<std::unique_ptr<Lease>> SqliteStore::LockCalibration(absl::string_view name, bool wait) {
  return calibration_locks_.Acquire(name, wait);
}

absl::Status SqliteStore::CheckIntegrity() {
  absl::MutexLock lock(&impl_->mu);
  absl::StatusOr<Statement> s = impl_->db.Prepare("PRAGMA integrity_check");
  if (!s.ok()) return s.status();
  absl::StatusOr<bool> row = s->Step();
  if (!row.ok()) return row.status();
  const std::string result = *row ? s->ColumnText(0) : "";
  if (result != "ok") return absl::DataLossError(absl::StrCat("integrity_check: ", result));
  return absl::OkStatus();
}

}  // namespace paraplan::store
