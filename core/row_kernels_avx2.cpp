// AVX2 + FMA row kernels of the decode sweep (row_kernels.h). Compiled with -mavx2 -mfma (this
// file only); used only when avx2_kernels_f32() found the CPU able to run them.
//
// Decode streams K and V from memory once, so how the loads walk memory matters as much as the
// arithmetic. Measured on the build machine (bench/README.md, decode section): the hardware
// prefetchers keep up only with a load stream that walks one row front to back; reading two
// or four rows of the same tile in step (k_c and k_c+1 in one loop) cut K's bandwidth from about
// 20 to 8 GB/s per thread, and software prefetches (any distance, any hint) made it worse. So
// every K row is read whole by one loop before the next, and V's key lanes are 16 rows apart.
#include "core/microkernels.h"
#include "core/row_kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include "core/avx2_hsum.h"

namespace attnv::core {
namespace {

// Eight stored values as f32: in place for f32, converted (exactly) as loaded for f16 and bf16,
// so a half-precision cache is read once, with no staging buffer in between.
struct F32 {
  using E = float;
  static __m256 load(const float* x) { return _mm256_loadu_ps(x); }
};
struct F16 {
  using E = std::uint16_t;
  static __m256 load(const std::uint16_t* x) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x)));
  }
};
struct BF16 {
  using E = std::uint16_t;
  static __m256 load(const std::uint16_t* x) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  }
};

// [sum a0, sum a1, sum a2, sum a3]: the four horizontal sums share one hadd tree.
inline __m128 hsum4(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
  const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
  return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

// Four rows against one key: each 8-wide piece of k is loaded once for the four rows, with two
// chains per row (even and odd pieces) so that eight FMAs are in flight.
template <class L>
void dots_4x1(const float* q, std::int64_t ldq, const typename L::E* k, std::int64_t dk_pad, __m128 scale, float* s,
              std::int64_t lds) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
  std::int64_t d = 0;
  for (; d + 16 <= dk_pad; d += 16) {
    const __m256 x = L::load(k + d), y = L::load(k + d + 8);
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + d), x, a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + ldq + d), x, a1);
    a2 = _mm256_fmadd_ps(_mm256_loadu_ps(q + 2 * ldq + d), x, a2);
    a3 = _mm256_fmadd_ps(_mm256_loadu_ps(q + 3 * ldq + d), x, a3);
    b0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + d + 8), y, b0);
    b1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + ldq + d + 8), y, b1);
    b2 = _mm256_fmadd_ps(_mm256_loadu_ps(q + 2 * ldq + d + 8), y, b2);
    b3 = _mm256_fmadd_ps(_mm256_loadu_ps(q + 3 * ldq + d + 8), y, b3);
  }
  if (d < dk_pad) {
    const __m256 x = L::load(k + d);
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + d), x, a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + ldq + d), x, a1);
    a2 = _mm256_fmadd_ps(_mm256_loadu_ps(q + 2 * ldq + d), x, a2);
    a3 = _mm256_fmadd_ps(_mm256_loadu_ps(q + 3 * ldq + d), x, a3);
  }
  const __m128 sums =
      hsum4(_mm256_add_ps(a0, b0), _mm256_add_ps(a1, b1), _mm256_add_ps(a2, b2), _mm256_add_ps(a3, b3));
  float out[4];
  _mm_storeu_ps(out, _mm_mul_ps(sums, scale));
  for (int i = 0; i < 4; ++i) s[i * lds] = out[i];
}

// One row against one key, four chains.
template <class L>
float dot_1x1(const float* q, const typename L::E* k, std::int64_t dk_pad) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  std::int64_t d = 0;
  for (; d + 32 <= dk_pad; d += 32) {
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + d), L::load(k + d), a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + d + 8), L::load(k + d + 8), a1);
    a2 = _mm256_fmadd_ps(_mm256_loadu_ps(q + d + 16), L::load(k + d + 16), a2);
    a3 = _mm256_fmadd_ps(_mm256_loadu_ps(q + d + 24), L::load(k + d + 24), a3);
  }
  for (; d < dk_pad; d += 8) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + d), L::load(k + d), a0);
  return hsum(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
}

// Key by key (see the top of the file), four rows at a time.
template <class L>
void dots(const float* q, std::int64_t ldq, int rows, const typename L::E* k, std::int64_t ldk, int n,
          std::int64_t dk_pad, float scale, float* s, std::int64_t lds) {
  const __m128 sc = _mm_set1_ps(scale);
  for (int c = 0; c < n; ++c) {
    const typename L::E* kc = k + c * ldk;
    int r = 0;
    for (; r + 4 <= rows; r += 4) dots_4x1<L>(q + r * ldq, ldq, kc, dk_pad, sc, s + r * lds + c, lds);
    for (; r < rows; ++r) s[r * lds + c] = dot_1x1<L>(q + r * ldq, kc, dk_pad) * scale;
  }
}

void dots_half(const float* q, std::int64_t ldq, int rows, const std::uint16_t* k, std::int64_t ldk, int n,
              std::int64_t dk_pad, bool bf16, float scale, float* s, std::int64_t lds) {
  if (bf16)
    dots<BF16>(q, ldq, rows, k, ldk, n, dk_pad, scale, s, lds);
  else
    dots<F16>(q, ldq, rows, k, ldk, n, dk_pad, scale, s, lds);
}

