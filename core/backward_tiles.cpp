#include "core/backward_tiles.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/block_range.h"
#include "core/dropout.h"
#include "core/tensor_io.h"
#include "core/tile_ops.h"
#include "core/visibility.h"

namespace attnv::core {
namespace {

std::int64_t row_index(const ForwardParams& p, std::int64_t b, std::int64_t h, std::int64_t i) {
  return (b * p.shape.Hq + h) * p.shape.Tq + i;
}

// Row-major rows [n x ld] (columns >= the valid ones already zero) into 16-column panels of
// d_pad columns (zero beyond ld). Panel-outer, 16 contiguous elements at a time: this runs once
// per (query tile, key tile) in pass 1.
template <class T>
void rows_to_panels(const T* rows, std::int64_t ld, int n, std::int64_t d_pad, std::int64_t ldp,
                    T* panels) {
  for (std::int64_t d0 = 0; d0 < d_pad; d0 += kPanel) {
    T* panel = panels + (d0 / kPanel) * ldp;
    const std::int64_t w = std::clamp<std::int64_t>(ld - d0, 0, kPanel);  // columns from rows
    for (int r = 0; r < n; ++r) {
      std::copy(rows + r * ld + d0, rows + r * ld + d0 + w, panel + r * kPanel);
      std::fill(panel + r * kPanel + w, panel + (r + 1) * kPanel, T(0));
    }
  }
}

// A transposed tile kt[d * ldk + c] into panels (c, d), zero for d >= d_rows.
template <class T>
void transposed_to_panels(const T* kt, std::int64_t ldk, std::int64_t d_rows, int n,
                          std::int64_t d_pad, std::int64_t ldp, T* panels) {
  for (std::int64_t d0 = 0; d0 < d_pad; d0 += kPanel) {
    T* panel = panels + (d0 / kPanel) * ldp;
    for (std::int64_t e = 0; e < kPanel; ++e) {
      const std::int64_t d = d0 + e;
      for (int c = 0; c < n; ++c) panel[c * kPanel + e] = d < d_rows ? kt[d * ldk + c] : T(0);
    }
  }
}

template <class T>
void transpose(const T* a, std::int64_t lda, int rows, int cols, T* t, std::int64_t ldt) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) t[c * ldt + r] = a[r * lda + c];
}

// Dropout in the backward (docs/dropout.md): with m the forward's mask and r = fl(1/(1-p)),
// dP_ij <- fl(dP_ij r) m_ij (O_i = sum_j P_ij m_ij v_j r) and, for dV, P_ij <- fl(P_ij r) m_ij;
// dS keeps the unmasked P: dS_ij = P_ij (dP_ij - D_i), D_i = dO_i . O_i from the stored O (the
// identity sum_j P_ij dP_ij = dO_i . O_i holds with the dropout O). P is masked only after dS
// is formed (pass 1, dropout_weights), for dV.
template <class T>
void dropout_tile(const ForwardParams& p, std::int64_t b, std::int64_t h, std::int64_t i0, int rows,
                  std::int64_t j0, int n, T* ds, std::int64_t lds) {
  const std::uint64_t threshold = dropout_threshold(p.dropout.p);
  const T r = static_cast<T>(1.0 / (1.0 - p.dropout.p));
  T keep[kBwdKeys];
  for (int row = 0; row < rows; ++row) {
    std::fill(keep, keep + n, T(1));
    dropout_row(p.dropout, threshold, b, h, i0 + row, j0, n, keep);
    T* dsr = ds + row * lds;
    // A dropped key's dP is 0 whatever dO . v held (a hidden key's V may be inf: P = 0 there).
    for (int c = 0; c < n; ++c) dsr[c] = keep[c] != T(0) ? dsr[c] * r : T(0);
  }
}

// P <- fl(P r) m in place, after dS was formed from the unmasked P (dV's weights).
template <class T>
void dropout_weights(const ForwardParams& p, std::int64_t b, std::int64_t h, std::int64_t i0, int rows,
                     std::int64_t j0, int n, T* s, std::int64_t lds) {
  const std::uint64_t threshold = dropout_threshold(p.dropout.p);
  const T r = static_cast<T>(1.0 / (1.0 - p.dropout.p));
  for (int row = 0; row < rows; ++row) {
    T* sr = s + row * lds;
    for (int c = 0; c < n; ++c) sr[c] *= r;
    dropout_row(p.dropout, threshold, b, h, i0 + row, j0, n, sr);
  }
}

