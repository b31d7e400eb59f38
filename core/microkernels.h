#pragma once
// The arithmetic inner loops of the tile loop, behind one table of function pointers per
// accumulator type: for f32 an AVX-512 set (microkernels_avx512.cpp), an AVX2 + FMA + F16C set
// (microkernels_avx2.cpp) and a portable one (microkernels_portable.cpp), chosen per call by
// the ISA path (isa.h); for f64 the portable set only.
//
// Every routine is deterministic (a fixed operation order that depends only on its arguments),
// so results do not depend on threads. Every one follows the structure the error bound covers
// (reference/bound/BOUND.md section 0): each operation is one rounding in T.
//
// Layouts (all row-major, leading dimensions in elements):
//   q [rows x ldq], dk_pad columns (Dk rounded up to kDkPad, zero-filled)
//   k transposed: element (key c, dim d) at k[d * ldk + c], d < dk_pad, c < round_up(n, 16)
//     (zero-filled beyond Dk and n), so the scores loop broadcasts q and needs no horizontal sums
//   s [rows x lds]                        scores, then weights e, in place
//   v in 16-column panels: element (c, d) at v[(d / 16) * ldv + c * 16 + d % 16], ldv >= 16 n
//     (each panel contiguous, so the pv loop streams it instead of striding across cache sets)
//   o [rows x dv_pad]                     (dv_pad: Dv rounded up to kPanel, zero-filled)
#include <cstdint>

#include "core/isa.h"

