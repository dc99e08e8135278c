#include "store/named_locks.h"

#include <utility>

namespace paraplan::store {

class NamedLocks::Held final : public Lease {
 public:
  Held(NamedLocks* owner, std::string name) : owner_(owner), name_(std::move(name)) {}
  ~Held() override { owner_->Release(name_); }

 private:
  NamedLocks* owner_;
  std::string name_;
};

std::unique_ptr<Lease> NamedLocks::Acquire(absl::string_view name, bool wait) {
  const std::string key(name);
  absl::MutexLock lock(&mu_);
  if (wait) {
    auto is_free = [this, &key]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !held_.contains(key); };
    mu_.Await(absl::Condition(&is_free));
  } else if (held_.contains(key)) {
    return nullptr;
  }
  held_.insert(key);
  return std::make_unique<Held>(this, key);
}

void NamedLocks::Release(const std::string& name) {
  absl::MutexLock lock(&mu_);
  held_.erase(name);
}

}  // namespace paraplan::store
