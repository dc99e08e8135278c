// Unit tests of the CLI's plan table (client/plan_table.h: compact, wide, CSV, the cost
// column, the best plan per GPU count) and the comparison (client/compare.h), on answers
// built by hand (plain C++ over the message types, no server). Expected texts are written
// out in full.
#include <string>

#include "absl/strings/str_cat.h"
#include "client/compare.h"
#include "client/json_io.h"
#include "client/plan_table.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace paraplan::cli {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// ---------------------------------------------------------------------------------------
// The plan table.

v1::Estimate Plan(int gpus, int tp, int dp, const std::string& order, double seconds, double cost) {
  v1::Estimate e;
  e.set_profile_name("lab");
  e.set_profile_version(3);
  e.set_num_gpus(gpus);
  v1::ParallelConfig* c = e.mutable_config();
  c->set_tensor_parallel(tp);
  c->set_pipeline_parallel(4);
  c->set_data_parallel(dp);
  c->set_micro_batch_size(1);
  c->set_global_batch_size(512);
  c->set_recompute(v1::RECOMPUTE_SELECTIVE);
  c->set_sequence_parallel(true);
  c->set_zero_stage(1);
  c->set_flash_attention(true);
  c->set_pipeline_schedule(v1::SCHEDULE_1F1B);
  c->set_rank_order(order);
  e.set_iteration_time_s(seconds);
  e.set_tokens_per_s(512 * 2048 / seconds);
  e.set_samples_per_s(512 / seconds);
  e.set_mfu(0.5);
  e.mutable_memory()->set_total_bytes(40 * kGiB);
  e.mutable_memory()->set_fits(true);
  e.set_cost_per_iteration_usd(cost);
  e.set_energy_per_iteration_j(1234567);
  e.set_bottleneck("compute");
  return e;
}

v1::PlanResponse Response() {
  v1::PlanResponse r;
  *r.add_plans() = Plan(64, 8, 2, "", 2.0, 0.25);
  *r.add_plans() = Plan(64, 8, 2, "tp-cp-ep-pp-dp", 2.0, 0.25);
  *r.add_plans() = Plan(64, 4, 4, "", 2.5, 0.3125);
  r.set_candidates_enumerated(1000);
  r.set_candidates_feasible(500);
  r.set_candidates_evaluated(500);
  r.set_search_time_s(0.0125);
  r.add_pareto();
  return r;
}

constexpr char kFooter[] =
    "\n1000 candidates enumerated, 500 feasible, 500 evaluated in 0.013 s, search complete; 1 plans on the Pareto "
    "front (time, cost, energy, memory)\n";

TEST(PlanTable, CompactShowsTheColumnsThatDifferAndListsTheRest) {
  PlanTableOptions o;
  o.profile = PlanProfile(Response());
  EXPECT_EQ(o.profile, "lab@3");
  EXPECT_EQ(FormatPlanTable(Response(), o),
            absl::StrCat("profile lab@3\n\n"
                         "#  GPUs  TP  DP  rank order      iter s  tokens/s  MFU %  mem GiB  bottleneck\n"
                         "1    64   8   2  tp-cp-ep-dp-pp   2.000      524k   50.0     40.0  compute\n"
                         "2    64   8   2  tp-cp-ep-pp-dp   2.000      524k   50.0     40.0  compute\n"
                         "3    64   4   4  tp-cp-ep-dp-pp   2.500      419k   50.0     40.0  compute\n"
                         "in every plan: PP 4, CP 1, EP 1, v 1, mbs 1, recompute selective, SP yes, ZeRO 1, flash yes, "
                         "schedule 1f1b, overlap grad no, overlap param no\n",
                         kFooter));
}

// Each warning once under the table, with the rows it applies to.
TEST(PlanTable, WarningsOnceWithTheirRows) {
  v1::PlanResponse r = Response();
  r.mutable_plans(0)->add_warnings("near the memory limit");
  r.mutable_plans(2)->add_warnings("near the memory limit");
  for (int i = 0; i < 3; ++i) r.mutable_plans(i)->add_warnings("no modelled framework runs this configuration");
  PlanTableOptions o;
  o.profile = "lab@3";
  const std::string out = FormatPlanTable(r, o);
  EXPECT_NE(out.find("schedule 1f1b, overlap grad no, overlap param no\n"
                     "warning (#1, #3): near the memory limit\n"
                     "warning (every plan): no modelled framework runs this configuration\n\n1000 candidates"),
            std::string::npos)
      << out;
}

