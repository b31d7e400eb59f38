// Masks and biases with their own batch and head extents ([B|1, Hq|1, Tq, Tk]) in the references:
// the fast reference against the MPFR oracle, forward and backward, on every family with its
// mask and bias spread into per-batch and per-head planes that differ; a broadcast that equals
// its [Tq, Tk] original gives the same bits; and the planes matter (reading plane 0 for every
// head, the zoo's mask_head0, changes the result).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "gen/families.h"
#include "gen/rng.h"
#include "reference/fast/fast.h"
#include "reference/fast/tests/agreement.h"
#include "reference/oracle/oracle.h"
#include "problem/visibility.h"

namespace attnv::reference {
namespace {

// The case's [Tq, Tk] mask and bias (or fresh ones) as planes of `d` extents: plane 0 keeps the
// original, the others are redrawn (the mask flips ~1/4 of its entries, the bias moves by a
// normal draw), so a reader of the wrong plane sees different values.
Case spread(Case c, Leading mask_dims, Leading bias_dims, std::uint64_t seed) {
  Problem& p = c.problem;
  const Shape& s = p.shape;
  gen::Rng rng(seed * 104729 + 7);
  const std::int64_t plane = s.Tq * s.Tk;
  if (!p.has_mask) {
    p.has_mask = true;
    c.mask.assign(static_cast<std::size_t>(plane), 1);
  }
  if (!p.has_bias) {
    p.has_bias = true;
    c.bias.assign(static_cast<std::size_t>(plane), 0.0);
  }
  const std::vector<std::uint8_t> mask0 = c.mask;
  const std::vector<double> bias0 = c.bias;
  p.mask_dims = mask_dims;
  p.bias_dims = bias_dims;
  c.mask.resize(static_cast<std::size_t>(mask_elements(p)));
  c.bias.resize(static_cast<std::size_t>(bias_elements(p)));
  for (std::size_t n = 0; n < c.mask.size(); ++n) {
    const std::uint8_t m = mask0[n % mask0.size()];
    c.mask[n] = n < mask0.size() ? m : static_cast<std::uint8_t>(rng.bernoulli(0.25) ? !m : m);
  }
  for (std::size_t n = 0; n < c.bias.size(); ++n) {
    const double b = bias0[n % bias0.size()];
    c.bias[n] = n < bias0.size() || !std::isfinite(b) ? b : round_to(p.dtype, b + rng.normal());
  }
  c.id += " +planes";
  return c;
}

constexpr Leading kDims[] = {{true, false}, {false, true}, {true, true}};

TEST(Broadcast, FastReferenceMatchesTheOracleForwardAndBackward) {
  test::Agreement a;
  for (const gen::Family f : gen::all_families())
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
      if (f == gen::Family::long_rows && seed > 1) continue;  // 4096+ keys: one is enough
      const Case base = gen::make_case(f, seed, {kAllDTypes[seed % 4], gen::Size::small, true, true});
      const Case c = spread(base, kDims[seed % 3], kDims[(seed + 1) % 3], seed);
      FastAccuracy acc;
      const Outputs fast = fast_backward(c, {}, nullptr, &acc);
      OracleAccuracy oacc;
      const Outputs oracle = oracle_backward(c, Backend::mpfr, &oacc);
      test::compare(c.id + " out", fast.out, oracle.out, acc.radius.out, acc.resolved.out, oacc.radius.out, a);
      test::compare(c.id + " lse", fast.lse, oracle.lse, acc.radius.lse, acc.resolved.lse, oacc.radius.lse, a);
      test::compare(c.id + " dq", fast.dq, oracle.dq, acc.radius.dq, acc.resolved.dq, oacc.radius.dq, a);
      test::compare(c.id + " dk", fast.dk, oracle.dk, acc.radius.dk, acc.resolved.dk, oacc.radius.dk, a);
      test::compare(c.id + " dv", fast.dv, oracle.dv, acc.radius.dv, acc.resolved.dv, oacc.radius.dv, a);
      // The forward alone and one oracle row read the same planes.
      const Outputs fwd = fast_forward(c);
      for (std::size_t e = 0; e < fwd.out.size(); ++e) ASSERT_EQ(fwd.out[e], fast.out[e]) << c.id << " element " << e;
      const std::int64_t b = c.problem.shape.B - 1, h = c.problem.shape.Hq - 1;
      const OracleRow row = oracle_row(c, b, h, 0);
      EXPECT_EQ(row.lse, oracle.lse[c.li(b, h, 0)]) << c.id;
    }
  test::report("mask and bias planes, 10 families x 12 seeds, forward and backward", a);
  EXPECT_TRUE(a.ok()) << a.first_problem;
  EXPECT_GT(a.compared, 1000);
}

// Planes that all equal the [Tq, Tk] original are that original, bit for bit.
TEST(Broadcast, IdenticalPlanesGiveTheBroadcastResult) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const Case base = gen::make_case(gen::Family::random, seed, {kAllDTypes[seed % 4], gen::Size::small, false, true});
    if (!base.problem.has_mask && !base.problem.has_bias) continue;
    Case c = base;
    c.problem.mask_dims = base.problem.has_mask ? kDims[seed % 3] : Leading{};
    c.problem.bias_dims = base.problem.has_bias ? kDims[(seed + 2) % 3] : Leading{};
    c.mask.resize(base.problem.has_mask ? static_cast<std::size_t>(mask_elements(c.problem)) : 0);
    c.bias.resize(base.problem.has_bias ? static_cast<std::size_t>(bias_elements(c.problem)) : 0);
    for (std::size_t n = 0; n < c.mask.size(); ++n) c.mask[n] = base.mask[n % base.mask.size()];
    for (std::size_t n = 0; n < c.bias.size(); ++n) c.bias[n] = base.bias[n % base.bias.size()];
    const Outputs a = fast_forward(base), b = fast_forward(c);
    for (std::size_t e = 0; e < a.out.size(); ++e)
      ASSERT_TRUE(a.out[e] == b.out[e] || (std::isnan(a.out[e]) && std::isnan(b.out[e]))) << base.id << " out " << e;
    for (std::size_t e = 0; e < a.lse.size(); ++e) ASSERT_EQ(a.lse[e], b.lse[e]) << base.id << " lse " << e;
  }
}

