#include "server/auto_calibrator.h"

#include <algorithm>
#include <utility>

#include "server/background_priority.h"

namespace paraplan::server {

int AutoCalibrator::Threshold(const std::string& profile) const {
  auto it = failed_at_.find(profile);
  if (it == failed_at_.end()) return after_;
  return it->second + std::max(after_, it->second);  // doubles after each failure
}

int AutoCalibrator::DueAt(const std::string& profile) {
  absl::MutexLock lock(&mu_);
  return Threshold(profile);
}

bool AutoCalibrator::Due(const std::string& profile, int pending) {
  absl::MutexLock lock(&mu_);
  return pending >= Threshold(profile);
}

bool AutoCalibrator::Schedule(const std::string& profile) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return false;
  if (running_ == profile) {
    again_ = true;  // the worker looks again when this one is done
    return false;
  }
  if (!queued_.insert(profile).second) return false;
  queue_.push_back(profile);
  if (!thread_.joinable()) thread_ = std::thread(&AutoCalibrator::Loop, this);
  return true;
}

bool AutoCalibrator::Stored(const std::string& profile, int rows, int64_t* mark) {
  absl::MutexLock lock(&mu_);
  Tally& t = tally_[profile];
  t.since += rows;
  if (mark != nullptr) *mark = t.since;
  return t.counted < 0 || t.counted + t.since >= Threshold(profile);
}

void AutoCalibrator::Counted(const std::string& profile, int pending, int64_t mark) {
  absl::MutexLock lock(&mu_);
  Tally& t = tally_[profile];
  t = Tally{pending, std::max<int64_t>(0, t.since - mark)};
}

void AutoCalibrator::Failed(const std::string& profile, int pending) {
  absl::MutexLock lock(&mu_);
  failed_at_[profile] = pending;
  tally_[profile] = Tally{pending, 0};
}

void AutoCalibrator::Reset(const std::string& profile) {
  absl::MutexLock lock(&mu_);
  failed_at_.erase(profile);
  tally_.erase(profile);
}

void AutoCalibrator::Stop() {
  std::thread worker;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    queue_.clear();
    queued_.clear();
    worker = std::move(thread_);
  }
  if (worker.joinable()) worker.join();
}

void AutoCalibrator::Loop() {
  LowerThisThreadsPriority();  // this thread only ever fits
  for (;;) {
    std::string profile;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &AutoCalibrator::HasWork));
      if (stopping_) return;
      profile = std::move(queue_.front());
      queue_.pop_front();
      queued_.erase(profile);
      running_ = profile;
      again_ = false;
    }
    run_(profile);
    absl::MutexLock lock(&mu_);
    running_.clear();
    if (again_ && !stopping_ && queued_.insert(profile).second) queue_.push_back(profile);
  }
}

}  // namespace paraplan::server
