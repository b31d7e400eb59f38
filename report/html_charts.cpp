#include "report/html_charts.h"

#include <algorithm>
#include <map>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "io/text.h"

namespace attnv::report::detail {

using bound::RatioHistogram;

std::string html_escape(const std::string& raw) {
  // Text from outside attnv (a plugin's name, a case id) may hold terminal controls (ESC, BEL,
  // bidirectional overrides): shown as '?' here as in the terminal (io/text.h), never raw.
  const std::string s = io::printable(raw, true);
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

namespace {

struct Rgb {
  double r, g, b;
};

std::string css(Rgb c) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(std::lround(c.r)), static_cast<int>(std::lround(c.g)),
                static_cast<int>(std::lround(c.b)));
  return buf;
}

// Viridis at five stops: dark for ratios far below the bound, yellow close to it.
constexpr Rgb kStops[] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
constexpr const char* kOver = "#d62728";   // ratio >= 1: over the bound
constexpr const char* kNone = "#9aa3ad";   // no ratio
constexpr const char* kPass = "#2e9e5b";
constexpr const char* kFail = "#d62728";

Rgb viridis(double t) {
  t = std::clamp(t, 0.0, 1.0) * 4;
  const int i = std::min(3, static_cast<int>(t));
  const double f = t - i;
  const Rgb a = kStops[i], b = kStops[i + 1];
  return {a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f};
}

std::string decade_label(int k) {
  switch (k) {
    case -2: return "0.01";
    case -1: return "0.1";
    case 0: return "1";
    case 1: return "10";
    case 2: return "100";
    case 3: return "1000";
    default: return "1e" + std::to_string(k);
  }
}

std::string format_range(int bin) {
  if (bin == 0) return "exact (ratio 0)";
  if (bin == RatioHistogram::kBins - 1) return "ratio >= 10 or non-finite";
  if (bin == 1) return "ratio < " + num(RatioHistogram::upper_edge(1));
  return "ratio in [" + num(RatioHistogram::lower_edge(bin)) + ", " + num(RatioHistogram::upper_edge(bin)) + ")";
}

}  // namespace

std::string ratio_color(double ratio) {
  if (std::isnan(ratio)) return kOver;
  if (ratio < 0) return kNone;
  if (ratio >= 1) return kOver;
  if (ratio == 0) return css(kStops[0]);
  return css(viridis((std::log10(ratio) + 6) / 6));
}