TEST(PlanTable, CostColumnWhenRankingByCost) {
  PlanTableOptions o;
  o.profile = "lab@3";
  o.objective = v1::OBJECTIVE_COST;
  v1::PlanResponse r = Response();
  r.mutable_plans()->DeleteSubrange(1, 2);  // one plan: every configuration value is listed
  EXPECT_EQ(FormatPlanTable(r, o),
            absl::StrCat("profile lab@3\n\n"
                         "#  GPUs  iter s  tokens/s  MFU %  mem GiB  $/iter  bottleneck\n"
                         "1    64   2.000      524k   50.0     40.0  0.2500  compute\n"
                         "in every plan: TP 8, PP 4, DP 2, CP 1, EP 1, v 1, mbs 1, recompute selective, SP yes, "
                         "ZeRO 1, flash yes, schedule 1f1b, overlap grad no, overlap param no\n",
                         kFooter));
  o.objective = v1::OBJECTIVE_ENERGY;
  EXPECT_NE(FormatPlanTable(r, o).find("#  GPUs  iter s  tokens/s  MFU %  mem GiB  kJ/iter  bottleneck\n"
                                       "1    64   2.000      524k   50.0     40.0   1234.6  compute\n"),
            std::string::npos)
      << FormatPlanTable(r, o);
}

TEST(PlanTable, WideShowsEveryColumn) {
  PlanTableOptions o;
  o.profile = "lab@3";
  o.style = TableStyle::kWide;
  v1::PlanResponse r = Response();
  r.mutable_plans()->DeleteSubrange(1, 2);
  EXPECT_EQ(FormatPlanTable(r, o),
            absl::StrCat("profile lab@3\n\n"
                         "#  GPUs  TP  PP  DP  CP  EP  ETP  dispatcher  v  stage ends  mbs  spatial[axes]@cut/filter/channel  recompute  "
                         "SP   ZeRO  "
                         "flash  schedule  overlap grad  overlap param  offload  DP algorithm  rank order      "
                         "CUDA graphs  TP overlap  A2A overlap  iter s  tokens/s  samples/s  MFU %  mem GiB  $/iter  "
                         "kJ/iter  bottleneck\n"
                         "1    64   8   4   2   1   1  -    -           1  even          1  1/1/1                             selective  "
                         "yes     1  "
                         "yes    1f1b      no            no             none     auto          tp-cp-ep-dp-pp  no    "
                         "       no          no            2.000      524k        256   50.0     40.0  0.2500   1234.6  "
                         "compute\n",
                         kFooter));
}

TEST(PlanTable, CsvHasEveryColumnInMachineUnits) {
  PlanTableOptions o;
  o.style = TableStyle::kCsv;
  v1::PlanResponse r = Response();
  r.mutable_plans()->DeleteSubrange(2, 1);
  r.mutable_plans(1)->set_bottleneck("pipeline bubble, then \"dp\"");
  r.mutable_plans(1)->mutable_config()->add_recompute_modules("layernorm");
  r.mutable_plans(1)->mutable_config()->add_recompute_modules("moe_act");
  EXPECT_EQ(FormatPlanTable(r, o),
            "rank,profile,gpus,tensor_parallel,pipeline_parallel,data_parallel,context_parallel,expert_parallel,"
            "virtual_pipeline_stages,first_pipeline_stage_layers,last_pipeline_stage_layers,micro_batch_size,"
            "global_batch_size,spatial_parallel,spatial_axes,spatial_layers,"
            "filter_parallel,channel_parallel,recompute,recompute_modules,sequence_parallel,zero_stage,flash_attention,"
            "pipeline_schedule,overlap_grad_reduce,overlap_param_gather,offload,dp_algorithm,rank_order,cuda_graphs,"
            "tp_comm_overlap,moe_a2a_overlap,iteration_time_s,samples_per_s,tokens_per_s,mfu,memory_gib,fits,"
            "cost_per_iteration_usd,energy_per_iteration_j,bottleneck\r\n"
            "1,lab@3,64,8,4,2,1,1,1,0,0,1,512,1,1,0,1,1,selective,,true,1,true,1f1b,false,false,none,auto,tp-cp-ep-dp-pp,"
            "false,false,false,2,256,524288,0.5,40,true,0.25,1234567,compute\r\n"
            "2,lab@3,64,8,4,2,1,1,1,0,0,1,512,1,1,0,1,1,selective,layernorm moe_act,true,1,true,1f1b,false,false,none,auto,tp-cp-ep-pp-dp,"
            "false,false,false,2,256,524288,0.5,40,true,0.25,1234567,\"pipeline bubble, then \"\"dp\"\"\"\r\n");
}

