// The SQLite schema of SqliteStore (sqlite_store.h) and the SQL its reads share: the
// migrations (PRAGMA user_version), the column lists of profile, measurement and
// summary rows with the readers that turn such a row into a store.h struct, and the
// queries that walk a profile's timed measurements in the order of their predicted /
// measured ratio through the partial index that migration 3 builds. Values are always
// bound parameters (?1, ?2, ... as each constant says). Internal to store/; the
// constants are immutable; the functions use the caller's connection, which the caller
// holds (sqlite_util.h: not thread-safe by itself).
#ifndef PARAPLAN_STORE_SQLITE_SCHEMA_H_
#define PARAPLAN_STORE_SQLITE_SCHEMA_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/sqlite_util.h"
#include "store/store.h"

namespace paraplan::store {

// Brings the database to this build's schema version, one transaction per migration.
// FAILED_PRECONDITION (naming `path`) when the database is newer than this build.
absl::Status MigrateSqlite(Database& db, const std::string& path);

// A profile_versions row as selected by kProfileColumns or kDefaultProfileColumns.
ProfileRow ReadProfile(Statement& s);
// Columns read by ReadProfile, from profile_versions aliased `v`, for rows of the name
// bound as ?1.
extern const char* const kProfileColumns;
// The same for rows already known to be their name's default.
extern const char* const kDefaultProfileColumns;
// The default version of the name bound as ?1 (a scalar subquery, evaluated once per
// statement), and of the profiles row aliased `p`.
extern const char* const kDefaultVersionOfName1;
extern const char* const kDefaultVersionOfP;

// A measurements row as selected by kMeasurementColumns.
MeasurementRow ReadMeasurement(Statement& s);
extern const char* const kMeasurementColumns;
// A measurements row as selected by kSummaryColumns (no body; timed and ratio computed).
MeasurementSummary ReadSummary(Statement& s);
extern const char* const kSummaryColumns;

// Timed measurements of profile ?1 with seq <= ?2 through the ratio index, as one
// (ratio, seq) row: the one at rank ?3; after (?3, ?4) at the same ratio, then at the
// next ratio; before (?3, ?4) at the same ratio, then at the previous ratio.
extern const char* const kRatioAtRank;
extern const char* const kNextSameRatio;
extern const char* const kNextRatio;
extern const char* const kPreviousSameRatio;
extern const char* const kPreviousRatio;

// Every remaining row of `s`, read by `read`.
template <typename Read>
auto AllRows(Statement& s, Read read) -> absl::StatusOr<std::vector<decltype(read(s))>> {
  std::vector<decltype(read(s))> out;
  for (;;) {
    absl::StatusOr<bool> row = s.Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.push_back(read(s));
  }
}

}  // namespace paraplan::store

#endif  // PARAPLAN_STORE_SQLITE_SCHEMA_H_
