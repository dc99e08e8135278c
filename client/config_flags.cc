#include "client/config_flags.h"

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/json_enums.h"

namespace paraplan::cli {

namespace {

// Integer flags: the config field each sets, and the constraint list it fills.
struct IntFlag {
  const char* key;
  void (v1::ParallelConfig::*set)(int32_t);
  google::protobuf::RepeatedField<int32_t>* (v1::PlanConstraints::*list)();
};
const IntFlag kIntFlags[] = {
    {"tp", &v1::ParallelConfig::set_tensor_parallel, &v1::PlanConstraints::mutable_tensor_parallel},
    {"pp", &v1::ParallelConfig::set_pipeline_parallel, &v1::PlanConstraints::mutable_pipeline_parallel},
    {"dp", &v1::ParallelConfig::set_data_parallel, &v1::PlanConstraints::mutable_data_parallel},
    {"cp", &v1::ParallelConfig::set_context_parallel, &v1::PlanConstraints::mutable_context_parallel},
    {"ep", &v1::ParallelConfig::set_expert_parallel, &v1::PlanConstraints::mutable_expert_parallel},
    {"vpp", &v1::ParallelConfig::set_virtual_pipeline_stages, &v1::PlanConstraints::mutable_virtual_pipeline_stages},
    {"mbs", &v1::ParallelConfig::set_micro_batch_size, &v1::PlanConstraints::mutable_micro_batch_size},
    {"zero", &v1::ParallelConfig::set_zero_stage, &v1::PlanConstraints::mutable_zero_stage},
};

// Integer flags of a single configuration only (estimate, compare, simulate): plan
// searches these itself.
struct ConfigIntFlag {
  const char* key;
  void (v1::ParallelConfig::*set)(int32_t);
  int min;
};
const ConfigIntFlag kConfigIntFlags[] = {
    {"etp", &v1::ParallelConfig::set_expert_tensor_parallel, 1},
    {"first-stage-layers", &v1::ParallelConfig::set_first_pipeline_stage_layers, 0},
    {"last-stage-layers", &v1::ParallelConfig::set_last_pipeline_stage_layers, 0},
    {"cpu-offload-layers", &v1::ParallelConfig::set_cpu_offload_layers, 0},
};

// on|off switches: the config field, and the constraint's three-way flag.
struct OnOffFlag {
  const char* key;
  void (v1::ParallelConfig::*set)(bool);
  void (v1::PlanConstraints::*constrain)(v1::PlanConstraints::Flag);
};
const OnOffFlag kOnOffFlags[] = {
    {"sp", &v1::ParallelConfig::set_sequence_parallel, &v1::PlanConstraints::set_sequence_parallel},
    {"flash", &v1::ParallelConfig::set_flash_attention, &v1::PlanConstraints::set_flash_attention},
    {"overlap-grad-reduce", &v1::ParallelConfig::set_overlap_grad_reduce,
     &v1::PlanConstraints::set_overlap_grad_reduce},
};

absl::Status Bad(const std::string& key, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("--", key, ": ", what));
}

std::vector<std::string> Items(const std::string& value) { return absl::StrSplit(value, ','); }

absl::Status OneValue(const Args& a, const std::string& key) {
  if (a.Get(key).find(',') != std::string::npos) {
    return Bad(key, absl::StrCat("\"", a.Get(key), "\" is a list; give one value (lists are for plan)"));
  }
  return absl::OkStatus();
}

absl::Status Int(const std::string& key, const std::string& text, int min, int32_t* out) {
  if (!absl::SimpleAtoi(text, out) || *out < min) {
    return Bad(key, absl::StrCat("\"", text, "\" is not an integer >= ", min));
  }
  return absl::OkStatus();
}

absl::Status Recompute(const std::string& text, v1::Recompute* out) {
  const auto* v = EnumValueFromText(*v1::Recompute_descriptor(), text);
  if (v == nullptr || v->number() == v1::RECOMPUTE_UNSPECIFIED) {
    return Bad("recompute", absl::StrCat("\"", text, "\" is not none, selective or full"));
  }
  *out = static_cast<v1::Recompute>(v->number());
  return absl::OkStatus();
}

absl::Status Schedule(const std::string& text, v1::PipelineSchedule* out) {
  if (text == "interleaved") {
    *out = v1::SCHEDULE_INTERLEAVED_1F1B;
    return absl::OkStatus();
  }
  const auto* v = EnumValueFromText(*v1::PipelineSchedule_descriptor(), text);
  if (v == nullptr || v->number() == v1::SCHEDULE_UNSPECIFIED) {
    return Bad("schedule", absl::StrCat("\"", text, "\" is not 1f1b, gpipe, interleaved or zero-bubble"));
  }
  *out = static_cast<v1::PipelineSchedule>(v->number());
  return absl::OkStatus();
}

// The network choices a config or plan pins: --dp-algorithm / --tp-algorithm (ring, tree,
// halving-doubling, hierarchical, torus-2d, topo-halving-doubling, or auto) and
// --placement packed|scattered. One value each in both readings.
struct NetworkChoice {
  const char* key;
  const google::protobuf::EnumDescriptor* (*type)();
  const char* values;
};
constexpr NetworkChoice kNetworkChoices[] = {
    {"dp-algorithm", v1::CollectiveAlgorithm_descriptor,
     "auto, ring, tree, halving-doubling, hierarchical, torus-2d or topo-halving-doubling"},
    {"tp-algorithm", v1::CollectiveAlgorithm_descriptor,
     "auto, ring, tree, halving-doubling, hierarchical, torus-2d or topo-halving-doubling"},
    {"placement", v1::Placement_descriptor, "packed or scattered"}};

absl::Status NetworkChoices(const Args& a, int values[3]) {
  for (int i = 0; i < 3; ++i) {
    const NetworkChoice& f = kNetworkChoices[i];
    values[i] = -1;
    if (!a.Has(f.key)) continue;
    if (absl::Status s = OneValue(a, f.key); !s.ok()) return s;
    const std::string text = a.Get(f.key);
    if (text == "auto") {
      values[i] = 0;
      continue;
    }
    const auto* v = EnumValueFromText(*f.type(), text);
    if (v == nullptr || v->number() == 0) return Bad(f.key, absl::StrCat("\"", text, "\" is not ", f.values));
    values[i] = v->number();
  }
  return absl::OkStatus();
}

// --tp-comm-overlap / --no-tp-comm-overlap into `m`'s tp_comm_overlap (a ParallelConfig or
// PlanConstraints); neither leaves it to the framework's default.
template <typename Message>
absl::Status TpCommOverlapFlag(const Args& a, Message* m) {
  const bool on = a.flags.count("tp-comm-overlap") > 0, off = a.flags.count("no-tp-comm-overlap") > 0;
  if (on && off) return Bad("tp-comm-overlap", "give --tp-comm-overlap or --no-tp-comm-overlap, not both");
  if (on || off) m->set_tp_comm_overlap(on);
  return absl::OkStatus();
}

}  // namespace

