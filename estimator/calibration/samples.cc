#include "estimator/calibration/samples.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace paraplan {

namespace {

// FNV-1a: a stable hash (std::hash may differ between standard libraries), used only to
// break ties without favouring the strata that sort first.
uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// Shape keys of one measurement, coarsest first.
constexpr int kNumLevels = 6;
const char* const kLevelNames[kNumLevels] = {"GPU count", "TP", "PP", "model size", "DP", "micro-batch"};

std::vector<std::string> ShapeKeys(const CalibrationSample& s) {
  const ParallelConfig c = s.config.Normalized();
  return {absl::StrCat(c.NumGpus()),         absl::StrCat(c.tensor_parallel),
          absl::StrCat(c.pipeline_parallel), ModelKey(s),
          absl::StrCat(c.data_parallel),     absl::StrCat(c.micro_batch_size)};
}

std::string Prefix(const std::vector<std::string>& keys, int levels) {
  return absl::StrJoin(keys.begin(), keys.begin() + levels, "|");
}

}  // namespace

std::string ModelKey(const CalibrationSample& s) {
  const Workload& w = s.workload;
  if (w.kind == Workload::Kind::kLayerGraph) {
    return absl::StrCat(w.name, " layers", w.layer_graph.layers.size());
  }
  const TransformerSpec& t = w.transformer;
  return absl::StrCat(w.name, " h", t.hidden_size, " l", t.num_layers, " s", t.seq_length);
}

std::string ConfigGroup(const CalibrationSample& s) {
  const ParallelConfig c = s.config.Normalized();
  // A CNN's model-parallel splits (spatial, filter, channel) shape its run as TP and PP
  // shape a transformer's.
  return absl::StrCat(ModelKey(s), " tp", c.tensor_parallel, " pp", c.pipeline_parallel, " sp", c.spatial_parallel,
                      " fp", c.filter_parallel, " cp", c.channel_parallel);
}

namespace {

// A configuration's identity for BoundedSamples: its group, every degree, the batch
// sizes, recompute and ZeRO.
std::string ConfigurationKey(const CalibrationSample& s) {
  const ParallelConfig c = s.config.Normalized();
  return absl::StrCat(ConfigGroup(s), " dp", c.data_parallel, " cp", c.context_parallel, " ep", c.expert_parallel,
                      " etp", c.expert_tensor_parallel, " v", c.virtual_pipeline_stages, " mb", c.micro_batch_size,
                      " gb", c.global_batch_size, " rc", static_cast<int>(c.recompute), " z", c.zero_stage, " sq",
                      c.sequence_parallel, " fw", static_cast<int>(c.framework));
}

}  // namespace

BoundedSamples::BoundedSamples(int per_configuration, int max_configurations)
    : per_configuration_(std::max(1, per_configuration)), max_configurations_(std::max(1, max_configurations)) {}

namespace {

int GpuBand(const CalibrationSample& s) {
  const int64_t gpus = s.config.Normalized().NumGpus();
  int band = 0;
  for (int64_t upper : kGpuBands) {
    if (gpus <= upper) return band;
    ++band;
  }
  return band;
}

}  // namespace

void BoundedSamples::Add(CalibrationSample s) {
  ++added_;
  Band& band = bands_[GpuBand(s)];
  std::string key = ConfigurationKey(s);
  auto it = band.kept.find(key);
  if (it == band.kept.end()) {
    const uint64_t hash = std::hash<std::string>()(key) * 0x9E3779B97F4A7C15ull;  // spread the bits
    if (!band.Admitted(hash)) return;
    it = band.kept.emplace(std::move(key), Kept{hash, {}, 0}).first;
    while (static_cast<int>(band.kept.size()) > max_configurations_ && band.level < 63) {
      ++band.level;
      for (auto k = band.kept.begin(); k != band.kept.end();) {
        k = band.Admitted(k->second.hash) ? std::next(k) : band.kept.erase(k);
      }
    }
    if (!band.Admitted(hash)) return;  // its own configuration fell out with the rest (`it` erased)
  }
  Kept& k = it->second;
  if (static_cast<int>(k.recent.size()) < per_configuration_) {
    k.recent.push_back(std::move(s));
  } else {
    k.recent[k.next] = std::move(s);
    k.next = (k.next + 1) % k.recent.size();
  }
}

int64_t BoundedSamples::kept() const {
  int64_t n = 0;
  for (const auto& [index, band] : bands_) {
    for (const auto& [key, k] : band.kept) n += static_cast<int64_t>(k.recent.size());
  }
  return n;
}

std::vector<CalibrationSample> BoundedSamples::Take() {
  std::vector<CalibrationSample> out;
  out.reserve(static_cast<size_t>(kept()));
  for (auto& [index, band] : bands_) {
    for (auto& [key, k] : band.kept) {
      for (size_t i = 0; i < k.recent.size(); ++i) out.push_back(std::move(k.recent[(k.next + i) % k.recent.size()]));
    }
  }
  bands_.clear();
  return out;
}

