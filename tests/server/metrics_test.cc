// /metrics over HTTP: the series exported after real RPCs. The accuracy gauges must
// agree with GetAccuracy.
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/server/fixture.h"

namespace paraplan::server {
namespace {

using ::testing::HasSubstr;

class MetricsTest : public ServerTest {
 protected:
  ServerOptions Options() override {
    ServerOptions o = ServerTest::Options();
    o.metrics_listen = "127.0.0.1:0";
    return o;
  }
};

TEST_F(MetricsTest, EndpointServesRpcCountsAndAccuracyThatAgreesWithGetAccuracy) {
  const int port = server_->metrics_port();
  ASSERT_GT(port, 0);
  const std::vector<v1::Measurement> ms = PublicMeasurements();
  ASSERT_FALSE(ms.empty());
  EXPECT_EQ(Ingest(ms).accepted(), static_cast<int>(ms.size()));
  Ingest({ms[0]});  // one duplicate
  grpc::ClientContext ctx;
  v1::GetAccuracyRequest req;
  req.set_profile("dgx-a100-80gb");
  v1::AccuracyReport rep;
  ASSERT_TRUE(measurements_->GetAccuracy(&ctx, req, &rep).ok());
  {
    grpc::ClientContext c2;
    v1::PlanRequest plan;
    plan.set_profile("dgx-a100-80gb");
    plan.set_model("gpt3-175b");
    plan.add_gpus(64);
    plan.set_global_batch_size(64);
    v1::PlanResponse r;
    ASSERT_TRUE(planner_->Plan(&c2, plan, &r).ok());
  }

  const std::string http = HttpGet(port, "/metrics");
  ASSERT_THAT(http, HasSubstr("200 OK"));
  const std::string p = "{profile=\"dgx-a100-80gb\"}";
  EXPECT_EQ(SampleValue(http, "paraplan_rpc_requests_total{code=\"OK\",method=\"GetAccuracy\"}"), 1);
  EXPECT_EQ(SampleValue(http, "paraplan_rpc_requests_total{code=\"OK\",method=\"IngestMeasurements\"}"), 2);
  EXPECT_EQ(SampleValue(http, "paraplan_rpc_duration_seconds_count{method=\"Plan\"}"), 1);
  // The same calls under the gRPC ecosystem's names.
  EXPECT_EQ(SampleValue(http, "grpc_server_handled_total{grpc_code=\"OK\",grpc_method=\"IngestMeasurements\","
                              "grpc_service=\"paraplan.v1.Measurements\",grpc_type=\"unary\"}"),
            2)
      << http;
  EXPECT_EQ(SampleValue(http, "grpc_server_started_total{grpc_method=\"Plan\",grpc_service=\"paraplan.v1.Planner\","
                              "grpc_type=\"unary\"}"),
            1);
  EXPECT_EQ(SampleValue(http, "grpc_server_handling_seconds_count{grpc_method=\"Plan\","
                              "grpc_service=\"paraplan.v1.Planner\",grpc_type=\"unary\"}"),
            1);
  EXPECT_THAT(http, HasSubstr("paraplan_rpc_duration_seconds_bucket{method=\"Plan\",le=\"0.0005\"}"));
  EXPECT_GT(SampleValue(http, "paraplan_plan_candidates_evaluated_total"), 0);
  EXPECT_GT(SampleValue(http, "paraplan_plan_candidates_total{kind=\"enumerated\"}"), 0);
  EXPECT_GT(SampleValue(http, "paraplan_plan_candidates_total{kind=\"feasible\"}"), 0);

  // Accuracy gauges = GetAccuracy over all measurements.
  EXPECT_NEAR(SampleValue(http, "paraplan_prediction_mape_ratio" + p), rep.overall().mape_ratio(), 1e-12);
  EXPECT_NEAR(SampleValue(http, "paraplan_prediction_bias_ratio" + p), rep.overall().bias_ratio(), 1e-12);
  EXPECT_EQ(SampleValue(http, "paraplan_prediction_error_ratio_count" + p), rep.overall().count());
  EXPECT_NEAR(SampleValue(http, "paraplan_prediction_error_ratio_sum" + p),
              rep.overall().mape_ratio() * rep.overall().count(), 1e-9);
  EXPECT_EQ(SampleValue(http, "paraplan_measurements_ingested_total{profile=\"dgx-a100-80gb\",result=\"accepted\"}"),
            static_cast<double>(ms.size()));
  EXPECT_EQ(SampleValue(http, "paraplan_measurements_ingested_total{profile=\"dgx-a100-80gb\",result=\"duplicate\"}"),
            1);
  EXPECT_EQ(SampleValue(http, "paraplan_profile_version" + p), 1);
  const double age = SampleValue(http, "paraplan_calibration_age_seconds" + p);
  EXPECT_GE(age, 0);
  EXPECT_LT(age, 600);

  // Calibrating bumps the counter; the version gauge follows the default version: the
  // fit to these nine runs cross-validates better and is promoted, and a rollback to
  // version 1 takes the gauge back.
  grpc::ClientContext c3;
  v1::CalibrateRequest cal;
  cal.set_profile("dgx-a100-80gb");
  v1::CalibrateResponse cr;
  ASSERT_TRUE(measurements_->Calibrate(&c3, cal, &cr).ok());
  ASSERT_TRUE(cr.report().promote()) << cr.report().promotion_reason();
  std::string after = HttpGet(port, "/metrics");
  EXPECT_EQ(SampleValue(after, "paraplan_calibrations_total" + p), 1);
  EXPECT_EQ(SampleValue(after, "paraplan_profile_version" + p), 2);
  EXPECT_LT(SampleValue(after, "paraplan_calibration_age_seconds" + p), 60);
  ASSERT_EQ(Promote("dgx-a100-80gb@1"), grpc::StatusCode::OK);
  after = HttpGet(port, "/metrics");
  EXPECT_EQ(SampleValue(after, "paraplan_profile_version" + p), 1);
}

// The build and the process, as Prometheus' conventions name them: paraplan_build_info
// with the version and API fingerprint GetVersion answers, and process_* read from /proc
// (this test's own process: the server runs in it).
TEST_F(MetricsTest, BuildInfoAndProcessMetrics) {
  grpc::ClientContext ctx;
  v1::GetVersionResponse version;
  ASSERT_TRUE(planner_->GetVersion(&ctx, v1::GetVersionRequest(), &version).ok());
  const std::string http = HttpGet(server_->metrics_port(), "/metrics");
  EXPECT_EQ(SampleValue(http, absl::StrCat("paraplan_build_info{api=\"", version.api_version(), "\",fingerprint=\"",
                                           version.api_fingerprint(), "\",version=\"", version.server_version(),
                                           "\"}")),
            1)
      << http;
  EXPECT_THAT(http, HasSubstr("# TYPE process_cpu_seconds_total counter"));
  EXPECT_GT(SampleValue(http, "process_resident_memory_bytes"), 1 << 20);
  EXPECT_GT(SampleValue(http, "process_open_fds"), 2);
  EXPECT_GE(SampleValue(http, "process_max_fds"), SampleValue(http, "process_open_fds"));
  const double started = SampleValue(http, "process_start_time_seconds");
  const double now = absl::ToUnixSeconds(absl::Now());
  EXPECT_LE(started, now + 1);
  EXPECT_GT(started, now - 24 * 3600);  // this process, not the epoch or the boot
}

}  // namespace
}  // namespace paraplan::server