// The core of both passes, for query rows [i0, i0 + rows) of head h (Q in ws.q(), dO in
// ws.dout()) against keys [j0, j0 + n) (K^T in ws.kt(), V^T in ws.vt()):
//   ws.s()  <- P  = fl(exp(fl(t - L)))   (0 on hidden keys and on rows with L = -inf)
//   ws.ds() <- dS = fl(P fl(dP - D)) [* fl(1 - fl(th^2)) with a softcap], dP = fl(dO . v)
// A zero weight gives dS = 0 whatever dP holds: a hidden key's V may be inf or NaN.
template <class T>
void tile_gradients(const ForwardParams& p, const MicroKernels<T>& mk, BackwardWorkspace<T>& ws,
                    const KeyRange* ranges, TileKind kind, const T* lse, const T* dd,
                    BackwardPlant plant, std::int64_t b, std::int64_t h, std::int64_t i0, int rows,
                    std::int64_t j0, int n) {
  using WS = BackwardWorkspace<T>;
  const T ninf = -std::numeric_limits<T>::infinity();
  T* s = ws.s();
  T* ds = ws.ds();
  mk.scores(ws.q(), ws.dk8, rows, ws.kt(), WS::ldk, n, ws.dk8, static_cast<T>(p.scale), s, WS::lds);
  T* cd = p.has_softcap ? ws.cd() : nullptr;
  if (kind == TileKind::partial || p.has_softcap || p.has_bias || p.has_alibi)
    apply_logit_rules(p, b, h, ranges, i0, rows, j0, n, s, WS::lds, cd);
  // A row with no visible key has L = -inf and only -inf logits: reference point 0 keeps
  // exp(-inf - 0) = 0 instead of forming -inf - -inf (as the forward's online softmax does).
  T point[kBwdRows];  // the reference points, then the row sums (not needed: L is known)
  for (int r = 0; r < rows; ++r) point[r] = lse[r] == ninf ? T(0) : lse[r];
  exp_sum_rows(mk, s, WS::lds, rows, n, point, point);
  mk.scores(ws.dout(), ws.dv8, rows, ws.vt(), WS::ldk, n, ws.dv8, T(1), ds, WS::lds);
  if (p.dropout.active()) dropout_tile(p, b, h, i0, rows, j0, n, ds, WS::lds);
  const bool use_cd = cd != nullptr && plant != BackwardPlant::no_softcap_derivative;
  for (int r = 0; r < rows; ++r) {
    const T* pr = s + r * WS::lds;
    T* dsr = ds + r * WS::lds;
    const T d = dd[r];
    for (int c = 0; c < n; ++c) dsr[c] = pr[c] == 0 ? T(0) : pr[c] * (dsr[c] - d);
    if (use_cd) {
      const T* cdr = cd + r * WS::lds;
      for (int c = 0; c < n; ++c) dsr[c] *= cdr[c];
    }
  }
}

// Q and dO rows [i0, i0 + rows) of (b, h) into the workspace (row-major; with panels for pass 1).
template <class T>
void load_query_tile(const ForwardParams& p, const MicroKernels<T>& mk, BackwardWorkspace<T>& ws,
                     std::int64_t b, std::int64_t h, std::int64_t i0, int rows, bool panels) {
  load_rows(mk, p.views.q, b, h, i0, rows, p.shape.Dk, ws.dk8, ws.q());
  load_rows(mk, p.views.dout, b, h, i0, rows, p.shape.Dv, ws.dv8, ws.dout());
  if (!panels) return;
  rows_to_panels(ws.q(), ws.dk8, rows, ws.dk16, BackwardWorkspace<T>::ldqp, ws.qp());
  rows_to_panels(ws.dout(), ws.dv8, rows, ws.dv16, BackwardWorkspace<T>::ldqp, ws.dop());
}

template <class T>
void load_key_tile(const ForwardParams& p, const MicroKernels<T>& mk, BackwardWorkspace<T>& ws,
                   std::int64_t b, std::int64_t hkv, std::int64_t j0, int n) {
  using WS = BackwardWorkspace<T>;
  load_k_transposed(mk, p.views.k, p.pages, b, hkv, j0, n, p.shape.Dk, ws.dk8, WS::ldk, ws.row(), ws.kt());
  load_k_transposed(mk, p.views.v, p.pages, b, hkv, j0, n, p.shape.Dv, ws.dv8, WS::ldk, ws.row(), ws.vt());
}

// Writes rows of an accumulator [n x ld] times `factor` (1: no multiply) to rows [first, first + n).
template <class T>
void write_rows(const MicroKernels<T>& mk, const TensorRef& t, std::int64_t b, std::int64_t h,
                std::int64_t first, int n, std::int64_t d, const T* acc, std::int64_t ld,
                T factor, T* row_buf) {
  for (int r = 0; r < n; ++r) {
    const T* src = acc + r * ld;
    if (factor != T(1)) {
      for (std::int64_t k = 0; k < d; ++k) row_buf[k] = src[k] * factor;
      src = row_buf;
    }
    store_row(mk, t, offset_of(t, b, h, first + r), t.stride[3], d, src);
  }
}