absl::Status FrameworkFlag(const Args& a, v1::Framework* out) {
  *out = v1::FRAMEWORK_UNSPECIFIED;
  // "any" says so explicitly: plan --emit then searches every framework's plans.
  if (!a.Has("framework") || a.Get("framework") == "any") return absl::OkStatus();
  const auto* v = EnumValueFromText(*v1::Framework_descriptor(), a.Get("framework"));
  if (v == nullptr || v->number() == v1::FRAMEWORK_UNSPECIFIED) {
    return Bad("framework", absl::StrCat("\"", a.Get("framework"),
                                         "\" is not megatron, nemo, deepspeed, torchtitan, pytorch-fsdp or any"));
  }
  *out = static_cast<v1::Framework>(v->number());
  return absl::OkStatus();
}

bool HasConfigFlags(const Args& a) {
  for (const IntFlag& f : kIntFlags) {
    if (a.Has(f.key)) return true;
  }
  for (const OnOffFlag& f : kOnOffFlags) {
    if (a.Has(f.key)) return true;
  }
  for (const NetworkChoice& f : kNetworkChoices) {
    if (a.Has(f.key)) return true;
  }
  for (const ConfigIntFlag& f : kConfigIntFlags) {
    if (a.Has(f.key)) return true;
  }
  return a.Has("recompute") || a.Has("schedule") || a.Has("moe-dispatcher") || a.Has("recompute-modules") ||
         a.Has("offload-modules") || a.flags.count("cuda-graphs") > 0 ||
         a.flags.count("tp-comm-overlap") > 0 || a.flags.count("no-tp-comm-overlap") > 0 ||
         a.flags.count("moe-a2a-overlap") > 0 ||
         a.flags.count("fp8-param-gather") > 0;
}

