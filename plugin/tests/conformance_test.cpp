// Plugins through the unchanged conformance suite: correct ones pass, mutants fail their
// requirement (including R14 through the read-only mapping of q).
#include <gtest/gtest.h>

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

// Decode through the worker (the caches copied in, appended to in the shared region, copied
// back): the naive plugin passes R21, both decode mutants fail it.
TEST(PluginConformance, DecodeThroughTheWorkerR21) {
  const auto rep = certify(PLUGIN_NAIVE, {"R21"});
  ASSERT_EQ(rep.results.size(), 1u);
  EXPECT_EQ(rep.results[0].verdict, conformance::Verdict::pass) << describe(rep.results[0]);
  EXPECT_GT(rep.results[0].cases_checked, 0);
  EXPECT_EQ(certify(PLUGIN_MUTANT_DECODE_TOP_LEFT, {"R21"}).results.at(0).verdict, conformance::Verdict::fail);
  EXPECT_EQ(certify(PLUGIN_MUTANT_DECODE_APPEND_SHIFTED, {"R21"}).results.at(0).verdict, conformance::Verdict::fail);
}

TEST(PluginConformance, NumericMutantsFailTheirRequirement) {
  EXPECT_EQ(certify(PLUGIN_MUTANT_D_MODEL_SCALE, {"R1"}).results.at(0).verdict, conformance::Verdict::fail);
  EXPECT_EQ(certify(PLUGIN_MUTANT_CAUSAL_OFF_BY_ONE, {"R5"}).results.at(0).verdict, conformance::Verdict::fail);
}

}  // namespace
}  // namespace attnv::plugin
