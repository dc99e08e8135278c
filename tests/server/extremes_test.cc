// Every number a profile or a workload holds, pushed to its type's extremes one at a time,
// through the real server's Estimate and Plan: each answer is INVALID_ARGUMENT naming the
// part at fault (profile_override; the workload or the configuration), or OK with every
// float and double in it finite. The case that led here: a JPEG decode rate of 1e-300
// answered OK with an infinite energy to train.
#include <cmath>
#include <cstdint>
#include <limits>
#include <functional>
#include <string>
#include <vector>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "server/backend_internal.h"
#include "tests/server/fixture.h"

namespace paraplan::server {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// The numbers of `m` and of the messages it holds (the first element of a repeated
// message or number), as setters on `m`, with their paths: doubles, and integers (set
// from a double, saturated to their type).
struct NumberField {
  std::string path;
  bool integer = false;
  std::function<void(Message*, double)> set;
};

template <typename T>
T Saturated(double v) {
  return v <= static_cast<double>(std::numeric_limits<T>::lowest()) ? std::numeric_limits<T>::lowest()
         : v >= static_cast<double>(std::numeric_limits<T>::max()) ? std::numeric_limits<T>::max()
                                                                     : static_cast<T>(v);
}

void SetNumber(Message* at, const FieldDescriptor* f, double v) {
  const Reflection* r = at->GetReflection();
  const bool rep = f->is_repeated();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE:
      rep ? r->SetRepeatedDouble(at, f, 0, v) : r->SetDouble(at, f, v);
      break;
    case FieldDescriptor::CPPTYPE_INT32:
      rep ? r->SetRepeatedInt32(at, f, 0, Saturated<int32_t>(v)) : r->SetInt32(at, f, Saturated<int32_t>(v));
      break;
    case FieldDescriptor::CPPTYPE_INT64:
      rep ? r->SetRepeatedInt64(at, f, 0, Saturated<int64_t>(v)) : r->SetInt64(at, f, Saturated<int64_t>(v));
      break;
    default:
      break;
  }
}

void CollectNumbers(const Message& m, const std::string& prefix,
                    const std::function<Message*(Message*)>& reach, std::vector<NumberField>* out, int depth = 0) {
  if (depth > 4) return;
  const Reflection* r = m.GetReflection();
  const google::protobuf::Descriptor* d = m.GetDescriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const std::string path = prefix + std::string(f->name());
    const auto type = f->cpp_type();
    if (type == FieldDescriptor::CPPTYPE_DOUBLE || type == FieldDescriptor::CPPTYPE_INT32 ||
        type == FieldDescriptor::CPPTYPE_INT64) {
      if (f->is_repeated() && r->FieldSize(m, f) == 0) continue;
      out->push_back({f->is_repeated() ? path + "[0]" : path, type != FieldDescriptor::CPPTYPE_DOUBLE,
                      [reach, f](Message* root, double v) { SetNumber(reach(root), f, v); }});
    } else if (type == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (f->is_repeated()) {
        if (r->FieldSize(m, f) == 0) continue;
        CollectNumbers(r->GetRepeatedMessage(m, f, 0), path + "[0].",
                       [reach, f](Message* root) {
                         Message* at = reach(root);
                         return at->GetReflection()->MutableRepeatedMessage(at, f, 0);
                       },
                       out, depth + 1);
      } else {  // set or not: an unset message's numbers are its defaults, and settable
        CollectNumbers(r->GetMessage(m, f), path + ".",
                       [reach, f](Message* root) {
                         Message* at = reach(root);
                         return at->GetReflection()->MutableMessage(at, f);
                       },
                       out, depth + 1);
      }
    }
  }
}

// The path of the first float or double of an answer that is not finite; empty when all
// are (the server's own check of what it stores, server/backend_internal.h).
std::string FirstNonFinite(const Message& m) {
  const absl::Status s = CheckFiniteNumbers(m, "answer", "");
  return s.ok() ? "" : std::string(s.message());
}

class ExtremesTest : public ServerTest {
 protected:
  // A built-in profile with one of each list the sweep should reach: a network level's
  // calibration with a bandwidth point, and a measured layer time of `workload`.
  v1::SystemProfile Get(const std::string& name, const std::string& workload, const std::string& layer) {
    grpc::ClientContext ctx;
    v1::GetProfileRequest req;
    req.set_name(name);
    v1::SystemProfile p;
    EXPECT_TRUE(profiles_->GetProfile(&ctx, req, &p).ok()) << name;
    v1::NetworkCalibration* n = p.mutable_calibration()->add_network();
    n->set_level(p.network_levels(0).name());
    n->set_efficiency(0.8);
    n->set_latency_us(3);
    n->set_congestion(1);
    v1::BandwidthPoint* b = n->add_bandwidth_curve();
    b->set_bytes(1 << 20);
    b->set_efficiency(0.5);
    v1::LayerTiming* t = p.add_layer_timings();
    t->set_workload(workload);
    t->set_layer(layer);
    t->set_forward_s_per_sample(1e-3);
    t->set_backward_s_per_sample(2e-3);
    return p;
  }

