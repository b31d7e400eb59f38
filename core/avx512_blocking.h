#pragma once
// The register blocking both AVX-512 sets share (microkernels_avx512.cpp, f32 FMAs, and
// microkernels_avx512_bf16.cpp, vdpbf16ps on bf16 pairs), for 32 zmm registers:
// scores: 6 rows x 64 keys (24 accumulators, 4 K vectors): per reduction step, four loads of the
//   transposed K tile and six broadcasts of Q for 24 multiply-adds.
// pv: 6 rows x 64 output columns (four 16-column V panels, 24 accumulators): per step, four
//   panel loads and six broadcasts of P for 24 multiply-adds.
// A step is what one multiply-add reduces over: one head dimension (one key in pv) for f32, one
// pair of them for bf16. The `Dot` policy says what a step's operands are:
//   Elem                      what the Q / P rows and the K / V panels hold (float, or a bf16 pair)
//   load(const Elem*)         16 lanes of a K or V panel
//   broadcast(Elem)           one Q or P element in every lane
//   madd(acc, x, y)           acc plus the lanes' products, in the set's own order and rounding
//   kTileSteps                the steps of one forward key tile (64 keys), for pv's strides
// Internal linkage (an unnamed namespace), like row_blocks.h: the including files are compiled
// with different -m flags and must not share instantiations.
#include <cstdint>
#include <type_traits>

#include "core/avx512_intrinsics.h"
#include "core/row_blocks.h"

