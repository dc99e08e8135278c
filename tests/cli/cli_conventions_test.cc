// Unit tests of the CLI's conventions (plain C++ over the message types, no server):
// suggestions, CSV quoting, lower-case enum names in JSON input, 64-bit integers as JSON
// numbers, the configuration flags and --set overrides. The plan table and the
// comparison: plan_table_test.cc. Expected texts are written out in full.
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "client/args.h"
#include "client/config_flags.h"
#include "client/csv.h"
#include "client/input.h"
#include "client/json_enums.h"
#include "client/json_int64.h"
#include "client/json_io.h"
#include "client/layer_times.h"
#include "client/overrides.h"
#include "client/suggest.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace paraplan::cli {
namespace {

// ---------------------------------------------------------------------------------------
// Suggestions and CSV.

// put-layer-times input: milliseconds per sample become seconds; a header is optional;
// errors name the line and the column; a row replaces the stored one of its layer.
TEST(LayerTimes, ParsesMergesAndNamesBadLines) {
  absl::StatusOr<std::vector<v1::LayerTiming>> rows =
      ParseLayerTimes("workload,layer,forward_ms,backward_ms\n# comment\nalexnet, conv1 ,1.5,3\nalexnet,fc6,0.25,0.5\n");
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].layer(), "conv1");
  EXPECT_DOUBLE_EQ((*rows)[0].forward_s_per_sample(), 1.5e-3);
  EXPECT_DOUBLE_EQ((*rows)[1].backward_s_per_sample(), 0.5e-3);
  v1::SystemProfile p;
  v1::LayerTiming old;
  old.set_workload("alexnet");
  old.set_layer("fc6");
  old.set_forward_s_per_sample(9);
  *p.add_layer_timings() = old;
  EXPECT_EQ(MergeLayerTimes(*rows, &p), 1);
  ASSERT_EQ(p.layer_timings_size(), 2);
  EXPECT_DOUBLE_EQ(p.layer_timings(0).forward_s_per_sample(), 0.25e-3);
  EXPECT_EQ(ParseLayerTimes("alexnet,conv1,1\n").status().message(),
            "line 1: 3 columns; want workload,layer,forward_ms,backward_ms");
  EXPECT_EQ(ParseLayerTimes("a,b,1,2\nalexnet,conv1,-1,2\n").status().message(),
            "line 2: forward_ms \"-1\" is not a time in milliseconds >= 0");
  EXPECT_EQ(ParseLayerTimes(",conv1,1,2\n").status().message(), "line 1: workload must not be empty");
  EXPECT_FALSE(ParseLayerTimes("workload,layer,forward_ms,backward_ms\n").ok());
}

TEST(Suggest, EditDistanceCountsSwapsAsOne) {
  EXPECT_EQ(EditDistance("gpus", "gpus"), 0);
  EXPECT_EQ(EditDistance("gpu", "gpus"), 1);
  EXPECT_EQ(EditDistance("plna", "plan"), 1);  // neighbours swapped
  EXPECT_EQ(EditDistance("PLAN", "plan"), 0);
  EXPECT_EQ(EditDistance("", "abc"), 3);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3);
}

TEST(Suggest, DidYouMeanNamesTheClosestOnly) {
  const std::vector<std::string> flags = {"gpus", "global-batch", "top", "tp", "pp"};
  EXPECT_EQ(DidYouMean("gpu", flags, "--"), " (did you mean --gpus?)");
  EXPECT_EQ(DidYouMean("global-bach", flags, "--"), " (did you mean --global-batch?)");
  EXPECT_EQ(DidYouMean("tpp", flags, "--"), " (did you mean --top, --tp or --pp?)");
  EXPECT_EQ(DidYouMean("frobnicate", flags, "--"), "");
  EXPECT_EQ(DidYouMean("glob", flags), " (did you mean global-batch?)") << "a prefix of 3+ characters";
}

TEST(Csv, QuotesPerRfc4180) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField(""), "");
  EXPECT_EQ(CsvRecord({"x", "1,5", ""}), "x,\"1,5\",\r\n");
}

