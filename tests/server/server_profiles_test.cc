// Integration tests of the profile RPCs against the real server in-process (fixture.h):
// errors, immutable versions, refused values, built-in profiles and reseeding.
#include <grpcpp/grpcpp.h>

#include <functional>
#include <set>
#include <string>

#include "estimator/catalog/presets.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "paraplan/v1/services.grpc.pb.h"
#include "server/backend_internal.h"
#include "server/metrics.h"
#include "server/server.h"
#include "store/store.h"
#include "tests/server/fixture.h"

namespace paraplan::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST_F(ServerTest, ProfileErrors) {
  auto get = [&](const std::string& ref) {
    grpc::ClientContext ctx;
    v1::GetProfileRequest req;
    req.set_name(ref);
    v1::SystemProfile p;
    return profiles_->GetProfile(&ctx, req, &p);
  };
  for (const char* bad : {"dgx-a100-80gb@", "dgx-a100-80gb@0", "dgx-a100-80gb@-1", "dgx-a100-80gb@1x", ""}) {
    EXPECT_EQ(get(bad).error_code(), grpc::StatusCode::INVALID_ARGUMENT) << bad;
  }
  EXPECT_EQ(get("no-such-profile").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(get("no-such-profile").error_message(), HasSubstr("no-such-profile"));
  EXPECT_TRUE(get("dgx-a100-80gb@1").ok());

  v1::SystemProfile base = Profile("dgx-a100-80gb");
  EXPECT_GT(base.created_at().seconds(), 1600000000);
  {  // UpdateProfile of a missing profile without create_if_missing
    grpc::ClientContext ctx;
    v1::UpdateProfileRequest req;
    *req.mutable_profile() = base;
    req.mutable_profile()->set_name("not-yet");
    v1::SystemProfile out;
    EXPECT_EQ(profiles_->UpdateProfile(&ctx, req, &out).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  {  // bad topology enum
    grpc::ClientContext ctx;
    v1::CreateProfileRequest req;
    *req.mutable_profile() = base;
    req.mutable_profile()->set_name("bad-topology");
    req.mutable_profile()->mutable_network_levels(1)->set_topology(static_cast<v1::Topology>(42));
    v1::SystemProfile out;
    grpc::Status s = profiles_->CreateProfile(&ctx, req, &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("profile.network_levels[1].topology"));
  }
  for (const std::string& name : {std::string("-lead"), std::string("UPPER"), std::string(64, 'a'),
                                  std::string("sp ace"), std::string("")}) {
    grpc::ClientContext ctx;
    v1::CreateProfileRequest req;
    *req.mutable_profile() = base;
    req.mutable_profile()->set_name(name);
    v1::SystemProfile out;
    grpc::Status s = profiles_->CreateProfile(&ctx, req, &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << name;
    EXPECT_THAT(s.error_message(), HasSubstr("profile.name")) << name;
  }
  {  // Create assigns version 1 and created_at, whatever the caller sent.
    grpc::ClientContext ctx;
    v1::CreateProfileRequest req;
    *req.mutable_profile() = base;
    req.mutable_profile()->set_name("fresh.cluster_1");
    req.mutable_profile()->set_version(17);
    req.mutable_profile()->mutable_created_at()->set_seconds(5);
    v1::SystemProfile out;
    ASSERT_TRUE(profiles_->CreateProfile(&ctx, req, &out).ok());
    EXPECT_EQ(out.version(), 1);
    EXPECT_GT(out.created_at().seconds(), 1600000000);
  }
  {
    grpc::ClientContext ctx;
    v1::DeleteProfileRequest req;
    req.set_name("no-such-profile");
    v1::DeleteProfileResponse r;
    EXPECT_EQ(profiles_->DeleteProfile(&ctx, req, &r).error_code(), grpc::StatusCode::NOT_FOUND);
  }
  {
    grpc::ClientContext ctx;
    v1::ListProfilesRequest req;
    req.set_page_size(-1);
    v1::ListProfilesResponse r;
    EXPECT_EQ(profiles_->ListProfiles(&ctx, req, &r).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  {  // default page size holds every built-in profile
    grpc::ClientContext ctx;
    v1::ListProfilesResponse r;
    ASSERT_TRUE(profiles_->ListProfiles(&ctx, v1::ListProfilesRequest(), &r).ok());
    EXPECT_GE(r.profiles_size(), 3);
    EXPECT_TRUE(r.next_page_token().empty());
  }
}

TEST_F(ServerTest, ProfilesHaveImmutableVersions) {
  v1::SystemProfile p = Profile("dgx-a100-80gb");
  p.set_name("my-cluster");
  p.mutable_accelerator()->set_memory_gib(40);
  for (int expected = 1; expected <= 2; ++expected) {
    grpc::ClientContext ctx;
    v1::UpdateProfileRequest req;
    *req.mutable_profile() = p;
    req.set_create_if_missing(true);
    v1::SystemProfile out;
    ASSERT_TRUE(profiles_->UpdateProfile(&ctx, req, &out).ok());
    EXPECT_EQ(out.version(), expected);
    p.mutable_accelerator()->set_memory_gib(80);
  }
  EXPECT_EQ(Profile("my-cluster@1").accelerator().memory_gib(), 40);
  EXPECT_EQ(Profile("my-cluster@2").accelerator().memory_gib(), 80);
  EXPECT_EQ(Profile("my-cluster").version(), 2);
  {
    EXPECT_EQ(CreateProfile(p).error_code(), grpc::StatusCode::ALREADY_EXISTS);
  }
  {
    grpc::ClientContext ctx;
    v1::CreateProfileRequest req;
    *req.mutable_profile() = p;
    req.mutable_profile()->set_name("Bad Name");
    v1::SystemProfile out;
    grpc::Status s = profiles_->CreateProfile(&ctx, req, &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("profile.name"));
  }
  {
    grpc::ClientContext ctx;
    v1::CreateProfileRequest req;
    *req.mutable_profile() = p;
    req.mutable_profile()->set_name("other");
    req.mutable_profile()->mutable_network_levels(0)->set_bandwidth_gbytes_per_s(-1);
    v1::SystemProfile out;
    grpc::Status s = profiles_->CreateProfile(&ctx, req, &out);
    EXPECT_THAT(s.error_message(), HasSubstr("profile.network_levels[0].bandwidth_gbytes_per_s"));
  }
  {
    grpc::ClientContext ctx;
    v1::ListProfileVersionsRequest req;
    req.set_name("my-cluster");
    v1::ListProfileVersionsResponse r;
    ASSERT_TRUE(profiles_->ListProfileVersions(&ctx, req, &r).ok());
    EXPECT_EQ(r.versions_size(), 2);
  }
  {
    // Pagination: page size 2 over the built-in profiles and my-cluster, each once.
    const size_t total = BuiltinProfiles().size() + 1;
    v1::ListProfilesRequest req;
    req.set_page_size(2);
    std::set<std::string> seen;
    size_t pages = 0;
    do {
      grpc::ClientContext ctx;
      v1::ListProfilesResponse r;
      ASSERT_TRUE(profiles_->ListProfiles(&ctx, req, &r).ok());
      ++pages;
      EXPECT_EQ(r.profiles_size(), r.next_page_token().empty() ? 2 - total % 2 : 2);
      for (const v1::SystemProfile& p : r.profiles()) EXPECT_TRUE(seen.insert(p.name()).second) << p.name();
      req.set_page_token(r.next_page_token());
    } while (!req.page_token().empty() && pages <= total);
    EXPECT_EQ(pages, (total + 1) / 2);
    EXPECT_EQ(seen.size(), total);
  }
  {
    grpc::ClientContext ctx;
    v1::DeleteProfileRequest req;
    req.set_name("my-cluster");
    v1::DeleteProfileResponse r;
    ASSERT_TRUE(profiles_->DeleteProfile(&ctx, req, &r).ok());
    EXPECT_EQ(r.versions_deleted(), 2);
    EXPECT_THAT(server_->metrics().Text(), HasSubstr("profile=\"dgx-a100-80gb\""));
    EXPECT_THAT(server_->metrics().Text(), ::testing::Not(HasSubstr("profile=\"my-cluster\"")));
  }
}

// Regression: matmul_efficiency = 5e-324 and a NaN oversubscription were stored;
// Estimate then answered an infinite time and ingest failed with INTERNAL.
TEST_F(ServerTest, ProfilesWithNonFiniteOrAbsurdValuesAreRefused) {
  const v1::SystemProfile base = Profile("dgx-a100-80gb");
  struct Case {
    std::function<void(v1::SystemProfile*)> mutate;
    std::string field;
  } cases[] = {
      {[](v1::SystemProfile* p) { p->mutable_calibration()->set_matmul_efficiency(5e-324); },
       "profile.calibration.matmul_efficiency"},
      {[](v1::SystemProfile* p) { p->mutable_network_levels(0)->set_oversubscription(std::nan("")); },
       "profile.network_levels[0].oversubscription"},
      {[](v1::SystemProfile* p) { p->mutable_accelerator()->set_memory_bandwidth_gbytes_per_s(INFINITY); },
       "profile.accelerator.memory_bandwidth_gbytes_per_s"},
      {[](v1::SystemProfile* p) { p->set_price_per_gpu_hour_usd(-std::nan("")); }, "profile.price_per_gpu_hour_usd"},
  };
  for (const Case& c : cases) {
    grpc::ClientContext ctx;
    v1::UpdateProfileRequest req;
    *req.mutable_profile() = base;
    req.mutable_profile()->set_name("absurd");
    req.set_create_if_missing(true);
    c.mutate(req.mutable_profile());
    v1::SystemProfile out;
    grpc::Status s = profiles_->UpdateProfile(&ctx, req, &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.field;
    EXPECT_THAT(s.error_message(), HasSubstr(c.field));
  }
  grpc::ClientContext ctx;
  v1::GetProfileRequest get;
  get.set_name("absurd");
  v1::SystemProfile out;
  EXPECT_EQ(profiles_->GetProfile(&ctx, get, &out).error_code(), grpc::StatusCode::NOT_FOUND);  // none stored
}

// Regression: a 10 kB profile name came back whole in NOT_FOUND and overflowed the
// client's metadata limit.
TEST_F(ServerTest, ErrorsRepeatAtMost100CharactersOfAName) {
  const std::string huge = "big" + std::string(10000, 'n');
  {
    grpc::ClientContext ctx;
    v1::GetProfileRequest req;
    req.set_name(huge);
    v1::SystemProfile out;
    grpc::Status s = profiles_->GetProfile(&ctx, req, &out);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_THAT(s.error_message(), HasSubstr("\"big" + std::string(97, 'n') + "...\""));
    EXPECT_LT(s.error_message().size(), 200u);
  }
  v1::EstimateRequest est = Gpt3Estimate();
  est.set_profile(huge);
  v1::EstimateResponse er;
  grpc::Status s = Estimate(est, &er);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_LT(s.error_message().size(), 200u);
  est = Gpt3Estimate();
  est.set_model(huge);
  s = Estimate(est, &er);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LT(s.error_message().size(), 200u);
  est.set_profile(huge + "@x");
  s = Estimate(est, &er);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LT(s.error_message().size(), 200u);
  v1::Measurement m = PublicMeasurements()[0];
  m.set_profile(huge);
  v1::IngestMeasurementsResponse r = Ingest({m});
  ASSERT_EQ(r.results_size(), 1);
  EXPECT_EQ(r.results(0).status(), v1::IngestResult::STATUS_REJECTED);
  EXPECT_LT(r.results(0).reason().size(), 200u);
}

// Regression: anyone could delete a built-in profile, and its measurements with it.
TEST_F(ServerTest, BuiltinProfilesCannotBeDeleted) {
  ASSERT_EQ(Ingest({PublicMeasurements()[0]}).accepted(), 1);
  for (const char* name : {"dgx-a100-80gb", "dgx-h100-80gb", "abci-v100-16gb"}) {
    grpc::ClientContext ctx;
    v1::DeleteProfileRequest req;
    req.set_name(name);
    v1::DeleteProfileResponse r;
    grpc::Status s = profiles_->DeleteProfile(&ctx, req, &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << name;
    EXPECT_THAT(s.error_message(), HasSubstr("built in"));
    EXPECT_EQ(Profile(name).name(), name);
  }
  grpc::ClientContext ctx;
  v1::GetAccuracyRequest req;
  req.set_profile("dgx-a100-80gb");
  v1::AccuracyReport rep;
  ASSERT_TRUE(measurements_->GetAccuracy(&ctx, req, &rep).ok());
  EXPECT_EQ(rep.overall().count(), 1);
}

TEST_F(ServerTest, ReseedingNeverOverwritesUserVersions) {
  v1::SystemProfile p = Profile("dgx-h100-80gb");
  p.set_description("mine");
  grpc::ClientContext ctx;
  v1::UpdateProfileRequest req;
  *req.mutable_profile() = p;
  v1::SystemProfile out;
  ASSERT_TRUE(profiles_->UpdateProfile(&ctx, req, &out).ok());
  Restart();
  EXPECT_EQ(Profile("dgx-h100-80gb").description(), "mine");
  EXPECT_EQ(Profile("dgx-h100-80gb").version(), 2);
}

// The server stopped with dgx-h100-80gb's stored versions replaced by `write`'s, written
// on the store itself as an older release or an operator left them; Start() seeds again.
class OlderReleaseTest : public ServerTest {
 protected:
  void StopAndRewriteH100(const std::function<void(store::Store&)>& write) {
    const std::string target = Options().db_path;
    Stop();
    absl::StatusOr<std::unique_ptr<store::Store>> st = store::Store::Open(target);
    ASSERT_TRUE(st.ok()) << st.status();
    ASSERT_TRUE((*st)->DeleteProfile("dgx-h100-80gb").ok());
    write(**st);
  }
  // dgx-h100-80gb as stop 66's release stored it: without the DeepEP kernel rate.
  v1::SystemProfile Older() {
    v1::SystemProfile older = Profile("dgx-h100-80gb");
    EXPECT_GT(older.calibration().ep_dispatch_gbytes_per_s(), 0);
    older.mutable_calibration()->set_ep_dispatch_gbytes_per_s(0);
    return older;
  }
};

// A built-in profile an older release stored gets this release's as its next version at
// the next start, the default since a built-in was; a start with nothing changed writes
// nothing.
TEST_F(OlderReleaseTest, ItsBuiltinProfileGetsThisReleasesAsItsNextVersion) {
  const v1::SystemProfile older = Older();
  StopAndRewriteH100([&](store::Store& st) {
    ASSERT_TRUE(st.CreateProfile("dgx-h100-80gb", Encode(older), "builtin").ok());
  });
  Start();
  v1::ListProfileVersionsResponse h = Versions("dgx-h100-80gb");
  ASSERT_EQ(h.versions_size(), 2);
  EXPECT_EQ(h.versions(0).calibration().ep_dispatch_gbytes_per_s(), 0);
  EXPECT_EQ(h.versions(1).origin(), "builtin");
  EXPECT_TRUE(h.versions(1).is_default());
  EXPECT_EQ(Profile("dgx-h100-80gb").calibration().ep_dispatch_gbytes_per_s(), 308);
  Restart();
  EXPECT_EQ(Versions("dgx-h100-80gb").versions_size(), 2);
  // The other built-ins, stored by this release, are untouched.
  EXPECT_EQ(Versions("dgx-a100-80gb").versions_size(), 1);
}

// Where the older release's built-in is not the default (the operator promoted a version
// of their own), this release's is stored as a candidate: the default stays theirs.
TEST_F(OlderReleaseTest, ItsBuiltinBesideTheOperatorsDefaultBecomesACandidate) {
  const v1::SystemProfile older = Older();
  v1::SystemProfile mine = older;
  mine.set_description("mine");
  StopAndRewriteH100([&](store::Store& st) {
    ASSERT_TRUE(st.CreateProfile("dgx-h100-80gb", Encode(mine), "user").ok());
    ASSERT_TRUE(st.PutProfileVersion("dgx-h100-80gb", Encode(older), "builtin", /*promote=*/false).ok());
  });
  Start();
  v1::ListProfileVersionsResponse h = Versions("dgx-h100-80gb");
  ASSERT_EQ(h.versions_size(), 3);
  EXPECT_EQ(h.versions(2).origin(), "builtin");
  EXPECT_FALSE(h.versions(2).promoted());
  EXPECT_EQ(h.versions(2).calibration().ep_dispatch_gbytes_per_s(), 308);
  EXPECT_EQ(Profile("dgx-h100-80gb").description(), "mine");
  EXPECT_EQ(Profile("dgx-h100-80gb").version(), 1);
}

}  // namespace
}  // namespace paraplan::server
