// Backend: microbenchmarks (nccl-tests output, GEMM sweeps) fitted into profile versions.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "estimator/calibration/microbench.h"
#include "estimator/inputs/echo.h"
#include "server/adapter.h"
#include "server/backend.h"

namespace paraplan::server {

namespace {

constexpr size_t kMaxFiles = 64;
constexpr size_t kMaxFileBytes = size_t{8} << 20;

absl::Status CheckFile(const v1::MicrobenchFile& f, const std::string& field) {
  if (f.content().empty()) return absl::InvalidArgumentError(absl::StrCat(field, ": empty"));
  if (f.content().size() > kMaxFileBytes) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": larger than ", kMaxFileBytes >> 20, " MiB"));
  }
  return absl::OkStatus();
}

}  // namespace

// The fitted profile into `out`: written as the next version (origin microbenchmark)
// unless dry_run.
template <typename Response>
absl::Status Backend::StoreFitted(const SystemProfile& fitted, bool dry_run, Response* out) {
  v1::SystemProfile profile = adapter::ToProto(fitted);
  if (!dry_run) {
    absl::StatusOr<v1::SystemProfile> stored = WriteProfile(profile, Existing::kMustExist, "microbenchmark");
    if (!stored.ok()) return stored.status();
    profile = *std::move(stored);
  }
  *out->mutable_profile() = profile;
  out->set_stored(!dry_run);
  return absl::OkStatus();
}

absl::StatusOr<SystemProfile> Backend::LoadForFit(const std::string& ref) {
  absl::StatusOr<std::pair<std::string, int>> r = ParseProfileRef(ref, "profile");
  if (!r.ok()) return r.status();
  absl::StatusOr<v1::SystemProfile> p = Load(r->first, r->second);
  if (!p.ok()) return p.status();
  return adapter::FromProto(*p);
}

absl::StatusOr<v1::FitNetworkResponse> Backend::FitNetwork(const v1::FitNetworkRequest& req, const Interrupt& stop) {
  if (req.files().empty()) return absl::InvalidArgumentError("files: give at least one nccl-tests output");
  if (static_cast<size_t>(req.files_size()) > kMaxFiles) {
    return absl::InvalidArgumentError(absl::StrCat("files: more than ", kMaxFiles));
  }
  if (req.ranks() < 0 || req.ranks() > kMaxCollectiveRanks) {
    return absl::InvalidArgumentError(absl::StrCat("ranks: must be 0..", kMaxCollectiveRanks));
  }
  absl::StatusOr<SystemProfile> base = LoadForFit(req.profile());
  if (!base.ok()) return base.status();
  std::vector<CollectiveSample> samples;
  std::vector<std::string> file_of;  // per sample
  for (int i = 0; i < req.files_size(); ++i) {
    const v1::MicrobenchFile& f = req.files(i);
    const std::string field = absl::StrCat("files[", i, "] (", Abbreviated(f.name()), ")");
    if (absl::Status s = CheckFile(f, field); !s.ok()) return s;
    absl::StatusOr<int> named_ranks = RanksFromFileName(f.name());
    if (!named_ranks.ok()) return absl::InvalidArgumentError(absl::StrCat(field, ": ", named_ranks.status().message()));
    absl::StatusOr<CollectiveKind> kind =
        ParseCollectiveKind(req.collective().empty() ? f.name() : req.collective());
    if (!kind.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          req.collective().empty() ? field : std::string("collective"), ": ", kind.status().message(),
          req.collective().empty() ? "; name the collective" : ""));
    }
    const int ranks = req.ranks() > 0 ? req.ranks() : *named_ranks;
    absl::StatusOr<std::vector<CollectiveSample>> s = ParseNcclTests(f.content(), *kind, ranks);
    if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat(field, ": ", s.status().message()));
    for (const CollectiveSample& c : *s) {
      samples.push_back(c);
      file_of.push_back(f.name());
    }
  }
  absl::StatusOr<NetworkFit> fit = FitNetworkLevel(*base, req.level(), samples, stop);
  if (!fit.ok()) return fit.status();
  v1::FitNetworkResponse out = adapter::ToProto(fit->report, file_of);
  if (absl::Status s = StoreFitted(fit->profile, req.dry_run(), &out); !s.ok()) return s;
  return out;
}

absl::StatusOr<v1::FitGemmResponse> Backend::FitGemm(const v1::FitGemmRequest& req, const Interrupt& stop) {
  if (absl::Status s = CheckFile(req.csv(), "csv"); !s.ok()) return s;
  absl::StatusOr<SystemProfile> base = LoadForFit(req.profile());
  if (!base.ok()) return base.status();
  absl::StatusOr<std::vector<GemmSample>> samples = ParseGemmCsv(req.csv().content());
  if (!samples.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("csv (", req.csv().name().substr(0, 100), "): ",
                                                   samples.status().message()));
  }
  absl::StatusOr<GemmFit> fit = paraplan::FitGemm(*base, *samples, stop);
  if (!fit.ok()) return fit.status();
  v1::FitGemmResponse out = adapter::ToProto(fit->report);
  if (absl::Status s = StoreFitted(fit->profile, req.dry_run(), &out); !s.ok()) return s;
  return out;
}

}  // namespace paraplan::server
