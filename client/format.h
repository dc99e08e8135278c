// Human-readable output of the paraplan CLI: aligned tables and breakdowns of the
// paraplan.v1 responses (the plan table is plan_table.h). JSON output does not come
// through here (json_io.h). Pure functions returning text.
#ifndef PARAPLAN_CLIENT_FORMAT_H_
#define PARAPLAN_CLIENT_FORMAT_H_

#include <string>
#include <vector>

#include "paraplan/v1/services.pb.h"
#include "report/cell_text.h"

namespace paraplan::cli {

// Columns aligned to their widest cell; numbers right-aligned.
class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string Render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// An enum value as people write it: lower case without the prefix every value of the
// enum shares, '-' for '_' (ALGORITHM_HALVING_DOUBLING -> halving-doubling).
std::string EnumText(const google::protobuf::EnumDescriptor* d, int value);
// A collective's algorithm column: "-" for direct sends (send-recv, a plain all-to-all),
// else the algorithm ("hierarchical" for DeepEP's dispatch).
std::string AlgorithmText(const v1::CollectiveUse& u);

// One line: "TP8 PP8 DP16 v3, micro-batch 1, global batch 1536, recompute selective, ...".
std::string ConfigSummary(const v1::ParallelConfig& c);

std::string FormatEstimate(const v1::Estimate& e);
std::string FormatProfile(const v1::SystemProfile& p);
std::string FormatProfileList(const std::vector<v1::SystemProfile>& profiles);
std::string FormatHistory(const v1::ListProfileVersionsResponse& r);
std::string FormatModels(const v1::ListModelsResponse& r);
std::string FormatAccuracy(const v1::AccuracyReport& r);
std::string FormatFitReport(const v1::FitReport& r);
std::string FormatFitNetwork(const v1::FitNetworkResponse& r);
std::string FormatFitGemm(const v1::FitGemmResponse& r);
// One row per ingested line (in file order) and the totals.
std::string FormatIngest(const v1::IngestMeasurementsResponse& r);
// Parameters of a transformer workload, counted exactly from its shape: per layer the
// attention projections (q and o of h x h, k and v of h x kv_heads*head_dim), the MLP
// (2 matrices, 3 when gated; every expert and the router on MoE layers), two norms;
// plus the input embedding and the LM head (one matrix when tied). Biases are left out.
// 0 for a layer graph.
double ParameterCount(const v1::Workload& w);

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_FORMAT_H_
