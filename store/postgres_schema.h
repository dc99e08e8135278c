// The PostgreSQL schema of PostgresStore and its migrations — the same tables, columns
// and meaning as SqliteStore's (sqlite_schema.cc), migration for migration, with
// PostgreSQL types: names, ids, origins, bodies and reports are BYTEA (any bytes, ordered
// bytewise like SQLite's BINARY text), seq is an identity column (a sequence with cache
// 1: values grow in the order they are drawn, across sessions), and a NaN in a REAL
// column is refused (SQLite stores NaN as NULL, which NOT NULL refuses). The version
// lives in a one-row table schema_version (SQLite: PRAGMA user_version).
// INTERNAL to store/ (includes libpqxx through postgres_conn.h).
#ifndef PARAPLAN_STORE_POSTGRES_SCHEMA_H_
#define PARAPLAN_STORE_POSTGRES_SCHEMA_H_

#include "absl/status/status.h"
#include "store/postgres_conn.h"

namespace paraplan::store::pg {

// The schema version this build writes and reads.
int SchemaVersion();

// Brings the database to SchemaVersion() in one transaction, under an advisory lock so
// that replicas starting together migrate once. FAILED_PRECONDITION when the database is
// newer than this build. Throws pqxx exceptions (the caller maps them).
absl::Status Migrate(pqxx::connection& conn);

// The version stored in the database (0 before the first migration). Throws.
int StoredVersion(pqxx::transaction_base& tx);

}  // namespace paraplan::store::pg

#endif  // PARAPLAN_STORE_POSTGRES_SCHEMA_H_
