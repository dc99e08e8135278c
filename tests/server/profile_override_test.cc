// What a profile_override changed (server/profile_override.h): the differing fields by
// path, with their values, the server-assigned fields left out, long lists cut short.
#include "server/profile_override.h"

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace paraplan::server {
namespace {

using ::testing::ElementsAre;

v1::SystemProfile TwoLevels() {
  v1::SystemProfile p;
  p.set_name("cluster");
  p.set_version(3);
  p.set_gpus_per_node(8);
  p.mutable_accelerator()->set_name("A100");
  p.mutable_accelerator()->set_memory_gib(80);
  for (const char* name : {"nvlink", "infiniband"}) {
    v1::NetworkLevel* l = p.add_network_levels();
    l->set_name(name);
    l->set_bandwidth_gbytes_per_s(25);
    l->set_topology(v1::TOPOLOGY_SWITCH);
  }
  return p;
}

TEST(ProfileOverride, DifferencesByPathWithTheirValues) {
  const v1::SystemProfile stored = TwoLevels();
  v1::SystemProfile changed = stored;
  EXPECT_THAT(ProfileDifferences(stored, changed), ElementsAre());
  changed.mutable_network_levels(1)->set_bandwidth_gbytes_per_s(50);
  changed.mutable_network_levels(1)->set_topology(v1::TOPOLOGY_FAT_TREE);
  changed.mutable_accelerator()->set_name("H100");
  changed.set_price_per_gpu_hour_usd(2.5);
  EXPECT_THAT(ProfileDifferences(stored, changed),
              ElementsAre("accelerator.name \"A100\" -> \"H100\"",
                          "network_levels[1].bandwidth_gbytes_per_s 25 -> 50",
                          "network_levels[1].topology TOPOLOGY_SWITCH -> TOPOLOGY_FAT_TREE",
                          "price_per_gpu_hour_usd 0 -> 2.5"));
  // A list of another length is one difference; a message set on one side only is
  // compared with its defaults.
  v1::SystemProfile more = stored;
  more.add_network_levels()->set_name("spine");
  more.mutable_host()->set_memory_gib(512);
  EXPECT_THAT(ProfileDifferences(stored, more),
              ElementsAre("network_levels: 2 -> 3 entries", "host.memory_gib 0 -> 512"));
}

TEST(ProfileOverride, ServerAssignedFieldsAreNotCompared) {
  const v1::SystemProfile stored = TwoLevels();
  v1::SystemProfile changed = stored;
  changed.set_version(9);
  changed.set_origin("user");
  changed.set_promoted(true);
  changed.set_is_default(true);
  changed.mutable_created_at()->set_seconds(1);
  changed.mutable_fit_report()->set_num_measurements(4);
  EXPECT_THAT(ProfileDifferences(stored, changed), ElementsAre());
  EXPECT_EQ(OverrideWarning(stored, changed),
            "profile_override: cluster@3 as changed for this request only, not stored (no field differs from the "
            "stored version)");
}

TEST(ProfileOverride, WarningListsAtMostEightDifferences) {
  const v1::SystemProfile stored = TwoLevels();
  v1::SystemProfile changed = stored;
  changed.mutable_accelerator()->set_peak_tflops_bf16(1);
  changed.mutable_accelerator()->set_peak_tflops_fp16(2);
  changed.mutable_accelerator()->set_peak_tflops_fp8(3);
  changed.mutable_accelerator()->set_peak_tflops_fp32(4);
  changed.mutable_accelerator()->set_memory_gib(5);
  changed.mutable_accelerator()->set_memory_bandwidth_gbytes_per_s(6);
  changed.mutable_accelerator()->set_busy_power_w(7);
  changed.mutable_accelerator()->set_idle_power_w(8);
  changed.set_node_power_w(9);
  changed.set_price_per_gpu_hour_usd(10);
  ASSERT_EQ(ProfileDifferences(stored, changed).size(), 10u);
  const std::string w = OverrideWarning(stored, changed);
  EXPECT_EQ(w.rfind("profile_override: cluster@3 as changed for this request only, not stored: accelerator.", 0), 0u)
      << w;
  EXPECT_TRUE(absl::EndsWith(w, "; accelerator.busy_power_w 0 -> 7; accelerator.idle_power_w 0 -> 8; and 2 more")) << w;
}

}  // namespace
}  // namespace paraplan::server
