#include "server/accuracy.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace paraplan::server {

namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// `for_each(f)` calls f on each point, in measurement order.
template <typename ForEach>
v1::AccuracyStats StatsOf(ForEach for_each) {
  std::vector<double> apes, ratios;
  int hits = 0, misses = 0;
  for_each([&](const AccuracyPoint& p) {
    if (p.memory >= 0) (p.memory ? hits : misses)++;
    if (p.ape < 0) return;
    apes.push_back(p.ape);
    ratios.push_back(p.ratio);
  });
  v1::AccuracyStats s;
  s.set_count(static_cast<int>(apes.size()));
  double sum = 0;
  for (double a : apes) sum += a;
  s.set_mape_ratio(apes.empty() ? 0 : sum / static_cast<double>(apes.size()));
  s.set_median_ape_ratio(Median(std::move(apes)));
  s.set_bias_ratio(Median(std::move(ratios)));
  s.set_memory_hits(hits);
  s.set_memory_misses(misses);
  return s;
}

absl::Status Moved(const std::string& profile) {
  return absl::AbortedError(absl::StrCat("the measurements of profile \"", profile,
                                         "\" changed while their accuracy was read (deleted?); read again"));
}

}  // namespace

v1::AccuracyStats Stats(const std::vector<AccuracyPoint>& points, size_t begin, size_t end) {
  return StatsOf([&](const auto& f) {
    for (size_t i = begin; i < end && i < points.size(); ++i) f(points[i]);
  });
}

v1::AccuracyStats Stats(const std::vector<AccuracyPoint>& points, const std::vector<uint32_t>& indexes) {
  return StatsOf([&](const auto& f) {
    for (uint32_t i : indexes) f(points[i]);
  });
}

template <typename Count>
absl::Status AccuracyTracker::ReadAfter(const std::string& profile, const State& s, const Observer& observe,
                                        Count count) {
  for (;;) {
    absl::StatusOr<std::vector<store::MeasurementSummary>> page =
        store_->MeasurementSummariesAfter(profile, s.read_through, kPageSize);
    if (!page.ok()) return page.status();
    for (const store::MeasurementSummary& m : *page) {
      if (observe) observe(m);
      if (absl::Status st = count(m); !st.ok()) return st;
    }
    if (page->size() < static_cast<size_t>(kPageSize)) return absl::OkStatus();
  }
}

absl::StatusOr<AccuracyTracker::Gauges> AccuracyTracker::Update(const std::string& profile,
                                                                const Observer& observe) {
  absl::MutexLock lock(&mu_);
  auto it = states_.find(profile);
  if (it != states_.end()) {
    absl::StatusOr<bool> still = StillStored(profile, it->second);
    if (!still.ok()) return still.status();
    if (!*still) {  // deleted (and maybe created again) by another process: start afresh
      states_.erase(it);
      it = states_.end();
      metrics_->ForgetProfile(profile);
    }
  }
  if (it == states_.end()) {
    absl::StatusOr<State> loaded = Load(profile, observe);
    if (!loaded.ok()) return loaded.status();
    it = states_.emplace(profile, *loaded).first;
  } else {
    State& s = it->second;
    absl::Status read =
        ReadAfter(profile, s, observe, [&](const store::MeasurementSummary& m) { return Add(profile, m, s); });
    if (!read.ok()) {
      states_.erase(it);  // read afresh next time
      return read;
    }
  }
  absl::StatusOr<Gauges> g = GaugesOf(profile, it->second);
  if (!g.ok()) {
    states_.erase(it);
    return g;
  }
  if (g->measurements > 0) metrics_->SetAccuracy(profile, g->mape, g->bias);
  return g;
}

void AccuracyTracker::Forget(const std::string& profile) {
  absl::MutexLock lock(&mu_);
  states_.erase(profile);
}

size_t AccuracyTracker::tracked() const {
  absl::MutexLock lock(&mu_);
  return states_.size();
}

absl::StatusOr<AccuracyTracker::State> AccuracyTracker::Load(const std::string& profile, const Observer& observe) {
  State s;
  absl::Status read = ReadAfter(profile, s, observe, [&](const store::MeasurementSummary& m) {
    Tally(m, s);
    return absl::OkStatus();
  });
  if (!read.ok()) return read;
  if (s.timed > 0) {
    absl::StatusOr<std::optional<store::RatioKey>> lower =
        store_->RatioAtRank(profile, (s.timed - 1) / 2, s.read_through);
    if (!lower.ok()) return lower.status();
    if (!lower->has_value()) return Moved(profile);
    s.lower = **lower;
  }
  return s;
}

void AccuracyTracker::Tally(const store::MeasurementSummary& m, State& s) {
  if (s.first_seq == 0) s.first_seq = m.seq;
  s.read_through = m.seq;
  ++s.measurements;
  if (!m.timed) return;
  ++s.timed;
  s.ape_sum += AbsRelativeError(m).value_or(0);
}

absl::Status AccuracyTracker::Add(const std::string& profile, const store::MeasurementSummary& m, State& s) {
  Tally(m, s);
  if (!m.timed) return absl::OkStatus();
  const int64_t before = s.timed - 1;
  if (before == 0) {
    s.lower = {m.ratio, m.seq};
    return absl::OkStatus();
  }
  // The new one sorts before the lower median iff its ratio is smaller (on a tie its seq,
  // the greatest so far, puts it after). The median's rank (count - 1) / 2 stays when the
  // count was odd and grows by one when it was even.
  const bool sorts_before = m.ratio < s.lower.ratio;
  absl::StatusOr<std::optional<store::RatioKey>> moved;
  if (before % 2 == 1 && sorts_before) {
    moved = store_->PreviousRatio(profile, s.lower, m.seq);
  } else if (before % 2 == 0 && !sorts_before) {
    moved = store_->NextRatio(profile, s.lower, m.seq);
  } else {
    return absl::OkStatus();
  }
  if (!moved.ok()) return moved.status();
  if (!moved->has_value()) return Moved(profile);
  s.lower = **moved;
  return absl::OkStatus();
}

absl::StatusOr<AccuracyTracker::Gauges> AccuracyTracker::GaugesOf(const std::string& profile, const State& s) {
  Gauges g;
  g.measurements = s.measurements;
  g.timed = s.timed;
  if (s.timed == 0) return g;
  g.mape = s.ape_sum / static_cast<double>(s.timed);
  if (s.timed % 2 == 1) {
    g.bias = s.lower.ratio;
    return g;
  }
  absl::StatusOr<std::optional<store::RatioKey>> upper = store_->NextRatio(profile, s.lower, s.read_through);
  if (!upper.ok()) return upper.status();
  if (!upper->has_value()) return Moved(profile);
  g.bias = 0.5 * (s.lower.ratio + (*upper)->ratio);
  return g;
}

absl::StatusOr<bool> AccuracyTracker::StillStored(const std::string& profile, const State& s) {
  if (s.first_seq == 0) return true;  // nothing counted: nothing to lose
  absl::StatusOr<std::vector<store::MeasurementSummary>> first =
      store_->MeasurementSummariesAfter(profile, s.first_seq - 1, 1);
  if (!first.ok()) return first.status();
  return !first->empty() && first->front().seq == s.first_seq;
}

}  // namespace paraplan::server
