// `paraplan compare`: a given configuration beside the best plan for the same GPU count
// and global batch.
//
// Contract (pure functions over the two Estimates):
// - FormatComparison: a header line (profile NAME@VERSION, GPUs, global batch, the
//   objective), each side's configuration on one line, then one table with a given,
//   a best and a best/given column: iteration time and each exposed time component
//   (those non-zero on either side), memory per GPU and its parts, whether it fits,
//   throughput, MFU, model TFLOP/s per GPU, $ and kJ per iteration, bottleneck; and a
//   closing line with the gain by the objective. A ratio is "-" where the given value
//   is 0. Without a best plan the table has the given column only, followed by
//   "no plan fits: REASON".
// - ComparisonCsv: RFC 4180 records "metric,given,best,best_over_given" in machine
//   units (seconds, GiB, USD, joules).
// - ComparisonJson: {"given": Estimate, "best": Estimate or null}, each printed as
//   PrintJson prints it (json_io.h), indented when `pretty`.
// - The two sides are named by `labels` (table and CSV headers, JSON keys with '-' as
//   '_') and described by their nouns in the closing line: `compare` keeps the defaults;
//   `plan --what-if` sets the best plan today beside the best plan with --set.
#ifndef PARAPLAN_CLIENT_COMPARE_H_
#define PARAPLAN_CLIENT_COMPARE_H_

#include <optional>
#include <string>

#include "paraplan/v1/services.pb.h"

namespace paraplan::cli {

struct Comparison {
  v1::Estimate given;
  std::optional<v1::Estimate> best;
  std::string no_plan_reason;  // when !best
  v1::Objective objective = v1::OBJECTIVE_TIME;
  struct Side {
    std::string label;  // "given"
    std::string noun;   // "the given configuration"
  };
  Side given_side = {"given", "the given configuration"};
  Side best_side = {"best", "the best plan"};
};

std::string FormatComparison(const Comparison& c);
std::string ComparisonCsv(const Comparison& c);
std::string ComparisonJson(const Comparison& c, bool pretty);

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_COMPARE_H_
