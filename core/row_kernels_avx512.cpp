// AVX-512 (F, BW, VL, DQ) + FMA + F16C row kernels of the decode sweep (row_kernels.h). Compiled
// with those flags (this file only) and used only when avx512_kernels_f32() found the CPU able to
// run them. Everything here has internal linkage: an inline function shared with the AVX2 or
// portable files would be one symbol, and the linker could hand them this file's EVEX copy.
//
// Bit for bit the AVX2 set (row_kernels_avx2.cpp; core/tests/isa_test.cpp checks it): each output
// element sees the same operations in the same order, 16 lanes at a time instead of 8.
//   dots, 4-row blocks: the AVX2 set keeps two 8-lane chains per row (pieces d = 0, 16, 32, ...
//     and d = 8, 24, ...); one 16-lane chain here holds both in its halves, so its low + high
//     halves is the AVX2 sum a + b, and the same hadd tree follows. Rows are taken 8 at a time
//     when there are 8 (each row's chain is its own, so blocking does not change its bits). An
//     f16 or bf16 cache's keys are taken 4 at a time (dots_rxn): each piece of q loaded once for
//     the four, and two keys' hadd trees in the halves of one 512-bit register (the same adds on
//     the same operands): the conversions make those dots compute-bound, and the reduction was a
//     third of their work. An f32 cache stays key by key (side by side it lost up to 7%); with four
//     rows and D = 64 or 128 q's first pieces stay in registers across the keys (dots_4rows_q_held).
//   dots, single rows: the AVX2 set's four chains (d mod 32 in [0, 8), [8, 16), ...) are two
//     16-lane chains here, the 8-value tail pieces go into the first one's low half.
//   pv_rows: keys added onto each output element in the AVX2 order (lanes of n / 4 keys, then
//     the rest), whatever the loop nest; here the 4 x R weights of a group of keys are broadcast
//     once per group instead of once per 16 columns.
// The memory walk is the AVX2 set's (but for an f16 or bf16 cache's four keys side by side):
// every K row read whole, front to back, before the next, and V's keys in four lanes n / 4 rows
// apart (row_kernels_avx2.cpp says why: the prefetchers; on the AVX-512 machine, V in key order,
// in 2 or 8 lanes and K in lanes were no better: bench/README.md, decode). K and V rows are
// also prefetched in software, tuned per vendor (IntoL1 and IntoL2 below say why). No exp here:
// the sweep's softmax is the path's micro-kernels' (microkernels_avx512.cpp, on exp_constants.h).
#include "core/microkernels.h"
#include "core/row_kernels.h"

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    defined(__AVX512DQ__) && defined(__FMA__) && defined(__F16C__)
#include "core/avx512_intrinsics.h"

#include "core/avx2_hsum.h"
#include <cstdint>
#include <type_traits>

namespace attnv::core {
namespace {

// Sixteen stored values as f32 (load), or eight in the low half with zeros above (load8): in
// place for f32, converted (exactly) as loaded for f16 and bf16.
struct F32 {
  using E = float;
  static __m512 load(const float* x) { return _mm512_loadu_ps(x); }
  static __m512 load8(const float* x) { return _mm512_maskz_loadu_ps(0x00FF, x); }
};
struct F16 {
  using E = std::uint16_t;
  static __m512 load(const std::uint16_t* x) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)));
  }
  static __m512 load8(const std::uint16_t* x) {
    return _mm512_cvtph_ps(_mm256_zextsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x))));
  }
};
struct BF16 {
  using E = std::uint16_t;
  static __m512 from(__m256i h) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)); }
  static __m512 load(const std::uint16_t* x) { return from(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x))); }
  static __m512 load8(const std::uint16_t* x) {
    return from(_mm256_zextsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x))));
  }
};

constexpr __mmask16 kLow8 = 0x00FF;

