#pragma once
// The reference rotary position embedding (NeoX half-split, see core/rotary.h for the formula)
// and its per-element error bound. Evaluated in long double (x87: 64-bit significand) and rounded
// to double; independent of core/ (never includes it).
//
// Bound, for a kernel that (a) computes the angle a = p theta_d in double as pow(base, -2d/D)
// times p, so within (|ln(base)| + 4) 2^-53 |a| of its exact value (the exponent's rounding is
// amplified by |ln(base)|, pow within 1 ulp, the product 1/2 ulp), (b) rounds cos a and sin a (evaluated in double, within 1 double ulp) once to its
// accumulator of unit roundoff u, (c) forms y = x0 c - x1 s (or x1 c + x0 s) in the accumulator,
// with or without FMA, and (d) rounds y once to the output dtype:
//   |c_hat - c| <= u |c| + delta,  delta = 2^-53 ((|ln(base)| + 4) |a| + 2) (1 + u)
//     (cos and sin are 1-Lipschitz, so the angle error moves them by at most its size; the
//     double evaluation adds 1 ulp <= 2 2^-53 since |cos| <= 1; rounding the double value
//     c_d to the accumulator errs by u |c_d| <= u (|c| + e): the factor 1 + u);
//   the same for s;
//   the two-term sum x0 c_hat - x1 s_hat in the accumulator errs by at most
//     gamma_2 (|x0 c_hat| + |x1 s_hat|) (Higham Thm 3.1; FMA only removes a rounding);
//   so  |y_hat - y| <= (u|c| + delta)|x0| + (u|s| + delta)|x1|
//                      + gamma_2 ((|c| + u|c| + delta)|x0| + (|s| + u|s| + delta)|x1|)
//   before (d), which the acceptance rule (bound::accept: + ulp_out(out)/2) adds.
// The reference's own error (long double pow, product, cos/sin: a few 2^-64 relative in theta,
// so 2^-64 (12 |a| + 4) absolute in cos and sin) times (|x0| + |x1|) is added to the bound too;
// its rounding to double is accept's 2^-53 |exact|. Inputs x are the exact storage values.
// A kernel whose angle is formed in f32 (p theta rounded to 24 bits: an absolute error of
// |a| 2^-24, 6e-3 at position 1e5) is outside (a) and fails, as it should: it is a real bug.
#include <array>
#include <cstdint>
#include <vector>

#include "problem/dtype.h"

namespace attnv::reference {

struct RotaryReference {
  std::vector<double> y;      // dense [B, H, T, D]: the exact rotary, rounded to double
  std::vector<double> bound;  // per element, for a kernel with accumulator `accum` (see above)
};

// x dense [B, H, T, D] (D even), positions int64 [B, T] (row-major), base > 0.
RotaryReference rotary_reference(const std::vector<double>& x, const std::array<std::int64_t, 4>& shape,
                                 const std::vector<std::int64_t>& positions, double base, DType accum);

}  // namespace attnv::reference
