#include "core/forward.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/microkernels.h"
#include "core/tile_loop.h"
#include "core/workspace.h"
#include "problem/error.h"
#include "util/parallel.h"

namespace attnv::core {
namespace {

template <class T>
void run(const ForwardParams& p, const MicroKernels<T>& mk, int threads) {
  // An item is up to kForwardBlocks query blocks sharing their key tiles (workspace.h), fewer
  // where that would leave under four items per thread to balance. The blocks are the same
  // whatever the grouping, and so are the bits (tile_loop.h).
  const std::int64_t blocks = p.shape.B * p.shape.Hq * ((p.shape.Tq + kQueryBlock - 1) / kQueryBlock);
  const std::int64_t per_thread = blocks / (4 * static_cast<std::int64_t>(threads > 0 ? threads : default_threads()));
  const std::int64_t item_rows = std::clamp<std::int64_t>(per_thread, 1, kForwardBlocks) * kQueryBlock;
  const std::int64_t n_blocks = (p.shape.Tq + item_rows - 1) / item_rows;
  const std::int64_t items = p.shape.B * p.shape.Hq * n_blocks;
  parallel_for(
      items,
      [&](std::int64_t begin, std::int64_t end) {
        Workspace<T> ws(p.shape.Dk, p.shape.Dv, std::min(item_rows, std::max<std::int64_t>(p.shape.Tq, 1)));
        for (std::int64_t it = begin; it < end; ++it) {
          const std::int64_t bh = it / n_blocks, k = it % n_blocks;
          // Zigzag over query blocks (0, n-1, 1, n-2, ...): with a causal mask neighbouring
          // items then cost about the same on average, so contiguous chunks balance.
          const std::int64_t blk = k % 2 == 0 ? k / 2 : n_blocks - 1 - k / 2;
          QueryBlock qb;
          qb.b = bh / p.shape.Hq;
          qb.h = bh % p.shape.Hq;
          qb.i0 = blk * item_rows;
          qb.i1 = std::min(qb.i0 + item_rows, p.shape.Tq);
          forward_query_block(p, mk, ws, qb);
        }
      },
      threads);
}

}  // namespace

ForwardParams make_forward_params(const Problem& p, const KernelViews& views) {
  ForwardParams f;
  f.shape = p.shape;
  f.dtype = p.dtype;
  f.scale = p.effective_scale();
  f.has_softcap = p.softcap.has_value();
  f.softcap = p.softcap.value_or(0);
  f.causal = p.causal;
  f.alignment = p.alignment;
  f.window = p.window;
  f.chunk = p.chunk;
  f.has_mask = p.has_mask;
  f.has_bias = p.has_bias;
  f.has_sinks = p.has_sinks;
  f.has_alibi = p.has_alibi;
  f.group = p.group();
  f.views = views;
  if (!p.has_kv_len) f.views.kv_len = nullptr;
  return f;
}

void forward(const ForwardParams& params, const ForwardOptions& opt) {
  ForwardParams p = params;
  p.dropout = opt.dropout;
  if (p.dropout.training && !(p.dropout.p >= 0 && p.dropout.p < 1))
    throw InputError("core forward: dropout p must lie in [0, 1), got " + std::to_string(p.dropout.p));
  if (p.dtype == DType::f64)
    run<double>(p, portable_kernels_f64(), opt.threads);
  else
    run<float>(p, kernels_f32(opt.isa), opt.threads);
}

}  // namespace attnv::core