// Software prefetch of the cache's rows, tuned per vendor as measured on each (never needed for
// correctness: prefetches change no arithmetic, so the AVX2 set's bits stay, and never fault:
// past the tile's end, the next tile, another page of a paged cache or past the tensor, they
// are at worst wasted). K is fetched `keys` keys ahead; each V lane `lane_steps` of its rows
// ahead, running into the next tile's lanes at the end.
//
// IntoL1, Intel (bench/README.md, "Decode: an f16 cache at 0.70 of the stream"): without it the
// half-cache decode's samples sat on the first FMA after each conversion, i.e. on loads waiting
// for memory, though the same arithmetic keeps pace with the stream when the cache is warm;
// with it, f16 read as many GB per CPU second as f32 (A/B of 10 rounds: +8-70%, median +51%).
// Likely why the hardware prefetchers alone lag there (not proven, no counters on that VM): each
// byte of a half cache carries twice f32's instructions, so the out-of-order window holds half
// as many lines in flight; and P.V's four lanes start a fresh 4 KiB page every tile (16 rows of
// 256 bytes), where the L2 streamer retrains. An f32 cache takes none: the same prefetches gave
// it nothing there (A/B, 3 rounds).
//
// IntoL2, AMD (bench/README.md, "Zen 4"): on a Zen 4 the prefetches into L1 gave an f16 cache
// nothing and an f32 cache -11%; into L2 (locality 2, _MM_HINT_T1), three times as far ahead,
// +10-30% for f32 and +15% for f16 (3 rounds; into L1 at those distances: worse than none).
// Probably because a prefetch into L1 holds one of the core's few L1 miss buffers until its line
// arrives, which caps the lines in flight; into L2 it does not (not proven: no counters there).
struct IntoL1 {
  static constexpr int locality = 3;  // _MM_HINT_T0
  static constexpr int keys = 16, lane_steps = 4;
  static constexpr bool f32 = false;
};
struct IntoL2 {
  static constexpr int locality = 2;  // _MM_HINT_T1
  static constexpr int keys = 48, lane_steps = 12;
  static constexpr bool f32 = true;
};
template <class Tune, class L>
constexpr bool kPrefetches = Tune::f32 || !std::is_same_v<L, F32>;

// Every 64-byte line of `bytes` bytes from `base` + `offset` elements of E. The address is
// formed as an integer: it may lie past the tensor, where a pointer may not point.
template <class Tune, class E>
void prefetch_row(const E* base, std::int64_t offset, std::int64_t bytes) {
  const std::uintptr_t a =
      reinterpret_cast<std::uintptr_t>(base) + static_cast<std::uintptr_t>(offset * std::int64_t{sizeof(E)});
  for (std::int64_t b = 0; b < bytes; b += 64)
    __builtin_prefetch(reinterpret_cast<const char*>(a + static_cast<std::uintptr_t>(b)), 0, Tune::locality);
}

// The AVX2 set's a + b of one row: the two halves of its 16-lane chain.
__m256 halves(__m512 a) { return _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1)); }

