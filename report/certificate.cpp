#include "report/certificate.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace attnv::report {

using conformance::CaseRecord;
using conformance::RequirementResult;
using conformance::Verdict;

Summary summarize(const Certificate& c) {
  Summary s;
  for (const RequirementResult& r : c.report.results) {
    switch (r.verdict) {
      case Verdict::pass: ++s.pass; break;
      case Verdict::fail: ++s.fail; break;
      case Verdict::not_claimed: ++s.not_claimed; break;
      case Verdict::not_exercised:
        if (!r.judged_only_with.empty()) {
          s.awaiting_evidence.push_back(r.id + "/" + std::string(dtype_name(r.dtype)));
          if (std::find(s.evidence_needed.begin(), s.evidence_needed.end(), r.judged_only_with) == s.evidence_needed.end())
            s.evidence_needed.push_back(r.judged_only_with);
          break;
        }
        ++s.not_exercised;
        s.unexercised.push_back(r.id + "/" + std::string(dtype_name(r.dtype)));
        break;
      case Verdict::note:
        ++s.notes;
        s.noted.push_back(r.id + "/" + std::string(dtype_name(r.dtype)));
        break;
      case Verdict::not_judged: ++s.not_judged; break;
      case Verdict::not_supported:
        ++s.not_supported;
        s.unsupported.push_back(r.id + "/" + std::string(dtype_name(r.dtype)));
        break;
      case Verdict::attnv_error:
        ++s.attnv_errors;
        s.unjudged.push_back(r.id + "/" + std::string(dtype_name(r.dtype)));
        break;
    }
    s.cases_declined += r.cases_not_supported;
    if (r.verdict == Verdict::fail) s.findings += static_cast<int>(r.findings.size());
    if (r.verdict == Verdict::fail) s.failed.push_back(r.id + "/" + std::string(dtype_name(r.dtype)));
    if (std::find(s.dtypes.begin(), s.dtypes.end(), r.dtype) == s.dtypes.end()) s.dtypes.push_back(r.dtype);
    if (std::find(s.ids.begin(), s.ids.end(), r.id) == s.ids.end()) s.ids.push_back(r.id);
  }
  // A FAIL without a finding should not happen, but it must still count as a finding.
  s.findings = std::max(s.findings, s.fail);
  for (const conformance::FeatureDeclines& f : c.report.declines)
    if (f.uncovered()) s.declined_features.push_back(f.feature + " (" + std::to_string(f.declined) + (f.declined == 1 ? " case)" : " cases)"));
  for (const conformance::FeatureUse& f : c.report.exercised)
    if (f.judged == 0) s.unexercised_features.push_back(f.label);
  s.certified = s.fail == 0 && s.attnv_errors == 0 && s.not_supported == 0 && s.declined_features.empty() && s.pass > 0;
  s.partial = s.ids.size() < conformance::requirements().size() || !s.awaiting_evidence.empty();
  return s;
}

namespace {

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::vector<std::string> names(const std::vector<DType>& ds) {
  std::vector<std::string> out;
  for (DType d : ds) out.emplace_back(dtype_name(d));
  return out;
}

}  // namespace

