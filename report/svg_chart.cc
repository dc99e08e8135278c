#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/html_escape.h"

namespace paraplan::cli {

namespace {

double Clean(double v) { return std::isfinite(v) && v > 0 ? v : 0; }

// A tick or value label: 4 significant digits, k / M / G above 10^4.
std::string Num(double v) {
  const double a = std::abs(v);
  if (a >= 1e9) return absl::StrFormat("%.3gG", v / 1e9);
  if (a >= 1e6) return absl::StrFormat("%.3gM", v / 1e6);
  if (a >= 1e4) return absl::StrFormat("%.3gk", v / 1e3);
  return absl::StrFormat("%.4g", v);
}

// Coordinates with one decimal: small files, exact enough.
std::string C(double v) { return absl::StrFormat("%.1f", v); }

std::string Title(const std::string& text) { return absl::StrCat("<title>", HtmlEscape(text), "</title>"); }

std::string DataPlan(const std::string& id) {
  return id.empty() ? "" : absl::StrCat(" data-plan=\"", HtmlEscape(id), "\"");
}

std::string Open(double width, double height, const std::string& title, const std::string& cls) {
  return absl::StrCat("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"", cls, "\" viewBox=\"0 0 ", C(width), " ",
                      C(height), "\" width=\"", C(width), "\" height=\"", C(height), "\" role=\"img\" aria-label=\"",
                      HtmlEscape(title), "\">");
}

std::string NoData(const std::string& title, const std::string& cls) {
  return absl::StrCat(Open(400, 40, title, cls), "<text x=\"10\" y=\"25\" class=\"muted\">no data</text></svg>");
}

// Approximate width of `text` at 12 px sans-serif.
double TextWidth(const std::string& text) { return 6.8 * static_cast<double>(text.size()); }

}  // namespace

std::vector<double> NiceTicks(double lo, double hi, int n) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {0, 1};
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) {
    const double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const double raw = (hi - lo) / std::max(1, n);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double m = 1;
  for (const double f : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    m = f;
    if (raw <= f * mag) break;
  }
  const double step = m * mag;
  // Tick k is k * m * mag, computed as (k * m) / 10^e for mag = 10^-e so that it is the
  // double nearest the decimal value (0.2 * 13 is not 2.6; 26 / 10 is).
  const double scale = mag < 1 ? std::round(1 / mag) : 1, unit = mag < 1 ? 1 : mag;
  std::vector<double> ticks;
  const double k0 = std::floor(lo / step + 1e-9);
  for (int i = 0; i < 100; ++i) {
    const double t = (k0 + i) * m * unit / scale;
    ticks.push_back(t == 0 ? 0 : t);  // no -0
    if (t >= hi - step * 1e-9) break;
  }
  return ticks;
}

std::vector<double> LogTicks(double lo, double hi) {
  if (!(lo > 0) || !std::isfinite(hi)) return {1, 10};
  if (hi < lo) std::swap(lo, hi);
  const int k0 = static_cast<int>(std::floor(std::log10(lo))), k1 = static_cast<int>(std::ceil(std::log10(hi)));
  for (const bool decades_only : {false, true}) {
    std::vector<double> all;
    for (int k = k0; k <= k1; ++k) {
      for (const double m : {1.0, 2.0, 5.0}) {
        if (decades_only && m != 1.0) continue;
        all.push_back(m * std::pow(10.0, k));
      }
    }
    // From the last tick at or below lo to the first at or above hi.
    size_t a = 0, b = all.size() - 1;
    for (size_t i = 0; i < all.size(); ++i) {
      if (all[i] <= lo * (1 + 1e-12)) a = i;
    }
    for (size_t i = all.size(); i-- > 0;) {
      if (all[i] >= hi * (1 - 1e-12)) b = i;
    }
    if (b <= a) b = std::min(all.size() - 1, a + 1);
    std::vector<double> ticks(all.begin() + static_cast<std::ptrdiff_t>(a),
                              all.begin() + static_cast<std::ptrdiff_t>(b) + 1);
    if (ticks.size() <= 10 || decades_only) return ticks;
  }
  return {1, 10};
}