// [sum a0, sum a1, sum a2, sum a3] by the AVX2 set's hadd tree.
__m128 hsum4(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
  const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
  return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

// Four rows' chains against one key, summed by hsum4 and scaled: s[i lds] for i < 4.
void store_4_dots(const __m512* acc, __m128 scale, float* s, std::int64_t lds) {
  const __m128 sums = hsum4(halves(acc[0]), halves(acc[1]), halves(acc[2]), halves(acc[3]));
  float out[4];
  _mm_storeu_ps(out, _mm_mul_ps(sums, scale));
  for (int i = 0; i < 4; ++i) s[i * lds] = out[i];
}

// R (4 or 8) rows against one key: each 16-value piece of k loaded once for the R rows.
template <class L, int R>
void dots_rx1(const float* q, std::int64_t ldq, const typename L::E* k, std::int64_t dk_pad, __m128 scale, float* s,
              std::int64_t lds) {
  __m512 acc[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  std::int64_t d = 0;
  for (; d + 16 <= dk_pad; d += 16) {
    const __m512 x = L::load(k + d);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[r] = _mm512_fmadd_ps(_mm512_loadu_ps(q + r * ldq + d), x, acc[r]);
  }
  if (d < dk_pad) {  // 8 values left: the AVX2 set's even chain (the low halves) takes them
    const __m512 x = L::load8(k + d);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
      acc[r] = _mm512_mask3_fmadd_ps(_mm512_maskz_loadu_ps(kLow8, q + r * ldq + d), x, acc[r], kLow8);
  }
#pragma GCC unroll 2
  for (int r = 0; r < R; r += 4) store_4_dots(acc + r, scale, s + r * lds, lds);
}

// One row against one key: the AVX2 set's four 8-lane chains as two 16-lane ones.
template <class L>
float dot_1x1(const float* q, const typename L::E* k, std::int64_t dk_pad) {
  __m512 a = _mm512_setzero_ps(), b = a;
  std::int64_t d = 0;
  for (; d + 32 <= dk_pad; d += 32) {
    a = _mm512_fmadd_ps(_mm512_loadu_ps(q + d), L::load(k + d), a);
    b = _mm512_fmadd_ps(_mm512_loadu_ps(q + d + 16), L::load(k + d + 16), b);
  }
  for (; d < dk_pad; d += 8) a = _mm512_mask3_fmadd_ps(_mm512_maskz_loadu_ps(kLow8, q + d), L::load8(k + d), a, kLow8);
  return hsum(_mm256_add_ps(halves(a), halves(b)));
}

// hsum4 for two keys at once, x's chains in the low 256 bits of each argument and y's in the high:
// the AVX2 set's halves, its three hadds and its final low + high 128 bits, each the same add on
// the same operands (vhaddps adds SRC1[63:32] + SRC1[31:0], hence odd + even), so the sums are
// hsum4's bit for bit: key x's four in lanes 0-3, key y's in lanes 8-11.
__m512 halves2(__m512 x, __m512 y) {
  return _mm512_add_ps(_mm512_shuffle_f32x4(x, y, _MM_SHUFFLE(1, 0, 1, 0)), _mm512_shuffle_f32x4(x, y, _MM_SHUFFLE(3, 2, 3, 2)));
}
__m512 hadd2(__m512 a, __m512 b) {
  return _mm512_add_ps(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)), _mm512_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));
}
__m512 hsum4x2(__m512 h0, __m512 h1, __m512 h2, __m512 h3) {
  const __m512 h = hadd2(hadd2(h0, h1), hadd2(h2, h3));
  return _mm512_add_ps(h, _mm512_shuffle_f32x4(h, h, _MM_SHUFFLE(2, 3, 0, 1)));
}

// R (4 or 8) rows against NK (even) consecutive keys: each 16-value piece of q loaded once for
// the NK keys, each key's piece once for the R rows; every (row, key) chain is dots_rx1's.
template <class L, int R, int NK>
void dots_rxn(const float* q, std::int64_t ldq, const typename L::E* k, std::int64_t ldk, std::int64_t dk_pad,
              __m512 scale, float* s, std::int64_t lds) {
  __m512 acc[NK][R];
#pragma GCC unroll 4
  for (int c = 0; c < NK; ++c)
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) acc[c][r] = _mm512_setzero_ps();
  std::int64_t d = 0;
  for (; d + 16 <= dk_pad; d += 16) {
    __m512 x[NK];
#pragma GCC unroll 4
    for (int c = 0; c < NK; ++c) x[c] = L::load(k + c * ldk + d);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 qr = _mm512_loadu_ps(q + r * ldq + d);
#pragma GCC unroll 4
      for (int c = 0; c < NK; ++c) acc[c][r] = _mm512_fmadd_ps(qr, x[c], acc[c][r]);
    }
  }
  if (d < dk_pad) {  // 8 values left, into the low halves as in dots_rx1
    __m512 x[NK];
#pragma GCC unroll 4
    for (int c = 0; c < NK; ++c) x[c] = L::load8(k + c * ldk + d);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 qr = _mm512_maskz_loadu_ps(kLow8, q + r * ldq + d);
#pragma GCC unroll 4
      for (int c = 0; c < NK; ++c) acc[c][r] = _mm512_mask3_fmadd_ps(qr, x[c], acc[c][r], kLow8);
    }
  }