// ---------------------------------------------------------------------------------------
// JSON input: enum names as people write them.

TEST(JsonEnums, ValueFromTextAcceptsLowerCaseAndUnprefixed) {
  const auto name = [](const google::protobuf::EnumDescriptor* e, const char* text) {
    const auto* v = EnumValueFromText(*e, text);
    return v == nullptr ? std::string("(none)") : v->name();
  };
  EXPECT_EQ(name(v1::Recompute_descriptor(), "selective"), "RECOMPUTE_SELECTIVE");
  EXPECT_EQ(name(v1::Recompute_descriptor(), "RECOMPUTE_FULL"), "RECOMPUTE_FULL");
  EXPECT_EQ(name(v1::Recompute_descriptor(), "recompute_none"), "RECOMPUTE_NONE");
  EXPECT_EQ(name(v1::Precision_descriptor(), "bf16"), "PRECISION_BF16");
  EXPECT_EQ(name(v1::PipelineSchedule_descriptor(), "interleaved_1f1b"), "SCHEDULE_INTERLEAVED_1F1B");
  EXPECT_EQ(name(v1::PipelineSchedule_descriptor(), "zero-bubble"), "SCHEDULE_ZERO_BUBBLE");
  EXPECT_EQ(name(v1::PipelineSchedule_descriptor(), "interleaved"), "(none)");
  EXPECT_EQ(name(v1::Normalization_descriptor(), "rmsnorm"), "NORMALIZATION_RMSNORM");
  EXPECT_EQ(name(v1::Topology_descriptor(), "fat tree"), "TOPOLOGY_FAT_TREE");
  EXPECT_EQ(name(v1::PlanConstraints::Flag_descriptor(), "on"), "FLAG_ON");
  EXPECT_EQ(name(v1::Recompute_descriptor(), ""), "(none)");
}

TEST(JsonEnums, NormalizeRewritesOnlyEnumValuesAndKeepsTheLayout) {
  const std::string in =
      "{\"recompute\": \"selective\",\n"
      " \"pipelineSchedule\": \"interleaved_1f1b\", \"rank_order\": \"selective\",\n"
      " \"offload\": {\"optimizer\": true}, \"note\": \"full\", \"tensor_parallel\": 8}";
  EXPECT_EQ(NormalizeEnumNames(in, v1::ParallelConfig::descriptor()),
            "{\"recompute\": \"RECOMPUTE_SELECTIVE\",\n"
            " \"pipelineSchedule\": \"SCHEDULE_INTERLEAVED_1F1B\", \"rank_order\": \"selective\",\n"
            " \"offload\": {\"optimizer\": true}, \"note\": \"full\", \"tensor_parallel\": 8}");
}

TEST(JsonEnums, NormalizeFollowsNestedMessagesArraysAndMaps) {
  // A measurement: workload.precision, workload.transformer.normalization, config
  // enums; labels (a map of strings) are left alone even where a value looks like one.
  const std::string in =
      R"({"id": "m1", "workload": {"precision": "bf16", "transformer": {"normalization": "rmsnorm"}},)"
      R"( "config": {"recompute": "full", "dp_algorithm": "halving_doubling"},)"
      R"( "labels": {"recompute": "full"}, "observed_at": "2026-01-02T03:04:05Z"})";
  EXPECT_EQ(NormalizeEnumNames(in, v1::Measurement::descriptor()),
            R"({"id": "m1", "workload": {"precision": "PRECISION_BF16", "transformer": {"normalization": )"
            R"("NORMALIZATION_RMSNORM"}}, "config": {"recompute": "RECOMPUTE_FULL", "dp_algorithm": )"
            R"("ALGORITHM_HALVING_DOUBLING"}, "labels": {"recompute": "full"}, "observed_at": "2026-01-02T03:04:05Z"})");
  // Repeated enums, and repeated messages holding enums.
  EXPECT_EQ(NormalizeEnumNames(R"({"constraints": {"recompute": ["full", "none"], "sequence_parallel": "off"}})",
                               v1::PlanRequest::descriptor()),
            R"({"constraints": {"recompute": ["RECOMPUTE_FULL", "RECOMPUTE_NONE"], "sequence_parallel": "FLAG_OFF"}})");
  EXPECT_EQ(NormalizeEnumNames(R"({"network_levels": [{"name": "ib", "topology": "fat_tree"}, {"topology": "ring"}]})",
                               v1::SystemProfile::descriptor()),
            R"({"network_levels": [{"name": "ib", "topology": "TOPOLOGY_FAT_TREE"}, {"topology": "TOPOLOGY_RING"}]})");
}

