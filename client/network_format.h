// Tables for `paraplan simulate` and `paraplan codesign`, and the codesign workloads
// file (one CodesignWorkload JSON a line: model or workload, weight, global_batch_size,
// name; blank lines and lines starting with # are skipped). Pure; no I/O except
// ReadCodesignWorkloads reading its file ("-" = standard input).
#ifndef PARAPLAN_CLIENT_NETWORK_FORMAT_H_
#define PARAPLAN_CLIENT_NETWORK_FORMAT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "paraplan/v1/network.pb.h"

namespace paraplan::cli {

std::string FormatSimulate(const v1::SimulateResponse& r);
std::string FormatCodesign(const v1::CodesignResponse& r);
absl::StatusOr<std::vector<v1::CodesignWorkload>> ReadCodesignWorkloads(const std::string& path);

}  // namespace paraplan::cli

#endif  // PARAPLAN_CLIENT_NETWORK_FORMAT_H_