#pragma GCC unroll 2
  for (int c = 0; c < NK; c += 2)
#pragma GCC unroll 2
    for (int r = 0; r < R; r += 4) {
      const __m512 sums = _mm512_mul_ps(
          hsum4x2(halves2(acc[c][r], acc[c + 1][r]), halves2(acc[c][r + 1], acc[c + 1][r + 1]),
                  halves2(acc[c][r + 2], acc[c + 1][r + 2]), halves2(acc[c][r + 3], acc[c + 1][r + 3])),
          scale);
      float out[16];
      _mm512_storeu_ps(out, sums);
      for (int i = 0; i < 4; ++i) {
        s[(r + i) * lds + c] = out[i];
        s[(r + i) * lds + c + 1] = out[8 + i];
      }
    }
}

// Four rows against an f32 cache's keys one at a time, dk_pad = 16 DC: every (row, key) chain is
// dots_rx1<F32, 4>'s, but q's first pieces stay in registers across the keys (24 of the 32 zmm
// registers; 4 accumulators, a K piece and a q piece take the rest). Zen 4 loads one 512-bit
// vector per cycle and issues one 512-bit FMA: dots_rx1 loads q's four pieces and K's one for
// every four FMAs, so its dots ran at half the FMA rate in L1; with q held, a key's 32 FMAs at
// D = 128 take K's eight loads and q's last eight pieces (at D = 64: 16 FMAs, four K loads).
template <int DC, class Tune>
void dots_4rows_q_held(const float* q, std::int64_t ldq, const float* k, std::int64_t ldk, int n, float scale,
                       float* s, std::int64_t lds) {
  constexpr int H = DC < 6 ? DC : 6;
  __m512 qh[4][H];
#pragma GCC unroll 4
  for (int r = 0; r < 4; ++r)
#pragma GCC unroll 8
    for (int j = 0; j < H; ++j) qh[r][j] = _mm512_loadu_ps(q + r * ldq + 16 * j);
  const __m128 sc = _mm_set1_ps(scale);
  for (int c = 0; c < n; ++c) {
    const float* kc = k + c * ldk;
    if constexpr (kPrefetches<Tune, F32>) prefetch_row<Tune>(k, (c + Tune::keys) * ldk, 64 * DC);
    __m512 acc[4];
#pragma GCC unroll 4
    for (int r = 0; r < 4; ++r) acc[r] = _mm512_setzero_ps();
#pragma GCC unroll 16
    for (int j = 0; j < DC; ++j) {
      const __m512 x = _mm512_loadu_ps(kc + 16 * j);
#pragma GCC unroll 4
      for (int r = 0; r < 4; ++r)
        acc[r] = _mm512_fmadd_ps(j < H ? qh[r][j] : _mm512_loadu_ps(q + r * ldq + 16 * j), x, acc[r]);
    }
    store_4_dots(acc, sc, s + c, lds);
  }
}

// Keys one at a time for an f32 cache (row_kernels_avx2.cpp says why), four at a time for f16 and
// bf16 (the top of the file says why), 8 or 4 rows at a time, then single rows.
template <class L>
constexpr int kKeysPerPass = std::is_same_v<L, F32> ? 1 : 4;

