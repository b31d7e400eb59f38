// The avx512_bf16 path's micro-kernels (isa.h): the avx512 set, plus the bf16-storage forward's
// Q.K^T and P.V on AVX512_BF16's vdpbf16ps and P's rounding to bf16 (vcvtne2ps2bf16). Compiled
// with -mavx512bf16 (this file only) and used only when resolve_isa picked that path.
//
// Why: two bf16 products per f32 lane per instruction. On Zen 4 vdpbf16ps issues at the FMA's
// instruction rate (core_bench's BM_Bf16DotPeak: 2.00x the FMA peak's FLOPs), so both products
// take half the instructions of f32 FMAs on widened operands. (On the Intel Xeon measured in
// issue 13 it issues at half the FMA's rate: no gain there, one reason the path is opt-in.)
//
// What it computes (Intel SDM, checked bit for bit on Zen 4 over 32 M random lanes, a third of
// the operands subnormal; core/tests/bf16_path_test.cpp re-checks each kernel against a scalar
// emulation): per f32 lane i, acc = fma(a[2i+1], b[2i+1], acc), then acc = fma(a[2i], b[2i], acc),
// each product of two bf16 exact in f32 and each step one round-to-nearest-even; MXCSR is
// ignored, subnormal operands (the accumulator included) are read as zero and a subnormal result
// becomes a signed zero. vcvtne2ps2bf16 rounds to nearest even and reads a subnormal as zero. So
// the products are "exact products, f32 accumulation" in another order than the avx512 set's
// (BOUND.md section 0 allows any), P is rounded to bf16, and subnormals flush: the core declares
// p_dtype = bf16 and flush_subnormals on this path (BOUND.md sections 3 and 12).
#include "core/microkernels.h"

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX512BF16__)
#include "core/avx512_blocking.h"

namespace attnv::core {
namespace {

inline __m512bh as_bf16_pairs(__m512i x) { return reinterpret_cast<__m512bh&>(x); }
inline __m512i as_words(__m512bh x) { return reinterpret_cast<__m512i&>(x); }

// Q.K^T and P.V on vdpbf16ps, one pair of head dimensions (of keys in P.V) a step, with the
// avx512 set's register blocking (avx512_blocking.h). Per pair the odd element's exact product
// is added first, then the even one's.
struct Bf16PairDots {
  using Elem = std::uint32_t;                     // a bf16 pair: element 2i low, 2i + 1 high
  static constexpr std::int64_t kTileSteps = 32;  // key pairs of a forward tile
  static __m512bh load(const std::uint32_t* x) { return as_bf16_pairs(_mm512_loadu_si512(x)); }
  static __m512bh broadcast(std::uint32_t x) { return as_bf16_pairs(_mm512_set1_epi32(static_cast<int>(x))); }
  static __m512 madd(__m512 acc, __m512bh x, __m512bh y) { return _mm512_dpbf16_ps(acc, x, y); }
};

void scores_bf16(const std::uint32_t* q, std::int64_t ldq, int rows, const std::uint32_t* kt, std::int64_t ldk,
                 int n, std::int64_t words, float scale, float* s, std::int64_t lds) {
  blocked_scores<Bf16PairDots>(q, ldq, rows, kt, ldk, n, words, scale, s, lds);
}

// P rows to bf16 pairs in place: row r's words [0, ceil(n / 2)) become (P[2w], P[2w + 1]) rounded
// to nearest even by vcvtne2ps2bf16 (which reads a subnormal weight as zero: declared, as the
// dot's flush), a missing P[n] (odd n) zero. Row r keeps its place (lds floats = lds words); each
// 32 weights are read before the 16 words they become are written over the first half of them.
void p_to_bf16_pairs(float* s, std::int64_t lds, int rows, int n) {
  for (int r = 0; r < rows; ++r) {
    float* row = s + r * lds;
    for (int c = 0; c < n; c += 32) {
      const int lo = n - c < 16 ? n - c : 16, hi = n - c - 16 < 0 ? 0 : (n - c - 16 < 16 ? n - c - 16 : 16);
      const __m512 a = _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << lo) - 1u), row + c);
      const __m512 b = _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << hi) - 1u), row + c + 16);
      // cvtne2ps_pbh(b, a): elements 0..15 from a, 16..31 from b, i.e. P[c .. c + 32) in order.
      _mm512_storeu_si512(row + c / 2, as_words(_mm512_cvtne2ps_pbh(b, a)));
    }
  }
}

// Values of keys a and b (bf16, dv of them; b null: a zero row) as one row of pair words per V
// panel: word d of panel j (at panels + j ldv) = a[16 j + d] | b[16 j + d] << 16, zero past dv.
void pack_values_bf16(const std::uint16_t* a, const std::uint16_t* b, std::int64_t dv, std::int64_t dv_pad,
                      std::uint32_t* panels, std::int64_t ldv) {
  for (std::int64_t d = 0; d < dv_pad; d += 16) {
    const std::int64_t w = dv - d <= 0 ? 0 : (dv - d < 16 ? dv - d : 16);
    const __mmask16 m = static_cast<__mmask16>((1u << w) - 1u);
    const __m512i lo = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, a + d));
    const __m512i hi = b == nullptr ? _mm512_setzero_si512() : _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, b + d));
    _mm512_storeu_si512(panels + (d / 16) * ldv, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
  }
}

// P.V over key pairs (n odd: the last pair's missing key has a zero weight and a zero V row);
// the forward's strides as constants for D = 64 and 128 (P rows 64 words apart, V panels of 32
// pairs, O rows dv_pad apart).
void pv_bf16(const std::uint32_t* p, std::int64_t ldp, int rows, const float* alpha, const std::uint32_t* v,
             std::int64_t ldv, int n, std::int64_t dv_pad, float* o, std::int64_t ldo) {
  blocked_pv<Bf16PairDots>(p, ldp, rows, alpha, v, ldv, (n + 1) / 2, dv_pad, o, ldo);
}

}  // namespace

const MicroKernels<float>* avx512_bf16_kernels_f32() {
  static const bool ok = missing_features(Isa::avx512_bf16, cpu_features()).empty();
  if (!ok) return nullptr;
  static const MicroKernels<float> k = [] {
    MicroKernels<float> m = *avx512_kernels_f32();  // non-null: the path needs every avx512 feature
    m.name = "avx512-bf16-f32";
    m.scores_bf16 = &scores_bf16;
    m.p_to_bf16_pairs = &p_to_bf16_pairs;
    m.pack_values_bf16 = &pack_values_bf16;
    m.pv_bf16 = &pv_bf16;
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