namespace attnv::core {
namespace {

template <std::int64_t N>
using Const = std::integral_constant<std::int64_t, N>;

// R rows x 16 NV keys: acc[r][v] = madd over the steps ascending, then scaled.
template <class Dot, int R, int NV>
inline void scores_block(const typename Dot::Elem* q, std::int64_t ldq, const typename Dot::Elem* kt, std::int64_t ldk,
                         std::int64_t steps, float scale, float* s, std::int64_t lds) {
  __m512 acc[R][NV];
  _Pragma("GCC unroll 8")
  for (int r = 0; r < R; ++r)
    _Pragma("GCC unroll 4")
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  for (std::int64_t d = 0; d < steps; ++d) {
    decltype(Dot::load(kt)) k[NV];
    _Pragma("GCC unroll 4")
    for (int v = 0; v < NV; ++v) k[v] = Dot::load(kt + d * ldk + 16 * v);
    _Pragma("GCC unroll 8")
    for (int r = 0; r < R; ++r) {
      const auto w = Dot::broadcast(q[r * ldq + d]);
      _Pragma("GCC unroll 4")
      for (int v = 0; v < NV; ++v) acc[r][v] = Dot::madd(acc[r][v], w, k[v]);
    }
  }
  const __m512 sc = _mm512_set1_ps(scale);
  _Pragma("GCC unroll 8")
  for (int r = 0; r < R; ++r)
    _Pragma("GCC unroll 4")
    for (int v = 0; v < NV; ++v) _mm512_storeu_ps(s + r * lds + 16 * v, _mm512_mul_ps(acc[r][v], sc));
}

// Keys in blocks of 64, then 16 at a time (columns up to round_up(n, 16) are defined).
template <class Dot, int R>
inline void scores_rows(const typename Dot::Elem* q, std::int64_t ldq, const typename Dot::Elem* kt, std::int64_t ldk,
                        int n, std::int64_t steps, float scale, float* s, std::int64_t lds) {
  int c = 0;
  for (; c + 64 <= n; c += 64) scores_block<Dot, R, 4>(q, ldq, kt + c, ldk, steps, scale, s + c, lds);
  for (; c < n; c += 16) scores_block<Dot, R, 1>(q, ldq, kt + c, ldk, steps, scale, s + c, lds);
}

template <class Dot>
void blocked_scores(const typename Dot::Elem* q, std::int64_t ldq, int rows, const typename Dot::Elem* kt,
                    std::int64_t ldk, int n, std::int64_t steps, float scale, float* s, std::int64_t lds) {
  for_row_blocks<6>(rows, [&](auto R, int r) {
    scores_rows<Dot, decltype(R)::value>(q + r * ldq, ldq, kt, ldk, n, steps, scale, s + r * lds, lds);
  });
}

// R rows x NP panels (16 NP columns) of o: acc = alpha * o, then one madd per step, ascending.
template <class Dot, int R, int NP, class LdP, class LdV, class LdO>
inline void pv_block(const typename Dot::Elem* p, LdP ldp, const float* alpha, const typename Dot::Elem* v, LdV ldv,
                     std::int64_t steps, float* o, LdO ldo) {
  __m512 acc[R][NP];
  _Pragma("GCC unroll 8")
  for (int r = 0; r < R; ++r) {
    const __m512 a = _mm512_set1_ps(alpha[r]);
    _Pragma("GCC unroll 4")
    for (int j = 0; j < NP; ++j) acc[r][j] = _mm512_mul_ps(a, _mm512_loadu_ps(o + r * ldo + 16 * j));
  }
  for (std::int64_t c = 0; c < steps; ++c) {
    decltype(Dot::load(v)) vv[NP];
    _Pragma("GCC unroll 4")
    for (int j = 0; j < NP; ++j) vv[j] = Dot::load(v + j * ldv + c * 16);
    _Pragma("GCC unroll 8")
    for (int r = 0; r < R; ++r) {
      const auto w = Dot::broadcast(p[r * ldp + c]);
      _Pragma("GCC unroll 4")
      for (int j = 0; j < NP; ++j) acc[r][j] = Dot::madd(acc[r][j], w, vv[j]);
    }
  }
  _Pragma("GCC unroll 8")
  for (int r = 0; r < R; ++r)
    _Pragma("GCC unroll 4")
    for (int j = 0; j < NP; ++j) _mm512_storeu_ps(o + r * ldo + 16 * j, acc[r][j]);
}

// Output columns in blocks of four panels, then one panel at a time.
template <class Dot, int R, class LdP, class LdV, class LdO>
inline void pv_rows(const typename Dot::Elem* p, LdP ldp, const float* alpha, const typename Dot::Elem* v, LdV ldv,
                    std::int64_t steps, std::int64_t dv_pad, float* o, LdO ldo) {
  std::int64_t d = 0;
  for (; d + 64 <= dv_pad; d += 64) pv_block<Dot, R, 4>(p, ldp, alpha, v + (d / 16) * ldv, ldv, steps, o + d, ldo);
  for (; d < dv_pad; d += 16) pv_block<Dot, R, 1>(p, ldp, alpha, v + (d / 16) * ldv, ldv, steps, o + d, ldo);
}

template <class Dot, class LdP, class LdV, class LdO>
void pv_strided(const typename Dot::Elem* p, LdP ldp, int rows, const float* alpha, const typename Dot::Elem* v,
                LdV ldv, std::int64_t steps, std::int64_t dv_pad, float* o, LdO ldo) {
  for_row_blocks<6>(rows, [&](auto R, int r) {
    pv_rows<Dot, decltype(R)::value>(p + r * ldp, ldp, alpha + r, v, ldv, steps, dv_pad, o + r * ldo, ldo);
  });
}

// The forward's strides (tile_loop.cpp: P rows kKeyBlock = 64 apart, V panels of one key tile,
// O rows dv_pad apart) as constants for D = 64 and 128: each row's address is then a base plus a
// fixed offset, where with run-time strides GCC kept a pointer per row and spilled them around
// the step loop. The same operations in the same order; on the Zen 4 forward +0.5-2% for f32,
// +2.6-3.7% for bf16 pairs (bench/README.md, sessions 16 and 17).
template <class Dot>
void blocked_pv(const typename Dot::Elem* p, std::int64_t ldp, int rows, const float* alpha,
                const typename Dot::Elem* v, std::int64_t ldv, std::int64_t steps, std::int64_t dv_pad, float* o,
                std::int64_t ldo) {
  constexpr std::int64_t kLdv = Dot::kTileSteps * 16;
  if (ldp == 64 && ldv == kLdv && ldo == dv_pad && (dv_pad == 64 || dv_pad == 128))
    return dv_pad == 64 ? pv_strided<Dot>(p, Const<64>{}, rows, alpha, v, Const<kLdv>{}, steps, dv_pad, o, Const<64>{})
                        : pv_strided<Dot>(p, Const<64>{}, rows, alpha, v, Const<kLdv>{}, steps, dv_pad, o, Const<128>{});
  pv_strided<Dot>(p, ldp, rows, alpha, v, ldv, steps, dv_pad, o, ldo);
}

}  // namespace
}  // namespace attnv::core
