#include "core/tile_loop.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/block_range.h"
#include "core/dropout.h"
#include "core/online_softmax.h"
#include "core/tensor_io.h"
#include "core/tile_ops.h"
#include "core/visibility.h"

namespace attnv::core {
namespace {

template <class T>
void write_rows(const ForwardParams& p, const MicroKernels<T>& mk, const QueryBlock& qb,
                const T* o, std::int64_t ldo, const T* lse) {
  const TensorRef& out = p.views.out;
  const TensorRef& ls = p.views.lse;
  for (std::int64_t r = 0; r < qb.i1 - qb.i0; ++r) {
    const std::int64_t i = qb.i0 + r;
    store_row(mk, out, offset_of(out, qb.b, qb.h, i), out.stride[3], p.shape.Dv, o + r * ldo);
    if (ls.present()) store_row(mk, ls, offset_of(ls, qb.b, qb.h, i), 1, 1, lse + r);
  }
}

}  // namespace

template <class T>
void attend_key_tiles(const ForwardParams& p, const MicroKernels<T>& mk, Workspace<T>& ws,
                      const SoftmaxRows<T>& st, int rows, std::int64_t i0, std::int64_t b,
                      std::int64_t hkv, KeyRange keys, std::int64_t h) {
  const KeyRange* ranges = ws.ranges();
  const T scale = static_cast<T>(p.scale);
  const bool elementwise_always = p.has_softcap || p.has_bias || p.has_alibi;
  const bool dropping = p.dropout.active();
  const std::uint64_t threshold = dropping ? dropout_threshold(p.dropout.p) : 0;
  for (std::int64_t j0 = keys.lo; j0 < keys.hi; j0 += kKeyBlock) {
    const int n = static_cast<int>(std::min<std::int64_t>(kKeyBlock, keys.hi - j0));
    const TileKind kind = classify_tile(ranges, rows, j0, j0 + n, p.has_mask || p.has_bias);
    if (kind == TileKind::skip) continue;  // fully masked tile: not even loaded
    load_k_transposed(mk, p.views.k, p.pages, b, hkv, j0, n, p.shape.Dk, ws.dk_pad, ws.ldk, ws.row(), ws.k());
    load_panels(mk, p.views.v, p.pages, b, hkv, j0, n, p.shape.Dv, ws.dv_pad, ws.ldv, ws.row(), ws.v());
    mk.scores(ws.q(), ws.dk_pad, rows, ws.k(), ws.ldk, n, ws.dk_pad, scale, ws.s(), ws.lds);
    if (kind == TileKind::partial || elementwise_always)
      apply_logit_rules(p, b, h, ranges, i0, rows, j0, n, ws.s(), ws.lds);
    softmax_rows_update(mk, st, ws.s(), ws.lds, rows, n);
    // Dropout after the row sums: l keeps every weight, only the P.V numerator loses the
    // dropped ones (O = sum_j P_j m_j v_j / (1 - p), docs/dropout.md). A dropped weight is 0,
    // so its key may hold a non-finite V only through the NaN-safe pv, as a hidden one.
    if (dropping)
      for (int r = 0; r < rows; ++r)
        dropout_row(p.dropout, threshold, b, h, i0 + r, j0, n, ws.s() + r * ws.lds);
    if ((kind == TileKind::partial || dropping) && !all_finite(ws.v(), n, ws.dv_pad, ws.ldv))
      pv_skipping_hidden(ws.s(), ws.lds, rows, st.alpha, ws.v(), ws.ldv, n, ws.dv_pad, ws.o(), ws.dv_pad,
                         mk.pv_fused);
    else
      mk.pv(ws.s(), ws.lds, rows, st.alpha, ws.v(), ws.ldv, n, ws.dv_pad, ws.o(), ws.dv_pad);
  }
}

template <class T>
void forward_query_block(const ForwardParams& p, const MicroKernels<T>& mk, Workspace<T>& ws,
                         const QueryBlock& qb) {
  const int rows = static_cast<int>(qb.i1 - qb.i0);
  const std::int64_t kv_len = p.kv_len(qb.b);
  KeyRange* ranges = ws.ranges();
  for (int r = 0; r < rows; ++r) ranges[r] = row_key_range(p, kv_len, qb.i0 + r);
  const KeyRange hull = block_key_hull(ranges, rows);

  const SoftmaxRows<T> st = ws.softmax();
  if (p.has_sinks)
    softmax_rows_init_sink(st, rows, load_scalar<T>(p.views.sinks, qb.h * p.views.sinks.stride[0]));
  else
    softmax_rows_init(st, rows);
  std::fill(ws.o(), ws.o() + rows * ws.dv_pad, T(0));
  if (!hull.empty())
    load_rows(mk, p.views.q, qb.b, qb.h, qb.i0, rows, p.shape.Dk, ws.dk_pad, ws.q());

  const bool dropping = p.dropout.active();
  attend_key_tiles(p, mk, ws, st, rows, qb.i0, qb.b, qb.h / p.group, hull, qb.h);
  softmax_rows_finish(st, rows, ws.o(), ws.dv_pad, p.shape.Dv, ws.lse());
  if (dropping) {
    // O = fl(fl(acc / l) * r), r = 1/(1 - p) rounded to T: the two roundings the dropout
    // reference's bound counts (docs/dropout.md, properties/layer/dropout_check.cpp).
    const T r = static_cast<T>(1.0 / (1.0 - p.dropout.p));
    for (int row = 0; row < rows; ++row)
      for (std::int64_t d = 0; d < p.shape.Dv; ++d) ws.o()[row * ws.dv_pad + d] *= r;
  }
  write_rows(p, mk, qb, ws.o(), ws.dv_pad, ws.lse());
}

template void forward_query_block<float>(const ForwardParams&, const MicroKernels<float>&,
                                         Workspace<float>&, const QueryBlock&);
template void forward_query_block<double>(const ForwardParams&, const MicroKernels<double>&,
                                          Workspace<double>&, const QueryBlock&);
template void attend_key_tiles<float>(const ForwardParams&, const MicroKernels<float>&, Workspace<float>&,
                                      const SoftmaxRows<float>&, int, std::int64_t, std::int64_t, std::int64_t,
                                      KeyRange, std::int64_t);
template void attend_key_tiles<double>(const ForwardParams&, const MicroKernels<double>&, Workspace<double>&,
                                       const SoftmaxRows<double>&, int, std::int64_t, std::int64_t, std::int64_t,
                                       KeyRange, std::int64_t);

}  // namespace attnv::core
