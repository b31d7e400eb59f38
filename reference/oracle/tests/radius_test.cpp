// The error radius is a true bound: computed at LOW precision (20 and 30 digits, where rounding
// errors are visible), every element lies within its radius of the 100-digit value.
#include <gtest/gtest.h>

#include <string>

#include "reference/oracle/mp_real.h"
#include "reference/oracle/oracle_impl.h"
#include "reference/oracle/tests/test_cases.h"

namespace attnv::reference {
namespace {

using namespace oracle_detail;
namespace bmp = boost::multiprecision;

template <unsigned Digits>
using low_real = bmp::number<bmp::cpp_bin_float<Digits>, bmp::et_off>;

template <class Low>
RealOutputs<Low> low_backward(const Case& c, const ReadPlan& plan) {
  return backward_all(c, plan, to_real_inputs<Low>(c, plan, true), 1, true);
}

struct Tightness {
  double worst = 0;  // max |low - exact| / radius
  int elements = 0;
};

// |low - high| <= radius(low) for every element; high (100 digits) stands for the exact value
// (its own error is ~1e-97, far below a 20-digit radius).
template <class Low>
void check_vector(const std::vector<Low>& low, const std::vector<Low>& rad,
                  const std::vector<mp_real>& high, const std::string& what, Tightness& t) {
  ASSERT_EQ(low.size(), high.size()) << what;
  ASSERT_EQ(rad.size(), high.size()) << what;
  int reported = 0;
  for (std::size_t n = 0; n < low.size(); ++n) {
    if (isinf(high[n])) continue;  // lse of a fully masked row: -inf in both
    const mp_real err = abs(mp_real(low[n]) - high[n]);
    const mp_real r = mp_real(rad[n]);
    ++t.elements;
    if (r > 0) t.worst = std::max(t.worst, static_cast<double>(err / r));
    if (err > r && ++reported <= 3)
      ADD_FAILURE() << what << "[" << n << "]: |low - high| = " << static_cast<double>(err)
                    << " > radius " << static_cast<double>(r);
  }
}

template <class Low>
Tightness check_radius(const Case& c) {
  const ReadPlan plan = plan_reads(c, true);
  const RealOutputs<Low> lo = low_backward<Low>(c, plan);
  const RealOutputs<mp_real> hi = backward_all(c, plan, to_real_inputs<mp_real>(c, plan, true), 1);
  Tightness t;
  const std::string what = c.id + " " + describe(c.problem);
  check_vector(lo.out, lo.r_out, hi.out, what + " out", t);
  check_vector(lo.lse, lo.r_lse, hi.lse, what + " lse", t);
  check_vector(lo.dq, lo.r_dq, hi.dq, what + " dq", t);
  check_vector(lo.dk, lo.r_dk, hi.dk, what + " dk", t);
  check_vector(lo.dv, lo.r_dv, hi.dv, what + " dv", t);
  return t;
}

TEST(OracleRadius, BoundsTheLowPrecisionError) {
  Tightness all20, all30;
  for (std::uint64_t seed = 4000; seed < 4150; ++seed) {
    oracle_test::TinyLimits lim;
    if (seed % 3 == 0) lim.value_scale = 30;  // logits in the hundreds
    const Case c = oracle_test::tiny_random_case(seed, true, lim);
    const Tightness t20 = check_radius<low_real<20>>(c);
    const Tightness t30 = check_radius<low_real<30>>(c);
    all20.worst = std::max(all20.worst, t20.worst);
    all30.worst = std::max(all30.worst, t30.worst);
    all20.elements += t20.elements;
  }
  // How tight the radius is (information): a bound 10-1000x above the error is expected from
  // its worst-case sums.
  std::printf("radius check: %d elements; worst error/radius 20 digits %.3g, 30 digits %.3g\n",
              all20.elements, all20.worst, all30.worst);
  EXPECT_GT(all20.worst, 1e-6);  // the radius is not absurdly loose
}

}  // namespace
}  // namespace attnv::reference