TEST(PlanTable, BestPerGpuCountBeforeTheTable) {
  v1::PlanResponse r = Response();
  std::vector<GpuCountBest> best = BestPerGpuCount(r, {32, 64});
  ASSERT_EQ(best.size(), 2u);
  EXPECT_FALSE(best[0].best) << "no 32-GPU plan among the ranked ones";
  ASSERT_TRUE(best[1].best);
  EXPECT_EQ(best[1].best->config().rank_order(), "") << "the first 64-GPU plan";
  best[0].best = Plan(32, 8, 1, "", 3.5, 0.2);
  best.push_back({128, std::nullopt, "no configuration fits in memory"});
  PlanTableOptions o;
  o.profile = "lab@3";
  o.objective = v1::OBJECTIVE_COST;
  o.per_gpu_count = best;
  const std::string out = FormatPlanTable(r, o);
  EXPECT_EQ(out.substr(0, out.find("#  GPUs")),
            "profile lab@3\n\n"
            "best plan per GPU count (by cost):\n"
            "GPUs  iter s  tokens/s  MFU %  mem GiB  $/iter  best plan\n"
            "  32   3.500      300k   50.0     40.0  0.2000  TP8 PP4 DP1, micro-batch 1, global batch 512, recompute "
            "selective, sequence parallel, ZeRO-1, flash attention, schedule 1f1b\n"
            "  64   2.000      524k   50.0     40.0  0.2500  TP8 PP4 DP2, micro-batch 1, global batch 512, recompute "
            "selective, sequence parallel, ZeRO-1, flash attention, schedule 1f1b\n"
            " 128       -         -      -        -       -  no plan fits: no configuration fits in memory\n\n");
}

TEST(PlanTable, SmallIterationTimesKeepFourDigits) {
  v1::PlanResponse r = Response();
  r.mutable_plans(0)->set_iteration_time_s(0.009123);
  r.mutable_plans(1)->set_iteration_time_s(0.0093);
  r.mutable_plans(2)->set_iteration_time_s(0.25);
  PlanTableOptions o;
  o.profile = "lab@3";
  const std::string out = FormatPlanTable(r, o);
  EXPECT_NE(out.find("tp-cp-ep-dp-pp  0.009123 "), std::string::npos) << out;
  EXPECT_NE(out.find("tp-cp-ep-pp-dp  0.009300 "), std::string::npos) << out;
  EXPECT_NE(out.find("tp-cp-ep-dp-pp  0.250000 "), std::string::npos) << out;
}

TEST(PlanTable, NoPlan) {
  v1::PlanResponse r;
  r.set_infeasible_reason("no configuration fits in memory");
  PlanTableOptions o;
  o.profile = "lab@3";
  EXPECT_EQ(FormatPlanTable(r, o),
            "profile lab@3\n\nno plan: no configuration fits in memory\n\n0 candidates enumerated, 0 feasible, 0 "
            "evaluated in 0.000 s, search complete; 0 plans on the Pareto front (time, cost, energy, memory)\n");
  o.style = TableStyle::kCsv;
  EXPECT_EQ(FormatPlanTable(r, o).find("\r\n"), FormatPlanTable(r, o).size() - 2) << "the header record only";
}

// ---------------------------------------------------------------------------------------
// compare.

Comparison Compared() {
  Comparison c;
  c.given = Plan(64, 8, 2, "", 2.5, 0.3125);
  c.given.mutable_time()->set_compute_s(2.0);
  c.given.mutable_time()->set_tp_comm_s(0.5);
  c.given.mutable_memory()->set_weights_bytes(10 * kGiB);
  c.best = Plan(64, 4, 4, "", 2.0, 0.25);
  c.best->mutable_time()->set_compute_s(1.9);
  c.best->mutable_time()->set_dp_comm_s(0.1);
  c.best->mutable_memory()->set_weights_bytes(20 * kGiB);
  c.best->mutable_memory()->set_total_bytes(60 * kGiB);
  c.best->set_bottleneck("data-parallel comm");
  return c;
}

