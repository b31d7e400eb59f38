#pragma once
// Double-double arithmetic: a value is the unevaluated sum hi + lo of two doubles with
// |lo| <= ulp(hi)/2. Algorithms and error bounds from Joldes, Muller, Popescu, "Tight and
// rigorous error bounds for basic building blocks of double-word arithmetic" (ACM TOMS 2017),
// with u = 2^-53 (so u^2 = 2^-106):
//   add (AccurateDWPlusDW)   relative error <= 3 u^2      add_d (DWPlusFP)   <= 2 u^2
//   mul (DWTimesDW3)         relative error <= 4 u^2      mul_d (DWTimesFP3) <= 2 u^2
//   div (DWDivDW2)           relative error <= 15 u^2     div_d (DWDivFP3)   <= 3 u^2
// These bounds assume no underflow; the callers add an absolute allowance where it can occur.
//
// Every translation unit including this header must be compiled with -ffp-contract=off and
// without -ffast-math: a contracted a*b+c or a reassociated sum destroys the error-free
// transformations below (two_sum and fast_two_sum rely on every operation rounding once).
#include <cmath>

namespace attnv::reference::dd {

inline constexpr double kU = 0x1p-53;    // unit roundoff of double
inline constexpr double kU2 = 0x1p-106;  // u^2, the unit of every error constant here

struct DD {
  double hi = 0;
  double lo = 0;
};

// s + e == a + b exactly (Knuth).
inline DD two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  const double e = (a - (s - bb)) + (b - bb);
  return {s, e};
}
// s + e == a + b exactly when |a| >= |b| (or a == 0) (Dekker).
inline DD fast_two_sum(double a, double b) {
  const double s = a + b;
  const double e = b - (s - a);
  return {s, e};
}
// p + e == a * b exactly (barring underflow), via a fused multiply-add.
inline DD two_prod(double a, double b) {
  const double p = a * b;
  const double e = std::fma(a, b, -p);
  return {p, e};
}

inline DD from(double a) { return {a, 0.0}; }
// hi is already the nearest double of a normalized pair except at an exact tie, where hi + lo
// rounds to even: the sum is the correctly rounded double of the exact value hi + lo.
inline double to_double(DD a) { return a.hi + a.lo; }

inline DD neg(DD a) { return {-a.hi, -a.lo}; }

inline DD add(DD x, DD y) {
  DD s = two_sum(x.hi, y.hi);
  const DD t = two_sum(x.lo, y.lo);
  const double c = s.lo + t.hi;
  const DD v = fast_two_sum(s.hi, c);
  const double w = t.lo + v.lo;
  return fast_two_sum(v.hi, w);
}
inline DD sub(DD x, DD y) { return add(x, neg(y)); }

inline DD add_d(DD x, double y) {
  const DD s = two_sum(x.hi, y);
  const double v = x.lo + s.lo;
  return fast_two_sum(s.hi, v);
}

// Sloppy addition: relative error <= 3 u^2 only when x and y have the same sign (no
// cancellation); used inside polynomial evaluations whose terms are known not to cancel.
inline DD add_same_sign(DD x, DD y) {
  const DD s = two_sum(x.hi, y.hi);
  const double v = x.lo + y.lo;
  const double w = s.lo + v;
  return fast_two_sum(s.hi, w);
}

inline DD mul_d(DD x, double y) {
  const DD c = two_prod(x.hi, y);
  const double cl3 = std::fma(x.lo, y, c.lo);
  return fast_two_sum(c.hi, cl3);
}

inline DD mul(DD x, DD y) {
  const DD c = two_prod(x.hi, y.hi);
  const double tl0 = x.lo * y.lo;
  const double tl1 = std::fma(x.hi, y.lo, tl0);
  const double cl2 = std::fma(x.lo, y.hi, tl1);
  const double cl3 = c.lo + cl2;
  return fast_two_sum(c.hi, cl3);
}

inline DD div(DD x, DD y) {
  const double th = x.hi / y.hi;
  const DD r = mul_d(y, th);
  const double pi_h = x.hi - r.hi;
  const double delta_l = x.lo - r.lo;
  const double delta = pi_h + delta_l;
  const double tl = delta / y.hi;
  return fast_two_sum(th, tl);
}

inline DD div_d(DD x, double y) {
  const double th = x.hi / y;
  const DD p = two_prod(th, y);
  const double dh = x.hi - p.hi;
  const double dt = dh - p.lo;
  const double d = dt + x.lo;
  const double tl = d / y;
  return fast_two_sum(th, tl);
}

inline DD ldexp(DD a, int e) { return {std::ldexp(a.hi, e), std::ldexp(a.lo, e)}; }
inline DD abs(DD a) { return a.hi < 0 ? neg(a) : a; }

// Ordering of normalized pairs: compare hi, then lo.
inline bool less(DD a, DD b) { return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo); }
inline bool equal(DD a, DD b) { return a.hi == b.hi && a.lo == b.lo; }

}  // namespace attnv::reference::dd