namespace attnv::core {

// Head dimensions are padded with exact zeros (which add nothing to a dot product or output):
// Dk to the 8 lanes of the dot-product loop, Dv to whole V panels.
inline constexpr std::int64_t kDkPad = 8;
inline constexpr std::int64_t kPanel = 16;  // columns per V panel

// Element (c, d) of a panel-major V tile.
// Internal linkage (static), like avx2_hsum.h: files compiled with different -m flags include
// this header, and an inline function they share could be kept from the widest one's copy.
static inline std::int64_t panel_index(std::int64_t c, std::int64_t d, std::int64_t ldv) {
  return (d / kPanel) * ldv + c * kPanel + d % kPanel;
}

template <class T>
struct MicroKernels {
  const char* name;
  // s[r][c] = fl(fl(q_r . k_c) * scale) for r < rows, c < n (any summation order); columns
  // [n, round_up(n, 16)) of s may be written too (lds must leave room).
  void (*scores)(const T* q, std::int64_t ldq, int rows, const T* k, std::int64_t ldk, int n,
                 std::int64_t dk_pad, T scale, T* s, std::int64_t lds);
  // max of x[0..n) (-inf for n == 0 or all -inf).
  T (*row_max)(const T* x, int n);
  // x[c] <- exp(x[c] - m) in place; returns the sum of the new x[c]. exp(-inf) = 0.
  T (*exp_sum)(T* x, int n, T m);
  // x[c] <- exp(x[c]) in place.
  void (*exp_inplace)(T* x, int n);
  // o[r][d] <- alpha[r] * o[r][d] + sum_c p[r][c] v(c, d) for r < rows, d < dv_pad.
  void (*pv)(const T* p, std::int64_t ldp, int rows, const T* alpha, const T* v,
             std::int64_t ldv, int n, std::int64_t dv_pad, T* o, std::int64_t ldo);
  // Whether pv adds each term with one fused multiply-add (else a multiply, then an add). The
  // tile loop's NaN-safe variant of pv must round exactly like pv: what a hidden key holds must
  // not change a single output bit (SPEC; conformance requirement R6).
  bool pv_fused;
  // Contiguous conversions from 16-bit storage (exact) and to it (round to nearest even).
  void (*from_f16)(const std::uint16_t* in, std::int64_t n, T* out);
  void (*from_bf16)(const std::uint16_t* in, std::int64_t n, T* out);
  void (*to_f16)(const T* in, std::int64_t n, std::uint16_t* out);
  void (*to_bf16)(const T* in, std::int64_t n, std::uint16_t* out);
  // kt[d * ldk + c] = rows[c][d] for d < dk and c < 16 (rows[c] for c < n <= 16; zero for
  // c >= n): 16 keys of the transposed K tile, exact copies. Null: the tile ops transpose with
  // scalar loops (a sixth of the AVX-512 forward's time at D = 128 before this existed).
  void (*transpose_keys)(const T* const* rows, int n, std::int64_t dk, T* kt, std::int64_t ldk) = nullptr;
  // exp_sum on `rows` rows at once: for r < rows, sum[r] = exp_sum(x + r * ldx, n, m[r]) with the
  // same bits (sum may alias m: m[r] is read before sum[r] is written). Null: exp_sum per row.
  // Why: at n = 64 a row is four vectors, so per-row calls spend as much on setting up constants
  // and on the serial sum as on the exps (a sixth of the AVX-512 forward's time at D = 64).
  void (*exp_sum_rows)(T* x, std::int64_t ldx, int rows, int n, const T* m, T* sum) = nullptr;
  // The forward's Q.K^T for bf16 storage on AVX512_BF16 (the avx512_bf16 path's set only; null
  // elsewhere). Operands are bf16 pairs in 32-bit words, element 2w in the low half:
  //   q [rows x ldq] words, word w of row r = q_r's dimensions 2w, 2w + 1
  //   k word (w, c) at k[w * ldk + c] = key c's dimensions 2w, 2w + 1 (zero past Dk and n, as
  //     scores' k: pack them with transpose_keys, whose exact copies move words as they move floats)
  // s[r][c] = fl(dot * scale) as scores, the dot in vdpbf16ps's arithmetic: pairs ascending, in
  // each the odd dimension's product first, each product exact and added with one rounding, and
  // every subnormal operand read as zero and subnormal sum flushed (the precision model declares
  // flush_subnormals: CoreKernel::precision).
  void (*scores_bf16)(const std::uint32_t* q, std::int64_t ldq, int rows, const std::uint32_t* k,
                      std::int64_t ldk, int n, std::int64_t words, T scale, T* s, std::int64_t lds) = nullptr;
  // Its P.V on vdpbf16ps too (the same set only), P rounded to bf16 (p_dtype = bf16, declared):
  //   p_to_bf16_pairs: rows of n weights in s become ceil(n / 2) words of bf16 pairs in place
  //     (round to nearest even, a subnormal weight read as zero, P[n] zero when n is odd)
  //   pack_values_bf16: the V rows of keys 2w, 2w + 1 (bf16; b null: zero) as row w of pair words
  //     of every 16-column panel: word d of panel j at panels[j * ldv] for the row's `panels`
  //   pv_bf16: o[r][d] <- alpha[r] o[r][d] (one f32 multiply), then per key pair w ascending the
  //     odd key's exact product added, then the even one's, each one rounding, flushing as
  //     scores_bf16 (tile_ops.h's pv_bf16_skipping_hidden emulates it bit for bit)
  void (*p_to_bf16_pairs)(T* s, std::int64_t lds, int rows, int n) = nullptr;
  void (*pack_values_bf16)(const std::uint16_t* a, const std::uint16_t* b, std::int64_t dv, std::int64_t dv_pad,
                           std::uint32_t* panels, std::int64_t ldv) = nullptr;
  void (*pv_bf16)(const std::uint32_t* p, std::int64_t ldp, int rows, const T* alpha, const std::uint32_t* v,
                  std::int64_t ldv, int n, std::int64_t dv_pad, T* o, std::int64_t ldo) = nullptr;
};

// mk.exp_sum_rows, or mk.exp_sum row by row where the set has none (the same bits either way).
template <class T>
void exp_sum_rows(const MicroKernels<T>& mk, T* x, std::int64_t ldx, int rows, int n, const T* m, T* sum) {
  if (mk.exp_sum_rows != nullptr) return mk.exp_sum_rows(x, ldx, rows, n, m, sum);
  for (int r = 0; r < rows; ++r) sum[r] = mk.exp_sum(x + r * ldx, n, m[r]);
}

const MicroKernels<float>& portable_kernels_f32();
const MicroKernels<double>& portable_kernels_f64();
// Null when not compiled for x86-64 or the CPU lacks a feature of the path (isa.h).
const MicroKernels<float>* avx2_kernels_f32();
const MicroKernels<float>* avx512_kernels_f32();
const MicroKernels<float>* avx512_bf16_kernels_f32();  // avx512's set plus scores_bf16

// The f32 set of a path: resolve_isa(isa) (isa.h), so `best` follows ATTNV_CORE_ISA, then the
// CPU; InputError when the path asked for cannot run here.
const MicroKernels<float>& kernels_f32(Isa isa);

// Scalar bit conversions shared by both sets (round to nearest even, NaN kept quiet).
std::uint16_t f32_to_f16_bits(float x);
std::uint16_t f32_to_bf16_bits(float x);
float f16_bits_to_f32(std::uint16_t h);
static inline float bf16_bits_to_f32(std::uint16_t h) {
  const std::uint32_t u = std::uint32_t{h} << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}

}  // namespace attnv::core
