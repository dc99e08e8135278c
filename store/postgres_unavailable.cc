// PostgresStore in a build without libpqxx: Open says so. (CMake compiles this file
// instead of postgres_*.cc when pkg-config finds no libpqxx.)
#include "absl/status/status.h"
#include "store/postgres_store.h"

namespace paraplan::store {

absl::StatusOr<std::unique_ptr<Store>> PostgresStore::Open(const std::string&) {
  return absl::UnimplementedError(
      "this paraplan-server was built without PostgreSQL support (libpqxx-dev missing at build time; "
      "scripts/deps.sh installs it)");
}

}  // namespace paraplan::store
