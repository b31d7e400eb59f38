#include "report/json_report.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "problem/features/registry.h"

namespace attnv::report {

using conformance::CaseRecord;
using conformance::RequirementResult;
using Json = nlohmann::ordered_json;  // keys in the order written: the document reads top-down

namespace {

Json real(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}

// -1 is how the conformance report says "this check measures no ratio".
Json ratio(double x) { return !std::isnan(x) && x < 0 ? Json(nullptr) : real(x); }

std::string dtype_text(DType d) { return std::string(dtype_name(d)); }

Json capabilities(const Capabilities& c) {
  Json dtypes = Json::array();
  for (DType d : c.dtypes) dtypes.push_back(dtype_text(d));
  Json j{{"dtypes", dtypes}};
  for (const ClaimInfo& f : kClaims) j[std::string(f.key)] = c.*f.member;
  Json withdrawn = Json::object();
  for (const auto& [d, keys] : c.withdrawn) withdrawn[dtype_text(d)] = keys;
  j["withdrawn"] = withdrawn;
  return j;
}

Json kernel(const KernelInfo& k) {
  Json precision = Json::array();
  for (const auto& [d, m] : k.precision)
    precision.push_back(Json{{"dtype", dtype_text(d)},
                             {"storage", dtype_text(m.storage)},
                             {"accum", dtype_text(m.accum)},
                             {"p_dtype", dtype_text(m.p_dtype)},
                             {"out", dtype_text(m.out)},
                             {"block", m.block},
                             {"exp_ulps", real(m.exp_ulps)},
                             {"dot", dtype_text(m.dot_dtype())},
                             {"score", dtype_text(m.score_dtype())},
                             {"softmax", dtype_text(m.softmax_dtype())},
                             {"pv", dtype_text(m.pv_dtype())},
                             {"flush_subnormals", m.flush_subnormals},
                             {"description", describe(m)}});
  return Json{{"spec", k.spec},
              {"name", k.name},
              {"version", k.version},
              {"capabilities", capabilities(k.caps)},
              {"precision", precision},
              {"notes", k.notes},
              {"sha256", k.sha256},
              {"abi_version", k.abi_version},
              {"configuration", k.configuration}};
}

Json histogram(const bound::RatioHistogram& h) {
  if (h.total() == 0) return nullptr;
  Json lower = Json::array(), upper = Json::array(), count = Json::array();
  for (int i = 0; i < bound::RatioHistogram::kBins; ++i) {
    lower.push_back(real(bound::RatioHistogram::lower_edge(i)));
    upper.push_back(real(bound::RatioHistogram::upper_edge(i)));
    count.push_back(h.count[static_cast<std::size_t>(i)]);
  }
  return Json{{"lower", lower}, {"upper", upper}, {"count", count}, {"total", h.total()}};
}

// Allowance / |exact| of the judged elements (docs/certificate.md, "Tightness"); null when the
// requirement compares no element against an allowance.
Json tightness(const bound::TightnessHistogram& h) {
  if (h.total() == 0) return nullptr;
  return Json{{"elements", h.total()},
              {"median_at_most", real(h.median_at_most())},
              {"max", real(h.max)},
              {"at_least_own_size", h.at_least_own_size()}};
}

// Column arrays rather than one object per case: a third of the size, and what plotting tools
// (pandas.DataFrame, d3) take directly.
Json cases(const std::vector<CaseRecord>& cs) {
  Json index = Json::array(), id = Json::array(), B = Json::array(), Hq = Json::array(), Hkv = Json::array(),
       Tq = Json::array(), Tk = Json::array(), Dk = Json::array(), Dv = Json::array(), r = Json::array(),
       ok = Json::array(), judged = Json::array(), declined = Json::array();
  for (const CaseRecord& k : cs) {
    index.push_back(k.index);
    id.push_back(k.case_id);
    B.push_back(k.problem.shape.B);
    Hq.push_back(k.problem.shape.Hq);
    Hkv.push_back(k.problem.shape.Hkv);
    Tq.push_back(k.problem.shape.Tq);
    Tk.push_back(k.problem.shape.Tk);
    Dk.push_back(k.problem.shape.Dk);
    Dv.push_back(k.problem.shape.Dv);
    r.push_back(ratio(k.worst_ratio));
    ok.push_back(k.ok);
    judged.push_back(k.judged);
    declined.push_back(k.declined);
  }
  return Json{{"index", index}, {"case_id", id}, {"B", B},   {"Hq", Hq},       {"Hkv", Hkv},      {"Tq", Tq},
              {"Tk", Tk},       {"Dk", Dk},      {"Dv", Dv}, {"ratio", r},     {"ok", ok},        {"judged", judged},
              {"declined", declined}};
}

Json result(const Certificate& c, const RequirementResult& r) {
  Json findings = Json::array();
  for (const conformance::Finding& f : r.findings)
    findings.push_back(Json{{"case_index", f.case_index},
                            {"case_id", f.case_id},
                            {"message", f.message},
                            {"worst", f.worst},
                            {"reproduce", f.reproduce},
                            {"saved_case", f.saved_case},
                            {"repro_command", repro_command(c, f)},
                            {"kind", f.kind},
                            {"recurred", f.recurred ? Json(*f.recurred) : Json(nullptr)}});
  Json declined = Json::array();
  for (const conformance::Declined& d : r.declined)
    declined.push_back(Json{{"case_index", d.case_index}, {"case_id", d.case_id}, {"why", d.why}});
  return Json{{"id", r.id},
              {"property", r.property},
              {"statement", statement_of(r.id)},
              {"dtype", dtype_text(r.dtype)},
              {"verdict", std::string(conformance::verdict_name(r.verdict))},
              {"cases_run", r.cases_run},
              {"cases_checked", r.cases_checked},
              {"cases_not_exercised", r.cases_not_exercised},
              {"cases_not_supported", r.cases_not_supported},
              {"exercised", r.exercised},
              {"exercised_unit", r.exercised_unit},
              {"min_exercised", r.min_exercised},
              {"uninformative", r.uninformative},
              {"tightness", tightness(r.tightness)},
              {"cases_failed", r.cases_failed},
              {"failure_pattern", r.failure_pattern},
              {"worst_ratio", ratio(r.worst_ratio)},
              {"worst_case", r.worst_case},
              {"note", r.note},
              {"reproduce_command", reproduce_command(c, r)},
              {"findings", findings},
              {"declined", declined},
              {"histogram", histogram(r.hist)},
              {"cases", cases(r.cases)}};
}

// Pretty-printed like dump(2), except that an array of scalars stays on one line: a case column
// of 15,000 numbers is one line, not 15,000, and the document still diffs well.
void write(std::string& out, const Json& j, int depth) {
  const auto scalar = [](const Json& x) { return !x.is_structured(); };
  const std::string pad(static_cast<std::size_t>(2 * (depth + 1)), ' ');
  const std::string close(static_cast<std::size_t>(2 * depth), ' ');
  if (j.is_object() && !j.empty()) {
    out += "{\n";
    bool first = true;
    for (const auto& [key, value] : j.items()) {
      if (!first) out += ",\n";
      first = false;
      out += pad + Json(key).dump(-1, ' ', false, Json::error_handler_t::replace) + ": ";
      write(out, value, depth + 1);
    }
    out += "\n" + close + "}";
  } else if (j.is_array() && !j.empty() && !std::all_of(j.begin(), j.end(), scalar)) {
    out += "[\n";
    for (std::size_t i = 0; i < j.size(); ++i) {
      if (i) out += ",\n";
      out += pad;
      write(out, j[i], depth + 1);
    }
    out += "\n" + close + "]";
  } else {
    // Replace, not throw, on invalid UTF-8 in a message: a certificate must always be written.
    out += j.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

}  // namespace

std::string to_json(const Certificate& c) {
  const Summary s = summarize(c);
  Json failed = s.failed;
  Json worst = Json::array();
  for (DType d : s.dtypes)
    if (const std::optional<Worst> w = worst_for(c, d))
      worst.push_back(Json{{"dtype", dtype_text(d)}, {"ratio", real(w->ratio)}, {"requirement", w->result->id},
                           {"case_id", w->result->worst_case}});
  Json results = Json::array();
  for (const RequirementResult& r : c.report.results) results.push_back(result(c, r));
  Json options = Json::array();
  for (const auto& [key, value] : c.kernel.options) options.push_back(Json{{"key", key}, {"value", value}});
  Json declines = Json::array();
  for (const conformance::FeatureDeclines& f : c.report.declines)
    declines.push_back(Json{{"feature", f.feature}, {"declined", f.declined}, {"judged", f.judged}, {"uncovered", f.uncovered()}});
  Json exercised = Json::array();
  for (const conformance::FeatureUse& f : c.report.exercised)
    exercised.push_back(Json{{"claim", f.claim}, {"label", f.label}, {"judged", f.judged}});
  const Json doc{{"format", "attnv-certificate"},
                 {"version", 1},
                 {"attnv_version", c.attnv_version},
                 {"command", c.command},
                 {"environment", c.environment},
                 {"provenance", Json{{"attnv_commit", c.provenance.attnv_commit},
                                     {"compiler", c.provenance.compiler},
                                     {"cpu", c.provenance.cpu},
                                     {"isa", c.provenance.isa},
                                     {"kernel_options", options}}},
                 {"kernel", kernel(c.kernel)},
                 {"tier", std::string(conformance::tier_name(c.report.tier))},
                 {"case_divisor", conformance::kCaseDivisor},
                 {"seed", c.report.seed},
                 {"verdict", Json{{"certified", s.certified},
                                  {"line", verdict_line(c)},
                                  {"pass", s.pass},
                                  {"fail", s.fail},
                                  {"not_claimed", s.not_claimed},
                                  {"not_exercised", s.not_exercised},
                                  {"not_supported", s.not_supported},
                                  {"cases_declined", s.cases_declined},
                                  {"notes", s.notes},
                                  {"attnv_errors", s.attnv_errors},
                                  {"findings", s.findings},
                                  {"failed", failed},
                                  {"not_exercised_results", s.unexercised},
                                  {"note_results", s.noted},
                                  {"attnv_error_results", s.unjudged},
                                  {"not_supported_results", s.unsupported},
                                  {"declined_features", s.declined_features},
                                  {"unexercised_features", s.unexercised_features},
                                  {"awaiting_evidence_results", s.awaiting_evidence},
                                  {"evidence_needed", s.evidence_needed},
                                  {"partial", s.partial}}},
                 {"declines", declines},
                 {"claims_exercised", exercised},
                 {"worst", worst},
                 {"results", results}};
  std::string out;
  write(out, doc, 0);
  return out + "\n";
}

}  // namespace attnv::report
