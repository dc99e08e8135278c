// Authentication and TLS through the real server: bearer tokens with roles on every
// paraplan RPC, anonymous reads when allowed, server TLS and mutual TLS with the test
// certificates in testdata/, and the start-up checks (tokens in clear off loopback).
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "paraplan/v1/services.grpc.pb.h"
#include "server/auth.h"
#include "server/server.h"

namespace paraplan::server {
namespace {

constexpr char kReader[] = "reader-token-0123456789";
constexpr char kWriter[] = "writer-token-0123456789";
constexpr char kAdmin[] = "admin-token-01234567890";

std::string Testdata(const std::string& name) { return std::string(PARAPLAN_TESTDATA_DIR) + "/" + name; }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class AuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/paraplan_auth_XXXXXX";
    dir_ = mkdtemp(tmpl);
    std::ofstream(dir_ + "/tokens") << "# test tokens\n"
                                    << kReader << " reader\n"
                                    << kWriter << " writer\n\n"
                                    << kAdmin << "\tadmin\n";
  }
  void TearDown() override {
    if (server_) server_->Shutdown(absl::Seconds(2));
    std::system(("rm -rf " + dir_).c_str());
  }
  ServerOptions Options() {
    ServerOptions o;
    o.listen = "127.0.0.1:0";
    o.db_path = dir_ + "/paraplan.db";
    o.metrics_listen = "";
    o.log_level = LogLevel::kOff;
    o.tokens_file = dir_ + "/tokens";
    return o;
  }
  void Start(const ServerOptions& o, std::shared_ptr<grpc::ChannelCredentials> creds) {
    auto s = StartServer(o);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    grpc::ChannelArguments args;
    args.SetSslTargetNameOverride("localhost");
    channel_ = grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(server_->port()), creds, args);
  }
  // Status code of GetProfile / DeleteProfile / CreateProfile with `token` ("" = none).
  grpc::StatusCode Get(const std::string& token) {
    grpc::ClientContext ctx;
    if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
    v1::GetProfileRequest req;
    req.set_name("dgx-a100-80gb");
    v1::SystemProfile p;
    return v1::Profiles::NewStub(channel_)->GetProfile(&ctx, req, &p).error_code();
  }
  grpc::StatusCode Create(const std::string& token, const std::string& name) {
    grpc::ClientContext ctx;
    if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
    v1::GetProfileRequest g;
    g.set_name("dgx-a100-80gb");
    v1::SystemProfile p;
    {
      grpc::ClientContext c2;
      c2.AddMetadata("authorization", std::string("Bearer ") + kAdmin);
      EXPECT_TRUE(v1::Profiles::NewStub(channel_)->GetProfile(&c2, g, &p).ok());
    }
    p.set_name(name);
    v1::CreateProfileRequest req;
    *req.mutable_profile() = p;
    v1::SystemProfile out;
    return v1::Profiles::NewStub(channel_)->CreateProfile(&ctx, req, &out).error_code();
  }
  grpc::Status Delete(const std::string& token, const std::string& name) {
    grpc::ClientContext ctx;
    if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
    v1::DeleteProfileRequest req;
    req.set_name(name);
    v1::DeleteProfileResponse r;
    return v1::Profiles::NewStub(channel_)->DeleteProfile(&ctx, req, &r);
  }

  std::string dir_;
  std::unique_ptr<RunningServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(AuthTest, RolesGateReadsWritesAndAdminCalls) {
  Start(Options(), grpc::InsecureChannelCredentials());  // loopback: tokens allowed without TLS
  EXPECT_EQ(Get(""), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Get("not-a-token-at-all-xx"), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Get(kReader), grpc::StatusCode::OK);
  EXPECT_EQ(Create(kReader, "mine"), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Create(kWriter, "mine"), grpc::StatusCode::OK);
  const grpc::Status denied = Delete(kWriter, "mine");
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(denied.error_message().find("needs role admin"), std::string::npos) << denied.error_message();
  EXPECT_EQ(denied.error_message().find(kWriter), std::string::npos);  // never echoes the token
  EXPECT_EQ(Delete(kAdmin, "mine").error_code(), grpc::StatusCode::OK);
  // Planner calls are reads.
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", std::string("Bearer ") + kReader);
  v1::ListModelsResponse models;
  EXPECT_TRUE(v1::Planner::NewStub(channel_)->ListModels(&ctx, {}, &models).ok());
  // Checking a profile stores nothing: a read. What it checks is what a write would.
  grpc::ClientContext get_ctx;
  get_ctx.AddMetadata("authorization", std::string("Bearer ") + kReader);
  v1::GetProfileRequest g;
  g.set_name("dgx-a100-80gb");
  v1::CheckProfileRequest check;
  ASSERT_TRUE(v1::Profiles::NewStub(channel_)->GetProfile(&get_ctx, g, check.mutable_profile()).ok());
  auto checked = [&](const v1::CheckProfileRequest& req) {
    grpc::ClientContext c;
    c.AddMetadata("authorization", std::string("Bearer ") + kReader);
    v1::SystemProfile out;
    return v1::Profiles::NewStub(channel_)->CheckProfile(&c, req, &out);
  };
  EXPECT_TRUE(checked(check).ok());
  check.mutable_profile()->mutable_calibration()->set_ep_overlap_efficiency(2);
  const grpc::Status bad = checked(check);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(bad.error_message().find("profile.calibration.ep_overlap_efficiency"), std::string::npos)
      << bad.error_message();
}

