// AVX2 + FMA row kernels of the decode sweep (row_kernels.h). Compiled with -mavx2 -mfma (this
// file only); used only when avx2_kernels_f32() found the CPU able to run them.
#include "core/microkernels.h"
#include "core/row_kernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include "core/avx2_hsum.h"

namespace attnv::core {
namespace {

// Four rows at a time: each 8-wide piece of the key row is loaded once for the four rows (one
// accumulator each: four independent FMA chains), and the four horizontal sums share one hadd
// tree. Fewer rows: one row at a time with two accumulators.
void dots(const float* q, std::int64_t ldq, int rows, const float* k, std::int64_t dk_pad, float scale, float* s,
          std::int64_t lds) {
  int r = 0;
  for (; r + 4 <= rows; r += 4) {
    const float* q0 = q + r * ldq;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (std::int64_t d = 0; d < dk_pad; d += 8) {
      const __m256 kv = _mm256_loadu_ps(k + d);
      a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q0 + d), kv, a0);
      a1 = _mm256_fmadd_ps(_mm256_loadu_ps(q0 + ldq + d), kv, a1);
      a2 = _mm256_fmadd_ps(_mm256_loadu_ps(q0 + 2 * ldq + d), kv, a2);
      a3 = _mm256_fmadd_ps(_mm256_loadu_ps(q0 + 3 * ldq + d), kv, a3);
    }
    // hadd(hadd(a0, a1), hadd(a2, a3)): lane i of each 128-bit half holds a partial sum of row i.
    const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
    const __m128 sums = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    float out[4];
    _mm_storeu_ps(out, _mm_mul_ps(sums, _mm_set1_ps(scale)));
    for (int i = 0; i < 4; ++i) s[(r + i) * lds] = out[i];
  }
  for (; r < rows; ++r) {
    const float* qr = q + r * ldq;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    std::int64_t d = 0;
    for (; d + 16 <= dk_pad; d += 16) {
      a0 = _mm256_fmadd_ps(_mm256_loadu_ps(qr + d), _mm256_loadu_ps(k + d), a0);
      a1 = _mm256_fmadd_ps(_mm256_loadu_ps(qr + d + 8), _mm256_loadu_ps(k + d + 8), a1);
    }
    if (d < dk_pad) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(qr + d), _mm256_loadu_ps(k + d), a0);
    s[r * lds] = hsum(_mm256_add_ps(a0, a1)) * scale;
  }
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

// R rows x 16 columns of the accumulator in registers (2R <= 8 of the 16 ymm) across the n keys.
template <int R>
void pv_block(const float* p, std::int64_t ldp, const float* v, std::int64_t ldv, int n, std::int64_t d, float* o,
              std::int64_t ldo) {
  __m256 acc[R][2];
  for (int r = 0; r < R; ++r) {
    acc[r][0] = _mm256_loadu_ps(o + r * ldo + d);
    acc[r][1] = _mm256_loadu_ps(o + r * ldo + d + 8);
  }
  for (int c = 0; c < n; ++c) {
    const __m256 v0 = _mm256_loadu_ps(v + c * ldv + d), v1 = _mm256_loadu_ps(v + c * ldv + d + 8);
    for (int r = 0; r < R; ++r) {
      const __m256 w = _mm256_broadcast_ss(p + r * ldp + c);
      acc[r][0] = _mm256_fmadd_ps(w, v0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(w, v1, acc[r][1]);
    }
  }
  for (int r = 0; r < R; ++r) {
    _mm256_storeu_ps(o + r * ldo + d, acc[r][0]);
    _mm256_storeu_ps(o + r * ldo + d + 8, acc[r][1]);
  }
}

void pv_rows(const float* p, std::int64_t ldp, int rows, const float* v, std::int64_t ldv, int n, std::int64_t dv_pad,
             float* o, std::int64_t ldo) {
  for (int r0 = 0; r0 < rows; r0 += 4) {
    const float* pr = p + r0 * ldp;
    float* orow = o + r0 * ldo;
    for (std::int64_t d = 0; d < dv_pad; d += 16) switch (rows - r0) {
        case 1: pv_block<1>(pr, ldp, v, ldv, n, d, orow, ldo); break;
        case 2: pv_block<2>(pr, ldp, v, ldv, n, d, orow, ldo); break;
        case 3: pv_block<3>(pr, ldp, v, ldv, n, d, orow, ldo); break;
        default: pv_block<4>(pr, ldp, v, ldv, n, d, orow, ldo); break;
      }
  }
}

}  // namespace

const RowKernels<float>* avx2_row_kernels_f32() {
  static const RowKernels<float> k{"avx2-rows-f32", &dots, &axpy, &pv_rows};
  return avx2_kernels_f32() != nullptr ? &k : nullptr;
}

}  // namespace attnv::core

#else

namespace attnv::core {
const RowKernels<float>* avx2_row_kernels_f32() { return nullptr; }
}  // namespace attnv::core

#endif
