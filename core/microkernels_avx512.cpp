// AVX-512 (F, BW, VL, DQ) + FMA + F16C micro-kernels for f32 accumulation. Compiled with those
// flags (this file only) and used only when resolve_isa picked the avx512 path (isa.h).
//
// Every output element is computed by the same operations in the same order as in the AVX2
// set (microkernels_avx2.cpp), only more of them at once, so the two sets agree bit for bit
// (core/tests/isa_test.cpp checks it): scores sum d ascending in one chain per element, pv adds
// keys ascending onto alpha * o, exp is the same per-lane sequence on the same constants, and
// exp_sum keeps the AVX2 set's 8 lane partial sums. Only row_max on NaN scores may differ
// (which NaN-free lane wins), and a NaN score gives a NaN row either way.
//
// Register blocking for 32 zmm registers: avx512_blocking.h (shared with the avx512_bf16 set).
#include "core/microkernels.h"

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    defined(__AVX512DQ__) && defined(__FMA__) && defined(__F16C__)
#include "core/avx512_intrinsics.h"

#include <limits>

#include "core/avx2_hsum.h"
#include "core/avx512_blocking.h"
#include "core/exp_constants.h"

namespace attnv::core {
namespace {

// exp(x) per lane: microkernels_avx2.cpp's exp_ps on 16 lanes (see there and exp_constants.h
// for why each step is exact or rounds once), except the last step. There y 2^n is formed as
// fl(fl(y 2^n1) 2^n2) with the first product exact, which is the correctly rounded y 2^n (a
// subnormal included); vscalefps computes exactly that in one instruction, so the results are
// the AVX2 ones bit for bit (core/tests/exp_test.cpp checks it) at two thirds of the operations.
// `upper`: whether to clamp at kMax; exp_sum's arguments x - max are <= 0 (or NaN, which the
// clamp would keep), so it skips it.
template <bool upper = true>
inline __m512 exp_ps(__m512 x) {
  using namespace exp_f32;
  x = _mm512_max_ps(_mm512_set1_ps(kMin), x);  // NaN propagates: max/min return the second operand
  if constexpr (upper) x = _mm512_min_ps(_mm512_set1_ps(kMax), x);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  const __m512 z = _mm512_mul_ps(r, r);
  __m512 y = _mm512_set1_ps(kP[0]);
  for (int i = 1; i < 6; ++i) y = _mm512_fmadd_ps(y, r, _mm512_set1_ps(kP[i]));
  y = _mm512_fmadd_ps(y, z, r);
  y = _mm512_add_ps(y, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(y, n);
}

// Lanes [0, n) of x, n < 16 (a tail); the others `fill`.
inline __mmask16 tail_mask(std::int64_t n) { return static_cast<__mmask16>((1u << n) - 1u); }
inline __m512 load_tail(const float* x, std::int64_t n, float fill) {
  return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), tail_mask(n), x);
}

// Q.K^T on f32 FMAs, one head dimension a step.
struct F32Dots {
  using Elem = float;
  static constexpr std::int64_t kTileSteps = 64;  // keys of a forward tile
  static __m512 load(const float* x) { return _mm512_loadu_ps(x); }
  static __m512 broadcast(float x) { return _mm512_set1_ps(x); }
  static __m512 madd(__m512 acc, __m512 w, __m512 k) { return _mm512_fmadd_ps(w, k, acc); }
};

void scores(const float* q, std::int64_t ldq, int rows, const float* kt, std::int64_t ldk, int n,
            std::int64_t dk_pad, float scale, float* s, std::int64_t lds) {
  blocked_scores<F32Dots>(q, ldq, rows, kt, ldk, n, dk_pad, scale, s, lds);
}

float row_max(const float* x, int n) {
  const float ninf = -std::numeric_limits<float>::infinity();
  __m512 m = _mm512_set1_ps(ninf);
  int c = 0;
  for (; c + 16 <= n; c += 16) m = _mm512_max_ps(m, _mm512_loadu_ps(x + c));
  if (c < n) m = _mm512_max_ps(m, load_tail(x + c, n - c, ninf));
  // Max is exact, so any order gives the same value. Not _mm512_reduce_max_ps: GCC 12's header
  // warns inside it (-Wuninitialized).
  __m256 h = _mm256_max_ps(_mm512_castps512_ps256(m), _mm512_extractf32x8_ps(m, 1));
  __m128 l = _mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  l = _mm_max_ps(l, _mm_movehl_ps(l, l));
  l = _mm_max_ss(l, _mm_movehdup_ps(l));
  return _mm_cvtss_f32(l);
}

// The sum in the AVX2 set's order: 8 lane partial sums, each adding its lane of every 8 keys in
// key order (the low half of 16 keys before the high half), then hsum: bitwise the AVX2 sum.
float exp_sum(float* x, int n, float m) {
  const __m512 mv = _mm512_set1_ps(m);
  __m256 sum = _mm256_setzero_ps();
  int c = 0;
  for (; c + 16 <= n; c += 16) {
    const __m512 e = exp_ps<false>(_mm512_sub_ps(_mm512_loadu_ps(x + c), mv));
    _mm512_storeu_ps(x + c, e);
    sum = _mm256_add_ps(sum, _mm512_castps512_ps256(e));
    sum = _mm256_add_ps(sum, _mm512_extractf32x8_ps(e, 1));
  }
  if (c < n) {
    // Lanes past n hold exp(-inf) = 0, and adding +0 to a sum of non-negative terms changes no bit.
    const __m512 e = exp_ps<false>(_mm512_sub_ps(load_tail(x + c, n - c, -std::numeric_limits<float>::infinity()), mv));
    _mm512_mask_storeu_ps(x + c, tail_mask(n - c), e);
    sum = _mm256_add_ps(sum, _mm512_castps512_ps256(e));
    sum = _mm256_add_ps(sum, _mm512_extractf32x8_ps(e, 1));
  }
  return hsum(sum);
}

// exp_sum on two rows at a time (the second row's exps fill the first's latency), each row's
// operations and sum order exactly those of exp_sum.
void exp_sum_rows(float* x, std::int64_t ldx, int rows, int n, const float* m, float* sum) {
  int r = 0;
  for (; r + 2 <= rows; r += 2) {
    float* x0 = x + r * ldx;
    float* x1 = x0 + ldx;
    const __m512 m0 = _mm512_set1_ps(m[r]), m1 = _mm512_set1_ps(m[r + 1]);
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    const auto step = [](float* at, __m512 e, __m256& acc, __mmask16 k) {
      _mm512_mask_storeu_ps(at, k, e);
      acc = _mm256_add_ps(acc, _mm512_castps512_ps256(e));
      acc = _mm256_add_ps(acc, _mm512_extractf32x8_ps(e, 1));
    };
    int c = 0;
    for (; c + 16 <= n; c += 16) {
      const __m512 e0 = exp_ps<false>(_mm512_sub_ps(_mm512_loadu_ps(x0 + c), m0));
      const __m512 e1 = exp_ps<false>(_mm512_sub_ps(_mm512_loadu_ps(x1 + c), m1));
      step(x0 + c, e0, s0, static_cast<__mmask16>(0xffff));
      step(x1 + c, e1, s1, static_cast<__mmask16>(0xffff));
    }
    if (c < n) {  // as exp_sum's tail: exp(-inf) = 0 in the lanes past n
      const float ninf = -std::numeric_limits<float>::infinity();
      const __m512 e0 = exp_ps<false>(_mm512_sub_ps(load_tail(x0 + c, n - c, ninf), m0));
      const __m512 e1 = exp_ps<false>(_mm512_sub_ps(load_tail(x1 + c, n - c, ninf), m1));
      step(x0 + c, e0, s0, tail_mask(n - c));
      step(x1 + c, e1, s1, tail_mask(n - c));
    }
    sum[r] = hsum(s0);
    sum[r + 1] = hsum(s1);
  }
  for (; r < rows; ++r) sum[r] = exp_sum(x + r * ldx, n, m[r]);
}

void exp_inplace(float* x, int n) {
  int c = 0;
  for (; c + 16 <= n; c += 16) _mm512_storeu_ps(x + c, exp_ps(_mm512_loadu_ps(x + c)));
  if (c < n) _mm512_mask_storeu_ps(x + c, tail_mask(n - c), exp_ps(load_tail(x + c, n - c, 0.0f)));
}

// P.V: one key a step, added onto alpha * o in key order (avx512_blocking.h).
void pv(const float* p, std::int64_t ldp, int rows, const float* alpha, const float* v,
        std::int64_t ldv, int n, std::int64_t dv_pad, float* o, std::int64_t ldo) {
  static_assert(kPanel == 16, "avx512_blocking.h: V panels of 16 columns");
  blocked_pv<F32Dots>(p, ldp, rows, alpha, v, ldv, n, dv_pad, o, ldo);
}

// The 16-bit conversions, 16 values at a time, the tail under a mask: exact widening (F16C's
// vcvtph2ps on zmm, a shift for bf16), rounding to nearest even (vcvtps2ph; for bf16 the
// integer rounding of f32_to_bf16_bits, NaN kept quiet). Not AVX512-BF16's vcvtneps2bf16: it
// flushes subnormal inputs to zero, and the storage rounding must be exact round-to-nearest.
void from_f16(const std::uint16_t* in, std::int64_t n, float* out) {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(out + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i))));
  if (i < n)
    _mm512_mask_storeu_ps(out + i, tail_mask(n - i),
                          _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(tail_mask(n - i), in + i)));
}