// dQ rows of a tile += dS K (K in ws.kp()). A hidden key's K may hold NaN/inf: on such tiles
// zero weights are skipped (0 * inf = NaN), rounding every other term exactly like the pv kernel.
template <class T>
void add_dq(const MicroKernels<T>& mk, const BackwardWorkspace<T>& ws, TileKind kind, bool k_finite,
            int rows, int n, T* acc) {
  using WS = BackwardWorkspace<T>;
  if (kind == TileKind::partial && !k_finite)
    pv_skipping_hidden(ws.ds(), WS::lds, rows, ws.ones(), ws.kp(), WS::ldkp, n, ws.dk16, acc,
                       ws.dk16, mk.pv_fused);
  else
    mk.pv(ws.ds(), WS::lds, rows, ws.ones(), ws.kp(), WS::ldkp, n, ws.dk16, acc, ws.dk16);
}

}  // namespace

template <class T>
void kv_tile_backward(const ForwardParams& p, const MicroKernels<T>& mk, BackwardWorkspace<T>& ws,
                      const RowStats<T>& stats, BackwardPlant plant, std::int64_t b,
                      std::int64_t hkv, std::int64_t j0, int n, T* dq_acc) {
  using WS = BackwardWorkspace<T>;
  T* acc_k = ws.acc_k();
  T* acc_v = ws.acc_v();
  std::fill(acc_k, acc_k + n * ws.dk16, T(0));
  std::fill(acc_v, acc_v + n * ws.dv16, T(0));
  const std::int64_t kv_len = p.kv_len(b);
  const bool per_element = p.has_mask || p.has_bias;
  KeyRange* ranges = ws.ranges();
  bool loaded = false;
  bool k_finite = true;
  // Keys at or past kv_len are padding: their gradients stay 0 and their K, V are never read.
  if (j0 < kv_len)
    for (std::int64_t h = hkv * p.group; h < (hkv + 1) * p.group; ++h)
      for (std::int64_t i0 = 0; i0 < p.shape.Tq; i0 += kBwdRows) {
        const int rows = static_cast<int>(std::min<std::int64_t>(kBwdRows, p.shape.Tq - i0));
        for (int r = 0; r < rows; ++r) ranges[r] = row_key_range(p, kv_len, i0 + r);
        const TileKind kind = classify_tile(ranges, rows, j0, j0 + n, per_element);
        if (kind == TileKind::skip) continue;
        if (!loaded) {
          load_key_tile(p, mk, ws, b, hkv, j0, n);
          if (dq_acc != nullptr) {
            transposed_to_panels(ws.kt(), WS::ldk, ws.dk8, n, ws.dk16, WS::ldkp, ws.kp());
            k_finite = all_finite(ws.kp(), n, ws.dk16, WS::ldkp);
          }
        }
        loaded = true;
        load_query_tile(p, mk, ws, b, h, i0, rows, true);
        const std::int64_t at = row_index(p, b, h, i0);
        tile_gradients(p, mk, ws, ranges, kind, stats.lse + at, stats.d + at, plant, b, h, i0, rows, j0, n);
        if (dq_acc != nullptr)
          add_dq(mk, ws, kind, k_finite, rows, n,
                 dq_acc + ((h - hkv * p.group) * p.shape.Tq + i0) * ws.dk16);
        if (p.dropout.active()) dropout_weights(p, b, h, i0, rows, j0, n, ws.s(), WS::lds);
        transpose(ws.s(), WS::lds, rows, n, ws.pt(), WS::ldt);
        transpose(ws.ds(), WS::lds, rows, n, ws.dst(), WS::ldt);
        // dV += P^T dO and dK += dS^T Q: the pv kernel with alpha = 1 (exact), rows = keys.
        mk.pv(ws.pt(), WS::ldt, n, ws.ones(), ws.dop(), WS::ldqp, rows, ws.dv16, acc_v, ws.dv16);
        mk.pv(ws.dst(), WS::ldt, n, ws.ones(), ws.qp(), WS::ldqp, rows, ws.dk16, acc_k, ws.dk16);
      }
  const T dk_scale = plant == BackwardPlant::dk_missing_scale ? T(1) : static_cast<T>(p.scale);
  write_rows(mk, p.views.dv, b, hkv, j0, n, p.shape.Dv, acc_v, ws.dv16, T(1), ws.row());
  write_rows(mk, p.views.dk, b, hkv, j0, n, p.shape.Dk, acc_k, ws.dk16, dk_scale, ws.row());
}

