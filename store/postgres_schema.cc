#include "store/postgres_schema.h"

#include "absl/strings/str_cat.h"

namespace paraplan::store::pg {

namespace {

// Migration i brings the schema from version i to i + 1 (the same steps as SQLite's).
const char* const kMigrations[] = {
    R"sql(
CREATE TABLE profiles (
  name BYTEA PRIMARY KEY
);
CREATE TABLE profile_versions (
  name BYTEA NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
  version INTEGER NOT NULL,
  created_at_ms BIGINT NOT NULL,
  origin BYTEA NOT NULL,
  body BYTEA NOT NULL,
  PRIMARY KEY (name, version)
);
CREATE TABLE measurements (
  seq BIGINT GENERATED ALWAYS AS IDENTITY (CACHE 1) PRIMARY KEY,
  id BYTEA NOT NULL UNIQUE,
  profile_name BYTEA NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
  profile_version INTEGER NOT NULL,
  iteration_time_s DOUBLE PRECISION NOT NULL CHECK (iteration_time_s <> 'NaN'),
  predicted_iteration_time_s DOUBLE PRECISION NOT NULL CHECK (predicted_iteration_time_s <> 'NaN'),
  peak_memory_gib DOUBLE PRECISION NOT NULL CHECK (peak_memory_gib <> 'NaN'),
  predicted_memory_gib DOUBLE PRECISION NOT NULL CHECK (predicted_memory_gib <> 'NaN'),
  predicted_fits BOOLEAN NOT NULL,
  out_of_memory BOOLEAN NOT NULL,
  observed_at_ms BIGINT NOT NULL,
  ingested_at_ms BIGINT NOT NULL,
  body BYTEA NOT NULL
);
CREATE INDEX measurements_by_profile ON measurements(profile_name, seq);
CREATE TABLE calibration_runs (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  profile_name BYTEA NOT NULL REFERENCES profiles(name) ON DELETE CASCADE,
  from_version INTEGER NOT NULL,
  to_version INTEGER NOT NULL,
  created_at_ms BIGINT NOT NULL,
  num_measurements INTEGER NOT NULL,
  last_measurement_seq BIGINT NOT NULL,
  report BYTEA NOT NULL
);
CREATE INDEX calibration_runs_by_profile ON calibration_runs(profile_name, id);
)sql",
    // 2: promotion. NULL = never promoted (a candidate); versions written before this
    // migration were all served as the latest, so they count as promoted when created.
    R"sql(
ALTER TABLE profile_versions ADD COLUMN promoted_at_ms BIGINT;
UPDATE profile_versions SET promoted_at_ms = created_at_ms;
)sql",
    // 3: the ratio order of timed measurements, for medians without reading every row.
    // The expression and predicate are spelled exactly as the queries spell them
    // (postgres_store.cc: PARAPLAN_PG_RATIO, PARAPLAN_PG_TIMED).
    R"sql(
CREATE INDEX measurements_by_ratio ON measurements
  (profile_name, (predicted_iteration_time_s / NULLIF(iteration_time_s, 0)), seq)
  WHERE NOT out_of_memory AND predicted_iteration_time_s > 0 AND iteration_time_s > 0;
)sql",
    // 4: a name's versions in default order (postgres_store.cc: PARAPLAN_PG_DEFAULT_ORDER),
    // so the default is found in one index step instead of sorting every version.
    R"sql(
CREATE INDEX profile_versions_default ON profile_versions
  (name, (promoted_at_ms IS NULL), promoted_at_ms DESC NULLS LAST, version DESC);
)sql",
};

constexpr int kNumMigrations = sizeof(kMigrations) / sizeof(kMigrations[0]);

}  // namespace

int SchemaVersion() { return kNumMigrations; }

int StoredVersion(pqxx::transaction_base& tx) {
  pqxx::result r = tx.exec("SELECT version FROM schema_version");
  return r.empty() ? 0 : r[0][0].as<int>();
}

absl::Status Migrate(pqxx::connection& conn) {
  pqxx::work tx(conn);
  tx.exec_params("SELECT pg_advisory_xact_lock($1, 0)", static_cast<int32_t>(LockSpace::kMigration));
  tx.exec(
      "CREATE TABLE IF NOT EXISTS schema_version ("
      "  one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),"
      "  version INTEGER NOT NULL)");
  const int stored = StoredVersion(tx);
  if (stored > kNumMigrations) {
    return absl::FailedPreconditionError(
        absl::StrCat("postgresql: schema version ", stored, " is newer than this build's ", kNumMigrations));
  }
  if (stored == kNumMigrations) return absl::OkStatus();  // rolls back the no-op
  for (int v = stored; v < kNumMigrations; ++v) tx.exec(kMigrations[v]);
  tx.exec_params(
      "INSERT INTO schema_version(one, version) VALUES (TRUE, $1) "
      "ON CONFLICT (one) DO UPDATE SET version = EXCLUDED.version",
      kNumMigrations);
  tx.commit();
  return absl::OkStatus();
}

}  // namespace paraplan::store::pg
