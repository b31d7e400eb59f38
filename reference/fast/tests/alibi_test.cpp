// ALiBi in the references: a hand case whose logits are known exactly (and whose alignment moves
// them), the fast reference against the MPFR oracle on every family with slopes added, the
// slopes' validation, and the backward references agreeing with slopes (the oracle's gradients
// with ALiBi are checked against finite differences in reference/oracle/tests).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "gen/families.h"
#include "gen/rng.h"
#include "problem/validate.h"
#include "reference/fast/fast.h"
#include "reference/fast/tests/agreement.h"
#include "reference/oracle/oracle.h"

namespace attnv::reference {
namespace {

// One query, three keys, zero scores: the logits are ALiBi's alone, -m |j - p_0|.
Case three_keys(Alignment a) {
  Problem p;
  p.shape = {1, 1, 1, 1, 3, 1, 1};
  p.dtype = DType::f64;
  p.alignment = a;
  p.has_alibi = true;
  Case c = make_zero_case(p);
  c.v = {1, 2, 4};
  c.alibi = {1.0};
  return c;
}

TEST(Alibi, HandCaseLogitsAreMinusSlopeTimesDistanceFromTheAlignedPosition) {
  // top_left: p_0 = 0, logits (0, -1, -2); bottom_right: p_0 = Tk - Tq = 2, logits (-2, -1, 0).
  const double e1 = std::exp(-1.0), e2 = std::exp(-2.0), l = 1 + e1 + e2;
  const double top_left = (1 + 2 * e1 + 4 * e2) / l, bottom_right = (e2 + 2 * e1 + 4) / l;
  for (const Alignment a : {Alignment::top_left, Alignment::bottom_right}) {
    const Case c = three_keys(a);
    const double want = a == Alignment::top_left ? top_left : bottom_right;
    const Outputs fast = fast_forward(c), oracle = oracle_forward(c);
    EXPECT_NEAR(fast.out[0], want, 4e-16 * want) << alignment_name(a);
    EXPECT_EQ(fast.out[0], oracle.out[0]) << alignment_name(a);
    EXPECT_NEAR(fast.lse[0], std::log(l), 4e-16) << alignment_name(a);
  }
  EXPECT_GT(std::abs(top_left - bottom_right), 1);  // the corner matters: the mutant's bug shows
}

// The case with a slope per head, uniform in [0, 1) and representable in its dtype, and an
// alignment of either corner.
Case with_slopes(Case c, std::uint64_t seed) {
  c.problem.has_alibi = true;
  c.problem.alignment = seed % 2 ? Alignment::bottom_right : Alignment::top_left;
  gen::Rng rng(seed * 31 + 5);
  c.alibi.resize(static_cast<std::size_t>(c.problem.shape.Hq));
  for (double& m : c.alibi) m = round_to(c.problem.dtype, rng.uniform(0, 1));
  c.id += " +alibi";
  return c;
}

TEST(Alibi, FastReferenceMatchesTheOracleBitForBit) {
  test::Agreement a;
  for (const gen::Family f : gen::all_families())
    for (std::uint64_t seed = 1; seed <= 15; ++seed) {
      if (f == gen::Family::long_rows && seed > 1) continue;
      const Case c = with_slopes(gen::make_case(f, seed, {kAllDTypes[seed % 4], gen::Size::small, false, true}), seed);
      ASSERT_TRUE(check_case(c).empty()) << c.id;
      FastAccuracy acc;
      const Outputs fast = fast_forward(c, {}, nullptr, &acc);
      OracleAccuracy oacc;
      const Outputs oracle = oracle_forward(c, Backend::mpfr, &oacc);
      test::compare(c.id + " out", fast.out, oracle.out, acc.radius.out, acc.resolved.out, oacc.radius.out, a);
      test::compare(c.id + " lse", fast.lse, oracle.lse, acc.radius.lse, acc.resolved.lse, oacc.radius.lse, a);
      const OracleRow row = oracle_row(c, 0, c.problem.shape.Hq - 1, c.problem.shape.Tq - 1);
      EXPECT_EQ(row.lse, oracle.lse[c.li(0, c.problem.shape.Hq - 1, c.problem.shape.Tq - 1)]) << c.id;
    }
  test::report("forward with ALiBi, 10 families x 15 seeds", a);
  EXPECT_TRUE(a.ok()) << a.first_problem;
  EXPECT_GT(a.compared, 1000);
}

TEST(Alibi, SlopesAreOnePerHeadFiniteAndNonNegative) {
  Case c = three_keys(Alignment::top_left);
  EXPECT_TRUE(check_case(c).empty());
  c.alibi = {-0.5};
  auto e = check_case(c);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0], "alibi element 0 is -0.5, expected finite and >= 0");
  c.alibi = {0.5, 0.25};
  e = check_case(c);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0], "alibi has 2 elements, expected 1");
}

TEST(Alibi, FastBackwardMatchesTheOracleBitForBit) {
  test::Agreement a;
  for (const gen::Family f : gen::all_families())
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      if (f == gen::Family::long_rows && seed > 1) continue;
      Case c = with_slopes(gen::make_case(f, seed, {kAllDTypes[seed % 4], gen::Size::small, true, true}), seed);
      FastAccuracy acc;
      const Outputs fast = fast_backward(c, {}, nullptr, &acc);
      OracleAccuracy oacc;
      const Outputs oracle = oracle_backward(c, Backend::mpfr, &oacc);
      test::compare(c.id + " out", fast.out, oracle.out, acc.radius.out, acc.resolved.out, oacc.radius.out, a);
      test::compare(c.id + " dq", fast.dq, oracle.dq, acc.radius.dq, acc.resolved.dq, oacc.radius.dq, a);
      test::compare(c.id + " dk", fast.dk, oracle.dk, acc.radius.dk, acc.resolved.dk, oacc.radius.dk, a);
      test::compare(c.id + " dv", fast.dv, oracle.dv, acc.radius.dv, acc.resolved.dv, oacc.radius.dv, a);
    }
  test::report("backward with ALiBi, 10 families x 8 seeds", a);
  EXPECT_TRUE(a.ok()) << a.first_problem;
  EXPECT_GT(a.compared, 1000);
}

}  // namespace
}  // namespace attnv::reference
