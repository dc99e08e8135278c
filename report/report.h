// The plan report page (`paraplan plan … --report FILE.html`, and GET /v1/report on
// the server's HTTP port): one self-contained HTML file describing a PlanResponse. Plain
// C++ over the message types (the report library, which the server links too).
//
// Contract: PlanReportHtml is a pure function of its input (no I/O, no RPC). The page has
// no external reference (no script, stylesheet, font or image is fetched): its charts
// are inline SVG drawn here (svg_chart.h) and its one inline script only links table rows
// and chart rows on hover, then marks <body data-ready="1">. It shows: the request and
// the profile NAME@VERSION that answered it; the profile's measured accuracy
// ("uncertainty ±X % (MAPE over N measurements)", or "no measurements yet", or why it is
// unknown); the search summary; the ranked table of plans; per plan a stacked bar of
// its exposed time breakdown and one of its memory breakdown against the GPU capacity;
// the Pareto front as time-vs-cost and time-vs-energy scatters; each plan's warnings.
// A what-if page (ReportInput::what_if) shows two plans by name instead.
// When no plan fits it says so with the server's reason. Every string taken from the
// input is HTML-escaped.
#ifndef PARAPLAN_REPORT_REPORT_H_
#define PARAPLAN_REPORT_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "paraplan/v1/services.pb.h"

namespace paraplan::cli {

struct ReportInput {
  v1::PlanResponse response;
  std::string workload;     // the preset or the workload's name
  std::string request;      // what was asked, one line: "1024 GPUs, global batch 1536, objective time"
  std::string profile;      // NAME@VERSION of the profile that answered (the plans carry it)
  std::string accelerator;  // e.g. "A100-SXM4-80GB, 8 per node" ("" = unknown)
  std::optional<v1::AccuracyReport> accuracy;  // absent when it could not be read
  std::string accuracy_error;                  // why it could not be read
  std::string generated_at;                    // UTC timestamp text ("" = leave out)
  // A what-if page (`plan --set … --what-if --report`): `response` holds the best plan
  // on the stored profile, then the best with `what_if` (the changes, one line) applied,
  // or only the first with the reason in infeasible_reason. Plans are named by
  // `plan_labels` ("today", "what-if") instead of ranks, and the page has no Pareto
  // front or search summary. Empty `what_if`: a ranked report.
  std::string what_if;
  std::vector<std::string> plan_labels;
};

std::string PlanReportHtml(const ReportInput& in);

// The report of `response` to `request`, planned on `profile` (version 0: only its name
// is known, e.g. when it could not be read). The accuracy and the time stamp are left
// to the caller: "GPUs 8,16, global batch 32, objective time, top 10" is the request
// line. Shared by `paraplan plan --report` and the server's GET /v1/report.
ReportInput PlanReportInput(const v1::PlanRequest& request, const v1::PlanResponse& response,
                            const v1::SystemProfile& profile);

// "2026-11-24 07:00:10 UTC"; "" if it cannot be formatted.
std::string UtcTimestamp(int64_t unix_seconds);

// The accuracy line of the report: "uncertainty ±2.6 % (MAPE over 9 measurements)",
// "no measurements yet", or "accuracy unknown: WHY".
std::string UncertaintyText(const ReportInput& in);

}  // namespace paraplan::cli

#endif  // PARAPLAN_REPORT_REPORT_H_
