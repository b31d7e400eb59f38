// Cases small enough to check by hand or by a one-line MPFR computation, and the SPEC rules:
// fully masked rows, the GQA head mapping, and what hidden and visible non-finite values do.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "problem/error.h"
#include "reference/fast/fast.h"
#include "reference/fast/tests/mpfr_util.h"

namespace attnv::reference {
namespace {

Problem problem(std::int64_t Hq, std::int64_t Hkv, std::int64_t Tq, std::int64_t Tk, std::int64_t D) {
  Problem p;
  p.shape = {1, Hq, Hkv, Tq, Tk, D, D};
  p.dtype = DType::f64;
  return p;
}

// The textbook case: query [1, 0], keys [2, 0] and [0, 1], scale 1: logits 2 and 0, weights
// e^2/(e^2+1) and 1/(e^2+1). Values are the identity so O is the weights themselves.
TEST(FastHandCases, TwoKeysTextbookWeights) {
  Problem p = problem(1, 1, 1, 2, 2);
  p.scale = 1.0;
  Case c = make_zero_case(p);
  c.q = {1, 0};
  c.k = {2, 0, 0, 1};
  c.v = {1, 0, 0, 1};
  FastStats stats;
  const Outputs o = fast_forward(c, {}, &stats);
  // The correctly rounded weights (MPFR, and mpmath at 300 bits) are 0.8807970779778824 and
  // 0.11920292202211756; the often-quoted 0.8807970779778823 / 0.11920292202211755 are what plain
  // double arithmetic gives, one ulp below each.
  EXPECT_EQ(o.out[0], 0.8807970779778824);
  EXPECT_EQ(o.out[1], 0.11920292202211756);
  EXPECT_EQ(o.out[0], std::nextafter(0.8807970779778823, 1.0));
  EXPECT_EQ(o.out[1], std::nextafter(0.11920292202211755, 1.0));
  test::Mp w0(2.0);
  mpfr_exp(w0.get(), w0.get(), MPFR_RNDN);
  test::Mp w1(w0);
  mpfr_add_ui(w1.get(), w1.get(), 1, MPFR_RNDN);
  mpfr_div(w0.get(), w0.get(), w1.get(), MPFR_RNDN);
  EXPECT_EQ(o.out[0], w0.to_double());
  // L = log(e^2 + 1), correctly rounded (MPFR).
  test::Mp l(2.0);
  mpfr_exp(l.get(), l.get(), MPFR_RNDN);
  mpfr_add_ui(l.get(), l.get(), 1, MPFR_RNDN);
  mpfr_log(l.get(), l.get(), MPFR_RNDN);
  EXPECT_EQ(o.lse[0], l.to_double());
  EXPECT_EQ(stats.elements, 3);
  EXPECT_EQ(stats.unresolved, 0);
}

TEST(FastHandCases, FullyMaskedRowsAreZeroWithMinusInfLse) {
  Problem p = problem(2, 1, 3, 4, 3);
  p.shape.B = 2;
  p.has_kv_len = true;
  Case c = make_zero_case(p, true);
  for (std::size_t n = 0; n < c.q.size(); ++n) c.q[n] = 0.25 * static_cast<double>(n % 7) - 0.5;
  for (std::size_t n = 0; n < c.k.size(); ++n) c.k[n] = 0.125 * static_cast<double>(n % 5) - 0.25;
  for (std::size_t n = 0; n < c.v.size(); ++n) c.v[n] = static_cast<double>(n % 3) - 1;
  for (std::size_t n = 0; n < c.dout.size(); ++n) c.dout[n] = static_cast<double>(n % 4) - 1.5;
  c.kv_len = {4, 0};  // batch 1 sees nothing
  FastStats stats;
  const Outputs o = fast_backward(c, {}, &stats);
  for (std::int64_t h = 0; h < 2; ++h)
    for (std::int64_t i = 0; i < 3; ++i) {
      EXPECT_EQ(o.lse[c.li(1, h, i)], -std::numeric_limits<double>::infinity());
      EXPECT_TRUE(std::isfinite(o.lse[c.li(0, h, i)]));
      for (std::int64_t d = 0; d < 3; ++d) {
        EXPECT_EQ(o.out[c.oi(1, h, i, d)], 0.0);
        EXPECT_EQ(o.dq[c.qi(1, h, i, d)], 0.0);
      }
    }
  for (std::int64_t j = 0; j < 4; ++j)
    for (std::int64_t d = 0; d < 3; ++d) {
      EXPECT_EQ(o.dk[c.ki(1, 0, j, d)], 0.0);
      EXPECT_EQ(o.dv[c.vi(1, 0, j, d)], 0.0);
    }
  for (const auto* t : {&o.out, &o.dq, &o.dk, &o.dv})
    for (const double x : *t) EXPECT_FALSE(std::isnan(x));
}

// Query head h reads KV head h / G: each head of a GQA case equals a one-head case made of that
// query head and KV head h / G, bit for bit.
TEST(FastHandCases, GqaHeadReadsKvHeadHOverG) {
  Problem p = problem(6, 2, 3, 5, 4);
  Case c = make_zero_case(p);
  for (std::size_t n = 0; n < c.q.size(); ++n) c.q[n] = std::sin(1.7 * static_cast<double>(n));
  for (std::size_t n = 0; n < c.k.size(); ++n) c.k[n] = std::cos(0.9 * static_cast<double>(n));
  for (std::size_t n = 0; n < c.v.size(); ++n) c.v[n] = std::sin(0.3 * static_cast<double>(n) + 1);
  const Outputs all = fast_forward(c);
  for (std::int64_t h = 0; h < 6; ++h) {
    Problem p1 = problem(1, 1, 3, 5, 4);
    p1.scale = p.effective_scale();
    Case one = make_zero_case(p1);
    const std::int64_t hk = h / 3;
    for (std::int64_t i = 0; i < 3; ++i)
      for (std::int64_t d = 0; d < 4; ++d) one.q[one.qi(0, 0, i, d)] = c.q[c.qi(0, h, i, d)];
    for (std::int64_t j = 0; j < 5; ++j)
      for (std::int64_t d = 0; d < 4; ++d) {
        one.k[one.ki(0, 0, j, d)] = c.k[c.ki(0, hk, j, d)];
        one.v[one.vi(0, 0, j, d)] = c.v[c.vi(0, hk, j, d)];
      }
    const Outputs single = fast_forward(one);
    for (std::int64_t i = 0; i < 3; ++i) {
      EXPECT_EQ(single.lse[one.li(0, 0, i)], all.lse[c.li(0, h, i)]) << "h=" << h;
      for (std::int64_t d = 0; d < 4; ++d)
        EXPECT_EQ(single.out[one.oi(0, 0, i, d)], all.out[c.oi(0, h, i, d)]) << "h=" << h;
    }
  }
}

Case nan_case() {
  Problem p = problem(1, 1, 2, 4, 2);
  p.has_kv_len = true;
  Case c = make_zero_case(p, true);
  c.q = {0.5, -1, 1, 0.25};
  c.k = {1, 2, -1, 0.5, 0.75, 0.125, 3, 3};
  c.v = {1, -1, 2, 0.5, -3, 4, 7, 7};
  c.dout = {1, 2, -0.5, 0.25};
  c.kv_len = {3};  // key 3 is hidden
  return c;
}

TEST(FastHandCases, NonFiniteHiddenKeysAreIgnored) {
  const Case clean = nan_case();
  Case dirty = clean;
  dirty.k[6] = std::numeric_limits<double>::quiet_NaN();
  dirty.v[7] = std::numeric_limits<double>::infinity();
  const Outputs a = fast_backward(clean), b = fast_backward(dirty);
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(a.lse, b.lse);
  EXPECT_EQ(a.dq, b.dq);
  EXPECT_EQ(a.dk, b.dk);
  EXPECT_EQ(a.dv, b.dv);
  EXPECT_EQ(b.dk[6], 0.0);
}

TEST(FastHandCases, NonFiniteVisibleValuesThrowNamingTheElement) {
  auto expect_throw = [](Case c, const std::string& needle, bool backward) {
    try {
      if (backward) fast_backward(c); else fast_forward(c);
      ADD_FAILURE() << "no InputError for " << needle;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  Case c = nan_case();
  c.k[3] = std::numeric_limits<double>::quiet_NaN();
  expect_throw(c, "k[b=0,h=0,t=1,d=1]", false);
  c = nan_case();
  c.v[4] = std::numeric_limits<double>::infinity();
  expect_throw(c, "v[b=0,h=0,t=2,d=0]", false);
  c = nan_case();
  c.q[2] = std::numeric_limits<double>::quiet_NaN();
  expect_throw(c, "q[b=0,h=0,t=1,d=0]", false);
  c = nan_case();
  c.dout[1] = std::numeric_limits<double>::quiet_NaN();
  expect_throw(c, "dout[b=0,h=0,t=0,d=1]", true);
  // A bias of -inf hides its key (no error); NaN or +inf on a visible key is an error.
  c = nan_case();
  c.problem.has_bias = true;
  c.bias.assign(8, 0.0);
  c.bias[c.bi(0, 0, 0, 1)] = -std::numeric_limits<double>::infinity();
  EXPECT_NO_THROW(fast_backward(c));
  c.bias[c.bi(0, 0, 1, 2)] = std::numeric_limits<double>::quiet_NaN();
  expect_throw(c, "bias[b=0,h=0,i=1,j=2]", false);
}

TEST(FastHandCases, WrongTensorSizeIsAnInputError) {
  Case c = nan_case();
  c.v.pop_back();
  EXPECT_THROW(fast_forward(c), InputError);
  c = nan_case();
  c.dout.clear();
  EXPECT_THROW(fast_backward(c), InputError);
}

}  // namespace
}  // namespace attnv::reference
