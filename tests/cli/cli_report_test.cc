// `plan --report` and the HTTP report page: the HTML from a real plan, checked as text and
// rendered in headless Chromium (cli_harness.h).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "paraplan/v1/network.pb.h"
#include "paraplan/v1/services.pb.h"
#include "tests/cli/cli_harness.h"

namespace paraplan::cli_test {
namespace {

namespace v1 = paraplan::v1;

// Report tests plan for "a100-cluster": a copy of dgx-a100-80gb@1 (so that no other
// test's measurements or calibrations touch it), created once.
class ReportTest : public ServerTest {
 protected:
  void EnsureReportProfile() {
    if (P({"profiles", "show", "a100-cluster"}).code == 0) return;
    const Result r = P({"--output", "json", "profiles", "show", "dgx-a100-80gb@1"});
    ASSERT_EQ(r.code, 0) << Describe(r);
    v1::SystemProfile p = FromJson<v1::SystemProfile>(r.out);
    p.set_name("a100-cluster");
    p.set_description("a copy of dgx-a100-80gb");
    for (auto clear : {&v1::SystemProfile::clear_version, &v1::SystemProfile::clear_created_at,
                       &v1::SystemProfile::clear_fit_report, &v1::SystemProfile::clear_origin,
                       &v1::SystemProfile::clear_promoted, &v1::SystemProfile::clear_is_default}) {
      (p.*clear)();
    }
    std::string json;
    ASSERT_TRUE(google::protobuf::util::MessageToJsonString(p, &json).ok());
    const Result put = P({"profiles", "put", Write("a100-cluster.json", json)});
    ASSERT_EQ(put.code, 0) << Describe(put);
    ASSERT_EQ(put.out, "a100-cluster@1\n");
  }

  // Measurements for a100-cluster: the published Korthikanti et al. runs (their profile
  // renamed) when the data is there, else two GPT-3 runs written here. Idempotent.
  void IngestReportMeasurements() {
    std::string lines;
    const std::string data = g_paths.data + "/korthikanti22_iteration_times.jsonl";
    if (!g_paths.data.empty() && access(data.c_str(), R_OK) == 0) {
      lines = absl::StrReplaceAll(Slurp(data), {{"\"profile\": \"dgx-a100-80gb\"", "\"profile\": \"a100-cluster\""},
                                                {"\"id\": \"", "\"id\": \"a100-cluster-"}});
    } else {
      for (const auto& [id, seconds] :
           {std::pair{"a100-cluster-gpt3-1", "21.5"}, std::pair{"a100-cluster-gpt3-2", "22.5"}}) {
        absl::StrAppend(&lines, "{\"id\": \"", id, "\", \"profile\": \"a100-cluster\", \"workload\": {\"name\": ",
                        "\"gpt3\", \"transformer\": {\"num_layers\": 96, \"hidden_size\": 12288, ",
                        "\"num_attention_heads\": 96, \"seq_length\": 2048, \"vocab_size\": 51200}}, \"config\": ",
                        absl::StrReplaceAll(kGpt3Config, {{"\n", " "}}), ", \"iteration_time_s\": ", seconds, "}\n");
      }
    }
    const Result r = P({"ingest", Write("a100-cluster.jsonl", lines)});
    ASSERT_EQ(r.code, 0) << Describe(r);
  }
};

int CountOf(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

TEST_F(ReportTest, PlanReportFromARealPlan) {
  ASSERT_NO_FATAL_FAILURE(EnsureReportProfile());
  const std::string path = g_tmp + "/plan.html";
  const std::vector<std::string> plan = {"--output", "json", "plan", "--profile", "a100-cluster", "--model",
                                         "gpt3-175b", "--gpus", "512,1024", "--global-batch", "1536", "--top", "6",
                                         "--report", path};
  Result r = P(plan);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "wrote report " + path)) << Describe(r);
  const auto response = FromJson<v1::PlanResponse>(r.out);  // stdout is the usual output
  ASSERT_EQ(response.plans_size(), 6);
  std::string html = Slurp(path);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_TRUE(Contains(html, "<span id=\"profile\">a100-cluster@1</span>")) << html.substr(0, 2000);
  EXPECT_TRUE(Contains(html, "Profile accuracy: no measurements yet")) << html.substr(0, 2000);
  for (const char* chart : {"aria-label=\"time breakdown per plan", "aria-label=\"memory breakdown per plan",
                            "aria-label=\"Pareto front: iteration time against cost\"",
                            "aria-label=\"Pareto front: iteration time against energy\""}) {
    EXPECT_TRUE(Contains(html, absl::StrCat("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart")) &&
                Contains(html, chart))
        << chart;
  }
  // One table row, one time bar and one memory bar per plan, in rank order, with the
  // plan's GPU count and iteration time.
  for (int i = 0; i < response.plans_size(); ++i) {
    const v1::Estimate& e = response.plans(i);
    const std::string row =
        absl::StrCat("<tr data-plan=\"", i + 1, "\"><td>", i + 1, "</td><td>", e.num_gpus(), "</td>");
    EXPECT_TRUE(Contains(html, row)) << row;
    EXPECT_TRUE(Contains(html, absl::StrFormat("<td>%.3f s</td>", e.iteration_time_s()))) << i;
    EXPECT_EQ(CountOf(html, absl::StrCat("<g class=\"row\" data-plan=\"", i + 1, "\">")), 2)
        << "a time and a memory bar";
  }
  EXPECT_FALSE(Contains(html, "<tr data-plan=\"7\">"));

