#include "store/sqlite_util.h"

#include <sqlite3.h>

#include "absl/strings/str_cat.h"

namespace paraplan::store {

namespace {
absl::Status Error(sqlite3* db, absl::string_view what) {
  return absl::InternalError(absl::StrCat("sqlite: ", what, ": ", db ? sqlite3_errmsg(db) : "no database"));
}
}  // namespace

Statement::~Statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

void Statement::BindText(int i, absl::string_view v) {
  sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}
void Statement::BindBlob(int i, absl::string_view v) {
  sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}
void Statement::BindInt(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
void Statement::BindDouble(int i, double v) { sqlite3_bind_double(stmt_, i, v); }
void Statement::BindNull(int i) { sqlite3_bind_null(stmt_, i); }

absl::StatusOr<bool> Statement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return Error(db_, "step");
}

absl::Status Statement::Run() {
  for (;;) {
    absl::StatusOr<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
  }
}

std::string Statement::ColumnText(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  const int n = sqlite3_column_bytes(stmt_, col);
  return p == nullptr ? std::string() : std::string(static_cast<const char*>(p), n);
}
int64_t Statement::ColumnInt(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::ColumnDouble(int col) const { return sqlite3_column_double(stmt_, col); }

Database::~Database() {
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

absl::Status Database::Open(const std::string& path) {
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    absl::Status s = absl::UnavailableError(
        absl::StrCat("cannot open database ", path, ": ", db_ ? sqlite3_errmsg(db_) : "out of memory"));
    return s;
  }
  sqlite3_busy_timeout(db_, 5000);
  if (path != ":memory:") {
    if (absl::Status s = ExecScript("PRAGMA journal_mode=WAL"); !s.ok()) return s;
  }
  return ExecScript("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;");
}

absl::StatusOr<Statement> Database::Prepare(absl::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) != SQLITE_OK) {
    return Error(db_, absl::StrCat("prepare \"", sql.substr(0, 60), "\""));
  }
  return Statement(db_, stmt);
}

absl::Status Database::Exec(absl::string_view sql, std::initializer_list<absl::string_view> params) {
  absl::StatusOr<Statement> s = Prepare(sql);
  if (!s.ok()) return s.status();
  int i = 1;
  for (absl::string_view p : params) s->BindText(i++, p);
  return s->Run();
}

absl::Status Database::ExecScript(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    absl::Status s = absl::InternalError(absl::StrCat("sqlite: ", err ? err : "exec failed"));
    sqlite3_free(err);
    return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> Database::QueryInt(absl::string_view sql, std::initializer_list<absl::string_view> params) {
  absl::StatusOr<Statement> s = Prepare(sql);
  if (!s.ok()) return s.status();
  int i = 1;
  for (absl::string_view p : params) s->BindText(i++, p);
  absl::StatusOr<bool> row = s->Step();
  if (!row.ok()) return row.status();
  return *row ? s->ColumnInt(0) : 0;
}

Transaction::~Transaction() {
  if (open_) db_->ExecScript("ROLLBACK").IgnoreError();
}

absl::Status Transaction::Begin() {
  absl::Status s = db_->ExecScript("BEGIN IMMEDIATE");
  open_ = s.ok();
  return s;
}

absl::Status Transaction::Commit() {
  absl::Status s = db_->ExecScript("COMMIT");
  if (s.ok()) open_ = false;
  return s;
}

}  // namespace paraplan::store
