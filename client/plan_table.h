// The ranked table of a plan, as the CLI prints it.
//
// Contract (pure functions, text in, text out):
// - Compact (the default): a header line "profile NAME@VERSION", then, when several GPU
//   counts were asked, the best plan of each count (one line each), then the ranked
//   table. The table always shows rank, GPUs, iteration time, throughput (tokens/s, or
//   samples/s for CNNs), MFU, memory and bottleneck, plus $/iter when ranking by cost
//   and kJ/iter when ranking by energy; of the configuration columns it shows exactly
//   those in which the shown plans differ. The values the plans share are listed in one
//   line under the table ("in every plan: TP 8, ..."), leaving out defaults that say
//   nothing (no offload, automatic algorithm, default rank order, no CNN split...).
//   Then the search statistics. Iteration times keep 4 significant digits for the
//   smallest shown (3 decimals from 1 s up).
// - Wide: the same with every column.
// - CSV (RFC 4180, csv.h): a header record and one record per plan, every column, in
//   machine units (seconds, GiB, USD, joules; booleans true/false), with a profile
//   column; nothing else.
// A response without plans prints "no plan: REASON" in place of the table (CSV: the
// header record only).
#ifndef PARAPLAN_CLIENT_PLAN_TABLE_H_
#define PARAPLAN_CLIENT_PLAN_TABLE_H_

#include <optional>
#include <string>
#include <vector>

#include "paraplan/v1/services.pb.h"

namespace paraplan::cli {

enum class TableStyle { kCompact, kWide, kCsv };

// The best plan for one GPU count, or why there is none.
struct GpuCountBest {
  int32_t gpus = 0;
  std::optional<v1::Estimate> best;
  std::string no_plan_reason;  // when !best
  // when !best: the count was not searched to the end (the deadline came first), so the
  // row says so instead of "no plan fits"
  bool unsearched = false;
};

struct PlanTableOptions {
  TableStyle style = TableStyle::kCompact;
  v1::Objective objective = v1::OBJECTIVE_TIME;
  std::string profile;                      // "NAME@VERSION" (or the reference asked for)
  std::vector<GpuCountBest> per_gpu_count;  // shown before the table when not empty
};

std::string FormatPlanTable(const v1::PlanResponse& r, const PlanTableOptions& o);

// For each of `gpus`, in that order, the first (best) plan of `r` with that GPU count;
// counts without one have no `best` and an empty reason (to be asked of the server).
std::vector<GpuCountBest> BestPerGpuCount(const v1::PlanResponse& r, const std::vector<int32_t>& gpus);

// "NAME@VERSION" of the first plan, or "" when there is none.
std::string PlanProfile(const v1::PlanResponse& r);

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_PLAN_TABLE_H_