  // With measurements the page states the profile's measured error.
  ASSERT_NO_FATAL_FAILURE(IngestReportMeasurements());
  r = P({"--output", "json", "accuracy", "--profile", "a100-cluster"});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const auto accuracy = FromJson<v1::AccuracyReport>(r.out);
  ASSERT_GT(accuracy.overall().count(), 0);
  r = P(plan);
  ASSERT_EQ(r.code, 0) << Describe(r);
  html = Slurp(path);
  const std::string uncertainty =
      absl::StrFormat("Profile accuracy: uncertainty \u00b1%.1f %% (MAPE over %d measurements)",
                      100 * accuracy.overall().mape_ratio(), accuracy.overall().count());
  EXPECT_TRUE(Contains(html, uncertainty)) << uncertainty << "\n" << html.substr(0, 2500);

  // A file that cannot be written: exit 73.
  r = P({"plan", "--profile", "a100-cluster", "--model", "gpt3-175b", "--gpus", "1024", "--global-batch", "1536",
         "--report", g_tmp + "/no/such/dir/plan.html"});
  EXPECT_EQ(r.code, 73) << Describe(r);
  EXPECT_TRUE(Contains(r.err, "cannot write the report")) << Describe(r);
}

// Checks the report page at `html` in a real browser: headless Chromium renders it (a
// screenshot, returned), the DOM after its script ran holds the table and the four
// charts and names `profile`, and the console shows no script error.
std::string CheckInChromium(const std::string& chromium, const std::string& html, const std::string& profile) {
  const std::string png = html + ".png";
  const std::vector<std::string> common = {chromium, "--headless", "--disable-gpu", "--no-sandbox",
                                           absl::StrCat("--user-data-dir=", g_tmp, "/chromium-profile"),
                                           "--enable-logging=stderr", "--v=0"};
  std::vector<std::string> shot = common;
  shot.insert(shot.end(), {absl::StrCat("--screenshot=", png), "--window-size=1280,1600", "file://" + html});
  const std::string shot_err = g_tmp + "/chromium-shot.err";
  EXPECT_EQ(WaitFor(Spawn(shot, g_tmp + "/chromium-shot.out", shot_err), std::chrono::seconds(120)), 0)
      << Slurp(shot_err);
  const std::string image = Slurp(png);
  EXPECT_GT(image.size(), 30000u) << "a rendered page with charts, not a blank one";
  EXPECT_EQ(image.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));

