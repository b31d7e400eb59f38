#include "reference/fast/dd_math.h"

#include <bit>
#include <cstdint>
#include <limits>

namespace attnv::reference::dd {
namespace {
#include "reference/fast/exp_table.inc"

DD inv_fact(int k) { return {kInvFactHi[k], kInvFactLo[k]}; }

// Sum_{k=first}^{9} r^(k-first) / k! for |r| <= 2^-8 ln2 (first = 0: exp(r); first = 1:
// expm1(r) / r). Levels k >= 5 are evaluated in double: an error of u * 2/5! in that level is
// multiplied by r^(5-first) <= 2^-38 afterwards, below 2^-106 relative. Levels 4..first in
// double-double with the accurate addition: |r * V_(k+1)| < c_k / 100, so nothing cancels and
// each level adds at most 3 u^2 (add) + 4 u^2 |r| (mul) relative, then shrinks by |r| at the
// next level: the sum is <= 3.1 u^2 relative. The truncated tail r^10/10! < 2^-116.
DD taylor(DD r, int first) {
  double s = kInvFactHi[9];
  for (int k = 8; k >= 5; --k) s = std::fma(s, r.hi, kInvFactHi[k]);
  DD v = from(s);
  for (int k = 4; k >= first; --k) v = add(inv_fact(k), mul(v, r));
  return v;
}

}  // namespace

// exp(x) = 2^k * 2^(j2/256) * 2^(j1/65536) * exp(r), n = 65536 k + 256 j2 + j1 =
// round(x * 65536/ln2), r = x - n ln2/65536, |r| <= 5.3e-6 (+ the rounding of x * 65536/ln2).
// Reduction: n * M1 is exact (M1 has 26 bits, |n| < 2^27), the other steps are error-free
// transformations or dd additions with relative error <= 2+3+2 u^2 of |r|: < 0.001 u^2 on exp(r).
// exp(r) = 1 + r + r^2/2 + [r^3/6 + r^4/24 + r^5/120]: r^2/2 from two_prod(rh, rh) plus
// rh rl (rl^2 < 2^-170 dropped); the bracket (< 2^-55) in double, with r^3's rl part rh^2 rl/2,
// relative error a few u: < 0.1 u^2; the dropped r^6/720 < 2^-114. Summing them: the accurate add
// (3 u^2 of |r| ~ 2^-17) and add_d with 1 (2 u^2). Tables: hi and lo correctly rounded, <= 1 u^2
// each; the two products (mul) 4 u^2 each; 2^k exact while the result is normal.
// Total <= 2 + 2 + 8 + 0.2 u^2 ~ 12.2 u^2 plus second-order terms; kExpRelErr = 32 u^2 keeps 2.6.
DD exp(DD x) {
  if (std::isnan(x.hi)) return {x.hi, 0};
  if (x.hi > 709.79) return {std::numeric_limits<double>::infinity(), 0};
  if (x.hi < -745.2) return {0, 0};
  // Round to nearest with the 1.5 * 2^52 trick (|x * 65536/ln2| < 2^27): no libm call, and the
  // same result everywhere since the TU is compiled without contraction.
  const double nd = (x.hi * k65536ByLn2 + 0x1.8p52) - 0x1.8p52;
  const auto n = static_cast<std::int64_t>(nd);
  DD r = two_sum(x.hi, -(nd * kLn2By65536[0]));
  r = add_d(r, x.lo);
  r = add(r, neg(two_prod(nd, kLn2By65536[1])));
  r = add_d(r, -(nd * kLn2By65536[2]));
  const double rh = r.hi, rl = r.lo;
  const DD sq = two_prod(rh, rh);
  const double r2_lo = 0.5 * sq.lo + rh * rl;
  const double t = std::fma(rh, std::fma(rh, kInvFactHi[5], kInvFactHi[4]), kInvFactHi[3]);
  const double tail = sq.hi * std::fma(rh, t, 0.5 * rl);
  const DD q = fast_two_sum(0.5 * sq.hi, r2_lo + tail);
  const DD e_r = add_d(add(r, q), 1.0);
  const std::int64_t j1 = n & 255, j2 = (n >> 8) & 255;
  const int k = static_cast<int>(n >> 16);  // arithmetic shift: floor(n / 65536)
  const DD t2 = mul(DD{kExp2TableHi[j2], kExp2TableLo[j2]}, DD{kExp2FineHi[j1], kExp2FineLo[j1]});
  const DD e = mul(t2, e_r);
  if (k >= -1022 && k <= 1023) {  // 2^k is a normal double: multiply, exact while e 2^k is normal
    const double scale = std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52);
    return {e.hi * scale, e.lo * scale};
  }
  // 2^k in two exact steps so that k = 1024 (e < 1) or k = -1075 stays in range.
  const int k1 = k / 2;
  return ldexp(ldexp(e, k1), k - k1);
}

