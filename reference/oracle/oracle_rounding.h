#pragma once
// Rounding a multiprecision value to the nearest double without trusting the backend's own
// conversion (private to the oracle; generic over the real type, includes no Boost header).
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>

namespace attnv::reference::oracle_detail {

// The double nearest to x (ties to even), whatever the backend's own conversion does: start
// from static_cast<double> (assumed within one ulp) and pick the nearest of it and its two
// neighbours, comparing distances in Real (exact enough: x has >300 bits, the candidates 53).
// Zero is returned as +0 (the sign of an exact zero is an accident of the arithmetic).
template <class Real>
double nearest_double(const Real& x) {
  using std::abs;
  if (x != x) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0) return 0.0;
  const double inf = std::numeric_limits<double>::infinity();
  // Beyond DBL_MAX + ulp(DBL_MAX)/2 = 2^1024 - 2^970 rounds to inf (the tie too: DBL_MAX is odd).
  static const Real overflow_at = Real(DBL_MAX) + Real(std::ldexp(1.0, 970));
  if (x >= overflow_at) return inf;
  if (x <= -overflow_at) return -inf;
  double d = static_cast<double>(x);
  if (std::isinf(d)) d = d > 0 ? DBL_MAX : -DBL_MAX;
  double best = d;
  Real best_err = abs(x - Real(d));
  for (double cand : {std::nextafter(d, -inf), std::nextafter(d, inf)}) {
    if (std::isinf(cand)) continue;
    const Real err = abs(x - Real(cand));
    const bool even = (std::bit_cast<std::uint64_t>(cand) & 1u) == 0;
    if (err < best_err || (err == best_err && even)) {
      best = cand;
      best_err = err;
    }
  }
  return best == 0 ? 0.0 : best;
}

}  // namespace attnv::reference::oracle_detail
