// The acceptance rule and the structured comparison, each shown catching a planted error.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "reference/bound/bound.h"

namespace attnv::bound {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(Accept, OneUlpOffInTheOutputDtypeFailsWithAZeroBound) {
  // exact 1, bf16 ulp at 1 is 2^-7: the half-ulp allowance is 2^-8, plus 2^-53 for the reference.
  EXPECT_TRUE(accept(1.0, 1.0, 0, DType::bf16));
  EXPECT_FALSE(accept(1.0 + std::ldexp(1.0, -7), 1.0, 0, DType::bf16));
  // A value the correct rounding could have produced: exact 1 + 2^-8 (a tie) rounds to 1.
  EXPECT_TRUE(accept(1.0, 1.0 + std::ldexp(1.0, -8), 0, DType::bf16));
  // The bound adds linearly.
  EXPECT_TRUE(accept(1.0 + std::ldexp(1.0, -7), 1.0, std::ldexp(1.0, -8), DType::bf16));
}

TEST(Accept, FullyMaskedRowsMustBeExact) {
  EXPECT_TRUE(accept(-kInf, -kInf, 0, DType::f32));
  EXPECT_FALSE(accept(0.0, -kInf, 0, DType::f32));
  EXPECT_FALSE(accept(kNaN, -kInf, 0, DType::f32));
  EXPECT_FALSE(accept(-1e30, -kInf, 0, DType::f32));
  EXPECT_TRUE(accept(0.0, 0.0, 0, DType::f32));
  EXPECT_TRUE(accept(-0.0, 0.0, 0, DType::f32));
  // Even the smallest subnormal is not zero.
  EXPECT_FALSE(accept(std::ldexp(1.0, -149), 0.0, 0, DType::f32));
  EXPECT_FALSE(accept(kNaN, 0.0, 0, DType::f32));
}

TEST(Accept, NaNFailsWhateverTheBound) {
  EXPECT_FALSE(accept(kNaN, 1.0, kInf, DType::f32));
  EXPECT_FALSE(accept(kNaN, 0.0, 0.0, DType::f16));
}

// An infinity is accepted only where correct rounding of a value within the allowance overflows:
// f16 rounds everything >= 65520 (= 65504 + ulp/2) to inf.
TEST(Accept, InfinityOnlyWhereTheAllowanceReachesTheOverflowThreshold) {
  EXPECT_FALSE(accept(kInf, 1.0, 1.0, DType::f32));         // far from f32's range
  EXPECT_FALSE(accept(kInf, 65000.0, 100.0, DType::f16));   // 65100 < 65520
  EXPECT_TRUE(accept(kInf, 65000.0, 520.0, DType::f16));    // 65520 reached
  EXPECT_TRUE(accept(kInf, 70000.0, 0.0, DType::f16));      // exact itself overflows f16
  EXPECT_FALSE(accept(-kInf, 70000.0, 0.0, DType::f16));    // wrong sign
  EXPECT_TRUE(accept(-kInf, -70000.0, 0.0, DType::f16));
  // A finite output keeps the ordinary rule: the largest f16 is not an answer for 1e6.
  EXPECT_FALSE(accept(65504.0, 1e6, 0.0, DType::f16));
  EXPECT_TRUE(accept(65504.0, 65519.0, 0.0, DType::f16));   // within half an ulp (16)
}

TEST(Compare, CountsFailuresNonFiniteAndTheWorstElement) {
  Outputs exact, kernel;
  Bounds b;
  exact.out = {1.0, 2.0, 3.0, 4.0};
  b.out = {1e-6, 1e-6, 1e-6, 1e-6};
  kernel.out = exact.out;
  Comparison clean = compare(kernel, exact, b, DType::f64);
  ASSERT_EQ(clean.tensors.size(), 1u);
  EXPECT_TRUE(clean.ok());
  EXPECT_EQ(clean.tensors[0].worst_ratio, 0);

  kernel.out[2] += 3e-6;  // planted: three times the bound
  kernel.out[1] += 0.5e-6;  // within
  kernel.out[3] = kNaN;
  Comparison c = compare(kernel, exact, b, DType::f64);
  const TensorReport& t = c.tensors[0];
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(t.elements, 4);
  EXPECT_EQ(t.failures, 2);
  EXPECT_EQ(t.non_finite, 1);
  // The NaN is the worst element, ratio infinity: a headline never hides it behind a finite one.
  EXPECT_EQ(t.worst_index, 3);
  EXPECT_TRUE(std::isinf(t.worst_ratio));
  EXPECT_TRUE(std::isnan(t.worst_out));
  EXPECT_NEAR(t.worst_bound_usage, 3.0, 1e-6);  // f64 output: the roundings are ~1e-16
  EXPECT_NE(c.summary().find("out: 4 elements, 2 failures, 1 non-finite"), std::string::npos);
  // Without the NaN, the worst finite element is named.
  kernel.out[3] = exact.out[3];
  const Comparison finite = compare(kernel, exact, b, DType::f64);
  const TensorReport& f = finite.tensors[0];
  EXPECT_EQ(f.worst_index, 2);
  EXPECT_NEAR(f.worst_ratio, 3.0, 1e-6);
}

// The flush hint asks about flushing only where the error is a few smallest normals of the dtype
// the kernel computes in: f64 kernels flush below 2.2e-308, not below f32's 1.2e-38, so an f64
// error of 1e-38 is no flush (it was asked about), while one of 3.4e-322 may be.
TEST(Compare, TheFlushHintUsesTheComputingDtypesSmallestNormal) {
  Outputs exact, kernel;
  Bounds b;
  exact.dk = {1e-30};
  b.dk = {1e-40};
  kernel.dk = {1e-30 + 1e-38};
  const std::string f64 = compare(kernel, exact, b, DType::f64).summary();
  EXPECT_EQ(f64.find("flushed"), std::string::npos) << f64;
  exact.dk = {4.03e-321};
  b.dk = {1e-322};
  kernel.dk = {4.37e-321};
  const std::string sub = compare(kernel, exact, b, DType::f64).summary();
  EXPECT_NE(sub.find("4 min_normal(f64)"), std::string::npos) << sub;
  EXPECT_NE(sub.find("one that does not has a finding in the subnormal range"), std::string::npos) << sub;
  exact.dk = {1e-40};
  b.dk = {0};
  kernel.dk = {0};
  const std::string f32 = compare(kernel, exact, b, DType::f32).summary();
  EXPECT_NE(f32.find("subnormals flushed to zero?"), std::string::npos) << f32;
}

TEST(Compare, AWrongSizedAnswerFailsEveryElement) {
  Outputs exact, kernel;
  Bounds b;
  exact.lse = {0.5, 0.25, -kInf};
  b.lse = {1, 1, 0};
  kernel.lse = {0.5, 0.25};
  Comparison c = compare(kernel, exact, b, DType::f32);
  ASSERT_EQ(c.tensors.size(), 1u);
  EXPECT_EQ(c.tensors[0].name, "lse");
  EXPECT_EQ(c.tensors[0].failures, 3);
}

TEST(Compare, NonzeroWhereExactZeroIsRequiredIsAnInfiniteRatio) {
  Outputs exact, kernel;
  Bounds b;
  exact.dk = {0.0, 0.0};
  b.dk = {0.0, 0.0};
  kernel.dk = {0.0, 1e-30};
  Comparison c = compare(kernel, exact, b, DType::f32);
  EXPECT_EQ(c.tensors[0].failures, 1);
  EXPECT_TRUE(std::isinf(c.tensors[0].worst_ratio));
}

// Tightness (docs/certificate.md): allowance / |exact| of the judged elements. The median is the
// upper edge of its quarter decade, the maximum exact, and elements allowed at least their own
// size are counted; exact zeros (no relative size) and infinite bounds (nothing judged) are out.
TEST(Tightness, MedianMaximumAndElementsAllowedTheirOwnSize) {
  TightnessHistogram h;
  EXPECT_EQ(h.median_at_most(), 0);
  for (double r : {1e-7, 1.1e-7, 1.2e-7, 1e-3, 5.0}) h.add(r);
  EXPECT_EQ(h.total(), 5);
  EXPECT_GE(h.median_at_most(), 1.2e-7);
  EXPECT_LE(h.median_at_most(), 1.2e-7 * std::pow(10.0, 0.25));
  EXPECT_EQ(h.max, 5.0);
  EXPECT_EQ(h.at_least_own_size(), 1);
  TightnessHistogram wide;
  for (int i = 0; i < 3; ++i) wide.add(HUGE_VAL);
  wide.add(1e-9);
  EXPECT_TRUE(std::isinf(wide.median_at_most()));
  EXPECT_EQ(wide.at_least_own_size(), 3);
  h += wide;
  EXPECT_EQ(h.total(), 9);
  EXPECT_TRUE(std::isinf(h.max));

  // Through compare: exact 1 with bound 1e-6 in f64 (allowance ~1e-6), an exact 0, an infinite
  // bound: one element measured.
  const Outputs exact{{1.0, 0.0, 2.0}, {}, {}, {}, {}, {}};
  Bounds b;
  b.out = {1e-6, 1e-6, HUGE_VAL};
  const Comparison c = compare(exact, exact, b, DType::f64);
  const TightnessHistogram t = c.tightness();
  ASSERT_EQ(t.total(), 1);
  EXPECT_NEAR(t.max, 1e-6, 1e-15);
  EXPECT_EQ(t.at_least_own_size(), 0);
}

}  // namespace
}  // namespace attnv::bound
