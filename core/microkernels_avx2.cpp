// AVX2 + FMA + F16C micro-kernels for f32 accumulation. Compiled with -mavx2 -mfma -mf16c
// (this file only) and used only after a run-time CPU check.
//
// scores: a 6-row x 16-key register block (12 accumulators): per head dimension d, two loads of
//   the transposed K tile and six broadcasts of Q, no horizontal sums. (A row-major 3 x 4
//   dot-product block with hadd reductions was ~20% slower at D = 64.)
// pv: a 6-row x 16-column register block of the output accumulator, rescaled by alpha on load,
//   V read from one contiguous 16-column panel (aligned loads: panels are 64-byte aligned).
// exp: Cody-Waite reduction to r in [-ln2/2, ln2/2], a degree-6 polynomial (Cephes expf;
//   exp_constants.h), and the power of two applied as two factors so subnormal results are
//   rounded once, not flushed.
//   Measured accuracy: see core/tests/exp_test.cpp (within PrecisionModel::exp_ulps = 2).
#include "core/microkernels.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>

#include "core/avx2_hsum.h"
#include "core/exp_constants.h"
#include "core/row_blocks.h"

#include <limits>

namespace attnv::core {
namespace {

inline float hmax(__m256 v) {
  __m128 lo = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  lo = _mm_max_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_max_ss(lo, _mm_movehdup_ps(lo));
  return _mm_cvtss_f32(lo);
}

// exp(x) for every lane. NaN propagates (max/min return their second operand on NaN),
// -inf gives 0, results below the normal range are rounded once to a subnormal or 0.
inline __m256 exp_ps(__m256 x) {
  using namespace exp_f32;
  x = _mm256_max_ps(_mm256_set1_ps(kMin), x);
  x = _mm256_min_ps(_mm256_set1_ps(kMax), x);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // n * kLn2Hi is exact (9 + 8 bits), so the first step is exact.
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
  const __m256 z = _mm256_mul_ps(r, r);
  __m256 y = _mm256_set1_ps(kP[0]);
  for (int i = 1; i < 6; ++i) y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(kP[i]));
  y = _mm256_fmadd_ps(y, z, r);
  y = _mm256_add_ps(y, _mm256_set1_ps(1.0f));
  // 2^n as 2^n1 * 2^n2 with n1 = floor(n/2): both factors normal for n in [-159, 145], the
  // first product exact, the second the only rounding (into the subnormal range if need be).
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i n1 = _mm256_srai_epi32(ni, 1);
  const __m256i n2 = _mm256_sub_epi32(ni, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(y, s1), s2);
}

// Lanes [0, n) of a partial vector; the rest filled with `fill`.
inline __m256 load_partial(const float* x, int n, float fill) {
  alignas(32) float buf[8];
  for (int i = 0; i < 8; ++i) buf[i] = i < n ? x[i] : fill;
  return _mm256_load_ps(buf);
}

// R rows x 16 keys: acc[r] += q[r][d] * kt[d][16 keys] over d, then scaled and stored.
// Not inlined, nor is pv_block: inlined into the row-block dispatch (row_blocks.h), GCC 12 ran
// out of general registers and kept loop counters and row pointers on the stack inside the
// FMA loop, which made the avx2 forward 7-13% slower than these blocks as functions of their own
// (bench/README.md, "Zen 4, session 22").
template <int R>
[[gnu::noinline]] void scores_block(const float* q, std::int64_t ldq, const float* kt, std::int64_t ldk,
                         std::int64_t dk_pad, float scale, float* s, std::int64_t lds) {
  __m256 acc[R][2];
  _Pragma("GCC unroll 8")
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (std::int64_t d = 0; d < dk_pad; ++d) {
    const __m256 k0 = _mm256_loadu_ps(kt + d * ldk);
    const __m256 k1 = _mm256_loadu_ps(kt + d * ldk + 8);
    _Pragma("GCC unroll 8")
    for (int r = 0; r < R; ++r) {
      const __m256 w = _mm256_broadcast_ss(q + r * ldq + d);
      acc[r][0] = _mm256_fmadd_ps(w, k0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(w, k1, acc[r][1]);
    }
  }
  const __m256 sc = _mm256_set1_ps(scale);
  _Pragma("GCC unroll 8")
  for (int r = 0; r < R; ++r) {
    _mm256_storeu_ps(s + r * lds, _mm256_mul_ps(acc[r][0], sc));
    _mm256_storeu_ps(s + r * lds + 8, _mm256_mul_ps(acc[r][1], sc));
  }
}

template <int R>
inline void scores_rows(const float* q, std::int64_t ldq, const float* kt, std::int64_t ldk,
                        int n, std::int64_t dk_pad, float scale, float* s, std::int64_t lds) {
  for (int c = 0; c < n; c += 16) scores_block<R>(q, ldq, kt + c, ldk, dk_pad, scale, s + c, lds);
}

void scores(const float* q, std::int64_t ldq, int rows, const float* kt, std::int64_t ldk, int n,
            std::int64_t dk_pad, float scale, float* s, std::int64_t lds) {
  for_row_blocks<6>(rows, [&](auto R, int r) {
    scores_rows<decltype(R)::value>(q + r * ldq, ldq, kt, ldk, n, dk_pad, scale, s + r * lds, lds);
  });
}

float row_max(const float* x, int n) {
  const float ninf = -std::numeric_limits<float>::infinity();
  __m256 m = _mm256_set1_ps(ninf);
  int c = 0;
  for (; c + 8 <= n; c += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(x + c));
  if (c < n) m = _mm256_max_ps(m, load_partial(x + c, n - c, ninf));
  return hmax(m);
}

float exp_sum(float* x, int n, float m) {
  const __m256 mv = _mm256_set1_ps(m);
  __m256 sum = _mm256_setzero_ps();
  int c = 0;
  for (; c + 8 <= n; c += 8) {
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(x + c), mv));
    _mm256_storeu_ps(x + c, e);
    sum = _mm256_add_ps(sum, e);
  }
  if (c < n) {
    alignas(32) float buf[8];
    const __m256 e = exp_ps(_mm256_sub_ps(load_partial(x + c, n - c, -std::numeric_limits<float>::infinity()), mv));
    _mm256_store_ps(buf, e);
    for (int i = 0; i < n - c; ++i) x[c + i] = buf[i];
    sum = _mm256_add_ps(sum, e);  // the filled lanes hold exp(-inf) = 0
  }
  return hsum(sum);
}

