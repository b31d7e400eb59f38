// Attention sinks in the references: the fast reference against the MPFR oracle on every family
// with sinks added (bit for bit where the fast radius decides), a row with no visible key giving
// O = 0 and L = the sink, and the sink's effect visible (dropping it moves the results); the
// backward likewise, the sinks' own gradient included (its finite-difference check against the
// oracle's loss: reference/oracle/tests/gradient_check_test.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "gen/families.h"
#include "gen/rng.h"
#include "problem/error.h"
#include "reference/fast/fast.h"
#include "reference/fast/tests/agreement.h"
#include "reference/oracle/oracle.h"
#include "problem/visibility.h"

namespace attnv::reference {
namespace {

// A family case with sinks: of either sign, now and then dominating the row or far below it.
Case with_sinks(gen::Family f, std::uint64_t seed, DType t, bool with_dout = false) {
  Case c = gen::make_case(f, seed, {t, gen::Size::small, with_dout, true});
  c.problem.has_sinks = true;
  gen::Rng rng(seed * 7919 + 1);
  c.sinks.resize(static_cast<std::size_t>(c.problem.shape.Hq));
  for (double& x : c.sinks) {
    const double r = rng.uniform();
    x = round_to(t, r < 0.15 ? 30 + rng.normal() : r < 0.3 ? -30 + rng.normal() : 3 * rng.normal());
  }
  c.id += " +sinks";
  return c;
}

TEST(Sinks, FastReferenceMatchesTheOracleBitForBit) {
  test::Agreement a;
  for (const gen::Family f : gen::all_families())
    for (std::uint64_t seed = 1; seed <= 25; ++seed) {
      const Case c = with_sinks(f, seed, kAllDTypes[seed % 4]);
      FastAccuracy acc;
      const Outputs fast = fast_forward(c, {}, nullptr, &acc);
      OracleAccuracy oacc;
      const Outputs oracle = oracle_forward(c, Backend::mpfr, &oacc);
      test::compare(c.id + " out", fast.out, oracle.out, acc.radius.out, acc.resolved.out, oacc.radius.out, a);
      test::compare(c.id + " lse", fast.lse, oracle.lse, acc.radius.lse, acc.resolved.lse, oacc.radius.lse, a);
      // oracle_row takes the sink too.
      const OracleRow row = oracle_row(c, 0, c.problem.shape.Hq - 1, 0);
      EXPECT_EQ(row.lse, oracle.lse[c.li(0, c.problem.shape.Hq - 1, 0)]) << c.id;
    }
  test::report("forward with sinks, 10 families x 25 seeds", a);
  EXPECT_TRUE(a.ok()) << a.first_problem;
  EXPECT_GT(a.compared, 1000);
}

TEST(Sinks, ARowWithNoVisibleKeyHasZeroOutputAndTheSinkAsLse) {
  int rows = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    const Case c = with_sinks(gen::Family::fully_masked, seed, DType::f32);
    const Outputs fast = fast_forward(c);
    const Outputs oracle = oracle_forward(c);
    const Shape& s = c.problem.shape;
    for (std::int64_t b = 0; b < s.B; ++b)
      for (std::int64_t i = 0; i < s.Tq; ++i) {
        for (std::int64_t h = 0; h < s.Hq; ++h) {
          if (!visible_keys(c, b, h, i).empty()) continue;
          ++rows;
          EXPECT_EQ(fast.lse[c.li(b, h, i)], c.sinks[static_cast<std::size_t>(h)]) << c.id;
          EXPECT_EQ(oracle.lse[c.li(b, h, i)], c.sinks[static_cast<std::size_t>(h)]) << c.id;
          for (std::int64_t d = 0; d < s.Dv; ++d) EXPECT_EQ(fast.out[c.oi(b, h, i, d)], 0.0) << c.id;
        }
      }
  }
  EXPECT_GT(rows, 20) << "the fully_masked family should give rows with no visible key";
}

// The check can fail: the same case without its sinks differs from the oracle with them.
TEST(Sinks, DroppingTheSinkChangesTheResult) {
  const Case c = with_sinks(gen::Family::random, 3, DType::f64);
  Case without = c;
  without.problem.has_sinks = false;
  without.sinks.clear();
  const Outputs with = oracle_forward(c), plain = fast_forward(without);
  int differ = 0;
  for (std::size_t e = 0; e < with.lse.size(); ++e) differ += std::isfinite(plain.lse[e]) && with.lse[e] != plain.lse[e];
  EXPECT_GT(differ, 0);
}

TEST(Sinks, FastBackwardMatchesTheOracleBitForBit) {
  test::Agreement a;
  int dsinks = 0;
  for (const gen::Family f : gen::all_families())
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      const Case c = with_sinks(f, seed, kAllDTypes[seed % 4], true);
      ASSERT_TRUE(c.has_dout()) << c.id;
      FastAccuracy acc;
      const Outputs fast = fast_backward(c, {}, nullptr, &acc);
      OracleAccuracy oacc;
      const Outputs oracle = oracle_backward(c, Backend::mpfr, &oacc);
      ASSERT_EQ(fast.dsinks.size(), static_cast<std::size_t>(c.problem.shape.Hq)) << c.id;
      ASSERT_EQ(oracle.dsinks.size(), fast.dsinks.size()) << c.id;
      test::compare(c.id + " lse", fast.lse, oracle.lse, acc.radius.lse, acc.resolved.lse, oacc.radius.lse, a);
      test::compare(c.id + " dq", fast.dq, oracle.dq, acc.radius.dq, acc.resolved.dq, oacc.radius.dq, a);
      test::compare(c.id + " dk", fast.dk, oracle.dk, acc.radius.dk, acc.resolved.dk, oacc.radius.dk, a);
      test::compare(c.id + " dv", fast.dv, oracle.dv, acc.radius.dv, acc.resolved.dv, oacc.radius.dv, a);
      test::compare(c.id + " dsinks", fast.dsinks, oracle.dsinks, acc.radius.dsinks, acc.resolved.dsinks,
                    oacc.radius.dsinks, a);
      dsinks += static_cast<int>(fast.dsinks.size());
    }
  test::report("backward with sinks, 10 families x 8 seeds", a);
  EXPECT_TRUE(a.ok()) << a.first_problem;
  EXPECT_GT(dsinks, 80);
}

// dsinks_h = -sum_i P_sink D_i by hand: one row, one key with logit 0 and value v, dO = 1, a sink
// of logit z. P = 1 / (1 + e^z), P_sink = e^z / (1 + e^z), O = P v, D = O, so
// dsinks = -P_sink P v. With z = 0: -v / 4.
TEST(Sinks, TheSinkGradientOfAOneKeyRowIsMinusPsinkTimesD) {
  Problem p;
  p.shape = {1, 1, 1, 1, 1, 1, 1};
  p.dtype = DType::f64;
  p.has_sinks = true;
  Case c = make_zero_case(p, true);
  c.q = {0.0};
  c.k = {0.0};
  c.v = {3.0};
  c.dout = {1.0};
  c.sinks = {0.0};
  const Outputs fast = fast_backward(c), oracle = oracle_backward(c);
  EXPECT_EQ(fast.dsinks[0], -0.75);
  EXPECT_EQ(oracle.dsinks[0], -0.75);
  EXPECT_EQ(fast.dv[0], 0.5);  // P = 1/2: the sink took the other half
}

}  // namespace
}  // namespace attnv::reference
