// Double-double building blocks against MPFR: error-free transformations are exact, every
// operation stays within its published bound (dd.h), and decides_rounding never claims a
// rounding that a point of the interval would contradict.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "gen/rng.h"
#include "reference/fast/dd.h"
#include "reference/fast/resolve.h"
#include "reference/fast/tests/mpfr_util.h"

namespace attnv::reference {
namespace {

using dd::DD;
using test::Mp;

DD random_dd(gen::Rng& rng) {
  const double hi = std::ldexp(rng.uniform(-1, 1), static_cast<int>(rng.uniform_int(-60, 60)));
  const double ulp = std::nextafter(std::fabs(hi), INFINITY) - std::fabs(hi);
  return dd::fast_two_sum(hi, rng.uniform(-0.5, 0.5) * ulp);
}

TEST(DdArith, ErrorFreeTransformationsAreExact) {
  gen::Rng rng(11);
  for (int n = 0; n < 20000; ++n) {
    const double a = random_dd(rng).hi, b = random_dd(rng).hi;
    Mp sum(a), prod(a);
    mpfr_add_d(sum.get(), sum.get(), b, MPFR_RNDN);
    mpfr_mul_d(prod.get(), prod.get(), b, MPFR_RNDN);
    ASSERT_EQ(test::abs_error(dd::two_sum(a, b), sum), 0.0) << a << " " << b;
    ASSERT_EQ(test::abs_error(dd::two_prod(a, b), prod), 0.0) << a << " " << b;
    const double big = std::fabs(a) >= std::fabs(b) ? a : b, small = big == a ? b : a;
    ASSERT_EQ(test::abs_error(dd::fast_two_sum(big, small), sum), 0.0);
  }
}

TEST(DdArith, OperationsWithinPublishedBounds) {
  gen::Rng rng(12);
  double worst[6] = {};
  for (int n = 0; n < 20000; ++n) {
    const DD x = random_dd(rng), y = random_dd(rng);
    const double yd = y.hi;
    Mp e;
    mpfr_add(e.get(), Mp(x).get(), Mp(y).get(), MPFR_RNDN);
    worst[0] = std::max(worst[0], test::rel_error_u2(dd::add(x, y), e));
    mpfr_mul(e.get(), Mp(x).get(), Mp(y).get(), MPFR_RNDN);
    worst[1] = std::max(worst[1], test::rel_error_u2(dd::mul(x, y), e));
    mpfr_div(e.get(), Mp(x).get(), Mp(y).get(), MPFR_RNDN);
    worst[2] = std::max(worst[2], test::rel_error_u2(dd::div(x, y), e));
    mpfr_add_d(e.get(), Mp(x).get(), yd, MPFR_RNDN);
    worst[3] = std::max(worst[3], test::rel_error_u2(dd::add_d(x, yd), e));
    mpfr_mul_d(e.get(), Mp(x).get(), yd, MPFR_RNDN);
    worst[4] = std::max(worst[4], test::rel_error_u2(dd::mul_d(x, yd), e));
    mpfr_div_d(e.get(), Mp(x).get(), yd, MPFR_RNDN);
    worst[5] = std::max(worst[5], test::rel_error_u2(dd::div_d(x, yd), e));
  }
  const char* names[6] = {"add", "mul", "div", "add_d", "mul_d", "div_d"};
  const double bounds[6] = {3, 4, 15, 2, 2, 3};
  for (int k = 0; k < 6; ++k) {
    std::printf("[ measured ] dd %s: max relative error %.3f u^2 (bound %.0f)\n", names[k], worst[k], bounds[k]);
    EXPECT_LE(worst[k], bounds[k]) << names[k];
  }
}

TEST(DdArith, ToDoubleIsCorrectlyRounded) {
  gen::Rng rng(13);
  for (int n = 0; n < 20000; ++n) {
    const DD x = random_dd(rng);
    ASSERT_EQ(dd::to_double(x), Mp(x).to_double());
  }
  // A tie goes to even.
  const double one_ulp = 0x1p-52;
  EXPECT_EQ(dd::to_double(dd::fast_two_sum(1.0 + one_ulp, one_ulp / 2)), 1.0 + 2 * one_ulp);
}

TEST(DdArith, DecidesRoundingOnlyWhenTheIntervalAgrees) {
  gen::Rng rng(14);
  int decided = 0, undecided = 0;
  for (int n = 0; n < 20000; ++n) {
    const DD x = random_dd(rng);
    const double radius = std::ldexp(std::fabs(x.hi), -static_cast<int>(rng.uniform_int(45, 110)));
    const bool says = dd::decides_rounding(x, radius);
    // Truth: both ends of the interval round to the same double (checked in MPFR).
    Mp lo(x), hi(x);
    mpfr_sub_d(lo.get(), lo.get(), radius, MPFR_RNDN);
    mpfr_add_d(hi.get(), hi.get(), radius, MPFR_RNDN);
    const bool truth = lo.to_double() == hi.to_double();
    if (says) {
      ASSERT_TRUE(truth) << x.hi << " + " << x.lo << " radius " << radius;
      ASSERT_EQ(dd::to_double(x), lo.to_double());
      ++decided;
    } else {
      ++undecided;
    }
  }
  // Both outcomes occur, so the check above is not vacuous.
  EXPECT_GT(decided, 1000);
  EXPECT_GT(undecided, 1000);
  EXPECT_TRUE(dd::decides_rounding({1.5, 0}, 0));
  EXPECT_FALSE(dd::decides_rounding({1.0, 0x1p-53}, 0x1p-80));  // a midpoint is never decided
  EXPECT_FALSE(dd::decides_rounding({NAN, 0}, 0));
}

}  // namespace
}  // namespace attnv::reference