inline __m512 bf16_to_f32(__m256i h) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

void from_bf16(const std::uint16_t* in, std::int64_t n, float* out) {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(out + i, bf16_to_f32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i))));
  if (i < n)
    _mm512_mask_storeu_ps(out + i, tail_mask(n - i), bf16_to_f32(_mm256_maskz_loadu_epi16(tail_mask(n - i), in + i)));
}

void to_f16(const float* in, std::int64_t n, std::uint16_t* out) {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                        _mm512_cvtps_ph(_mm512_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  if (i < n)
    _mm256_mask_storeu_epi16(out + i, tail_mask(n - i),
                             _mm512_cvtps_ph(load_tail(in + i, n - i, 0.0f), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// f32_to_bf16_bits (microkernels_portable.cpp) on 16 lanes: u + 0x7fff + (bit 16 of u), the top
// half; a NaN keeps its top half with the quiet bit set.
inline __m256i f32_to_bf16(__m512 x) {
  const __m512i u = _mm512_castps_si512(x);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb);
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
  const __m512i quiet = _mm512_or_si512(u, _mm512_set1_epi32(0x00400000));
  return _mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_mask_mov_epi32(rounded, nan, quiet), 16));
}

void to_bf16(const float* in, std::int64_t n, std::uint16_t* out) {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), f32_to_bf16(_mm512_loadu_ps(in + i)));
  if (i < n) _mm256_mask_storeu_epi16(out + i, tail_mask(n - i), f32_to_bf16(load_tail(in + i, n - i, 0.0f)));
}