absl::Status ApplyConfigFlags(const Args& a, v1::ParallelConfig* c) {
  for (const IntFlag& f : kIntFlags) {
    if (!a.Has(f.key)) continue;
    if (absl::Status s = OneValue(a, f.key); !s.ok()) return s;
    int32_t v = 0;
    if (absl::Status s = Int(f.key, a.Get(f.key), f.key == std::string("zero") ? 0 : 1, &v); !s.ok()) return s;
    if (f.key == std::string("zero") && v > 3) return Bad("zero", absl::StrCat("\"", v, "\" is not a ZeRO stage 0-3"));
    (c->*f.set)(v);
  }
  for (const ConfigIntFlag& f : kConfigIntFlags) {
    if (!a.Has(f.key)) continue;
    if (absl::Status s = OneValue(a, f.key); !s.ok()) return s;
    int32_t v = 0;
    if (absl::Status s = Int(f.key, a.Get(f.key), f.min, &v); !s.ok()) return s;
    (c->*f.set)(v);
  }
  if (a.Has("moe-dispatcher")) {
    if (absl::Status s = OneValue(a, "moe-dispatcher"); !s.ok()) return s;
    const auto* v = EnumValueFromText(*v1::MoeDispatcher_descriptor(), a.Get("moe-dispatcher"));
    if (v == nullptr || v->number() == v1::MOE_DISPATCHER_UNSPECIFIED) {
      return Bad("moe-dispatcher", absl::StrCat("\"", a.Get("moe-dispatcher"), "\" is not alltoall, allgather or deepep"));
    }
    c->set_moe_dispatcher(static_cast<v1::MoeDispatcher>(v->number()));
  }
  if (a.flags.count("moe-a2a-overlap")) c->set_moe_a2a_overlap(true);
  if (a.flags.count("fp8-param-gather")) c->set_fp8_param_gather(true);
  if (a.Has("recompute-modules")) {  // names checked by the server (config.recompute_modules[i])
    c->clear_recompute_modules();
    for (const std::string& m : Items(a.Get("recompute-modules"))) c->add_recompute_modules(m);
  }
  if (a.Has("offload-modules")) {  // names checked by the server (config.offload_modules[i])
    c->clear_offload_modules();
    for (const std::string& m : Items(a.Get("offload-modules"))) c->add_offload_modules(m);
  }
  if (a.Has("global-batch")) {
    int32_t v = 0;
    if (absl::Status s = Int("global-batch", a.Get("global-batch"), 1, &v); !s.ok()) return s;
    c->set_global_batch_size(v);
  }
  for (const OnOffFlag& f : kOnOffFlags) {
    if (!a.Has(f.key)) continue;
    const std::string v = a.Get(f.key);
    if (v != "on" && v != "off") return Bad(f.key, absl::StrCat("\"", v, "\" is not on or off"));
    (c->*f.set)(v == "on");
  }
  if (a.Has("recompute")) {
    if (absl::Status s = OneValue(a, "recompute"); !s.ok()) return s;
    v1::Recompute r;
    if (absl::Status s = Recompute(a.Get("recompute"), &r); !s.ok()) return s;
    c->set_recompute(r);
  }
  if (a.Has("schedule")) {
    if (absl::Status s = OneValue(a, "schedule"); !s.ok()) return s;
    v1::PipelineSchedule p;
    if (absl::Status s = Schedule(a.Get("schedule"), &p); !s.ok()) return s;
    c->set_pipeline_schedule(p);
  }
  if (a.flags.count("cuda-graphs")) c->set_cuda_graphs(true);
  if (absl::Status s = TpCommOverlapFlag(a, c); !s.ok()) return s;
  int net[3];
  if (absl::Status s = NetworkChoices(a, net); !s.ok()) return s;
  if (net[0] >= 0) c->set_dp_algorithm(static_cast<v1::CollectiveAlgorithm>(net[0]));
  if (net[1] >= 0) c->set_tp_algorithm(static_cast<v1::CollectiveAlgorithm>(net[1]));
  if (net[2] >= 0) c->set_placement(static_cast<v1::Placement>(net[2]));
  return absl::OkStatus();
}

