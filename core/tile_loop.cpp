#include "core/tile_loop.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

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

// Whether the forward takes Q.K^T and P.V on bf16 pairs (MicroKernels::scores_bf16, pv_bf16): the
// avx512_bf16 path's set, with Q, K and V stored in bf16. Then ws.q() holds Q's rows, ws.k() the
// K tile and ws.v() the V tile as bf16 pairs (tile_ops.h), and P is rounded to bf16 pairs before
// P.V; the online softmax (max, exp, row sums on the f32 weights), the logit rules and dropout
// are the f32 loop's.
template <class T>
bool bf16_pairs(const ForwardParams& p, const MicroKernels<T>& mk) {
  return mk.scores_bf16 != nullptr && p.views.q.dtype == DType::bf16 && p.views.k.dtype == DType::bf16 &&
         p.views.v.dtype == DType::bf16;
}

template <class T>
SoftmaxRows<T> offset_rows(const SoftmaxRows<T>& st, int r0) {
  return {st.m + r0, st.l + r0, st.alpha + r0, st.tile_sum + r0};
}

// Rows [r0, r0 + rows) of the workspace (query i0 + r for row r0 + r) against key tile
// [j0, j0 + n) already in ws.k() and ws.v(), which may hold more keys than n (the forward's
// blocks share a tile: past n, columns of the scores tile are computed and never read).
template <class T>
void attend_tile(const ForwardParams& p, const MicroKernels<T>& mk, Workspace<T>& ws, SoftmaxRows<T> st,
                 int r0, int rows, std::int64_t i0, std::int64_t b, std::int64_t h, std::int64_t j0, int n,
                 TileKind kind, bool pairs) {
  if (kind == TileKind::partial) {
    // Only the run of rows from the first to the last whose interval meets the tile. A row
    // outside it would get -inf for every logit of the tile, which leaves its m, l and O as they
    // are (alpha = 1 and P = 0, or alpha = 0 and nothing while it has seen no key yet), so it is
    // left out: on a causal diagonal the rows above the tile (up to two thirds of a 192-row
    // block against a 64-key tile) cost nothing.
    const KeyRange* rr = ws.ranges() + r0;
    const auto meets = [&](int r) { return rr[r].lo < j0 + n && rr[r].hi > j0 && !rr[r].empty(); };
    int first = 0, end = rows;
    while (first < end && !meets(first)) ++first;
    while (end > first && !meets(end - 1)) --end;
    if (first == end) return;
    r0 += first;
    rows = end - first;
    i0 += first;
    st = offset_rows(st, first);
  }
  const KeyRange* ranges = ws.ranges() + r0;
  T* o = ws.o() + r0 * ws.dv_pad;
  const bool elementwise_always = p.has_softcap || p.has_bias || p.has_alibi;
  const bool dropping = p.dropout.active();
  if (pairs)
    mk.scores_bf16(reinterpret_cast<const std::uint32_t*>(ws.q() + r0 * ws.dk_pad), ws.dk_pad, rows,
                   reinterpret_cast<const std::uint32_t*>(ws.k()), ws.ldk, n, ws.dk_pad / 2, static_cast<T>(p.scale),
                   ws.s(), ws.lds);
  else
    mk.scores(ws.q() + r0 * ws.dk_pad, ws.dk_pad, rows, ws.k(), ws.ldk, n, ws.dk_pad, static_cast<T>(p.scale),
              ws.s(), ws.lds);
  if (kind == TileKind::partial || elementwise_always)
    apply_logit_rules(p, b, h, ranges, i0, rows, j0, n, ws.s(), ws.lds);
  softmax_rows_update(mk, st, ws.s(), ws.lds, rows, n);
  // Dropout after the row sums: l keeps every weight, only the P.V numerator loses the
  // dropped ones (O = sum_j P_j m_j v_j / (1 - p), docs/dropout.md). A dropped weight is 0,
  // so its key may hold a non-finite V only through the NaN-safe pv, as a hidden one.
  if (dropping) {
    const std::uint64_t threshold = dropout_threshold(p.dropout.p);
    for (int r = 0; r < rows; ++r) dropout_row(p.dropout, threshold, b, h, i0 + r, j0, n, ws.s() + r * ws.lds);
  }
  if constexpr (std::is_same_v<T, float>) {
    if (pairs) {
      // P to bf16 pairs over the scores, then P.V on pairs. The NaN-safe emulation also when n is
      // odd: the last pair holds key n of the tile (loaded for another block), weight 0 here.
      mk.p_to_bf16_pairs(ws.s(), ws.lds, rows, n);
      const std::int64_t ldv = ws.ldv / 2;  // words per panel: kKeyBlock / 2 pairs x 16
      if ((kind == TileKind::partial || dropping || n % 2 != 0) && !all_finite_bf16_pairs(ws.v(), n, ws.dv_pad, ldv))
        pv_bf16_skipping_hidden(ws.s(), ws.lds, rows, st.alpha, ws.v(), ldv, n, ws.dv_pad, o, ws.dv_pad);
      else
        mk.pv_bf16(reinterpret_cast<const std::uint32_t*>(ws.s()), ws.lds, rows, st.alpha,
                   reinterpret_cast<const std::uint32_t*>(ws.v()), ldv, n, ws.dv_pad, o, ws.dv_pad);
      return;
    }
  }
  if ((kind == TileKind::partial || dropping) && !all_finite(ws.v(), n, ws.dv_pad, ws.ldv))
    pv_skipping_hidden(ws.s(), ws.lds, rows, st.alpha, ws.v(), ws.ldv, n, ws.dv_pad, o, ws.dv_pad, mk.pv_fused);
  else
    mk.pv(ws.s(), ws.lds, rows, st.alpha, ws.v(), ws.ldv, n, ws.dv_pad, o, ws.dv_pad);
}

