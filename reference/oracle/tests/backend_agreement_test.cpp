// MPFR and cpp_bin_float are independent code bases at the same precision: after rounding to
// double they must agree bit for bit. Also: rounding to double is correct in both.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>

#include <mpfr.h>

#include "gen/families.h"
#include "reference/oracle/mp_real.h"
#include "reference/oracle/oracle.h"
#include "reference/oracle/oracle_impl.h"
#include "reference/oracle/oracle_rounding.h"
#include "reference/oracle/tests/test_cases.h"

namespace attnv::reference {
namespace {

using oracle_detail::nearest_double;

// Elements must be bitwise equal, except where an element is unresolved (|value| within its
// error radius, exact cancellation): there the two values need only be within the sum of the
// radii. Returns how many elements used that exception.
int compare_outputs(const std::vector<double>& a, const std::vector<double>& ra,
                    const std::vector<double>& b, const std::vector<double>& rb,
                    const std::string& what) {
  EXPECT_EQ(a.size(), b.size()) << what;
  int excused = 0, reported = 0;
  for (std::size_t n = 0; n < a.size() && n < b.size(); ++n) {
    if (std::bit_cast<std::uint64_t>(a[n]) == std::bit_cast<std::uint64_t>(b[n])) continue;
    const bool unresolved = std::abs(a[n]) <= ra[n] || std::abs(b[n]) <= rb[n];
    if (unresolved && std::abs(a[n] - b[n]) <= ra[n] + rb[n]) {
      ++excused;
      continue;
    }
    if (++reported <= 3)
      ADD_FAILURE() << what << " element " << n << ": mpfr " << a[n] << " (radius " << ra[n]
                    << ") vs cpp_bin_float " << b[n] << " (radius " << rb[n] << ")";
  }
  return excused;
}

struct Agreement {
  int excused = 0;
  std::int64_t elements = 0, unresolved = 0;
};

Agreement expect_backends_agree(const Case& c) {
  OracleAccuracy ra, rb;
  const Outputs a = oracle_backward(c, Backend::mpfr, &ra);
  const Outputs b = oracle_backward(c, Backend::cpp_bin_float, &rb);
  const std::string what = c.id + " " + describe(c.problem);
  Agreement ag;
  ag.excused += compare_outputs(a.out, ra.radius.out, b.out, rb.radius.out, what + " out");
  ag.excused += compare_outputs(a.lse, ra.radius.lse, b.lse, rb.radius.lse, what + " lse");
  ag.excused += compare_outputs(a.dq, ra.radius.dq, b.dq, rb.radius.dq, what + " dq");
  ag.excused += compare_outputs(a.dk, ra.radius.dk, b.dk, rb.radius.dk, what + " dk");
  ag.excused += compare_outputs(a.dv, ra.radius.dv, b.dv, rb.radius.dv, what + " dv");
  ag.elements = ra.elements;
  ag.unresolved = ra.unresolved;
  for (const auto* v : {&a.out, &a.dq, &a.dk, &a.dv})
    for (double x : *v) EXPECT_TRUE(std::isfinite(x)) << what;
  // The forward-only path gives the same out and lse as the backward's, radii or not.
  const Outputs f = oracle_forward(c, Backend::mpfr);
  EXPECT_TRUE(oracle_test::bitwise_equal(f.out, a.out)) << what;
  EXPECT_TRUE(oracle_test::bitwise_equal(f.lse, a.lse)) << what;
  return ag;
}

Agreement& operator+=(Agreement& x, const Agreement& y) {
  x.excused += y.excused;
  x.elements += y.elements;
  x.unresolved += y.unresolved;
  return x;
}

void print(const char* name, const Agreement& ag) {
  std::printf("%s: %lld elements, %lld unresolved (mpfr), %d differing within radius\n", name,
              static_cast<long long>(ag.elements), static_cast<long long>(ag.unresolved), ag.excused);
}

TEST(OracleBackends, AgreeBitwiseOnTinyRandomCases) {
  Agreement ag;
  for (std::uint64_t seed = 1000; seed < 1300; ++seed)
    ag += expect_backends_agree(oracle_test::tiny_random_case(seed, true));
  print("tiny random", ag);
  EXPECT_LE(ag.unresolved * 100, ag.elements);  // exact cancellation is rare in random data
}

// Large logits, near ties and cancelling values make the rounding to double hard: the two
// backends must still agree.
TEST(OracleBackends, AgreeBitwiseOnHardTinyCases) {
  oracle_test::TinyLimits lim;
  lim.value_scale = 30;  // logits up to ~1e3
  Agreement ag;
  for (std::uint64_t seed = 2000; seed < 2060; ++seed)
    ag += expect_backends_agree(oracle_test::tiny_random_case(seed, true, lim));
  print("tiny hard", ag);
}

TEST(OracleBackends, AgreeBitwiseOnEverySmallFamily) {
  int cases = 0;
  Agreement ag;
  for (gen::Family f : gen::all_families())
    for (DType t : kAllDTypes)
      for (std::uint64_t seed = 7; seed < 10; ++seed) {
        const Case c = gen::make_case(f, seed, gen::FamilyOptions{t, gen::Size::small, true, true});
        ag += expect_backends_agree(c);
        ++cases;
      }
  EXPECT_GE(cases, 100);
  print("families", ag);
}

// The comparison catches a planted one-ulp difference in a resolved element (the radius is
// ~1e-97 relative, far below an ulp) and in a tiny unresolved element that differs by more
// than the radii.
TEST(OracleBackends, ComparisonCatchesOneUlp) {
  const Case c = oracle_test::tiny_random_case(1001, true);
  OracleAccuracy ra;
  const Outputs a = oracle_backward(c, Backend::mpfr, &ra);
  std::vector<double> bumped = a.out;
  std::size_t n = 0;
  while (n < bumped.size() && bumped[n] == 0) ++n;
  ASSERT_LT(n, bumped.size());
  bumped[n] = std::nextafter(bumped[n], 1e300);
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter quiet(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    compare_outputs(a.out, ra.radius.out, bumped, ra.radius.out, "planted");
    const std::vector<double> tiny_a{1e-110}, tiny_b{-1e-110}, tiny_r{1e-120};
    compare_outputs(tiny_a, tiny_r, tiny_b, tiny_r, "planted tiny");
  }
  EXPECT_EQ(failures.size(), 2);
}

// The thread count does not change a bit: each task writes its own elements.
TEST(OracleBackends, ThreadCountDoesNotChangeResults) {
  for (std::uint64_t seed = 500; seed < 520; ++seed) {
    const Case c = oracle_test::tiny_random_case(seed, true);
    const oracle_detail::ReadPlan plan = oracle_detail::plan_reads(c, true);
    const auto in = oracle_detail::to_real_inputs<mp_real>(c, plan, true);
    const auto one = oracle_detail::backward_all(c, plan, in, 1);
    const auto two = oracle_detail::backward_all(c, plan, in, 2);
    const auto fwd = oracle_detail::forward_all(c, plan, in, 3);
    EXPECT_TRUE(one.dq == two.dq && one.dk == two.dk && one.dv == two.dv && one.out == two.out) << c.id;
    EXPECT_TRUE(one.out == fwd.out) << c.id;
  }
}

// Running MPFR from several threads is safe only if MPFR keeps its caches and exponent range
// per thread (built with TLS); Boost's fixed-precision backend keeps no shared state.
TEST(OracleBackends, MpfrIsBuiltThreadSafe) { EXPECT_NE(mpfr_buildopt_tls_p(), 0); }

// Doubles near which rounding is delicate: exact midpoints, just off midpoints, subnormals,
// the overflow threshold. Built as sums of doubles, exact in both real types.
template <class Real>
std::vector<Real> delicate_values() {
  std::vector<Real> xs;
  const double bases[] = {1.0, 0x1.fffffffffffffp-1, 3.141592653589793, 0x1p-1022, 0x1p-1074,
                          0x1.8p-1070, 1e-310, 1e300, DBL_MAX, 0x1.c2f7d5a8a79cap-1, 12345.678};
  for (double base : bases)
    for (double sign : {1.0, -1.0}) {
      const double d = sign * base;
      const double half = ulp(DType::f64, d) / 2;
      for (double off : {0.0, half, -half, 0.5 * half, 1.5 * half})
        for (double tiny : {0.0, 0x1p-300, -0x1p-300}) {
          Real x = Real(d) + Real(off);
          if (tiny != 0) x += Real(d) * Real(tiny);  // just off the midpoint, relatively
          xs.push_back(x);
        }
    }
  return xs;
}

double mpfr_nearest(const mp_real& x) { return mpfr_get_d(x.backend().data(), MPFR_RNDN); }

TEST(OracleRounding, NearestDoubleMatchesMpfrInBothTypes) {
  const auto mp = delicate_values<mp_real>();
  const auto chk = delicate_values<mp_check_real>();
  ASSERT_EQ(mp.size(), chk.size());
  int boost_cast_wrong = 0;
  for (std::size_t n = 0; n < mp.size(); ++n) {
    const double want = mpfr_nearest(mp[n]);
    const double got_mp = nearest_double(mp[n]);
    const double got_chk = nearest_double(chk[n]);
    EXPECT_EQ(std::bit_cast<std::uint64_t>(got_mp), std::bit_cast<std::uint64_t>(want == 0 ? 0.0 : want)) << n;
    EXPECT_EQ(std::bit_cast<std::uint64_t>(got_chk), std::bit_cast<std::uint64_t>(want == 0 ? 0.0 : want)) << n;
    if (static_cast<double>(chk[n]) != want) ++boost_cast_wrong;
  }
  // Information, not a requirement: how often Boost's own cpp_bin_float -> double conversion
  // differs from the correctly rounded value (nearest_double does not rely on it).
  std::printf("cpp_bin_float static_cast<double> wrong on %d of %zu delicate values\n",
              boost_cast_wrong, mp.size());
}

// The checker catches a planted rounding bug: truncation differs from nearest on midpoints+.
TEST(OracleRounding, TiesGoToEvenAndTruncationIsCaught) {
  const double one_plus = 1 + 0x1p-52;  // odd last bit
  EXPECT_EQ(nearest_double(mp_check_real(1) + mp_check_real(0x1p-53)), 1.0);  // tie: to even
  EXPECT_EQ(nearest_double(mp_check_real(one_plus) + mp_check_real(0x1p-53)), 1 + 0x1p-51);
  EXPECT_EQ(nearest_double(mp_real(1) + mp_real(0x1p-53) + mp_real(0x1p-200)), one_plus);
  EXPECT_EQ(nearest_double(mp_check_real(DBL_MAX) + mp_check_real(0x1p970)),
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(nearest_double(mp_check_real(DBL_MAX) + mp_check_real(0x1p969)), DBL_MAX);
}

}  // namespace
}  // namespace attnv::reference