// 16 x 16 transpose in registers: r[c] holds row c on entry, column c on return. Three rounds
// of shuffles (pairs of floats, pairs of pairs, 128-bit lanes twice); exact copies.
inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  // u[4g + k], 128-bit lane L: column 4L + k of rows 4g .. 4g + 3.
  const auto pd = [](__m512 x) { return _mm512_castps_pd(x); };
  for (int g = 0; g < 16; g += 4) {
    u[g] = _mm512_castpd_ps(_mm512_unpacklo_pd(pd(t[g]), pd(t[g + 2])));
    u[g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(pd(t[g]), pd(t[g + 2])));
    u[g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(pd(t[g + 1]), pd(t[g + 3])));
    u[g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(pd(t[g + 1]), pd(t[g + 3])));
  }
  for (int k = 0; k < 4; ++k) {
    const __m512 x0 = _mm512_shuffle_f32x4(u[k], u[4 + k], 0x88), x1 = _mm512_shuffle_f32x4(u[k], u[4 + k], 0xdd);
    const __m512 y0 = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0x88), y1 = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0xdd);
    r[k] = _mm512_shuffle_f32x4(x0, y0, 0x88);
    r[8 + k] = _mm512_shuffle_f32x4(x0, y0, 0xdd);
    r[4 + k] = _mm512_shuffle_f32x4(x1, y1, 0x88);
    r[12 + k] = _mm512_shuffle_f32x4(x1, y1, 0xdd);
  }
}

void transpose_keys(const float* const* rows, int n, std::int64_t dk, float* kt, std::int64_t ldk) {
  for (std::int64_t d = 0; d < dk; d += 16) {
    const std::int64_t w = dk - d < 16 ? dk - d : 16;
    const __mmask16 m = w == 16 ? static_cast<__mmask16>(0xffff) : tail_mask(w);
    __m512 r[16];
    _Pragma("GCC unroll 16")
    for (int c = 0; c < 16; ++c) r[c] = c < n ? _mm512_maskz_loadu_ps(m, rows[c] + d) : _mm512_setzero_ps();
    transpose16(r);
    for (std::int64_t i = 0; i < w; ++i) _mm512_storeu_ps(kt + (d + i) * ldk, r[i]);
  }
}

}  // namespace

const MicroKernels<float>* avx512_kernels_f32() {
  static const MicroKernels<float> k{"avx512-f32", &scores, &row_max, &exp_sum, &exp_inplace, &pv,
                                     true, &from_f16, &from_bf16, &to_f16, &to_bf16, &transpose_keys,
                                     &exp_sum_rows};
  static const bool ok = missing_features(Isa::avx512, cpu_features()).empty();
  return ok ? &k : nullptr;
}

}  // namespace attnv::core

#else  // not built for x86-64 with these flags: the path does not exist

namespace attnv::core {
const MicroKernels<float>* avx512_kernels_f32() { return nullptr; }
}  // namespace attnv::core

#endif
