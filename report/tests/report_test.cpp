// The four renderings of a certificate built from real conformance runs: the naive kernel with
// narrowed claims (PASS and "not claimed") and the causal_off_by_one mutant (FAIL). Every check
// is also shown to catch a planted defect (a broken document, a hostile string).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include <sys/wait.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "problem/features/registry.h"
#include "io/manifest.h"
#include "io/manifest_schema.h"
#include "report/certificate_schema.h"
#include "report/html_charts.h"
#include "report/html_report.h"
#include "report/json_report.h"
#include "report/junit_report.h"
#include "report/terminal_report.h"
#include "report/tests/sample_certificate.h"

namespace attnv::report {
namespace {

constexpr std::uint64_t kSeedA = 20261121, kSeedB = 7;

// Each run costs a second or two: run each once per binary.
const Certificate& cert(const std::string& which) {
  static std::map<std::string, Certificate> cache;
  auto it = cache.find(which);
  if (it != cache.end()) return it->second;
  Certificate c = which == "naive"      ? testing::naive_certificate(kSeedA)
                  : which == "mutant"   ? testing::mutant_certificate(kSeedA)
                  : which == "mutant2"  ? testing::mutant_certificate(kSeedA)
                  : which == "leaky"    ? testing::leaky_certificate(kSeedA)
                  : which == "declining" ? testing::declining_certificate(kSeedA)
                                        : testing::mutant_certificate(kSeedB);
  return cache.emplace(which, std::move(c)).first->second;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::filesystem::path temp_file(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() / ("attnv_report_test_" + name);
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

struct Proc {
  int status;
  std::string out;
};

Proc run_command(const std::string& command) {
  Proc r{-1, ""};
  FILE* f = popen((command + " 2>&1").c_str(), "r");
  if (!f) return r;
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = fread(buf.data(), 1, buf.size(), f)) > 0;) r.out.append(buf.data(), n);
  const int st = pclose(f);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

conformance::RequirementResult* find(Certificate& c, const std::string& id) {
  for (auto& r : c.report.results)
    if (r.id == id) return &r;
  return nullptr;
}

// ---- the runs themselves are what the tests below assume --------------------------------------

TEST(ReportSample, RunsGiveThePassFailAndNotClaimedTheTestsNeed) {
  const Summary n = summarize(cert("naive"));
  EXPECT_TRUE(n.certified);
  EXPECT_GT(n.pass, 0);
  EXPECT_GT(n.not_claimed, 0);  // R2, R19 and all of bf16
  const Summary m = summarize(cert("mutant"));
  EXPECT_FALSE(m.certified);
  EXPECT_NE(std::find(m.failed.begin(), m.failed.end(), "R5/f32"), m.failed.end());
}

// R6 is a robustness claim: a kernel that does not claim hidden NaN/inf stay hidden and leaks
// them is CERTIFIED with a NOTE that every rendering shows with its finding, never a pass.
TEST(ReportSample, AnUnclaimedRobustnessFailureIsANoteNotAFailure) {
  const Certificate& c = cert("leaky");
  const Summary s = summarize(c);
  EXPECT_TRUE(s.certified);
  EXPECT_EQ(s.notes, 1);
  EXPECT_EQ(s.noted, std::vector<std::string>{"R6/f32"});
  const std::string t = terminal_summary(c, false);
  std::cout << t;
  EXPECT_TRUE(contains(t, "CERTIFIED: 2 requirement x dtype results pass")) << t;
  EXPECT_TRUE(contains(t, "1 robustness note (R6/f32)")) << t;
  EXPECT_TRUE(contains(t, "NOTE R6 hidden_nonfinite on f32")) << t;
  EXPECT_TRUE(contains(t, "finding:")) << "the note keeps its finding\n" << t;
  EXPECT_FALSE(contains(t, "f32  inf")) << "the headline is the claimed requirements' worst ratio\n" << t;
  EXPECT_TRUE(contains(to_json(c), "\"verdict\": \"NOTE\"")) << to_json(c);
  EXPECT_TRUE(contains(to_junit(c), "<skipped message=\"NOTE: robustness note")) << to_junit(c);
  EXPECT_TRUE(contains(to_html(c), "robustness notes"));
}

// ---- terminal ---------------------------------------------------------------------------------

TEST(TerminalReport, CertifiedRunHasTableVerdictAndNoColorUnlessAsked) {
  const std::string plain = terminal_summary(cert("naive"), false);
  std::cout << plain;
  EXPECT_TRUE(contains(plain, "CERTIFIED: "));
  EXPECT_FALSE(contains(plain, "NOT CERTIFIED"));
  EXPECT_TRUE(contains(plain, "not claimed"));
  EXPECT_TRUE(contains(plain, "R5   hidden K, V, bias do not change any output"));
  // How much the PASSes prove: the allowances' size against the exact values, per result.
  EXPECT_TRUE(contains(plain, "\ntightness (allowance / |exact|")) << plain;
  EXPECT_TRUE(contains(plain, "  R1/f32: median <= ")) << plain;
  EXPECT_FALSE(contains(plain, "\x1b["));
  EXPECT_TRUE(contains(terminal_summary(cert("naive"), true), "\x1b[32mPASS"));
  // The table stays inside 100 columns.
  std::istringstream in(plain);
  for (std::string line; std::getline(in, line);) {
    if (line.size() > 1 && line[0] == 'R' && std::isdigit(static_cast<unsigned char>(line[1]))) {
      EXPECT_LE(line.size(), 100u) << line;
    }
  }
}

TEST(TerminalReport, FailingRunNamesTheFindingAndTheCommandThatReproducesIt) {
  const Certificate& c = cert("mutant");
  const std::string t = terminal_summary(c, false);
  std::cout << t;
  EXPECT_TRUE(contains(t, "NOT CERTIFIED: "));
  EXPECT_TRUE(contains(t, "FAIL R5 no_leakage on f32"));
  // The hostile spec is quoted for the shell so the command can be pasted as is.
  EXPECT_TRUE(contains(t, "attnv certify --kernel 'plugin:/tmp/mutant'\\''s <causal> & co.so' --suite quick --dtype f32 "
                          "--seed 20261121 --only R5"));
  for (const auto& r : c.report.results)
    for (const auto& f : r.findings) {
      EXPECT_TRUE(contains(t, f.message.substr(0, f.message.find('\n')))) << f.message;
      EXPECT_TRUE(contains(t, f.reproduce)) << f.reproduce;
    }
}

// A ratio just under 1 passes and must not print as "1" (the failing threshold); one just over
// must not either. Infinity is how a NaN or a crash ranks.
TEST(TerminalReport, RatiosNearOneKeepTheirSide) {
  EXPECT_EQ(format_ratio(0.99963), "0.9996");
  EXPECT_EQ(format_ratio(1.0004), "1.0004");
  EXPECT_EQ(format_ratio(1.0), "1");
  EXPECT_EQ(format_ratio(0.5), "0.5");
  EXPECT_EQ(format_ratio(0.123456), "0.123");
  EXPECT_EQ(format_ratio(HUGE_VAL), "inf");
}

// The mutant's R5 FAIL (a leak, found bitwise: no ratio of its own) ranks first in the headline
// as infinity: a failing requirement never reads as a ratio under the bound (a crashing plugin
// used to show 0.0091 there).
TEST(TerminalReport, AFailedRequirementRanksAsInfinityInTheHeadline) {
  const Certificate& c = cert("mutant");
  for (DType d : summarize(c).dtypes) {
    const std::optional<Worst> w = worst_for(c, d);
    ASSERT_TRUE(w);
    bool failed = false;
    for (const auto& r : c.report.results) failed = failed || (r.dtype == d && r.verdict == conformance::Verdict::fail);
    if (failed) {
      EXPECT_TRUE(std::isinf(w->ratio)) << dtype_name(d) << ": " << w->ratio;
      // ... and says so, never "inf" (no error was infinite: the check measured no ratio).
      EXPECT_EQ(worst_ratio_text(*w), "no ratio");
      EXPECT_EQ(worst_failure_kind(*w), "outside the bound");
    }
  }
  const std::string t = terminal_summary(c, false);
  const std::string headline = t.substr(t.find("worst error/bound ratio"));
  EXPECT_TRUE(contains(headline, "  f32  no ratio  R")) << headline;
  EXPECT_TRUE(contains(headline, "(failed: outside the bound)")) << headline;
  EXPECT_FALSE(contains(headline, "inf")) << headline;
  EXPECT_FALSE(contains(t, "infx the allowance")) << t;
  EXPECT_TRUE(contains(t, "allowed exactly +-0 (an exact 0 with bound 0)")) << t;
  EXPECT_FALSE(contains(conformance::describe(*find_result(c, "R5", DType::f32)), "infx"));
}

// The HTML cell of a failing requirement says how many cases failed and where, as the terminal
// does; it used to say "FAIL 200/200 cases", the judged count, and nothing of the failures.
TEST(HtmlReport, AFailingCellCountsTheFailedCasesAndTheirLayouts) {
  const Certificate& c = cert("mutant");
  const conformance::RequirementResult* r5 = find_result(c, "R5", DType::f32);
  ASSERT_TRUE(r5 && r5->cases_failed > 0 && !r5->failure_pattern.empty());
  const std::string h = to_html(c);
  const std::string cell = std::to_string(r5->cases_failed) + " of " + std::to_string(r5->cases_checked) +
                           " judged failed (" + r5->failure_pattern + ")";
  EXPECT_TRUE(contains(h, cell)) << cell;
  EXPECT_FALSE(contains(h, ">inf<")) << "the headline card says no ratio";
}

TEST(TerminalReport, ShellQuoteLeavesPlainWordsAlone) {
  EXPECT_EQ(shell_quote("builtin:core"), "builtin:core");
  EXPECT_EQ(shell_quote("plugin:/a b.so"), "'plugin:/a b.so'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
}

// ---- JSON -------------------------------------------------------------------------------------

TEST(JsonReport, SameSeedSameBytesOtherSeedOtherBytes) {
  const std::string a = to_json(cert("mutant")), again = to_json(cert("mutant2")), b = to_json(cert("mutant_b"));
  EXPECT_EQ(a, again);
  EXPECT_NE(a, b);
  EXPECT_TRUE(contains(b, "\"seed\": 7,\n"));
}

TEST(JsonReport, WallTimesAreNotPartOfTheDocument) {
  Certificate c = cert("naive");
  const std::string before = to_json(c);
  for (auto& r : c.report.results) r.seconds += 123.5;
  EXPECT_EQ(to_json(c), before);
  EXPECT_FALSE(contains(before, "seconds"));
}

// The schema's capabilities are the claim rows (certificate_schema adds them to the template), in
// the registry's order; a template naming a claim itself, or without "dtypes" to place them
// after, is refused.
TEST(JsonReport, TheSchemasCapabilitiesAreTheClaimTables) {
  const nlohmann::ordered_json schema = nlohmann::ordered_json::parse(certificate_schema());
  const nlohmann::ordered_json& caps = schema.at("$defs").at("kernel").at("properties").at("capabilities");
  std::vector<std::string> order{"dtypes"}, properties;
  for (const ClaimInfo& c : kClaims) order.emplace_back(c.key);
  order.emplace_back("withdrawn");
  for (const auto& [key, v] : caps.at("properties").items()) properties.push_back(key);
  EXPECT_EQ(properties, order);
  EXPECT_EQ(caps.at("required").get<std::vector<std::string>>(), order);
  const std::set<std::string> table(order.begin(), order.end());
  const std::string base = R"({"$defs": {"kernel": {"properties": {"capabilities": {
      "required": ["dtypes", "withdrawn"], "properties": {"dtypes": {}, "withdrawn": {}}}}}}})";
  EXPECT_NO_THROW(certificate_schema(base, kClaims));
  std::string naming_gqa = base;
  naming_gqa.replace(naming_gqa.find(R"("withdrawn": {})"), 15, R"("withdrawn": {}, "gqa": {})");
  EXPECT_THROW(certificate_schema(naming_gqa, kClaims), std::logic_error);
  std::string no_dtypes = base;
  no_dtypes.replace(no_dtypes.find(R"("dtypes", )"), 10, "");
  EXPECT_THROW(certificate_schema(no_dtypes, kClaims), std::logic_error);
  // And the certificate writes exactly those keys.
  const nlohmann::json cert = nlohmann::json::parse(to_json(testing::naive_certificate(1)));
  std::set<std::string> written;
  for (const auto& [key, v] : cert.at("kernel").at("capabilities").items()) written.insert(key);
  EXPECT_EQ(written, table);
  // And docs/certificate.md names every claim in its capabilities row.
  std::ifstream doc(ATTNV_CERTIFICATE_DOC);
  ASSERT_TRUE(doc) << ATTNV_CERTIFICATE_DOC;
  std::string line;
  while (std::getline(doc, line) && line.rfind("| `capabilities` |", 0) != 0) {
  }
  ASSERT_FALSE(line.empty()) << "docs/certificate.md has no capabilities row";
  for (const ClaimInfo& c : kClaims)
    EXPECT_NE(line.find("`" + std::string(c.key) + "`"), std::string::npos) << "docs/certificate.md does not name " << c.key;
}

