#include "store/postgres_store.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "store/messages.h"
#include "store/postgres_conn.h"
#include "store/postgres_schema.h"

namespace paraplan::store {

namespace {

using pg::Bytes;
using pg::BytesOf;

// The database's clock in Unix milliseconds: one clock for every replica.
#define PARAPLAN_PG_NOW_MS "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint"
// A TIMED measurement and its ratio, spelled exactly as the index measurements_by_ratio
// (postgres_schema.cc) spells them, so that the planner matches the queries to it.
#define PARAPLAN_PG_TIMED "NOT out_of_memory AND predicted_iteration_time_s > 0 AND iteration_time_s > 0"
#define PARAPLAN_PG_RATIO "predicted_iteration_time_s / NULLIF(iteration_time_s, 0)"
// Order of profile_versions rows (alias t) of one name that puts the default first:
// promoted before candidates, latest promotion first, ties (and all-candidates) by the
// higher version. Index profile_versions_default (postgres_schema.cc, migration 4) is in
// this order: keep the two alike.
#define PARAPLAN_PG_DEFAULT_ORDER(t) \
  t ".promoted_at_ms IS NULL, " t ".promoted_at_ms DESC NULLS LAST, " t ".version DESC"
// Columns read by ReadProfile, from profile_versions aliased v; IS_DEFAULT is the last.
#define PARAPLAN_PG_PROFILE_COLUMNS(IS_DEFAULT)                                                  \
  "v.name, v.version, v.created_at_ms, v.origin, v.body, v.promoted_at_ms IS NOT NULL, "         \
  "COALESCE(v.promoted_at_ms, 0), " IS_DEFAULT
#define PARAPLAN_PG_IS_DEFAULT                                                                   \
  "v.version = (SELECT d.version FROM profile_versions d WHERE d.name = v.name ORDER BY "       \
  PARAPLAN_PG_DEFAULT_ORDER("d") " LIMIT 1)"
#define PARAPLAN_PG_MEASUREMENT_COLUMNS                                                          \
  "id, profile_name, profile_version, iteration_time_s, predicted_iteration_time_s, "           \
  "peak_memory_gib, predicted_memory_gib, predicted_fits, out_of_memory, observed_at_ms, "       \
  "ingested_at_ms, body, seq"
#define PARAPLAN_PG_SUMMARY_COLUMNS                                                              \
  "seq, profile_version, iteration_time_s, predicted_iteration_time_s, peak_memory_gib, "        \
  "predicted_fits, out_of_memory, (" PARAPLAN_PG_TIMED "), CASE WHEN " PARAPLAN_PG_TIMED        \
  " THEN " PARAPLAN_PG_RATIO " ELSE 0 END"
// Timed measurements of profile $1 with seq <= $2, as (ratio, seq).
#define PARAPLAN_PG_RATIO_FROM                                                                   \
  "SELECT " PARAPLAN_PG_RATIO ", seq FROM measurements WHERE profile_name = $1 AND "            \
  PARAPLAN_PG_TIMED " AND seq <= $2::bigint"

// Every statement, prepared on each pooled connection.
const std::vector<pg::Prepared>& Statements() {
  static const std::vector<pg::Prepared> kStatements = {
      {"lock_profile", "SELECT pg_advisory_xact_lock($1::int4, $2::int4)"},
      {"latest",
       "SELECT COALESCE(MAX(version), 0), COALESCE(MAX(promoted_at_ms), 0), " PARAPLAN_PG_NOW_MS
       " FROM profile_versions WHERE name = $1"},
      {"insert_profile", "INSERT INTO profiles(name) VALUES ($1) ON CONFLICT DO NOTHING"},
      {"insert_version",
       "INSERT INTO profile_versions(name, version, created_at_ms, origin, body, promoted_at_ms) "
       "VALUES ($1, $2, $3, $4, $5, $6)"},
      {"get_version", "SELECT " PARAPLAN_PG_PROFILE_COLUMNS(PARAPLAN_PG_IS_DEFAULT)
                      " FROM profile_versions v WHERE v.name = $1 AND v.version = $2"},
      {"get_default", "SELECT " PARAPLAN_PG_PROFILE_COLUMNS("TRUE")
                      " FROM profile_versions v WHERE v.name = $1 ORDER BY " PARAPLAN_PG_DEFAULT_ORDER("v")
                      " LIMIT 1"},
      {"list_defaults", "SELECT DISTINCT ON (v.name) " PARAPLAN_PG_PROFILE_COLUMNS("TRUE")
                        " FROM profile_versions v WHERE v.name > $1 ORDER BY v.name, "
                        PARAPLAN_PG_DEFAULT_ORDER("v") " LIMIT $2"},
      {"list_versions", "SELECT " PARAPLAN_PG_PROFILE_COLUMNS(PARAPLAN_PG_IS_DEFAULT)
                        " FROM profile_versions v WHERE v.name = $1 ORDER BY v.version"},
      {"promote", "UPDATE profile_versions SET promoted_at_ms = $3 WHERE name = $1 AND version = $2"},
      {"count_versions", "SELECT COUNT(*) FROM profile_versions WHERE name = $1"},
      {"delete_profile", "DELETE FROM profiles WHERE name = $1"},
      {"insert_measurement",
       "INSERT INTO measurements(id, profile_name, profile_version, iteration_time_s, "
       "predicted_iteration_time_s, peak_memory_gib, predicted_memory_gib, predicted_fits, out_of_memory, "
       "observed_at_ms, ingested_at_ms, body) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, "
       "COALESCE(NULLIF($11::bigint, 0), " PARAPLAN_PG_NOW_MS "), $12) ON CONFLICT (id) DO NOTHING RETURNING seq"},
      {"has_measurement", "SELECT 1 FROM measurements WHERE id = $1"},
      {"list_measurements", "SELECT " PARAPLAN_PG_MEASUREMENT_COLUMNS
                            " FROM measurements WHERE profile_name = $1 ORDER BY seq LIMIT $2"},
      {"recent_measurements", "SELECT * FROM (SELECT " PARAPLAN_PG_MEASUREMENT_COLUMNS
                              " FROM measurements WHERE profile_name = $1 ORDER BY seq DESC LIMIT $2) t "
                              "ORDER BY seq"},
      {"measurements_after", "SELECT " PARAPLAN_PG_MEASUREMENT_COLUMNS
                             " FROM measurements WHERE profile_name = $1 AND seq > $2 ORDER BY seq LIMIT $3"},
      {"summaries_after", "SELECT " PARAPLAN_PG_SUMMARY_COLUMNS
                          " FROM measurements WHERE profile_name = $1 AND seq > $2 ORDER BY seq LIMIT $3"},
      {"ratio_at_rank", PARAPLAN_PG_RATIO_FROM " ORDER BY " PARAPLAN_PG_RATIO ", seq LIMIT 1 OFFSET $3"},
      {"next_ratio", PARAPLAN_PG_RATIO_FROM " AND (" PARAPLAN_PG_RATIO ", seq) > ($3::float8, $4::bigint) "
                     "ORDER BY " PARAPLAN_PG_RATIO ", seq LIMIT 1"},
      {"previous_ratio", PARAPLAN_PG_RATIO_FROM " AND (" PARAPLAN_PG_RATIO ", seq) < ($3::float8, $4::bigint) "
                         "ORDER BY " PARAPLAN_PG_RATIO " DESC, seq DESC LIMIT 1"},
      {"count_since_calibration",
       "SELECT COUNT(*) FROM (SELECT 1 FROM measurements WHERE profile_name = $1 AND seq > "
       "COALESCE((SELECT MAX(last_measurement_seq) FROM calibration_runs WHERE profile_name = $1), 0) "
       "LIMIT $2::bigint) AS pending"},
      {"max_seq", "SELECT COALESCE(MAX(seq), 0) FROM measurements WHERE profile_name = $1"},
      {"insert_calibration",
       "INSERT INTO calibration_runs(profile_name, from_version, to_version, created_at_ms, num_measurements, "
       "last_measurement_seq, report) VALUES ($1, $2, $3, " PARAPLAN_PG_NOW_MS ", $4, $5, $6)"},
      {"last_calibration",
       "SELECT profile_name, from_version, to_version, created_at_ms, num_measurements, report "
       "FROM calibration_runs WHERE profile_name = $1 ORDER BY id DESC LIMIT 1"},
  };
  return kStatements;
}

#undef PARAPLAN_PG_RATIO_FROM
#undef PARAPLAN_PG_SUMMARY_COLUMNS
#undef PARAPLAN_PG_MEASUREMENT_COLUMNS
#undef PARAPLAN_PG_IS_DEFAULT
#undef PARAPLAN_PG_PROFILE_COLUMNS
#undef PARAPLAN_PG_DEFAULT_ORDER
#undef PARAPLAN_PG_RATIO
#undef PARAPLAN_PG_TIMED
#undef PARAPLAN_PG_NOW_MS

ProfileRow ReadProfile(const pqxx::row& r) {
  ProfileRow p;
  p.name = BytesOf(r[0]);
  p.version = r[1].as<int>();
  p.created_at_unix_ms = r[2].as<int64_t>();
  p.origin = BytesOf(r[3]);
  p.body = BytesOf(r[4]);
  p.promoted = r[5].as<bool>();
  p.promoted_at_unix_ms = r[6].as<int64_t>();
  p.is_default = r[7].as<bool>();
  return p;
}

MeasurementRow ReadMeasurement(const pqxx::row& r) {
  MeasurementRow m;
  m.id = BytesOf(r[0]);
  m.profile_name = BytesOf(r[1]);
  m.profile_version = r[2].as<int>();
  m.iteration_time_s = r[3].as<double>();
  m.predicted_iteration_time_s = r[4].as<double>();
  m.peak_memory_gib = r[5].as<double>();
  m.predicted_memory_gib = r[6].as<double>();
  m.predicted_fits = r[7].as<bool>();
  m.out_of_memory = r[8].as<bool>();
  m.observed_at_unix_ms = r[9].as<int64_t>();
  m.ingested_at_unix_ms = r[10].as<int64_t>();
  m.body = BytesOf(r[11]);
  m.seq = r[12].as<int64_t>();
  return m;
}

MeasurementSummary ReadSummary(const pqxx::row& r) {
  MeasurementSummary s;
  s.seq = r[0].as<int64_t>();
  s.profile_version = r[1].as<int>();
  s.iteration_time_s = r[2].as<double>();
  s.predicted_iteration_time_s = r[3].as<double>();
  s.peak_memory_gib = r[4].as<double>();
  s.predicted_fits = r[5].as<bool>();
  s.out_of_memory = r[6].as<bool>();
  s.timed = r[7].as<bool>();
  s.ratio = r[8].as<double>();
  return s;
}

template <typename Read>
auto AllRows(const pqxx::result& result, Read read) -> std::vector<decltype(read(result[0]))> {
  std::vector<decltype(read(result[0]))> out;
  out.reserve(result.size());
  for (const pqxx::row& r : result) out.push_back(read(r));
  return out;
}

std::optional<RatioKey> FirstRatio(const pqxx::result& r) {
  if (r.empty()) return std::nullopt;
  return RatioKey{r[0][0].as<double>(), r[0][1].as<int64_t>()};
}

// What a profile holds now, read under its write lock.
struct ProfileState {
  int latest = 0;               // 0: the profile does not exist
  int64_t max_promoted_ms = 0;  // 0: none promoted
  int64_t now_ms = 0;           // the database's clock
};

ProfileState ReadState(pqxx::transaction_base& tx, absl::string_view name) {
  pqxx::row r = tx.exec_prepared1("latest", Bytes(name));
  return {r[0].as<int>(), r[1].as<int64_t>(), r[2].as<int64_t>()};
}

// Writes version latest + 1 of `name`; the caller holds the name's write lock.
int InsertVersion(pqxx::transaction_base& tx, absl::string_view name, absl::string_view body,
                  absl::string_view origin, bool promote) {
  const ProfileState s = ReadState(tx, name);
  if (s.latest == 0) tx.exec_prepared("insert_profile", Bytes(name));
  const int version = s.latest + 1;
  if (promote) {
    // Makes it the default now even if the clock has not advanced (or went back).
    const int64_t at = std::max(s.now_ms, s.max_promoted_ms + 1);
    tx.exec_prepared("insert_version", Bytes(name), version, s.now_ms, Bytes(origin), Bytes(body), at);
  } else {
    tx.exec_prepared("insert_version", Bytes(name), version, s.now_ms, Bytes(origin), Bytes(body), nullptr);
  }
  return version;
}

// Takes the write lock of each name, in key order (so two writers never wait on each
// other in a cycle).
void LockProfiles(pqxx::transaction_base& tx, const std::vector<std::string>& names) {
  std::vector<int32_t> keys;
  keys.reserve(names.size());
  for (const std::string& n : names) keys.push_back(pg::NameHash(n));
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (int32_t k : keys) tx.exec_prepared("lock_profile", static_cast<int32_t>(pg::LockSpace::kProfileWrite), k);
}

// A session advisory lock on a connection of its own.
class CalibrationLease final : public Lease {
 public:
  CalibrationLease(std::unique_ptr<pg::Connection> c, int32_t key) : c_(std::move(c)), key_(key) {}
  ~CalibrationLease() override {
    try {  // closing the connection would release it too, but only once the server notices
      pqxx::nontransaction tx(*c_->conn);
      tx.exec_params("SELECT pg_advisory_unlock($1::int4, $2::int4)",
                     static_cast<int32_t>(pg::LockSpace::kCalibration), key_);
    } catch (const std::exception&) {
    }
  }

