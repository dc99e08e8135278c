// Store: the SQLite repository of paraplan — profiles (immutable versions),
// measurements (with the prediction made when they were ingested) and calibration runs.
// Nothing outside store/ touches SQL.
//
// Bodies are opaque bytes (the server stores serialized paraplan.v1 protos), so this
// module depends on SQLite and Abseil only. Contract:
//  - A profile name has versions 1..n; PutProfileVersion writes n+1. A version's body,
//    origin and created_at never change; only its promotion time can (PromoteProfileVersion).
//    Deleting a profile removes all its versions and its measurements.
//  - A version is promoted (promoted_at set) or a candidate (never promoted). The DEFAULT
//    version of a name is the promoted version with the greatest promoted_at (ties: the
//    higher version); when no version is promoted, the latest version. Promoting always
//    makes that version the default at once (promoted_at = max(now, current max + 1)).
//  - A measurement id is unique: inserting an existing id returns ALREADY_EXISTS and
//    changes nothing.
//  - Every write runs in one BEGIN IMMEDIATE transaction; a failed write leaves the
//    database as it was. WAL mode, foreign keys on, schema migrations by user_version.
//  - Every value reaches SQLite as a bound parameter (any bytes, NUL included, are data).
//  - An error message repeats a caller's string (a name, an id) at most 100 bytes long.
//  - Reading measurements in bounded memory: *After() pages through them by seq (keyset
//    paging); the ratio order (RatioAtRank, NextRatio, PreviousRatio) walks an index, so a
//    caller can keep order statistics (a median) current without holding the rows.
// Thread-safety: a Store may be used from many threads at once (one connection guarded
// by a mutex; SQLite busy_timeout covers other processes).
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

class Store {
 public:
  // Opens (creating if needed) the database file and migrates its schema.
  // ":memory:" is accepted for tests of this module only.
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& path);
  ~Store();

  // --- profiles ---
  // Writes version (latest + 1) of `name` (1 when new). Returns the new version. With
  // promote it is promoted (and becomes the default); without, it is stored as a candidate
  // and the default is unchanged.
  absl::StatusOr<int> PutProfileVersion(absl::string_view name, absl::string_view body,
                                        absl::string_view origin, bool promote = true);
  // Writes version 1 (promoted) only if `name` has no versions; returns false if it
  // already had.
  absl::StatusOr<bool> SeedProfile(absl::string_view name, absl::string_view body);
  // version 0 = the default version. NOT_FOUND when absent.
  absl::StatusOr<ProfileRow> GetProfile(absl::string_view name, int version = 0);
  // The DEFAULT version of each profile (not necessarily its latest), ordered by name,
  // names > after_name, at most limit.
  absl::StatusOr<std::vector<ProfileRow>> ListLatestProfiles(absl::string_view after_name,
                                                             int limit);
  // All versions, oldest first. NOT_FOUND when the profile has none.
  absl::StatusOr<std::vector<ProfileRow>> ListProfileVersions(absl::string_view name);
  // Makes `version` the default of `name` at once (also how a rollback to an older version
  // works): sets its promoted_at to max(now, the name's current max promoted_at + 1).
  // NOT_FOUND when the version does not exist.
  absl::Status PromoteProfileVersion(absl::string_view name, int version);
  // Returns the number of versions deleted; NOT_FOUND when none existed.
  absl::StatusOr<int> DeleteProfile(absl::string_view name);

  // --- measurements ---
  // ALREADY_EXISTS when the id is stored; NOT_FOUND when the profile does not exist.
  absl::Status InsertMeasurement(const MeasurementRow& row);
  // Inserts a batch in one transaction and says per row what happened: OK (stored),
  // ALREADY_EXISTS (the id was stored, before or earlier in `rows`), NOT_FOUND (no such
  // profile), INVALID_ARGUMENT (empty id). Any other failure returns that error and
  // stores no row of the batch: all of it is stored or none.
  absl::StatusOr<std::vector<absl::Status>> InsertMeasurements(const std::vector<MeasurementRow>& rows);
  absl::StatusOr<bool> HasMeasurement(absl::string_view id);
  // Oldest first. limit 0 = all.
  absl::StatusOr<std::vector<MeasurementRow>> ListMeasurements(absl::string_view profile_name,
                                                               int limit = 0);
  // The most recent `n` (by insertion), oldest first.
  absl::StatusOr<std::vector<MeasurementRow>> RecentMeasurements(absl::string_view profile_name,
                                                                 int n);
  // At most `limit` (>= 1) measurements of the profile with seq > after_seq, oldest first:
  // pass the last row's seq to read the next page.
  absl::StatusOr<std::vector<MeasurementRow>> MeasurementsAfter(absl::string_view profile_name,
                                                                int64_t after_seq, int limit);
  // The same without bodies.
  absl::StatusOr<std::vector<MeasurementSummary>> MeasurementSummariesAfter(absl::string_view profile_name,
                                                                            int64_t after_seq, int limit);
  // Order statistics of the TIMED measurements of a profile with seq <= through_seq, in
  // ratio order; nullopt when there is no such measurement. RatioAtRank: the one with
  // `rank` (0-based) measurements before it, O(rank) index steps. NextRatio /
  // PreviousRatio: the neighbour of `key` (which need not be stored), O(log n).
  absl::StatusOr<std::optional<RatioKey>> RatioAtRank(absl::string_view profile_name, int64_t rank,
                                                      int64_t through_seq);
  absl::StatusOr<std::optional<RatioKey>> NextRatio(absl::string_view profile_name, const RatioKey& key,
                                                    int64_t through_seq);
  absl::StatusOr<std::optional<RatioKey>> PreviousRatio(absl::string_view profile_name, const RatioKey& key,
                                                        int64_t through_seq);
  // Measurements of the profile inserted after its last calibration run.
  absl::StatusOr<int> CountMeasurementsSinceCalibration(absl::string_view profile_name);

  // --- calibration ---
  // Writes the new profile version (promoted iff promote) and the run record in one
  // transaction; returns the new version. `last_measurement_seq` is the newest
  // measurement the fit saw (0 = the newest stored): measurements after it still count
  // in CountMeasurementsSinceCalibration.
  absl::StatusOr<int> RecordCalibration(absl::string_view name, absl::string_view body,
                                        int from_version, int num_measurements,
                                        absl::string_view report, bool promote = true,
                                        int64_t last_measurement_seq = 0);
  absl::StatusOr<std::optional<CalibrationRunRow>> LastCalibration(absl::string_view name);

  // PRAGMA integrity_check == "ok".
  absl::Status CheckIntegrity();

 private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace paraplan::store

#endif  // PARAPLAN_STORE_STORE_H_
