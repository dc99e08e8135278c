// Inline SVG charts for the plan report: stacked horizontal bars and a scatter plot.
//
// Contract: pure functions from plain structs to one <svg> element (no scripts, no
// external references; sized by a viewBox so it scales with the page). Every string in
// the input is plain text and is escaped here. Each bar row and each point carries
// `data-plan="ID"` when its id is not empty (the report links table rows and charts by
// it), and a <title> child, which browsers show on hover. Values are in display units
// (seconds, GiB, dollars); non-finite or negative values are drawn as 0. An empty chart
// (no rows / no points) is an <svg> with a "no data" caption.
#ifndef PARAPLAN_REPORT_SVG_CHART_H_
#define PARAPLAN_REPORT_SVG_CHART_H_

#include <string>
#include <vector>

namespace paraplan::cli {

struct BarSegment {
  std::string name;   // legend and tooltip: "compute"
  std::string color;  // CSS color: "#4e79a7"
};

struct BarRow {
  std::string id;              // data-plan attribute ("" = none)
  std::string label;           // left of the bar: "#1 TP8 PP8 DP16"
  std::vector<double> values;  // one per segment, in segment order
  double limit = 0;            // drawn as a marker line (memory capacity); 0 = none
};

struct StackedBarChart {
  std::string title;  // aria-label of the svg
  std::string unit;   // appended to numbers: "s", "GiB"
  std::string limit_name = "capacity";
  std::vector<BarSegment> segments;
  std::vector<BarRow> rows;
};

std::string StackedBarsSvg(const StackedBarChart& chart);

struct ScatterSeries {
  std::string name;  // legend
  std::string color;
  bool filled = true;    // filled dot, else a ring
  bool connect = false;  // join the points that no other point of the series beats on both axes (lower is better)
};

struct ScatterPoint {
  int series = 0;  // index into ScatterChart::series
  double x = 0, y = 0;
  std::string id;     // data-plan attribute ("" = none)
  std::string label;  // written beside the point ("" = none)
  std::string tooltip;
};

struct ScatterChart {
  std::string title, x_label, y_label;
  bool log_x = false, log_y = false;  // logarithmic axes (values <= 0 are then left out)
  std::vector<ScatterSeries> series;
  std::vector<ScatterPoint> points;
};

std::string ScatterSvg(const ScatterChart& chart);

// Round tick positions covering [lo, hi] (about `n` of them); exposed for tests.
std::vector<double> NiceTicks(double lo, double hi, int n);
// Ticks 1, 2, 5 x 10^k covering [lo, hi] (0 < lo <= hi), only powers of ten when that
// would give more than 10; exposed for tests.
std::vector<double> LogTicks(double lo, double hi);

}  // namespace paraplan::cli

#endif  // PARAPLAN_REPORT_SVG_CHART_H_
