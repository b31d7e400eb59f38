#pragma once
// Inner loops of decode's row-major key sweep (core/decode_sweep.h). A decode step has a handful
// of query rows per KV head (G heads x n tokens), so the forward's tile layout (K transposed,
// V copied into 16-column panels: microkernels.h) costs more in copying than its register
// blocking saves: decode is bandwidth-bound and every K and V row is used by only those few rows.
// These kernels read each K and V row as it lies (after the exact conversion of load_row) and
// use it for all rows at once. Same arithmetic contract as MicroKernels::scores and ::pv (any
// summation order, each product rounded once or fused), which the error bound covers.
#include <cstdint>

#include "core/isa.h"

namespace attnv::core {

template <class T>
struct RowKernels {
  const char* name;
  // s[r * lds + c] = fl(fl(q_r . k_c) * scale) for r < rows, c < n; q rows at q + r ldq, key
  // rows at k + c ldk, each dk_pad values (a multiple of 8, zero padded).
  void (*dots)(const T* q, std::int64_t ldq, int rows, const T* k, std::int64_t ldk, int n, std::int64_t dk_pad,
               T scale, T* s, std::int64_t lds);
  // o_r[d] += w[r * ldw] v[d] for d < dv_pad (a multiple of 16), r < rows, one fused
  // multiply-add per term; rows whose weight is 0 are skipped, so a hidden key's non-finite V
  // never meets a zero weight (0 * inf = NaN).
  void (*axpy)(const T* w, std::int64_t ldw, int rows, const T* v, std::int64_t dv_pad, T* o, std::int64_t ldo);
  // o_r[d] += sum_{c < n} p[r ldp + c] v[c ldv + d] for d < dv_pad, r < rows: a tile of n
  // row-major V rows at once (the accumulator held in registers across several keys), one
  // fused multiply-add per term, the keys in an order fixed by n alone. Every term enters, so
  // the caller uses it only on tiles whose V is finite or whose keys are all visible.
  void (*pv_rows)(const T* p, std::int64_t ldp, int rows, const T* v, std::int64_t ldv, int n, std::int64_t dv_pad,
                  T* o, std::int64_t ldo);
  // dots and pv_rows on K or V rows stored as f16 (bf16 = false) or bf16 bits, converted
  // (exactly) as they are loaded: the same values and operations as converting the rows into a
  // T buffer first, so the same results, without the extra pass over the tile. Null when the
  // set has none; the caller then converts.
  void (*dots_half)(const T* q, std::int64_t ldq, int rows, const std::uint16_t* k, std::int64_t ldk, int n,
                    std::int64_t dk_pad, bool bf16, T scale, T* s, std::int64_t lds) = nullptr;
  void (*pv_rows_half)(const T* p, std::int64_t ldp, int rows, const std::uint16_t* v, std::int64_t ldv, int n,
                       std::int64_t dv_pad, bool bf16, T* o, std::int64_t ldo) = nullptr;
};

// The f32 set of a path, resolved as kernels_f32 (microkernels.h) resolves it.
const RowKernels<float>& row_kernels_f32(Isa isa);
const RowKernels<double>& row_kernels_f64();
// Null when the path's micro-kernels are (avx2_kernels_f32, avx512_kernels_f32).
const RowKernels<float>* avx2_row_kernels_f32();
// The AVX-512 set comes in two software-prefetch tunings that give the same bits
// (row_kernels_avx512.cpp): into L1 (measured on Intel) or into L2 (measured on AMD); for_cpu
// picks by the CPU's vendor, and tests ask for each.
enum class Prefetch { for_cpu, into_l1, into_l2 };
const RowKernels<float>* avx512_row_kernels_f32(Prefetch prefetch = Prefetch::for_cpu);

}  // namespace attnv::core
