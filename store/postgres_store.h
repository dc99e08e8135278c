// PostgresStore: the Store (store.h) in a PostgreSQL database, shared by any number of
// server replicas. Same schema meaning and migrations as SqliteStore (postgres_schema.h);
// libpqxx stays inside store/postgres_*.cc.
//
//  - Open(url) takes a libpq connection URI (postgresql://[user[:password]@]host[:port]/db
//    [?param=value...]); libpq's environment (PGPASSWORD, PGSSLMODE, ~/.pgpass, ...)
//    applies as usual. It connects, then migrates under an advisory lock (replicas that
//    start together migrate once).
//  - Every write is one READ COMMITTED transaction that first takes a transaction-level
//    advisory lock per profile it touches (in key order: no deadlocks), so writes to one
//    profile are serialised across every replica: versions are numbered without gaps or
//    conflicts, and measurement seqs of a profile are drawn in commit order (store.h).
//  - Measurement ids: INSERT ... ON CONFLICT (id) DO NOTHING; a row not inserted is
//    ALREADY_EXISTS, whether stored before, by another replica, or earlier in the batch.
//  - Reads go straight to the database (no caches): what one replica wrote is visible
//    through every other as soon as its call returned.
//  - LockCalibration: a session advisory lock (pg_try_advisory_lock / pg_advisory_lock)
//    on a connection of its own, held by the Lease; a replica that dies releases it.
//  - Errors: libpqxx exceptions become statuses at this boundary (postgres_conn.h: a lost
//    connection is UNAVAILABLE and, before anything was written, retried once on a fresh
//    connection).
// Thread-safe: a pool of up to kMaxConnections connections.
#ifndef PARAPLAN_STORE_POSTGRES_STORE_H_
#define PARAPLAN_STORE_POSTGRES_STORE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "store/store.h"

namespace paraplan::store {

class PostgresStore final : public Store {
 public:
  static constexpr int kMaxConnections = 8;

  // UNIMPLEMENTED when this build has no PostgreSQL support (libpqxx missing at build time).
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& url);
  ~PostgresStore() override;

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

  // The schema version is this build's and the database answers.
  absl::Status CheckIntegrity() override;

 private:
  struct Impl;
  explicit PostgresStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace paraplan::store

#endif  // PARAPLAN_STORE_POSTGRES_STORE_H_
