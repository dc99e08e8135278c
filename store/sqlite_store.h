// SqliteStore: the Store (store.h) in one SQLite file — the embedded default, for one
// server process. WAL mode, foreign keys on, every write in one BEGIN IMMEDIATE
// transaction, schema migrations by PRAGMA user_version, every value a bound parameter
// (sqlite_util.h). LockCalibration is in-process (NamedLocks): a SQLite file is served
// by one process. Thread-safe: one connection guarded by a mutex; SQLite's busy_timeout
// covers other processes that open the file (tools, a restarted server).
#ifndef PARAPLAN_STORE_SQLITE_STORE_H_
#define PARAPLAN_STORE_SQLITE_STORE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "store/named_locks.h"
#include "store/store.h"

namespace paraplan::store {

class SqliteStore final : public Store {
 public:
  // Opens (creating if needed) the database file and migrates its schema.
  // ":memory:" is accepted for tests of this module only.
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& path);
  ~SqliteStore() override;

  absl::StatusOr<int> PutProfileVersion(absl::string_view name, absl::string_view body, absl::string_view origin,
                                        bool promote = true) override;
  absl::StatusOr<int> CreateProfile(absl::string_view name, absl::string_view body,
                                    absl::string_view origin) override;
  absl::StatusOr<ProfileRow> GetProfile(absl::string_view name, int version = 0) override;
  absl::StatusOr<std::vector<ProfileRow>> ListLatestProfiles(absl::string_view after_name, int limit) override;
  absl::StatusOr<std::vector<ProfileRow>> ListProfileVersions(absl::string_view name) override;
  absl::Status PromoteProfileVersion(absl::string_view name, int version) override;
  absl::StatusOr<int> DeleteProfile(absl::string_view name) override;

  absl::StatusOr<std::vector<absl::Status>> InsertMeasurements(const std::vector<MeasurementRow>& rows) override;
  absl::StatusOr<bool> HasMeasurement(absl::string_view id) override;
  absl::StatusOr<std::vector<MeasurementRow>> ListMeasurements(absl::string_view profile_name,
                                                               int limit = 0) override;
  absl::StatusOr<std::vector<MeasurementRow>> RecentMeasurements(absl::string_view profile_name, int n) override;
  absl::StatusOr<std::vector<MeasurementRow>> MeasurementsAfter(absl::string_view profile_name, int64_t after_seq,
                                                                int limit) override;
  absl::StatusOr<std::vector<MeasurementSummary>> MeasurementSummariesAfter(absl::string_view profile_name,
                                                                            int64_t after_seq, int limit) override;
  absl::StatusOr<std::optional<RatioKey>> RatioAtRank(absl::string_view profile_name, int64_t rank,
                                                      int64_t through_seq) override;
  absl::StatusOr<std::optional<RatioKey>> NextRatio(absl::string_view profile_name, const RatioKey& key,
                                                    int64_t through_seq) override;
  absl::StatusOr<std::optional<RatioKey>> PreviousRatio(absl::string_view profile_name, const RatioKey& key,
                                                        int64_t through_seq) override;
  absl::StatusOr<int> CountMeasurementsSinceCalibration(absl::string_view profile_name, int64_t limit) override;

  absl::StatusOr<int> RecordCalibration(absl::string_view name, absl::string_view body, int from_version,
                                        int num_measurements, absl::string_view report, bool promote = true,
                                        int64_t last_measurement_seq = 0) override;
  absl::StatusOr<std::optional<CalibrationRunRow>> LastCalibration(absl::string_view name) override;
  absl::StatusOr<std::unique_ptr<Lease>> LockCalibration(absl::string_view name, bool wait) override;

  absl::Status CheckIntegrity() override;

 private:
  struct Impl;
  explicit SqliteStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  NamedLocks calibration_locks_;
};

}  // namespace paraplan::store

#endif  // PARAPLAN_STORE_SQLITE_STORE_H_
