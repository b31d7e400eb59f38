#include "core/decode_sweep.h"

#include <algorithm>

#include "core/block_range.h"
#include "core/tensor_io.h"
#include "core/tile_ops.h"

namespace attnv::core {
namespace {

// How a tile's K or V rows reach the row kernels.
enum class Direct { same, half, staged };

template <class T>
Direct direct_rows(const TensorRef& t, std::int64_t d, std::int64_t d_pad, bool half_kernels) {
  if (t.stride[3] != 1 || d != d_pad) return Direct::staged;
  if (t.dtype == DType::f32 && sizeof(T) == sizeof(float)) return Direct::same;
  if ((t.dtype == DType::f16 || t.dtype == DType::bf16) && half_kernels) return Direct::half;
  return Direct::staged;
}

// Rows j0 .. j0 + n - 1 of head (b, h), found through `pages`, converted into buf (n x ld, zero
// padded past d).
template <class T>
const T* stage_rows(const MicroKernels<T>& mk, const TensorRef& t, const CachePages& pages, std::int64_t b,
                    std::int64_t h, std::int64_t j0, int n, std::int64_t d, T* buf, std::int64_t ld) {
  for (int c = 0; c < n; ++c) {
    T* row = buf + c * ld;
    load_row(mk, t, pages.offset(t, b, h, j0 + c), t.stride[3], d, row);
    std::fill(row + d, row + ld, T(0));
  }
  return buf;
}

}  // namespace

template <class T>
void attend_key_rows(const ForwardParams& p, const MicroKernels<T>& mk, const RowKernels<T>& rk, Workspace<T>& ws,
                     const SoftmaxRows<T>& st, int rows, std::int64_t b, std::int64_t hkv, KeyRange keys,
                     std::int64_t i0, std::int64_t h) {
  const KeyRange* ranges = ws.ranges();
  const T scale = static_cast<T>(p.scale);
  const TensorRef& K = p.views.k;
  const TensorRef& V = p.views.v;
  const CachePages& pages = p.pages;
  // Rows that are contiguous and a whole number of SIMD widths long are read in place (f32, or
  // f16 / bf16 converted as loaded when the kernel set can); anything else is converted
  // (exactly) into row-major tile buffers first. Either way each row is read front to back, one
  // row after the other (row_kernels_avx2.cpp says why).
  const Direct k_direct = direct_rows<T>(K, p.shape.Dk, ws.dk_pad, rk.dots_half != nullptr);
  const Direct v_direct = direct_rows<T>(V, p.shape.Dv, ws.dv_pad, rk.pv_rows_half != nullptr);
  T* kt = ws.k();  // n x dk_pad, row-major (the forward's transposed K tile buffer, same size)
  T* vt = ws.v();  // n x dv_pad, row-major (the forward's panel buffer, same size)
  // Keys in runs of kRunKeys: the scores of a whole run first (K alone streams), then tile by
  // tile the online softmax and P.V (V alone streams). Each tile's arithmetic is the same, in the
  // same order, as reading K and V tile by tile, but the memory sees two long sequential streams
  // instead of K and V alternating every 64 rows, which kept the prefetchers from running ahead
  // (bench/README.md, decode). The run's scores sit in ws.s(): rows x kRunKeys <= its size.
  static_assert(kRowSweepRows * kRunKeys <= kQueryBlock * kKeyBlock, "a run's scores must fit ws.s()");
  static_assert(kRunKeys % kKeyBlock == 0, "a run is whole tiles");
  T* const scores = ws.s();
  for (std::int64_t r0 = keys.lo; r0 < keys.hi; r0 += kRunKeys) {
    const std::int64_t r1 = std::min(r0 + kRunKeys, keys.hi);
    TileKind kinds[kRunKeys / kKeyBlock];
    for (std::int64_t j0 = r0; j0 < r1; j0 += kKeyBlock) {
      const int n = static_cast<int>(std::min<std::int64_t>(kKeyBlock, r1 - j0));
      TileKind& kind = kinds[(j0 - r0) / kKeyBlock];
      kind = classify_tile(ranges, rows, j0, j0 + n, p.has_mask || p.has_bias);
      if (kind == TileKind::skip) continue;
      T* s = scores + (j0 - r0);
      if (k_direct == Direct::staged) {
        rk.dots(ws.q(), ws.dk_pad, rows, stage_rows(mk, K, pages, b, hkv, j0, n, p.shape.Dk, kt, ws.dk_pad),
                ws.dk_pad, n, ws.dk_pad, scale, s, kRunKeys);
        continue;
      }
      // In place, one call per run of keys adjacent in memory: the whole tile when contiguous,
      // each page's part of it when paged. A key's score does not depend on the others in the
      // call, so the scores are the contiguous path's bit for bit.
      for (int c = 0; c < n;) {
        const int m = static_cast<int>(std::min<std::int64_t>(n - c, pages.run(j0 + c)));
        const std::int64_t k0 = pages.offset(K, b, hkv, j0 + c);
        if (k_direct == Direct::same)
          rk.dots(ws.q(), ws.dk_pad, rows, static_cast<const T*>(K.data) + k0, K.stride[2], m, ws.dk_pad, scale,
                  s + c, kRunKeys);
        else
          rk.dots_half(ws.q(), ws.dk_pad, rows, static_cast<const std::uint16_t*>(K.data) + k0, K.stride[2], m,
                       ws.dk_pad, K.dtype == DType::bf16, scale, s + c, kRunKeys);
        c += m;
      }
    }
    for (std::int64_t j0 = r0; j0 < r1; j0 += kKeyBlock) {
      const int n = static_cast<int>(std::min<std::int64_t>(kKeyBlock, r1 - j0));
      const TileKind kind = kinds[(j0 - r0) / kKeyBlock];
      if (kind == TileKind::skip) continue;
      T* s = scores + (j0 - r0);
      // Hidden keys (outside a row's interval) become -inf whatever their K held.
      if (kind == TileKind::partial || p.has_softcap || p.has_bias || p.has_alibi)
        apply_logit_rules(p, b, h, ranges, i0, rows, j0, n, s, kRunKeys);
      softmax_rows_update(mk, st, s, kRunKeys, rows, n);
      for (int r = 0; r < rows; ++r)
        for (std::int64_t d = 0; d < ws.dv_pad; ++d) ws.o()[r * ws.dv_pad + d] *= st.alpha[r];
      const std::int64_t v0 = pages.offset(V, b, hkv, j0);
      // pv_rows interleaves a tile's keys (row_kernels.h: an order fixed by n), so V is read in
      // place only when the whole tile lies in one run; a tile spread over pages is staged, which
      // gives the same values to the same pv_rows: the contiguous path's bits.
      const Direct vd = pages.run(j0) >= n ? v_direct : Direct::staged;
      if (kind == TileKind::partial) {
        // A partial tile may hold hidden keys whose V is inf or NaN: their zero weights are skipped.
        const T* v = vd == Direct::same ? static_cast<const T*>(V.data) + v0
                                        : stage_rows(mk, V, pages, b, hkv, j0, n, p.shape.Dv, vt, ws.dv_pad);
        const std::int64_t ldv = vd == Direct::same ? V.stride[2] : ws.dv_pad;
        for (int c = 0; c < n; ++c) rk.axpy(s + c, kRunKeys, rows, v + c * ldv, ws.dv_pad, ws.o(), ws.dv_pad);
      } else if (vd == Direct::same) {
        rk.pv_rows(s, kRunKeys, rows, static_cast<const T*>(V.data) + v0, V.stride[2], n, ws.dv_pad, ws.o(),
                   ws.dv_pad);
      } else if (vd == Direct::half) {
        rk.pv_rows_half(s, kRunKeys, rows, static_cast<const std::uint16_t*>(V.data) + v0, V.stride[2], n, ws.dv_pad,
                        V.dtype == DType::bf16, ws.o(), ws.dv_pad);
      } else {
        rk.pv_rows(s, kRunKeys, rows, stage_rows(mk, V, pages, b, hkv, j0, n, p.shape.Dv, vt, ws.dv_pad), ws.dv_pad,
                   n, ws.dv_pad, ws.o(), ws.dv_pad);
      }
    }
  }
}

template void attend_key_rows<float>(const ForwardParams&, const MicroKernels<float>&, const RowKernels<float>&,
                                     Workspace<float>&, const SoftmaxRows<float>&, int, std::int64_t, std::int64_t,
                                     KeyRange, std::int64_t, std::int64_t);
template void attend_key_rows<double>(const ForwardParams&, const MicroKernels<double>&, const RowKernels<double>&,
                                      Workspace<double>&, const SoftmaxRows<double>&, int, std::int64_t, std::int64_t,
                                      KeyRange, std::int64_t, std::int64_t);

}  // namespace attnv::core