TEST(JsonReport, StructureAndValues) {
  const Certificate& c = cert("mutant");
  const nlohmann::json j = nlohmann::json::parse(to_json(c));
  EXPECT_EQ(j["format"], "attnv-certificate");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["seed"], kSeedA);
  EXPECT_EQ(j["kernel"]["spec"], c.kernel.spec);
  EXPECT_EQ(j["verdict"]["certified"], false);
  ASSERT_EQ(j["results"].size(), c.report.results.size());
  for (std::size_t i = 0; i < c.report.results.size(); ++i) {
    const auto& r = c.report.results[i];
    const auto& jr = j["results"][i];
    EXPECT_EQ(jr["id"], r.id);
    EXPECT_EQ(jr["verdict"], std::string(conformance::verdict_name(r.verdict)));
    EXPECT_EQ(jr["cases"]["Tq"].size(), r.cases.size());
    if (std::isinf(r.worst_ratio)) {
      EXPECT_EQ(jr["worst_ratio"], "inf");
    } else if (r.worst_ratio >= 0) {
      EXPECT_EQ(jr["worst_ratio"].get<double>(), r.worst_ratio);  // round trip, bit for bit
    } else {
      EXPECT_TRUE(jr["worst_ratio"].is_null());
    }
    EXPECT_EQ(jr["histogram"].is_null(), r.hist.total() == 0) << r.id;
    EXPECT_EQ(jr["tightness"].is_null(), r.tightness.total() == 0) << r.id;
    if (r.tightness.total() > 0) {
      EXPECT_EQ(jr["tightness"]["elements"], r.tightness.total());
      EXPECT_EQ(jr["tightness"]["at_least_own_size"], r.tightness.at_least_own_size());
    }
  }
}

