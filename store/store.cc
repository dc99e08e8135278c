// Store::Open picks the implementation by the target's form; the Store helpers both
// implementations share.
#include "store/store.h"

#include "absl/strings/match.h"
#include "store/postgres_store.h"
#include "store/sqlite_store.h"

namespace paraplan::store {

bool Store::IsPostgresTarget(absl::string_view target) {
  return absl::StartsWith(target, "postgresql://") || absl::StartsWith(target, "postgres://");
}

std::string Store::Redacted(absl::string_view target) {
  if (!IsPostgresTarget(target)) return std::string(target);
  std::string out(target);
  // scheme://[user[:password]@]host[:port][/db][?params]: the user info ends at the last
  // '@' before the path or query.
  const size_t start = out.find("://") + 3;
  const size_t authority_end = out.find_first_of("/?", start);
  const size_t at = out.rfind('@', authority_end == std::string::npos ? std::string::npos : authority_end);
  if (at != std::string::npos && at >= start) {
    const size_t colon = out.find(':', start);
    if (colon < at) out.replace(colon + 1, at - colon - 1, "***");
  }
  // ...?password=SECRET&...
  const size_t query = out.find('?');
  for (size_t p = query; p != std::string::npos && (p = out.find("password=", p)) != std::string::npos;) {
    if (out[p - 1] != '?' && out[p - 1] != '&') {
      ++p;
      continue;
    }
    const size_t value = p + 9;
    const size_t end = out.find('&', value);
    out.replace(value, end == std::string::npos ? std::string::npos : end - value, "***");
    p = value;
  }
  return out;
}

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& target) {
  if (IsPostgresTarget(target)) return PostgresStore::Open(target);
  return SqliteStore::Open(target);
}

absl::StatusOr<bool> Store::SeedProfile(absl::string_view name, absl::string_view body) {
  absl::StatusOr<int> v = CreateProfile(name, body, "builtin");
  if (v.ok()) return true;
  if (v.status().code() == absl::StatusCode::kAlreadyExists) return false;
  return v.status();
}

absl::Status Store::InsertMeasurement(const MeasurementRow& row) {
  absl::StatusOr<std::vector<absl::Status>> out = InsertMeasurements({row});
  if (!out.ok()) return out.status();
  return out->front();
}

}  // namespace paraplan::store
