#pragma once
// Elementary functions in double-double, with the relative error bounds the fast reference's
// radii use. Each bound is derived in dd_math.cpp and measured against MPFR (320 bits) in
// tests/dd_math_test.cpp. Measured maxima (u^2 = 2^-106; in units of 2^-104 divide by 4):
//   exp   4.45 u^2 (1.11 x 2^-104) on [-650, 709.7]   bound 32 u^2
//   log   10.2 u^2 relative near log x ~ 0.2; |error| <= 0.29 of its bound everywhere tested
//   expm1 106 u^2 (26.6 x 2^-104) near x = 1          bound 256 u^2
//   tanh  65.5 u^2 (16.4 x 2^-104)                     bound 512 u^2
//   sech2 6.4 u^2 (1.6 x 2^-104)                       bound 4 * 32 + 16 u^2
// (exp costs ~40 ns on this machine; see bench/reference_bench.cpp, BM_DdExp.)
#include "reference/fast/dd.h"

namespace attnv::reference::dd {

// exp: |result - exp(x)| <= kExpRelErr exp(x) + kExpAbsErr for x.hi <= 709.78. The absolute
// part is the final scaling by 2^k rounding hi and lo (2^-1075 each) once the result's low part
// (x < -670) or the result itself (x < -708) is subnormal; below -745.2 the result is 0 and
// exp(x) < 2^-1075.
inline constexpr double kExpRelErr = 32 * kU2;
inline constexpr double kExpAbsErr = 0x1p-1073;  // the 2^-1074 above, doubled for margin
DD exp(DD x);

// log of a positive finite x: absolute error <= kLogAbsErr + kLogRelErr * |result| (two Newton
// steps on exp from std::log: after the first the error is ~(2^-52 |log x|)^2, after the second
// it is far below u^2, so what remains is the error of x * exp(-y) - 1 and of the final sum).
inline constexpr double kLogAbsErr = 64 * kU2;
inline constexpr double kLogRelErr = 4 * kU2;
DD log(DD x);

// expm1: relative error <= kExpm1RelErr for |x.hi| <= 1 (argument halving, Taylor, then the
// exact doubling p <- p (2 + p), which keeps the relative error additive); outside it, exp(x) - 1.
inline constexpr double kExpm1RelErr = 256 * kU2;
DD expm1(DD x);

// tanh, relative error <= kTanhRelErr; through expm1 so that tanh(x) ~ x near 0 keeps its
// relative accuracy.
inline constexpr double kTanhRelErr = 512 * kU2;
DD tanh(DD x);

// 1 - tanh(x)^2 = 4 e / (1 + e)^2 with e = exp(-2|x|): no cancellation when |x| is large.
// |result - exact| <= kSech2RelErr exact + kSech2AbsErr (exp's absolute part times 4, and the
// division's steps at the subnormal grid).
inline constexpr double kSech2RelErr = 4 * kExpRelErr + 16 * kU2;
inline constexpr double kSech2AbsErr = 0x1p-1068;
DD sech2(DD x);

}  // namespace attnv::reference::dd
