// Tables for `paraplan simulate` and `paraplan codesign`, and the codesign workloads
// file (one CodesignWorkload JSON a line: model or workload, weight, global_batch_size,
// name; blank lines and lines starting with # are skipped; a key the message does not
// have, or a line without a positive global_batch_size, is an error naming the line).
// Pure; no I/O except ReadCodesignWorkloads reading its file ("-" = standard input).
//
// Codesign styles: compact (default) — per design and workload the best plan's degrees
// and micro-batch, iteration time, energy and cost, then the ranking; wide — the same
// with the whole configuration, samples/s, MFU, bottleneck and (when the workload
// knows its length) time to train; CSV (csv.h) — a header record and one record per
// design x workload in machine units (seconds, joules, USD) with the design's rank and
// weighted totals repeated on each of its records (empty when it does not fit every
// workload), nothing else.
#ifndef PARAPLAN_CLIENT_NETWORK_FORMAT_H_
#define PARAPLAN_CLIENT_NETWORK_FORMAT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/plan_table.h"
#include "paraplan/v1/network.pb.h"

namespace paraplan::cli {

std::string FormatSimulate(const v1::SimulateResponse& r);
std::string FormatCodesign(const v1::CodesignResponse& r, TableStyle style = TableStyle::kCompact);
absl::StatusOr<std::vector<v1::CodesignWorkload>> ReadCodesignWorkloads(const std::string& path);

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_NETWORK_FORMAT_H_
