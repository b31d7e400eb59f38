// The sign test: exact binomial tails, and truncation told apart from rounding.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "reference/bound/bound.h"

namespace attnv::bound {
namespace {

TEST(SignTest, BinomialTailsAreExact) {
  SignTest all = sign_test(std::vector<double>(10, -1.0));
  EXPECT_EQ(all.cases, 10);
  EXPECT_EQ(all.toward_zero, 10);
  EXPECT_NEAR(all.p_value, std::ldexp(1.0, -10), 1e-15);
  EXPECT_FALSE(all.biased);  // 2^-10 > 1e-6: ten cases cannot decide at alpha = 1e-6
  // 9 of 10: (10 + 1) / 1024.
  std::vector<double> nine(10, -1.0);
  nine[0] = 1;
  EXPECT_NEAR(sign_test(nine).p_value, 11.0 / 1024, 1e-14);
  // Zero means (exact answers) are ties: dropped.
  EXPECT_EQ(sign_test({0.0, 0.0, -1.0}).toward_zero, 1);
  EXPECT_EQ(sign_test({0.0, 0.0, -1.0}).cases, 1);
  EXPECT_EQ(sign_test({}).p_value, 1);
}

TEST(SignTest, HalfTowardZeroIsNotBiasedNinetyFivePercentIs) {
  std::vector<double> fair, biased;
  for (int k = 0; k < 200; ++k) {
    fair.push_back(k % 2 ? 0.1 : -0.1);
    biased.push_back(k % 20 == 0 ? 0.1 : -0.1);
  }
  EXPECT_FALSE(sign_test(fair).biased);
  EXPECT_NEAR(sign_test(fair).share, 0.5, 1e-12);
  EXPECT_TRUE(sign_test(biased).biased);
  EXPECT_NEAR(sign_test(biased).share, 0.95, 1e-12);
}

TEST(SignTest, TruncationMeansPointTowardZeroRoundingDoesNot) {
  // Values spread over binades: truncation errs toward zero by half an ulp on average,
  // rounding is unbiased.
  std::vector<double> exact, rounded, truncated;
  double x = 0.123456789;
  for (int k = 0; k < 1000; ++k) {
    x = std::fmod(x * 7.31 + 0.1372, 3.0) - 1.5;
    exact.push_back(x);
    rounded.push_back(round_to(DType::bf16, x));
    truncated.push_back(truncate_to(DType::bf16, x));
  }
  const double mt = mean_signed_error_ulps(truncated, exact, DType::bf16);
  const double mr = mean_signed_error_ulps(rounded, exact, DType::bf16);
  EXPECT_LT(mt, -0.4);
  EXPECT_GT(mt, -0.6);
  EXPECT_LT(std::fabs(mr), 0.05);  // 1000 draws of a uniform(-1/2, 1/2): sd 0.009, 5.5 sd
}

}  // namespace
}  // namespace attnv::bound