TEST(JsonReport, NonFiniteDoublesBecomeStrings) {
  Certificate c = cert("naive");
  conformance::RequirementResult* r1 = find(c, "R1");
  ASSERT_NE(r1, nullptr);
  ASSERT_GE(r1->cases.size(), 2u);
  r1->worst_ratio = HUGE_VAL;
  r1->cases[0].worst_ratio = std::nan("");
  const std::string s = to_json(c);
  const nlohmann::json j = nlohmann::json::parse(s);  // would throw on a bare inf or NaN
  EXPECT_EQ(j["results"][0]["worst_ratio"], "inf");
  EXPECT_EQ(j["results"][0]["cases"]["ratio"][0], "nan");
}

// The real validator (python3-jsonschema) on the real schema (as `attnv schema` writes it); it must
// also reject a broken document.
void expect_schema(const std::string& name, const std::string& json, bool valid, const std::string& schema = certificate_schema()) {
  const auto file = temp_file(name + ".json", json), schema_file = temp_file(name + ".schema.json", schema);
  const Proc r = run_command(std::string(ATTNV_PYTHON3) + " " + ATTNV_VALIDATE + " " + schema_file.string() + " " + file.string());
  std::filesystem::remove(schema_file);
  std::filesystem::remove(file);
  if (r.status == 77) GTEST_SKIP() << r.out;
  if (valid) {
    EXPECT_EQ(r.status, 0) << name << ":\n" << r.out;
  } else {
    EXPECT_EQ(r.status, 1) << name << " should be rejected:\n" << r.out;
  }
}

