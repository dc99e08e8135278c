#include "store/postgres_conn.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace paraplan::store::pg {

Connection::Connection(const std::string& url) : conn(std::make_unique<pqxx::connection>(url)) {
  quiet = std::make_unique<pqxx::quiet_errorhandler>(*conn);
  pqxx::nontransaction tx(*conn);
  tx.exec("SET client_min_messages TO warning");
  tx.exec("SET application_name TO 'paraplan-server'");
}

namespace {

// The first line of a server error ("ERROR:  ..."), at most 300 bytes.
std::string FirstLine(absl::string_view what) {
  absl::string_view line = what.substr(0, what.find('\n'));
  if (line.size() > 300) return absl::StrCat(line.substr(0, 300), "...");
  return std::string(line);
}

}  // namespace

absl::Status PgStatus(const std::exception& e) {
  const std::string msg = absl::StrCat("postgresql: ", FirstLine(e.what()));
  if (dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr) return absl::UnavailableError(msg);
  if (dynamic_cast<const pqxx::in_doubt_error*>(&e) != nullptr) {
    return absl::UnavailableError(absl::StrCat(msg, " (the connection was lost during COMMIT: the write may or may not be stored)"));
  }
  if (dynamic_cast<const pqxx::transaction_rollback*>(&e) != nullptr) return absl::AbortedError(msg);
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e); sql != nullptr) {
    const std::string& state = sql->sqlstate();
    if (absl::StartsWith(state, "08") || absl::StartsWith(state, "57P")) return absl::UnavailableError(msg);
    if (absl::StartsWith(state, "40")) return absl::AbortedError(msg);
    if (absl::StartsWith(state, "53")) return absl::ResourceExhaustedError(msg);
  }
  return absl::InternalError(msg);
}

bool ConnectionLost(const std::exception& e, const pqxx::connection& conn) {
  if (dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr || !conn.is_open()) return true;
  const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e);
  return sql != nullptr && (absl::StartsWith(sql->sqlstate(), "08") || absl::StartsWith(sql->sqlstate(), "57P"));
}

int32_t NameHash(absl::string_view name) {
  uint32_t h = 2166136261u;
  for (unsigned char c : name) {
    h ^= c;
    h *= 16777619u;
  }
  return static_cast<int32_t>(h);
}

Pool::Pool(std::string url, std::vector<Prepared> statements, int max_open)
    : url_(std::move(url)), statements_(std::move(statements)), max_open_(std::max(1, max_open)) {}

Pool::~Pool() = default;

Pool::Handle::~Handle() {
  if (c_ != nullptr) pool_->Return(std::move(c_));
}

void Pool::Handle::Discard() {
  if (c_ == nullptr) return;
  c_.reset();
  pool_->Closed();
}

absl::StatusOr<std::unique_ptr<Connection>> Pool::OpenDedicated() const {
  try {
    return std::make_unique<Connection>(url_);
  } catch (const std::exception& e) {
    return PgStatus(e);
  }
}

absl::StatusOr<Pool::Handle> Pool::Acquire() {
  {
    absl::MutexLock lock(&mu_);
    auto available = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !idle_.empty() || open_ < max_open_; };
    mu_.Await(absl::Condition(&available));
    if (!idle_.empty()) {
      std::unique_ptr<Connection> c = std::move(idle_.back());
      idle_.pop_back();
      return Handle(this, std::move(c));
    }
    ++open_;  // reserved: connect outside the lock
  }
  try {
    auto c = std::make_unique<Connection>(url_);
    for (const Prepared& p : statements_) c->conn->prepare(p.name, p.sql);
    return Handle(this, std::move(c));
  } catch (const std::exception& e) {
    Closed();
    return PgStatus(e);
  }
}

void Pool::Return(std::unique_ptr<Connection> c) {
  absl::MutexLock lock(&mu_);
  idle_.push_back(std::move(c));
}

void Pool::Closed() {
  std::vector<std::unique_ptr<Connection>> stale;
  {
    absl::MutexLock lock(&mu_);
    --open_;
    open_ -= static_cast<int>(idle_.size());
    stale.swap(idle_);
  }
  // Closed outside the lock (each close may wait on the network).
}

}  // namespace paraplan::store::pg