// The check can fail: every head reading the first plane (mask_head0's bug) changes some output.
TEST(Broadcast, ReadingTheFirstPlaneForEveryHeadChangesTheResult) {
  int cases_changed = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const Case base = gen::make_case(gen::Family::random, seed, {DType::f64, gen::Size::small, false, false});
    if (base.problem.shape.Hq * base.problem.shape.B < 2) continue;
    const Case c = spread(base, {true, true}, {true, true}, seed);
    Case first = c;  // every plane a copy of plane 0
    const std::size_t plane = static_cast<std::size_t>(c.problem.shape.Tq * c.problem.shape.Tk);
    for (std::size_t n = plane; n < first.mask.size(); ++n) first.mask[n] = c.mask[n % plane];
    for (std::size_t n = plane; n < first.bias.size(); ++n) first.bias[n] = c.bias[n % plane];
    const Outputs a = oracle_forward(c), b = oracle_forward(first);
    bool differ = false;
    for (std::size_t e = 0; e < a.lse.size() && !differ; ++e) differ = a.lse[e] != b.lse[e];
    cases_changed += differ;
  }
  EXPECT_GT(cases_changed, 3);
}

// Visibility reads the row's own plane: a key hidden in head 1's mask only is hidden from head 1 only.
TEST(Broadcast, VisibilityReadsTheRowsOwnPlane) {
  Problem p;
  p.shape = {2, 2, 1, 1, 3, 1, 1};
  p.has_mask = true;
  p.mask_dims = {false, true};
  p.has_bias = true;
  p.bias_dims = {true, false};
  Case c = make_zero_case(p);
  ASSERT_EQ(c.mask.size(), 2u * 3u);
  ASSERT_EQ(c.bias.size(), 2u * 3u);
  c.mask[c.mi(0, 1, 0, 2)] = 0;                 // head 1 (every batch): key 2 hidden
  c.bias[c.bi(1, 0, 0, 0)] = -INFINITY;         // batch 1 (every head): key 0 hidden
  EXPECT_EQ(visible_keys(c, 0, 0, 0), (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(visible_keys(c, 0, 1, 0), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(visible_keys(c, 1, 0, 0), (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(visible_keys(c, 1, 1, 0), (std::vector<std::int64_t>{1}));
  EXPECT_EQ(c.mi(1, 1, 0, 2), 5u);  // the batch is broadcast: batch 1 reads batch 0's plane of head 1
  EXPECT_EQ(c.bi(1, 1, 0, 2), 5u);  // the head is broadcast
}

}  // namespace
}  // namespace attnv::reference
