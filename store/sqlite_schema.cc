#include "store/sqlite_schema.h"

#include "absl/strings/str_cat.h"

namespace paraplan::store {

// A TIMED measurement (one with a timing to compare) and its ratio predicted / measured;
// the ratio index (migration 3) and every query on it spell them exactly so, which is
// how SQLite matches a query to a partial index on an expression.
#define PARAPLAN_TIMED "out_of_memory = 0 AND predicted_iteration_time_s > 0 AND iteration_time_s > 0"
#define PARAPLAN_RATIO "predicted_iteration_time_s / iteration_time_s"

namespace {

// Schema migrations; migration i brings user_version from i to i + 1.
const char* const kMigrations[] = {
    R"sql(
CREATE TABLE profiles (
  name TEXT PRIMARY KEY
);
CREATE TABLE profile_versions (
  name TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
  version INTEGER NOT NULL,
  created_at_ms INTEGER NOT NULL,
  origin TEXT NOT NULL,
  body BLOB NOT NULL,
  PRIMARY KEY (name, version)
);
CREATE TABLE measurements (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  profile_name TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
  profile_version INTEGER NOT NULL,
  iteration_time_s REAL NOT NULL,
  predicted_iteration_time_s REAL NOT NULL,
  peak_memory_gib REAL NOT NULL,
  predicted_memory_gib REAL NOT NULL,
  predicted_fits INTEGER NOT NULL,
  out_of_memory INTEGER NOT NULL,
  observed_at_ms INTEGER NOT NULL,
  ingested_at_ms INTEGER NOT NULL,
  body BLOB NOT NULL
);
CREATE INDEX measurements_by_profile ON measurements(profile_name, seq);
CREATE TABLE calibration_runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  profile_name TEXT NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
  from_version INTEGER NOT NULL,
  to_version INTEGER NOT NULL,
  created_at_ms INTEGER NOT NULL,
  num_measurements INTEGER NOT NULL,
  last_measurement_seq INTEGER NOT NULL,
  report BLOB NOT NULL
);
)sql",
    // 2: promotion. NULL = never promoted (a candidate); versions written before this
    // migration were all served as the latest, so they count as promoted when created.
    R"sql(
ALTER TABLE profile_versions ADD COLUMN promoted_at_ms INTEGER;
UPDATE profile_versions SET promoted_at_ms = created_at_ms;
)sql",
    // 3: the ratio order of timed measurements, for medians without reading every row.
    "CREATE INDEX measurements_by_ratio ON measurements(profile_name, " PARAPLAN_RATIO ") WHERE " PARAPLAN_TIMED ";",
    // 4: a name's versions in default order (PARAPLAN_DEFAULT_ORDER below), so finding the
    // default is one index step instead of sorting every version: a read of a profile
    // with 3,000 versions took 690 us before, 25 us with 10 (bench/bench_backend).
    "CREATE INDEX profile_versions_default ON profile_versions(name, promoted_at_ms IS NULL, promoted_at_ms DESC, "
    "version DESC);",
};

}  // namespace