std::string histogram_svg(const std::string& id, const std::string& title, const std::vector<Series>& series) {
  constexpr int kBins = RatioHistogram::kBins;
  constexpr double W = 560, L = 50, R = 14, B = 46, ph = 160;
  // The legend gets rows of its own under the title, wrapped to the width (drawn at the title's
  // height it ran into the title once there were three series or more). Text is about 7 px a
  // character at the page's 12 px tick font.
  struct Entry {
    double x, y;
    const Series* s;
  };
  std::vector<Entry> legend;
  double lx = L, ly = 36;
  for (const Series& s : series) {
    const double w = 7.0 * static_cast<double>(s.label.size()) + 26;
    if (lx > L && lx + w > W - R) lx = L, ly += 16;
    legend.push_back({lx, ly, &s});
    lx += w;
  }
  const double T = (legend.empty() ? 30 : ly + 14), H = T + ph + B;
  const double pw = W - L - R;
  // Slots: exact, gap, the 28 quarter-decade bins, gap, ">= 10".
  const double slot = pw / (kBins + 2);
  auto slot_of = [](int bin) { return bin == 0 ? 0 : bin == kBins - 1 ? kBins + 1 : bin + 1; };
  auto sx = [&](double s) { return L + s * slot; };

  std::int64_t peak = 0, total = 0;
  for (int i = 0; i < kBins; ++i) {
    std::int64_t sum = 0;
    for (const Series& s : series) sum += s.hist->count[static_cast<std::size_t>(i)];
    peak = std::max(peak, sum);
    total += sum;
  }
  std::ostringstream o;
  o << "<svg class=\"chart hist\" viewBox=\"0 0 " << W << " " << H << "\" role=\"img\" aria-label=\""
    << html_escape(title) << "\" id=\"" << html_escape(id) << "\">";
  o << "<text class=\"ctitle\" x=\"" << L << "\" y=\"18\">" << html_escape(title) << "</text>";
  if (total == 0) {
    o << "<text class=\"empty\" x=\"" << W / 2 << "\" y=\"" << H / 2
      << "\" text-anchor=\"middle\">no per-element ratios (R1/R2 not run or not claimed)</text></svg>";
    return o.str();
  }
  const double ymax = std::log10(1.0 + static_cast<double>(peak));
  auto sy = [&](double count) { return T + ph - std::log10(1.0 + count) / ymax * ph; };

  // Over the bound: shaded, so a bar there is read as a failure before any label is.
  o << "<rect class=\"over\" x=\"" << num(sx(slot_of(25))) << "\" y=\"" << T << "\" width=\""
    << num(sx(kBins + 2) - sx(slot_of(25))) << "\" height=\"" << ph << "\"><title>over the bound</title></rect>";
  for (int k = 0; std::pow(10.0, k) <= static_cast<double>(peak); ++k) {
    const double y = sy(std::pow(10.0, k));
    o << "<line class=\"grid\" x1=\"" << L << "\" x2=\"" << W - R << "\" y1=\"" << num(y) << "\" y2=\"" << num(y) << "\"/>";
    o << "<text class=\"tick\" x=\"" << L - 6 << "\" y=\"" << num(y + 3) << "\" text-anchor=\"end\">" << decade_label(k)
      << "</text>";
  }
  for (int i = 0; i < kBins; ++i) {
    double base = 0;
    const double x = sx(slot_of(i)) + slot * 0.07;
    for (const Series& s : series) {
      const auto n = static_cast<double>(s.hist->count[static_cast<std::size_t>(i)]);
      if (n == 0) continue;
      const double y0 = sy(base), y1 = sy(base + n);
      o << "<rect fill=\"" << s.color << "\" x=\"" << num(x) << "\" y=\"" << num(y1) << "\" width=\"" << num(slot * 0.86)
        << "\" height=\"" << num(std::max(0.5, y0 - y1)) << "\"><title>" << html_escape(s.label) << ": "
        << static_cast<std::int64_t>(n) << " elements, " << format_range(i) << "</title></rect>";
      base += n;
    }
  }
  const double axis_y = T + ph;
  o << "<line class=\"axis\" x1=\"" << L << "\" x2=\"" << W - R << "\" y1=\"" << axis_y << "\" y2=\"" << axis_y << "\"/>";
  for (int k = -6; k <= 1; ++k) {
    const double x = sx(slot_of(1) + 4 * (k + 6));  // bin 1 + 4k starts at 10^k
    o << "<line class=\"axis\" x1=\"" << num(x) << "\" x2=\"" << num(x) << "\" y1=\"" << axis_y << "\" y2=\""
      << axis_y + 4 << "\"/>";
    o << "<text class=\"tick\" x=\"" << num(x) << "\" y=\"" << axis_y + 15 << "\" text-anchor=\"middle\">"
      << decade_label(k) << "</text>";
  }
  o << "<text class=\"tick\" x=\"" << num(sx(0.5)) << "\" y=\"" << axis_y + 15 << "\" text-anchor=\"middle\">0</text>";
  o << "<text class=\"tick\" x=\"" << num(sx(kBins + 1.5)) << "\" y=\"" << axis_y + 15
    << "\" text-anchor=\"middle\">&#8734;</text>";
  const double bx = sx(slot_of(25));
  o << "<line class=\"bound\" x1=\"" << num(bx) << "\" x2=\"" << num(bx) << "\" y1=\"" << T - 4 << "\" y2=\"" << axis_y
    << "\"/>";
  o << "<text class=\"boundlabel\" x=\"" << num(bx + 3) << "\" y=\"" << T + 8 << "\">bound</text>";
  o << "<text class=\"axislabel\" x=\"" << L + pw / 2 << "\" y=\"" << H - 8
    << "\" text-anchor=\"middle\">|error| / bound, per element (log scale)</text>";
  o << "<text class=\"axislabel\" transform=\"translate(12," << T + ph / 2
    << ") rotate(-90)\" text-anchor=\"middle\">elements</text>";
  for (const Entry& e : legend)
    o << "<rect x=\"" << num(e.x) << "\" y=\"" << num(e.y - 9) << "\" width=\"10\" height=\"10\" fill=\"" << e.s->color
      << "\"/><text class=\"tick\" x=\"" << num(e.x + 14) << "\" y=\"" << num(e.y) << "\">" << html_escape(e.s->label) << "</text>";
  o << "</svg>";
  return o.str();
}

