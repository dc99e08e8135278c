// Unit tests of the plan report page (report/report.cc), its SVG charts and escaping.
// Inputs are built by hand; expected texts are written out in full.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "report/html_escape.h"
#include "report/report.h"
#include "report/svg_chart.h"

namespace paraplan::cli {
namespace {

int Count(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

TEST(HtmlEscape, EscapesMarkupQuotesAndControls) {
  EXPECT_EQ(HtmlEscape("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
  EXPECT_EQ(HtmlEscape("tab\tok\x01"), "tab\tok\xEF\xBF\xBD");
  EXPECT_EQ(HtmlEscape("\xC2\xB1 5 %"), "\xC2\xB1 5 %");
}

TEST(SvgChart, Ticks) {
  EXPECT_EQ(NiceTicks(0, 19.6, 6), (std::vector<double>{0, 5, 10, 15, 20}));
  EXPECT_EQ(NiceTicks(0, 72.6, 6), (std::vector<double>{0, 20, 40, 60, 80}));
  EXPECT_EQ(NiceTicks(3, 3, 5), (std::vector<double>{2.6, 2.8, 3, 3.2, 3.4}));
  EXPECT_EQ(LogTicks(17, 520), (std::vector<double>{10, 20, 50, 100, 200, 500, 1000}));
  EXPECT_EQ(LogTicks(0.002, 3e6), (std::vector<double>{0.001, 0.01, 0.1, 1, 10, 100, 1000, 1e4, 1e5, 1e6, 1e7}));
}

TEST(SvgChart, StackedBarsEscapeAndSkipUnusedSegments) {
  StackedBarChart ch;
  ch.title = "t<1>";
  ch.unit = "GiB";
  ch.segments = {{"weights", "#111111"}, {"unused", "#222222"}, {"<acts>", "#333333"}};
  ch.rows = {{"1", "#1 <TP8>", {10, 0, 30}, 80}, {"2", "#2 TP4", {20, 0, 20}, 80}};
  const std::string svg = StackedBarsSvg(ch);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart bars\"", 0), 0u) << svg;
  EXPECT_EQ(svg.substr(svg.size() - 6), "</svg>");
  EXPECT_NE(svg.find("aria-label=\"t&lt;1&gt;\""), std::string::npos);
  EXPECT_NE(svg.find("#1 &lt;TP8&gt;"), std::string::npos);
  EXPECT_NE(svg.find("&lt;acts&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("<TP8>"), std::string::npos);
  EXPECT_EQ(svg.find("unused"), std::string::npos) << "a segment no row uses has no legend entry";
  EXPECT_EQ(Count(svg, "<rect x="), 4 + 2) << "4 bar segments and 2 legend swatches";
  EXPECT_EQ(Count(svg, "data-plan=\"1\""), 1);
  EXPECT_EQ(Count(svg, "<line class=\"limit\""), 3) << "one capacity marker a row and one in the legend";
  EXPECT_NE(svg.find("<title>weights: 10 GiB (25.0 %)</title>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>#2 TP4: 40 GiB of 80 GiB capacity</title>"), std::string::npos) << svg;
  EXPECT_EQ(StackedBarsSvg(StackedBarChart{}).find("no data") != std::string::npos, true);
}

TEST(SvgChart, ScatterDrawsFrontsAndLogAxes) {
  ScatterChart ch;
  ch.title = "time vs cost";
  ch.x_label = "time (s)";
  ch.y_label = "cost ($)";
  ch.series = {{"front", "#4e79a7", true, true}, {"plans", "#e15759", false, false}};
  ch.points = {{0, 10, 5, "", "", "a"},
               {0, 20, 2, "", "", "b"},
               {0, 30, 6, "", "", "dominated"},
               {1, 10, 5, "1", "#1", "plan <1>"}};
  std::string svg = ScatterSvg(ch);
  EXPECT_EQ(Count(svg, "<circle"), 4 + 2) << "4 points and 2 legend marks";
  EXPECT_NE(svg.find("<polyline class=\"front\""), std::string::npos) << "a and b are both on the 2-D front";
  EXPECT_NE(svg.find("<title>plan &lt;1&gt;</title>"), std::string::npos);
  EXPECT_NE(svg.find(">#1</text>"), std::string::npos);
  EXPECT_EQ(svg.find("log scale"), std::string::npos);
  ch.log_x = true;
  ch.points.push_back({0, 0, 1, "", "", "zero time: left out on a log axis"});
  svg = ScatterSvg(ch);
  EXPECT_NE(svg.find("time (s), log scale"), std::string::npos);
  EXPECT_EQ(svg.find("zero time"), std::string::npos);
  EXPECT_NE(ScatterSvg(ScatterChart{}).find("no data"), std::string::npos);
}

v1::Estimate Plan(int tp, double seconds) {
  v1::Estimate e;
  e.mutable_config()->set_tensor_parallel(tp);
  e.mutable_config()->set_data_parallel(8 / tp);
  e.set_num_gpus(8);
  e.set_iteration_time_s(seconds);
  e.mutable_time()->set_compute_s(seconds * 0.75);
  e.mutable_time()->set_tp_comm_s(seconds * 0.25);
  e.mutable_memory()->set_weights_bytes(10.0 * (1 << 30));
  e.mutable_memory()->set_activations_bytes(30.0 * (1 << 30));
  e.mutable_memory()->set_total_bytes(40.0 * (1 << 30));
  e.mutable_memory()->set_capacity_bytes(80.0 * (1 << 30));
  e.set_cost_per_iteration_usd(seconds * 0.01);
  e.set_energy_per_iteration_j(seconds * 5000);
  e.set_bottleneck("<compute>");
  e.set_profile_name("lab");
  e.set_profile_version(2);
  return e;
}

ReportInput Report() {
  ReportInput in;
  *in.response.add_plans() = Plan(2, 1.5);
  *in.response.add_plans() = Plan(4, 1.8);
  *in.response.add_pareto() = Plan(2, 1.5);
  in.response.mutable_plans(1)->add_warnings("<script>alert(1)</script>");
  in.workload = "model <x>";
  in.request = "GPUs 8, global batch 64";
  in.profile = "lab@2";
  return in;
}

TEST(Report, SelfContainedEscapedPageWithChartsAndTable) {
  ReportInput in = Report();
  in.accuracy_error = "PERMISSION_DENIED: needs role reader";
  const std::string html = PlanReportHtml(in);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n", 0), 0u);
  EXPECT_EQ(html.substr(html.size() - 8), "</html>\n");
  EXPECT_EQ(Count(html, "<svg "), 4) << "time, memory and two Pareto charts";
  EXPECT_EQ(Count(html, "<tr data-plan="), 2);
  EXPECT_NE(html.find("<span id=\"profile\">lab@2</span>"), std::string::npos);
  EXPECT_NE(html.find("model &lt;x&gt;"), std::string::npos);
  EXPECT_NE(html.find("&lt;compute&gt;"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(Count(html, "<script"), 1) << "only the page's own inline script";
  EXPECT_EQ(html.find("<x>"), std::string::npos);
  EXPECT_NE(html.find("Profile accuracy: accuracy unknown: PERMISSION_DENIED: needs role reader"), std::string::npos);
  // Nothing is fetched: no src / href / url() / @import (the SVG namespace is a name, not a fetch).
  for (const char* ref : {"src=", "href=", "url(", "@import", "https://"}) {
    EXPECT_EQ(html.find(ref), std::string::npos) << ref;
  }
  EXPECT_EQ(Count(html, "http://"), 4) << "the xmlns of the 4 svg elements only";
}

TEST(Report, UncertaintyFromMeasuredAccuracy) {
  ReportInput in = Report();
  in.accuracy.emplace();
  EXPECT_EQ(UncertaintyText(in), "no measurements yet");
  in.accuracy->mutable_overall()->set_count(9);
  in.accuracy->mutable_overall()->set_mape_ratio(0.0261);
  in.accuracy->mutable_overall()->set_bias_ratio(1.023);
  EXPECT_EQ(UncertaintyText(in), "uncertainty \u00b12.6 % (MAPE over 9 measurements)");
  const std::string html = PlanReportHtml(in);
  EXPECT_NE(html.find("uncertainty \u00b12.6 % (MAPE over 9 measurements); median predicted / measured 1.023; best "
                      "plan 1.500 s per iteration, likely 1.461 s to 1.539 s"),
            std::string::npos)
      << html.substr(0, 3000);
  in.accuracy->mutable_overall()->set_count(1);
  EXPECT_EQ(UncertaintyText(in), "uncertainty \u00b12.6 % (MAPE over 1 measurement)");
}

TEST(Report, NoPlanSaysWhy) {
  ReportInput in;
  in.response.set_infeasible_reason("nothing fits: 90 GiB > 80 GiB <capacity>");
  in.workload = "big";
  in.profile = "lab@1";
  const std::string html = PlanReportHtml(in);
  EXPECT_NE(html.find("<h2>No plan fits</h2>"), std::string::npos);
  EXPECT_NE(html.find("nothing fits: 90 GiB &gt; 80 GiB &lt;capacity&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<svg"), std::string::npos);
}

// A what-if page: the two plans by name in the table, both charts and the warnings; no
// Pareto front, no rank numbers; the change escaped in its heading.
TEST(Report, WhatIfNamesTheTwoPlans) {
  ReportInput in = Report();
  in.response.clear_pareto();
  in.plan_labels = {"today", "what-if"};
  in.what_if = "accelerator.memory_gib=40 <b>";
  const std::string html = PlanReportHtml(in);
  EXPECT_NE(html.find("What if: <span id=\"what-if\">accelerator.memory_gib=40 &lt;b&gt;</span>"), std::string::npos);
  EXPECT_NE(html.find("<tr data-plan=\"1\"><td>today</td><td>8</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("<tr data-plan=\"2\"><td>what-if</td><td>8</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("what-if TP4 PP1 DP2: &lt;script&gt;"), std::string::npos) << "the warning names the side";
  EXPECT_EQ(Count(html, "<svg "), 2) << "time and memory, no Pareto front";
  EXPECT_EQ(html.find("#1"), std::string::npos);
  EXPECT_EQ(html.find("infeasible"), std::string::npos);
  // The change fits nothing: today alone and the reason.
  in.response.mutable_plans()->RemoveLast();
  in.response.set_infeasible_reason("nothing fits in 8 GiB");
  const std::string alone = PlanReportHtml(in);
  EXPECT_NE(alone.find("<p id=\"infeasible\">With the change no plan fits: nothing fits in 8 GiB</p>"),
            std::string::npos);
  EXPECT_EQ(Count(alone, "<tr data-plan="), 1);
}

}  // namespace
}  // namespace paraplan::cli