// The manifest's schema (`attnv schema manifest`) accepts a manifest with every later option set
// as render_manifest writes it, and rejects an option of the wrong type. Here because the
// validator is.
TEST(ManifestSchema, AcceptsWhatTheWriterWritesWithEveryOption) {
  io::ManifestEntry e{"every_option", "c0", {}, true, ""};
  e.problem.has_mask = e.problem.has_bias = true;
  for (const ProblemOption& o : kProblemOptions)
    if (o.in_manifest) o.set(e.problem, 2);
  const std::string text = io::render_manifest({e});
  expect_schema("manifest", text, true, io::manifest_schema());
  for (const ProblemOption& o : kProblemOptions) {
    if (!o.in_manifest) continue;
    nlohmann::ordered_json bad = nlohmann::ordered_json::parse(text);
    nlohmann::ordered_json& value = bad["cases"][0][std::string(o.key)];
    ASSERT_FALSE(value.is_null()) << o.key << " not written:\n" << text;
    value = o.kind == ProblemOption::Kind::flag ? nlohmann::ordered_json(1) : nlohmann::ordered_json(true);
    expect_schema("manifest_bad_" + std::string(o.key), bad.dump(), false, io::manifest_schema());
  }
}

// Declined cases (supports()) are counted and listed in every form, never findings; the kernel
// options are the run's provenance and part of every rerun command.
TEST(ReportSample, DeclinedCasesAreCountedInEveryForm) {
  const Certificate& c = cert("declining");
  const Summary s = summarize(c);
  EXPECT_TRUE(s.certified) << verdict_line(c);
  EXPECT_GT(s.cases_declined, 0);
  EXPECT_EQ(s.not_supported, 0);
  EXPECT_TRUE(contains(verdict_line(c), "cases declined by the kernel (NOT SUPPORTED)")) << verdict_line(c);
  const std::string t = terminal_summary(c, false);
  EXPECT_TRUE(contains(t, "DECLINED (the kernel said it does not compute these cases")) << t;
  EXPECT_TRUE(contains(t, " > max_tk 64")) << t;
  EXPECT_TRUE(contains(t, "  options   max_tk=64\n")) << t;
  EXPECT_TRUE(contains(t, "(plugin ABI version 2)")) << t;
  EXPECT_TRUE(contains(t, "  configuration  isa=avx2 (cpu dispatch) --kernel-option max_tk=64\n")) << t;
  const std::string json = to_json(c);
  const nlohmann::json j = nlohmann::json::parse(json);
  EXPECT_EQ(j["provenance"]["kernel_options"][0]["key"], "max_tk");
  EXPECT_EQ(j["kernel"]["abi_version"], 2);
  EXPECT_EQ(j["kernel"]["configuration"], "isa=avx2 (cpu dispatch) --kernel-option max_tk=64");
  EXPECT_GT(j["verdict"]["cases_declined"].get<int>(), 0);
  EXPECT_FALSE(j["results"][0]["declined"].empty());
  EXPECT_TRUE(contains(j["results"][0]["reproduce_command"].get<std::string>(), "--kernel-option max_tk=64 --suite quick"));
  expect_schema("declining", json, true);
  EXPECT_TRUE(contains(to_junit(c), "<property name=\"kernel_option\" value=\"max_tk=64\"/>"));
  EXPECT_TRUE(contains(to_junit(c), "cases declined by the kernel"));
  EXPECT_TRUE(contains(to_html(c), "id=\"declined\""));
  EXPECT_TRUE(contains(to_html(c), "<dt>configuration</dt><dd>isa=avx2 (cpu dispatch) --kernel-option max_tk=64</dd>"));
}

