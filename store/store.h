// Store: the repository interface of paraplan — profiles (immutable versions),
// measurements (with the prediction made when they were ingested) and calibration runs.
// Nothing outside store/ touches SQL. Two implementations keep the same contract:
// SqliteStore (sqlite_store.h, the embedded default: one file, one server process) and
// PostgresStore (postgres_store.h: one database shared by any number of server
// replicas). Store::Open picks one by the target's form.
//
// Bodies are opaque bytes (the server stores serialized paraplan.v1 protos), so this
// module depends on its databases and Abseil only. Contract (both implementations):
//  - A profile name has versions 1..n; PutProfileVersion writes n+1. A version's body,
//    origin and created_at never change; only its promotion time can (PromoteProfileVersion).
//    Deleting a profile removes all its versions and its measurements.
//  - A version is promoted (promoted_at set) or a candidate (never promoted). The DEFAULT
//    version of a name is the promoted version with the greatest promoted_at (ties: the
//    higher version); when no version is promoted, the latest version. Promoting always
//    makes that version the default at once (promoted_at = max(now, current max + 1)).
//  - A measurement id is unique: inserting an existing id returns ALREADY_EXISTS and
//    changes nothing.
//  - Every write is one transaction; a failed write leaves the database as it was.
//    Schema migrations are numbered; a database newer than the build is refused.
//  - Names, ids, origins and bodies are byte strings: any bytes (NUL included) are data,
//    ordered bytewise; every value reaches the database as a bound parameter.
//  - An error message repeats a caller's string (a name, an id) at most 100 bytes long.
//  - Reading measurements in bounded memory: *After() pages through them by seq (keyset
//    paging); the ratio order (RatioAtRank, NextRatio, PreviousRatio) walks an index, so a
//    caller can keep order statistics (a median) current without holding the rows.
//  - seq grows with insertion, and per profile in commit order: once a reader has seen a
//    measurement of a profile, every measurement of that profile with a smaller seq is
//    visible to it too (so "seq > last seen" misses nothing, whichever process wrote).
//  - Writes through one Store are visible through every other Store on the same database
//    as soon as the writing call returns (no caches).
// Thread-safety: a Store may be used from many threads at once.
#ifndef PARAPLAN_STORE_STORE_H_
#define PARAPLAN_STORE_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paraplan::store {

struct ProfileRow {
  std::string name;
  int version = 0;
  int64_t created_at_unix_ms = 0;
  std::string body;  // serialized paraplan.v1.SystemProfile
  std::string origin;  // "builtin", "user", "calibration"
  bool promoted = false;             // promoted at least once (false = a candidate)
  int64_t promoted_at_unix_ms = 0;   // latest promotion; 0 when !promoted
  bool is_default = false;           // this row is the profile's default version
};

struct MeasurementRow {
  std::string id;
  std::string profile_name;
  int profile_version = 0;  // the version whose prediction is stored
  double iteration_time_s = 0;
  double predicted_iteration_time_s = 0;
  double peak_memory_gib = 0;       // 0 = unknown
  double predicted_memory_gib = 0;  // 0 = unknown
  bool predicted_fits = true;
  bool out_of_memory = false;
  int64_t observed_at_unix_ms = 0;
  int64_t ingested_at_unix_ms = 0;
  std::string body;  // serialized paraplan.v1.Measurement
  int64_t seq = 0;   // insertion order, assigned by the store
};

// A measurement without its body: what accuracy bookkeeping reads.
struct MeasurementSummary {
  int64_t seq = 0;
  int profile_version = 0;
  double iteration_time_s = 0;
  double predicted_iteration_time_s = 0;
  double peak_memory_gib = 0;
  bool predicted_fits = true;
  bool out_of_memory = false;
  // TIMED: not out of memory and both times > 0. `ratio` = predicted / measured iteration
  // time as the store computes it (the key of the ratio order); 0 when not timed.
  bool timed = false;
  double ratio = 0;
};

// A timed measurement's place in the ratio order of its profile: by ratio, ties by seq.
struct RatioKey {
  double ratio = 0;
  int64_t seq = 0;
};

struct CalibrationRunRow {
  std::string profile_name;
  int from_version = 0;
  int to_version = 0;
  int64_t created_at_unix_ms = 0;
  int num_measurements = 0;
  std::string report;  // serialized paraplan.v1.FitReport
};

// A held lock (Store::LockCalibration); released when destroyed.
class Lease {
 public:
  virtual ~Lease() = default;
};

