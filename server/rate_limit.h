// RateLimiter: a token bucket per client (rate per second, burst), for write RPCs.
//
// Allow(key) takes one token from `key`'s bucket and says whether there was one; when
// not, RetryAfter() is how long until the next. The map of buckets is bounded: past
// max_keys the least recently seen half is dropped (a dropped client starts full, which
// errs towards letting work through). rate <= 0 turns limiting off. Thread-safe.
#ifndef PARAPLAN_SERVER_RATE_LIMIT_H_
#define PARAPLAN_SERVER_RATE_LIMIT_H_

#include <map>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace paraplan::server {

class RateLimiter {
 public:
  RateLimiter(double rate_per_s, double burst, size_t max_keys = 10000)
      : rate_(rate_per_s), burst_(burst), max_keys_(max_keys) {}

  // `now` is a parameter so tests can drive time.
  bool Allow(const std::string& key, absl::Time now, absl::Duration* retry_after);
  bool enabled() const { return rate_ > 0; }

 private:
  struct Bucket {
    double tokens = 0;
    absl::Time last;
  };
  const double rate_;
  const double burst_;
  const size_t max_keys_;
  absl::Mutex mu_;
  std::map<std::string, Bucket> buckets_ ABSL_GUARDED_BY(mu_);
};

// The client part of a gRPC peer string ("ipv4:10.0.0.7:51234" -> "ipv4:10.0.0.7"), so
// that one host's connections share a bucket; the HTTP API's calls ("http:ipv4:...")
// share the same host's.
std::string ClientOfPeer(absl::string_view peer);

}  // namespace paraplan::server

#endif  // PARAPLAN_SERVER_RATE_LIMIT_H_