std::string scatter_svg(const std::string& id, const std::string& title, const std::vector<Point>& points,
                        double max_t) {
  constexpr double W = 380, H = 330, L = 50, R = 14, T = 30, B = 44;
  constexpr int kPerDecade = 4;  // cells per decade on each axis
  const double pw = W - L - R, ph = H - T - B;
  const int decades = std::max(1, static_cast<int>(std::ceil(std::log10(std::max(10.0, max_t)) - 1e-9)));
  auto sx = [&](double tk) { return L + std::log10(std::max(1.0, tk)) / decades * pw; };
  auto sy = [&](double tq) { return T + ph - std::log10(std::max(1.0, tq)) / decades * ph; };

  std::ostringstream o;
  o << "<svg class=\"chart scatter\" viewBox=\"0 0 " << W << " " << H << "\" role=\"img\" aria-label=\""
    << html_escape(title) << "\" id=\"" << html_escape(id) << "\">";
  o << "<text class=\"ctitle\" x=\"" << L << "\" y=\"18\">" << html_escape(title) << "</text>";
  o << "<rect class=\"plotbg\" x=\"" << L << "\" y=\"" << T << "\" width=\"" << pw << "\" height=\"" << ph << "\"/>";
  for (int k = 0; k <= decades; ++k) {
    const double v = std::pow(10.0, k);
    o << "<line class=\"grid\" x1=\"" << num(sx(v)) << "\" x2=\"" << num(sx(v)) << "\" y1=\"" << T << "\" y2=\""
      << T + ph << "\"/>";
    o << "<line class=\"grid\" x1=\"" << L << "\" x2=\"" << L + pw << "\" y1=\"" << num(sy(v)) << "\" y2=\""
      << num(sy(v)) << "\"/>";
    o << "<text class=\"tick\" x=\"" << num(sx(v)) << "\" y=\"" << T + ph + 15 << "\" text-anchor=\"middle\">"
      << decade_label(k) << "</text>";
    o << "<text class=\"tick\" x=\"" << L - 6 << "\" y=\"" << num(sy(v) + 3) << "\" text-anchor=\"end\">"
      << decade_label(k) << "</text>";
  }
  o << "<line class=\"diag\" x1=\"" << num(sx(1)) << "\" y1=\"" << num(sy(1)) << "\" x2=\"" << num(sx(std::pow(10.0, decades)))
    << "\" y2=\"" << num(sy(std::pow(10.0, decades))) << "\"><title>Tq = Tk</title></line>";
  o << "<text class=\"axislabel\" x=\"" << L + pw / 2 << "\" y=\"" << H - 8
    << "\" text-anchor=\"middle\">Tk (keys, log scale)</text>";
  o << "<text class=\"axislabel\" transform=\"translate(12," << T + ph / 2
    << ") rotate(-90)\" text-anchor=\"middle\">Tq (queries, log scale)</text>";

  // One mark per cell of a log grid (a quarter decade of Tq by a quarter decade of Tk), not one
  // per case: a quick suite judges tens of thousands of cases, and one SVG circle each made
  // pages of several MB that browsers draw slowly. A cell shows how many cases it holds (the
  // mark's size), its worst ratio or whether any failed (the colour), and names its worst case.
  struct Cell {
    int count = 0, failed = 0;
    const Point* worst = nullptr;  // the failing case with the largest ratio, else the largest ratio
  };
  auto rank = [](const Point& p) {  // failures first, then by ratio (NaN as the worst)
    return std::pair<int, double>(p.ok ? 0 : 1, std::isnan(p.ratio) ? HUGE_VAL : p.ratio);
  };
  auto cell_of = [&](double t) { return static_cast<int>(std::floor(std::log10(std::max(1.0, t)) * kPerDecade)); };
  std::map<std::pair<int, int>, Cell> cells;  // (Tq cell, Tk cell), ordered: the page is deterministic
  for (const Point& p : points) {
    Cell& c = cells[{cell_of(p.tq), cell_of(p.tk)}];
    ++c.count;
    if (!p.ok) ++c.failed;
    if (!c.worst || rank(p) > rank(*c.worst)) c.worst = &p;
  }
  // Worst drawn last, so it is on top: failures, then by ratio.
  std::vector<std::pair<std::pair<int, int>, const Cell*>> order;
  for (const auto& [key, c] : cells) order.emplace_back(key, &c);
  std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) { return rank(*a.second->worst) < rank(*b.second->worst); });
  const double cell_px = std::min(pw, ph) / (decades * kPerDecade);
  // One circle per cell carries both colourings as CSS variables (--r by ratio, --v by verdict);
  // the page's CSS picks one, so the hover text is written once.
  o << "<g>";
  for (const auto& [key, c] : order) {
    // The cell's centre; the radius grows with log(count), up to half a cell.
    const double cx = L + (key.second + 0.5) / (decades * kPerDecade) * pw;
    const double cy = T + ph - (key.first + 0.5) / (decades * kPerDecade) * ph;
    const double r = std::min(cell_px * 0.5, 2.5 + 1.6 * std::log10(static_cast<double>(c->count)));
    std::ostringstream tip;
    tip << c->count << (c->count == 1 ? " case" : " cases") << ", Tq " << num(std::pow(10.0, key.first / double(kPerDecade)))
        << "-" << num(std::pow(10.0, (key.first + 1) / double(kPerDecade))) << ", Tk "
        << num(std::pow(10.0, key.second / double(kPerDecade))) << "-" << num(std::pow(10.0, (key.second + 1) / double(kPerDecade)));
    if (c->failed) tip << "; " << c->failed << " FAIL";
    tip << "\nworst: " << c->worst->title;
    o << "<circle class=\"cell" << (c->failed ? " failpt" : "") << "\" cx=\"" << num(cx) << "\" cy=\"" << num(cy) << "\" r=\""
      << num(r) << "\" style=\"--r:" << ratio_color(c->worst->ratio) << ";--v:" << (c->failed ? kFail : kPass) << "\"><title>"
      << html_escape(tip.str()) << "</title></circle>";
  }
  o << "</g></svg>";
  return o.str();
}

}  // namespace attnv::report::detail