class Store {
 public:
  // "postgresql://..." or "postgres://..." (a libpq connection URI): PostgresStore;
  // anything else is a file path: SqliteStore (":memory:" for tests of this module only).
  // Opens (creating if needed) and migrates the schema.
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& target);
  // Whether Open(target) would pick PostgreSQL.
  static bool IsPostgresTarget(absl::string_view target);
  // `target` fit for logs: a URI's password replaced by "***".
  static std::string Redacted(absl::string_view target);
  virtual ~Store() = default;

  // --- profiles ---
  // Writes version (latest + 1) of `name` (1 when new). Returns the new version. With
  // promote it is promoted (and becomes the default); without, it is stored as a candidate
  // and the default is unchanged.
  virtual absl::StatusOr<int> PutProfileVersion(absl::string_view name, absl::string_view body,
                                                absl::string_view origin, bool promote = true) = 0;
  // Writes version 1 (promoted, with `origin`) of a new `name`: ALREADY_EXISTS if it has
  // versions. The check and the write are one transaction, so of concurrent creators
  // (replicas on one PostgreSQL database) exactly one succeeds.
  virtual absl::StatusOr<int> CreateProfile(absl::string_view name, absl::string_view body,
                                            absl::string_view origin) = 0;
  // CreateProfile with origin "builtin"; false if `name` already had versions.
  absl::StatusOr<bool> SeedProfile(absl::string_view name, absl::string_view body);
  // version 0 = the default version. NOT_FOUND when absent.
  virtual absl::StatusOr<ProfileRow> GetProfile(absl::string_view name, int version = 0) = 0;
  // The DEFAULT version of each profile (not necessarily its latest), ordered by name,
  // names > after_name, at most limit.
  virtual absl::StatusOr<std::vector<ProfileRow>> ListLatestProfiles(absl::string_view after_name, int limit) = 0;
  // All versions, oldest first. NOT_FOUND when the profile has none.
  virtual absl::StatusOr<std::vector<ProfileRow>> ListProfileVersions(absl::string_view name) = 0;
  // Makes `version` the default of `name` at once (also how a rollback to an older version
  // works): sets its promoted_at to max(now, the name's current max promoted_at + 1).
  // NOT_FOUND when the version does not exist.
  virtual absl::Status PromoteProfileVersion(absl::string_view name, int version) = 0;
  // Returns the number of versions deleted; NOT_FOUND when none existed.
  virtual absl::StatusOr<int> DeleteProfile(absl::string_view name) = 0;

  // --- measurements ---
  // ALREADY_EXISTS when the id is stored; NOT_FOUND when the profile does not exist.
  absl::Status InsertMeasurement(const MeasurementRow& row);
  // Inserts a batch in one transaction and says per row what happened: OK (stored),
  // ALREADY_EXISTS (the id was stored, before or earlier in `rows`), NOT_FOUND (no such
  // profile), INVALID_ARGUMENT (empty id). Any other failure returns that error and
  // stores no row of the batch: all of it is stored or none.
  virtual absl::StatusOr<std::vector<absl::Status>> InsertMeasurements(const std::vector<MeasurementRow>& rows) = 0;
  virtual absl::StatusOr<bool> HasMeasurement(absl::string_view id) = 0;
  // Oldest first. limit 0 = all.
  virtual absl::StatusOr<std::vector<MeasurementRow>> ListMeasurements(absl::string_view profile_name,
                                                                       int limit = 0) = 0;
  // The most recent `n` (by insertion), oldest first.
  virtual absl::StatusOr<std::vector<MeasurementRow>> RecentMeasurements(absl::string_view profile_name, int n) = 0;
  // At most `limit` (>= 1) measurements of the profile with seq > after_seq, oldest first:
  // pass the last row's seq to read the next page.
  virtual absl::StatusOr<std::vector<MeasurementRow>> MeasurementsAfter(absl::string_view profile_name,
                                                                        int64_t after_seq, int limit) = 0;
  // The same without bodies.
  virtual absl::StatusOr<std::vector<MeasurementSummary>> MeasurementSummariesAfter(
      absl::string_view profile_name, int64_t after_seq, int limit) = 0;
  // Order statistics of the TIMED measurements of a profile with seq <= through_seq, in
  // ratio order; nullopt when there is no such measurement. RatioAtRank: the one with
  // `rank` (0-based) measurements before it, O(rank) index steps. NextRatio /
  // PreviousRatio: the neighbour of `key` (which need not be stored), O(log n).
  virtual absl::StatusOr<std::optional<RatioKey>> RatioAtRank(absl::string_view profile_name, int64_t rank,
                                                              int64_t through_seq) = 0;
  virtual absl::StatusOr<std::optional<RatioKey>> NextRatio(absl::string_view profile_name, const RatioKey& key,
                                                            int64_t through_seq) = 0;
  virtual absl::StatusOr<std::optional<RatioKey>> PreviousRatio(absl::string_view profile_name,
                                                                const RatioKey& key, int64_t through_seq) = 0;
  // Measurements of the profile inserted after its last calibration run, counted up to
  // `limit` (0 = all): whether a calibration is due costs O(limit), not O(pending) on
  // every ingest of a profile whose calibrations keep failing.
  virtual absl::StatusOr<int> CountMeasurementsSinceCalibration(absl::string_view profile_name,
                                                                int64_t limit = 0) = 0;

  // --- calibration ---
  // Writes the new profile version (promoted iff promote) and the run record in one
  // transaction; returns the new version. `last_measurement_seq` is the newest
  // measurement the fit saw (0 = the newest stored): measurements after it still count
  // in CountMeasurementsSinceCalibration.
  virtual absl::StatusOr<int> RecordCalibration(absl::string_view name, absl::string_view body, int from_version,
                                                int num_measurements, absl::string_view report,
                                                bool promote = true, int64_t last_measurement_seq = 0) = 0;
  virtual absl::StatusOr<std::optional<CalibrationRunRow>> LastCalibration(absl::string_view name) = 0;
  // The lock under which one calibration of `name` runs at a time among every Store on
  // this database (every server process sharing it). wait: block until it is free;
  // else nullptr at once when another holder has it. Released when the Lease is
  // destroyed, or when its holder's process dies.
  virtual absl::StatusOr<std::unique_ptr<Lease>> LockCalibration(absl::string_view name, bool wait) = 0;

  // The database is consistent and its schema is this build's (SQLite: PRAGMA
  // integrity_check == "ok"). DATA_LOSS when it is not.
  virtual absl::Status CheckIntegrity() = 0;
};

}  // namespace paraplan::store

#endif  // PARAPLAN_STORE_STORE_H_
