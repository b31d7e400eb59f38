#include "selfcheck/selfcheck.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

namespace attnv::selfcheck {
namespace {

// A reduced self-check (the quickstart runs the full one): zero mismatches on every family, and
// the plain f64 naive attention visibly off on the adversarial ones (the reason for dd).
TEST(SelfCheck, FastReferenceMatchesTheOracleOnEveryFamily) {
  SelfCheckOptions opt;
  opt.cases_per_family = 2;
  opt.medium_cases_per_family = 1;
  opt.rows_per_medium_case = 2;
  opt.dtypes = {DType::f16, DType::bf16};
  const SelfCheckReport r = run_selfcheck(opt);
  std::ostringstream text;
  print_selfcheck(r, text);
  EXPECT_TRUE(r.ok()) << text.str();
  const FamilyReport t = r.total();
  EXPECT_EQ(t.cases, 10 * 2 * 3);
  // Bitwise agreement must not be vacuous: on random data the exact value of an element lies
  // within the dd radius (~2^-100 relative) of a rounding boundary with probability ~2^-48, so
  // every element of the random family must be decided. (Adversarial families legitimately
  // leave some undecided: exact cancellation to 0, subnormal gradients, exact ties.)
  ASSERT_EQ(r.families[0].family, "random");
  EXPECT_EQ(r.families[0].unresolved, 0) << text.str();
  EXPECT_GT(r.families[0].resolved, 0);
  EXPECT_GT(t.naive_worst_ulps, 100) << text.str();
  EXPECT_NE(text.str().find("RESULT: PASS (0 mismatches in "), std::string::npos);
}

// A self-check that compares nothing has no evidence: NOT EXERCISED, never PASS; a family left
// without cases is named even when the others compared.
TEST(SelfCheck, NothingComparedIsNotExercisedNotPass) {
  SelfCheckOptions opt;
  opt.cases_per_family = 0;
  opt.medium_cases_per_family = 0;
  SelfCheckReport r = run_selfcheck(opt);
  std::ostringstream text;
  print_selfcheck(r, text);
  EXPECT_FALSE(r.ok()) << text.str();
  EXPECT_EQ(r.not_exercised().size(), r.families.size());
  EXPECT_NE(text.str().find("RESULT: NOT EXERCISED: no element compared in any family"), std::string::npos) << text.str();
  EXPECT_EQ(text.str().find("PASS"), std::string::npos) << text.str();

  r.families[0].compared = 5;  // one family with evidence, the others without
  std::ostringstream partly;
  print_selfcheck(r, partly);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(partly.str().find("no element compared in family large_logits, near_ties"), std::string::npos) << partly.str();
  EXPECT_NE(partly.str().find("(no cases drawn: --cases or --medium-cases above 0)"), std::string::npos);

  r.families[1].cases = 2;  // cases drawn, nothing compared: not a missing option but attnv's defect
  std::ostringstream drawn;
  print_selfcheck(r, drawn);
  EXPECT_NE(drawn.str().find("cases were drawn but no element was compared: an attnv defect"), std::string::npos)
      << drawn.str();
  EXPECT_EQ(drawn.str().find("no cases drawn"), std::string::npos) << drawn.str();
}

// The comparison itself must catch a one-ulp difference in a resolved element, and an unresolved
// element outside its radius; and pass identical values.
TEST(SelfCheck, ComparisonCatchesOneUlp) {
  const std::vector<double> oracle = {0.5, -1.25, 3.0};
  std::vector<double> fast = oracle;
  const std::vector<double> radius = {1e-30, 1e-30, 1e-30}, resolved = {1, 1, 0};
  const std::vector<double> oracle_radius = {1e-97, 1e-97, 1e-97};
  FamilyReport same;
  compare_with_oracle({"out", fast, oracle, radius, resolved, oracle_radius}, {}, "t", same);
  EXPECT_EQ(same.mismatches, 0);
  EXPECT_EQ(same.compared, 3);
  EXPECT_EQ(same.unresolved, 1);
  fast[1] = std::nextafter(fast[1], 0.0);
  fast[2] = 3.0 + 1e-12;  // far outside radius + ulp/2 of the unresolved element
  FamilyReport off;
  compare_with_oracle({"out", fast, oracle, radius, resolved, oracle_radius}, {}, "t", off);
  EXPECT_EQ(off.mismatches, 2);
  ASSERT_FALSE(off.mismatch_examples.empty());
  EXPECT_NE(off.mismatch_examples[0].find("out[1]"), std::string::npos);
}

}  // namespace
}  // namespace attnv::selfcheck