template <class L, class Tune>
void dots(const float* q, std::int64_t ldq, int rows, const typename L::E* k, std::int64_t ldk, int n,
          std::int64_t dk_pad, float scale, float* s, std::int64_t lds) {
  if constexpr (std::is_same_v<L, F32>) {
    if (rows == 4 && dk_pad == 128) return dots_4rows_q_held<8, Tune>(q, ldq, k, ldk, n, scale, s, lds);
    if (rows == 4 && dk_pad == 64) return dots_4rows_q_held<4, Tune>(q, ldq, k, ldk, n, scale, s, lds);
  }
  const __m128 sc = _mm_set1_ps(scale);
  constexpr int G = kKeysPerPass<L>;
  int c = 0;
  if constexpr (G > 1) {
    const __m512 sc16 = _mm512_set1_ps(scale);
    const std::int64_t row_bytes = dk_pad * std::int64_t{sizeof(typename L::E)};
    for (; c + G <= n; c += G) {
      const typename L::E* kc = k + c * ldk;
      if constexpr (kPrefetches<Tune, L>)
        for (int j = 0; j < G; ++j) prefetch_row<Tune>(k, (c + Tune::keys + j) * ldk, row_bytes);
      int r = 0;
      for (; r + 8 <= rows; r += 8)
        for (int j = 0; j < G; j += 2)
          dots_rxn<L, 8, 2>(q + r * ldq, ldq, kc + j * ldk, ldk, dk_pad, sc16, s + r * lds + c + j, lds);
      for (; r + 4 <= rows; r += 4) dots_rxn<L, 4, G>(q + r * ldq, ldq, kc, ldk, dk_pad, sc16, s + r * lds + c, lds);
      for (; r < rows; ++r)
        for (int j = 0; j < G; ++j) s[r * lds + c + j] = dot_1x1<L>(q + r * ldq, kc + j * ldk, dk_pad) * scale;
    }
  }
  for (; c < n; ++c) {
    const typename L::E* kc = k + c * ldk;
    if constexpr (kPrefetches<Tune, L>)
      prefetch_row<Tune>(k, (c + Tune::keys) * ldk, dk_pad * std::int64_t{sizeof(typename L::E)});
    int r = 0;
    for (; r + 8 <= rows; r += 8) dots_rx1<L, 8>(q + r * ldq, ldq, kc, dk_pad, sc, s + r * lds + c, lds);
    for (; r + 4 <= rows; r += 4) dots_rx1<L, 4>(q + r * ldq, ldq, kc, dk_pad, sc, s + r * lds + c, lds);
    for (; r < rows; ++r) s[r * lds + c] = dot_1x1<L>(q + r * ldq, kc, dk_pad) * scale;
  }
}

template <class Tune>
void dots_half(const float* q, std::int64_t ldq, int rows, const std::uint16_t* k, std::int64_t ldk, int n,
               std::int64_t dk_pad, bool bf16, float scale, float* s, std::int64_t lds) {
  if (bf16)
    dots<BF16, Tune>(q, ldq, rows, k, ldk, n, dk_pad, scale, s, lds);
  else
    dots<F16, Tune>(q, ldq, rows, k, ldk, n, dk_pad, scale, s, lds);
}

void axpy(const float* w, std::int64_t ldw, int rows, const float* v, std::int64_t dv_pad, float* o,
          std::int64_t ldo) {
  for (int r = 0; r < rows; ++r) {
    const float x = w[r * ldw];
    if (x == 0) continue;
    const __m512 xv = _mm512_set1_ps(x);
    float* orow = o + r * ldo;
    for (std::int64_t d = 0; d < dv_pad; d += 16)
      _mm512_storeu_ps(orow + d, _mm512_fmadd_ps(xv, _mm512_loadu_ps(v + d), _mm512_loadu_ps(orow + d)));
  }
}

// NK keys (key i at v + i kstep, weight p[r ldp + i pstep]) onto R rows of o, 16 columns at a
// time; the R x NK weights are broadcast once for all columns (at most 16 registers).
template <class L, int R, int NK>
void pv_keys(const float* p, std::int64_t ldp, int pstep, const typename L::E* v, std::int64_t kstep, std::int64_t dv_pad,
             float* o, std::int64_t ldo) {
  __m512 w[R][NK];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < NK; ++c) w[r][c] = _mm512_set1_ps(p[r * ldp + c * pstep]);
  for (std::int64_t d = 0; d < dv_pad; d += 16) {
    __m512 acc[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r] = _mm512_loadu_ps(o + r * ldo + d);
#pragma GCC unroll 4
    for (int c = 0; c < NK; ++c) {
      const __m512 x = L::load(v + c * kstep + d);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) acc[r] = _mm512_fmadd_ps(w[r][c], x, acc[r]);
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) _mm512_storeu_ps(o + r * ldo + d, acc[r]);
  }
}

