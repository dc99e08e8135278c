// The PostgreSQL plumbing under PostgresStore (postgres_store.h): a bounded pool of
// libpqxx connections that each carry the store's prepared statements, the mapping of
// libpqxx exceptions to absl statuses, bytea values, and advisory-lock keys.
// INTERNAL to store/: only postgres_*.cc include this header (it includes libpqxx, which
// nothing else should pay for or see); no exception leaves those files.
//
// Error mapping (PgStatus): a lost connection (and "cannot connect now", admin
// shutdown) is UNAVAILABLE; a COMMIT whose outcome is unknown is UNAVAILABLE saying so;
// a serialization failure or deadlock is ABORTED; out of resources (SQLSTATE class 53)
// is RESOURCE_EXHAUSTED; anything else INTERNAL. Messages keep the first line of the
// server's error, at most 300 bytes (a DETAIL line can repeat a whole row).
#ifndef PARAPLAN_STORE_POSTGRES_CONN_H_
#define PARAPLAN_STORE_POSTGRES_CONN_H_

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <pqxx/pqxx>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace paraplan::store::pg {

// A prepared statement: its name and SQL ($1, $2, ... parameters).
struct Prepared {
  const char* name;
  const char* sql;
};

// One open connection: notices are silenced (they would go to stderr).
struct Connection {
  explicit Connection(const std::string& url);  // throws pqxx exceptions
  std::unique_ptr<pqxx::connection> conn;
  std::unique_ptr<pqxx::quiet_errorhandler> quiet;  // after conn: destroyed first
};

absl::Status PgStatus(const std::exception& e);
// Whether `e` (thrown by a call on `conn`) means the connection is gone: nothing more
// can run on it, and nothing of an uncommitted transaction was written.
bool ConnectionLost(const std::exception& e, const pqxx::connection& conn);

// A caller's bytes as a bytea parameter (binary: NUL and any byte are data).
inline pqxx::binarystring Bytes(absl::string_view v) { return pqxx::binarystring(v.data(), v.size()); }
// A bytea column's bytes.
inline std::string BytesOf(const pqxx::field& f) { return f.is_null() ? std::string() : pqxx::binarystring(f).str(); }

// Keys of the two-int advisory locks (pg_advisory_*lock(int, int)): a key space and a
// 32-bit hash of a name (FNV-1a; a collision only makes two names share a lock).
enum class LockSpace : int32_t {
  kMigration = 0x50500000,    // schema migrations (name "")
  kProfileWrite = 0x50500001,  // every write that touches a profile, per transaction
  kCalibration = 0x50500002,   // one calibration of a profile at a time, per session
};
int32_t NameHash(absl::string_view name);

class Pool {
 public:
  // At most `max_open` connections to `url`, each with `statements` prepared.
  Pool(std::string url, std::vector<Prepared> statements, int max_open);
  ~Pool();

  // A connection of the pool while held; returned to it on destruction unless Discard()ed.
  class Handle {
   public:
    Handle(Pool* pool, std::unique_ptr<Connection> c) : pool_(pool), c_(std::move(c)) {}
    Handle(Handle&& o) noexcept = default;
    ~Handle();
    pqxx::connection& conn() { return *c_->conn; }
    // The connection is broken: close it instead of returning it, and close the idle
    // ones too (after a server restart they all are).
    void Discard();

   private:
    Pool* pool_;
    std::unique_ptr<Connection> c_;
  };

  // An idle connection, a new one while fewer than max_open are open, else waits for one.
  absl::StatusOr<Handle> Acquire() ABSL_LOCKS_EXCLUDED(mu_);
  // A new connection outside the pool (session-level advisory locks live on it).
  absl::StatusOr<std::unique_ptr<Connection>> OpenDedicated() const;

  // Runs f(pqxx::connection&) on a pooled connection; a pqxx exception becomes a status.
  // A lost connection (not during COMMIT: nothing was written) is discarded and f runs
  // once more on a fresh one. f returns absl::Status or absl::StatusOr<T>.
  template <typename F>
  auto Run(F f) -> decltype(f(std::declval<pqxx::connection&>())) {
    for (int attempt = 0;; ++attempt) {
      absl::StatusOr<Handle> h = Acquire();
      if (!h.ok()) return h.status();
      try {
        return f(h->conn());
      } catch (const pqxx::in_doubt_error& e) {
        h->Discard();
        return PgStatus(e);
      } catch (const std::exception& e) {
        if (!ConnectionLost(e, h->conn())) return PgStatus(e);
        h->Discard();
        if (attempt > 0) return PgStatus(e);
      }
    }
  }

 private:
  void Return(std::unique_ptr<Connection> c) ABSL_LOCKS_EXCLUDED(mu_);
  void Closed() ABSL_LOCKS_EXCLUDED(mu_);  // a handed-out connection was discarded

  const std::string url_;
  const std::vector<Prepared> statements_;
  const int max_open_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_ ABSL_GUARDED_BY(mu_);
  int open_ ABSL_GUARDED_BY(mu_) = 0;  // idle + handed out
};

}  // namespace paraplan::store::pg

#endif  // PARAPLAN_STORE_POSTGRES_CONN_H_