TEST(Compare, SideBySideWithRatios) {
  EXPECT_EQ(FormatComparison(Compared()),
            "profile lab@3, 64 GPUs, global batch 512, best by time\n"
            "given  TP8 PP4 DP2, micro-batch 1, global batch 512, recompute selective, sequence parallel, ZeRO-1, "
            "flash attention, schedule 1f1b\n"
            "best   TP4 PP4 DP4, micro-batch 1, global batch 512, recompute selective, sequence parallel, ZeRO-1, "
            "flash attention, schedule 1f1b\n"
            "\n"
            "                          given                best  best/given\n"
            "iteration s               2.500               2.000       0.800\n"
            "  compute                2.0000              1.9000       0.950\n"
            "  tensor-parallel comm   0.5000              0.0000       0.000\n"
            "  data-parallel comm     0.0000              0.1000           -\n"
            "memory GiB                 40.0                60.0       1.500\n"
            "  weights                  10.0                20.0       2.000\n"
            "fits                        yes                 yes\n"
            "tokens/s                   419k                524k       1.250\n"
            "samples/s                   205                 256       1.250\n"
            "MFU %                      50.0                50.0       1.000\n"
            "TFLOP/s per GPU             0.0                 0.0           -\n"
            "$/iter                   0.3125              0.2500       0.800\n"
            "kJ/iter                  1234.6              1234.6       1.000\n"
            "bottleneck              compute  data-parallel comm\n"
            "\n"
            "the best plan takes 0.800x the iteration time of the given configuration (20.0% less)\n");
}

// A CNN's spatial communication is its own row and CSV field.
TEST(Compare, SpatialCommIsItsOwnRow) {
  Comparison c = Compared();
  c.given.mutable_time()->set_spatial_comm_s(0.25);
  EXPECT_NE(FormatComparison(c).find("\n  spatial comm (halos, cut)   0.2500  "), std::string::npos) << FormatComparison(c);
  EXPECT_NE(ComparisonCsv(c).find("spatial_comm_s,0.25,0,0\r\n"), std::string::npos) << ComparisonCsv(c);
}

TEST(Compare, ByCostAndWithoutAPlan) {
  Comparison c = Compared();
  c.objective = v1::OBJECTIVE_COST;
  const std::string out = FormatComparison(c);
  EXPECT_NE(out.find("best by cost\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\nthe best plan takes 0.800x the cost per iteration of the given configuration (20.0% less)\n"),
            std::string::npos)
      << out;
  c.best.reset();
  c.no_plan_reason = "no configuration fits in memory";
  const std::string alone = FormatComparison(c);
  EXPECT_NE(alone.find("\n                          given\niteration s               2.500\n"), std::string::npos) << alone;
  const std::string tail = "compute\n\nno plan fits: no configuration fits in memory\n";
  EXPECT_EQ(alone.substr(alone.size() - tail.size()), tail);
  EXPECT_EQ(ComparisonJson(c, false).substr(ComparisonJson(c, false).size() - 13), ",\"best\":null}");
}

TEST(Compare, JsonIsGivenAndBest) {
  const Comparison c = Compared();
  EXPECT_EQ(ComparisonJson(c, false),
            absl::StrCat("{\"given\":", PrintJson(c.given, false), ",\"best\":", PrintJson(*c.best, false), "}"));
  // Pretty: the two Estimates indented one level under the object.
  const std::string pretty = ComparisonJson(c, true);
  EXPECT_EQ(pretty.substr(0, 31), "{\n \"given\": {\n  \"config\": {\n   ");
  EXPECT_EQ(pretty.substr(pretty.size() - 6), "\n }\n}\n");
  google::protobuf::util::JsonParseOptions lenient;
  v1::Estimate given;
  const size_t start = pretty.find("{", 1), end = pretty.find("\n },\n \"best\"");
  ASSERT_NE(end, std::string::npos) << pretty;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(pretty.substr(start, end + 3 - start), &given, lenient).ok());
  EXPECT_EQ(given.iteration_time_s(), 2.5);
}

TEST(Compare, Csv) {
  const std::string csv = ComparisonCsv(Compared());
  EXPECT_EQ(csv.substr(0, csv.find("iteration_time_s")),
            "metric,given,best,best_over_given\r\n"
            "profile,lab@3,lab@3,\r\n"
            "gpus,64,64,\r\n"
            "config,\"TP8 PP4 DP2, micro-batch 1, global batch 512, recompute selective, sequence parallel, ZeRO-1, "
            "flash attention, schedule 1f1b\",\"TP4 PP4 DP4, micro-batch 1, global batch 512, recompute selective, "
            "sequence parallel, ZeRO-1, flash attention, schedule 1f1b\",\r\n");
  EXPECT_NE(csv.find("iteration_time_s,2.5,2,0.8\r\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("tp_comm_s,0.5,0,0\r\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("dp_comm_s,0,0.1,\r\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("fits,true,true,\r\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("bottleneck,compute,data-parallel comm,\r\n"), std::string::npos) << csv;
}

}  // namespace
}  // namespace paraplan::cli
