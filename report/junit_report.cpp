#include "report/junit_report.h"

#include <cstdio>
#include <sstream>

namespace attnv::report {

using conformance::RequirementResult;
using conformance::Verdict;

namespace {

// Length of the well-formed UTF-8 sequence starting at s[i], 0 if there is none (a kernel's
// name or message may hold any bytes; one stray byte would make the whole document unreadable).
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (n == 0 || i + n > s.size() || (n == 2 && c < 0xc2)) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xc0) != 0x80) return 0;
  if (n == 3 && ((c == 0xe0 && b(i + 1) < 0xa0) || (c == 0xed && b(i + 1) >= 0xa0))) return 0;  // overlong, surrogate
  if (n == 4 && ((c == 0xf0 && b(i + 1) < 0x90) || c > 0xf4 || (c == 0xf4 && b(i + 1) >= 0x90))) return 0;
  return n;
}

}  // namespace

std::string xml_escape(const std::string& s, bool attribute) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_length(s, i);
    if (n == 0) {
      out += '?';
      ++i;
      continue;
    }
    if (n > 1) {
      out.append(s, i, n);
      i += n;
      continue;
    }
    const char ch = s[i++];
    const auto u = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      // An attribute value turns raw newlines and tabs into spaces; element text keeps them.
      case '\n': out += attribute ? "&#10;" : "\n"; break;
      case '\t': out += attribute ? "&#9;" : "\t"; break;
      case '\r': out += "&#13;"; break;
      default: out += u < 0x20 || u == 0x7f ? '?' : ch;  // not allowed in XML 1.0 at all
    }
  }
  return out;
}

namespace {

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s >= 0 ? s : 0.0);
  return buf;
}

std::string failure_text(const Certificate& c, const RequirementResult& r) {
  std::ostringstream o;
  o << r.id << " " << r.property << " (" << dtype_name(r.dtype) << "): " << statement_of(r.id) << "\n";
  for (const conformance::Finding& f : r.findings) {
    o << "finding: " << f.message << "\n";
    if (!f.worst.empty()) o << "worst: " << f.worst << "\n";
    o << "case: " << f.case_id << "\n";
    if (!f.saved_case.empty()) o << "saved: " << f.saved_case << "\n";
    if (const std::string cmd = repro_command(c, f); !cmd.empty()) o << "repro: " << cmd << "\n";
    o << "case line: " << f.reproduce << "\n";
  }
  o << "reproduce: " << reproduce_command(c, r) << "\n";
  return o.str();
}

}  // namespace

std::string to_junit(const Certificate& c) {
  const Summary s = summarize(c);
  std::ostringstream o;
  double total_seconds = 0;
  for (const RequirementResult& r : c.report.results) total_seconds += r.seconds;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o << "<testsuites name=\"" << xml_escape("attnv certify " + c.kernel.spec) << "\" tests=\""
    << c.report.results.size() << "\" failures=\"" << s.fail << "\" errors=\"" << s.attnv_errors << "\" skipped=\"" << s.not_claimed + s.not_exercised + s.notes + s.not_judged + s.not_supported
    << "\" time=\"" << seconds(total_seconds) << "\">\n";
  for (DType d : s.dtypes) {
    int tests = 0, failures = 0, errors = 0, skipped = 0;
    double time = 0;
    for (const RequirementResult& r : c.report.results) {
      if (r.dtype != d) continue;
      ++tests;
      failures += r.verdict == Verdict::fail;
      errors += r.verdict == Verdict::attnv_error;
      skipped += r.verdict == Verdict::not_claimed || r.verdict == Verdict::not_exercised || r.verdict == Verdict::note ||
                 r.verdict == Verdict::not_judged || r.verdict == Verdict::not_supported;
      time += r.seconds;
    }
    const std::string suite = "attnv." + c.kernel.name + "." + std::string(dtype_name(d));
    o << "  <testsuite name=\"" << xml_escape(suite) << "\" tests=\"" << tests << "\" failures=\"" << failures
      << "\" errors=\"" << errors << "\" skipped=\"" << skipped << "\" time=\"" << seconds(time) << "\">\n";
    o << "    <properties>\n";
    o << "      <property name=\"kernel\" value=\"" << xml_escape(c.kernel.spec) << "\"/>\n";
    o << "      <property name=\"tier\" value=\"" << conformance::tier_name(c.report.tier) << "\"/>\n";
    o << "      <property name=\"seed\" value=\"" << c.report.seed << "\"/>\n";
    o << "      <property name=\"attnv_version\" value=\"" << xml_escape(c.attnv_version) << "\"/>\n";
    for (const auto& [key, value] : c.kernel.options)
      o << "      <property name=\"kernel_option\" value=\"" << xml_escape(key + "=" + value) << "\"/>\n";
    o << "    </properties>\n";
    for (const RequirementResult& r : c.report.results) {
      if (r.dtype != d) continue;
      o << "    <testcase name=\"" << xml_escape(r.id + " " + r.property) << "\" classname=\"" << xml_escape(suite)
        << "\" time=\"" << seconds(r.seconds) << "\"";
      if (r.verdict == Verdict::pass && r.cases_not_supported == 0) {
        o << "/>\n";
        continue;
      }
      if (r.verdict == Verdict::pass) {
        // A pass with declined cases says how many, where CI shows it (the output of the test).
        o << ">\n      <system-out>" << xml_escape(r.note, false) << "</system-out>\n    </testcase>\n";
        continue;
      }
      o << ">\n";
      if (r.verdict == Verdict::attnv_error) {
        // JUnit's <error>: the harness failed, not the code under test.
        o << "      <error message=\"" << xml_escape(r.note) << "\" type=\"attnv\"/>\n";
      } else if (r.verdict == Verdict::fail) {
        const std::string message = r.findings.empty() ? "FAIL" : r.findings.front().message;
        o << "      <failure message=\"" << xml_escape(message) << "\" type=\"" << xml_escape(r.id) << "\">"
          << xml_escape(failure_text(c, r), false) << "</failure>\n";
      } else {
        // NOT EXERCISED and NOTE are skips too (CI shows them apart from passes), with their reason;
        // a NOTE keeps its findings' text.
        const std::string why = r.verdict == Verdict::not_exercised ? "NOT EXERCISED: " + r.note
                                : r.verdict == Verdict::not_supported ? "NOT SUPPORTED: " + r.note
                                : r.verdict == Verdict::note        ? "NOTE: " + r.note
                                                                    : (r.note.empty() ? "not claimed" : r.note);
        o << "      <skipped message=\"" << xml_escape(why) << "\"";
        if (r.verdict == Verdict::note)
          o << ">" << xml_escape(failure_text(c, r), false) << "</skipped>\n";
        else
          o << "/>\n";
      }
      o << "    </testcase>\n";
    }
    o << "  </testsuite>\n";
  }
  o << "</testsuites>\n";
  return o.str();
}

}  // namespace attnv::report
