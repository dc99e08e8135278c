#include "server/calibration_operations.h"

#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace paraplan::server {
namespace {

std::string NewId() {
  static absl::Mutex mu;
  static absl::BitGen* gen = new absl::BitGen;
  absl::MutexLock lock(&mu);
  return absl::StrFormat("cal-%016x", absl::Uniform<uint64_t>(*gen));
}

}  // namespace

absl::StatusOr<v1::CalibrationOperation> CalibrationOperations::Start(const std::string& profile, bool dry_run,
                                                                      Work work) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return absl::UnavailableError("the server is shutting down");
  if (auto it = running_by_profile_.find(profile); it != running_by_profile_.end()) {
    return ops_.at(it->second)->state;  // one per profile: the one running
  }
  if (static_cast<int>(running_by_profile_.size()) >= limits_.max_running) {
    return absl::ResourceExhaustedError(absl::StrCat(limits_.max_running,
                                                     " calibrations are running on this server; start this one "
                                                     "when one of them ends"));
  }
  auto op = std::make_unique<Op>();
  Op* raw = op.get();
  v1::CalibrationOperation& s = op->state;
  s.set_id(NewId());
  s.set_profile(profile);
  s.set_dry_run(dry_run);
  s.set_state(v1::CalibrationOperation::STATE_RUNNING);
  s.set_phase("starting");
  s.set_started_at_unix_ms(absl::ToUnixMillis(absl::Now()));
  const std::string id = s.id();
  running_by_profile_[profile] = id;
  ops_[id] = std::move(op);
  raw->thread = std::thread([this, raw, work = std::move(work)] { Run(raw, work); });
  return raw->state;
}

void CalibrationOperations::Run(Op* op, const Work& work) {
  Interrupt stop;
  stop.deadline = absl::Now() + limits_.timeout;
  stop.cancelled = &op->cancelled;
  absl::StatusOr<v1::CalibrateResponse> r =
      work(stop, [this, op](const std::string& phase) { SetPhase(op, phase); });
  absl::MutexLock lock(&mu_);
  v1::CalibrationOperation& s = op->state;
  s.set_finished_at_unix_ms(absl::ToUnixMillis(absl::Now()));
  s.set_phase("finished");
  if (r.ok()) {
    s.set_state(v1::CalibrationOperation::STATE_DONE);
    *s.mutable_result() = *std::move(r);
  } else {
    s.set_state(v1::CalibrationOperation::STATE_FAILED);
    s.mutable_error()->set_code(static_cast<int>(r.status().code()));
    s.mutable_error()->set_message(std::string(r.status().message()));
  }
  running_by_profile_.erase(s.profile());
  finished_.push_back(s.id());
  Trim();
}

void CalibrationOperations::SetPhase(Op* op, const std::string& phase) {
  absl::MutexLock lock(&mu_);
  op->state.set_phase(phase);
}

void CalibrationOperations::Trim() {
  while (static_cast<int>(finished_.size()) > limits_.max_kept) {
    auto it = ops_.find(finished_.front());
    finished_.pop_front();
    if (it == ops_.end()) continue;
    // Finished: its thread has left Run (or is leaving it, without this lock).
    if (it->second->thread.joinable()) {
      if (it->second->thread.get_id() == std::this_thread::get_id()) {
        it->second->thread.detach();  // the thread trimming itself: nothing left to run
      } else {
        it->second->thread.join();
      }
    }
    ops_.erase(it);
  }
}

absl::StatusOr<v1::CalibrationOperation> CalibrationOperations::Get(const std::string& id) const {
  if (id.empty()) return absl::InvalidArgumentError("operation_id: missing");
  absl::MutexLock lock(&mu_);
  auto it = ops_.find(id);
  if (it == ops_.end()) {
    return absl::NotFoundError(absl::StrCat("operation_id: no calibration \"", id.substr(0, 64),
                                            "\" on this server (it keeps the ", limits_.max_kept,
                                            " most recent, until it restarts)"));
  }
  return it->second->state;
}

void CalibrationOperations::Stop() {
  std::vector<std::thread> threads;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    for (auto& [id, op] : ops_) {
      op->cancelled.store(true);
      if (op->thread.joinable()) threads.push_back(std::move(op->thread));
    }
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace paraplan::server
