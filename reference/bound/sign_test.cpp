// The campaign sign test for biased rounding (BOUND.md section 7).
#include <cmath>

#include "reference/bound/bound.h"

namespace attnv::bound {

double mean_signed_error_ulps(const std::vector<double>& out, const std::vector<double>& exact,
                              DType out_dtype) {
  if (out.size() != exact.size()) return 0;
  double sum = 0;
  std::int64_t n = 0;
  for (std::size_t e = 0; e < exact.size(); ++e) {
    const double x = exact[e], o = out[e];
    if (!std::isfinite(x) || x == 0 || !std::isfinite(o)) continue;
    sum += (o - x) * std::copysign(1.0, x) / ulp(out_dtype, x);
    ++n;
  }
  return n ? sum / static_cast<double>(n) : 0;
}

namespace {
// P(X >= k) for X ~ Binomial(n, 1/2), summed in log space (n up to millions is fine).
double binomial_upper_tail_half(std::int64_t n, std::int64_t k) {
  if (k <= 0) return 1;
  if (k > n) return 0;
  const double log_half_n = static_cast<double>(n) * std::log(0.5);
  double total = 0;
  for (std::int64_t x = k; x <= n; ++x) {
    const double lc = std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(x) + 1) -
                      std::lgamma(static_cast<double>(n - x) + 1);
    total += std::exp(lc + log_half_n);
  }
  return std::min(1.0, total);
}
}  // namespace

SignTest sign_test(const std::vector<double>& per_case_means, double alpha) {
  SignTest t;
  for (double m : per_case_means) {
    // Ties (mean exactly 0: every element exact, or none qualifies) carry no sign: dropped,
    // as the sign test does.
    if (!std::isfinite(m) || m == 0) continue;
    ++t.cases;
    if (m < 0) ++t.toward_zero;
  }
  t.share = t.cases ? static_cast<double>(t.toward_zero) / static_cast<double>(t.cases) : 0;
  t.p_value = binomial_upper_tail_half(t.cases, t.toward_zero);
  t.biased = t.cases > 0 && t.p_value < alpha;
  return t;
}

}  // namespace attnv::bound