 private:
  std::unique_ptr<pg::Connection> c_;
  int32_t key_;
};

}  // namespace

struct PostgresStore::Impl {
  explicit Impl(const std::string& url) : pool(url, Statements(), kMaxConnections) {}

  // f(pqxx::work&) in one transaction that first takes the write lock of `names`;
  // committed when f returns OK, rolled back otherwise.
  template <typename F>
  auto Write(std::vector<std::string> names, F f) {
    return pool.Run([&](pqxx::connection& c) -> decltype(f(std::declval<pqxx::work&>())) {
      pqxx::work tx(c);
      LockProfiles(tx, names);
      auto result = f(tx);
      if (result.ok()) tx.commit();
      return result;
    });
  }
  // f(pqxx::nontransaction&): reads, each statement on its own (autocommit).
  template <typename F>
  auto Read(F f) {
    return pool.Run([&](pqxx::connection& c) -> decltype(f(std::declval<pqxx::nontransaction&>())) {
      pqxx::nontransaction tx(c);
      return f(tx);
    });
  }

  pg::Pool pool;
};

PostgresStore::PostgresStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PostgresStore::~PostgresStore() = default;

absl::StatusOr<std::unique_ptr<Store>> PostgresStore::Open(const std::string& url) {
  auto impl = std::make_unique<Impl>(url);
  absl::Status s = [&]() -> absl::Status {
    absl::StatusOr<std::unique_ptr<pg::Connection>> c = impl->pool.OpenDedicated();
    if (!c.ok()) return c.status();
    try {
      if (absl::Status m = pg::Migrate(*(*c)->conn); !m.ok()) return m;
    } catch (const std::exception& e) {
      return pg::PgStatus(e);
    }
    // A pooled connection: its statements are prepared here, so a bad one fails now.
    return impl->pool.Run([](pqxx::connection& conn) -> absl::Status {
      pqxx::nontransaction tx(conn);
      tx.exec_prepared("count_versions", Bytes(""));
      return absl::OkStatus();
    });
  }();
  if (!s.ok()) return absl::Status(s.code(), absl::StrCat(Redacted(url), ": ", s.message()));
  return std::unique_ptr<Store>(new PostgresStore(std::move(impl)));
}

absl::StatusOr<int> PostgresStore::PutProfileVersion(absl::string_view name, absl::string_view body,
                                                     absl::string_view origin, bool promote) {
  if (name.empty()) return absl::InvalidArgumentError("profile name must not be empty");
  return impl_->Write({std::string(name)}, [&](pqxx::work& tx) -> absl::StatusOr<int> {
    return InsertVersion(tx, name, body, origin, promote);
  });
}

absl::StatusOr<int> PostgresStore::CreateProfile(absl::string_view name, absl::string_view body,
                                                 absl::string_view origin) {
  if (name.empty()) return absl::InvalidArgumentError("profile name must not be empty");
  return impl_->Write({std::string(name)}, [&](pqxx::work& tx) -> absl::StatusOr<int> {
    if (ReadState(tx, name).latest > 0) return ProfileExists(name);
    return InsertVersion(tx, name, body, origin, /*promote=*/true);
  });
}

absl::StatusOr<ProfileRow> PostgresStore::GetProfile(absl::string_view name, int version) {
  return impl_->Read([&](pqxx::nontransaction& tx) -> absl::StatusOr<ProfileRow> {
    pqxx::result r = version > 0 ? tx.exec_prepared("get_version", Bytes(name), version)
                                 : tx.exec_prepared("get_default", Bytes(name));
    if (!r.empty()) return ReadProfile(r[0]);
    if (version > 0) {
      const int latest = ReadState(tx, name).latest;
      if (latest > 0) return VersionNotFound(name, version, latest);
    }
    return ProfileNotFound(name);
  });
}

absl::StatusOr<std::vector<ProfileRow>> PostgresStore::ListLatestProfiles(absl::string_view after_name, int limit) {
  return impl_->Read([&](pqxx::nontransaction& tx) -> absl::StatusOr<std::vector<ProfileRow>> {
    return AllRows(tx.exec_prepared("list_defaults", Bytes(after_name), std::max(limit, 0)), ReadProfile);
  });
}

absl::StatusOr<std::vector<ProfileRow>> PostgresStore::ListProfileVersions(absl::string_view name) {
  return impl_->Read([&](pqxx::nontransaction& tx) -> absl::StatusOr<std::vector<ProfileRow>> {
    std::vector<ProfileRow> out = AllRows(tx.exec_prepared("list_versions", Bytes(name)), ReadProfile);
    if (out.empty()) return ProfileNotFound(name);
    return out;
  });
}

absl::Status PostgresStore::PromoteProfileVersion(absl::string_view name, int version) {
  return impl_->Write({std::string(name)}, [&](pqxx::work& tx) -> absl::Status {
    if (tx.exec_prepared("get_version", Bytes(name), version).empty()) return VersionNotFound(name, version, 0);
    const ProfileState s = ReadState(tx, name);
    tx.exec_prepared("promote", Bytes(name), version, std::max(s.now_ms, s.max_promoted_ms + 1));
    return absl::OkStatus();
  });
}

absl::StatusOr<int> PostgresStore::DeleteProfile(absl::string_view name) {
  return impl_->Write({std::string(name)}, [&](pqxx::work& tx) -> absl::StatusOr<int> {
    const int count = tx.exec_prepared1("count_versions", Bytes(name))[0].as<int>();
    if (count == 0) return ProfileNotFound(name);
    tx.exec_prepared("delete_profile", Bytes(name));
    return count;
  });
}

absl::StatusOr<std::vector<absl::Status>> PostgresStore::InsertMeasurements(const std::vector<MeasurementRow>& rows) {
  std::vector<std::string> names;
  for (const MeasurementRow& r : rows) {
    if (!r.id.empty()) names.push_back(r.profile_name);
  }
  return impl_->Write(std::move(names), [&](pqxx::work& tx) -> absl::StatusOr<std::vector<absl::Status>> {
    std::map<std::string, bool> exists;  // profile name -> has a version
    std::vector<absl::Status> out;
    out.reserve(rows.size());
    for (const MeasurementRow& r : rows) {
      if (r.id.empty()) {
        out.push_back(absl::InvalidArgumentError("measurement id must not be empty"));
        continue;
      }
      auto it = exists.find(r.profile_name);
      if (it == exists.end()) it = exists.emplace(r.profile_name, ReadState(tx, r.profile_name).latest > 0).first;
      if (!it->second) {
        out.push_back(ProfileNotFound(r.profile_name));
        continue;
      }
      // Any other failure (a constraint) throws: the transaction rolls back and no row of
      // the batch is stored.
      pqxx::result stored = tx.exec_prepared(
          "insert_measurement", Bytes(r.id), Bytes(r.profile_name), r.profile_version, r.iteration_time_s,
          r.predicted_iteration_time_s, r.peak_memory_gib, r.predicted_memory_gib, r.predicted_fits,
          r.out_of_memory, r.observed_at_unix_ms, r.ingested_at_unix_ms, Bytes(r.body));
      out.push_back(stored.empty() ? MeasurementExists(r.id) : absl::OkStatus());
    }
    return out;
  });
}

absl::StatusOr<bool> PostgresStore::HasMeasurement(absl::string_view id) {
  return impl_->Read([&](pqxx::nontransaction& tx) -> absl::StatusOr<bool> {
    return !tx.exec_prepared("has_measurement", Bytes(id)).empty();
  });
}

absl::StatusOr<std::vector<MeasurementRow>> PostgresStore::ListMeasurements(absl::string_view profile_name,
                                                                            int limit) {
  const int64_t n = limit > 0 ? limit : std::numeric_limits<int64_t>::max();
  return impl_->Read([&](pqxx::nontransaction& tx) -> absl::StatusOr<std::vector<MeasurementRow>> {
    return AllRows(tx.exec_prepared("list_measurements", Bytes(profile_name), n), ReadMeasurement);
  });
}

absl::StatusOr<std::vector<MeasurementRow>> PostgresStore::RecentMeasurements(absl::string_view profile_name, int n) {
  return impl_->Read([&](pqxx::nontransaction& tx) -> absl::StatusOr<std::vector<MeasurementRow>> {
    return AllRows(tx.exec_prepared("recent_measurements", Bytes(profile_name), std::max(n, 0)), ReadMeasurement);
  });
}

absl::StatusOr<std::vector<MeasurementRow>> PostgresStore::MeasurementsAfter(absl::string_view profile_name,
                                                                             int64_t after_seq, int limit) {
  return impl_->Read([&](pqxx::nontransaction& tx) -> absl::StatusOr<std::vector<MeasurementRow>> {
    return AllRows(tx.exec_prepared("measurements_after", Bytes(profile_name), after_seq, std::max(limit, 1)),
                   ReadMeasurement);
  });
}

absl::StatusOr<std::vector<MeasurementSummary>> PostgresStore::MeasurementSummariesAfter(
    absl::string_view profile_name, int64_t after_seq, int limit) {
  return impl_->Read([&](pqxx::nontransaction& tx) -> absl::StatusOr<std::vector<MeasurementSummary>> {
    return AllRows(tx.exec_prepared("summaries_after", Bytes(profile_name), after_seq, std::max(limit, 1)),
                   ReadSummary);
  });
}

absl::StatusOr<std::optional<RatioKey>> PostgresStore::RatioAtRank(absl::string_view profile_name, int64_t rank,
                                                                   int64_t through_seq) {
  if (rank < 0) return std::optional<RatioKey>();
  return impl_->Read([&](pqxx::nontransaction& tx) -> absl::StatusOr<std::optional<RatioKey>> {
    return FirstRatio(tx.exec_prepared("ratio_at_rank", Bytes(profile_name), through_seq, rank));
  });
}

absl::StatusOr<std::optional<RatioKey>> PostgresStore::NextRatio(absl::string_view profile_name, const RatioKey& key,
                                                                 int64_t through_seq) {
  return impl_->Read([&](pqxx::nontransaction& tx) -> absl::StatusOr<std::optional<RatioKey>> {
    return FirstRatio(tx.exec_prepared("next_ratio", Bytes(profile_name), through_seq, key.ratio, key.seq));
  });
}

absl::StatusOr<std::optional<RatioKey>> PostgresStore::PreviousRatio(absl::string_view profile_name,
                                                                     const RatioKey& key, int64_t through_seq) {
  return impl_->Read([&](pqxx::nontransaction& tx) -> absl::StatusOr<std::optional<RatioKey>> {
    return FirstRatio(tx.exec_prepared("previous_ratio", Bytes(profile_name), through_seq, key.ratio, key.seq));
  });
}

absl::StatusOr<int> PostgresStore::CountMeasurementsSinceCalibration(absl::string_view profile_name, int64_t limit) {
  return impl_->Read([&](pqxx::nontransaction& tx) -> absl::StatusOr<int> {
    // PostgreSQL: LIMIT NULL is none.
    const std::optional<int64_t> cap = limit > 0 ? std::optional<int64_t>(limit) : std::nullopt;
    return static_cast<int>(tx.exec_prepared1("count_since_calibration", Bytes(profile_name), cap)[0].as<int64_t>());
  });
}

absl::StatusOr<int> PostgresStore::RecordCalibration(absl::string_view name, absl::string_view body,
                                                     int from_version, int num_measurements,
                                                     absl::string_view report, bool promote,
                                                     int64_t last_measurement_seq) {
  return impl_->Write({std::string(name)}, [&](pqxx::work& tx) -> absl::StatusOr<int> {
    if (ReadState(tx, name).latest == 0) return ProfileNotFound(name);
    const int version = InsertVersion(tx, name, body, "calibration", promote);
    const int64_t last_seq = last_measurement_seq > 0
                                 ? last_measurement_seq
                                 : tx.exec_prepared1("max_seq", Bytes(name))[0].as<int64_t>();
    tx.exec_prepared("insert_calibration", Bytes(name), from_version, version, num_measurements, last_seq,
                     Bytes(report));
    return version;
  });
}

absl::StatusOr<std::optional<CalibrationRunRow>> PostgresStore::LastCalibration(absl::string_view name) {
  return impl_->Read([&](pqxx::nontransaction& tx) -> absl::StatusOr<std::optional<CalibrationRunRow>> {
    pqxx::result r = tx.exec_prepared("last_calibration", Bytes(name));
    if (r.empty()) return std::optional<CalibrationRunRow>();
    CalibrationRunRow c;
    c.profile_name = BytesOf(r[0][0]);
    c.from_version = r[0][1].as<int>();
    c.to_version = r[0][2].as<int>();
    c.created_at_unix_ms = r[0][3].as<int64_t>();
    c.num_measurements = r[0][4].as<int>();
    c.report = BytesOf(r[0][5]);
    return std::optional<CalibrationRunRow>(std::move(c));
  });
}

absl::StatusOr<std::unique_ptr<Lease>> PostgresStore::LockCalibration(absl::string_view name, bool wait) {
  absl::StatusOr<std::unique_ptr<pg::Connection>> c = impl_->pool.OpenDedicated();
  if (!c.ok()) return c.status();
  const int32_t space = static_cast<int32_t>(pg::LockSpace::kCalibration);
  const int32_t key = pg::NameHash(name);
  try {
    pqxx::nontransaction tx(*(*c)->conn);
    if (wait) {
      tx.exec_params("SELECT pg_advisory_lock($1::int4, $2::int4)", space, key);
    } else if (!tx.exec_params1("SELECT pg_try_advisory_lock($1::int4, $2::int4)", space, key)[0].as<bool>()) {
      return std::unique_ptr<Lease>();
    }
  } catch (const std::exception& e) {
    return pg::PgStatus(e);
  }
  return std::unique_ptr<Lease>(new CalibrationLease(*std::move(c), key));
}

absl::Status PostgresStore::CheckIntegrity() {
  return impl_->Read([&](pqxx::nontransaction& tx) -> absl::Status {
    const int stored = pg::StoredVersion(tx);
    if (stored != pg::SchemaVersion()) {
      return absl::DataLossError(
          absl::StrCat("postgresql: schema version ", stored, ", this build's is ", pg::SchemaVersion()));
    }
    return absl::OkStatus();
  });
}

}  // namespace paraplan::store