template <class T>
void query_tile_dq(const ForwardParams& p, const MicroKernels<T>& mk, BackwardWorkspace<T>& ws,
                   const RowStats<T>& stats, BackwardPlant plant, std::int64_t b, std::int64_t h,
                   std::int64_t i0, int rows) {
  using WS = BackwardWorkspace<T>;
  T* acc = ws.acc_k();
  std::fill(acc, acc + rows * ws.dk16, T(0));
  const std::int64_t kv_len = p.kv_len(b);
  const std::int64_t hkv = h / p.group;
  KeyRange* ranges = ws.ranges();
  for (int r = 0; r < rows; ++r) ranges[r] = row_key_range(p, kv_len, i0 + r);
  const KeyRange hull = block_key_hull(ranges, rows);
  if (!hull.empty()) load_query_tile(p, mk, ws, b, h, i0, rows, false);
  const std::int64_t at = row_index(p, b, h, i0);
  // The key tiles of pass 1 (multiples of kBwdKeys, clipped to Tk), those the hull touches, in
  // order: each dQ row then sums exactly the terms one_pass sums, in the same order, so both
  // drivers give the same bits.
  for (std::int64_t j0 = hull.lo / kBwdKeys * kBwdKeys; j0 < hull.hi; j0 += kBwdKeys) {
    const int n = static_cast<int>(std::min<std::int64_t>(kBwdKeys, p.shape.Tk - j0));
    const TileKind kind = classify_tile(ranges, rows, j0, j0 + n, p.has_mask || p.has_bias);
    if (kind == TileKind::skip) continue;
    load_key_tile(p, mk, ws, b, hkv, j0, n);
    transposed_to_panels(ws.kt(), WS::ldk, ws.dk8, n, ws.dk16, WS::ldkp, ws.kp());
    tile_gradients(p, mk, ws, ranges, kind, stats.lse + at, stats.d + at, plant, b, h, i0, rows, j0, n);
    add_dq(mk, ws, kind, kind != TileKind::partial || all_finite(ws.kp(), n, ws.dk16, WS::ldkp),
           rows, n, acc);
  }
  write_rows(mk, p.views.dq, b, h, i0, rows, p.shape.Dk, acc, ws.dk16, static_cast<T>(p.scale),
             ws.row());
}

template <class T>
void write_group_dq(const ForwardParams& p, const MicroKernels<T>& mk, BackwardWorkspace<T>& ws,
                    std::int64_t b, std::int64_t hkv, const T* dq_acc) {
  for (std::int64_t g = 0; g < p.group; ++g)
    for (std::int64_t i0 = 0; i0 < p.shape.Tq; i0 += kBwdRows) {
      const int rows = static_cast<int>(std::min<std::int64_t>(kBwdRows, p.shape.Tq - i0));
      write_rows(mk, p.views.dq, b, hkv * p.group + g, i0, rows, p.shape.Dk,
                 dq_acc + (g * p.shape.Tq + i0) * ws.dk16, ws.dk16, static_cast<T>(p.scale), ws.row());
    }
}

template void kv_tile_backward<float>(const ForwardParams&, const MicroKernels<float>&,
                                      BackwardWorkspace<float>&, const RowStats<float>&,
                                      BackwardPlant, std::int64_t, std::int64_t, std::int64_t, int,
                                      float*);
template void kv_tile_backward<double>(const ForwardParams&, const MicroKernels<double>&,
                                       BackwardWorkspace<double>&, const RowStats<double>&,
                                       BackwardPlant, std::int64_t, std::int64_t, std::int64_t, int,
                                       double*);
template void query_tile_dq<float>(const ForwardParams&, const MicroKernels<float>&,
                                   BackwardWorkspace<float>&, const RowStats<float>&, BackwardPlant,
                                   std::int64_t, std::int64_t, std::int64_t, int);
template void query_tile_dq<double>(const ForwardParams&, const MicroKernels<double>&,
                                    BackwardWorkspace<double>&, const RowStats<double>&,
                                    BackwardPlant, std::int64_t, std::int64_t, std::int64_t, int);

template void write_group_dq<float>(const ForwardParams&, const MicroKernels<float>&,
                                    BackwardWorkspace<float>&, std::int64_t, std::int64_t,
                                    const float*);
template void write_group_dq<double>(const ForwardParams&, const MicroKernels<double>&,
                                     BackwardWorkspace<double>&, std::int64_t, std::int64_t,
                                     const double*);

}  // namespace attnv::core
