#include "core/decode.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "core/block_range.h"
#include "core/decode_sweep.h"
#include "core/kv_append.h"
#include "core/microkernels.h"
#include "core/online_softmax.h"
#include "core/row_kernels.h"
#include "core/split_kv.h"
#include "core/tensor_io.h"
#include "core/tile_loop.h"
#include "core/tile_ops.h"
#include "core/visibility.h"
#include "core/workspace.h"
#include "util/parallel.h"

namespace attnv::core {
namespace {

// One block of stacked rows of one (batch, KV head): rows r0 .. r1 - 1 of the G n stacked rows,
// row r being query r / G of query head hkv G + r % G. With ALiBi a block holds one query head
// (`head` >= 0, row r = query r): the slope and the query's position then belong to the whole
// block, as the forward's tile rules read them. ALiBi models are MHA (G = 1), so nothing is
// read twice that stacking would have shared.
struct RowBlock {
  std::int64_t b = 0, hkv = 0, r0 = 0, r1 = 0;
  std::int64_t head = -1;  // the block's query head when blocks hold one head; -1: G heads stacked
};

class Decoder {
 public:
  Decoder(const ForwardParams& f)
      : f_(f), g_(f.has_alibi ? 1 : f.group), units_(f.has_alibi ? f.shape.Hq : f.shape.Hkv),
        stacked_(g_ * f.shape.Tq) {
    blocks_per_head_ = (stacked_ + kQueryBlock - 1) / kQueryBlock;
  }
  std::int64_t items() const { return f_.shape.B * units_ * blocks_per_head_; }
  RowBlock block(std::int64_t item) const {
    RowBlock rb;
    const std::int64_t bu = item / blocks_per_head_, k = item % blocks_per_head_;
    rb.b = bu / units_;
    const std::int64_t unit = bu % units_;
    rb.hkv = f_.has_alibi ? unit / f_.group : unit;
    if (f_.has_alibi) rb.head = unit;
    rb.r0 = k * kQueryBlock;
    rb.r1 = std::min(rb.r0 + kQueryBlock, stacked_);
    return rb;
  }
  std::int64_t head(const RowBlock& rb, std::int64_t r) const { return rb.head >= 0 ? rb.head : rb.hkv * g_ + r % g_; }
  std::int64_t query(std::int64_t r) const { return r / g_; }

  // Loads the block's query rows and key intervals; returns the hull of the intervals.
  template <class T>
  KeyRange load(const MicroKernels<T>& mk, Workspace<T>& ws, const RowBlock& rb) const {
    const std::int64_t kv_len = f_.kv_len(rb.b);
    for (std::int64_t r = rb.r0; r < rb.r1; ++r) {
      const std::int64_t at = r - rb.r0;
      T* row = ws.q() + at * ws.dk_pad;
      const TensorRef& q = f_.views.q;
      load_row(mk, q, offset_of(q, rb.b, head(rb, r), query(r)), q.stride[3], f_.shape.Dk, row);
      std::fill(row + f_.shape.Dk, row + ws.dk_pad, T(0));
      ws.ranges()[at] = row_key_range(f_, kv_len, query(r));
    }
    return block_key_hull(ws.ranges(), static_cast<int>(rb.r1 - rb.r0));
  }

  template <class T>
  void write(const MicroKernels<T>& mk, const RowBlock& rb, const T* o, std::int64_t ldo, const T* lse) const {
    const TensorRef& out = f_.views.out;
    const TensorRef& ls = f_.views.lse;
    for (std::int64_t r = rb.r0; r < rb.r1; ++r) {
      const std::int64_t h = head(rb, r), i = query(r), at = r - rb.r0;
      store_row(mk, out, offset_of(out, rb.b, h, i), out.stride[3], f_.shape.Dv, o + at * ldo);
      if (ls.present()) store_row(mk, ls, offset_of(ls, rb.b, h, i), 1, 1, lse + at);
    }
  }

  const ForwardParams& params() const { return f_; }
  // Starts the block's online softmax: with sinks, each row at its head's sink (as the
  // forward's tile loop does); `with_sink` false for the split path's chunks after the first,
  // so that merge_partials counts the sink exactly once (chunk 0 carries it, l >= 1 there).
  template <class T>
  void init(const SoftmaxRows<T>& st, const RowBlock& rb, bool with_sink) const {
    const int rows = static_cast<int>(rb.r1 - rb.r0);
    if (!f_.has_sinks || !with_sink) {
      softmax_rows_init(st, rows);
      return;
    }
    const TensorRef& z = f_.views.sinks;
    for (std::int64_t r = rb.r0; r < rb.r1; ++r) st.tile_sum[r - rb.r0] = load_scalar<T>(z, head(rb, r) * z.stride[0]);
    softmax_rows_init_sinks(st, rows, st.tile_sum);
  }
  std::int64_t max_rows() const { return std::min<std::int64_t>(kQueryBlock, stacked_); }

