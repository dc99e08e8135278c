// The tables of `paraplan simulate` and `paraplan codesign` (compact, wide, CSV) and the
// codesign workloads file, on hand-built responses and files (network_format.h).
#include "client/network_format.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace paraplan::cli {
namespace {

using ::absl::StrContains;

// Two designs: "fast" fits both workloads, "small" fits only the first.
v1::CodesignResponse TwoDesigns() {
  v1::CodesignResponse r;
  auto cell = [](v1::CodesignDesign* d, const std::string& workload, double seconds, double train_s) {
    v1::CodesignCell* c = d->add_cells();
    c->set_workload(workload);
    c->set_fits(true);
    v1::Estimate* e = c->mutable_best();
    e->mutable_config()->set_tensor_parallel(2);
    e->mutable_config()->set_data_parallel(4);
    e->mutable_config()->set_micro_batch_size(1);
    e->mutable_config()->set_global_batch_size(64);
    e->set_iteration_time_s(seconds);
    e->set_energy_per_iteration_j(2000 * seconds);
    e->set_cost_per_iteration_usd(0.01 * seconds);
    e->set_samples_per_s(64 / seconds);
    e->set_mfu(0.5);
    e->set_time_to_train_s(train_s);
    e->set_bottleneck("compute");
  };
  v1::CodesignDesign* fast = r.add_designs();
  fast->set_profile("fast");
  fast->set_profile_version(2);
  cell(fast, "dense", 1.0, 7200);
  cell(fast, "moe, big", 2.0, 0);
  fast->set_fits_all(true);
  fast->set_weighted_time_s(2 * 1.0 + 2.0);
  fast->set_weighted_energy_j(8000);
  fast->set_weighted_cost_usd(0.04);
  fast->set_rank(1);
  v1::CodesignDesign* small = r.add_designs();
  small->set_profile("small");
  small->set_profile_version(1);
  cell(small, "dense", 1.5, 0);
  v1::CodesignCell* none = small->add_cells();
  none->set_workload("moe, big");
  none->set_infeasible_reason("no configuration fits in memory");
  const double inf = std::numeric_limits<double>::infinity();
  small->set_weighted_time_s(inf);
  small->set_weighted_energy_j(inf);
  small->set_weighted_cost_usd(inf);
  small->set_rank(2);
  r.set_best_by_time("fast@2");
  r.set_best_by_energy("fast@2");
  r.set_best_by_cost("fast@2");
  return r;
}

TEST(FormatCodesign, CompactShowsCellsThenTheRanking) {
  const std::string t = FormatCodesign(TwoDesigns());
  EXPECT_TRUE(StrContains(t, "TP2 PP1 DP4, micro-batch 1")) << t;
  EXPECT_FALSE(StrContains(t, "global batch 64")) << t;  // compact: degrees and micro-batch only
  EXPECT_TRUE(StrContains(t, "none fits: no configuration fits in memory")) << t;
  EXPECT_TRUE(StrContains(t, "does not fit")) << t;
  EXPECT_TRUE(StrContains(t, "best by time: fast@2; by energy: fast@2; by cost: fast@2")) << t;
  EXPECT_FALSE(StrContains(t, "samples/s")) << t;
  // The ranking lists fast before small.
  EXPECT_LT(t.find("   1  fast@2"), t.find("   2  small@1")) << t;
}

TEST(FormatCodesign, WideAddsThroughputAndTimeToTrainWhenKnown) {
  v1::CodesignResponse r = TwoDesigns();
  std::string t = FormatCodesign(r, TableStyle::kWide);
  for (const char* part : {"samples/s", "MFU %", "bottleneck", "time to train", "global batch 64", "64.0", "50.0"}) {
    EXPECT_TRUE(StrContains(t, part)) << part << "\n" << t;
  }
  // No best plan knows its time to train: no such column.
  for (v1::CodesignDesign& d : *r.mutable_designs()) {
    for (v1::CodesignCell& c : *d.mutable_cells()) c.mutable_best()->set_time_to_train_s(0);
  }
  t = FormatCodesign(r, TableStyle::kWide);
  EXPECT_FALSE(StrContains(t, "time to train")) << t;
}

TEST(FormatCodesign, CsvHasOneRecordPerDesignAndWorkload) {
  const std::string csv = FormatCodesign(TwoDesigns(), TableStyle::kCsv);
  std::vector<std::string> records = absl::StrSplit(csv, "\r\n");
  ASSERT_EQ(records.size(), 6u) << csv;  // header, 4 records, "" after the last CRLF
  EXPECT_EQ(records.back(), "");
  const std::vector<std::string> header = absl::StrSplit(records[0], ',');
  EXPECT_EQ(header.front(), "design");
  EXPECT_EQ(header.back(), "infeasible_reason");
  // Every record has the header's fields (quoted commas aside).
  EXPECT_TRUE(absl::StartsWith(records[1], "fast@2,1,true,4,8000,0.04,dense,true,2,1,4,1,1,1,1,64,")) << records[1];
  EXPECT_TRUE(StrContains(records[1], ",1,64,0.5,2000,0.01,7200,compute,")) << records[1];
  EXPECT_TRUE(absl::StartsWith(records[2], "fast@2,1,true,4,8000,0.04,\"moe, big\",true,")) << records[2];
  EXPECT_TRUE(StrContains(records[2], ",0.02,,compute,")) << records[2];  // time to train unknown: empty
  // A design that does not fit every workload: totals empty; the missing cell has the reason.
  EXPECT_TRUE(absl::StartsWith(records[3], "small@1,2,false,,,,dense,true,")) << records[3];
  EXPECT_EQ(records[4], "small@1,2,false,,,,\"moe, big\",false,,,,,,,,,,,,,,,,,no configuration fits in memory");
  EXPECT_EQ(std::count(records[4].begin(), records[4].end(), ',') - 1,  // one comma inside the quotes
            static_cast<long>(header.size()) - 1);
}

TEST(FormatCodesign, NoDesignFitsEveryWorkload) {
  v1::CodesignResponse r = TwoDesigns();
  r.mutable_designs()->DeleteSubrange(0, 1);
  r.mutable_designs(0)->set_rank(1);
  r.clear_best_by_time();
  r.clear_best_by_energy();
  r.clear_best_by_cost();
  r.set_truncated(true);
  const std::string t = FormatCodesign(r);
  EXPECT_TRUE(StrContains(t, "no design fits every workload")) << t;
  EXPECT_TRUE(StrContains(t, "warning: a search hit the deadline")) << t;
}

TEST(FormatSimulate, CollectivesBesideTheirSimulatedTimes) {
  v1::SimulateResponse r;
  r.mutable_analytic()->set_profile_name("p");
  r.mutable_analytic()->set_profile_version(3);
  r.mutable_analytic()->set_num_gpus(16);
  v1::SimulatedCollective* c = r.add_collectives();
  c->mutable_use()->set_dimension("dp");
  c->mutable_use()->set_kind(v1::COLLECTIVE_ALL_REDUCE);
  c->mutable_use()->set_algorithm(v1::ALGORITHM_RING);
  c->mutable_use()->set_level_name("spine");
  c->mutable_use()->set_group_size(2);
  c->mutable_use()->set_stride(8);
  c->mutable_use()->set_bytes(64 * 1024 * 1024);
  c->mutable_use()->set_calls(1);
  c->mutable_use()->set_seconds_per_call(0.010);
  c->set_simulated_alone_s(0.015);
  c = r.add_collectives();
  c->mutable_use()->set_dimension("pp");
  c->mutable_use()->set_kind(v1::COLLECTIVE_SEND_RECV);
  c->mutable_use()->set_algorithm(v1::ALGORITHM_RING);
  c->mutable_use()->set_level_name("leaf");
  c->mutable_use()->set_group_size(2);
  c->mutable_use()->set_seconds_per_call(0.001);
  c->set_simulated_alone_s(0.001);
  c->set_simulated_contended_s(0.002);
  r.set_analytic_iteration_time_s(2.0);
  r.set_simulated_iteration_time_s(2.1);
  r.add_notes("dp spine ran beside pp leaf");
  const std::string t = FormatSimulate(r);
  EXPECT_TRUE(StrContains(t, "profile      p@3, 16 GPUs")) << t;
  EXPECT_TRUE(StrContains(t, "all-reduce  dp   ring")) << t;
  EXPECT_TRUE(StrContains(t, "2 /8")) << t;
  EXPECT_TRUE(StrContains(t, "64.00")) << t;                     // MiB
  for (const char* part : {"10.000", "15.000", "1.50", "2.000"}) EXPECT_TRUE(StrContains(t, part)) << part << t;
  EXPECT_TRUE(StrContains(t, "send-recv   pp   -")) << t;        // point to point: no algorithm
  EXPECT_TRUE(StrContains(t, "iteration    analytic 2.000 s, simulated 2.100 s (+5.0%)")) << t;
  EXPECT_TRUE(StrContains(t, "note: dp spine ran beside pp leaf")) << t;
  r.set_simulated_iteration_time_s(2.0 - 1e-9);  // a rounding's worth faster: no "-0.0%"
  EXPECT_TRUE(StrContains(FormatSimulate(r), "simulated 2.000 s (+0.0%)")) << FormatSimulate(r);
}

class WorkloadsFile : public ::testing::Test {
 protected:
  std::string Write(const std::string& text) {
    char tmpl[] = "/tmp/paraplan_mix_XXXXXX";
    const int fd = mkstemp(tmpl);
    close(fd);
    path_ = tmpl;
    std::ofstream(path_) << text;
    return path_;
  }
  void TearDown() override {
    if (!path_.empty()) std::remove(path_.c_str());
  }
  std::string path_;
};

TEST_F(WorkloadsFile, LinesCommentsAndEnumNames) {
  const std::string path = Write(
      "# the mix\n"
      "{\"model\": \"megatron-22b\", \"weight\": 2, \"global_batch_size\": 512}\n"
      "\n"
      "{\"workload\": {\"name\": \"tiny\", \"precision\": \"fp8\"}, \"global_batch_size\": 64, \"name\": \"t\"}\n");
  absl::StatusOr<std::vector<v1::CodesignWorkload>> w = ReadCodesignWorkloads(path);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->size(), 2u);
  EXPECT_EQ((*w)[0].model(), "megatron-22b");
  EXPECT_EQ((*w)[0].weight(), 2);
  EXPECT_EQ((*w)[0].global_batch_size(), 512);
  EXPECT_EQ((*w)[1].name(), "t");
  EXPECT_EQ((*w)[1].workload().precision(), v1::PRECISION_FP8);
}

TEST_F(WorkloadsFile, AMisspeltKeyOrAMissingBatchNamesTheLine) {
  std::string path = Write("# c\n{\"model\": \"megatron-22b\", \"weight\": 2, \"global_batch\": 512}\n");
  absl::StatusOr<std::vector<v1::CodesignWorkload>> w = ReadCodesignWorkloads(path);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(StrContains(w.status().message(), path + ":2")) << w.status();
  EXPECT_TRUE(StrContains(w.status().message(), "global_batch")) << w.status();

  path = Write("{\"model\": \"llama3-8b\", \"global_batch_size\": 8}\n{\"model\": \"llama3-8b\"}\n");
  w = ReadCodesignWorkloads(path);
  ASSERT_FALSE(w.ok());
  EXPECT_TRUE(StrContains(w.status().message(), path + ":2: global_batch_size")) << w.status();

  path = Write("# only a comment\n\n");
  w = ReadCodesignWorkloads(path);
  ASSERT_FALSE(w.ok());
  EXPECT_TRUE(StrContains(w.status().message(), "no workloads")) << w.status();
}

}  // namespace
}  // namespace paraplan::cli
