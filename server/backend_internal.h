// What the backend's translation units share (backend.cc, backend_measurements.cc,
// backend_calibration.cc): the stored form of a profile, the GPU capacities that judge observed peaks, and paging through the
// store. Internal to server/; thread-safe (pure functions).
#ifndef PARAPLAN_SERVER_BACKEND_INTERNAL_H_
#define PARAPLAN_SERVER_BACKEND_INTERNAL_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "paraplan/v1/types.pb.h"

namespace paraplan::server {

// What is stored: the profile without server-assigned fields.
std::string Encode(v1::SystemProfile p);

// INVALID_ARGUMENT naming the first double or float under `m` (its path from `path`) that
// is NaN or infinite. Checked on the proto because the adapter maps some of them (a NaN
// oversubscription becomes 1), so the estimator's validation would never see them, yet
// they would be stored. `skip` names a field (of any message) left out: server-written
// reports.
absl::Status CheckFiniteNumbers(const google::protobuf::Message& m, const std::string& path,
                                absl::string_view skip);

// GPU memory capacity of each version of a profile (GiB), to judge observed peaks.
using Capacities = std::map<int, double>;
inline double CapacityOf(const Capacities& caps, int version) {
  auto it = caps.find(version);
  return it == caps.end() ? 0 : it->second;
}

// Rows per store read where whole measurements (with bodies) are read in pages.
inline constexpr int kRowsPerPage = 512;
// What a calibration keeps of the stored measurements (BoundedSamples): the 4 most recent
// of each configuration, of at most 512 configurations in each of the 6 bands of GPU
// counts: at most 12,288 samples however large the store (the fit itself subsamples to
// 400, calibrate.h), and the few multi-node runs are never thinned by the many small ones.
inline constexpr int kCalibrationSamplesPerConfiguration = 4;
inline constexpr int kCalibrationConfigurationsPerBand = 512;

// Calls `each` on every row that `fetch(after_seq)` pages through (store *After reads
// with `page` rows a page), oldest first; only one page is held at a time.
template <typename Fetch, typename Each>
absl::Status ForEachPaged(int page, Fetch fetch, Each each) {
  for (int64_t after = 0;;) {
    auto rows = fetch(after);
    if (!rows.ok()) return rows.status();
    for (const auto& r : *rows) {
      each(r);
      after = r.seq;
    }
    if (rows->size() < static_cast<size_t>(page)) return absl::OkStatus();
  }
}

}  // namespace paraplan::server

#endif  // PARAPLAN_SERVER_BACKEND_INTERNAL_H_
