// PostgresTestInstance: a throwaway PostgreSQL server for tests, from Debian's binaries
// (/usr/lib/postgresql/*/bin, the newest; PARAPLAN_PG_BINDIR overrides) in a temporary
// directory, without root and without a system service:
//   initdb -D DIR/data -U paraplan --auth=trust; pg_ctl -D DIR/data -o "-k DIR -p PORT
//   -c listen_addresses=127.0.0.1 ..." -w start; databases made with psql; pg_ctl stop.
// initdb and pg_ctl refuse to run as root: when the tests run as root, they (and the
// directory) belong to the user "nobody". A watchdog process stops the server and
// removes the directory when the test process ends in any way (even SIGKILL), so no
// server outlives its tests. Test-only: drives the binaries, not libpqxx.
#ifndef PARAPLAN_STORE_POSTGRES_TEST_INSTANCE_H_
#define PARAPLAN_STORE_POSTGRES_TEST_INSTANCE_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace paraplan::store {

class PostgresTestInstance {
 public:
  // The process-wide instance, started on first use (a few seconds) and stopped at exit.
  // nullptr when PostgreSQL cannot run here; `why` then says why (tests GTEST_SKIP with it).
  static PostgresTestInstance* Shared(std::string* why);
  // A server of its own. NOT_FOUND when the binaries are missing.
  static absl::StatusOr<std::unique_ptr<PostgresTestInstance>> Start();
  ~PostgresTestInstance();
  PostgresTestInstance(const PostgresTestInstance&) = delete;
  PostgresTestInstance& operator=(const PostgresTestInstance&) = delete;

  // A new, empty database; its connection URI (postgresql://paraplan@127.0.0.1:PORT/NAME).
  absl::StatusOr<std::string> NewDatabase();
  // Runs `sql` with psql on the database of `url` (stops at the first error); returns
  // psql's unaligned, tuples-only output.
  absl::StatusOr<std::string> Psql(const std::string& url, const std::string& sql);
  int port() const { return port_; }

 private:
  PostgresTestInstance() = default;

  std::string bindir_, root_;
  int port_ = 0;
  bool started_ = false;
  uid_t uid_ = 0;  // the user the server runs as (ours unless we are root)
  gid_t gid_ = 0;
  pid_t watchdog_ = -1;
  int watchdog_fd_ = -1;  // its stdin: closing it (or dying) makes it clean up
  int databases_ = 0;
};

}  // namespace paraplan::store

#endif  // PARAPLAN_STORE_POSTGRES_TEST_INSTANCE_H_
