// Structural properties of the bound on hand-built cases: exact-zero requirements, ordering by
// precision, and bad input. Accuracy against real kernels is calibration_test.cpp's job.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "problem/error.h"
#include "reference/bound/bound.h"
#include "reference/fast/fast.h"

namespace attnv::bound {
namespace {

// B=2, one head, Tq=2, Tk=3, D=2. Batch 1 has kv_len 0 (fully masked rows); batch 0 has
// kv_len 2, so key 2 is hidden from every query of batch 0.
Case small_case(DType t) {
  Problem p;
  p.shape = Shape{2, 1, 1, 2, 3, 2, 2};
  p.dtype = t;
  p.has_kv_len = true;
  Case c = make_zero_case(p, true);
  c.kv_len = {2, 0};
  double x = 0.3;
  for (auto* v : {&c.q, &c.k, &c.v, &c.dout})
    for (double& e : *v) e = (x = std::fmod(x * 3.7 + 0.41, 2.0) - 1.0);
  round_to_storage(c);
  return c;
}

// Plain double values for the "exact" outputs: the bound only needs them approximately.
Outputs approx_exact(const Case& c) {
  const Shape& s = c.problem.shape;
  Outputs o;
  o.out.assign(static_cast<std::size_t>(out_elements(s)), 0.0);
  o.lse.assign(static_cast<std::size_t>(lse_elements(s)), -kInf);
  o.dq.assign(static_cast<std::size_t>(q_elements(s)), 0.0);
  o.dk.assign(static_cast<std::size_t>(k_elements(s)), 0.0);
  o.dv.assign(static_cast<std::size_t>(v_elements(s)), 0.0);
  const double scale = c.problem.effective_scale();
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t i = 0; i < s.Tq; ++i) {
      const std::int64_t n = c.kv_len_of(b);
      if (n == 0) continue;
      double t[3], m = -kInf, l = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        t[j] = 0;
        for (std::int64_t d = 0; d < s.Dk; ++d) t[j] += c.q[c.qi(b, 0, i, d)] * c.k[c.ki(b, 0, j, d)];
        t[j] *= scale;
        m = std::max(m, t[j]);
      }
      for (std::int64_t j = 0; j < n; ++j) l += std::exp(t[j] - m);
      o.lse[c.li(b, 0, i)] = m + std::log(l);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t d = 0; d < s.Dv; ++d)
          o.out[c.oi(b, 0, i, d)] += std::exp(t[j] - m) / l * c.v[c.vi(b, 0, j, d)];
    }
  return o;
}

TEST(ForwardBound, FullyMaskedRowsAndHiddenKeysMustBeExact) {
  const Case c = small_case(DType::f32);
  const Outputs e = approx_exact(c);
  const Bounds b = backward_bound(c, e, PrecisionModel::natural(DType::f32));
  for (std::int64_t i = 0; i < 2; ++i) {
    EXPECT_EQ(b.lse[c.li(1, 0, i)], 0);
    EXPECT_GT(b.lse[c.li(0, 0, i)], 0);
    for (std::int64_t d = 0; d < 2; ++d) {
      EXPECT_EQ(b.out[c.oi(1, 0, i, d)], 0);
      EXPECT_EQ(b.dq[c.qi(1, 0, i, d)], 0);
      EXPECT_GT(b.out[c.oi(0, 0, i, d)], 0);
      EXPECT_GT(b.dq[c.qi(0, 0, i, d)], 0);
    }
  }
  for (std::int64_t d = 0; d < 2; ++d) {
    EXPECT_EQ(b.dk[c.ki(0, 0, 2, d)], 0);  // key 2 is hidden in batch 0
    EXPECT_EQ(b.dv[c.vi(0, 0, 2, d)], 0);
    EXPECT_GT(b.dk[c.ki(0, 0, 1, d)], 0);
    EXPECT_GT(b.dv[c.vi(0, 0, 1, d)], 0);
    for (std::int64_t j = 0; j < 3; ++j) EXPECT_EQ(b.dk[c.ki(1, 0, j, d)], 0);
  }
  // And the comparison holds a kernel to it: a NaN or a nonzero in a masked row fails.
  Outputs k = e;
  EXPECT_TRUE(compare(k, e, b, DType::f32).ok());
  k.out[c.oi(1, 0, 0, 0)] = 1e-40;
  k.lse[c.li(1, 0, 1)] = std::numeric_limits<double>::quiet_NaN();
  k.dv[c.vi(0, 0, 2, 1)] = -1e-45;
  const Comparison cmp = compare(k, e, b, DType::f32);
  EXPECT_EQ(cmp.tensors[0].failures, 1);
  EXPECT_EQ(cmp.tensors[1].failures, 1);
  EXPECT_EQ(cmp.tensors[4].failures, 1);
}