// Two Newton steps y <- y + x exp(-y) - 1 from std::log. Remaining error: the last correction's
// x exp(-y) (exp <= 32 u^2, mul 4 u^2, relative to a value ~ 1) and its subtraction of 1 (exact
// by Sterbenz on hi), the truncation (correction)^2 / 2 < 2^-180, and the final addition
// (<= 3 u^2 |result|). kLogAbsErr = 64 u^2 >= 36 u^2 + slack, kLogRelErr = 4 u^2.
DD log(DD x) {
  if (!(x.hi > 0)) return {x.hi == 0 ? -std::numeric_limits<double>::infinity()
                                     : std::numeric_limits<double>::quiet_NaN(), 0};
  if (std::isinf(x.hi)) return x;
  // exp(-y) must stay in exp's full-accuracy range: take out a power of two first,
  // log x = e ln2 + log(x 2^-e), with e ln2 summed exactly-ish from the triple-double ln 2
  // (two exact products, one rounded term of size 2^-100: error < 2^-150; dd adds 3 u^2 each).
  int e = 0;
  std::frexp(x.hi, &e);
  if (e > 512 || e < -512) return add(log(ldexp(x, -e)), add_d(add(two_prod(e, kLn2[0]), two_prod(e, kLn2[1])), e * kLn2[2]));
  DD y = from(std::log(x.hi));
  for (int step = 0; step < 2; ++step) {
    const DD c = add_d(mul(x, exp(neg(y))), -1.0);
    y = add(y, c);
  }
  return y;
}

// |x| <= 1: r = x / 2^s with |r| <= 2^-10, p = expm1(r) = r * taylor(r, 1) (relative error
// <= 4 u^2), then s doublings p <- p (2 + p) = (1 + p)^2 - 1, each adding <= 3 + 4 u^2 and
// multiplying the incoming relative error by 1 + p/(2 + p); the product of those factors is
// <= e^|x| <= e. Total <= e (4 + 7 * 10) u^2 ~ 201 u^2 <= kExpm1RelErr = 256 u^2.
// |x| > 1: exp(x) - 1 amplifies exp's error by e^x / |e^x - 1| <= 1.6: <= 1.6 * 32 + 3 u^2.
DD expm1(DD x) {
  if (std::isnan(x.hi)) return {x.hi, 0};
  if (std::fabs(x.hi) > 1.0) return add_d(exp(x), -1.0);
  int s = 0;
  DD r = x;
  while (std::fabs(r.hi) > 0x1p-10) {
    r = ldexp(r, -1);
    ++s;
  }
  DD p = mul(r, taylor(r, 1));
  for (int i = 0; i < s; ++i) p = mul(p, add_d(p, 2.0));
  return p;
}

// |x| < 1/2: tanh|x| = -m / (2 + m), m = expm1(-2|x|) in [-0.64, 0]: 256 + 3 + 15 u^2 plus the
// relative error of m passing through 2 + m (<= 0.47 * 256 u^2): <= 400 u^2.
// |x| >= 1/2: (1 - e) / (1 + e), e = exp(-2|x|) <= 0.37: each of 1 -+ e carries <= 0.6 * 32 +
// 3 u^2, then div 15 u^2: <= 60 u^2. kTanhRelErr = 512 u^2.
DD tanh(DD x) {
  if (std::isnan(x.hi)) return {x.hi, 0};
  const bool negative = x.hi < 0;
  const DD a = negative ? neg(x) : x;
  DD t;
  if (a.hi < 0.5) {
    const DD m = expm1(neg(ldexp(a, 1)));
    t = neg(div(m, add_d(m, 2.0)));
  } else {
    const DD e = exp(neg(ldexp(a, 1)));
    t = div(add_d(neg(e), 1.0), add_d(e, 1.0));
  }
  return negative ? neg(t) : t;
}

// 4 e / (1 + e)^2, e = exp(-2|x|): e <= 32 u^2, 1 + e <= 32 + 2 u^2 (squared: twice), the
// square 4 u^2, the division 15 u^2, the factor 4 exact: <= 3 * 32 + 23 u^2 <= kSech2RelErr.
DD sech2(DD x) {
  const DD a = x.hi < 0 ? neg(x) : x;
  const DD e = exp(neg(ldexp(a, 1)));
  const DD d = add_d(e, 1.0);
  return ldexp(div(e, mul(d, d)), 2);
}

}  // namespace attnv::reference::dd
