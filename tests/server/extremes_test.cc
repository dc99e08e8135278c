// Every number a profile holds, pushed to a double's extremes one at a time, through the
// real server's Estimate and Plan with profile_override: each answer is INVALID_ARGUMENT
// naming a profile_override field, or OK with every float and double in it finite. The
// case that led here: a JPEG decode rate of 1e-300 answered OK with an infinite energy
// to train.
#include <cmath>
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

// The double fields of `m` and of the messages it holds (the first element of a repeated
// one), as setters on `m`, with their paths.
struct DoubleField {
  std::string path;
  std::function<void(Message*, double)> set;
};

void CollectDoubles(const Message& m, const std::string& prefix,
                    const std::function<Message*(Message*)>& reach, std::vector<DoubleField>* out, int depth = 0) {
  if (depth > 4) return;
  const Reflection* r = m.GetReflection();
  const google::protobuf::Descriptor* d = m.GetDescriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const std::string path = prefix + std::string(f->name());
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE && !f->is_repeated()) {
      out->push_back({path, [reach, f](Message* root, double v) {
                        Message* at = reach(root);
                        at->GetReflection()->SetDouble(at, f, v);
                      }});
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (f->is_repeated()) {
        if (r->FieldSize(m, f) == 0) continue;
        CollectDoubles(r->GetRepeatedMessage(m, f, 0), path + "[0].",
                       [reach, f](Message* root) {
                         Message* at = reach(root);
                         return at->GetReflection()->MutableRepeatedMessage(at, f, 0);
                       },
                       out, depth + 1);
      } else {  // set or not: an unset message's numbers are its defaults, and settable
        CollectDoubles(r->GetMessage(m, f), path + ".",
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

  // Each double of the profile at each extreme, through `ask`; counts the answers.
  void Sweep(const v1::SystemProfile& base, const std::function<grpc::Status(const v1::SystemProfile&,
                                                                            std::string* non_finite)>& ask) {
    std::vector<DoubleField> fields;
    CollectDoubles(base, "", [](Message* root) { return root; }, &fields);
    ASSERT_GT(fields.size(), 30u) << "the sweep reaches the profile's numbers";
    int ok = 0, refused = 0;
    for (const DoubleField& field : fields) {
      for (double v : {1e-300, 5e-324, 1e300, -1.0}) {
        v1::SystemProfile changed = base;
        field.set(&changed, v);
        std::string non_finite;
        const grpc::Status s = ask(changed, &non_finite);
        if (s.ok()) {
          ++ok;
          EXPECT_EQ(non_finite, "") << field.path << " = " << v << " answered OK with a non-finite " << non_finite;
        } else {
          ++refused;
          EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << field.path << " = " << v << ": "
                                                                        << s.error_message();
          EXPECT_NE(s.error_message().find("profile_override"), std::string::npos)
              << field.path << " = " << v << ": " << s.error_message();
        }
      }
    }
    std::printf("%s: %zu numbers, %d answers OK and finite, %d refused\n", base.name().c_str(), fields.size(), ok,
                refused);
    for (const DoubleField& f : fields) EXPECT_FALSE(f.path.empty());
    if (std::getenv("EXTREMES_PATHS") != nullptr) for (const DoubleField& f : fields) std::printf("  %s\n", f.path.c_str());
  }
};

TEST_F(ExtremesTest, EstimateOfACnnAndAMoeNeverAnswersNonFinite) {
  const auto estimate = [&](const char* model, v1::ParallelConfig config) {
    return [this, model, config](const v1::SystemProfile& p, std::string* non_finite) {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
      v1::EstimateRequest req;
      req.set_model(model);
      *req.mutable_config() = config;
      *req.mutable_profile_override() = p;
      v1::EstimateResponse resp;
      const grpc::Status s = planner_->Estimate(&ctx, req, &resp);
      if (s.ok()) *non_finite = FirstNonFinite(resp);
      return s;
    };
  };
  v1::ParallelConfig spatial;
  spatial.set_data_parallel(2);
  spatial.set_spatial_parallel(4);
  spatial.set_spatial_layers(10);
  spatial.set_micro_batch_size(32);
  spatial.set_global_batch_size(64);
  Sweep(Get("abci-v100-16gb", "resnet50", "conv1"), estimate("resnet50", spatial));
  v1::ParallelConfig moe;
  moe.set_tensor_parallel(2);
  moe.set_pipeline_parallel(2);
  moe.set_data_parallel(8);
  moe.set_expert_parallel(8);
  moe.set_micro_batch_size(1);
  moe.set_global_batch_size(64);
  Sweep(Get("dgx-h100-80gb", "mixtral-8x7b", "layer"), estimate("mixtral-8x7b", moe));
}

TEST_F(ExtremesTest, PlanNeverAnswersNonFinite) {
  Sweep(Get("dgx-a100-80gb", "llama3-8b", "layer"), [this](const v1::SystemProfile& p, std::string* non_finite) {
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

}  // namespace
}  // namespace paraplan::server