std::vector<CalibrationSample> CanonicalOrder(absl::Span<const CalibrationSample> samples) {
  std::vector<std::pair<std::string, size_t>> keyed;
  keyed.reserve(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    const CalibrationSample& s = samples[i];
    keyed.emplace_back(absl::StrCat(ConfigurationKey(s), "|", s.config.Normalized().ShortString(), "|",
                                    static_cast<int>(s.workload.precision), "|",
                                    absl::StrFormat("%a|%a|%d", s.measured_iteration_time_s,
                                                    s.measured_peak_memory_gib, s.out_of_memory)),
                       i);
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<CalibrationSample> out;
  out.reserve(samples.size());
  for (const auto& k : keyed) out.push_back(samples[k.second]);
  return out;
}

int CountGroups(absl::Span<const CalibrationSample> samples) {
  std::vector<std::string> groups;
  for (const CalibrationSample& s : samples) groups.push_back(ConfigGroup(s));
  std::sort(groups.begin(), groups.end());
  return static_cast<int>(std::unique(groups.begin(), groups.end()) - groups.begin());
}

Subsample StratifiedSubsample(absl::Span<const CalibrationSample> samples, int budget) {
  Subsample out;
  const int n = static_cast<int>(samples.size());
  if (n <= budget) {
    out.indices.resize(n);
    std::iota(out.indices.begin(), out.indices.end(), 0);
    out.note = absl::StrCat("all ", n, " usable measurements");
    return out;
  }
  std::vector<std::vector<std::string>> keys;
  for (const CalibrationSample& s : samples) keys.push_back(ShapeKeys(s));
  // The finest prefix with at most `budget` strata (at least the coarsest level).
  int levels = 1;
  std::map<std::string, std::vector<int>> strata;
  for (int l = 1; l <= kNumLevels; ++l) {
    std::map<std::string, std::vector<int>> m;
    for (int i = 0; i < n; ++i) m[Prefix(keys[i], l)].push_back(i);
    if (l > 1 && static_cast<int>(m.size()) > budget) break;
    strata = std::move(m);
    levels = l;
    if (static_cast<int>(strata.size()) > budget) break;  // even the coarsest is too fine
  }
  // One per stratum (as far as the budget goes), the rest in proportion to what each
  // has beyond that; largest remainder, ties by a stable hash of the stratum.
  struct Share {
    std::string key;
    std::vector<int>* members;
    int take;
    double remainder;
  };
  std::vector<Share> shares;
  for (auto& [key, members] : strata) shares.push_back({key, &members, 1, 0});
  const int num_strata = static_cast<int>(shares.size());
  if (num_strata > budget) {
    // Only when even the GPU counts outnumber the budget: the largest strata get one.
    std::stable_sort(shares.begin(), shares.end(),
                     [](const Share& a, const Share& b) { return a.members->size() > b.members->size(); });
    for (int i = 0; i < num_strata; ++i) shares[i].take = i < budget ? 1 : 0;
  } else {
    const int rest = budget - num_strata;
    const double spare = n - num_strata;
    int given = num_strata;
    for (Share& s : shares) {
      const double quota = rest * (s.members->size() - 1) / spare;
      const int whole = static_cast<int>(std::floor(quota));
      s.take += whole;
      s.remainder = quota - whole;
      given += whole;
    }
    std::vector<Share*> order;
    for (Share& s : shares) order.push_back(&s);
    std::sort(order.begin(), order.end(), [](const Share* a, const Share* b) {
      if (a->remainder != b->remainder) return a->remainder > b->remainder;
      return Fnv1a(a->key) < Fnv1a(b->key);
    });
    for (Share* s : order) {
      if (given >= budget) break;
      if (s->take < static_cast<int>(s->members->size())) {
        ++s->take;
        ++given;
      }
    }
  }
  // Inside a stratum: order by the finer keys (then by position) and take evenly spaced
  // members, so the finer keys are spread too.
  for (Share& s : shares) {
    std::vector<int>& m = *s.members;
    std::stable_sort(m.begin(), m.end(),
                     [&](int a, int b) { return std::tie(keys[a], a) < std::tie(keys[b], b); });
    const int size = static_cast<int>(m.size());
    for (int j = 0; j < s.take; ++j) {
      out.indices.push_back(m[static_cast<int>((j + 0.5) * size / s.take)]);
    }
  }
  std::sort(out.indices.begin(), out.indices.end());
  std::vector<std::string> by(kLevelNames, kLevelNames + levels);
  out.note =
      absl::StrCat("subsampled ", out.indices.size(), " of ", n, " usable measurements, stratified by ",
                   absl::StrJoin(by, ", "), " (", num_strata, " strata",
                   num_strata <= budget ? ", each represented" : ", the largest represented", ")");
  if (levels < kNumLevels) {
    std::vector<std::string> finer(kLevelNames + levels, kLevelNames + kNumLevels);
    absl::StrAppend(&out.note, "; ", absl::StrJoin(finer, ", "), " spread evenly within each");
  }
  return out;
}

Folds GroupedFolds(absl::Span<const CalibrationSample> samples, int max_folds) {
  // Groups in (TP, PP, a CNN's spatial x filter x channel split, model) order.
  using Key = std::tuple<int, int, int64_t, std::string>;
  std::map<Key, std::vector<int>> groups;
  for (size_t i = 0; i < samples.size(); ++i) {
    const ParallelConfig c = samples[i].config.Normalized();
    const int64_t split = int64_t{c.spatial_parallel} * 1000000 + int64_t{c.filter_parallel} * 1000 + c.channel_parallel;
    groups[{c.tensor_parallel, c.pipeline_parallel, split, ModelKey(samples[i])}].push_back(static_cast<int>(i));
  }
  Folds f;
  f.num_groups = static_cast<int>(groups.size());
  f.num_folds = std::min(max_folds, f.num_groups);
  f.fold_of.assign(samples.size(), 0);
  int rank = 0;
  for (const auto& [key, members] : groups) {
    for (int i : members) f.fold_of[i] = rank % std::max(1, f.num_folds);
    ++rank;
  }
  f.method =
      f.num_folds == f.num_groups
          ? absl::StrCat("leave-one-group-out over ", f.num_groups, " configuration groups (model x TP x PP)")
          : absl::StrCat(f.num_folds, "-fold grouped by configuration (model x TP x PP), ", f.num_groups,
                         " groups");
  absl::StrAppend(&f.method, "; parameter selection repeated inside each fold");
  return f;
}

}  // namespace paraplan