absl::Status MigrateSqlite(Database& db, const std::string& path) {
  absl::StatusOr<int64_t> version = db.QueryInt("PRAGMA user_version");
  if (!version.ok()) return version.status();
  const int64_t target = sizeof(kMigrations) / sizeof(kMigrations[0]);
  if (*version > target) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": schema version ", *version, " is newer than this build's ", target));
  }
  for (int64_t v = *version; v < target; ++v) {
    Transaction tx(&db);
    if (absl::Status s = tx.Begin(); !s.ok()) return s;
    if (absl::Status s = db.ExecScript(kMigrations[v]); !s.ok()) return s;
    if (absl::Status s = db.ExecScript(absl::StrCat("PRAGMA user_version = ", v + 1)); !s.ok()) return s;
    if (absl::Status s = tx.Commit(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

ProfileRow ReadProfile(Statement& s) {
  ProfileRow r;
  r.name = s.ColumnText(0);
  r.version = static_cast<int>(s.ColumnInt(1));
  r.created_at_unix_ms = s.ColumnInt(2);
  r.origin = s.ColumnText(3);
  r.body = s.ColumnText(4);
  r.promoted = s.ColumnInt(5) != 0;
  r.promoted_at_unix_ms = s.ColumnInt(6);
  r.is_default = s.ColumnInt(7) != 0;
  return r;
}

// Order of profile_versions rows (alias `t`) of one name that puts the default first:
// promoted before candidates, latest promotion first, ties (and all-candidates) by the
// higher version. Index profile_versions_default (migration 4) is in this order: keep
// the two alike, or the default's lookup sorts every version again.
#define PARAPLAN_DEFAULT_ORDER(t) \
  t ".promoted_at_ms IS NULL, " t ".promoted_at_ms DESC, " t ".version DESC"
// The default version of the profiles row aliased `p` (once per name).
#define PARAPLAN_DEFAULT_VERSION_OF_P                                             \
  "(SELECT d.version FROM profile_versions d WHERE d.name = p.name ORDER BY " \
  PARAPLAN_DEFAULT_ORDER("d") " LIMIT 1)"

// The default version of the name bound as ?1: not correlated with the outer row, so
// SQLite evaluates it once per statement. (A subquery correlated with each row of the
// name's versions made every read of a profile quadratic in its version count: 250
// versions, written by a few minutes of updates, turned a profile read into ~60,000 row
// visits and stalled every other store call behind it.)
#define PARAPLAN_DEFAULT_VERSION_OF_NAME_1 \
  "(SELECT d.version FROM profile_versions d WHERE d.name = ?1 ORDER BY " PARAPLAN_DEFAULT_ORDER("d") " LIMIT 1)"
// Columns read by ReadProfile, from profile_versions aliased `v`, for rows of the name
// bound as ?1.
const char* const kProfileColumns =
    "v.name, v.version, v.created_at_ms, v.origin, v.body, v.promoted_at_ms IS NOT NULL, "
    "COALESCE(v.promoted_at_ms, 0), v.version = " PARAPLAN_DEFAULT_VERSION_OF_NAME_1;
// The same for rows already known to be their name's default.
const char* const kDefaultProfileColumns =
    "v.name, v.version, v.created_at_ms, v.origin, v.body, v.promoted_at_ms IS NOT NULL, "
    "COALESCE(v.promoted_at_ms, 0), 1";
const char* const kDefaultVersionOfName1 = PARAPLAN_DEFAULT_VERSION_OF_NAME_1;
const char* const kDefaultVersionOfP = PARAPLAN_DEFAULT_VERSION_OF_P;
#undef PARAPLAN_DEFAULT_VERSION_OF_NAME_1
#undef PARAPLAN_DEFAULT_VERSION_OF_P
#undef PARAPLAN_DEFAULT_ORDER
const char* const kMeasurementColumns =
    "id, profile_name, profile_version, iteration_time_s, predicted_iteration_time_s, "
    "peak_memory_gib, predicted_memory_gib, predicted_fits, out_of_memory, observed_at_ms, "
    "ingested_at_ms, body, seq";

MeasurementRow ReadMeasurement(Statement& s) {
  MeasurementRow r;
  r.id = s.ColumnText(0);
  r.profile_name = s.ColumnText(1);
  r.profile_version = static_cast<int>(s.ColumnInt(2));
  r.iteration_time_s = s.ColumnDouble(3);
  r.predicted_iteration_time_s = s.ColumnDouble(4);
  r.peak_memory_gib = s.ColumnDouble(5);
  r.predicted_memory_gib = s.ColumnDouble(6);
  r.predicted_fits = s.ColumnInt(7) != 0;
  r.out_of_memory = s.ColumnInt(8) != 0;
  r.observed_at_unix_ms = s.ColumnInt(9);
  r.ingested_at_unix_ms = s.ColumnInt(10);
  r.body = s.ColumnText(11);
  r.seq = s.ColumnInt(12);
  return r;
}

const char* const kSummaryColumns =
    "seq, profile_version, iteration_time_s, predicted_iteration_time_s, peak_memory_gib, predicted_fits, "
    "out_of_memory, (" PARAPLAN_TIMED "), CASE WHEN " PARAPLAN_TIMED " THEN " PARAPLAN_RATIO " ELSE 0 END";

MeasurementSummary ReadSummary(Statement& s) {
  MeasurementSummary r;
  r.seq = s.ColumnInt(0);
  r.profile_version = static_cast<int>(s.ColumnInt(1));
  r.iteration_time_s = s.ColumnDouble(2);
  r.predicted_iteration_time_s = s.ColumnDouble(3);
  r.peak_memory_gib = s.ColumnDouble(4);
  r.predicted_fits = s.ColumnInt(5) != 0;
  r.out_of_memory = s.ColumnInt(6) != 0;
  r.timed = s.ColumnInt(7) != 0;
  r.ratio = s.ColumnDouble(8);
  return r;
}

// Timed measurements of profile ?1 with seq <= ?2 through the ratio index, as (ratio, seq).
#define PARAPLAN_RATIO_FROM                                                                       \
  "SELECT " PARAPLAN_RATIO ", seq FROM measurements INDEXED BY measurements_by_ratio "           \
  "WHERE profile_name = ?1 AND " PARAPLAN_TIMED " AND seq <= ?2"
const char* const kRatioAtRank = PARAPLAN_RATIO_FROM " ORDER BY " PARAPLAN_RATIO ", seq LIMIT 1 OFFSET ?3";
// Neighbours of (?3, ?4): the same ratio first, then the next ratio.
const char* const kNextSameRatio = PARAPLAN_RATIO_FROM " AND " PARAPLAN_RATIO " = ?3 AND seq > ?4 ORDER BY seq LIMIT 1";
const char* const kNextRatio = PARAPLAN_RATIO_FROM " AND " PARAPLAN_RATIO " > ?3 ORDER BY " PARAPLAN_RATIO ", seq LIMIT 1";
const char* const kPreviousSameRatio =
    PARAPLAN_RATIO_FROM " AND " PARAPLAN_RATIO " = ?3 AND seq < ?4 ORDER BY seq DESC LIMIT 1";
const char* const kPreviousRatio =
    PARAPLAN_RATIO_FROM " AND " PARAPLAN_RATIO " < ?3 ORDER BY " PARAPLAN_RATIO " DESC, seq DESC LIMIT 1";
#undef PARAPLAN_RATIO_FROM
#undef PARAPLAN_RATIO
#undef PARAPLAN_TIMED

}  // namespace paraplan::store
