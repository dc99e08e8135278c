// Fixture and helpers of the HTTP/JSON API tests (http_api_test.cc,
// http_api_errors_test.cc): the real server (fixture.h) with --http-listen on a loopback
// port, requests through http_client.h, protobuf messages to and from the API's JSON
// (field names as in the .proto), the {"error": {"code", "message"}} of an error answer,
// and the plan and measurement both files send.
#ifndef PARAPLAN_TESTS_SERVER_HTTP_API_FIXTURE_H_
#define PARAPLAN_TESTS_SERVER_HTTP_API_FIXTURE_H_

#include <string>
#include <vector>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "paraplan/v1/services.grpc.pb.h"
#include "tests/server/fixture.h"
#include "tests/server/http_client.h"

namespace paraplan::server {

inline std::string ToJson(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions o;
  o.preserve_proto_field_names = true;
  std::string out;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(m, &out, o).ok());
  return out;
}

template <typename M>
M FromJson(const std::string& json) {
  M m;
  const auto s = google::protobuf::util::JsonStringToMessage(json, &m);
  EXPECT_TRUE(s.ok()) << s.message() << "\n" << json;
  return m;
}

// {"error": {"code", "message"}} of an error answer.
struct Error {
  std::string code;
  std::string message;
};
inline Error ErrorOf(const Reply& r) {
  google::protobuf::Struct s = FromJson<google::protobuf::Struct>(r.body);
  const auto& e = s.fields().at("error").struct_value().fields();
  return {e.at("code").string_value(), e.at("message").string_value()};
}

inline v1::PlanRequest Llama8bPlan() {
  v1::PlanRequest p;
  p.set_profile("dgx-h100-80gb");
  p.set_model("llama3-8b");
  p.add_gpus(16);
  p.set_global_batch_size(1024);
  p.set_top_k(3);
  return p;
}

// A llama3-8b run on 16 H100s, as a measurement that names its preset.
inline v1::Measurement PresetMeasurement(const std::string& id) {
  v1::Measurement m;
  m.set_id(id);
  m.set_profile("dgx-h100-80gb");
  m.set_model("llama3-8b");
  v1::ParallelConfig* c = m.mutable_config();
  c->set_tensor_parallel(2);
  c->set_data_parallel(8);
  c->set_micro_batch_size(1);
  c->set_global_batch_size(512);
  m.set_iteration_time_s(30.5);
  return m;
}

class HttpApiTest : public ServerTest {
 protected:
  ServerOptions Options() override {
    ServerOptions o = ServerTest::Options();
    o.http_listen = "127.0.0.1:0";
    return o;
  }
  int port() const { return server_->http_port(); }
  Reply Post(const std::string& path, const std::string& body, const std::vector<std::string>& headers = {}) {
    return Http(port(), "POST", path, body, headers);
  }
  Reply Get(const std::string& path, const std::vector<std::string>& headers = {}) {
    return Http(port(), "GET", path, "", headers);
  }
  int AccuracyCount(const std::string& profile) {
    Reply r = Get("/v1/profiles/" + profile + "/accuracy");
    EXPECT_EQ(r.status, 200) << r.body;
    return FromJson<v1::AccuracyReport>(r.body).overall().count();
  }
};

}  // namespace paraplan::server

#endif  // PARAPLAN_TESTS_SERVER_HTTP_API_FIXTURE_H_