std::string StackedBarsSvg(const StackedBarChart& chart) {
  if (chart.rows.empty()) return NoData(chart.title, "chart bars");
  const double width = 1000, x0 = 230, x1 = 880, row_h = 24, bar_h = 16;
  // Only the segments that some row uses appear (in the legend and as rects).
  std::vector<bool> used(chart.segments.size(), false);
  double max_v = 0;
  for (const BarRow& r : chart.rows) {
    double sum = 0;
    for (size_t i = 0; i < r.values.size() && i < chart.segments.size(); ++i) {
      sum += Clean(r.values[i]);
      if (Clean(r.values[i]) > 0) used[i] = true;
    }
    max_v = std::max({max_v, sum, Clean(r.limit)});
  }
  const std::vector<double> ticks = NiceTicks(0, max_v > 0 ? max_v : 1, 6);
  const double top_v = ticks.back();
  auto x_of = [&](double v) { return x0 + (x1 - x0) * v / top_v; };

  // Legend, wrapped to the width.
  std::string legend;
  double lx = x0, ly = 14;
  for (size_t i = 0; i < chart.segments.size(); ++i) {
    if (!used[i]) continue;
    const double w = 18 + TextWidth(chart.segments[i].name) + 16;
    if (lx + w > width && lx > x0) {
      lx = x0;
      ly += 20;
    }
    absl::StrAppend(&legend, "<rect x=\"", C(lx), "\" y=\"", C(ly - 10), "\" width=\"12\" height=\"12\" fill=\"",
                    HtmlEscape(chart.segments[i].color), "\"/><text x=\"", C(lx + 16), "\" y=\"", C(ly), "\">",
                    HtmlEscape(chart.segments[i].name), "</text>");
    lx += w;
  }
  bool any_limit = false;
  for (const BarRow& r : chart.rows) any_limit |= Clean(r.limit) > 0;
  if (any_limit) {
    const double w = 18 + TextWidth(chart.limit_name) + 16;
    if (lx + w > width && lx > x0) {
      lx = x0;
      ly += 20;
    }
    absl::StrAppend(&legend, "<line class=\"limit\" x1=\"", C(lx + 6), "\" y1=\"", C(ly - 12), "\" x2=\"", C(lx + 6),
                    "\" y2=\"", C(ly + 3), "\"/><text x=\"", C(lx + 16), "\" y=\"", C(ly), "\">",
                    HtmlEscape(chart.limit_name), "</text>");
  }
  const double rows_top = ly + 16;
  const double rows_bottom = rows_top + row_h * static_cast<double>(chart.rows.size());
  const double height = rows_bottom + 34;

  std::string out = Open(width, height, chart.title, "chart bars");
  absl::StrAppend(&out, legend);
  // Grid and axis.
  for (const double t : ticks) {
    absl::StrAppend(&out, "<line class=\"grid\" x1=\"", C(x_of(t)), "\" y1=\"", C(rows_top - 4), "\" x2=\"", C(x_of(t)),
                    "\" y2=\"", C(rows_bottom), "\"/><text class=\"tick\" x=\"", C(x_of(t)), "\" y=\"",
                    C(rows_bottom + 16), "\" text-anchor=\"middle\">", HtmlEscape(Num(t)), "</text>");
  }
  absl::StrAppend(&out, "<text class=\"tick\" x=\"", C(x1 + 10), "\" y=\"", C(rows_bottom + 16), "\">",
                  HtmlEscape(chart.unit), "</text>");
  for (size_t k = 0; k < chart.rows.size(); ++k) {
    const BarRow& r = chart.rows[k];
    const double y = rows_top + row_h * static_cast<double>(k);
    double sum = 0;
    for (size_t i = 0; i < r.values.size() && i < chart.segments.size(); ++i) sum += Clean(r.values[i]);
    std::string tip = absl::StrCat(r.label, ": ", Num(sum), " ", chart.unit);
    if (Clean(r.limit) > 0) absl::StrAppend(&tip, " of ", Num(r.limit), " ", chart.unit, " ", chart.limit_name);
    absl::StrAppend(&out, "<g class=\"row\"", DataPlan(r.id), ">", Title(tip), "<text x=\"", C(x0 - 8), "\" y=\"",
                    C(y + bar_h - 3), "\" text-anchor=\"end\">", HtmlEscape(r.label), "</text>");
    double at = 0;
    for (size_t i = 0; i < r.values.size() && i < chart.segments.size(); ++i) {
      const double v = Clean(r.values[i]);
      if (v <= 0) continue;
      const double share = sum > 0 ? 100 * v / sum : 0;
      absl::StrAppend(&out, "<rect x=\"", C(x_of(at)), "\" y=\"", C(y), "\" width=\"", C(x_of(at + v) - x_of(at)),
                      "\" height=\"", C(bar_h), "\" fill=\"", HtmlEscape(chart.segments[i].color), "\">",
                      Title(absl::StrFormat("%s: %s %s (%.1f %%)", chart.segments[i].name, Num(v), chart.unit, share)),
                      "</rect>");
      at += v;
    }
    if (Clean(r.limit) > 0) {
      absl::StrAppend(&out, "<line class=\"limit\" x1=\"", C(x_of(r.limit)), "\" y1=\"", C(y - 3), "\" x2=\"",
                      C(x_of(r.limit)), "\" y2=\"", C(y + bar_h + 3), "\"/>");
    }
    absl::StrAppend(&out, "<text class=\"value\" x=\"", C(x1 + 10), "\" y=\"", C(y + bar_h - 3), "\">",
                    HtmlEscape(absl::StrCat(Num(sum), " ", chart.unit)), "</text></g>");
  }
  return absl::StrCat(out, "</svg>");
}

