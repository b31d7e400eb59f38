#pragma once
// The per-element steps shared by the portable loops and the AVX2 loops' tails, so that both
// paths execute the same operations in the same order. Everything here has internal linkage and
// its own copies of the error-free transformations: the AVX2 translation unit includes this file,
// and an inline function with external linkage compiled there with -mavx2 could be the copy the
// linker keeps for the whole program (an illegal instruction on a CPU without AVX2).
#include <cmath>

#include "reference/fast/dd.h"

namespace attnv::reference::dd::detail {
namespace {

inline DD local_two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}
inline DD local_fast_two_sum(double a, double b) {
  const double s = a + b;
  return {s, b - (s - a)};
}
inline DD local_two_prod(double a, double b) {
  const double p = a * b;
  return {p, std::fma(a, b, -p)};
}
inline DD local_add(DD x, DD y) {  // dd::add
  const DD s = local_two_sum(x.hi, y.hi);
  const DD t = local_two_sum(x.lo, y.lo);
  const double c = s.lo + t.hi;
  const DD v = local_fast_two_sum(s.hi, c);
  const double w = t.lo + v.lo;
  return local_fast_two_sum(v.hi, w);
}

struct DotLane {  // one lane of Dot2: sum p, corrections s, sum of |products| a
  double p = 0, s = 0, a = 0;
};

inline void dot_step(DotLane& l, double x, double y) {
  const DD h = local_two_prod(x, y);
  const DD t = local_two_sum(l.p, h.hi);
  l.p = t.hi;
  l.s = l.s + (t.lo + h.lo);
  l.a = std::fma(std::fabs(x), std::fabs(y), l.a);
}

// The dot product runs kDotLanes independent lanes (two AVX2 vectors: enough independent
// chains to hide the add latency), then lanes 1.. are folded into lane 0 in a fixed order.
inline constexpr int kDotLanes = 8;
inline DotLane reduce(const DotLane lanes[kDotLanes]) {
  DotLane r = lanes[0];
  for (int l = 1; l < kDotLanes; ++l) {
    const DD t = local_two_sum(r.p, lanes[l].p);
    r.p = t.hi;
    r.s = r.s + (t.lo + lanes[l].s);
    r.a = r.a + lanes[l].a;
  }
  return r;
}

inline void axpy_step(DD w, double w_err, double x, double& hi, double& lo, double& abs,
                      double& live, double* err) {
  const DD c = local_two_prod(w.hi, x);
  const double cl3 = std::fma(w.lo, x, c.lo);
  const DD prod = local_fast_two_sum(c.hi, cl3);
  const DD sum = local_add(DD{hi, lo}, prod);
  hi = sum.hi;
  lo = sum.lo;
  abs = std::fma(std::fabs(w.hi), std::fabs(x), abs);
  live = std::fmax(live, std::fabs(x));
  if (err) *err = std::fma(w_err, std::fabs(x), *err);
}

}  // namespace
}  // namespace attnv::reference::dd::detail
