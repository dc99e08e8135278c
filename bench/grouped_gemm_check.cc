// Predicted against measured expert GEMMs: reads the CSV scripts/microbench/grouped_gemm.py
// writes (docs/microbench/h100_grouped_gemm.csv is one H100's) and prints, for each
// model x local experts x pass, the measured time of one method beside
// Hardware::GroupedMatmulTime on a built-in profile, token count by token count, and the
// median and spread of predicted / measured.
//   grouped_gemm_check CSV [PROFILE (dgx-h100-80gb)] [METHOD (streams4_graph)]
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "estimator/catalog/presets.h"
#include "estimator/system/hardware.h"

namespace paraplan {
namespace {

struct Row {
  double m, n, k, experts, tokens, seconds;
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int Run(const std::string& csv, const std::string& profile_name, const std::string& method) {
  std::ifstream in(csv);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", csv.c_str());
    return 2;
  }
  const SystemProfile* profile = nullptr;
  static const std::vector<SystemProfile> profiles = BuiltinProfiles();
  for (const SystemProfile& p : profiles) {
    if (p.name == profile_name) profile = &p;
  }
  if (profile == nullptr) {
    std::fprintf(stderr, "no built-in profile %s\n", profile_name.c_str());
    return 2;
  }
  const Hardware hw(*profile, Precision::kBf16);
  // model,experts,tokens_per_expert,pass,m,n,k,method,seconds,tflops
  std::map<std::tuple<std::string, int, std::string>, std::vector<Row>> groups;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::vector<std::string> f;
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    if (f.size() < 10 || f[7] != method) continue;
    Row r{std::stod(f[4]), std::stod(f[5]), std::stod(f[6]), std::stod(f[1]), std::stod(f[2]), std::stod(f[8])};
    groups[{f[0], std::stoi(f[1]), f[3]}].push_back(r);
  }
  std::vector<double> all;
  std::printf("%-16s %3s %-9s  predicted / measured by tokens per expert\n", "model", "E", "pass");
  for (const auto& [key, rows] : groups) {
    std::printf("%-16s %3d %-9s ", std::get<0>(key).c_str(), std::get<1>(key), std::get<2>(key).c_str());
    for (const Row& r : rows) {
      const double predicted = hw.GroupedMatmulTime(r.m, r.n, r.k, r.experts, 2, false, 2);
      all.push_back(predicted / r.seconds);
      std::printf(" %5.0f:%4.2f", r.tokens, predicted / r.seconds);
    }
    std::printf("\n");
  }
  std::vector<double> sorted = all;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.empty()) {
    std::fprintf(stderr, "no rows of method %s\n", method.c_str());
    return 2;
  }
  std::printf("%zu GEMM groups (%s on %s): predicted / measured median %.2f, 10th %.2f, 90th %.2f\n", sorted.size(),
              method.c_str(), profile_name.c_str(), Median(all), sorted[sorted.size() / 10],
              sorted[sorted.size() * 9 / 10]);
  return 0;
}

}  // namespace
}  // namespace paraplan

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: grouped_gemm_check CSV [PROFILE] [METHOD]\n");
    return 2;
  }
  return paraplan::Run(argv[1], argc > 2 ? argv[2] : "dgx-h100-80gb", argc > 3 ? argv[3] : "streams4_graph");
}