  std::vector<std::string> dump = common;
  dump.insert(dump.end(), {"--dump-dom", "file://" + html});
  const std::string dom_path = g_tmp + "/chromium-dom.html", dom_err = g_tmp + "/chromium-dom.err";
  EXPECT_EQ(WaitFor(Spawn(dump, dom_path, dom_err), std::chrono::seconds(120)), 0) << Slurp(dom_err);
  const std::string dom = Slurp(dom_path);
  EXPECT_TRUE(Contains(dom, "data-ready=\"1\"")) << "the page's script ran to its end\n" << dom.substr(0, 1000);
  EXPECT_TRUE(Contains(dom, "<table id=\"plans\">"));
  EXPECT_EQ(CountOf(dom, "<svg"), 4) << "time, memory and two Pareto charts";
  EXPECT_TRUE(Contains(dom, profile));
  for (const std::string& log : {Slurp(shot_err), Slurp(dom_err)}) {
    EXPECT_FALSE(Contains(log, "Uncaught")) << log;
    EXPECT_FALSE(Contains(log, ":CONSOLE")) << "no console output at all\n" << log;
  }
  // An 800 px window: the page reflows (the table scrolls in its own box), nothing makes
  // the page wider than the window.
  std::vector<std::string> narrow = common;
  narrow.insert(narrow.end(), {"--window-size=800,1000", "--dump-dom", "file://" + html});
  const std::string narrow_path = g_tmp + "/chromium-narrow.html", narrow_err = g_tmp + "/chromium-narrow.err";
  EXPECT_EQ(WaitFor(Spawn(narrow, narrow_path, narrow_err), std::chrono::seconds(120)), 0) << Slurp(narrow_err);
  const std::string narrow_dom = Slurp(narrow_path);
  EXPECT_TRUE(Contains(narrow_dom, "data-overflows=\"0\"")) << "wider than an 800 px window\n"
                                                            << narrow_dom.substr(0, 600);
  EXPECT_TRUE(Contains(dom, "data-overflows=\"0\""));
  return image;
}

constexpr char kChromium[] = "/usr/bin/chromium";

TEST_F(ReportTest, PlanReportRendersInHeadlessChromium) {
  if (access(kChromium, X_OK) != 0) {
    GTEST_SKIP() << kChromium << " is not installed (scripts/deps.sh installs Debian's chromium)";
  }
  ASSERT_NO_FATAL_FAILURE(EnsureReportProfile());
  ASSERT_NO_FATAL_FAILURE(IngestReportMeasurements());
  const std::string html = g_tmp + "/chromium-plan.html";
  Result r = P({"plan", "--profile", "a100-cluster", "--model", "gpt3-175b", "--gpus", "1024", "--global-batch",
                "1536", "--top", "5", "--report", html});
  ASSERT_EQ(r.code, 0) << Describe(r);
  const std::string image = CheckInChromium(kChromium, html, "a100-cluster@1");
  if (!g_paths.screenshot.empty()) {
    WriteFile(g_paths.screenshot, image);
    std::fprintf(stderr, "cli_test: screenshot written to %s\n", g_paths.screenshot.c_str());
  }
}

// The text between `from` and the next `to` (both included); "" when absent.
std::string Section(const std::string& text, const std::string& from, const std::string& to) {
  const size_t start = text.find(from);
  if (start == std::string::npos) return "";
  const size_t end = text.find(to, start);
  return end == std::string::npos ? "" : text.substr(start, end + to.size() - start);
}

