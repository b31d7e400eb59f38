#include "core/backward.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/backward_tiles.h"
#include "core/backward_workspace.h"
#include "core/microkernels.h"
#include "core/tensor_io.h"
#include "core/workspace.h"
#include "problem/error.h"
#include "util/parallel.h"

namespace attnv::core {
namespace {

// Zigzag over the blocks of a (batch, head): with a causal mask neighbouring items then cost
// about the same on average, so the contiguous chunks of parallel_for balance.
std::int64_t zigzag(std::int64_t k, std::int64_t n_blocks) {
  return k % 2 == 0 ? k / 2 : n_blocks - 1 - k / 2;
}

// L and D of every query row: D = fl(sum_d dO_d O_d) in T, d ascending.
template <class T>
void row_stats(const ForwardParams& p, const MicroKernels<T>& mk, std::vector<T>& lse,
               std::vector<T>& dd, int threads) {
  const Shape& s = p.shape;
  parallel_for(
      s.B * s.Hq,
      [&](std::int64_t begin, std::int64_t end) {
        std::vector<T> o(static_cast<std::size_t>(s.Dv)), g(static_cast<std::size_t>(s.Dv));
        for (std::int64_t bh = begin; bh < end; ++bh) {
          const std::int64_t b = bh / s.Hq, h = bh % s.Hq;
          for (std::int64_t i = 0; i < s.Tq; ++i) {
            const TensorRef& out = p.views.out;
            const TensorRef& dout = p.views.dout;
            load_row(mk, out, offset_of(out, b, h, i), out.stride[3], s.Dv, o.data());
            load_row(mk, dout, offset_of(dout, b, h, i), dout.stride[3], s.Dv, g.data());
            T d = 0;
            for (std::int64_t k = 0; k < s.Dv; ++k) d += g[static_cast<std::size_t>(k)] * o[static_cast<std::size_t>(k)];
            const std::size_t at = static_cast<std::size_t>(bh * s.Tq + i);
            dd[at] = d;
            lse[at] = load_scalar<T>(p.views.lse, offset_of(p.views.lse, b, h, i));
          }
        }
      },
      threads);
}

// The sinks' gradient (docs/semantics.md): dsinks_h = -sum over (b, i) of P_sink D, with
// P_sink = fl(exp(fl(z_h - L))) from the forward's own L, as the dS of a key of value 0; summed
// in T, b then i ascending, and rounded once (BOUND.md section 5.7).
template <class T>
void sink_gradients(const ForwardParams& p, const MicroKernels<T>& mk, const std::vector<T>& lse,
                    const std::vector<T>& dd) {
  const Shape& s = p.shape;
  const TensorRef& sinks = p.views.sinks;
  const TensorRef& out = p.views.dsinks;
  for (std::int64_t h = 0; h < s.Hq; ++h) {
    const T z = load_scalar<T>(sinks, h * sinks.stride[0]);
    T acc = 0;
    for (std::int64_t b = 0; b < s.B; ++b)
      for (std::int64_t i = 0; i < s.Tq; ++i) {
        const std::size_t at = static_cast<std::size_t>((b * s.Hq + h) * s.Tq + i);
        acc -= std::exp(z - lse[at]) * dd[at];
      }
    store_row(mk, out, h * out.stride[0], 1, 1, &acc);
  }
}

// One pass: items (batch, KV head), each sweeping its key tiles in order with the G query heads'
// dQ in one accumulator ([G][Tq][dk16]: 2 MiB per head at T = 4096, D = 128, f32).
template <class T>
void one_pass(const ForwardParams& p, const MicroKernels<T>& mk, const RowStats<T>& stats,
              const ForwardOptions& opt) {
  const Shape& s = p.shape;
  const std::int64_t n_key_tiles = (s.Tk + kBwdKeys - 1) / kBwdKeys;
  parallel_for(
      s.B * s.Hkv,
      [&](std::int64_t begin, std::int64_t end) {
        BackwardWorkspace<T> ws(s.Dk, s.Dv);
        AlignedArray<T> dq(p.group * s.Tq * ws.dk16);
        for (std::int64_t bh = begin; bh < end; ++bh) {
          std::fill(dq.get(), dq.get() + p.group * s.Tq * ws.dk16, T(0));
          for (std::int64_t t = 0; t < n_key_tiles; ++t) {
            const std::int64_t j0 = t * kBwdKeys;
            const int n = static_cast<int>(std::min<std::int64_t>(kBwdKeys, s.Tk - j0));
            kv_tile_backward(p, mk, ws, stats, opt.plant, bh / s.Hkv, bh % s.Hkv, j0, n, dq.get());
          }
          write_group_dq(p, mk, ws, bh / s.Hkv, bh % s.Hkv, dq.get());
        }
      },
      opt.threads);
}

// Two passes (backward.h).
template <class T>
void two_passes(const ForwardParams& p, const MicroKernels<T>& mk, const RowStats<T>& stats,
                const ForwardOptions& opt) {
  const Shape& s = p.shape;
  const std::int64_t n_key_tiles = (s.Tk + kBwdKeys - 1) / kBwdKeys;
  parallel_for(
      s.B * s.Hkv * n_key_tiles,
      [&](std::int64_t begin, std::int64_t end) {
        BackwardWorkspace<T> ws(s.Dk, s.Dv);
        for (std::int64_t it = begin; it < end; ++it) {
          const std::int64_t bh = it / n_key_tiles;
          const std::int64_t j0 = zigzag(it % n_key_tiles, n_key_tiles) * kBwdKeys;
          const int n = static_cast<int>(std::min<std::int64_t>(kBwdKeys, s.Tk - j0));
          kv_tile_backward(p, mk, ws, stats, opt.plant, bh / s.Hkv, bh % s.Hkv, j0, n);
        }
      },
      opt.threads);

  const std::int64_t n_query_tiles = (s.Tq + kBwdRows - 1) / kBwdRows;
  parallel_for(
      s.B * s.Hq * n_query_tiles,
      [&](std::int64_t begin, std::int64_t end) {
        BackwardWorkspace<T> ws(s.Dk, s.Dv);
        for (std::int64_t it = begin; it < end; ++it) {
          const std::int64_t bh = it / n_query_tiles;
          const std::int64_t i0 = zigzag(it % n_query_tiles, n_query_tiles) * kBwdRows;
          const int rows = static_cast<int>(std::min<std::int64_t>(kBwdRows, s.Tq - i0));
          query_tile_dq(p, mk, ws, stats, opt.plant, bh / s.Hq, bh % s.Hq, i0, rows);
        }
      },
      opt.threads);
}

// One pass does 10 of the 14 tile products of two passes, but its items are whole (batch, KV
// head) pairs: it needs enough of them to keep every thread busy (whole rounds of items, or
// enough that the last round hardly matters), and the dQ accumulator of a group in memory.
bool use_one_pass(const Shape& s, std::size_t elem_bytes, const ForwardOptions& opt) {
  if (opt.backward_passes != 0) return opt.backward_passes == 1;
  const std::int64_t threads = opt.threads > 0 ? opt.threads : default_threads();
  const std::int64_t items = s.B * s.Hkv;
  const std::int64_t dq_bytes =
      s.Hq / s.Hkv * s.Tq * ((s.Dk + kPanel - 1) / kPanel * kPanel) * static_cast<std::int64_t>(elem_bytes);
  const bool balanced = items % threads == 0 || items >= 4 * threads;
  return balanced && dq_bytes <= (std::int64_t{256} << 20);
}

template <class T>
void run(const ForwardParams& p, const MicroKernels<T>& mk, const ForwardOptions& opt) {
  const Shape& s = p.shape;
  std::vector<T> lse(static_cast<std::size_t>(s.B * s.Hq * s.Tq));
  std::vector<T> dd(lse.size());
  row_stats(p, mk, lse, dd, opt.threads);
  if (p.has_sinks) sink_gradients(p, mk, lse, dd);
  const RowStats<T> stats{lse.data(), dd.data()};
  if (use_one_pass(s, sizeof(T), opt))
    one_pass(p, mk, stats, opt);
  else
    two_passes(p, mk, stats, opt);
}

}  // namespace

void backward(const ForwardParams& params, const ForwardOptions& opt) {
  // With dropout: the same mask as the forward (docs/dropout.md, "Backward"); the caller passes
  // the forward's options, and the forward's O and LSE.
  ForwardParams p = params;
  p.dropout = opt.dropout;
  if (p.dropout.training && !(p.dropout.p >= 0 && p.dropout.p < 1))
    throw InputError("core backward: dropout p must lie in [0, 1), got " + std::to_string(p.dropout.p));
  if (p.dtype == DType::f64)
    run<double>(p, portable_kernels_f64(), opt);
  else
    run<float>(p, kernels_f32(opt.isa), opt);
}

}  // namespace attnv::core
