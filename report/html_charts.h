#pragma once
// The inline SVG charts of the HTML certificate (internal to attnv_report). Each returns one
// self-contained <svg> element; all text in it is HTML-escaped.
#include <string>
#include <utility>
#include <vector>

#include "properties/conformance/conformance.h"

namespace attnv::report::detail {

std::string html_escape(const std::string& s);

// "%.3g" style number for labels and coordinates.
std::string num(double x);

// One series of a stacked histogram: the per-element ratios of one requirement.
struct Series {
  std::string label;  // "R1 forward"
  std::string color;  // CSS color
  const bound::RatioHistogram* hist;
};

// Error / bound histogram over RatioHistogram's bins: x is log-scaled (quarter decades from 1e-6
// to 10, with "exact" and ">= 10 / non-finite" bars at the ends), y is log(1 + count); a
// vertical line marks ratio 1, the bound. `id` makes the SVG's internal ids unique on the page.
std::string histogram_svg(const std::string& id, const std::string& title, const std::vector<Series>& series);

// The covered shape space at (Tk, Tq), log axes: the judged cases binned into a grid of quarter
// decades, one mark per non-empty cell (its size grows with the count), so the page stays small
// however many cases ran. Each mark carries two colours, --r (the cell's worst ratio) and --v
// (any failure); the page's CSS uses one of them, as the toggle says.
struct Point {
  double tq, tk;
  double ratio;       // < 0: no ratio
  bool ok;
  std::string title;  // hover text of the case when it is its cell's worst (not yet escaped)
};
std::string scatter_svg(const std::string& id, const std::string& title, const std::vector<Point>& points,
                        double max_t);

// The CSS color of a ratio on the page's scale (shared by the scatter, its legend and tables).
std::string ratio_color(double ratio);

}  // namespace attnv::report::detail