TEST_F(AuthTest, AnonymousReadsWhenAllowed) {
  ServerOptions o = Options();
  o.allow_anonymous_reads = true;
  Start(o, grpc::InsecureChannelCredentials());
  EXPECT_EQ(Get(""), grpc::StatusCode::OK);
  EXPECT_EQ(Create("", "mine"), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Get("wrong-token-0123456789"), grpc::StatusCode::UNAUTHENTICATED);  // a bad token is still refused
}

TEST_F(AuthTest, ServerTlsAndMutualTls) {
  ServerOptions o = Options();
  o.tls_cert_file = Testdata("server.pem");
  o.tls_key_file = Testdata("server.key.pem");
  o.tls_client_ca_file = Testdata("ca.pem");
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = ReadAll(Testdata("ca.pem"));
  ssl.pem_cert_chain = ReadAll(Testdata("client.pem"));
  ssl.pem_private_key = ReadAll(Testdata("client.key.pem"));
  Start(o, grpc::SslCredentials(ssl));
  EXPECT_EQ(Get(kReader), grpc::StatusCode::OK);
  // Without a client certificate the handshake fails; plaintext does too.
  grpc::SslCredentialsOptions no_cert;
  no_cert.pem_root_certs = ReadAll(Testdata("ca.pem"));
  grpc::ChannelArguments args;
  args.SetSslTargetNameOverride("localhost");
  for (auto creds : {grpc::SslCredentials(no_cert), grpc::InsecureChannelCredentials()}) {
    auto ch = grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(server_->port()), creds, args);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(3));
    ctx.AddMetadata("authorization", std::string("Bearer ") + kReader);
    v1::GetProfileRequest req;
    req.set_name("dgx-a100-80gb");
    v1::SystemProfile p;
    EXPECT_EQ(v1::Profiles::NewStub(ch)->GetProfile(&ctx, req, &p).error_code(), grpc::StatusCode::UNAVAILABLE);
  }
}

TEST_F(AuthTest, StartUpRefusesUnsafeOrBrokenSettings) {
  ServerOptions o = Options();
  o.listen = "0.0.0.0:0";  // tokens in clear off loopback
  EXPECT_EQ(StartServer(o).status().code(), absl::StatusCode::kInvalidArgument);
  o = Options();
  o.tls_cert_file = Testdata("server.pem");  // a certificate without its key
  EXPECT_EQ(StartServer(o).status().code(), absl::StatusCode::kInvalidArgument);
  o = Options();
  o.tokens_file = dir_ + "/missing";
  EXPECT_EQ(StartServer(o).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(AuthTokens, FileFormatErrorsNameTheLine) {
  EXPECT_TRUE(Auth::FromText("0123456789abcdef reader\n", false).ok());
  EXPECT_EQ(Auth::FromText("short reader\n", false).status().code(), absl::StatusCode::kInvalidArgument);
  absl::Status s = Auth::FromText("# c\n0123456789abcdef root\n", false).status();
  EXPECT_NE(std::string(s.message()).find("line 2"), std::string::npos) << s;
  EXPECT_FALSE(Auth::FromText("0123456789abcdef reader\n0123456789abcdef admin\n", false).ok());
  EXPECT_FALSE(Auth::FromText("", false).ok());
  EXPECT_EQ(RequiredRole("Profiles", "PromoteProfile"), Role::kAdmin);
  EXPECT_EQ(RequiredRole("Measurements", "IngestMeasurements"), Role::kWriter);
  EXPECT_EQ(RequiredRole("Planner", "Plan"), Role::kReader);
  EXPECT_TRUE(IsLoopback("127.0.0.1:50051"));
  EXPECT_TRUE(IsLoopback("[::1]:50051"));
  EXPECT_FALSE(IsLoopback("0.0.0.0:50051"));
  EXPECT_FALSE(IsLoopback("10.0.0.1:50051"));
  // Parsed, not matched by prefix: a host name beginning "127." is not loopback.
  EXPECT_FALSE(IsLoopback("127.example.org:50051"));
  EXPECT_FALSE(IsLoopback("127.0.0.1.nip.io:50051"));
  EXPECT_TRUE(IsLoopback("127.3.2.1:50051"));
  EXPECT_TRUE(IsLoopback("localhost:50051"));
  EXPECT_TRUE(IsLoopback("[::ffff:127.0.0.1]:50051"));
  EXPECT_FALSE(IsLoopback("[::2]:50051"));
  EXPECT_FALSE(IsLoopback("[fe80::1]:50051"));
}

}  // namespace
}  // namespace paraplan::server
