#include "report/terminal_report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace attnv::report {

using conformance::RequirementResult;
using conformance::Verdict;

namespace {

constexpr std::size_t kWidth = 100;
constexpr std::size_t kCell = 14;  // one dtype column: "NOT EXERCISED" and a space

struct Paint {
  bool on;
  std::string operator()(const std::string& s, const char* code) const {
    return on ? "\x1b[" + std::string(code) + "m" + s + "\x1b[0m" : s;
  }
};

// Continuation lines of a multi-line message line up under its first line.
std::string indent(const std::string& s, std::size_t n) {
  std::string out;
  for (char ch : s) {
    out += ch;
    if (ch == '\n') out += std::string(n, ' ');
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\n')) out.pop_back();
  return out;
}

std::string rtrim(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::string pad(std::string s, std::size_t w) {
  if (s.size() > w) s = s.substr(0, w > 3 ? w - 3 : 0) + "...";
  s.resize(w, ' ');
  return s;
}

// The cell is padded before it is colored so escape codes do not break the columns.
std::string cell(const RequirementResult* r, const Paint& paint) {
  if (!r) return pad("-", kCell);
  const std::string text = pad(std::string(conformance::verdict_name(r->verdict)), kCell);
  switch (r->verdict) {
    case Verdict::pass: return paint(text, "32");
    case Verdict::fail: return paint(text, "1;31");
    case Verdict::not_claimed: return paint(text, "2");
    case Verdict::not_judged: return paint(text, "2");
    case Verdict::not_exercised: return paint(text, "33");  // yellow: neither a pass nor a failure
    case Verdict::note: return paint(text, "36");           // cyan: reported, not claimed
    case Verdict::attnv_error: return paint(text, "1;35");  // magenta: attnv's fault, not the kernel's
    case Verdict::not_supported: return paint(text, "1;33");  // bold yellow: the kernel declined, not certified
  }
  return text;
}

void table(std::ostringstream& o, const Certificate& c, const Summary& s, const Paint& paint) {
  const std::size_t used = 5 + kCell * s.dtypes.size();
  const std::size_t stmt = used + 20 < kWidth ? kWidth - used : 20;  // wider than 100 only past 6 dtypes
  std::string head = pad("req", 5) + pad("requirement", stmt);
  for (DType d : s.dtypes) head += pad(std::string(dtype_name(d)), kCell);
  o << paint(rtrim(head), "1") << "\n";
  for (const std::string& id : s.ids) {
    std::string line = pad(id, 5) + pad(statement_of(id), stmt - 1) + " ";  // a cut statement keeps a gap
    for (DType d : s.dtypes) line += cell(find_result(c, id, d), paint);
    o << rtrim(line) << "\n";
  }
}

// FAILs, then the robustness NOTEs (the same detail: they are real findings the kernel does not
// claim to avoid).
void findings(std::ostringstream& o, const Certificate& c, const Paint& paint) {
  for (const Verdict shown : {Verdict::fail, Verdict::note})
  for (const RequirementResult& r : c.report.results) {
    if (r.verdict != shown) continue;
    if (shown == Verdict::fail)
      o << "\n" << paint("FAIL", "1;31") << " " << r.id << " " << r.property << " on " << dtype_name(r.dtype) << ": "
        << statement_of(r.id) << "\n";
    else
      o << "\n" << paint("NOTE", "36") << " " << r.id << " " << r.property << " on " << dtype_name(r.dtype) << ": "
        << statement_of(r.id) << "\n  " << r.note << "\n";
    if (r.cases_failed > 0)
      o << "  failed:    " << r.cases_failed << " of " << r.cases_run << " cases (" << r.failure_pattern << ")\n";
    for (const conformance::Finding& f : r.findings) {
      if (!f.kind.empty()) o << "  kind:      " << kind_text(f.kind) << "\n";
      o << "  finding:   " << indent(f.message, 13) << "\n";
      if (!f.worst.empty()) o << "  worst:     " << indent(f.worst, 13) << "\n";
      // A negative index: a case folder of the file route, not a case of the stream (R13, R14).
      o << "  case:      " << f.case_id;
      if (f.case_index >= 0) o << " (case " << f.case_index << " of the stream)";
      o << "\n";
      if (!f.saved_case.empty()) o << "  saved:     " << f.saved_case << "\n";
      if (const std::string cmd = repro_command(c, f); !cmd.empty()) o << "  repro:     " << cmd << "\n";
      o << "  case line: " << f.reproduce << "\n";
    }
    if (r.findings.empty()) o << "  (no finding recorded)\n";
    o << "  reproduce: " << paint(reproduce_command(c, r), "1") << "\n";
  }
}

// The cases the kernel declined (supports()): the NOT SUPPORTED results, every other result
// with declined cases and its reasons (each distinct reason once, with its count), and the
// claimed features the declines covered.
void declines(std::ostringstream& o, const Certificate& c, const Paint& paint) {
  bool header = false;
  for (const RequirementResult& r : c.report.results) {
    if (r.cases_not_supported == 0 && r.verdict != Verdict::not_supported) continue;
    if (!header)
      o << "\n" << paint("DECLINED", "1;33") << " (the kernel said it does not compute these cases: NOT SUPPORTED, not findings, never passes):\n";
    header = true;
    o << "  " << r.id << " " << r.property << " on " << dtype_name(r.dtype) << ": " << conformance::verdict_name(r.verdict) << ", "
      << r.cases_not_supported << " of " << r.cases_run << " cases declined\n";
    const std::vector<std::pair<std::string, int>> why = decline_reasons(r);
    for (std::size_t i = 0; i < why.size() && i < 3; ++i) o << "    " << why[i].second << " x " << why[i].first << "\n";
    if (why.size() > 3) o << "    (and " << why.size() - 3 << " other reasons: the JSON lists every declined case)\n";
    if (r.verdict == Verdict::not_supported && !r.note.empty()) o << "    " << r.note << "\n";
  }
  for (const conformance::FeatureDeclines& f : c.report.declines) {
    o << "  " << f.feature << ": " << f.declined << " cases declined, " << f.judged << " judged";
    if (f.uncovered()) o << " " << paint("(claimed, but every case declined: not certified for " + f.feature + ")", "1;33");
    o << "\n";
  }
}

// The evidence behind each claim, wrapped at about 100 columns.
void exercised(std::ostringstream& o, const Certificate& c, const Paint& paint) {
  if (c.report.exercised.empty()) return;
  o << "\nclaims exercised (judged cases using each):\n ";
  std::size_t column = 1;
  for (const conformance::FeatureUse& f : c.report.exercised) {
    const std::string item = " " + f.label + " " + std::to_string(f.judged) + (f.judged == 0 ? " NOT EXERCISED" : "") + ";";
    if (column + item.size() > 100) {
      o << "\n ";
      column = 1;
    }
    o << (f.judged == 0 ? paint(item, "33") : item);
    column += item.size();
  }
  o << "\n";
}

// How wide the allowances of the judged elements were, per requirement and dtype, and how many
// of them were uninformative (docs/certificate.md, "Tightness").
void tightness(std::ostringstream& o, const Certificate& c) {
  bool header = false;
  for (const RequirementResult& r : c.report.results) {
    if (r.uninformative == 0 && r.tightness.total() == 0) continue;
    if (!header)
      o << "\ntightness (allowance / |exact| of the judged elements; uninformative: allowance covering the visible "
           "values' range, not evidence):\n";
    header = true;
    o << "  " << r.id << "/" << dtype_name(r.dtype) << ":";
    if (r.tightness.total() > 0) {
      char line[192];
      std::snprintf(line, sizeof line, " median <= %.2g, max %.2g over %lld elements (%lld allowed at least |exact|)",
                    r.tightness.median_at_most(), r.tightness.max, static_cast<long long>(r.tightness.total()),
                    static_cast<long long>(r.tightness.at_least_own_size()));
      o << line << (r.uninformative > 0 ? ";" : "");
    }
    if (r.uninformative > 0) {
      const double judged = static_cast<double>(r.exercised + r.uninformative);
      char share[32];
      std::snprintf(share, sizeof share, "%.1f%%", 100.0 * static_cast<double>(r.uninformative) / judged);
      o << " " << r.uninformative << " of " << r.exercised + r.uninformative << " " << r.exercised_unit << " uninformative ("
        << share << ")";
    }
    o << "\n";
  }
}

}  // namespace

std::string terminal_summary(const Certificate& c, bool color) {
  const Paint paint{color};
  const Summary s = summarize(c);
  std::ostringstream o;
  o << paint("attnv " + c.attnv_version + " certificate", "1") << ": " << c.kernel.name;
  if (!c.kernel.version.empty()) o << " " << c.kernel.version;
  o << " (" << c.kernel.spec << ")\n";
  if (!c.kernel.sha256.empty()) o << "  sha256    " << c.kernel.sha256 << (c.kernel.abi_version ? " (plugin ABI version " + std::to_string(c.kernel.abi_version) + ")" : "") << "\n";
  if (!c.kernel.configuration.empty()) o << "  configuration  " << c.kernel.configuration << "\n";
  if (!c.kernel.options.empty()) {
    o << "  options  ";
    for (const auto& [key, value] : c.kernel.options) o << " " << key << "=" << value;
    o << "\n";
  }
  if (!c.provenance.attnv_commit.empty())
    o << "  certified by attnv " << c.attnv_version << " (commit " << c.provenance.attnv_commit.substr(0, 12) << ", "
      << c.provenance.compiler << ") on " << c.provenance.cpu << " (" << c.provenance.isa << " path)\n";
  for (const auto& [d, m] : c.kernel.precision) o << "  precision " << pad(std::string(dtype_name(d)), 5) << describe(m) << "\n";
  for (const std::string& n : c.kernel.notes) o << "  note: " << n << "\n";
  o << "\n";
  table(o, c, s, paint);
  findings(o, c, paint);
  bool errors = false;
  for (const RequirementResult& r : c.report.results) {
    if (r.verdict != Verdict::attnv_error && !(r.verdict == Verdict::fail && r.note.rfind("attnv error", 0) == 0)) continue;
    if (!errors) o << "\n" << paint("ATTNV ERROR", "1;35") << " (attnv could not judge; its own fault, never the kernel's):\n";
    errors = true;
    o << "  " << r.id << " " << r.property << " on " << dtype_name(r.dtype) << ": " << r.note << "\n";
  }
  bool unjudged = false;
  for (const RequirementResult& r : c.report.results) {
    if (r.verdict != Verdict::not_judged) continue;
    if (!unjudged) o << "\nNOT JUDGED (a fault of the kernel, reported once, stopped them):\n";
    unjudged = true;
    o << "  " << r.id << " " << r.property << " on " << dtype_name(r.dtype) << ": " << r.note << "\n";
  }
  bool header = false;
  for (const RequirementResult& r : c.report.results) {
    if (r.verdict != Verdict::not_exercised) continue;
    if (!header) o << "\n" << paint("NOT EXERCISED", "33") << " (claimed, but no case gave the check anything to judge):\n";
    header = true;
    o << "  " << r.id << " " << r.property << " on " << dtype_name(r.dtype) << ": " << r.note << "\n";
  }
  declines(o, c, paint);
  exercised(o, c, paint);
  tightness(o, c);
  o << "\nworst error/bound ratio (1 = the bound)\n";
  bool any = false;
  for (DType d : s.dtypes) {
    const std::optional<Worst> w = worst_for(c, d);
    if (!w) continue;
    any = true;
    const std::string kind = worst_failure_kind(*w);
    o << "  " << pad(std::string(dtype_name(d)), 5) << pad(worst_ratio_text(*w), 10) << w->result->id << "  "
      << w->result->worst_case << (kind.empty() ? "" : "  (failed: " + kind + ")") << "\n";
  }
  if (!any) o << "  (no requirement measured a ratio)\n";
  o << "\n" << paint(verdict_line(c), s.certified ? "1;32" : "1;31") << "\n";
  o << "rerun: " << c.command << "\n";
  return o.str();
}

}  // namespace attnv::report