std::string verdict_line(const Certificate& c) {
  const Summary s = summarize(c);
  std::ostringstream o;
  const bool subset = s.ids.size() < conformance::requirements().size();
  const std::string run = std::string(conformance::tier_name(c.report.tier)) + " tier, seed " +
                          std::to_string(c.report.seed) + (subset ? ", partial run: " + join(s.ids, " ") : "") +
                          (conformance::kCaseDivisor > 1 ? ", sanitizer build: 1/" + std::to_string(conformance::kCaseDivisor) +
                                                               " of the tier's cases"
                                                         : "");
  // Counts are requirement x dtype results (R1 on f32 and R1 on bf16 are two), and say so.
  if (s.certified) {
    // A requirement the user could have had judged is named before anything else.
    if (!s.awaiting_evidence.empty())
      o << "CERTIFIED EXCEPT " << join(s.awaiting_evidence, ", ") << " (not judged: needs "
        << join(s.evidence_needed, "; ") << "); ";
    o << (s.awaiting_evidence.empty() ? "CERTIFIED: " : "") << s.pass << " requirement x dtype " << (s.pass == 1 ? "result passes" : "results pass")
      << " (" << s.ids.size() << " requirements on " << join(names(s.dtypes), ", ") << ")";
    if (s.not_exercised) o << ", " << s.not_exercised << " NOT EXERCISED (" << join(s.unexercised, ", ") << ")";
    if (s.notes) o << ", " << s.notes << " robustness " << (s.notes == 1 ? "note" : "notes") << " (" << join(s.noted, ", ") << ")";
    if (s.not_claimed) o << ", " << s.not_claimed << " not claimed";
    if (s.cases_declined) o << ", " << s.cases_declined << (s.cases_declined == 1 ? " case" : " cases") << " declined by the kernel (NOT SUPPORTED)";
    if (!s.unexercised_features.empty())
      o << "; claimed but NOT EXERCISED (no judged case used them, so not certified for them): " << join(s.unexercised_features, ", ");
    o << " (" << run << ")";
  } else if (s.fail > 0) {
    o << "NOT CERTIFIED: " << s.findings << (s.findings == 1 ? " finding in " : " findings in ") << join(s.failed, ", ");
    if (s.not_judged) o << "; " << s.not_judged << " not judged after a fault of the kernel";
    if (s.attnv_errors) o << "; attnv could not judge " << join(s.unjudged, ", ") << " (attnv's own error)";
    if (s.not_supported) o << "; " << s.not_supported << " NOT SUPPORTED (" << join(s.unsupported, ", ") << ")";
    if (!s.declined_features.empty()) o << "; claimed but declined in every case: " << join(s.declined_features, ", ");
    o << " (" << run << ")";
  } else if (s.attnv_errors > 0) {
    o << "NOT CERTIFIED: attnv could not judge " << join(s.unjudged, ", ")
      << " (attnv's own error, not a finding against the kernel; please report it) (" << run << ")";
  } else if (s.not_supported > 0 || !s.declined_features.empty()) {
    // The kernel claims what these need and declined it: not a finding, and not a certificate.
    o << "NOT CERTIFIED: the kernel declined what it claims:";
    if (s.not_supported) o << " " << s.not_supported << " NOT SUPPORTED (" << join(s.unsupported, ", ") << ")";
    if (!s.declined_features.empty())
      o << (s.not_supported ? ";" : "") << " claimed but declined in every case: " << join(s.declined_features, ", ");
    o << "; " << s.pass << " pass (" << run << ")";
  } else {
    o << "NOT CERTIFIED: nothing was checked (" << s.not_claimed << " not claimed, " << s.not_exercised
      << " not exercised, " << run << ")";
  }
  return o.str();
}

std::string shell_quote(const std::string& w) {
  const bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || std::string_view("-_./:=,+@%").find(ch) != std::string_view::npos;
  });
  if (plain) return w;
  std::string out = "'";
  for (char ch : w) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

std::string reproduce_command(const Certificate& c, const RequirementResult& r) {
  // The file route reruns the exported suite on the answers in the folder, with the same filters
  // and the check's own options (--second, --claims), which the whole run's command holds.
  if (c.kernel.spec.rfind("files:", 0) == 0)
    return (c.command.rfind("attnv cases check ", 0) == 0 ? c.command : "attnv cases check " + shell_quote(c.kernel.spec.substr(6))) +
           " --dtype " + std::string(dtype_name(r.dtype)) + " --only " + shell_quote(r.id);
  // A Python function certified in process (python/attnv): the call that reruns it, in Python.
  if (c.kernel.spec.rfind("python:", 0) == 0)
    return "attnv.certify(" + c.kernel.name + ", claims, suite='" + std::string(conformance::tier_name(c.report.tier)) +
           "', dtypes=['" + std::string(dtype_name(r.dtype)) + "'], seed=" + std::to_string(c.report.seed) +
           ", only=['" + r.id + "'])";
  return in_environment(c, "attnv certify --kernel " + shell_quote(c.kernel.spec) + kernel_option_args(c.kernel) +
                               " --suite " + std::string(conformance::tier_name(c.report.tier)) + " --dtype " +
                               std::string(dtype_name(r.dtype)) + " --seed " + std::to_string(c.report.seed) +
                               " --only " + shell_quote(r.id));
}

std::string in_environment(const Certificate& c, const std::string& command) {
  return c.environment.empty() ? command : c.environment + " " + command;
}

