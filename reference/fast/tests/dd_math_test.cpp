// dd_math against MPFR (320 bits) over wide ranges, extremes included. Each test prints the
// measured maximum relative error in units of 2^-104 and checks it against the bound the radii
// use (dd_math.h); a planted sloppy exp shows the check can fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>

#include "gen/rng.h"
#include "reference/fast/dd_math.h"
#include "reference/fast/tests/mpfr_util.h"

namespace attnv::reference {
namespace {

using dd::DD;
using test::Mp;

// A normalized double-double near x with a random low part (|lo| <= ulp(x)/2).
DD with_low_part(gen::Rng& rng, double x) {
  const double ulp = std::nextafter(std::fabs(x), INFINITY) - std::fabs(x);
  return dd::fast_two_sum(x, rng.uniform(-0.5, 0.5) * ulp);
}

struct Worst {
  double err_u2 = 0;
  DD at{0, 0};
  void update(double e, DD x) {
    if (e > err_u2) { err_u2 = e; at = x; }
  }
  void print(const char* name) const {
    std::printf("[ measured ] %s: max relative error %.3f x 2^-104 (%.2f u^2) at x = %a + %a\n",
                name, err_u2 / 4, err_u2, at.hi, at.lo);
  }
};

// Max relative error (u^2) of f against the MPFR function mf on the given arguments.
Worst measure(const std::vector<DD>& xs, const std::function<DD(DD)>& f,
              const std::function<void(mpfr_ptr, mpfr_srcptr)>& mf) {
  Worst w;
  for (const DD x : xs) {
    Mp exact;
    mf(exact.get(), Mp(x).get());
    w.update(test::rel_error_u2(f(x), exact), x);
  }
  return w;
}

std::vector<DD> exp_args(std::uint64_t seed) {
  gen::Rng rng(seed);
  std::vector<DD> xs;
  for (int n = 0; n < 20000; ++n) xs.push_back(with_low_part(rng, rng.uniform(-650, 709.7)));
  for (int n = 0; n < 4000; ++n) xs.push_back(with_low_part(rng, rng.uniform(-0.01, 0.01)));
  for (int n = 0; n < 2000; ++n) xs.push_back(with_low_part(rng, std::ldexp(rng.uniform(-1, 1), -static_cast<int>(rng.uniform_int(10, 1000)))));
  for (const double x : {0.0, -0.0, 709.78, 709.0, -650.0, 1.0, -1.0, 0x1p-9, 0.693147180559945})
    xs.push_back({x, 0});
  return xs;
}

TEST(DdMath, ExpWithinBound) {
  const Worst w = measure(exp_args(1), [](DD x) { return dd::exp(x); },
                          [](mpfr_ptr r, mpfr_srcptr x) { mpfr_exp(r, x, MPFR_RNDN); });
  w.print("exp on [-650, 709.7]");
  EXPECT_LE(w.err_u2 * dd::kU2, dd::kExpRelErr);
}

TEST(DdMath, ExpExtremes) {
  EXPECT_EQ(dd::exp({0, 0}).hi, 1.0);
  EXPECT_EQ(dd::exp({0, 0}).lo, 0.0);
  EXPECT_EQ(dd::exp({-746, 0}).hi, 0.0);
  EXPECT_TRUE(std::isinf(dd::exp({710, 0}).hi));
  EXPECT_TRUE(std::isnan(dd::exp({NAN, 0}).hi));
  // Down to underflow: relative error plus the absolute part (the low part, then the result,
  // become subnormal).
  gen::Rng rng(2);
  double worst = 0;
  for (int n = 0; n < 3000; ++n) {
    const DD x = with_low_part(rng, rng.uniform(-750, -650));
    Mp exact;
    mpfr_exp(exact.get(), Mp(x).get(), MPFR_RNDN);
    const double bound = dd::kExpRelErr * exact.to_double() + dd::kExpAbsErr;
    worst = std::max(worst, test::abs_error(dd::exp(x), exact) / bound);
  }
  std::printf("[ measured ] exp on [-750, -650]: max |error| / (kExpRelErr exp(x) + kExpAbsErr) = %.3f\n", worst);
  EXPECT_LE(worst, 1.0);
}

TEST(DdMath, SloppyExpIsCaught) {
  // The planted bug NUMERICS warns about: exp(hi) * (1 + lo). Its error is ~u, far over the bound.
  const Worst w = measure(exp_args(3), [](DD x) { return dd::mul_d(dd::add_d({1, 0}, x.lo), std::exp(x.hi)); },
                          [](mpfr_ptr r, mpfr_srcptr x) { mpfr_exp(r, x, MPFR_RNDN); });
  EXPECT_GT(w.err_u2 * dd::kU2, dd::kExpRelErr * 1e6);
}

TEST(DdMath, LogWithinBound) {
  gen::Rng rng(4);
  std::vector<DD> xs;
  for (int n = 0; n < 8000; ++n) xs.push_back(with_low_part(rng, std::exp(rng.uniform(-700, 700))));
  for (int n = 0; n < 8000; ++n) xs.push_back(with_low_part(rng, rng.uniform(0.5, 4096)));
  for (int n = 0; n < 2000; ++n) xs.push_back(with_low_part(rng, 1 + rng.uniform(-1e-6, 1e-6)));
  xs.push_back({1, 0});
  double worst_ratio = 0;
  Worst rel;
  for (const DD x : xs) {
    Mp exact;
    mpfr_log(exact.get(), Mp(x).get(), MPFR_RNDN);
    const DD y = dd::log(x);
    const double bound = dd::kLogAbsErr + dd::kLogRelErr * std::fabs(y.hi);
    worst_ratio = std::max(worst_ratio, test::abs_error(y, exact) / bound);
    if (mpfr_zero_p(exact.get()) == 0 && std::fabs(y.hi) > 1e-3) rel.update(test::rel_error_u2(y, exact), x);
  }
  rel.print("log (|log x| > 1e-3)");
  std::printf("[ measured ] log: max |error| / (kLogAbsErr + kLogRelErr |log x|) = %.3f\n", worst_ratio);
  EXPECT_LE(worst_ratio, 1.0);
  EXPECT_EQ(dd::log({1, 0}).hi, 0.0);
}

TEST(DdMath, Expm1WithinBound) {
  gen::Rng rng(5);
  std::vector<DD> xs;
  for (int n = 0; n < 10000; ++n) xs.push_back(with_low_part(rng, rng.uniform(-1, 1)));
  for (int n = 0; n < 4000; ++n)
    xs.push_back(with_low_part(rng, std::ldexp(rng.uniform(-1, 1), -static_cast<int>(rng.uniform_int(1, 1000)))));
  for (int n = 0; n < 2000; ++n) xs.push_back(with_low_part(rng, rng.uniform(-40, 40)));
  const Worst w = measure(xs, [](DD x) { return dd::expm1(x); },
                          [](mpfr_ptr r, mpfr_srcptr x) { mpfr_expm1(r, x, MPFR_RNDN); });
  w.print("expm1 on [-40, 40] and tiny arguments");
  EXPECT_LE(w.err_u2 * dd::kU2, dd::kExpm1RelErr);
}

TEST(DdMath, TanhWithinBound) {
  gen::Rng rng(6);
  std::vector<DD> xs;
  for (int n = 0; n < 10000; ++n) xs.push_back(with_low_part(rng, rng.uniform(-3, 3)));
  for (int n = 0; n < 3000; ++n)
    xs.push_back(with_low_part(rng, std::ldexp(rng.uniform(-1, 1), -static_cast<int>(rng.uniform_int(1, 1000)))));
  for (int n = 0; n < 3000; ++n) xs.push_back(with_low_part(rng, rng.uniform(-400, 400)));
  const Worst w = measure(xs, [](DD x) { return dd::tanh(x); },
                          [](mpfr_ptr r, mpfr_srcptr x) { mpfr_tanh(r, x, MPFR_RNDN); });
  w.print("tanh on [-400, 400] and tiny arguments");
  EXPECT_LE(w.err_u2 * dd::kU2, dd::kTanhRelErr);
}

TEST(DdMath, Sech2WithinBound) {
  gen::Rng rng(7);
  std::vector<DD> xs;
  for (int n = 0; n < 10000; ++n) xs.push_back(with_low_part(rng, rng.uniform(-300, 300)));
  for (int n = 0; n < 3000; ++n) xs.push_back(with_low_part(rng, rng.uniform(-1, 1)));
  const Worst w = measure(xs, [](DD x) { return dd::sech2(x); },
                          [](mpfr_ptr r, mpfr_srcptr x) {
                            mpfr_sech(r, x, MPFR_RNDN);
                            mpfr_sqr(r, r, MPFR_RNDN);
                          });
  w.print("sech^2 on [-300, 300]");
  EXPECT_LE(w.err_u2 * dd::kU2, dd::kSech2RelErr);
}

}  // namespace
}  // namespace attnv::reference