 private:
  const ForwardParams& f_;
  std::int64_t g_;      // query heads stacked in a block: G, or 1 with ALiBi
  std::int64_t units_;  // blocks' owners per batch entry: KV heads, or query heads with ALiBi
  std::int64_t stacked_, blocks_per_head_ = 1;
};

// Four chunks per thread, pulled as threads free up: a thread whose core is busy with other
// work then costs the call less than a fixed split would. Each thread keeps one Workspace
// (thread_workspace) for all its chunks, so a chunk costs no allocation or page faults; split-
// KV chunks cost the same by construction. Results never depend on the partition.
std::int64_t grain(std::int64_t items, int threads) {
  const std::int64_t chunks = std::int64_t{threads > 0 ? threads : default_threads()} * 4;
  return (items + chunks - 1) / chunks;
}

// The thread's scratch, kept between calls (a decode step is short: allocating and faulting in a
// few hundred KB per call was measurable). parallel_for's workers are kept between calls too
// (util/parallel.cpp), so theirs is allocated once; the threads it starts for a nested or
// concurrent call free theirs when they exit.
template <class T>
Workspace<T>& thread_workspace(std::int64_t dk, std::int64_t dv) {
  thread_local std::unique_ptr<Workspace<T>> ws;
  if (!ws || ws->dk_pad != round_up(dk, kDkPad) || ws->dv_pad != round_up(dv, kPanel))
    ws = std::make_unique<Workspace<T>>(dk, dv);
  return *ws;
}

// The key sweep of a block: the row-major one for the few rows of a decode step, the forward's
// tiles (tile_loop.h) for larger blocks (chunked prefill).
template <class T>
void sweep(const ForwardParams& f, const MicroKernels<T>& mk, const RowKernels<T>& rk, Workspace<T>& ws,
           const SoftmaxRows<T>& st, int rows, const RowBlock& rb, KeyRange keys) {
  // Per-head logit rules (ALiBi) read the block's head and its first query; stacked blocks have
  // no such rules, and pass head 0.
  const std::int64_t h = std::max<std::int64_t>(rb.head, 0), i0 = rb.head >= 0 ? rb.r0 : 0;
  if (rows <= kRowSweepRows)
    attend_key_rows(f, mk, rk, ws, st, rows, rb.b, rb.hkv, keys, i0, h);
  else
    attend_key_tiles(f, mk, ws, st, rows, i0, rb.b, rb.hkv, keys, h);
}

template <class T>
void attend_whole(const Decoder& dec, const MicroKernels<T>& mk, const RowKernels<T>& rk, int threads) {
  const ForwardParams& f = dec.params();
  const std::int64_t n_items = dec.items();
  parallel_for(
      n_items,
      [&](std::int64_t begin, std::int64_t end) {
        Workspace<T>& ws = thread_workspace<T>(f.shape.Dk, f.shape.Dv);
        for (std::int64_t it = begin; it < end; ++it) {
          const RowBlock rb = dec.block(it);
          const int rows = static_cast<int>(rb.r1 - rb.r0);
          const KeyRange hull = dec.load(mk, ws, rb);
          const SoftmaxRows<T> st = ws.softmax();
          dec.init(st, rb, true);
          std::fill(ws.o(), ws.o() + rows * ws.dv_pad, T(0));
          sweep(f, mk, rk, ws, st, rows, rb, hull);
          softmax_rows_finish(st, rows, ws.o(), ws.dv_pad, f.shape.Dv, ws.lse());
          dec.write(mk, rb, ws.o(), ws.dv_pad, ws.lse());
        }
      },
      threads, grain(n_items, threads));
}

template <class T>
void attend_split(const Decoder& dec, const MicroKernels<T>& mk, const RowKernels<T>& rk, const SplitPlan& plan,
                  int threads) {
  const ForwardParams& f = dec.params();
  const std::int64_t dv_pad = round_up(f.shape.Dv, kPanel);
  const std::int64_t cap = dec.max_rows();
  const std::int64_t per_part = cap * (dv_pad + 2);
  const std::int64_t splits = plan.splits;
  AlignedArray<T> store(dec.items() * splits * per_part);
  auto part = [&](std::int64_t item, std::int64_t s) {
    T* base = store.get() + (item * splits + s) * per_part;
    return Partial<T>{base, base + cap, base + 2 * cap};
  };
  // Phase 1: every (row block, chunk) pair leaves its partial state.
  std::int64_t n_items = dec.items() * splits;
  parallel_for(
      n_items,
      [&](std::int64_t begin, std::int64_t end) {
        Workspace<T>& ws = thread_workspace<T>(f.shape.Dk, f.shape.Dv);
        for (std::int64_t it = begin; it < end; ++it) {
          const std::int64_t item = it / splits, s = it % splits;
          const RowBlock rb = dec.block(item);
          const int rows = static_cast<int>(rb.r1 - rb.r0);
          const KeyRange hull = dec.load(mk, ws, rb);
          const KeyRange keys{std::max(hull.lo, s * plan.chunk), std::min(hull.hi, (s + 1) * plan.chunk)};
          const Partial<T> pt = part(item, s);
          const SoftmaxRows<T> st{pt.m, pt.l, ws.softmax().alpha, ws.softmax().tile_sum};
          dec.init(st, rb, s == 0);
          std::fill(pt.acc, pt.acc + rows * dv_pad, T(0));
          if (!keys.empty()) {
            // The sweep accumulates into ws.o(); the partial keeps its own copy.
            std::fill(ws.o(), ws.o() + rows * ws.dv_pad, T(0));
            sweep(f, mk, rk, ws, st, rows, rb, keys);
            std::copy(ws.o(), ws.o() + rows * dv_pad, pt.acc);
          }
        }
      },
      threads, grain(n_items, threads));
  // Phase 2: merge each row block's partials in chunk order, finish, write. On the calling
  // thread: the merge is at most 1/kSplitMinKeys of phase 1's work, less than starting a thread.
  Workspace<T>& ws = thread_workspace<T>(f.shape.Dk, f.shape.Dv);
  std::vector<Partial<T>> parts(static_cast<std::size_t>(splits));
  AlignedArray<T> scratch(splits);
  for (std::int64_t item = 0; item < dec.items(); ++item) {
    const RowBlock rb = dec.block(item);
    const int rows = static_cast<int>(rb.r1 - rb.r0);
    for (std::int64_t s = 0; s < splits; ++s) parts[static_cast<std::size_t>(s)] = part(item, s);
    const SoftmaxRows<T> st = ws.softmax();
    merge_partials(mk, parts.data(), static_cast<int>(splits), rows, dv_pad, ws.dv_pad, st, ws.o(), scratch.get());
    softmax_rows_finish(st, rows, ws.o(), ws.dv_pad, f.shape.Dv, ws.lse());
    dec.write(mk, rb, ws.o(), ws.dv_pad, ws.lse());
  }
}

template <class T>
void attend(const ForwardParams& f, const MicroKernels<T>& mk, const RowKernels<T>& rk, const ForwardOptions& opt) {
  const Decoder dec(f);
  std::int64_t max_keys = 0;
  for (std::int64_t b = 0; b < f.shape.B; ++b) max_keys = std::max(max_keys, f.kv_len(b));
  const SplitPlan plan = plan_split(dec.items(), max_keys, opt.decode_split_keys);
  if (plan.splits > 1)
    attend_split(dec, mk, rk, plan, opt.threads);
  else
    attend_whole(dec, mk, rk, opt.threads);
}

}  // namespace

void decode(const Problem& p, const DecodeViews& v, const ForwardOptions& opt) {
  // The path first: a path the CPU lacks throws before the caches are written.
  const Isa isa = p.dtype == DType::f64 ? Isa::portable : resolve_isa(opt.isa);
  const CachePages pages = CachePages::of(p, v);
  append_rows(v.k_new, v.k_cache, v.cache_len, pages);
  append_rows(v.v_new, v.v_cache, v.cache_len, pages);
  std::vector<std::int64_t> kv_len(static_cast<std::size_t>(p.shape.B));
  for (std::int64_t b = 0; b < p.shape.B; ++b) kv_len[static_cast<std::size_t>(b)] = v.cache_len[b] + p.shape.Tq;
  // The equivalent forward: K, V are the caches, kv_len[b] = cache_len[b] + n.
  Problem fp = p;
  fp.has_kv_len = true;
  fp.page_size = 0;  // the forward's params know no pages; f.pages carries them
  KernelViews kv;
  kv.q = v.q;
  kv.k = v.k_cache;
  kv.v = v.v_cache;
  kv.kv_len = kv_len.data();
  kv.out = v.out;
  kv.lse = v.lse;
  kv.sinks = v.sinks;
  kv.alibi = v.alibi;
  ForwardParams f = make_forward_params(fp, kv);
  f.pages = pages;
  if (p.dtype == DType::f64)
    attend<double>(f, portable_kernels_f64(), row_kernels_f64(), opt);
  else
    attend<float>(f, kernels_f32(isa), row_kernels_f32(isa), opt);
}

}  // namespace attnv::core
