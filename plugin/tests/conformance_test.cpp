// Plugins through the unchanged conformance suite: correct ones pass, mutants fail their
// requirement (including R14 through the read-only mapping of q).
#include <gtest/gtest.h>

#include <algorithm>

#include "plugin_kernel.h"
#include "properties/conformance/conformance.h"

namespace attnv::plugin {
namespace {

conformance::ConformanceReport certify(const std::string& path, std::vector<std::string> only) {
  PluginKernel k(path);
  conformance::ConformanceOptions opt;
  opt.only = std::move(only);
  opt.dtypes = {DType::f32};
  return conformance::run_conformance(k, opt);
}

TEST(PluginConformance, ExamplePassesR1) {
  const auto rep = certify(PLUGIN_EXAMPLE_MINIMAL, {"R1"});
  ASSERT_EQ(rep.results.size(), 1u);
  EXPECT_EQ(rep.results[0].verdict, conformance::Verdict::pass) << describe(rep.results[0]);
  EXPECT_GT(rep.results[0].cases_checked, 0);
}

TEST(PluginConformance, NaivePluginPassesR1R5R14) {
  const auto rep = certify(PLUGIN_NAIVE, {"R1", "R5", "R14"});
  ASSERT_EQ(rep.results.size(), 3u);
  for (const auto& r : rep.results) {
    EXPECT_EQ(r.verdict, conformance::Verdict::pass) << describe(r);
    EXPECT_GT(r.cases_checked, 0) << describe(r);
  }
}

TEST(PluginConformance, MutantWritingQFailsR14WithTheFaultNamed) {
  const auto rep = certify(PLUGIN_MUTANT_WRITES_Q, {"R14"});
  ASSERT_EQ(rep.results.size(), 1u);
  const auto& r = rep.results[0];
  ASSERT_EQ(r.verdict, conformance::Verdict::fail) << describe(r);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_NE(r.findings[0].message.find("wrote into input q at element [0,0,0,0]"), std::string::npos)
      << r.findings[0].message;
}

// The judged cases that used a claim (the certificate's "claims exercised"); -1 when the claim
// is not listed (not claimed).
int judged_using(const conformance::ConformanceReport& rep, const std::string& claim) {
  for (const conformance::FeatureUse& f : rep.exercised)
    if (f.claim == claim) return f.judged;
  return -1;
}

// Decode through the worker (the caches copied in, appended to in the shared region, copied
// back): the naive plugin passes R21, both decode mutants fail it. It claims the paged KV cache,
// so R21's paged run (run C) goes through the worker too: the block table in the shared region,
// the pools copied whole, and the run counted as exercising the claim.
TEST(PluginConformance, DecodeThroughTheWorkerR21) {
  const auto rep = certify(PLUGIN_NAIVE, {"R21"});
  ASSERT_EQ(rep.results.size(), 1u);
  EXPECT_EQ(rep.results[0].verdict, conformance::Verdict::pass) << describe(rep.results[0]);
  EXPECT_GT(rep.results[0].cases_checked, 0);
  EXPECT_GT(judged_using(rep, "paged_kv"), 0);
  EXPECT_EQ(certify(PLUGIN_MUTANT_DECODE_TOP_LEFT, {"R21"}).results.at(0).verdict, conformance::Verdict::fail);
  EXPECT_EQ(certify(PLUGIN_MUTANT_DECODE_APPEND_SHIFTED, {"R21"}).results.at(0).verdict, conformance::Verdict::fail);
}

// The first finding's message of a one-requirement run that must fail ("" when it did not).
std::string finding_of(const conformance::ConformanceReport& rep) {
  if (rep.results.size() != 1 || rep.results[0].verdict != conformance::Verdict::fail || rep.results[0].findings.empty())
    return "";
  return rep.results[0].findings[0].message;
}

// The paged KV cache as plugins: the core passes R21 with its paged run counted; the two paged
// mutants fail it in the paged run (their contiguous runs are correct); a plugin writing a slot
// past the appended ones is named by the pool comparison (the worker copies the whole pool
// back), and one writing the block table faults on its read-only mapping.
TEST(PluginConformance, PagedCacheThroughTheWorkerR21) {
  const auto core = certify(PLUGIN_CORE, {"R21"});
  ASSERT_EQ(core.results.size(), 1u);
  EXPECT_EQ(core.results[0].verdict, conformance::Verdict::pass) << describe(core.results[0]);
  EXPECT_GT(judged_using(core, "paged_kv"), 0);
  for (const char* mutant : {PLUGIN_MUTANT_PAGED_LAST_PAGE_FULL, PLUGIN_MUTANT_PAGED_TABLE_ROW0}) {
    const std::string f = finding_of(certify(mutant, {"R21"}));
    EXPECT_NE(f.find("run C (paged cache"), std::string::npos) << mutant << ": " << f;
  }
  const std::string past = finding_of(certify(PLUGIN_PAGED_WRITES_PAST_APPENDED, {"R21"}));
  EXPECT_NE(past.find("run C (paged cache"), std::string::npos) << past;
  EXPECT_NE(past.find("the cache k_cache page "), std::string::npos) << past;
  EXPECT_NE(past.find(": untouched, past cache_len + n)"), std::string::npos) << past;
  const std::string table = finding_of(certify(PLUGIN_PAGED_WRITES_TABLE, {"R21"}));
  EXPECT_NE(table.find("wrote into input block_table at element [0,0]"), std::string::npos) << table;
}

// Packed sequences through the worker (cu_seqlens_q/_k in their own int64 slots): the naive
// plugin passes R1 with judged varlen cases, the mutant aligning by the packed corner fails it.
TEST(PluginConformance, PackedSequencesThroughTheWorkerR1) {
  const auto rep = certify(PLUGIN_NAIVE, {"R1"});
  ASSERT_EQ(rep.results.size(), 1u);
  EXPECT_EQ(rep.results[0].verdict, conformance::Verdict::pass) << describe(rep.results[0]);
  int varlen_judged = -1;
  for (const conformance::FeatureUse& u : rep.exercised)
    if (u.claim == "varlen") varlen_judged = u.judged;
  EXPECT_GT(varlen_judged, 0);
  const auto bad = certify(PLUGIN_MUTANT_VARLEN_GLOBAL_ALIGNMENT, {"R1"});
  EXPECT_EQ(bad.results.at(0).verdict, conformance::Verdict::fail) << describe(bad.results.at(0));
}

// Per-sequence key lengths through the worker (kv_len [S] in its slot): the naive plugin passes
// R1 with such cases judged, the mutant aligning to the stored keys fails it; a plugin claiming
// varlen and kv_len but not the two together passes R1 without ever being drawn one.
TEST(PluginConformance, PerSequenceKeyLengthsThroughTheWorkerR1) {
  const auto judged = [](const conformance::ConformanceReport& rep, const std::string& claim) {
    for (const conformance::FeatureUse& u : rep.exercised)
      if (u.claim == claim) return u.judged;
    return -1;
  };
  const auto rep = certify(PLUGIN_NAIVE, {"R1"});
  EXPECT_EQ(rep.results.at(0).verdict, conformance::Verdict::pass) << describe(rep.results.at(0));
  EXPECT_GT(judged(rep, "varlen_kv_len"), 0);
  const auto bad = certify(PLUGIN_MUTANT_SEQUSED_ALIGNED_TO_STORED_KEYS, {"R1"});
  EXPECT_EQ(bad.results.at(0).verdict, conformance::Verdict::fail) << describe(bad.results.at(0));
  const auto older = certify(PLUGIN_SEQUSED_NOT_CLAIMED, {"R1"});
  EXPECT_EQ(older.results.at(0).verdict, conformance::Verdict::pass) << describe(older.results.at(0));
  EXPECT_EQ(judged(older, "varlen_kv_len"), -1);  // not claimed: not listed
  EXPECT_GT(judged(older, "varlen"), 0);
  EXPECT_GT(judged(older, "kv_len"), 0);
  for (const conformance::CaseRecord& c : older.results.at(0).cases)
    EXPECT_FALSE(c.problem.varlen_sequences > 0 && c.problem.has_kv_len) << c.case_id;
}

TEST(PluginConformance, NumericMutantsFailTheirRequirement) {
  EXPECT_EQ(certify(PLUGIN_MUTANT_D_MODEL_SCALE, {"R1"}).results.at(0).verdict, conformance::Verdict::fail);
  EXPECT_EQ(certify(PLUGIN_MUTANT_CAUSAL_OFF_BY_ONE, {"R5"}).results.at(0).verdict, conformance::Verdict::fail);
}

}  // namespace
}  // namespace attnv::plugin

