#pragma once
// The register-blocked SIMD kernels (microkernels_avx2.cpp, microkernels_avx512.cpp) handle R
// rows at a time with R a template parameter (the accumulators live in registers only when R is
// a constant). This turns a run-time row count into those calls: blocks of kMax rows, then one
// block of the remaining rows. Internal linkage (an unnamed namespace), like avx2_hsum.h: the
// including files are compiled with different -m flags and must not share instantiations.
#include <type_traits>
#include <utility>

namespace attnv::core {
namespace {

// f(std::integral_constant<int, R>{}, r0) for rows [r0, r0 + R), covering [0, rows).
template <int kMax, class F>
inline void for_row_blocks(int rows, F&& f) {
  int r = 0;
  for (; r + kMax <= rows; r += kMax) f(std::integral_constant<int, kMax>{}, r);
  const int rest = rows - r;
  [&]<int... I>(std::integer_sequence<int, I...>) {
    ((rest == I + 1 ? f(std::integral_constant<int, I + 1>{}, r) : void()), ...);
  }(std::make_integer_sequence<int, kMax - 1>{});
}

}  // namespace
}  // namespace attnv::core
