// Cases whose answers are known in closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reference/oracle/oracle.h"
#include "reference/oracle/tests/test_cases.h"

namespace attnv::reference {
namespace {

Problem one_head(std::int64_t Tq, std::int64_t Tk, std::int64_t Dk, std::int64_t Dv) {
  Problem p;
  p.dtype = DType::f64;
  p.shape = Shape{1, 1, 1, Tq, Tk, Dk, Dv};
  return p;
}

// Query [1,0], keys [2,0] and [0,1], scale 1: logits 2 and 0, weights 1/(1+e^-2) and
// 1/(1+e^2). Expected doubles are the correctly rounded values, from mpmath at 60 digits
// (the naive double evaluation gives 0x1.c2f7d5a8a79c9p-1, one ulp low).
TEST(OracleHandCases, TwoKeysTextbookForwardAndBackward) {
  Problem p = one_head(1, 2, 2, 2);
  p.scale = 1.0;
  Case c = make_zero_case(p, true);
  c.q = {1, 0};
  c.k = {2, 0, 0, 1};
  c.v = {1, 0, 0, 1};
  c.dout = {1, 0};
  const double p0 = 0x1.c2f7d5a8a79cap-1;   // 0.8807970779778824
  const double p1 = 0x1.e84152bac31afp-4;   // 0.11920292202211756
  const double lse = 0x1.103f2d54301d5p+1;  // log(e^2 + 1)
  const double p0p1 = 0x1.ae0dc0f990c45p-4; // P0 P1 = 0.10499358540350652
  for (Backend be : {Backend::mpfr, Backend::cpp_bin_float}) {
    const Outputs f = oracle_forward(c, be);
    EXPECT_EQ(f.out, (std::vector<double>{p0, p1}));
    EXPECT_EQ(f.lse, (std::vector<double>{lse}));
    // Loss O_0 = P_0: dV_j = P_j dO; dP = [1, 1]; D = P0; dS = [P0 P1, -P0 P1];
    // dQ = dS0 k0 + dS1 k1 = [2 P0 P1, -P0 P1]; dK_j = dS_j q.
    const Outputs g = oracle_backward(c, be);
    EXPECT_EQ(g.out, f.out);
    EXPECT_EQ(g.dv, (std::vector<double>{p0, 0, p1, 0}));
    EXPECT_EQ(g.dq, (std::vector<double>{2 * p0p1, -p0p1}));
    EXPECT_EQ(g.dk, (std::vector<double>{p0p1, 0, -p0p1, 0}));
  }
}

// Uniform weights (q = 0) and v_j = j: each output is the mean of the visible key indices, exact.
TEST(OracleHandCases, CausalAlignmentsWithTqDifferentFromTk) {
  Problem p = one_head(2, 4, 1, 1);
  p.causal = true;
  Case c = make_zero_case(p);
  c.v = {0, 1, 2, 3};
  c.problem.alignment = Alignment::top_left;  // p_i = i: row 0 sees {0}, row 1 sees {0, 1}
  EXPECT_EQ(oracle_forward(c).out, (std::vector<double>{0, 0.5}));
  c.problem.alignment = Alignment::bottom_right;  // p_i = i + 2: {0,1,2} and {0,1,2,3}
  EXPECT_EQ(oracle_forward(c).out, (std::vector<double>{1, 1.5}));
  c.problem.window = Window{1, 0};  // p_i - 1 <= j <= p_i: {1,2} and {2,3}
  EXPECT_EQ(oracle_forward(c).out, (std::vector<double>{1.5, 2.5}));
  c.problem.alignment = Alignment::top_left;  // {0} and {0,1}
  EXPECT_EQ(oracle_forward(c).out, (std::vector<double>{0, 0.5}));
  // Bottom-right with Tq > Tk: the first rows see nothing (O = 0, L = -inf).
  Problem p2 = one_head(4, 2, 1, 1);
  p2.causal = true;
  p2.alignment = Alignment::bottom_right;  // p_i = i - 2
  Case c2 = make_zero_case(p2);
  c2.v = {4, 6};
  const Outputs f = oracle_forward(c2);
  EXPECT_EQ(f.out, (std::vector<double>{0, 0, 4, 5}));
  EXPECT_EQ(f.lse, (std::vector<double>{-kInf, -kInf, 0, 0x1.62e42fefa39efp-1}));
}

// Every way a row can lose all its keys: O = 0, L = -inf, zero gradients, never NaN.
TEST(OracleHandCases, FullyMaskedRowsGiveZeroAndMinusInfinity) {
  Problem p = one_head(3, 3, 2, 2);
  p.shape.B = 2;
  p.has_mask = true;
  p.has_bias = true;
  p.has_kv_len = true;
  Case c = make_zero_case(p, true);
  for (double& x : c.q) x = 0.5;
  // k = 0: every logit is 0, so L = log 3 for the one row that sees its keys.
  for (double& x : c.v) x = 3;
  for (double& x : c.dout) x = 1;
  c.kv_len = {3, 0};  // batch 1: no keys at all
  c.mask[c.mi(0, 0, 0, 0)] = c.mask[c.mi(0, 0, 0, 1)] = c.mask[c.mi(0, 0, 0, 2)] = 0;  // row 0: masked out
  c.bias[c.bi(0, 0, 1, 0)] = c.bias[c.bi(0, 0, 1, 1)] = c.bias[c.bi(0, 0, 1, 2)] = -kInf;  // row 1: -inf bias
  for (Backend be : {Backend::mpfr, Backend::cpp_bin_float}) {
    const Outputs g = oracle_backward(c, be);
    for (std::int64_t b = 0; b < 2; ++b)
      for (std::int64_t i = 0; i < 3; ++i) {
        const bool masked = b == 1 || i < 2;
        EXPECT_EQ(g.lse[c.li(b, 0, i)], masked ? -kInf : 0x1.193ea7aad030bp+0) << b << ' ' << i;
        for (std::int64_t d = 0; d < 2; ++d) {
          EXPECT_EQ(g.out[c.oi(b, 0, i, d)], masked ? 0.0 : 3.0);
          // Row 2 of batch 0: all v equal, so dS = 0 and dQ = 0 exactly; masked rows: 0.
          EXPECT_EQ(g.dq[c.qi(b, 0, i, d)], 0.0);
        }
      }
    for (std::int64_t j = 0; j < 3; ++j)
      for (std::int64_t d = 0; d < 2; ++d) {
        EXPECT_EQ(g.dv[c.vi(1, 0, j, d)], 0.0);  // batch 1: no key is read
        EXPECT_EQ(g.dk[c.ki(1, 0, j, d)], 0.0);
        EXPECT_EQ(g.dv[c.vi(0, 0, j, d)], 1.0 / 3.0);  // only row 2 reads them, P = 1/3
      }
  }
}

// Query head h reads KV head h / G (repeat_interleave), not h % Hkv (tile). With one key per
// KV head, O of head h is exactly v of its KV head, and dV of a KV head sums its G heads' dO.
TEST(OracleHandCases, GroupedHeadsMapHeadOverGroup) {
  Problem p = one_head(1, 1, 1, 1);
  p.shape.Hq = 4;
  p.shape.Hkv = 2;
  Case c = make_zero_case(p, true);
  c.v = {10, 20};             // KV head 0, KV head 1
  c.dout = {1, 2, 4, 8};      // per query head
  const Outputs g = oracle_backward(c);
  EXPECT_EQ(g.out, (std::vector<double>{10, 10, 20, 20}));  // tile mapping: 10, 20, 10, 20
  EXPECT_EQ(g.dv, (std::vector<double>{1 + 2, 4 + 8}));    // tile mapping: 1+4, 2+8
}

// Softcap: t = c tanh(r / c). One query [1], keys [2.5], [0] with scale 1: P0 = 1/(1+exp(-t0)),
// t0 = 1.5 tanh(2.5/1.5) ~ 1.40. Error of the closed form in double, in units u = 2^-53:
// t0 relative <= 0.5 (divide) + 1 (glibc tanh, < 1 ulp) + 0.5 (multiply) = 2, so |dt0| <= 2.8u;
// exp(-t0) relative <= 1 + 2.8 = 3.8; through 1 + x it is damped by x/(1+x) = 1 - P0 ~ 0.2:
// 0.8 + 0.5 (add); the reciprocal adds 0.5. Total <= 1.8u relative, i.e. < 2 ulp of P0 (P0 in
// [0.5, 1) where ulp = u), plus the oracle's own 0.5 ulp: the check is 4 ulp(P0). A missing
// softcap moves P0 by more than 1e-2.
TEST(OracleHandCases, SoftcapMatchesClosedForm) {
  Problem p = one_head(1, 2, 1, 1);
  p.scale = 1.0;
  p.softcap = 1.5;
  Case c = make_zero_case(p);
  c.q = {1};
  c.k = {2.5, 0};
  c.v = {1, 0};
  const double t0 = 1.5 * std::tanh(2.5 / 1.5);
  const double p0 = 1 / (1 + std::exp(-t0));
  const double out = oracle_forward(c).out[0];
  EXPECT_LE(std::abs(out - p0), 4 * ulp(DType::f64, p0));
  EXPECT_GT(std::abs(out - 1 / (1 + std::exp(-2.5))), 1e-2);  // the softcap does matter here
}

// oracle_row gives exactly the row of oracle_forward.
TEST(OracleHandCases, RowEqualsForwardRow) {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const Case c = oracle_test::tiny_random_case(seed, false);
    OracleAccuracy acc;
    const Outputs f = oracle_forward(c, Backend::mpfr, &acc);
    const Shape& s = c.problem.shape;
    for (std::int64_t b = 0; b < s.B; ++b)
      for (std::int64_t h = 0; h < s.Hq; ++h)
        for (std::int64_t i = 0; i < s.Tq; ++i) {
          const OracleRow r = oracle_row(c, b, h, i, Backend::mpfr, /*with_radius=*/true);
          const auto at = static_cast<std::ptrdiff_t>(c.oi(b, h, i, 0));
          const std::vector<double> want(f.out.begin() + at, f.out.begin() + at + s.Dv);
          const std::vector<double> want_r(acc.radius.out.begin() + at,
                                           acc.radius.out.begin() + at + s.Dv);
          EXPECT_TRUE(oracle_test::bitwise_equal(r.out, want)) << c.id;
          EXPECT_TRUE(oracle_test::bitwise_equal({r.lse}, {f.lse[c.li(b, h, i)]})) << c.id;
          EXPECT_TRUE(oracle_test::bitwise_equal(r.out_radius, want_r)) << c.id;
          EXPECT_TRUE(oracle_test::bitwise_equal({r.lse_radius}, {acc.radius.lse[c.li(b, h, i)]}))
              << c.id;
        }
  }
}

}  // namespace
}  // namespace attnv::reference
