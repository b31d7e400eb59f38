// The avx512_bf16 path's micro-kernels (isa.h): the avx512 set, plus the forward's Q.K^T for
// bf16 storage on AVX512_BF16's vdpbf16ps. Compiled with -mavx512bf16 (this file only) and used
// only when resolve_isa picked that path.
//
// Why: two bf16 products per f32 lane per instruction. On Zen 4 vdpbf16ps issues at the FMA's
// instruction rate (bench/README.md, session 17), so the scores take half the instructions of
// the f32 FMAs on widened operands. (On the Intel Xeon measured in issue 13 it issues at half
// the FMA's rate: no gain there, which is one reason the path is opt-in.)
//
// What it computes (Intel SDM, checked bit for bit on Zen 4 over 32 M random lanes, a third of
// the operands subnormal; core/tests/bf16_scores_test.cpp re-checks the kernel against a scalar
// emulation): per f32 lane i, acc = fma(a[2i+1], b[2i+1], acc), then acc = fma(a[2i], b[2i], acc),
// each product of two bf16 exact in f32 and each step one round-to-nearest-even; MXCSR is
// ignored, subnormal operands (the accumulator included) are read as zero and a subnormal result
// becomes a signed zero. So the dot is "exact products, f32 accumulation" in another order than
// the avx512 set's (BOUND.md section 0 allows any), with flushing, which the core declares on
// this path (PrecisionModel::flush_subnormals, BOUND.md section 12).
#include "core/microkernels.h"

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX512BF16__)
#if defined(__GNUC__) && !defined(__clang__)  // GCC bug 105593: see microkernels_avx512.cpp
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif

#include "core/row_blocks.h"

namespace attnv::core {
namespace {

inline __m512bh as_bf16_pairs(__m512i x) { return reinterpret_cast<__m512bh&>(x); }

// R rows x 16 NV keys, register blocking as the avx512 set's scores (6 x 64: 24 accumulators, 4
// K vectors, 6 broadcasts), over words (dimension pairs) instead of dimensions.
template <int R, int NV>
inline void scores_block(const std::uint32_t* q, std::int64_t ldq, const std::uint32_t* kt, std::int64_t ldk,
                         std::int64_t words, float scale, float* s, std::int64_t lds) {
  __m512 acc[R][NV];
  _Pragma("GCC unroll 8")
  for (int r = 0; r < R; ++r)
    _Pragma("GCC unroll 4")
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  for (std::int64_t w = 0; w < words; ++w) {
    __m512bh k[NV];
    _Pragma("GCC unroll 4")
    for (int v = 0; v < NV; ++v) k[v] = as_bf16_pairs(_mm512_loadu_si512(kt + w * ldk + 16 * v));
    _Pragma("GCC unroll 8")
    for (int r = 0; r < R; ++r) {
      const __m512bh x = as_bf16_pairs(_mm512_set1_epi32(static_cast<int>(q[r * ldq + w])));
      _Pragma("GCC unroll 4")
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], x, k[v]);
    }
  }
  const __m512 sc = _mm512_set1_ps(scale);
  _Pragma("GCC unroll 8")
  for (int r = 0; r < R; ++r)
    _Pragma("GCC unroll 4")
    for (int v = 0; v < NV; ++v) _mm512_storeu_ps(s + r * lds + 16 * v, _mm512_mul_ps(acc[r][v], sc));
}

template <int R>
inline void scores_rows(const std::uint32_t* q, std::int64_t ldq, const std::uint32_t* kt, std::int64_t ldk, int n,
                        std::int64_t words, float scale, float* s, std::int64_t lds) {
  int c = 0;
  for (; c + 64 <= n; c += 64) scores_block<R, 4>(q, ldq, kt + c, ldk, words, scale, s + c, lds);
  for (; c < n; c += 16) scores_block<R, 1>(q, ldq, kt + c, ldk, words, scale, s + c, lds);
}

void scores_bf16(const std::uint32_t* q, std::int64_t ldq, int rows, const std::uint32_t* kt, std::int64_t ldk,
                 int n, std::int64_t words, float scale, float* s, std::int64_t lds) {
  for_row_blocks<6>(rows, [&](auto R, int r) {
    scores_rows<decltype(R)::value>(q + r * ldq, ldq, kt, ldk, n, words, scale, s + r * lds, lds);
  });
}

}  // namespace

const MicroKernels<float>* avx512_bf16_kernels_f32() {
  static const bool ok = missing_features(Isa::avx512_bf16, cpu_features()).empty();
  if (!ok) return nullptr;
  static const MicroKernels<float> k = [] {
    MicroKernels<float> m = *avx512_kernels_f32();  // non-null: the path needs every avx512 feature
    m.name = "avx512-bf16-f32";
    m.scores_bf16 = &scores_bf16;
    return m;
  }();
  return &k;
}

}  // namespace attnv::core

#else  // not built for x86-64 with these flags: the path does not exist

namespace attnv::core {
const MicroKernels<float>* avx512_bf16_kernels_f32() { return nullptr; }
}  // namespace attnv::core

#endif
