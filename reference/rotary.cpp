#include "reference/rotary.h"

#include <algorithm>
#include <cmath>

namespace attnv::reference {

RotaryReference rotary_reference(const std::vector<double>& x, const std::array<std::int64_t, 4>& shape,
                                 const std::vector<std::int64_t>& positions, double base, DType accum) {
  const std::int64_t B = shape[0], H = shape[1], T = shape[2], D = shape[3], half = D / 2;
  const double u = accum == DType::f64 ? 0x1p-53 : 0x1p-24;
  const double gamma2 = 2 * u / (1 - 2 * u);
  // (a) of rotary.h: the double exponent -2d/D (one rounding, amplified by ln(base) in
  // base^e), pow (1 ulp = 2 half-ulps) and the product (1): ln(base) + 4 units of 2^-53.
  const double angle_ulps = std::abs(std::log(base)) + 4;
  RotaryReference r;
  r.y.resize(x.size());
  r.bound.resize(x.size());
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t < T; ++t) {
      const long double pos = static_cast<long double>(positions[static_cast<std::size_t>(b * T + t)]);
      for (std::int64_t d = 0; d < half; ++d) {
        const long double theta = std::pow(static_cast<long double>(base), -2.0L * static_cast<long double>(d) / static_cast<long double>(D));
        const long double a = pos * theta;
        const long double c = std::cos(a), s = std::sin(a);
        const double abs_a = static_cast<double>(a), ac = std::abs(static_cast<double>(c)), as = std::abs(static_cast<double>(s));
        const double delta = 0x1p-53 * (angle_ulps * abs_a + 2) * (1 + u);
        const double ref_err = 0x1p-64 * (12 * abs_a + 4);
        for (std::int64_t h = 0; h < H; ++h) {
          const std::size_t base_i = static_cast<std::size_t>(((b * H + h) * T + t) * D);
          const std::size_t i0 = base_i + static_cast<std::size_t>(d), i1 = i0 + static_cast<std::size_t>(half);
          const long double x0 = x[i0], x1 = x[i1];
          r.y[i0] = static_cast<double>(x0 * c - x1 * s);
          r.y[i1] = static_cast<double>(x1 * c + x0 * s);
          const double a0 = std::abs(x[i0]), a1 = std::abs(x[i1]);
          // y0 pairs (x0, c) with (x1, s); y1 pairs (x1, c) with (x0, s).
          auto bnd = [&](double xc, double xs) {
            return (u * ac + delta) * xc + (u * as + delta) * xs +
                   gamma2 * ((ac + u * ac + delta) * xc + (as + u * as + delta) * xs) + ref_err * (xc + xs);
          };
          // The bound is evaluated in double: a few roundings of relative size 2^-53, covered by 1 + 2^-48.
          r.bound[i0] = bnd(a0, a1) * (1 + 0x1p-48);
          r.bound[i1] = bnd(a1, a0) * (1 + 0x1p-48);
        }
      }
    }
  return r;
}

}  // namespace attnv::reference
