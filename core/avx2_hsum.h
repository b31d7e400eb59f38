#pragma once
// Horizontal sum of 8 floats, for the SIMD translation units only (compiled with -mavx2 or
// -mavx512f; include this nowhere else). Internal linkage (static): an inline function with
// external linkage compiled under different -m flags is one symbol, and the linker may keep the
// AVX-512 TU's copy (EVEX encoded) for the AVX2 TUs, which an AVX2-only CPU cannot run.
#include <immintrin.h>

namespace attnv::core {

static inline float hsum(__m256 v) {
  __m128 lo = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
  return _mm_cvtss_f32(lo);
}

}  // namespace attnv::core
