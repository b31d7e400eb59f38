#include "core/decode_sweep.h"

#include <algorithm>

#include "core/block_range.h"
#include "core/tensor_io.h"
#include "core/tile_ops.h"

namespace attnv::core {
namespace {

// Asks for rows [j0, j0 + n) of a [B, H, T, D] view ahead of use. The V sweep reads a tile
// column block by column block (row_kernels.h pv_rows): a 512-byte stride that the hardware
// prefetchers follow poorly, so without this the next tile's rows arrive one cache miss at a
// time (measured: core_bench BM_CoreDecode). Contiguous rows only; others are left to hardware.
void prefetch_rows(const TensorRef& t, std::int64_t b, std::int64_t h, std::int64_t j0, std::int64_t n, std::int64_t d) {
  if (t.stride[3] != 1) return;
  const std::int64_t eb = dtype_bytes(t.dtype), bytes = d * eb;
  for (std::int64_t j = j0; j < j0 + n; ++j) {
    const char* row = static_cast<const char*>(t.data) + offset_of(t, b, h, j) * eb;
    for (std::int64_t at = 0; at < bytes; at += 64) __builtin_prefetch(row + at);
  }
}

}  // namespace

template <class T>
void attend_key_rows(const ForwardParams& p, const MicroKernels<T>& mk, const RowKernels<T>& rk, Workspace<T>& ws,
                     const SoftmaxRows<T>& st, int rows, std::int64_t b, std::int64_t hkv, KeyRange keys) {
  const KeyRange* ranges = ws.ranges();
  const T scale = static_cast<T>(p.scale);
  const TensorRef& K = p.views.k;
  const TensorRef& V = p.views.v;
  T* row = ws.row();
  // f32 rows that are contiguous and a whole number of SIMD widths long are read in place;
  // anything else is converted (exactly) into a row-major tile buffer first.
  constexpr bool accum_f32 = sizeof(T) == sizeof(float);
  const bool k_direct = accum_f32 && K.dtype == DType::f32 && K.stride[3] == 1 && p.shape.Dk == ws.dk_pad;
  const bool v_direct = accum_f32 && V.dtype == DType::f32 && V.stride[3] == 1 && p.shape.Dv == ws.dv_pad;
  T* vt = ws.v();  // n x dv_pad, row-major (the forward's panel buffer, same size)
  std::fill(row + p.shape.Dk, row + ws.dk_pad, T(0));
  for (std::int64_t j0 = keys.lo; j0 < keys.hi; j0 += kKeyBlock) {
    const int n = static_cast<int>(std::min<std::int64_t>(kKeyBlock, keys.hi - j0));
    const TileKind kind = classify_tile(ranges, rows, j0, j0 + n, p.has_mask || p.has_bias);
    if (kind == TileKind::skip) continue;
    if (j0 + kKeyBlock < keys.hi) {
      const std::int64_t next = std::min<std::int64_t>(kKeyBlock, keys.hi - j0 - kKeyBlock);
      prefetch_rows(K, b, hkv, j0 + kKeyBlock, next, p.shape.Dk);
      prefetch_rows(V, b, hkv, j0 + kKeyBlock, next, p.shape.Dv);
    }
    for (int c = 0; c < n; ++c) {
      const T* k = row;
      if (k_direct)
        k = static_cast<const T*>(K.data) + offset_of(K, b, hkv, j0 + c);
      else
        load_row(mk, K, offset_of(K, b, hkv, j0 + c), K.stride[3], p.shape.Dk, row);
      rk.dots(ws.q(), ws.dk_pad, rows, k, ws.dk_pad, scale, ws.s() + c, ws.lds);
    }
    // Hidden keys (outside a row's interval) become -inf whatever their K held.
    if (kind == TileKind::partial || p.has_softcap || p.has_bias)
      apply_logit_rules(p, ranges, 0, rows, j0, n, ws.s(), ws.lds);
    softmax_rows_update(mk, st, ws.s(), ws.lds, rows, n);
    for (int r = 0; r < rows; ++r)
      for (std::int64_t d = 0; d < ws.dv_pad; ++d) ws.o()[r * ws.dv_pad + d] *= st.alpha[r];
    const T* v = vt;
    std::int64_t ldv = ws.dv_pad;
    if (v_direct) {
      v = static_cast<const T*>(V.data) + offset_of(V, b, hkv, j0);
      ldv = V.stride[2];
    } else {
      for (int c = 0; c < n; ++c) {
        T* vr = vt + c * ws.dv_pad;
        load_row(mk, V, offset_of(V, b, hkv, j0 + c), V.stride[3], p.shape.Dv, vr);
        std::fill(vr + p.shape.Dv, vr + ws.dv_pad, T(0));
      }
    }
    // A partial tile may hold hidden keys whose V is inf or NaN: their zero weights are skipped.
    if (kind == TileKind::partial)
      for (int c = 0; c < n; ++c) rk.axpy(ws.s() + c, ws.lds, rows, v + c * ldv, ws.dv_pad, ws.o(), ws.dv_pad);
    else
      rk.pv_rows(ws.s(), ws.lds, rows, v, ldv, n, ws.dv_pad, ws.o(), ws.dv_pad);
  }
}

template void attend_key_rows<float>(const ForwardParams&, const MicroKernels<float>&, const RowKernels<float>&,
                                     Workspace<float>&, const SoftmaxRows<float>&, int, std::int64_t, std::int64_t,
                                     KeyRange);
template void attend_key_rows<double>(const ForwardParams&, const MicroKernels<double>&, const RowKernels<double>&,
                                      Workspace<double>&, const SoftmaxRows<double>&, int, std::int64_t, std::int64_t,
                                      KeyRange);

}  // namespace attnv::core