// A run of the built-in core on a path ATTNV_CORE_ISA forced: every command the certificate
// prints, in every form, starts with that setting, so that no rerun or repro judges another path.
TEST(ReportSample, ForcedCorePathStartsEveryCommand) {
  Certificate c = cert("naive");
  c.environment = "ATTNV_CORE_ISA=avx2";
  c.command = in_environment(c, "attnv certify --kernel builtin:core --suite quick --seed 1");
  conformance::Finding f;
  f.saved_case = "cert/failures/R1-f32-0";
  EXPECT_EQ(repro_command(c, f), "ATTNV_CORE_ISA=avx2 attnv repro --kernel " + c.kernel.spec + " cert/failures/R1-f32-0");
  ASSERT_FALSE(c.report.results.empty());
  EXPECT_TRUE(reproduce_command(c, c.report.results[0]).rfind("ATTNV_CORE_ISA=avx2 attnv certify ", 0) == 0)
      << reproduce_command(c, c.report.results[0]);
  const std::string json = to_json(c);
  const nlohmann::json j = nlohmann::json::parse(json);
  EXPECT_EQ(j["environment"], "ATTNV_CORE_ISA=avx2");
  EXPECT_TRUE(j["results"][0]["reproduce_command"].get<std::string>().rfind("ATTNV_CORE_ISA=avx2 ", 0) == 0);
  expect_schema("forced_path", json, true);
  EXPECT_TRUE(contains(terminal_summary(c, false), "rerun: ATTNV_CORE_ISA=avx2 attnv certify")) << terminal_summary(c, false);
  c.environment.clear();  // not forced: the commands as they were
  EXPECT_TRUE(reproduce_command(c, c.report.results[0]).rfind("attnv certify ", 0) == 0);
}

// Claims a run never exercised: still certified for the rest, but the headline names them (in
// every form), and the schema holds the counts.
TEST(ReportSample, ClaimsNoJudgedCaseUsedAreNamedNotCertified) {
  Certificate c = cert("naive");  // a certified run
  c.report.exercised = {{"dtype f32", "dtype f32", 120}, {"gqa", "GQA", 40}, {"alibi", "ALiBi", 0}};
  const Summary s = summarize(c);
  EXPECT_EQ(s.unexercised_features, std::vector<std::string>{"ALiBi"});
  EXPECT_TRUE(contains(verdict_line(c), "claimed but NOT EXERCISED (no judged case used them, so not certified for them): ALiBi"))
      << verdict_line(c);
  EXPECT_TRUE(contains(terminal_summary(c, false), "ALiBi 0 NOT EXERCISED;"));
  EXPECT_TRUE(contains(terminal_summary(c, false), "GQA 40;"));
  EXPECT_TRUE(contains(to_html(c), "ALiBi 0 <strong>NOT EXERCISED"));
  const std::string json = to_json(c);
  EXPECT_TRUE(contains(json, "\"unexercised_features\": [\"ALiBi\"]")) << json;
  expect_schema("claims_exercised", json, true);
  c.report.exercised[2].judged = 7;  // exercised: nothing named
  EXPECT_FALSE(contains(verdict_line(c), "NOT EXERCISED")) << verdict_line(c);
}