TEST(JsonEnums, LeavesWhatItCannotMapOrParse) {
  const std::string unknown = R"({"recompute": "sometimes"})";
  EXPECT_EQ(NormalizeEnumNames(unknown, v1::ParallelConfig::descriptor()), unknown);
  const std::string broken = R"({"recompute": "full", )";
  EXPECT_EQ(NormalizeEnumNames(broken, v1::ParallelConfig::descriptor()), broken);
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += "[";
  EXPECT_EQ(NormalizeEnumNames(deep, v1::ParallelConfig::descriptor()), deep);
}

TEST(JsonEnums, LoadJsonLineParsesLowerCaseNames) {
  v1::EstimateRequest req;
  ASSERT_TRUE(LoadJsonLine("requests.jsonl", 3,
                           R"({"profile": "p", "workload": {"precision": "fp8"}, "config": {"recompute": "selective",)"
                           R"( "pipeline_schedule": "interleaved_1f1b"}})",
                           &req)
                  .ok());
  EXPECT_EQ(req.workload().precision(), v1::PRECISION_FP8);
  EXPECT_EQ(req.config().recompute(), v1::RECOMPUTE_SELECTIVE);
  EXPECT_EQ(req.config().pipeline_schedule(), v1::SCHEDULE_INTERLEAVED_1F1B);
  // protobuf drops an unknown enum value where it ignores unknown fields; here it is an error.
  EXPECT_EQ(LoadJsonLine("requests.jsonl", 3, R"({"note": "x", "config": {"recompute": "sometimes"}})", &req).message(),
            "requests.jsonl:3: not a valid EstimateRequest: recompute: \"sometimes\" is not one of none, selective, "
            "full");
  // A syntax error is reported as such, not as the enum value before it.
  const absl::Status syntax = LoadJsonLine("requests.jsonl", 4, R"({"config": {"recompute": "sometimes"})", &req);
  EXPECT_EQ(std::string(syntax.message()).find("requests.jsonl:4:"), 0u) << syntax.message();
  EXPECT_EQ(std::string(syntax.message()).find("is not one of"), std::string::npos) << syntax.message();
}

// ---------------------------------------------------------------------------------------
// JSON output: 64-bit integers as numbers.

// Quoted integers in printed JSON (what protobuf's printer does for 64-bit fields).
int ToJsonQuotedInt64Count(const std::string& json) {
  int n = 0;
  for (size_t at = json.find(":\""); at != std::string::npos; at = json.find(":\"", at + 1)) {
    size_t k = at + 2;
    if (k < json.size() && json[k] == '-') ++k;
    const size_t digits = k;
    while (k < json.size() && std::isdigit(static_cast<unsigned char>(json[k]))) ++k;
    if (k > digits && k < json.size() && json[k] == '"') ++n;
  }
  return n;
}

