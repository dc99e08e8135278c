// Loader for the public measurements in ../shared/data (Measurement JSON lines) into
// estimator structs, for tests. Test-only: uses nlohmann/json.
#ifndef PARAPLAN_ESTIMATOR_TESTING_PUBLIC_DATA_H_
#define PARAPLAN_ESTIMATOR_TESTING_PUBLIC_DATA_H_

#include <fstream>
#include <string>
#include <vector>

#include "estimator/inputs/parallel_config.h"
#include "estimator/inputs/workload.h"
#include "nlohmann/json.hpp"

namespace paraplan::testing {

struct Row {
  std::string id;
  Workload workload;
  ParallelConfig config;
  nlohmann::json raw;
};

inline Recompute ParseRecompute(const std::string& s) {
  if (s == "RECOMPUTE_FULL") return Recompute::kFull;
  if (s == "RECOMPUTE_SELECTIVE") return Recompute::kSelective;
  return Recompute::kNone;
}

inline std::vector<Row> Load(const std::string& file) {
  std::vector<Row> rows;
  std::ifstream in(std::string(PARAPLAN_SHARED_DATA_DIR) + "/" + file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const nlohmann::json j = nlohmann::json::parse(line);
    Row r;
    r.id = j["id"];
    r.raw = j;
    const auto& t = j["workload"]["transformer"];
    r.workload.name = j["workload"]["name"];
    r.workload.transformer.num_layers = t["num_layers"];
    r.workload.transformer.hidden_size = t["hidden_size"];
    r.workload.transformer.num_attention_heads = t["num_attention_heads"];
    r.workload.transformer.ffn_hidden_size = t.value("ffn_hidden_size", 0);
    r.workload.transformer.seq_length = t["seq_length"];
    r.workload.transformer.vocab_size = t["vocab_size"];
    r.workload.precision = j["workload"]["precision"] == "PRECISION_FP16" ? Precision::kFp16 : Precision::kBf16;
    const auto& c = j["config"];
    r.config.data_parallel = c.value("data_parallel", 1);
    r.config.tensor_parallel = c.value("tensor_parallel", 1);
    r.config.pipeline_parallel = c.value("pipeline_parallel", 1);
    r.config.sequence_parallel = c.value("sequence_parallel", false);
    r.config.virtual_pipeline_stages = c.value("virtual_pipeline_stages", 1);
    r.config.micro_batch_size = c.value("micro_batch_size", 1);
    r.config.global_batch_size = c.value("global_batch_size", 1);
    r.config.recompute = ParseRecompute(c.value("recompute", std::string()));
    if (c.value("pipeline_schedule", std::string()) == "SCHEDULE_INTERLEAVED_1F1B") {
      r.config.pipeline_schedule = PipelineSchedule::kInterleaved1F1B;
    }
    rows.push_back(r);
  }
  return rows;
}

}  // namespace paraplan::testing

#endif  // PARAPLAN_ESTIMATOR_TESTING_PUBLIC_DATA_H_