template <class T>
void load_tile(const ForwardParams& p, const MicroKernels<T>& mk, Workspace<T>& ws, std::int64_t b,
               std::int64_t hkv, std::int64_t j0, int n, bool pairs) {
  if constexpr (std::is_same_v<T, float>) {
    if (pairs) {
      load_k_bf16_pairs(mk, p.views.k, p.pages, b, hkv, j0, n, p.shape.Dk, ws.dk_pad / 2, ws.dk_pad, ws.ldk, ws.row(),
                        ws.k());
      load_v_bf16_pairs(mk, p.views.v, p.pages, b, hkv, j0, n, p.shape.Dv, ws.dv_pad, ws.ldv / 2, ws.row(), ws.v());
      return;
    }
  }
  load_k_transposed(mk, p.views.k, p.pages, b, hkv, j0, n, p.shape.Dk, ws.dk_pad, ws.ldk, ws.row(), ws.k());
  load_panels(mk, p.views.v, p.pages, b, hkv, j0, n, p.shape.Dv, ws.dv_pad, ws.ldv, ws.row(), ws.v());
}

// attend_key_tiles on workspace rows [r0, r0 + rows) (st already offset to them).
template <class T>
void attend_key_tiles_at(const ForwardParams& p, const MicroKernels<T>& mk, Workspace<T>& ws,
                         const SoftmaxRows<T>& st, int r0, int rows, std::int64_t i0, std::int64_t b,
                         std::int64_t hkv, KeyRange keys, std::int64_t h, bool pairs) {
  const KeyRange* ranges = ws.ranges() + r0;
  for (std::int64_t j0 = keys.lo; j0 < keys.hi; j0 += kKeyBlock) {
    const int n = static_cast<int>(std::min<std::int64_t>(kKeyBlock, keys.hi - j0));
    const TileKind kind = classify_tile(ranges, rows, j0, j0 + n, p.has_mask || p.has_bias);
    if (kind == TileKind::skip) continue;  // fully masked tile: not even loaded
    load_tile(p, mk, ws, b, hkv, j0, n, pairs);
    attend_tile(p, mk, ws, st, r0, rows, i0, b, h, j0, n, kind, pairs);
  }
}

// The query blocks of one forward item: workspace rows [r0, r0 + rows), queries from i0.
struct BlockPart {
  int r0 = 0, rows = 0;
  std::int64_t i0 = 0;
  KeyRange keys;
};

