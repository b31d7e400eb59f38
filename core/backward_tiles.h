#pragma once
// The backward tile loops (FlashAttention-2 by recomputation, one or two passes; backward.h says
// which when).
// Both recompute, per (query tile, key tile), P = exp(S - LSE) from the forward's LSE and
// dS = P (dP - D) with dP = dO V^T, exactly as reference/bound/BOUND.md section 0 and 5 model it.
#include <cstdint>

#include "core/backward_workspace.h"
#include "core/forward.h"
#include "core/forward_params.h"
#include "core/microkernels.h"

namespace attnv::core {

// Per query row of the call, computed once before the passes: L = the forward's LSE (as stored)
// and D = fl(sum_d dO_d O_d) from the forward's rounded O, both in T, index (b * Hq + h) * Tq + i.
template <class T>
struct RowStats {
  const T* lse;
  const T* d;
};

// Pass 1: dK and dV of keys [j0, j0 + n) of (batch b, KV head hkv), summed over the G query heads
// of the group (in order) and their query tiles (in order); written to p.views.dk / dv.
// With dq_acc (the one-pass driver): also adds each tile's dS K to the group's dQ accumulator,
// [G][Tq][dk16] rows, unscaled; write_group_dq writes it once every key tile is done.
template <class T>
void kv_tile_backward(const ForwardParams& p, const MicroKernels<T>& mk, BackwardWorkspace<T>& ws,
                      const RowStats<T>& stats, BackwardPlant plant, std::int64_t b,
                      std::int64_t hkv, std::int64_t j0, int n, T* dq_acc = nullptr);

template <class T>
void write_group_dq(const ForwardParams& p, const MicroKernels<T>& mk, BackwardWorkspace<T>& ws,
                    std::int64_t b, std::int64_t hkv, const T* dq_acc);

// Pass 2: dQ of query rows [i0, i0 + rows) of (batch b, query head h), summed over the visible
// key tiles in order; written to p.views.dq.
template <class T>
void query_tile_dq(const ForwardParams& p, const MicroKernels<T>& mk, BackwardWorkspace<T>& ws,
                   const RowStats<T>& stats, BackwardPlant plant, std::int64_t b, std::int64_t h,
                   std::int64_t i0, int rows);

}  // namespace attnv::core