void axpy(const float* w, std::int64_t ldw, int rows, const float* v, std::int64_t dv_pad, float* o,
          std::int64_t ldo) {
  for (int r = 0; r < rows; ++r) {
    const float x = w[r * ldw];
    if (x == 0) continue;
    const __m256 xv = _mm256_set1_ps(x);
    float* orow = o + r * ldo;
    for (std::int64_t d = 0; d < dv_pad; d += 16) {
      _mm256_storeu_ps(orow + d, _mm256_fmadd_ps(xv, _mm256_loadu_ps(v + d), _mm256_loadu_ps(orow + d)));
      _mm256_storeu_ps(orow + d + 8, _mm256_fmadd_ps(xv, _mm256_loadu_ps(v + d + 8), _mm256_loadu_ps(orow + d + 8)));
    }
  }
}

// R rows x 16 columns of the accumulator in registers while NK keys pass, then the next 16
// columns. Key i of the NK is v + i * kstep (p + i * pstep): each has its own load instruction
// walking its row front to back, and with kstep >= 16 rows the NK rows lie in different pages,
// which the prefetchers follow as separate streams (see the top of the file). The constant-
// count loops are unrolled so that GCC keeps acc in registers: without the pragmas it spilled
// them, a store after every FMA.
template <class L, int R, int NK>
void pv_keys(const float* p, std::int64_t ldp, int pstep, const typename L::E* v, std::int64_t kstep, std::int64_t dv_pad,
             float* o, std::int64_t ldo) {
  for (std::int64_t d = 0; d < dv_pad; d += 16) {
    __m256 acc[R][2];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      acc[r][0] = _mm256_loadu_ps(o + r * ldo + d);
      acc[r][1] = _mm256_loadu_ps(o + r * ldo + d + 8);
    }
#pragma GCC unroll 4
    for (int c = 0; c < NK; ++c) {
      const __m256 v0 = L::load(v + c * kstep + d), v1 = L::load(v + c * kstep + d + 8);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const __m256 w = _mm256_broadcast_ss(p + r * ldp + c * pstep);
        acc[r][0] = _mm256_fmadd_ps(w, v0, acc[r][0]);
        acc[r][1] = _mm256_fmadd_ps(w, v1, acc[r][1]);
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      _mm256_storeu_ps(o + r * ldo + d, acc[r][0]);
      _mm256_storeu_ps(o + r * ldo + d + 8, acc[r][1]);
    }
  }
}

// The tile's keys in four lanes of q = n / 4 rows: keys c, c + q, c + 2q, c + 3q pass together
// for c < q, then the n - 4q left over one by one.
template <class L, int R>
void pv_block(const float* p, std::int64_t ldp, const typename L::E* v, std::int64_t ldv, int n, std::int64_t dv_pad,
              float* o, std::int64_t ldo) {
  const int q = n / 4;
  for (int c = 0; c < q; ++c) pv_keys<L, R, 4>(p + c, ldp, q, v + c * ldv, q * ldv, dv_pad, o, ldo);
  for (int c = 4 * q; c < n; ++c) pv_keys<L, R, 1>(p + c, ldp, 1, v + c * ldv, ldv, dv_pad, o, ldo);
}

template <class L>
void pv_rows(const float* p, std::int64_t ldp, int rows, const typename L::E* v, std::int64_t ldv, int n,
             std::int64_t dv_pad, float* o, std::int64_t ldo) {
  for (int r0 = 0; r0 < rows; r0 += 4) {
    const float* pr = p + r0 * ldp;
    float* orow = o + r0 * ldo;
    switch (rows - r0) {
      case 1: pv_block<L, 1>(pr, ldp, v, ldv, n, dv_pad, orow, ldo); break;
      case 2: pv_block<L, 2>(pr, ldp, v, ldv, n, dv_pad, orow, ldo); break;
      case 3: pv_block<L, 3>(pr, ldp, v, ldv, n, dv_pad, orow, ldo); break;
      default: pv_block<L, 4>(pr, ldp, v, ldv, n, dv_pad, orow, ldo); break;
    }
  }
}

void pv_rows_half(const float* p, std::int64_t ldp, int rows, const std::uint16_t* v, std::int64_t ldv, int n,
                 std::int64_t dv_pad, bool bf16, float* o, std::int64_t ldo) {
  if (bf16)
    pv_rows<BF16>(p, ldp, rows, v, ldv, n, dv_pad, o, ldo);
  else
    pv_rows<F16>(p, ldp, rows, v, ldv, n, dv_pad, o, ldo);
}

}  // namespace

const RowKernels<float>* avx2_row_kernels_f32() {
  static const RowKernels<float> k{"avx2-rows-f32", &dots<F32>, &axpy, &pv_rows<F32>, &dots_half, &pv_rows_half};
  return avx2_kernels_f32() != nullptr ? &k : nullptr;
}

}  // namespace attnv::core

#else

namespace attnv::core {
const RowKernels<float>* avx2_row_kernels_f32() { return nullptr; }
}  // namespace attnv::core

#endif
