// Attention sinks in the references: the fast reference against the MPFR oracle on every family
// with sinks added (bit for bit where the fast radius decides), a row with no visible key giving
// O = 0 and L = the sink, and the sink's effect visible (dropping it moves the results).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "gen/families.h"
#include "gen/rng.h"
#include "problem/error.h"
#include "reference/fast/fast.h"
#include "reference/fast/tests/agreement.h"
#include "reference/oracle/oracle.h"
#include "reference/visibility.h"

namespace attnv::ref {
namespace {

// A family case with sinks: of either sign, now and then dominating the row or far below it.
Case with_sinks(gen::Family f, std::uint64_t seed, DType t) {
  Case c = gen::make_case(f, seed, {t, gen::Size::small, false, true});
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

constexpr DType kDtypes[] = {DType::f32, DType::f16, DType::bf16, DType::f64};

TEST(Sinks, FastReferenceMatchesTheOracleBitForBit) {
  test::Agreement a;
  for (const gen::Family f : gen::all_families())
    for (std::uint64_t seed = 1; seed <= 25; ++seed) {
      const Case c = with_sinks(f, seed, kDtypes[seed % 4]);
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

TEST(Sinks, TheBackwardReferencesRefuseSinksUntilTheyCoverThem) {
  gen::FamilyOptions o;
  Case c = gen::make_case(gen::Family::random, 1, o);
  c.problem.has_sinks = true;
  c.sinks.assign(static_cast<std::size_t>(c.problem.shape.Hq), 0.5);
  EXPECT_THROW(fast_backward(c), InputError);
  EXPECT_THROW(oracle_backward(c), InputError);
}

}  // namespace
}  // namespace attnv::ref