void exp_inplace(float* x, int n) {
  int c = 0;
  for (; c + 8 <= n; c += 8) _mm256_storeu_ps(x + c, exp_ps(_mm256_loadu_ps(x + c)));
  if (c < n) {
    alignas(32) float buf[8];
    _mm256_store_ps(buf, exp_ps(load_partial(x + c, n - c, 0.0f)));
    for (int i = 0; i < n - c; ++i) x[c + i] = buf[i];
  }
}

template <int R>
[[gnu::noinline]] void pv_block(const float* p, std::int64_t ldp, const float* alpha, const float* v, int n,
                     float* o, std::int64_t ldo) {
  __m256 acc[R][2];
  _Pragma("GCC unroll 8")
  for (int r = 0; r < R; ++r) {
    const __m256 a = _mm256_broadcast_ss(alpha + r);
    acc[r][0] = _mm256_mul_ps(a, _mm256_loadu_ps(o + r * ldo));
    acc[r][1] = _mm256_mul_ps(a, _mm256_loadu_ps(o + r * ldo + 8));
  }
  for (int c = 0; c < n; ++c) {
    const __m256 v0 = _mm256_load_ps(v + c * kPanel);
    const __m256 v1 = _mm256_load_ps(v + c * kPanel + 8);
    _Pragma("GCC unroll 8")
    for (int r = 0; r < R; ++r) {
      const __m256 w = _mm256_broadcast_ss(p + r * ldp + c);
      acc[r][0] = _mm256_fmadd_ps(w, v0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(w, v1, acc[r][1]);
    }
  }
  _Pragma("GCC unroll 8")
  for (int r = 0; r < R; ++r) {
    _mm256_storeu_ps(o + r * ldo, acc[r][0]);
    _mm256_storeu_ps(o + r * ldo + 8, acc[r][1]);
  }
}

template <int R>
inline void pv_rows(const float* p, std::int64_t ldp, const float* alpha, const float* v,
                    std::int64_t ldv, int n, std::int64_t dv_pad, float* o, std::int64_t ldo) {
  for (std::int64_t d = 0; d < dv_pad; d += kPanel)
    pv_block<R>(p, ldp, alpha, v + (d / kPanel) * ldv, n, o + d, ldo);
}

void pv(const float* p, std::int64_t ldp, int rows, const float* alpha, const float* v,
        std::int64_t ldv, int n, std::int64_t dv_pad, float* o, std::int64_t ldo) {
  for_row_blocks<6>(rows, [&](auto R, int r) {
    pv_rows<decltype(R)::value>(p + r * ldp, ldp, alpha + r, v, ldv, n, dv_pad, o + r * ldo, ldo);
  });
}

void from_f16(const std::uint16_t* in, std::int64_t n, float* out) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  for (; i < n; ++i) out[i] = f16_bits_to_f32(in[i]);
}

void from_bf16(const std::uint16_t* in, std::int64_t n, float* out) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
    _mm256_storeu_ps(out + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
  }
  for (; i < n; ++i) out[i] = bf16_bits_to_f32(in[i]);
}

void to_f16(const float* in, std::int64_t n, std::uint16_t* out) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  for (; i < n; ++i) out[i] = f32_to_f16_bits(in[i]);
}

void to_bf16(const float* in, std::int64_t n, std::uint16_t* out) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = f32_to_bf16_bits(in[i]);
}

}  // namespace

const MicroKernels<float>* avx2_kernels_f32() {
  static const MicroKernels<float> k{"avx2-f32", &scores, &row_max, &exp_sum, &exp_inplace, &pv,
                                     true, &from_f16, &from_bf16, &to_f16, &to_bf16};
  static const bool ok = missing_features(Isa::avx2, cpu_features()).empty();
  return ok ? &k : nullptr;
}

}  // namespace attnv::core

#else  // not an AVX2 build: the portable set is used

namespace attnv::core {
const MicroKernels<float>* avx2_kernels_f32() { return nullptr; }
}  // namespace attnv::core

#endif