  // Each number of `base` at each extreme, through `ask`; an answer is OK and finite, or
  // INVALID_ARGUMENT whose message names one of `names`. Counts the answers.
  template <typename M>
  void Sweep(const M& base, const std::string& what, const std::vector<std::string>& names,
             const std::function<grpc::Status(const M&, std::string* non_finite)>& ask) {
    std::vector<NumberField> fields;
    CollectNumbers(base, "", [](Message* root) { return root; }, &fields);
    ASSERT_GT(fields.size(), 10u) << "the sweep reaches the numbers";
    int ok = 0, refused = 0;
    for (const NumberField& field : fields) {
      const std::vector<double> values =
          field.integer ? std::vector<double>{-1, 0, 2147483647.0, 4.6e18} : std::vector<double>{1e-300, 5e-324, 1e300, -1};
      for (double v : values) {
        M changed = base;
        field.set(&changed, v);
        std::string non_finite;
        const grpc::Status s = ask(changed, &non_finite);
        if (s.ok()) {
          ++ok;
          EXPECT_EQ(non_finite, "") << field.path << " = " << v << " answered OK with a non-finite " << non_finite;
          continue;
        }
        ++refused;
        EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << field.path << " = " << v << ": "
                                                                      << s.error_message();
        bool named = false;
        for (const std::string& n : names) named |= s.error_message().find(n) != std::string::npos;
        EXPECT_TRUE(named) << field.path << " = " << v << ": " << s.error_message();
      }
    }
    std::printf("%s: %zu numbers, %d answers OK and finite, %d refused\n", what.c_str(), fields.size(), ok, refused);
  }

  void SweepProfile(const v1::SystemProfile& base,
                    const std::function<grpc::Status(const v1::SystemProfile&, std::string*)>& ask) {
    Sweep<v1::SystemProfile>(base, base.name(), {"profile_override"}, ask);
  }

  v1::Workload Preset(const std::string& name) {
    grpc::ClientContext ctx;
    v1::ListModelsRequest req;
    v1::ListModelsResponse resp;
    EXPECT_TRUE(planner_->ListModels(&ctx, req, &resp).ok());
    for (const v1::Workload& w : resp.models()) {
      if (w.name() == name) return w;
    }
    ADD_FAILURE() << "no preset " << name;
    return {};
  }

  // ResNet-50's first 10 layers split 4 ways, 2 replicas; Mixtral on TP 2, PP 2, EP 8.
  static v1::ParallelConfig SpatialSplit() {
    v1::ParallelConfig c;
    c.set_data_parallel(2);
    c.set_spatial_parallel(4);
    c.set_spatial_layers(10);
    c.set_micro_batch_size(32);
    c.set_global_batch_size(64);
    return c;
  }
  static v1::ParallelConfig ExpertParallel() {
    v1::ParallelConfig c;
    c.set_tensor_parallel(2);
    c.set_pipeline_parallel(2);
    c.set_data_parallel(8);
    c.set_expert_parallel(8);
    c.set_micro_batch_size(1);
    c.set_global_batch_size(64);
    return c;
  }

  // What Sweep asks of each changed M: an Estimate of `base` with `put` placing M in it;
  // the first non-finite number of an OK answer.
  template <typename M>
  std::function<grpc::Status(const M&, std::string*)> EstimateWith(
      v1::EstimateRequest base, std::function<void(const M&, v1::EstimateRequest*)> put) {
    return [this, base, put](const M& changed, std::string* non_finite) {
      v1::EstimateRequest req = base;
      put(changed, &req);
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
      v1::EstimateResponse resp;
      const grpc::Status s = planner_->Estimate(&ctx, req, &resp);
      if (s.ok()) *non_finite = FirstNonFinite(resp);
      return s;
    };
  }
  static v1::EstimateRequest Request(const std::string& profile, const std::string& model,
                                     const v1::ParallelConfig& config) {
    v1::EstimateRequest req;
    req.set_profile(profile);
    req.set_model(model);
    *req.mutable_config() = config;
    return req;
  }
};

TEST_F(ExtremesTest, EstimateOfACnnAndAMoeNeverAnswersNonFinite) {
  const auto override_profile = [](const v1::SystemProfile& p, v1::EstimateRequest* req) {
    req->clear_profile();
    *req->mutable_profile_override() = p;
  };
  SweepProfile(Get("abci-v100-16gb", "resnet50", "conv1"),
               EstimateWith<v1::SystemProfile>(Request("", "resnet50", SpatialSplit()), override_profile));
  SweepProfile(Get("dgx-h100-80gb", "mixtral-8x7b", "layer"),
               EstimateWith<v1::SystemProfile>(Request("", "mixtral-8x7b", ExpertParallel()), override_profile));
}

TEST_F(ExtremesTest, PlanNeverAnswersNonFinite) {
  SweepProfile(Get("dgx-a100-80gb", "llama3-8b", "layer"), [this](const v1::SystemProfile& p, std::string* non_finite) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    v1::PlanRequest req;
    req.set_model("llama3-8b");
    req.add_gpus(16);
    req.set_global_batch_size(64);
    req.set_top_k(3);
    *req.mutable_profile_override() = p;
    v1::PlanResponse resp;
    const grpc::Status s = planner_->Plan(&ctx, req, &resp);
    if (s.ok()) *non_finite = FirstNonFinite(resp);
    return s;
  });
}

// The same for every number of a workload (a layer graph's first layer, MoE and
// attention settings, the dataset): refused naming the workload or the configuration it
// no longer fits, or answered OK and finite.
TEST_F(ExtremesTest, WorkloadNumbersNeverAnswerNonFinite) {
  const auto put_workload = [](const v1::Workload& w, v1::EstimateRequest* req) {
    req->clear_model();
    *req->mutable_workload() = w;
  };
  v1::Workload cnn = Preset("resnet50");
  cnn.mutable_dataset()->set_decode_core_ms_per_sample(2);
  Sweep<v1::Workload>(cnn, "resnet50", {"workload", "config"},
                      EstimateWith<v1::Workload>(Request("abci-v100-16gb", "", SpatialSplit()), put_workload));
  Sweep<v1::Workload>(Preset("mixtral-8x7b"), "mixtral-8x7b", {"workload", "config"},
                      EstimateWith<v1::Workload>(Request("dgx-h100-80gb", "", ExpertParallel()), put_workload));
}

}  // namespace
}  // namespace paraplan::server