std::vector<std::pair<std::string, int>> decline_reasons(const RequirementResult& r) {
  std::vector<std::pair<std::string, int>> why;
  for (const conformance::Declined& d : r.declined) {
    auto it = std::find_if(why.begin(), why.end(), [&](const auto& w) { return w.first == d.why; });
    if (it == why.end()) why.emplace_back(d.why, 1);
    else ++it->second;
  }
  std::stable_sort(why.begin(), why.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return why;
}

std::string kind_text(const std::string& id) {
  for (int k = 0; k <= static_cast<int>(checks::FailKind::refused); ++k)
    if (checks::fail_kind_id(static_cast<checks::FailKind>(k)) == id) return std::string(checks::fail_kind_text(static_cast<checks::FailKind>(k)));
  return id;
}

std::string repro_command(const Certificate& c, const conformance::Finding& f) {
  if (f.saved_case.empty() || f.saved_case.front() == '(' || c.kernel.spec.rfind("files:", 0) == 0) return "";
  return in_environment(c, "attnv repro --kernel " + shell_quote(c.kernel.spec) + kernel_option_args(c.kernel) + " " +
                               shell_quote(f.saved_case));
}

std::string kernel_option_args(const KernelInfo& k) {
  std::string s;
  for (const auto& [key, value] : k.options) s += " --kernel-option " + shell_quote(key + "=" + value);
  return s;
}

std::string format_ratio(double r) {
  if (std::isnan(r)) return "nan";
  if (std::isinf(r)) return r > 0 ? "inf" : "-inf";
  if (r < 0) return "-";
  if (r == 0) return "0";
  // Three significant digits, or as many more as it takes for a ratio below 1 (a pass) not to
  // print as "1", the failing threshold, and one above 1 not to print as "1" either.
  char buf[32];
  const bool plain = r >= 1e-3 && r < 1e4;
  for (int digits = 3; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, plain ? "%.*g" : "%.*e", plain ? digits : digits - 1, r);
    const double shown = std::strtod(buf, nullptr);
    if ((r < 1) == (shown < 1) && (r > 1) == (shown > 1)) break;
  }
  return buf;
}

namespace {

const CaseRecord* record_of(const RequirementResult& r, const std::string& case_id) {
  for (const CaseRecord& k : r.cases)
    if (k.case_id == case_id) return &k;
  return nullptr;
}

}  // namespace

const conformance::RequirementResult* find_result(const Certificate& c, const std::string& id, DType d) {
  for (const conformance::RequirementResult& r : c.report.results)
    if (r.id == id && r.dtype == d) return &r;
  return nullptr;
}

std::optional<Worst> worst_for(const Certificate& c, DType d) {
  std::optional<Worst> best;
  for (const RequirementResult& r : c.report.results) {
    // A robustness NOTE is shown in its own section, a NOT JUDGED result's fault under its owner:
    // the headline is the judged, claimed requirements'.
    if (r.dtype != d || !(r.worst_ratio >= 0) || r.verdict == Verdict::note || r.verdict == Verdict::not_judged) continue;
    if (!best || r.worst_ratio > best->ratio) best = Worst{r.worst_ratio, &r, record_of(r, r.worst_case)};
  }
  return best;
}

std::string worst_ratio_text(const Worst& w) {
  return std::isinf(w.ratio) && w.ratio > 0 ? "no ratio" : format_ratio(w.ratio);
}

std::string worst_failure_kind(const Worst& w) {
  if (!(std::isinf(w.ratio) && w.ratio > 0)) return "";
  const std::string& case_id = w.record ? w.record->case_id : w.result->worst_case;
  for (const conformance::Finding& f : w.result->findings)
    if (f.case_id == case_id) return kind_text(f.kind);
  return "failed";
}

std::vector<Worst> worst_cases(const Certificate& c, std::size_t n) {
  std::vector<Worst> all;
  for (const RequirementResult& r : c.report.results)
    for (const CaseRecord& k : r.cases)
      if (k.judged && k.worst_ratio >= 0) all.push_back({k.worst_ratio, &r, &k});
  // stable: equal ratios keep report order, so the list is the same on every run.
  std::stable_sort(all.begin(), all.end(), [](const Worst& a, const Worst& b) { return a.ratio > b.ratio; });
  if (all.size() > n) all.resize(n);
  return all;
}

std::string statement_of(const std::string& id) {
  for (const conformance::Requirement& q : conformance::requirements())
    if (q.id == id) return q.statement;
  return "";
}

}  // namespace attnv::report