// GET /v1/report on the HTTP port (fetched with curl): the page `plan --report` writes
// for the same plan, rendered in headless Chromium; bad queries are 400 naming the
// parameter, an unknown profile 404.
TEST(CliHttpReport, ReportPageFromTheHttpPort) {
  if (g_paths.server.empty()) GTEST_SKIP() << "no --server binary given";
  if (access("/usr/bin/curl", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/curl";
  Server server("http-report");
  const int http_port = FreePort();
  ASSERT_TRUE(server.Start({"--http-listen", absl::StrCat("127.0.0.1:", http_port)})) << Slurp(server.log());
  const std::string base = absl::StrCat("http://127.0.0.1:", http_port, "/v1/report?");
  // curl's exit code, and "STATUS CONTENT-TYPE" of GET base+query (the body to body_path).
  auto curl = [&](const std::string& query, const std::string& body_path) {
    const std::string out = g_tmp + "/curl.out", err = g_tmp + "/curl.err";
    Result r;
    r.code = WaitFor(Spawn({"/usr/bin/curl", "-sS", "-o", body_path, "-w", "%{http_code} %{content_type}",
                            base + query},
                           out, err),
                     std::chrono::seconds(120));
    r.out = Slurp(out);
    r.err = Slurp(err);
    return r;
  };
  const std::string page = g_tmp + "/http-report.html";
  Result r = curl("profile=dgx-a100-80gb&model=gpt3-175b&gpus=1024&global_batch=1536&top=5", page);
  ASSERT_EQ(r.code, 0) << Describe(r);
  EXPECT_EQ(r.out, "200 text/html; charset=utf-8");
  const std::string html = Slurp(page);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u) << html.substr(0, 500);
  EXPECT_TRUE(Contains(html, "<span id=\"profile\">dgx-a100-80gb@1</span>")) << html.substr(0, 2000);
  EXPECT_TRUE(Contains(html, "GPUs 1024, global batch 1536, objective time, top 5")) << html.substr(0, 2000);
  EXPECT_TRUE(Contains(html, "Profile accuracy: no measurements yet")) << html.substr(0, 2000);

  // The CLI's --report of the same plan has the same ranked table and charts.
  const std::string cli_page = g_tmp + "/http-report-cli.html";
  const Result cli = RunCli({"--server", server.address(), "plan", "--profile", "dgx-a100-80gb", "--model", "gpt3-175b",
                             "--gpus", "1024", "--global-batch", "1536", "--top", "5", "--report", cli_page});
  ASSERT_EQ(cli.code, 0) << Describe(cli);
  const std::string cli_html = Slurp(cli_page);
  const std::string table = Section(html, "<table id=\"plans\">", "</table>");
  EXPECT_NE(table, "");
  EXPECT_EQ(table, Section(cli_html, "<table id=\"plans\">", "</table>"));
  EXPECT_EQ(CountOf(html, "<svg"), 4);
  EXPECT_EQ(Section(html, "<h2>Ranked plans</h2>", "</body>"), Section(cli_html, "<h2>Ranked plans</h2>", "</body>"));

  if (access(kChromium, X_OK) == 0) {
    CheckInChromium(kChromium, page, "dgx-a100-80gb@1");
  } else {
    std::fprintf(stderr, "cli_test: %s is not installed; the page is not rendered\n", kChromium);
  }

  // Bad queries name the parameter; an unknown profile is 404.
  const std::string error = g_tmp + "/http-report-error.json";
  for (const auto& [query, status, message] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"profile=dgx-a100-80gb&model=gpt3-175b&global_batch=1536", "400", "gpus: missing"},
           {"profile=dgx-a100-80gb&model=gpt3-175b&gpus=ten&global_batch=1536", "400",
            "gpus: \\\"ten\\\" is not a list of GPU counts"},
           {"profile=dgx-a100-80gb&model=gpt3-175b&gpus=8&global_batch=8&objective=speed", "400",
            "objective: \\\"speed\\\" is not time, cost or energy"},
           {"profile=dgx-a100-80gb&model=gpt3-175b&gpus=8&global_batch=8&colour=red", "400",
            "query: unknown parameter \\\"colour\\\""},
           {"profile=no-such-profile&model=gpt3-175b&gpus=8&global_batch=8", "404", "no-such-profile"},
           {"profile=dgx-a100-80gb&model=gpt9&gpus=8&global_batch=8", "400", "model: unknown preset"},
       }) {
    r = curl(query, error);
    EXPECT_EQ(r.out, absl::StrCat(status, " application/json")) << query << "\n" << Slurp(error);
    EXPECT_TRUE(Contains(Slurp(error), message)) << query << "\n" << Slurp(error);
  }
  EXPECT_EQ(server.Stop(), 0);
}

}  // namespace
}  // namespace paraplan::cli_test
