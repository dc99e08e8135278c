// Thin RAII wrappers over the SQLite C API for store.cc: a Database connection
// (WAL, foreign keys, busy timeout), prepared Statements with bound parameters, and a
// Transaction that starts with BEGIN IMMEDIATE and rolls back unless committed. Values
// always travel as bound parameters: there is no way here to splice one into SQL text.
// Not thread-safe by themselves; Store serialises access with its mutex.
#ifndef PARAPLAN_STORE_SQLITE_UTIL_H_
#define PARAPLAN_STORE_SQLITE_UTIL_H_

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct sqlite3;
struct sqlite3_stmt;

namespace paraplan::store {

class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Statement(Statement&& o) noexcept : db_(o.db_), stmt_(o.stmt_) { o.stmt_ = nullptr; }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Back to before the first Step, bindings cleared, to run the statement again.
  void Reset();
  void BindText(int index, absl::string_view v);
  void BindBlob(int index, absl::string_view v);
  void BindInt(int index, int64_t v);
  void BindDouble(int index, double v);
  void BindNull(int index);
  // true while a row is available.
  absl::StatusOr<bool> Step();
  // Steps to completion (for statements that return no rows).
  absl::Status Run();
  std::string ColumnText(int col) const;  // TEXT or BLOB, byte-exact
  int64_t ColumnInt(int col) const;
  double ColumnDouble(int col) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

class Database {
 public:
  Database() = default;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  absl::Status Open(const std::string& path);
  absl::StatusOr<Statement> Prepare(absl::string_view sql);
  // One statement with text parameters (bound, never spliced into the SQL).
  absl::Status Exec(absl::string_view sql, std::initializer_list<absl::string_view> params);
  // Several statements without parameters (schema, pragmas, transaction control).
  absl::Status ExecScript(const std::string& sql);
  // First column of the first row (0 when no row) of a query with text parameters.
  absl::StatusOr<int64_t> QueryInt(absl::string_view sql, std::initializer_list<absl::string_view> params = {});
  sqlite3* handle() { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

class Transaction {
 public:
  explicit Transaction(Database* db) : db_(db) {}
  ~Transaction();
  absl::Status Begin();  // BEGIN IMMEDIATE
  absl::Status Commit();

 private:
  Database* db_;
  bool open_ = false;
};

}  // namespace paraplan::store

#endif  // PARAPLAN_STORE_SQLITE_UTIL_H_