// The AVX2 set's key order: lanes c, c + q, c + 2q, c + 3q (q = n / 4) for c < q, then the rest.
template <class L, int R, class Tune>
void pv_block(const float* p, std::int64_t ldp, const typename L::E* v, std::int64_t ldv, int n, std::int64_t dv_pad,
              float* o, std::int64_t ldo) {
  const int q = n / 4;
  const std::int64_t row_bytes = dv_pad * std::int64_t{sizeof(typename L::E)};
  for (int c = 0; c < q; ++c) {
    if constexpr (kPrefetches<Tune, L>) {
      // Lane l's row a + l q, or past the lanes' end the next tile's (n keys on).
      const int a = c + Tune::lane_steps;
      for (int l = 0; l < 4; ++l) prefetch_row<Tune>(v, (a < q ? a + l * q : n + (a - q) + l * q) * ldv, row_bytes);
    }
    pv_keys<L, R, 4>(p + c, ldp, q, v + c * ldv, q * ldv, dv_pad, o, ldo);
  }
  for (int c = 4 * q; c < n; ++c) pv_keys<L, R, 1>(p + c, ldp, 1, v + c * ldv, ldv, dv_pad, o, ldo);
}

template <class L, class Tune>
void pv_rows(const float* p, std::int64_t ldp, int rows, const typename L::E* v, std::int64_t ldv, int n,
             std::int64_t dv_pad, float* o, std::int64_t ldo) {
  for (int r0 = 0; r0 < rows; r0 += 4) {
    const float* pr = p + r0 * ldp;
    float* orow = o + r0 * ldo;
    switch (rows - r0) {
      case 1: pv_block<L, 1, Tune>(pr, ldp, v, ldv, n, dv_pad, orow, ldo); break;
      case 2: pv_block<L, 2, Tune>(pr, ldp, v, ldv, n, dv_pad, orow, ldo); break;
      case 3: pv_block<L, 3, Tune>(pr, ldp, v, ldv, n, dv_pad, orow, ldo); break;
      default: pv_block<L, 4, Tune>(pr, ldp, v, ldv, n, dv_pad, orow, ldo); break;
    }
  }
}

template <class Tune>
void pv_rows_half(const float* p, std::int64_t ldp, int rows, const std::uint16_t* v, std::int64_t ldv, int n,
                  std::int64_t dv_pad, bool bf16, float* o, std::int64_t ldo) {
  if (bf16)
    pv_rows<BF16, Tune>(p, ldp, rows, v, ldv, n, dv_pad, o, ldo);
  else
    pv_rows<F16, Tune>(p, ldp, rows, v, ldv, n, dv_pad, o, ldo);
}

template <class Tune>
const RowKernels<float> kRowKernels{std::is_same_v<Tune, IntoL1> ? "avx512-rows-f32" : "avx512-rows-f32-l2prefetch",
                                    &dots<F32, Tune>,
                                    &axpy,
                                    &pv_rows<F32, Tune>,
                                    &dots_half<Tune>,
                                    &pv_rows_half<Tune>};

}  // namespace

const RowKernels<float>* avx512_row_kernels_f32(Prefetch prefetch) {
  if (avx512_kernels_f32() == nullptr) return nullptr;
  if (prefetch == Prefetch::for_cpu) prefetch = cpu_features().amd ? Prefetch::into_l2 : Prefetch::into_l1;
  return prefetch == Prefetch::into_l2 ? &kRowKernels<IntoL2> : &kRowKernels<IntoL1>;
}

}  // namespace attnv::core

#else

namespace attnv::core {
const RowKernels<float>* avx512_row_kernels_f32(Prefetch) { return nullptr; }
}  // namespace attnv::core

#endif
