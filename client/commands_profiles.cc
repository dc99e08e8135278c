#include "client/cli.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "client/format.h"
#include "client/input.h"
#include "client/json_io.h"
#include "client/layer_times.h"

namespace paraplan::cli {

// profiles put-layer-times NAME[@V] FILE.csv: the profile's next version with the rows
// merged into its layer_timings (the server validates and versions it like any put).
int Cli::PutLayerTimes() {
  absl::StatusOr<std::string> text = ReadFile(a_.words[3]);
  if (!text.ok()) return BadInput(text.status());
  absl::StatusOr<std::vector<v1::LayerTiming>> rows = ParseLayerTimes(*text);
  if (!rows.ok()) return BadInput(absl::InvalidArgumentError(absl::StrCat(a_.words[3], ": ", rows.status().message())));
  if (!Connect()) return failed_;
  v1::GetProfileRequest get;
  get.set_name(a_.words[2]);
  v1::SystemProfile p;
  absl::Status s = link_.GetProfile(get, &p);
  if (!s.ok()) return RpcFailed(s);
  const int replaced = MergeLayerTimes(*rows, &p);
  v1::UpdateProfileRequest req;
  *req.mutable_profile() = p;
  v1::SystemProfile out;
  s = link_.UpdateProfile(req, &out);
  if (!s.ok()) return RpcFailed(s);
  return Print(out, absl::StrCat(out.name(), "@", out.version(), ": ", rows->size(), " layer times (", replaced,
                                 " replaced), ", out.layer_timings_size(), " stored\n"));
}

// profiles fit-network / fit-gemm: the files are read here and sent whole; the server
// parses and fits them (one parser for every client).
int Cli::FitMicrobench() {
  const bool network = a_.words[1] == "fit-network";
  const std::string profile = a_.words[2];
  std::vector<v1::MicrobenchFile> files;
  for (size_t i = 3; i < a_.words.size(); ++i) {
    absl::StatusOr<std::string> text = ReadFile(a_.words[i]);
    if (!text.ok()) return BadInput(text.status());
    v1::MicrobenchFile f;
    f.set_name(a_.words[i]);
    f.set_content(*std::move(text));
    files.push_back(std::move(f));
  }
  if (files.empty()) return UsageError("give at least one nccl-tests output file");
  const bool dry = a_.flags.count("dry-run") > 0;
  int ranks = 0;
  if (!Int("ranks", 1, &ranks)) return failed_;
  if (!Connect()) return failed_;
  if (network) {
    v1::FitNetworkRequest req;
    req.set_profile(profile);
    for (v1::MicrobenchFile& f : files) *req.add_files() = std::move(f);
    req.set_level(a_.Get("level"));
    req.set_collective(a_.Get("collective"));
    req.set_ranks(ranks);
    req.set_dry_run(dry);
    v1::FitNetworkResponse r;
    absl::Status s = link_.FitNetwork(req, &r);
    return s.ok() ? Print(r, FormatFitNetwork(r)) : RpcFailed(s);
  }
  v1::FitGemmRequest req;
  req.set_profile(profile);
  *req.mutable_csv() = std::move(files[0]);
  req.set_dry_run(dry);
  v1::FitGemmResponse r;
  absl::Status s = link_.FitGemm(req, &r);
  return s.ok() ? Print(r, FormatFitGemm(r)) : RpcFailed(s);
}

int Cli::Profiles() {
  // ParseArgs has checked the subcommand and its one argument.
  const std::string& sub = a_.words[1];
  const std::string arg = a_.words.size() > 2 ? a_.words[2] : "";
  if (sub == "fit-network" || sub == "fit-gemm") return FitMicrobench();
  if (sub == "put-layer-times") return PutLayerTimes();
  v1::SystemProfile put;
  if (sub == "put") {
    if (absl::Status s = LoadJsonFile(arg, &put); !s.ok()) return BadInput(s);
  }
  std::vector<Override> sets;
  if (!ParseOverrides(&sets)) return failed_;
  if (!Connect()) return failed_;
  if (sub == "list") {
    v1::ListProfilesResponse all;
    std::string token;
    do {
      v1::ListProfilesRequest req;
      req.set_page_size(200);
      req.set_page_token(token);
      v1::ListProfilesResponse resp;
      absl::Status s = link_.ListProfiles(req, &resp);
      if (!s.ok()) return RpcFailed(s);
      for (const auto& p : resp.profiles()) *all.add_profiles() = p;
      token = resp.next_page_token();
    } while (!token.empty());
    std::vector<v1::SystemProfile> list(all.profiles().begin(), all.profiles().end());
    return Print(all, FormatProfileList(list));
  }
  if (sub == "show") {
    v1::SystemProfile p;
    if (!sets.empty()) {
      // The profile as --set changes it, for this output only, checked by the server as a
      // write would be (nothing stored).
      if (!ApplyOverrides(sets, arg, &p)) return failed_;
      v1::CheckProfileRequest check;
      *check.mutable_profile() = p;
      v1::SystemProfile checked;
      if (absl::Status s = link_.CheckProfile(check, &checked); !s.ok()) {
        const int rc = RpcFailed(s);
        std::fprintf(stderr, "paraplan: (the profile as changed by --set%s)\n", SetList(sets).c_str());
        return rc;
      }
      return Print(checked, absl::StrCat(FormatProfile(checked), SetNote(sets)));
    }
    v1::GetProfileRequest req;
    req.set_name(arg);
    absl::Status s = link_.GetProfile(req, &p);
    return s.ok() ? Print(p, FormatProfile(p)) : RpcFailed(s);
  }
  if (sub == "history") {
    v1::ListProfileVersionsRequest req;
    req.set_name(arg);
    v1::ListProfileVersionsResponse r;
    absl::Status s = link_.ListProfileVersions(req, &r);
    return s.ok() ? Print(r, FormatHistory(r)) : RpcFailed(s);
  }
  if (sub == "promote") {
    v1::PromoteProfileRequest req;
    req.set_name(arg);
    v1::SystemProfile p;
    absl::Status s = link_.PromoteProfile(req, &p);
    return s.ok() ? Print(p, absl::StrCat(p.name(), "@", p.version(), " is now the default version of ", p.name(),
                                          "\n"))
                  : RpcFailed(s);
  }
  if (sub == "put") {
    // A file named like a built-in would become the version every plan on it uses: ask
    // for that explicitly.
    v1::ListProfileVersionsRequest history;
    history.set_name(put.name());
    v1::ListProfileVersionsResponse versions;
    if (!put.name().empty() && a_.flags.count("new-version") == 0 &&
        link_.ListProfileVersions(history, &versions).ok()) {
      for (const v1::SystemProfile& v : versions.versions()) {
        if (v.origin() != "builtin") continue;
        return UsageError(absl::StrCat(
            DisplayName(arg), " names the built-in profile ", put.name(), ": putting it writes ", put.name(), "@",
            versions.versions(versions.versions_size() - 1).version() + 1,
            ", the version every plan on ", put.name(), " then uses. Give --new-version to do that, or rename the "
            "profile in the file (\"name\") to keep the built-in as it is."));
      }
    }
    v1::UpdateProfileRequest req;
    *req.mutable_profile() = put;
    req.set_create_if_missing(true);
    v1::SystemProfile p;
    absl::Status s = link_.UpdateProfile(req, &p);
    return s.ok() ? Print(p, absl::StrCat(p.name(), "@", p.version(), "\n")) : RpcFailed(s);
  }
  v1::DeleteProfileRequest req;
  req.set_name(arg);
  v1::DeleteProfileResponse r;
  absl::Status s = link_.DeleteProfile(req, &r);
  return s.ok() ? Print(r, absl::StrCat("deleted ", arg, " (", r.versions_deleted(), " versions)\n")) : RpcFailed(s);
}

// Lines that cannot be parsed are rejected here (reason names the line) and never sent;
// the report lists every line in file order.
int Cli::Ingest() {
  const std::string path = a_.words[1];
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return BadInput(text.status());
  const std::vector<NumberedLine> lines = NonBlankLines(*text);
  if (lines.empty()) return Fail(kBadInput, absl::StrCat(path, ": no measurements (the file has no non-blank line)"));

  v1::IngestMeasurementsResponse report;  // one result per line, in order
  std::vector<int> sent;                  // indexes into report.results
  v1::IngestMeasurementsRequest all;
  for (const NumberedLine& line : lines) {
    v1::IngestResult* r = report.add_results();
    v1::Measurement m;
    if (absl::Status s = LoadJsonLine(DisplayName(path), line.number, line.text, &m); !s.ok()) {
      r->set_status(v1::IngestResult::STATUS_REJECTED);
      r->set_reason(std::string(s.message()));
      report.set_rejected(report.rejected() + 1);
      continue;
    }
    r->set_id(m.id());
    sent.push_back(report.results_size() - 1);
    *all.add_measurements() = std::move(m);
  }
  if (sent.empty()) {
    for (const v1::IngestResult& r : report.results()) std::fprintf(stderr, "rejected  %s\n", r.reason().c_str());
    return Fail(kBadInput, absl::StrCat(path, ": no line could be parsed as a Measurement"));
  }
  if (!Connect()) return failed_;
  for (size_t start = 0; start < sent.size(); start += kChunk) {
    const size_t end = std::min(sent.size(), start + kChunk);
    v1::IngestMeasurementsRequest chunk;
    for (size_t k = start; k < end; ++k) *chunk.add_measurements() = all.measurements(static_cast<int>(k));
    v1::IngestMeasurementsResponse resp;
    absl::Status s = link_.IngestMeasurements(chunk, &resp);
    if (!s.ok()) return RpcFailed(s);
    for (size_t k = start; k < end; ++k) {
      const int j = static_cast<int>(k - start);
      v1::IngestResult* r = report.mutable_results(sent[k]);
      if (j < resp.results_size()) {
        *r = resp.results(j);
      } else {
        r->set_status(v1::IngestResult::STATUS_REJECTED);
        r->set_reason("no result from the server");
        report.set_rejected(report.rejected() + 1);
      }
    }
    report.set_accepted(report.accepted() + resp.accepted());
    report.set_duplicates(report.duplicates() + resp.duplicates());
    report.set_rejected(report.rejected() + resp.rejected());
    report.set_calibration_triggered(report.calibration_triggered() || resp.calibration_triggered());
  }
  Print(report, FormatIngest(report));
  if (report.rejected() == 0) return kOk;
  failed_ = kError;
  return kError;  // the report names every rejected line
}

namespace {

// What `calibrate` prints for a calibration's result.
std::string CalibrationHead(const v1::CalibrateResponse& r) {
  const std::string version = absl::StrCat(r.profile().name(), "@", r.profile().version());
  if (r.up_to_date()) {
    return absl::StrCat("up to date: no measurement since ", version,
                        " was calibrated; nothing fitted or stored (its report follows)\n");
  }
  if (!r.stored()) return absl::StrCat("dry run: nothing stored (", r.report().promotion_reason(), ")\n");
  if (r.profile().is_default()) {
    return absl::StrCat("new version ", version, " is the default: ", r.report().promotion_reason(), "\n");
  }
  return absl::StrCat("new version ", version, " stored as a candidate, ", r.report().promotion_reason(),
                      "; the default stays (`paraplan profiles promote ", version, "` to use it)\n");
}

std::string OperationLine(const v1::CalibrationOperation& op) {
  const char* state = op.state() == v1::CalibrationOperation::STATE_RUNNING ? "running"
                      : op.state() == v1::CalibrationOperation::STATE_DONE  ? "done"
                                                                            : "failed";
  return absl::StrCat("calibration ", op.id(), " of ", op.profile(), op.dry_run() ? " (dry run)" : "", ": ", state,
                      op.state() == v1::CalibrationOperation::STATE_RUNNING ? absl::StrCat(", ", op.phase()) : "",
                      "\n");
}

}  // namespace

// Prints a finished operation's result (or its error) and returns the exit code.
int Cli::CalibrationOutcome(const v1::CalibrationOperation& op) {
  if (op.state() == v1::CalibrationOperation::STATE_FAILED) {
    return RpcFailed(absl::Status(static_cast<absl::StatusCode>(op.error().code()), op.error().message()));
  }
  const v1::CalibrateResponse& r = op.result();
  return Print(r, absl::StrCat(CalibrationHead(r), FormatFitReport(r.report())));
}

int Cli::Calibrate() {
  if (a_.Has("operation")) {
    if (a_.Has("profile")) return UsageError("calibrate takes --profile or --operation, not both");
    if (!Connect()) return failed_;
    v1::GetCalibrationRequest get;
    get.set_operation_id(a_.Get("operation"));
    v1::CalibrationOperation op;
    if (absl::Status s = link_.GetCalibration(get, &op); !s.ok()) return RpcFailed(s);
    if (op.state() == v1::CalibrationOperation::STATE_RUNNING) return Print(op, OperationLine(op));
    return CalibrationOutcome(op);
  }
  if (!a_.Has("profile")) return UsageError("calibrate needs --profile (or --operation)");
  if (!Connect()) return failed_;
  v1::CalibrateRequest req;
  req.set_profile(a_.Get("profile"));
  req.set_dry_run(a_.flags.count("dry-run") > 0);
  v1::CalibrationOperation op;
  if (absl::Status s = link_.StartCalibration(req, &op); !s.ok()) return RpcFailed(s);
  if (a_.flags.count("no-wait") > 0) return Print(op, OperationLine(op));
  if (op.dry_run() != req.dry_run()) {
    std::fprintf(stderr, "joined the calibration %s already running for %s (dry run: %s)\n", op.id().c_str(),
                 op.profile().c_str(), op.dry_run() ? "yes" : "no");
  }
  std::string said;
  v1::GetCalibrationRequest get;
  get.set_operation_id(op.id());
  while (op.state() == v1::CalibrationOperation::STATE_RUNNING) {
    if (op.phase() != said) {
      std::fprintf(stderr, "%s", OperationLine(op).c_str());
      said = op.phase();
    }
    absl::SleepFor(absl::Milliseconds(kCalibrationPollMs));
    if (absl::Status s = link_.GetCalibration(get, &op); !s.ok()) return RpcFailed(s);
  }
  return CalibrationOutcome(op);
}

int Cli::Accuracy() {
  if (!a_.Has("profile")) return UsageError("accuracy needs --profile");
  v1::GetAccuracyRequest req;
  req.set_profile(a_.Get("profile"));
  req.set_label_key(a_.Get("label"));
  int recent = 0;
  if (!Int("recent", 0, &recent)) return failed_;
  req.set_recent(recent);
  if (!Connect()) return failed_;
  v1::AccuracyReport r;
  absl::Status s = link_.GetAccuracy(req, &r);
  return s.ok() ? Print(r, FormatAccuracy(r)) : RpcFailed(s);
}

}  // namespace paraplan::cli