TEST(JsonInt64, PrintsNumbersNotStrings) {
  v1::Workload w;
  w.set_name("w");
  w.mutable_transformer()->set_hidden_size(12288);
  w.mutable_transformer()->set_vocab_size(51200);
  w.mutable_transformer()->set_num_layers(96);
  w.mutable_dataset()->set_num_samples(-1);  // negative: still a number
  v1::Layer* l = w.mutable_layer_graph()->add_layers();  // the oneof: the transformer goes
  l->add_input_shape(3);
  l->add_input_shape(9223372036854775807);
  l->set_kind("conv");
  EXPECT_GT(ToJsonQuotedInt64Count(ToJson(w, false)), 0) << "protobuf's printer quotes them";
  const std::string json = PrintJson(w, false);
  EXPECT_NE(json.find(R"("input_shape":[3,9223372036854775807])"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("num_samples":-1,)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("groups":0,)"), std::string::npos) << json;
  EXPECT_EQ(ToJsonQuotedInt64Count(json), 0) << json;
  // What is printed parses back exactly.
  v1::Workload back;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(PrintJson(w, true), &back).ok());
  EXPECT_EQ(back.layer_graph().layers(0).input_shape(1), 9223372036854775807);
}

// -0 (here from an underflowing -.0e1350) loads as 0, so that what is printed reads back
// as the same message (JSON prints -0 as "-0", which reads back as 0); nested fields too.
TEST(JsonNumbers, NegativeZeroLoadsAsZero) {
  v1::Workload w;
  ASSERT_TRUE(LoadJsonLine("w.jsonl", 1, R"({"training_tokens": -.0e1350, "dataset": {"fraction": -0.0}})", &w).ok());
  EXPECT_FALSE(std::signbit(w.training_tokens()));
  EXPECT_FALSE(std::signbit(w.dataset().fraction()));
  v1::Workload back;
  ASSERT_TRUE(LoadJsonLine("printed", 1, PrintJson(w, false), &back).ok());
  EXPECT_EQ(back.SerializeAsString(), w.SerializeAsString());
}

TEST(JsonInt64, ResponseCountsAndTextThatLooksLikeANumber) {
  v1::PlanResponse r;
  r.set_candidates_enumerated(3044440);
  r.set_infeasible_reason("12");  // a string field: stays a string
  const std::string json = PrintJson(r, false);
  EXPECT_NE(json.find(R"("candidates_enumerated":3044440,)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("infeasible_reason":"12")"), std::string::npos) << json;
  EXPECT_EQ(Int64AsNumbers(R"({"hidden_size": "0x10"})", v1::TransformerSpec::descriptor()),
            R"({"hidden_size": "0x10"})");
}

// ---------------------------------------------------------------------------------------
// Configuration flags.

Args WithOptions(std::map<std::string, std::string> options, std::set<std::string> flags = {}) {
  Args a;
  a.options = std::move(options);
  a.flags = std::move(flags);
  return a;
}

TEST(ConfigFlags, SetTheConfigAndOverrideAFile) {
  v1::ParallelConfig c;
  c.set_tensor_parallel(2);
  c.set_data_parallel(64);
  c.set_global_batch_size(512);
  const Args a = WithOptions({{"tp", "8"}, {"pp", "4"}, {"recompute", "selective"}, {"sp", "on"}, {"zero", "1"},
                              {"schedule", "interleaved"}, {"vpp", "2"}, {"flash", "off"}},
                             {"cuda-graphs"});
  EXPECT_TRUE(HasConfigFlags(a));
  ASSERT_TRUE(ApplyConfigFlags(a, &c).ok());
  v1::ParallelConfig want;
  want.set_tensor_parallel(8);  // the flag over the file's 2
  want.set_pipeline_parallel(4);
  want.set_data_parallel(64);  // the file's
  want.set_global_batch_size(512);
  want.set_recompute(v1::RECOMPUTE_SELECTIVE);
  want.set_sequence_parallel(true);
  want.set_zero_stage(1);
  want.set_pipeline_schedule(v1::SCHEDULE_INTERLEAVED_1F1B);
  want.set_virtual_pipeline_stages(2);
  want.set_flash_attention(false);
  want.set_cuda_graphs(true);
  EXPECT_EQ(c.DebugString(), want.DebugString());
  EXPECT_FALSE(HasConfigFlags(WithOptions({{"global-batch", "8"}})));
}

// estimate / compare by flags take the plan's choices where a flag says nothing (flash
// for a transformer, SP with TP, overlap), keep what a flag says, and leave a --config
// file as written.
TEST(ConfigFlags, UnsaidSettingsAreThePlans) {
  v1::ParallelConfig c;
  Args a = WithOptions({{"tp", "8"}, {"zero", "1"}, {"global-batch", "8"}});
  ASSERT_TRUE(ApplyConfigFlags(a, &c).ok());
  ApplyPlanDefaults(a, /*transformer=*/true, &c);
  EXPECT_TRUE(c.flash_attention() && c.sequence_parallel() && c.overlap_grad_reduce() && c.overlap_param_gather())
      << c.DebugString();

  v1::ParallelConfig said;
  a = WithOptions({{"tp", "8"}, {"flash", "off"}, {"sp", "off"}, {"overlap-grad-reduce", "off"}, {"global-batch", "8"}});
  ASSERT_TRUE(ApplyConfigFlags(a, &said).ok());
  ApplyPlanDefaults(a, /*transformer=*/true, &said);
  EXPECT_FALSE(said.flash_attention() || said.sequence_parallel() || said.overlap_grad_reduce() ||
               said.overlap_param_gather())
      << said.DebugString();

  v1::ParallelConfig cnn;  // no attention to flash; TP 1: no SP
  a = WithOptions({{"dp", "8"}, {"global-batch", "8"}});
  ASSERT_TRUE(ApplyConfigFlags(a, &cnn).ok());
  ApplyPlanDefaults(a, /*transformer=*/false, &cnn);
  EXPECT_FALSE(cnn.flash_attention() || cnn.sequence_parallel()) << cnn.DebugString();

  v1::ParallelConfig file;
  file.set_tensor_parallel(8);
  ApplyPlanDefaults(WithOptions({{"config", "c.json"}}), /*transformer=*/true, &file);
  EXPECT_FALSE(file.flash_attention() || file.sequence_parallel() || file.overlap_grad_reduce()) << file.DebugString();
}

// --tp-comm-overlap / --no-tp-comm-overlap state it (both ways, in a configuration and in
// the plan's constraints); neither leaves it unset, for the framework's default.
TEST(ConfigFlags, TpCommOverlapIsStatedOrLeftToTheFramework) {
  v1::ParallelConfig c;
  ASSERT_TRUE(ApplyConfigFlags(WithOptions({{"tp", "4"}}), &c).ok());
  EXPECT_FALSE(c.has_tp_comm_overlap());
  ASSERT_TRUE(ApplyConfigFlags(WithOptions({{"tp", "4"}}, {"no-tp-comm-overlap"}), &c).ok());
  EXPECT_TRUE(c.has_tp_comm_overlap() && !c.tp_comm_overlap());
  EXPECT_TRUE(HasConfigFlags(WithOptions({}, {"no-tp-comm-overlap"})));
  v1::PlanConstraints k;
  ASSERT_TRUE(ApplyConstraintFlags(WithOptions({{"tp", "4"}}), &k).ok());
  EXPECT_FALSE(k.has_tp_comm_overlap());
  ASSERT_TRUE(ApplyConstraintFlags(WithOptions({{"tp", "4"}}, {"tp-comm-overlap"}), &k).ok());
  EXPECT_TRUE(k.has_tp_comm_overlap() && k.tp_comm_overlap());
  EXPECT_EQ(ApplyConfigFlags(WithOptions({}, {"tp-comm-overlap", "no-tp-comm-overlap"}), &c).message(),
            "--tp-comm-overlap: give --tp-comm-overlap or --no-tp-comm-overlap, not both");
}

TEST(ConfigFlags, ErrorsNameTheFlag) {
  v1::ParallelConfig c;
  EXPECT_EQ(ApplyConfigFlags(WithOptions({{"tp", "8,16"}}), &c).message(),
            "--tp: \"8,16\" is a list; give one value (lists are for plan)");
  EXPECT_EQ(ApplyConfigFlags(WithOptions({{"pp", "0"}}), &c).message(), "--pp: \"0\" is not an integer >= 1");
  EXPECT_EQ(ApplyConfigFlags(WithOptions({{"zero", "4"}}), &c).message(), "--zero: \"4\" is not a ZeRO stage 0-3");
  EXPECT_EQ(ApplyConfigFlags(WithOptions({{"recompute", "most"}}), &c).message(),
            "--recompute: \"most\" is not none, selective or full");
  EXPECT_EQ(ApplyConfigFlags(WithOptions({{"sp", "any"}}), &c).message(), "--sp: \"any\" is not on or off");
  EXPECT_EQ(ApplyConfigFlags(WithOptions({{"schedule", "2f2b"}}), &c).message(),
            "--schedule: \"2f2b\" is not 1f1b, gpipe, interleaved or zero-bubble");
}

TEST(ConfigFlags, PlanReadsTheSameFlagsAsConstraints) {
  v1::PlanConstraints k;
  ASSERT_TRUE(ApplyConstraintFlags(WithOptions({{"tp", "4,8"}, {"recompute", "selective,full"}, {"sp", "on"},
                                                {"schedule", "1f1b,interleaved"}, {"max-pp", "16"}}),
                                   &k)
                  .ok());
  EXPECT_EQ(k.tensor_parallel_size(), 2);
  EXPECT_EQ(k.tensor_parallel(1), 8);
  EXPECT_EQ(k.recompute(1), v1::RECOMPUTE_FULL);
  EXPECT_EQ(k.pipeline_schedule(1), v1::SCHEDULE_INTERLEAVED_1F1B);
  EXPECT_EQ(k.sequence_parallel(), v1::PlanConstraints::FLAG_ON);
  EXPECT_EQ(k.flash_attention(), v1::PlanConstraints::FLAG_ANY);
  EXPECT_EQ(k.max_pipeline_parallel(), 16);
  EXPECT_EQ(ApplyConstraintFlags(WithOptions({{"dp", "x"}}), &k).message(),
            "--dp: \"x\" is not a list of non-negative integers");
}

// ---------------------------------------------------------------------------------------
// --set overrides.

v1::SystemProfile Profile() {
  v1::SystemProfile p;
  p.set_name("lab");
  p.set_version(3);
  p.mutable_accelerator()->set_memory_gib(80);
  v1::NetworkLevel* nv = p.add_network_levels();
  nv->set_name("nvlink");
  nv->set_bandwidth_gbytes_per_s(300);
  v1::NetworkLevel* ib = p.add_network_levels();
  ib->set_name("infiniband");
  ib->set_bandwidth_gbytes_per_s(25);
  return p;
}

absl::Status Set(const std::string& text, v1::SystemProfile* p) {
  absl::StatusOr<Override> o = ParseOverride(text);
  if (!o.ok()) return o.status();
  return ApplyOverride(*o, p);
}

TEST(Overrides, ChangeFieldsByPathAndLevelName) {
  v1::SystemProfile p = Profile();
  ASSERT_TRUE(Set("network.infiniband.bandwidth_gbytes_per_s=100", &p).ok());
  ASSERT_TRUE(Set("accelerator.memory_gib = 40", &p).ok());
  ASSERT_TRUE(Set("calibration.matmul_efficiency=0.7", &p).ok());
  ASSERT_TRUE(Set("network_levels.nvlink.topology=fat_tree", &p).ok());
  ASSERT_TRUE(Set("calibration.network.infiniband.efficiency=0.8", &p).ok()) << "an entry for a known level";
  ASSERT_TRUE(Set("calibration.halo_host_staged=on", &p).ok());
  ASSERT_TRUE(Set("accelerator.sm_count=108", &p).ok());
  EXPECT_EQ(p.network_levels(1).bandwidth_gbytes_per_s(), 100);
  EXPECT_EQ(p.network_levels(0).bandwidth_gbytes_per_s(), 300);
  EXPECT_EQ(p.accelerator().memory_gib(), 40);
  EXPECT_EQ(p.calibration().matmul_efficiency(), 0.7);
  EXPECT_EQ(p.network_levels(0).topology(), v1::TOPOLOGY_FAT_TREE);
  ASSERT_EQ(p.calibration().network_size(), 1);
  EXPECT_EQ(p.calibration().network(0).level(), "infiniband");
  EXPECT_EQ(p.calibration().network(0).efficiency(), 0.8);
  EXPECT_TRUE(p.calibration().halo_host_staged());
  EXPECT_EQ(p.accelerator().sm_count(), 108);
  ASSERT_TRUE(Set("calibration.network.infiniband.latency_us=7", &p).ok());
  EXPECT_EQ(p.calibration().network_size(), 1) << "the entry is found, not added twice";
}

TEST(Overrides, ErrorsSayWhatIsWrongAndWhatIsThere) {
  v1::SystemProfile p = Profile();
  const auto message = [&](const std::string& text) { return std::string(Set(text, &p).message()); };
  EXPECT_EQ(message("accelerator.memory_gb=40"),
            "--set accelerator.memory_gb: no field \"memory_gb\" in accelerator (did you mean accelerator.memory_gib?)");
  EXPECT_EQ(message("network.infiniband.bandwith_gbytes_per_s=100"),
            "--set network.infiniband.bandwith_gbytes_per_s: no field \"bandwith_gbytes_per_s\" in "
            "network.infiniband (did you mean network.infiniband.bandwidth_gbytes_per_s?)");
  EXPECT_EQ(message("network.ib.bandwidth_gbytes_per_s=100"),
            "--set network.ib.bandwidth_gbytes_per_s: no network level \"ib\" (levels: nvlink, infiniband)");
  EXPECT_EQ(message("host.frobnicate=1").rfind(
                "--set host.frobnicate: no field \"frobnicate\" in host (host has memory_gib, pcie_gbytes_per_s", 0),
            0u)
      << "the fields there are, in proto order: " << message("host.frobnicate=1");
  EXPECT_EQ(message("accelerator.memory_gib=lots"), "--set accelerator.memory_gib: \"lots\" is not a number");
  EXPECT_EQ(message("accelerator.memory_gib=inf"), "--set accelerator.memory_gib: \"inf\" is not a number");
  EXPECT_EQ(message("accelerator=1").rfind(
                "--set accelerator: accelerator is a message; name one of its fields: name, peak_tflops_bf16, "
                "peak_tflops_fp16, peak_tflops_fp8, peak_tflops_fp32, memory_gib, ",
                0),
            0u)
      << message("accelerator=1");
  EXPECT_EQ(message("network=1"),
            "--set network: network is a list; name a network level (nvlink, infiniband) and a field");
  EXPECT_EQ(message("version=9"), "--set version: version is assigned by the server; it cannot be overridden");
  EXPECT_EQ(message("name=other"), "--set name: name names the profile; it cannot be overridden");
  EXPECT_EQ(message("network.nvlink.topology=mesh"),
            "--set network.nvlink.topology: \"mesh\" is not one of TOPOLOGY_UNSPECIFIED, TOPOLOGY_SWITCH, "
            "TOPOLOGY_FAT_TREE, TOPOLOGY_TORUS_2D, TOPOLOGY_RING, TOPOLOGY_DRAGONFLY, TOPOLOGY_TORUS_3D");
  EXPECT_EQ(message("calibration.network.ethernet.efficiency=0.5"),
            "--set calibration.network.ethernet.efficiency: no network level \"ethernet\" (levels: nvlink, "
            "infiniband)");
  EXPECT_EQ(message("gpus_per_node.x=1"),
            "--set gpus_per_node.x: gpus_per_node is a value, not a message: nothing after it");
  EXPECT_EQ(message("memory_gib"), "--set \"memory_gib\": give PATH=VALUE, e.g. --set accelerator.memory_gib=40");
  EXPECT_EQ(message("accelerator.memory_gib="), "--set accelerator.memory_gib: no value after '='");
  EXPECT_EQ(p.accelerator().memory_gib(), 80) << "a failed override changes nothing it reached";
}

}  // namespace
}  // namespace paraplan::cli