// A requirement the kernel declined wholesale, and a claimed feature declined in every case: not
// certified in every form (a JUnit skip, not a failure), and the schema holds both.
TEST(ReportSample, DeclinedClaimsAreNotCertified) {
  Certificate c = cert("declining");
  conformance::RequirementResult* r1 = find(c, "R1");
  ASSERT_NE(r1, nullptr);
  r1->verdict = conformance::Verdict::not_supported;
  r1->note = "the kernel declined 150 of 150 cases and no case was judged (the first: Tk = 100 > max_tk 64)";
  c.report.declines.push_back({"softcap", 40, 0});
  const Summary s = summarize(c);
  EXPECT_FALSE(s.certified);
  EXPECT_EQ(s.not_supported, 1);
  EXPECT_EQ(s.declined_features, std::vector<std::string>{"softcap (40 cases)"});
  EXPECT_TRUE(contains(verdict_line(c), "NOT CERTIFIED: the kernel declined what it claims: 1 NOT SUPPORTED (R1/f32); "
                                        "claimed but declined in every case: softcap (40 cases)"))
      << verdict_line(c);
  const std::string junit = to_junit(c);
  EXPECT_TRUE(contains(junit, "<skipped message=\"NOT SUPPORTED: the kernel declined 150 of 150 cases")) << junit;
  EXPECT_FALSE(contains(junit, "<failure"));
  EXPECT_TRUE(contains(terminal_summary(c, false), "(claimed, but every case declined: not certified for softcap)"));
  expect_schema("declined_claims", to_json(c), true);
  // The schema knows the verdict: an unknown one is rejected.
  std::string bad = to_json(c);
  const std::size_t at = bad.find("\"NOT SUPPORTED\"");
  ASSERT_NE(at, std::string::npos);
  bad.replace(at, 15, "\"NOT SUPPORTE\"");
  expect_schema("declined_bad_verdict", bad, false);
}

// A requirement attnv could not judge is its own error: ATTNV ERROR, never a FAIL, never
// certified; JUnit calls it an <error> (the harness), not a <failure> (the code under test).
TEST(ReportSample, AttnvsOwnErrorIsNeitherAFindingNorACertificate) {
  Certificate c = cert("naive");
  conformance::RequirementResult* r1 = find(c, "R1");
  r1->verdict = conformance::Verdict::attnv_error;
  r1->note = "attnv error: fast reference declined the case (attnv's own error, not the kernel's)";
  const Summary s = summarize(c);
  EXPECT_FALSE(s.certified);
  EXPECT_EQ(s.attnv_errors, 1);
  EXPECT_EQ(s.fail, 0);
  const std::string t = terminal_summary(c, false);
  EXPECT_TRUE(contains(t, "NOT CERTIFIED: attnv could not judge R1/f32 (attnv's own error")) << t;
  EXPECT_TRUE(contains(t, "ATTNV ERROR")) << t;
  EXPECT_TRUE(contains(to_junit(c), "<error message=\"attnv error: fast reference declined")) << to_junit(c);
  expect_schema("attnv_error", to_json(c), true);
}

// Each finding says whether its case failed the same way when judged again at once: true for a
// planted bug, false for a kernel not deterministic there, null when it was not judged again;
// the schema takes the three and nothing else.
TEST(JsonReport, FindingsSayWhetherTheyRecurred) {
  Certificate c = cert("mutant");
  conformance::Finding* f = nullptr;
  for (auto& r : c.report.results)
    if (!r.findings.empty() && !f) f = &r.findings.front();
  ASSERT_NE(f, nullptr) << "the mutant fails somewhere";
  const auto recurred_of = [&] {
    const nlohmann::json j = nlohmann::json::parse(to_json(c));
    for (const auto& r : j["results"])
      if (!r["findings"].empty()) return r["findings"][0]["recurred"];
    return nlohmann::json("no finding");
  };
  EXPECT_EQ(recurred_of(), nlohmann::json(true)) << "a planted bug fails every time";
  f->recurred = false;
  EXPECT_EQ(recurred_of(), nlohmann::json(false));
  expect_schema("not_recurred", to_json(c), true);
  f->recurred = std::nullopt;
  EXPECT_TRUE(recurred_of().is_null());
  expect_schema("recurred_unknown", to_json(c), true);
  std::string bad = to_json(c);
  const std::string field = "\"recurred\": null";
  ASSERT_NE(bad.find(field), std::string::npos) << bad.substr(0, 3000);
  bad.replace(bad.find(field), field.size(), "\"recurred\": \"sometimes\"");
  expect_schema("recurred_bad", bad, false);
}

TEST(JsonReport, ValidAgainstTheSchema) {
  expect_schema("naive", to_json(cert("naive")), true);
  expect_schema("mutant", to_json(cert("mutant")), true);
  expect_schema("leaky", to_json(cert("leaky")), true);
  Certificate c = cert("naive");
  find(c, "R1")->worst_ratio = HUGE_VAL;
  expect_schema("inf", to_json(c), true);
}

TEST(JsonReport, SchemaRejectsBrokenDocuments) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(to_json(cert("mutant")));
  auto bad = j;
  bad["results"][0]["verdict"] = "MAYBE";
  expect_schema("bad_verdict", bad.dump(), false);
  bad = j;
  bad.erase("seed");
  expect_schema("no_seed", bad.dump(), false);
  bad = j;
  bad["results"][0]["worst_ratio"] = "Infinity";
  expect_schema("bad_inf", bad.dump(), false);
  bad = j;
  bad["results"][0]["seconds"] = 1.5;  // wall times are not allowed in
  expect_schema("seconds", bad.dump(), false);
}