absl::Status ApplyConstraintFlags(const Args& a, v1::PlanConstraints* k) {
  for (const IntFlag& f : kIntFlags) {
    if (!a.Has(f.key)) continue;
    for (const std::string& item : Items(a.Get(f.key))) {
      int32_t v = 0;
      if (!absl::SimpleAtoi(item, &v) || v < 0) {
        return Bad(f.key, absl::StrCat("\"", a.Get(f.key), "\" is not a list of non-negative integers"));
      }
      (k->*f.list)()->Add(v);
    }
  }
  const std::pair<const char*, void (v1::PlanConstraints::*)(int32_t)> caps[] = {
      {"max-tp", &v1::PlanConstraints::set_max_tensor_parallel},
      {"max-pp", &v1::PlanConstraints::set_max_pipeline_parallel},
      {"max-cp", &v1::PlanConstraints::set_max_context_parallel},
      {"max-mbs", &v1::PlanConstraints::set_max_micro_batch_size}};
  for (const auto& [key, setter] : caps) {
    if (!a.Has(key)) continue;
    int32_t v = 0;
    if (absl::Status s = Int(key, a.Get(key), 0, &v); !s.ok()) return s;
    (k->*setter)(v);
  }
  if (a.Has("recompute")) {
    for (const std::string& item : Items(a.Get("recompute"))) {
      v1::Recompute r;
      if (absl::Status s = Recompute(item, &r); !s.ok()) return Bad("recompute", "a list of none, selective, full");
      k->add_recompute(r);
    }
  }
  if (a.Has("schedule")) {
    for (const std::string& item : Items(a.Get("schedule"))) {
      v1::PipelineSchedule p;
      if (absl::Status s = Schedule(item, &p); !s.ok()) {
        return Bad("schedule", "a list of 1f1b, gpipe, interleaved, zero-bubble");
      }
      k->add_pipeline_schedule(p);
    }
  }
  for (const OnOffFlag& f : kOnOffFlags) {
    const std::string v = a.Get(f.key, "any");
    if (v == "any") {
      (k->*f.constrain)(v1::PlanConstraints::FLAG_ANY);
    } else if (v == "on") {
      (k->*f.constrain)(v1::PlanConstraints::FLAG_ON);
    } else if (v == "off") {
      (k->*f.constrain)(v1::PlanConstraints::FLAG_OFF);
    } else {
      return Bad(f.key, "must be on, off or any");
    }
  }
  double headroom = 0;
  if (a.Has("headroom") && (!absl::SimpleAtod(a.Get("headroom"), &headroom) || headroom < 0 || headroom >= 1)) {
    return Bad("headroom", "a share of memory in [0, 1), e.g. 0.1");
  }
  k->set_memory_headroom_ratio(headroom);
  k->set_allow_offload(a.flags.count("allow-offload") > 0);
  k->set_cuda_graphs(a.flags.count("cuda-graphs") > 0);
  if (absl::Status s = TpCommOverlapFlag(a, k); !s.ok()) return s;
  k->set_moe_a2a_overlap(a.flags.count("moe-a2a-overlap") > 0);
  int net[3];
  if (absl::Status s = NetworkChoices(a, net); !s.ok()) return s;
  if (net[0] >= 0) k->set_dp_algorithm(static_cast<v1::CollectiveAlgorithm>(net[0]));
  if (net[1] >= 0) k->set_tp_algorithm(static_cast<v1::CollectiveAlgorithm>(net[1]));
  if (net[2] >= 0) k->set_placement(static_cast<v1::Placement>(net[2]));
  return absl::OkStatus();
}

void ApplyPlanDefaults(const Args& a, bool transformer, v1::ParallelConfig* c) {
  if (a.Has("config")) return;
  if (transformer && !a.Has("flash")) c->set_flash_attention(true);
  if (!a.Has("sp") && c->tensor_parallel() > 1) c->set_sequence_parallel(true);
  if (!a.Has("overlap-grad-reduce")) c->set_overlap_grad_reduce(true);
  if (c->zero_stage() >= 1) c->set_overlap_param_gather(true);
}

}  // namespace paraplan::cli