namespace attnv::plugin {
namespace {

conformance::ConformanceReport certify_with(const std::string& path, std::vector<std::string> only,
                                            std::vector<std::pair<std::string, std::string>> options = {}) {
  PluginOptions popt;
  popt.kernel_options = std::move(options);
  PluginKernel k(path, popt);
  conformance::ConformanceOptions opt;
  opt.only = std::move(only);
  opt.dtypes = {DType::f32};
  return conformance::run_conformance(k, opt);
}

// The README's example, built against the released version 1 header, and the same source built
// against the version 2 header: the same certificate, result for result.
TEST(PluginConformanceV2, Version1ExampleAndItsVersion2RebuildCertifyAlike) {
  const auto v1 = certify_with(PLUGIN_EXAMPLE_MINIMAL, {"R1", "R3", "R14"});
  const auto v2 = certify_with(PLUGIN_EXAMPLE_MINIMAL_V2, {"R1", "R3", "R14"});
  ASSERT_EQ(v1.results.size(), v2.results.size());
  EXPECT_TRUE(v1.ok());
  for (std::size_t i = 0; i < v1.results.size(); ++i) {
    const auto& a = v1.results[i];
    const auto& b = v2.results[i];
    EXPECT_EQ(a.verdict, conformance::Verdict::pass) << describe(a);
    EXPECT_EQ(describe(a), describe(b));
    EXPECT_EQ(a.cases_checked, b.cases_checked);
    EXPECT_EQ(a.worst_ratio, b.worst_ratio);
    EXPECT_EQ(a.cases_not_supported, 0);
  }
}

// Declined cases are counted and listed, never failed: R1 passes on the cases it computed.
TEST(PluginConformanceV2, DeclinedCasesAreCountedAndListedNotFailed) {
  const auto rep = certify_with(PLUGIN_V2_DECLINES, {"R1", "R13"});
  ASSERT_EQ(rep.results.size(), 2u);
  for (const auto& r : rep.results) {
    EXPECT_EQ(r.verdict, conformance::Verdict::pass) << describe(r);
    EXPECT_GT(r.cases_not_supported, 0) << describe(r);
    EXPECT_GT(r.cases_checked, 0) << describe(r);
    EXPECT_EQ(r.cases_checked + r.cases_not_supported + r.cases_not_exercised, r.cases_run) << describe(r);
    ASSERT_EQ(static_cast<int>(r.declined.size()), r.cases_not_supported);
    EXPECT_NE(r.declined[0].why.find("only even head dimensions are compiled"), std::string::npos) << r.declined[0].why;
    EXPECT_NE(r.note.find("cases declined by the kernel"), std::string::npos) << r.note;
    EXPECT_TRUE(r.findings.empty());
  }
  EXPECT_TRUE(rep.ok()) << rep.table();
  ASSERT_FALSE(rep.declines.empty());
  EXPECT_EQ(rep.declines[0].feature, "dtype f32");
  EXPECT_FALSE(rep.declines[0].uncovered());
}

// Declining every case is never a pass: each requirement NOT SUPPORTED, the run not ok.
TEST(PluginConformanceV2, DecliningEverythingIsNotSupportedNeverPassed) {
  const auto rep = certify_with(PLUGIN_V2_DECLINES, {"R1", "R15", "R17"}, {{"decline", "all"}});
  for (const auto& r : rep.results) {
    EXPECT_EQ(r.verdict, conformance::Verdict::not_supported) << describe(r);
    EXPECT_EQ(r.cases_checked, 0);
    EXPECT_EQ(r.cases_not_supported, r.cases_run) << describe(r);
  }
  EXPECT_FALSE(rep.ok());
}

// A claimed feature declined in every case: the requirements pass on their other cases, and
// still the run is not ok, naming the feature.
TEST(PluginConformanceV2, AClaimedFeatureDeclinedInEveryCaseIsNotCertified) {
  const auto rep = certify_with(PLUGIN_V2_DECLINES, {"R1", "R3"}, {{"decline", "softcap"}});
  for (const auto& r : rep.results) EXPECT_EQ(r.verdict, conformance::Verdict::pass) << describe(r);
  const auto softcap = std::find_if(rep.declines.begin(), rep.declines.end(),
                                    [](const conformance::FeatureDeclines& f) { return f.feature == "softcap"; });
  ASSERT_NE(softcap, rep.declines.end()) << rep.table();
  EXPECT_TRUE(softcap->uncovered());
  EXPECT_FALSE(rep.ok()) << rep.table();
  // Declining only the odd head dimensions covers no feature wholesale.
  EXPECT_TRUE(certify_with(PLUGIN_V2_DECLINES, {"R1", "R3"}).ok());
}

// A decode plugin that does not claim the paged cache: R21 runs without pages (runs A and B)
// and passes; the claim is neither exercised nor failed.
TEST(PluginConformanceV2, DecodeWithoutThePagedClaimRunsR21WithoutPages) {
  PluginKernel k(PLUGIN_PAGED_NOT_CLAIMED);
  EXPECT_TRUE(k.capabilities().decode);
  EXPECT_FALSE(k.capabilities().paged_kv);
  const auto rep = certify_with(PLUGIN_PAGED_NOT_CLAIMED, {"R21"});
  ASSERT_EQ(rep.results.size(), 1u);
  EXPECT_EQ(rep.results[0].verdict, conformance::Verdict::pass) << describe(rep.results[0]);
  EXPECT_GT(rep.results[0].cases_checked, 0);
  EXPECT_EQ(judged_using(rep, "paged_kv"), -1);  // not claimed: not listed among the claims exercised
  EXPECT_TRUE(rep.ok()) << rep.table();
}

// Page sizes a plugin declines through supports() (here the odd ones, as kernels compile only
// some sizes) make those R21 cases NOT SUPPORTED, counted and listed with the reason, never a
// failure; the even page sizes are judged, so the claim is exercised and the run certified.
TEST(PluginConformanceV2, DeclinedPageSizesAreNotSupportedNotFailed) {
  const auto rep = certify_with(PLUGIN_PAGED_DECLINES_ODD_PAGES, {"R21"});
  ASSERT_EQ(rep.results.size(), 1u);
  const auto& r = rep.results[0];
  EXPECT_EQ(r.verdict, conformance::Verdict::pass) << describe(r);
  EXPECT_TRUE(r.findings.empty());
  EXPECT_GT(r.cases_not_supported, 0) << describe(r);
  EXPECT_GT(r.cases_checked, 0) << describe(r);
  EXPECT_EQ(r.cases_checked + r.cases_not_supported + r.cases_not_exercised, r.cases_run) << describe(r);
  ASSERT_FALSE(r.declined.empty());
  EXPECT_NE(r.declined[0].why.find(": only even page sizes are compiled"), std::string::npos) << r.declined[0].why;
  EXPECT_GT(judged_using(rep, "paged_kv"), 0);
  const auto paged = std::find_if(rep.declines.begin(), rep.declines.end(),
                                  [](const conformance::FeatureDeclines& f) { return f.feature == "paged KV cache"; });
  ASSERT_NE(paged, rep.declines.end()) << rep.table();
  EXPECT_EQ(paged->declined, r.cases_not_supported);
  EXPECT_FALSE(paged->uncovered());
  // Not rep.ok(): a feature whose few drawn cases all had odd page sizes (a window, in the ASan
  // preset's half tier) is rightly uncertified, and which one depends on the tier's case count.
}

}  // namespace
}  // namespace attnv::plugin