std::string ScatterSvg(const ScatterChart& chart) {
  if (chart.points.empty()) return NoData(chart.title, "chart scatter");
  const double width = 520, height = 340, left = 72, right = 16, top = 34, bottom = 50;
  // On a log axis a point must be positive to be drawn.
  auto drawn = [&](const ScatterPoint& p) {
    return (!chart.log_x || Clean(p.x) > 0) && (!chart.log_y || Clean(p.y) > 0);
  };
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo, y_lo = x_lo, y_hi = -x_lo;
  for (const ScatterPoint& p : chart.points) {
    if (!drawn(p)) continue;
    x_lo = std::min(x_lo, Clean(p.x));
    x_hi = std::max(x_hi, Clean(p.x));
    y_lo = std::min(y_lo, Clean(p.y));
    y_hi = std::max(y_hi, Clean(p.y));
  }
  if (!(x_lo <= x_hi)) return NoData(chart.title, "chart scatter");
  const std::vector<double> xt = chart.log_x ? LogTicks(x_lo, x_hi) : NiceTicks(x_lo, x_hi, 5);
  const std::vector<double> yt = chart.log_y ? LogTicks(y_lo, y_hi) : NiceTicks(y_lo, y_hi, 5);
  const double px0 = left, px1 = width - right, py0 = height - bottom, py1 = top;
  // Position of v in [0, 1] along an axis with ticks t.
  auto frac = [](double v, const std::vector<double>& t, bool log) {
    if (log) return (std::log(v) - std::log(t.front())) / (std::log(t.back()) - std::log(t.front()));
    return (v - t.front()) / (t.back() - t.front());
  };
  auto sx = [&](double v) { return px0 + (px1 - px0) * frac(Clean(v), xt, chart.log_x); };
  auto sy = [&](double v) { return py0 - (py0 - py1) * frac(Clean(v), yt, chart.log_y); };

  std::string out = Open(width, height, chart.title, "chart scatter");
  // Legend.
  double lx = left;
  for (const ScatterSeries& s : chart.series) {
    absl::StrAppend(&out, "<circle cx=\"", C(lx + 6), "\" cy=\"14\" r=\"5\" ",
                    s.filled ? absl::StrCat("fill=\"", HtmlEscape(s.color), "\"")
                             : absl::StrCat("fill=\"none\" stroke-width=\"2\" stroke=\"", HtmlEscape(s.color), "\""),
                    "/><text x=\"", C(lx + 16), "\" y=\"18\">", HtmlEscape(s.name), "</text>");
    lx += 40 + TextWidth(s.name);
  }
  // Axes, grid, labels.
  for (const double t : xt) {
    absl::StrAppend(&out, "<line class=\"grid\" x1=\"", C(sx(t)), "\" y1=\"", C(py1), "\" x2=\"", C(sx(t)), "\" y2=\"",
                    C(py0), "\"/><text class=\"tick\" x=\"", C(sx(t)), "\" y=\"", C(py0 + 16),
                    "\" text-anchor=\"middle\">", HtmlEscape(Num(t)), "</text>");
  }
  for (const double t : yt) {
    absl::StrAppend(&out, "<line class=\"grid\" x1=\"", C(px0), "\" y1=\"", C(sy(t)), "\" x2=\"", C(px1), "\" y2=\"",
                    C(sy(t)), "\"/><text class=\"tick\" x=\"", C(px0 - 6), "\" y=\"", C(sy(t) + 4),
                    "\" text-anchor=\"end\">", HtmlEscape(Num(t)), "</text>");
  }
  absl::StrAppend(&out, "<line class=\"axis\" x1=\"", C(px0), "\" y1=\"", C(py0), "\" x2=\"", C(px1), "\" y2=\"",
                  C(py0), "\"/><line class=\"axis\" x1=\"", C(px0), "\" y1=\"", C(py0), "\" x2=\"", C(px0), "\" y2=\"",
                  C(py1), "\"/>");
  absl::StrAppend(&out, "<text class=\"axis-label\" x=\"", C((px0 + px1) / 2), "\" y=\"", C(height - 10),
                  "\" text-anchor=\"middle\">",
                  HtmlEscape(absl::StrCat(chart.x_label, chart.log_x ? ", log scale" : "")), "</text>");
  absl::StrAppend(&out, "<text class=\"axis-label\" transform=\"translate(16 ", C((py0 + py1) / 2),
                  ") rotate(-90)\" text-anchor=\"middle\">",
                  HtmlEscape(absl::StrCat(chart.y_label, chart.log_y ? ", log scale" : "")), "</text>");
  // Fronts: the points of a series that no other point of it beats on both axes.
  for (size_t s = 0; s < chart.series.size(); ++s) {
    if (!chart.series[s].connect) continue;
    std::vector<const ScatterPoint*> front;
    for (const ScatterPoint& p : chart.points) {
      if (p.series != static_cast<int>(s) || !drawn(p)) continue;
      bool beaten = false;
      for (const ScatterPoint& q : chart.points) {
        if (q.series != p.series || !drawn(q)) continue;
        beaten |= Clean(q.x) <= Clean(p.x) && Clean(q.y) <= Clean(p.y) &&
                  (Clean(q.x) < Clean(p.x) || Clean(q.y) < Clean(p.y));
      }
      if (!beaten) front.push_back(&p);
    }
    std::sort(front.begin(), front.end(), [](const ScatterPoint* a, const ScatterPoint* b) { return a->x < b->x; });
    if (front.size() < 2) continue;
    std::string pts;
    for (const ScatterPoint* p : front) absl::StrAppend(&pts, pts.empty() ? "" : " ", C(sx(p->x)), ",", C(sy(p->y)));
    absl::StrAppend(&out, "<polyline class=\"front\" points=\"", pts, "\" stroke=\"", HtmlEscape(chart.series[s].color),
                    "\"/>");
  }
  // Points: rings over dots, so a plan that is also on the front stays visible.
  for (const bool filled : {true, false}) {
    for (const ScatterPoint& p : chart.points) {
      if (p.series < 0 || p.series >= static_cast<int>(chart.series.size()) || !drawn(p)) continue;
      const ScatterSeries& s = chart.series[p.series];
      if (s.filled != filled) continue;
      absl::StrAppend(&out, "<g class=\"point\"", DataPlan(p.id), ">", Title(p.tooltip), "<circle cx=\"", C(sx(p.x)),
                      "\" cy=\"", C(sy(p.y)), "\" r=\"", filled ? "4" : "6", "\" ",
                      filled ? absl::StrCat("fill=\"", HtmlEscape(s.color), "\"")
                             : absl::StrCat("fill=\"none\" stroke-width=\"2\" stroke=\"", HtmlEscape(s.color), "\""),
                      "/>");
      if (!p.label.empty()) {
        // Left of the point where there is room (the best plans sit at the left, next to
        // the front they often are part of), else right of it.
        const bool left_room = sx(p.x) - px0 > 12 + TextWidth(p.label);
        absl::StrAppend(&out, "<text class=\"point-label\" x=\"", C(sx(p.x) + (left_room ? -10 : 10)), "\" y=\"",
                        C(sy(p.y) + 4), "\" text-anchor=\"", left_room ? "end" : "start", "\">", HtmlEscape(p.label),
                        "</text>");
      }
      absl::StrAppend(&out, "</g>");
    }
  }
  return absl::StrCat(out, "</svg>");
}

}  // namespace paraplan::cli
