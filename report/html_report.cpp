#include "report/html_report.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "problem/features/registry.h"
#include "report/html_charts.h"
#include "report/html_style.h"

namespace attnv::report {

using conformance::CaseRecord;
using conformance::RequirementResult;
using conformance::Verdict;
using detail::html_escape;

namespace {

std::string dt(DType d) { return std::string(dtype_name(d)); }

void append(std::string& list, const std::string& word, const char* sep) {
  if (!list.empty()) list += sep;
  list += word;
}

void header(std::ostringstream& o, const Certificate& c, const Summary& s) {
  const char* cls = s.certified ? "" : s.fail > 0 ? " bad" : " none";
  o << "<header class=\"hero" << cls << "\"><span class=\"badge\">" << (s.certified ? "CERTIFIED" : "NOT CERTIFIED")
    << "</span><h1>" << html_escape(c.kernel.name);
  if (!c.kernel.version.empty()) o << " <span class=\"ver\">" << html_escape(c.kernel.version) << "</span>";
  o << "</h1><p class=\"line\">" << html_escape(verdict_line(c)) << "</p><dl>";
  auto item = [&](const char* k, const std::string& v) {
    o << "<div><dt>" << k << "</dt><dd>" << html_escape(v) << "</dd></div>";
  };
  item("kernel", c.kernel.spec);
  std::string dtypes;
  for (DType d : s.dtypes) append(dtypes, dt(d), " ");
  item("dtypes", dtypes);
  item("tier", std::string(conformance::tier_name(c.report.tier)));
  item("seed", std::to_string(c.report.seed));
  item("attnv", c.attnv_version + (c.provenance.attnv_commit.empty() ? "" : " (commit " + c.provenance.attnv_commit.substr(0, 12) + ")"));
  if (!c.kernel.sha256.empty()) item("plugin sha256", c.kernel.sha256);
  if (c.kernel.abi_version > 0) item("plugin ABI", "version " + std::to_string(c.kernel.abi_version));
  if (!c.kernel.configuration.empty()) item("configuration", c.kernel.configuration);
  if (!c.kernel.options.empty()) {
    std::string opts;
    for (const auto& [key, value] : c.kernel.options) append(opts, key + "=" + value, " ");
    item("kernel options", opts);
  }
  if (!c.provenance.compiler.empty()) item("built with", c.provenance.compiler);
  if (!c.provenance.cpu.empty()) item("CPU", c.provenance.cpu + " (" + c.provenance.isa + " path)");
  o << "</dl></header>\n";
}

void cards(std::ostringstream& o, const Certificate& c, const Summary& s) {
  o << "<section class=\"cards\">";
  o << "<div class=\"card ok\"><div class=\"n\">" << s.pass << "</div><div class=\"l\">pass</div></div>";
  o << "<div class=\"card" << (s.fail ? " bad" : "") << "\"><div class=\"n\">" << s.fail
    << "</div><div class=\"l\">fail</div></div>";
  if (s.not_exercised)
    o << "<div class=\"card ne\"><div class=\"n\">" << s.not_exercised << "</div><div class=\"l\">not exercised</div></div>";
  if (s.not_supported || s.cases_declined)
    o << "<div class=\"card ns\"><div class=\"n\">" << s.not_supported << "</div><div class=\"l\">not supported ("
      << s.cases_declined << " cases declined)</div></div>";
  if (s.attnv_errors)
    o << "<div class=\"card aerr\"><div class=\"n\">" << s.attnv_errors << "</div><div class=\"l\">attnv errors</div></div>";
  if (s.notes)
    o << "<div class=\"card note\"><div class=\"n\">" << s.notes << "</div><div class=\"l\">robustness notes</div></div>";
  o << "<div class=\"card nc\"><div class=\"n\">" << s.not_claimed << "</div><div class=\"l\">not claimed</div></div>";
  for (DType d : s.dtypes) {
    const std::optional<Worst> w = worst_for(c, d);
    if (!w) continue;
    // The ratio's color as a stripe: the number itself stays dark enough to read.
    o << "<div class=\"card\" style=\"border-top:4px solid " << detail::ratio_color(w->ratio) << "\"><div class=\"n\""
      << (w->ratio >= 1 ? " style=\"color:var(--bad)\"" : "") << ">" << html_escape(worst_ratio_text(*w)) << "</div><div class=\"l\">worst error / bound, " << dt(d)
      << "</div><div class=\"sub\" title=\"" << html_escape(w->result->worst_case) << "\">" << html_escape(w->result->id)
      << " &middot; " << html_escape(w->record ? describe(w->record->problem) : w->result->worst_case) << "</div></div>";
  }
  o << "</section>\n";
}

std::string cell_title(const Certificate& c, const RequirementResult& r) {
  std::ostringstream t;
  t << r.id << " " << r.property << " on " << dt(r.dtype) << ": " << conformance::verdict_name(r.verdict) << "\n"
    << r.cases_run << " cases run, " << r.cases_checked << " judged, " << r.exercised << ' ' << r.exercised_unit
    << " (a PASS needs " << r.min_exercised << ')';
  if (r.cases_not_supported > 0) t << "\n" << r.cases_not_supported << " cases declined by the kernel (NOT SUPPORTED)";
  if (std::isinf(r.worst_ratio)) t << "\nworst case " << r.worst_case << " (failed without a ratio)";
  else if (r.worst_ratio >= 0) t << "\nworst error/allowance " << format_ratio(r.worst_ratio) << " (" << r.worst_case << ")";
  if (!r.note.empty()) t << "\n" << r.note;
  for (const conformance::Finding& f : r.findings) t << "\nfinding: " << f.message;
  t << "\n" << reproduce_command(c, r);
  return t.str();
}

void grid(std::ostringstream& o, const Certificate& c, const Summary& s) {
  o << "<section id=\"requirements\"><h2>Requirements<small>hover a cell for details</small></h2><table class=\"grid\"><thead><tr>"
       "<th>req</th><th>property</th><th>what must hold</th>";
  for (DType d : s.dtypes) o << "<th style=\"text-align:center\">" << dt(d) << "</th>";
  o << "</tr></thead><tbody>";
  for (const std::string& id : s.ids) {
    const RequirementResult* first = nullptr;
    for (DType d : s.dtypes)
      if (!first) first = find_result(c, id, d);
    o << "<tr><td class=\"id\">" << html_escape(id) << "</td><td class=\"prop\">"
      << html_escape(first ? first->property : "") << "</td><td>" << html_escape(statement_of(id)) << "</td>";
    for (DType d : s.dtypes) {
      const RequirementResult* r = find_result(c, id, d);
      if (!r) {
        o << "<td class=\"v none\">&ndash;</td>";
        continue;
      }
      const char* cls = r->verdict == Verdict::pass            ? "pass"
                        : r->verdict == Verdict::fail          ? "fail"
                        : r->verdict == Verdict::not_exercised ? "ne"
                        : r->verdict == Verdict::note          ? "note"
                        : r->verdict == Verdict::attnv_error   ? "aerr"
                        : r->verdict == Verdict::not_supported ? "ns"
                                                               : "nc";
      o << "<td class=\"v " << cls << "\" title=\"" << html_escape(cell_title(c, *r)) << "\">"
        << conformance::verdict_name(r->verdict);
      if (r->verdict != Verdict::not_claimed) {
        // judged/run; a failure says how many failed and where (the terminal's per-layout counts).
        o << "<small>";
        if (r->cases_failed > 0)
          o << r->cases_failed << " of " << r->cases_checked << " judged failed"
            << (r->failure_pattern.empty() ? "" : " (" + html_escape(r->failure_pattern) + ")") << " &middot; ";
        o << r->cases_checked << "/" << r->cases_run << " cases";
        if (r->cases_not_supported > 0) o << " &middot; " << r->cases_not_supported << " declined";
        if (std::isinf(r->worst_ratio)) o << " &middot; no ratio";
        else if (r->worst_ratio >= 0) o << " &middot; " << html_escape(format_ratio(r->worst_ratio)) << "&times;";
        o << "</small>";
      }
      o << "</td>";
    }
    o << "</tr>";
  }
  o << "</tbody></table></section>\n";
}

// FAILs, then the robustness NOTEs with the same detail.
void findings(std::ostringstream& o, const Certificate& c, const Summary& s) {
  if (s.fail == 0 && s.notes == 0) return;
  o << "<section id=\"findings\"><h2>Findings<small>" << s.findings << (s.findings == 1 ? " finding" : " findings")
    << " in " << s.fail << (s.fail == 1 ? " failing result" : " failing results") << " (requirement &times; dtype)";
  if (s.notes) o << ", " << s.notes << " robustness " << (s.notes == 1 ? "note" : "notes");
  o << "</small></h2>";
  for (const Verdict shown : {Verdict::fail, Verdict::note})
  for (const RequirementResult& r : c.report.results) {
    if (r.verdict != shown) continue;
    o << "<div class=\"finding\"><h3><span class=\"tag\">" << (shown == Verdict::fail ? "FAIL" : "NOTE") << "</span>"
      << html_escape(r.id + " " + r.property) << " on "
      << dt(r.dtype) << " <span class=\"muted\">&mdash; " << html_escape(statement_of(r.id)) << "</span></h3><dl>";
    if (shown == Verdict::note) o << "<dt>note</dt><dd>" << html_escape(r.note) << "</dd>";
    for (const conformance::Finding& f : r.findings) {
      if (!f.kind.empty()) o << "<dt>kind</dt><dd>" << html_escape(kind_text(f.kind)) << "</dd>";
      o << "<dt>finding</dt><dd>" << html_escape(f.message) << "</dd>";
      if (!f.worst.empty()) o << "<dt>worst</dt><dd class=\"mono\">" << html_escape(f.worst) << "</dd>";
      o << "<dt>case</dt><dd class=\"mono\">" << html_escape(f.case_id);
      if (f.case_index >= 0) o << " (case " << f.case_index << " of the stream)";  // < 0: a case folder
      o << "</dd>";
      if (!f.saved_case.empty()) o << "<dt>saved</dt><dd class=\"mono\">" << html_escape(f.saved_case) << "</dd>";
      if (const std::string cmd = repro_command(c, f); !cmd.empty())
        o << "<dt>repro</dt><dd class=\"mono\">" << html_escape(cmd) << "</dd>";
      o << "<dt>case line</dt><dd class=\"mono\">" << html_escape(f.reproduce) << "</dd>";
    }
    o << "</dl><pre class=\"cmd\">" << html_escape(reproduce_command(c, r)) << "</pre></div>";
  }
  o << "</section>\n";
}

// The cases the kernel declined (supports()), per result with each distinct reason and its
// count, and the claimed features the declines covered: counted and listed, not findings.
void declines(std::ostringstream& o, const Certificate& c, const Summary& s) {
  if (s.cases_declined == 0 && s.not_supported == 0) return;
  o << "<section id=\"declined\"><h2>Declined<small>" << s.cases_declined
    << " cases the kernel said it does not compute: NOT SUPPORTED, not findings, never passes</small></h2><table class=\"worst\">"
       "<thead><tr><th>req</th><th>dtype</th><th>verdict</th><th>declined</th><th>why (count)</th></tr></thead><tbody>";
  for (const RequirementResult& r : c.report.results) {
    if (r.cases_not_supported == 0 && r.verdict != Verdict::not_supported) continue;
    const std::vector<std::pair<std::string, int>> why = decline_reasons(r);
    std::string reasons;
    for (std::size_t i = 0; i < why.size() && i < 3; ++i) append(reasons, why[i].first + " (" + std::to_string(why[i].second) + ")", "; ");
    if (why.size() > 3) append(reasons, "and " + std::to_string(why.size() - 3) + " other reasons (the JSON lists every declined case)", "; ");
    if (r.verdict == Verdict::not_supported && why.empty()) reasons = r.note;
    o << "<tr><td>" << html_escape(r.id) << "</td><td>" << dt(r.dtype) << "</td><td>" << conformance::verdict_name(r.verdict)
      << "</td><td>" << r.cases_not_supported << " of " << r.cases_run << "</td><td>" << html_escape(reasons) << "</td></tr>";
  }
  o << "</tbody></table>";
  if (!c.report.declines.empty()) {
    o << "<p>By claimed feature:</p><ul>";
    for (const conformance::FeatureDeclines& f : c.report.declines)
      o << "<li>" << html_escape(f.feature) << ": " << f.declined << " cases declined, " << f.judged << " judged"
        << (f.uncovered() ? " <strong>(claimed, but every case declined: not certified for it)</strong>" : "") << "</li>";
    o << "</ul>";
  }
  o << "</section>\n";
}

// The evidence behind each claim: how many judged cases used each claimed feature; one no case
// used is NOT EXERCISED (and not certified).
void exercised(std::ostringstream& o, const Certificate& c) {
  if (c.report.exercised.empty()) return;
  o << "<section id=\"claims-exercised\"><h2>Claims exercised<small>judged cases using each claimed feature</small></h2><p>";
  for (std::size_t i = 0; i < c.report.exercised.size(); ++i) {
    const conformance::FeatureUse& f = c.report.exercised[i];
    o << (i ? "; " : "") << html_escape(f.label) << " " << f.judged
      << (f.judged == 0 ? " <strong>NOT EXERCISED (not certified for it)</strong>" : "");
  }
  o << "</p></section>\n";
}

void histograms(std::ostringstream& o, const Certificate& c, const Summary& s) {
  static const char* const kColors[] = {"#3b6fb6", "#8e5cc4", "#2a9d8f", "#e08e2b"};
  o << "<section id=\"error\"><h2>Error against the bound<small>every output element of R1 (forward) and R2 (backward): "
       "|kernel &minus; exact| / allowed error; bars right of the dashed line would be failures</small></h2>"
       "<div class=\"charts\">";
  std::string empty;
  for (DType d : s.dtypes) {
    std::vector<detail::Series> series;
    for (const RequirementResult& r : c.report.results)
      if (r.dtype == d && r.hist.total() > 0)
        series.push_back({r.id + " " + (r.id == "R1" ? "forward" : r.id == "R2" ? "backward" : r.property),
                          kColors[series.size() % 4], &r.hist});
    if (series.empty()) {
      append(empty, dt(d), ", ");
      continue;
    }
    o << detail::histogram_svg("hist-" + dt(d), dt(d) + ": error / bound per element", series);
  }
  o << "</div>";
  if (!empty.empty()) o << "<p class=\"muted\">No per-element ratios on " << empty << " (R1 and R2 not run or not claimed).</p>";
  o << "</section>\n";
}

void worst_table(std::ostringstream& o, const Certificate& c) {
  const std::vector<Worst> ws = worst_cases(c, 10);
  if (ws.empty()) return;
  o << "<section id=\"worst\"><h2>Worst cases<small>the ten cases closest to (or over) the bound</small></h2>"
       "<table class=\"worst\"><thead><tr><th>#</th><th>error / bound</th><th>req</th><th>dtype</th>"
       "<th>case, and the command that reruns it</th></tr></thead><tbody>";
  int rank = 0;
  for (const Worst& w : ws) {
    // Bar length on a log scale from 1e-6 to 10 (the histogram's range).
    const double t = w.ratio > 0 ? std::clamp((std::log10(w.ratio) + 6) / 7, 0.02, 1.0) : 0.02;
    const std::string problem = describe(w.record->problem);
    o << "<tr><td>" << ++rank << "</td><td class=\"r\"><span class=\"bar\" style=\"width:" << detail::num(60 * t)
      << "px;background:" << detail::ratio_color(w.ratio) << "\"></span>" << html_escape(worst_ratio_text(w))
      << "</td><td>" << html_escape(w.result->id) << "</td><td>" << dt(w.result->dtype) << "</td><td><div class=\"mono\">"
      << html_escape(w.record->case_id) << " <span class=\"muted\">(case " << w.record->index << ")</span>";
    // Generated case ids already spell out the problem; a kernel's own ids may not.
    if (w.record->case_id.find(problem) == std::string::npos) o << "<br>" << html_escape(problem);
    o << "</div><code class=\"cmdline\">" << html_escape(reproduce_command(c, *w.result)) << "</code></td></tr>";
  }
  o << "</tbody></table></section>\n";
}

void shapes(std::ostringstream& o, const Certificate& c, const Summary& s) {
  double max_t = 1;
  for (const RequirementResult& r : c.report.results)
    for (const CaseRecord& k : r.cases)
      max_t = std::max({max_t, static_cast<double>(k.problem.shape.Tq), static_cast<double>(k.problem.shape.Tk)});
  o << "<section id=\"shapes\"><h2>Covered shape space<small>every judged case, all requirements, binned by quarter decades of Tq and Tk (a larger mark holds more cases; hover for the count and the cell's worst case)</small></h2>"
       "<div class=\"toggle\"><button class=\"on\" data-mode=\"ratio\">color by error / bound</button>"
       "<button data-mode=\"verdict\">color by pass / fail</button></div>"
       "<div class=\"legend by-ratio\">0<span class=\"scale\"></span>1 (the bound) <span class=\"sw\" style=\"background:"
    << detail::ratio_color(1) << "\"></span> over the bound <span class=\"sw\" style=\"background:"
    << detail::ratio_color(-1) << "\"></span> no ratio (exact-match checks)</div>"
       "<div class=\"legend by-verdict\"><span class=\"sw\" style=\"background:#2e9e5b\"></span> pass "
       "<span class=\"sw\" style=\"background:#d62728\"></span> fail</div><div class=\"charts\">";
  std::string skipped;
  for (DType d : s.dtypes) {
    std::vector<detail::Point> pts;
    int n = 0;
    for (const RequirementResult& r : c.report.results) {
      if (r.dtype != d) continue;
      for (const CaseRecord& k : r.cases) {
        if (!k.judged) continue;
        ++n;
        pts.push_back({static_cast<double>(k.problem.shape.Tq), static_cast<double>(k.problem.shape.Tk), k.worst_ratio,
                       k.ok,
                       r.id + " " + (k.ok ? "pass" : "FAIL") + "  ratio " + format_ratio(k.worst_ratio) + "\n" +
                           describe(k.problem) + "\n" + k.case_id});
      }
    }
    if (n == 0) {
      append(skipped, dt(d), ", ");
      continue;
    }
    o << detail::scatter_svg("shapes-" + dt(d), dt(d) + ": " + std::to_string(n) + " cases", pts, max_t);
  }
  o << "</div>";
  if (!skipped.empty()) o << "<p class=\"muted\">No case judged on " << skipped << " (not claimed).</p>";
  o << "</section>\n";
}

void kernel(std::ostringstream& o, const Certificate& c) {
  const Capabilities& k = c.kernel.caps;
  o << "<section id=\"kernel\"><h2>Kernel<small>what it claims; requirements outside the claims are &ldquo;not claimed&rdquo;"
       "</small></h2><div class=\"chips\">";
  for (const ClaimInfo& f : kClaims) o << "<span" << (k.*f.member ? "" : " class=\"no\"") << ">" << html_escape(std::string(f.label)) << "</span>";
  o << "</div>";
  for (const auto& [d, keys] : k.withdrawn) {
    std::string list;
    for (const std::string& key : keys) list += (list.empty() ? "" : ", ") + key;
    o << "<p>Not claimed in " << dt(d) << ": " << html_escape(list) << "</p>";
  }
  if (!c.kernel.precision.empty()) {
    o << "<table style=\"margin-top:10px\"><thead><tr><th>dtype</th><th>storage</th><th>accumulator</th><th>P</th>"
         "<th>output</th><th>block</th><th>exp ulps</th><th>subnormals</th><th>precision model</th></tr></thead><tbody>";
    for (const auto& [d, m] : c.kernel.precision)
      o << "<tr><td><b>" << dt(d) << "</b></td><td>" << dt(m.storage) << "</td><td>" << dt(m.accum) << "</td><td>"
        << dt(m.p_dtype) << "</td><td>" << dt(m.out) << "</td><td>" << m.block << "</td><td>" << detail::num(m.exp_ulps)
        << "</td><td>" << (m.flush_subnormals ? "flushed (FTZ+DAZ)" : "gradual")
        << "</td><td class=\"mono\">" << html_escape(describe(m)) << "</td></tr>";
    o << "</tbody></table>";
  }
  if (!c.kernel.notes.empty()) {
    o << "<ul class=\"notes\">";
    for (const std::string& n : c.kernel.notes) o << "<li>" << html_escape(n) << "</li>";
    o << "</ul>";
  }
  o << "</section>\n";
}

}  // namespace

std::string to_html(const Certificate& c) {
  const Summary s = summarize(c);
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
       "<title>"
    << html_escape((s.certified ? "CERTIFIED " : "NOT CERTIFIED ") + c.kernel.name + " - attnv certificate")
    << "</title><style>" << detail::kPageCss << "</style></head>\n<body data-color=\"ratio\">\n";
  header(o, c, s);
  o << "<main>\n";
  cards(o, c, s);
  findings(o, c, s);
  grid(o, c, s);
  declines(o, c, s);
  exercised(o, c);
  histograms(o, c, s);
  worst_table(o, c);
  shapes(o, c, s);
  kernel(o, c);
  o << "</main><footer>Reproduce the whole run: <pre class=\"cmd\">" << html_escape(c.command)
    << "</pre><p>attnv " << html_escape(c.attnv_version)
    << " &middot; certificate format attnv-certificate, version 1 (docs/certificate.md)</p></footer>\n"
    << "<script>" << detail::kPageScript << "</script>\n</body></html>\n";
  return o.str();
}

}  // namespace attnv::report