TEST(ForwardBound, OrderedByPrecision) {
  const Case c = small_case(DType::f32);
  const Outputs e = approx_exact(c);
  PrecisionModel f64 = PrecisionModel::natural(DType::f64);
  PrecisionModel f32 = PrecisionModel::natural(DType::f32);
  PrecisionModel p_bf16 = f32;
  p_bf16.p_dtype = DType::bf16;
  PrecisionModel tiled = PrecisionModel::natural(DType::f32, 1);
  const Bounds b64 = forward_bound(c, e, f64), b32 = forward_bound(c, e, f32);
  const Bounds bp = forward_bound(c, e, p_bf16), bt = forward_bound(c, e, tiled);
  for (std::size_t x = 0; x < 4; ++x) {  // batch 0's elements
    EXPECT_LT(b64.out[x], b32.out[x] * 1e-8);
    EXPECT_LT(b32.out[x], bp.out[x]);
    EXPECT_LT(b32.out[x], bt.out[x]);  // more rescales, more roundings
  }
  // f32 accumulation, D = 2, two keys: the bound is a few tens of u, u = 2^-24, times |v| ~ 1.
  EXPECT_LT(b32.out[0], 100 * std::ldexp(1.0, -24));
  EXPECT_GT(b32.out[0], std::ldexp(1.0, -24) * 1e-3);
}

TEST(ForwardBound, SoftcapWidensTheLogitError) {
  Case c = small_case(DType::f32);
  const Outputs e = approx_exact(c);
  const Bounds plain = forward_bound(c, e, PrecisionModel::natural(DType::f32));
  c.problem.softcap = 1e6;  // tanh(x / 1e6) ~ x / 1e6: same values, only more roundings
  const Bounds capped = forward_bound(c, e, PrecisionModel::natural(DType::f32));
  EXPECT_GT(capped.out[0], plain.out[0]);
  EXPECT_GT(capped.lse[0], plain.lse[0]);
}

TEST(ForwardBound, MissingExactTensorsAreInputErrors) {
  const Case c = small_case(DType::f32);
  Outputs e = approx_exact(c);
  e.lse.pop_back();
  EXPECT_THROW(forward_bound(c, e, PrecisionModel::natural(DType::f32)), InputError);
  Outputs f = approx_exact(c);
  f.dk.clear();
  EXPECT_THROW(backward_bound(c, f, PrecisionModel::natural(DType::f32)), InputError);
  Case nod = c;
  nod.dout.clear();
  EXPECT_THROW(backward_bound(nod, approx_exact(c), PrecisionModel::natural(DType::f32)), InputError);
}

}  // namespace
}  // namespace attnv::bound

namespace attnv::bound {
namespace {

// An f16 accumulator over ~1100 keys: gamma_(n + nb) passes 1, where 1 / (1 - gamma) - 1 turned
// negative and every bound of the row with it (88 of 112 on Tq = 7, Tk = 1000). Now nothing is
// negative or NaN: where the model bounds nothing the bound is infinite (and a check whose every
// element has an infinite bound says NOT EXERCISED, properties/checks/reference_checks.cpp);
// short rows keep their finite bounds.
TEST(ForwardBound, F16AccumulatorOverLongRowsIsNeverNegative) {
  for (const std::int64_t tk : {16, 1100}) {
    Problem p;
    p.shape = Shape{1, 1, 1, 7, tk, 4, 4};
    p.dtype = DType::f16;
    Case c = make_zero_case(p);
    double x = 0.3;
    for (auto* v : {&c.q, &c.k, &c.v})
      for (double& e : *v) e = (x = std::fmod(x * 3.7 + 0.41, 2.0) - 1.0);
    round_to_storage(c);
    PrecisionModel m = PrecisionModel::natural(DType::f16);
    m.accum = DType::f16;
    m.p_dtype = DType::f16;
    const Outputs e = reference::fast_forward(c);
    const Bounds b = forward_bound(c, e, m);
    int infinite = 0;
    for (const auto* v : {&b.out, &b.lse})
      for (const double x_b : *v) {
        EXPECT_FALSE(std::isnan(x_b));
        EXPECT_GE(x_b, 0.0) << "Tk = " << tk;
        infinite += std::isinf(x_b);
      }
    if (tk == 16) EXPECT_EQ(infinite, 0);
    else EXPECT_GT(infinite, 0);
  }
}

}  // namespace
}  // namespace attnv::bound