// ---- JUnit ------------------------------------------------------------------------------------

// Parses the XML with python3's xml.etree and prints: suites, tests, failures, skipped, then the
// first failure's message attribute.
Proc parse_junit(const std::string& xml) {
  const auto file = temp_file("junit.xml", xml);
  const std::string py =
      "import sys, xml.etree.ElementTree as E\n"
      "t = E.parse(sys.argv[1]).getroot()\n"
      "f = t.findall('.//failure')\n"
      "print(len(t.findall('testsuite')), len(t.findall('.//testcase')), len(f), len(t.findall('.//skipped')))\n"
      "print(f[0].get('message') if f else '')\n";
  const auto script = temp_file("junit.py", py);
  Proc r = run_command(std::string(ATTNV_PYTHON3) + " " + script.string() + " " + file.string());
  std::filesystem::remove(file);
  std::filesystem::remove(script);
  return r;
}

TEST(JunitReport, WellFormedWithFailuresAndSkips) {
  const Proc m = parse_junit(to_junit(cert("mutant")));
  ASSERT_EQ(m.status, 0) << m.out;
  const Summary sm = summarize(cert("mutant"));
  EXPECT_TRUE(contains(m.out, "1 " + std::to_string(cert("mutant").report.results.size()) + " " +
                                  std::to_string(sm.fail) + " 0\n"))
      << m.out;
  const Proc n = parse_junit(to_junit(cert("naive")));
  ASSERT_EQ(n.status, 0) << n.out;
  const Summary sn = summarize(cert("naive"));
  EXPECT_TRUE(contains(n.out, "2 " + std::to_string(cert("naive").report.results.size()) + " 0 " +
                                  std::to_string(sn.not_claimed) + "\n"))
      << n.out;
  const std::string x = to_junit(cert("mutant"));
  EXPECT_TRUE(contains(x, "reproduce: attnv certify --kernel"));
}

TEST(JunitReport, HostileTextIsEscapedAndRoundTrips) {
  Certificate c = cert("mutant");
  const std::string hostile = "x < y && \"q\" 'a' ]]> </failure> \x01 \xff \xc3\xa9";
  for (auto& r : c.report.results)
    for (auto& f : r.findings) f.message = hostile;
  const std::string xml = to_junit(c);
  EXPECT_FALSE(contains(xml, "</failure> "));
  const Proc p = parse_junit(xml);
  ASSERT_EQ(p.status, 0) << p.out;
  // \x01 cannot be in XML 1.0 and \xff is not UTF-8; the e-acute is.
  EXPECT_TRUE(contains(p.out, "x < y && \"q\" 'a' ]]> </failure> ? ? \xc3\xa9\n")) << p.out;
  // The parser is able to say no: unescaped, the same text is not XML.
  const Proc broken = parse_junit("<testsuites><testsuite><testcase><failure message=\"" + hostile + "\"/></testcase>"
                                 "</testsuite></testsuites>");
  EXPECT_NE(broken.status, 0);
}

// ---- HTML -------------------------------------------------------------------------------------

TEST(HtmlReport, SelfContainedWithTheCharts) {
  for (const char* which : {"naive", "mutant"}) {
    const Certificate& c = cert(which);
    const std::string h = to_html(c);
    EXPECT_FALSE(contains(h, "http")) << which;  // no network resource of any kind
    EXPECT_FALSE(contains(h, "src=")) << which;
    EXPECT_FALSE(contains(h, "href=")) << which;
    EXPECT_FALSE(contains(h, "url(")) << which;
    EXPECT_FALSE(contains(h, "@import")) << which;
    const Summary s = summarize(c);
    std::size_t hists = 0, scatters = 0;
    for (std::size_t p = 0; (p = h.find("<svg class=\"chart hist\"", p)) != std::string::npos; ++p) ++hists;
    for (std::size_t p = 0; (p = h.find("<svg class=\"chart scatter\"", p)) != std::string::npos; ++p) ++scatters;
    std::size_t with_ratios = 0;  // a dtype gets a histogram when R1 or R2 compared elements on it
    for (DType d : s.dtypes) {
      bool any = false;
      for (const auto& r : c.report.results) any = any || (r.dtype == d && r.hist.total() > 0);
      with_ratios += any;
    }
    EXPECT_EQ(hists, with_ratios) << which;
    EXPECT_GE(hists, 1u) << which;
    std::size_t judged = 0;  // a dtype gets a scatter when some case on it was judged
    for (DType d : s.dtypes) {
      bool any = false;
      for (const auto& r : c.report.results)
        for (const auto& k : r.cases) any = any || (r.dtype == d && k.judged);
      judged += any;
    }
    EXPECT_EQ(scatters, judged) << which;
    EXPECT_GE(scatters, 1u) << which;
    EXPECT_TRUE(contains(h, "class=\"bound\"")) << which;  // the ratio-1 line of a non-empty histogram
    EXPECT_TRUE(contains(h, "body.dataset.ready = \"1\""));
    EXPECT_TRUE(contains(h, s.certified ? "CERTIFIED" : "NOT CERTIFIED"));
  }
  const std::string m = to_html(cert("mutant"));
  EXPECT_TRUE(contains(m, "<div class=\"finding\">"));
  EXPECT_TRUE(contains(m, "--only R5"));
  EXPECT_TRUE(contains(m, "class=\"cell failpt\""));
}

