#include "server/rate_limit.h"

#include "absl/strings/strip.h"

#include <algorithm>
#include <vector>

namespace paraplan::server {

bool RateLimiter::Allow(const std::string& key, absl::Time now, absl::Duration* retry_after) {
  if (rate_ <= 0) return true;
  absl::MutexLock lock(&mu_);
  auto it = buckets_.find(key);
  if (it == buckets_.end()) {
    if (buckets_.size() >= max_keys_) {
      // Drop the least recently seen half.
      std::vector<std::pair<absl::Time, std::string>> seen;
      seen.reserve(buckets_.size());
      for (const auto& [k, b] : buckets_) seen.emplace_back(b.last, k);
      std::sort(seen.begin(), seen.end());
      for (size_t i = 0; i < seen.size() / 2; ++i) buckets_.erase(seen[i].second);
    }
    it = buckets_.emplace(key, Bucket{burst_, now}).first;
  }
  Bucket& b = it->second;
  b.tokens = std::min(burst_, b.tokens + rate_ * absl::ToDoubleSeconds(std::max(absl::ZeroDuration(), now - b.last)));
  b.last = now;
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return true;
  }
  if (retry_after != nullptr) *retry_after = absl::Seconds((1 - b.tokens) / rate_);
  return false;
}

std::string ClientOfPeer(absl::string_view peer) {
  absl::ConsumePrefix(&peer, "http:");  // the HTTP API's calls: the same host's budget
  const size_t colon = peer.rfind(':');
  const size_t first = peer.find(':');
  // "ipv4:HOST:PORT" / "ipv6:[ADDR]:PORT": drop the port; anything else as it is.
  if (colon != absl::string_view::npos && first != absl::string_view::npos && colon > first) {
    return std::string(peer.substr(0, colon));
  }
  return std::string(peer);
}

}  // namespace paraplan::server