// Every block against the key tiles it sees, each tile loaded once for all the blocks that see
// it. A block visits exactly the tiles it would alone (its own hull, cut into tiles from its
// own lo; skipped tiles skipped), in the same order, so the bits are those of one block at a
// time. Sharing needs the blocks' tile grids to coincide (their lo congruent modulo the tile:
// always without a window, whose intervals all start at 0); otherwise each block sweeps alone.
template <class T>
void attend_blocks(const ForwardParams& p, const MicroKernels<T>& mk, Workspace<T>& ws, const SoftmaxRows<T>& st,
                   const BlockPart* parts, int n_parts, std::int64_t b, std::int64_t h, bool pairs) {
  const std::int64_t hkv = h / p.group;
  KeyRange all{0, 0};
  bool shared = true, any = false;
  for (int k = 0; k < n_parts; ++k) {
    const KeyRange kr = parts[k].keys;
    if (kr.empty()) continue;
    if (!any) all = kr;
    shared = shared && (kr.lo - all.lo) % kKeyBlock == 0;
    all = {std::min(all.lo, kr.lo), std::max(all.hi, kr.hi)};
    any = true;
  }
  if (!any) return;
  if (!shared) {
    for (int k = 0; k < n_parts; ++k) {
      const BlockPart& bp = parts[k];
      if (!bp.keys.empty())
        attend_key_tiles_at(p, mk, ws, offset_rows(st, bp.r0), bp.r0, bp.rows, bp.i0, b, hkv, bp.keys, h, pairs);
    }
    return;
  }
  for (std::int64_t j0 = all.lo; j0 < all.hi; j0 += kKeyBlock) {
    bool loaded = false;
    for (int k = 0; k < n_parts; ++k) {
      const BlockPart& bp = parts[k];
      if (bp.keys.empty() || j0 < bp.keys.lo || j0 >= bp.keys.hi) continue;
      const int n = static_cast<int>(std::min<std::int64_t>(kKeyBlock, bp.keys.hi - j0));
      const TileKind kind = classify_tile(ws.ranges() + bp.r0, bp.rows, j0, j0 + n, p.has_mask || p.has_bias);
      if (kind == TileKind::skip) continue;
      if (!loaded)
        load_tile(p, mk, ws, b, hkv, j0, static_cast<int>(std::min<std::int64_t>(kKeyBlock, all.hi - j0)), pairs);
      loaded = true;
      attend_tile(p, mk, ws, offset_rows(st, bp.r0), bp.r0, bp.rows, bp.i0, b, h, j0, n, kind, pairs);
    }
  }
}

}  // namespace

template <class T>
void attend_key_tiles(const ForwardParams& p, const MicroKernels<T>& mk, Workspace<T>& ws,
                      const SoftmaxRows<T>& st, int rows, std::int64_t i0, std::int64_t b,
                      std::int64_t hkv, KeyRange keys, std::int64_t h) {
  attend_key_tiles_at(p, mk, ws, st, 0, rows, i0, b, hkv, keys, h, false);  // Q in ws.q() as T (tile_loop.h)
}

template <class T>
void forward_query_block(const ForwardParams& p, const MicroKernels<T>& mk, Workspace<T>& ws,
                         const QueryBlock& qb) {
  const int rows = static_cast<int>(qb.i1 - qb.i0);
  const std::int64_t kv_len = p.kv_len(qb.b);
  KeyRange* ranges = ws.ranges();
  for (int r = 0; r < rows; ++r) ranges[r] = row_key_range(p, kv_len, qb.i0 + r);

  const SoftmaxRows<T> st = ws.softmax();
  if (p.has_sinks)
    softmax_rows_init_sink(st, rows, load_scalar<T>(p.views.sinks, qb.h * p.views.sinks.stride[0]));
  else
    softmax_rows_init(st, rows);
  std::fill(ws.o(), ws.o() + rows * ws.dv_pad, T(0));

  const bool pairs = bf16_pairs(p, mk);
  BlockPart parts[kForwardBlocks];
  int n_parts = 0;
  for (int r0 = 0; r0 < rows; r0 += kQueryBlock) {
    BlockPart& bp = parts[n_parts++];
    bp.r0 = r0;
    bp.rows = std::min(kQueryBlock, rows - r0);
    bp.i0 = qb.i0 + r0;
    bp.keys = block_key_hull(ranges + r0, bp.rows);
    if (bp.keys.empty()) continue;
    if constexpr (std::is_same_v<T, float>) {
      if (pairs) {
        load_rows_bf16_pairs(p.views.q, qb.b, qb.h, bp.i0, bp.rows, p.shape.Dk, ws.dk_pad / 2, ws.dk_pad,
                             ws.q() + r0 * ws.dk_pad);
        continue;
      }
    }
    load_rows(mk, p.views.q, qb.b, qb.h, bp.i0, bp.rows, p.shape.Dk, ws.dk_pad, ws.q() + r0 * ws.dk_pad);
  }
  attend_blocks(p, mk, ws, st, parts, n_parts, qb.b, qb.h, pairs);

  softmax_rows_finish(st, rows, ws.o(), ws.dv_pad, p.shape.Dv, ws.lse());
  if (p.dropout.active()) {
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