// The coverage scatter draws one mark per cell of a quarter-decade grid, not one per case:
// 30,000 cases on 4 distinct shapes give 4 marks, and the worst case of a cell names it.
TEST(HtmlReport, ScatterBinsCasesIntoCells) {
  std::vector<detail::Point> pts;
  for (int i = 0; i < 30000; ++i) {
    const double t = i % 4 == 0 ? 1 : i % 4 == 1 ? 100 : i % 4 == 2 ? 101 : 5000;  // 100 and 101 share a cell
    pts.push_back({t, t, 0.001 * (i % 97), true, "case " + std::to_string(i)});
  }
  pts[7].ok = false;  // one failure, in the Tq = Tk = 5000 cell
  pts[7].ratio = 3;
  const std::string svg = detail::scatter_svg("s", "f32", pts, 5000);
  std::size_t circles = 0;
  for (std::size_t p = 0; (p = svg.find("<circle", p)) != std::string::npos; ++p) ++circles;
  EXPECT_EQ(circles, 3u);
  EXPECT_LT(svg.size(), 5000u);
  EXPECT_TRUE(contains(svg, "15000 cases")) << svg;  // Tq = Tk in {100, 101}
  EXPECT_TRUE(contains(svg, "7500 cases")) << svg;
  EXPECT_TRUE(contains(svg, "; 1 FAIL\nworst: case 7")) << svg;
  EXPECT_TRUE(contains(svg, "class=\"cell failpt\""));
}

// The histogram's legend sits in rows of its own below the title, wrapped to the chart's width.
TEST(HtmlReport, HistogramLegendDoesNotOverlapTheTitle) {
  bound::RatioHistogram h;
  h.count[3] = 10;
  const std::vector<detail::Series> series = {{"R1 forward", "#111", &h}, {"R2 backward", "#222", &h},
                                              {"R21 decode_equals_prefill", "#333", &h}, {"R99 a long made up label", "#444", &h}};
  const std::string svg = detail::histogram_svg("h", "f32: error / bound per element", series);
  // Title at y=18; every legend label below it; the last one wrapped to a second row.
  for (const detail::Series& s : series) {
    const auto at = svg.find(">" + s.label + "</text>");
    ASSERT_NE(at, std::string::npos) << s.label;
    const auto y = svg.rfind("y=\"", at);
    EXPECT_GE(std::stod(svg.substr(y + 3)), 30.0) << s.label;
  }
  EXPECT_TRUE(contains(svg, "y=\"52\">R99 a long made up label")) << svg.substr(0, 1200);
}

TEST(HtmlReport, HostileTextIsEscaped) {
  Certificate c = cert("mutant");
  const std::string hostile = "<script>alert('x')</script>\"&";
  conformance::RequirementResult* r5 = find(c, "R5");
  ASSERT_NE(r5, nullptr);
  ASSERT_FALSE(r5->findings.empty());
  r5->findings[0].case_id = hostile;
  r5->findings[0].message = hostile;
  for (auto& k : r5->cases) k.case_id = hostile;
  r5->worst_case = hostile;
  c.kernel.name = hostile;
  c.kernel.notes.push_back(hostile);
  const std::string h = to_html(c);
  EXPECT_FALSE(contains(h, "<script>alert"));
  EXPECT_FALSE(contains(h, "\"&\""));
  EXPECT_TRUE(contains(h, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&amp;"));
  // Exactly one script element: ours.
  std::size_t scripts = 0;
  for (std::size_t p = 0; (p = h.find("<script", p)) != std::string::npos; ++p) ++scripts;
  EXPECT_EQ(scripts, 1u);
  // Terminal controls in a plugin's name (ESC, BEL, a bidirectional override) never reach the page.
  c.kernel.name = "k\x1b]0;pwned\x07\xe2\x80\xaename";
  const std::string controls = to_html(c);
  EXPECT_FALSE(contains(controls, "\x1b")) << "ESC reached the HTML raw";
  EXPECT_FALSE(contains(controls, "\x07"));
  EXPECT_FALSE(contains(controls, "\xe2\x80\xae"));
  EXPECT_TRUE(contains(controls, "k?]0;pwned????name"));  // one ? per byte (io::printable)
}

}  // namespace
}  // namespace attnv::report
