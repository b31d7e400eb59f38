#include "core/tile_loop.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/block_range.h"
#include "core/online_softmax.h"
#include "core/tensor_io.h"
#include "core/visibility.h"

namespace attnv::core {
namespace {

// Loads rows [first, first + n) of a [B, H, T, D] view into buf [n x ld] in T, zero-padding
// columns [d, ld) so padded dot products and outputs stay exact.
template <class T>
void load_rows(const MicroKernels<T>& mk, const TensorRef& t, std::int64_t b, std::int64_t h,
               std::int64_t first, std::int64_t n, std::int64_t d, std::int64_t ld, T* buf) {
  for (std::int64_t r = 0; r < n; ++r) {
    T* row = buf + r * ld;
    load_row(mk, t, offset_of(t, b, h, first + r), t.stride[3], d, row);
    std::fill(row + d, row + ld, T(0));
  }
}

// Loads V rows [first, first + n) into 16-column panels (microkernels.h), zero-padded.
template <class T>
void load_v_panels(const MicroKernels<T>& mk, const TensorRef& t, std::int64_t b, std::int64_t h,
                   std::int64_t first, int n, std::int64_t dv, std::int64_t dv_pad, T* row_buf,
                   T* panels) {
  for (int c = 0; c < n; ++c) {
    load_row(mk, t, offset_of(t, b, h, first + c), t.stride[3], dv, row_buf);
    std::fill(row_buf + dv, row_buf + dv_pad, T(0));
    for (std::int64_t d = 0; d < dv_pad; d += kPanel)
      std::copy(row_buf + d, row_buf + d + kPanel, panels + panel_index(c, d, Workspace<T>::ldv));
  }
}

// Whether the first n keys of a panel-major V tile are all finite.
// Loads K rows [first, first + n) transposed: kt[d * ldk + c]; zero for d >= dk and for
// c in [n, round_up(n, 16)), so every value the scores kernel reads is defined.
template <class T>
void load_k_transposed(const MicroKernels<T>& mk, const TensorRef& t, std::int64_t b,
                       std::int64_t h, std::int64_t first, int n, std::int64_t dk,
                       std::int64_t dk_pad, std::int64_t ldk, T* row_buf, T* kt) {
  const int n16 = static_cast<int>(round_up(n, 16));
  for (int c = 0; c < n; ++c) {
    load_row(mk, t, offset_of(t, b, h, first + c), t.stride[3], dk, row_buf);
    for (std::int64_t d = 0; d < dk; ++d) kt[d * ldk + c] = row_buf[d];
  }
  for (std::int64_t d = 0; d < dk_pad; ++d) {
    const int from = d < dk ? n : 0;
    std::fill(kt + d * ldk + from, kt + d * ldk + n16, T(0));
  }
}

template <class T>
bool all_finite(const T* panels, int n, std::int64_t dv_pad, std::int64_t ldv) {
  for (std::int64_t d = 0; d < dv_pad; d += kPanel) {
    const T* x = panels + (d / kPanel) * ldv;
    for (std::int64_t i = 0; i < n * kPanel; ++i)
      if (!std::isfinite(x[i])) return false;
  }
  return true;
}

// Visibility, softcap and bias on a tile of scores s = fl(fl(q.k) * scale). Keys outside the
// row's interval become -inf (a fill: causal and window tiles need nothing else); inside it,
// the mask hides keys, then t = fl(c * fl(tanh(fl(s / c)))) (softcap) and fl(t + bias). Hidden
// keys become -inf whatever their score (a hidden key's K row may hold anything, NaN included).
template <class T>
void apply_logit_rules(const ForwardParams& p, const KeyRange* ranges, std::int64_t i0, int rows,
                       std::int64_t j0, int n, T* s, std::int64_t lds) {
  const T ninf = -std::numeric_limits<T>::infinity();
  const T cap = static_cast<T>(p.softcap);
  const TensorRef& mask = p.views.mask;
  const TensorRef& bias = p.views.bias;
  const bool per_element = p.has_mask || p.has_softcap || p.has_bias;
  for (int r = 0; r < rows; ++r) {
    const std::int64_t i = i0 + r;
    T* row = s + r * lds;
    const KeyRange kr = ranges[r];
    const int c_lo = kr.empty() ? n : static_cast<int>(std::clamp<std::int64_t>(kr.lo - j0, 0, n));
    const int c_hi = kr.empty() ? n : static_cast<int>(std::clamp<std::int64_t>(kr.hi - j0, c_lo, n));
    std::fill(row, row + c_lo, ninf);
    std::fill(row + c_hi, row + n, ninf);
    if (!per_element) continue;
    for (int c = c_lo; c < c_hi; ++c) {
      const std::int64_t j = j0 + c;
      if (p.has_mask &&
          static_cast<const std::uint8_t*>(mask.data)[i * mask.stride[0] + j * mask.stride[1]] == 0) {
        row[c] = ninf;
        continue;
      }
      T t = row[c];
      if (p.has_softcap) t = cap * static_cast<T>(std::tanh(t / cap));
      if (p.has_bias) {
        const T bv = load_scalar<T>(bias, i * bias.stride[0] + j * bias.stride[1]);
        t = bv == ninf ? ninf : t + bv;
      }
      row[c] = t;
    }
  }
}

// O += P V for a tile whose V holds non-finite values: terms with weight 0 (hidden keys) are
// skipped so a hidden NaN/inf cannot reach the output (0 * inf = NaN). Every other term is
// rounded exactly as the active pv micro-kernel rounds it (fused or not), in the same order, so
// the output bits do not depend on what hidden keys hold. Only used on such rare tiles.
template <class T>
void pv_skipping_hidden(const T* p, std::int64_t ldp, int rows, const T* alpha, const T* v,
                        std::int64_t ldv, int n, std::int64_t dv_pad, T* o, std::int64_t ldo,
                        bool fused) {
  for (int r = 0; r < rows; ++r) {
    T* orow = o + r * ldo;
    for (std::int64_t d = 0; d < dv_pad; ++d) orow[d] *= alpha[r];
    for (int c = 0; c < n; ++c) {
      const T w = p[r * ldp + c];
      if (w == 0) continue;
      if (fused)
        for (std::int64_t d = 0; d < dv_pad; ++d) orow[d] = std::fma(w, v[panel_index(c, d, ldv)], orow[d]);
      else
        for (std::int64_t d = 0; d < dv_pad; ++d) orow[d] += w * v[panel_index(c, d, ldv)];
    }
  }
}

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
void forward_query_block(const ForwardParams& p, const MicroKernels<T>& mk, Workspace<T>& ws,
                         const QueryBlock& qb) {
  const int rows = static_cast<int>(qb.i1 - qb.i0);
  const std::int64_t kv_len = p.kv_len(qb.b);
  const std::int64_t hkv = qb.h / p.group;
  KeyRange* ranges = ws.ranges();
  for (int r = 0; r < rows; ++r) ranges[r] = row_key_range(p, kv_len, qb.i0 + r);
  const KeyRange hull = block_key_hull(ranges, rows);

  const SoftmaxRows<T> st = ws.softmax();
  softmax_rows_init(st, rows);
  std::fill(ws.o(), ws.o() + rows * ws.dv_pad, T(0));
  if (!hull.empty())
    load_rows(mk, p.views.q, qb.b, qb.h, qb.i0, rows, p.shape.Dk, ws.dk_pad, ws.q());

  const T scale = static_cast<T>(p.scale);
  const bool elementwise_always = p.has_softcap || p.has_bias;
  for (std::int64_t j0 = hull.lo; j0 < hull.hi; j0 += kKeyBlock) {
    const int n = static_cast<int>(std::min<std::int64_t>(kKeyBlock, hull.hi - j0));
    const TileKind kind = classify_tile(ranges, rows, j0, j0 + n, p.has_mask || p.has_bias);
    if (kind == TileKind::skip) continue;  // fully masked tile: not even loaded
    load_k_transposed(mk, p.views.k, qb.b, hkv, j0, n, p.shape.Dk, ws.dk_pad, ws.ldk, ws.row(), ws.k());
    load_v_panels(mk, p.views.v, qb.b, hkv, j0, n, p.shape.Dv, ws.dv_pad, ws.row(), ws.v());
    mk.scores(ws.q(), ws.dk_pad, rows, ws.k(), ws.ldk, n, ws.dk_pad, scale, ws.s(), ws.lds);
    if (kind == TileKind::partial || elementwise_always)
      apply_logit_rules(p, ranges, qb.i0, rows, j0, n, ws.s(), ws.lds);
    softmax_rows_update(mk, st, ws.s(), ws.lds, rows, n);
    if (kind == TileKind::partial && !all_finite(ws.v(), n, ws.dv_pad, ws.ldv))
      pv_skipping_hidden(ws.s(), ws.lds, rows, st.alpha, ws.v(), ws.ldv, n, ws.dv_pad, ws.o(), ws.dv_pad,
                         mk.pv_fused);
    else
      mk.pv(ws.s(), ws.lds, rows, st.alpha, ws.v(), ws.ldv, n, ws.dv_pad, ws.o(), ws.dv_pad);
  }
  softmax_rows_finish(st, rows, ws.o(), ws.dv_pad, p.shape.Dv, ws.lse());
  write_rows(p, mk, qb, ws.o(), ws.dv_pad, ws.lse());
}

template void forward_query_block<float>(const ForwardParams&, const MicroKernels<float>&,
                                         Workspace<float>&, const QueryBlock&);
template void forward_query_block<double>(const ForwardParams&, const MicroKernels<double>&,
                                          Workspace<double>&, const QueryBlock&);

}  // namespace attnv::core
