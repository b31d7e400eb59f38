#pragma once
// Decode's key sweep for blocks of few query rows (a decode step: the G query heads of one KV
// head, n small): the same structure as attend_key_tiles (tile_loop.h) -- key tiles of
// kKeyBlock classified by block_range.h, the logit rules of tile_ops.h, the online softmax of
// online_softmax.h, so the same precision model and bound -- but K and V are read row by row as
// they lie in memory (row_kernels.h) instead of transposed and copied into panels.
#include <cstdint>

#include "core/forward_params.h"
#include "core/microkernels.h"
#include "core/online_softmax.h"
#include "core/row_kernels.h"
#include "core/visibility.h"
#include "core/workspace.h"

namespace attnv::core {

// Up to this many rows the row sweep reads each K and V row once for all rows; above it the
// forward's register-blocked tiles win (measured: core_bench BM_CoreDecode, README).
inline constexpr int kRowSweepRows = 8;
// Keys whose scores the sweep computes before their softmax and P.V (decode_sweep.cpp says why);
// a multiple of kKeyBlock.
inline constexpr std::int64_t kRunKeys = 1024;

// As attend_key_tiles: rows in ws.q() with their intervals in ws.ranges(), keys [keys.lo,
// keys.hi) of KV head (b, hkv), folded into st and ws.o(). No mask or bias (decode has none);
// `i0` and `h`, the query index of row 0 and the rows' query head, are read only by ALiBi
// (whose blocks hold one head; stacked blocks pass any values).
template <class T>
void attend_key_rows(const ForwardParams& p, const MicroKernels<T>& mk, const RowKernels<T>& rk, Workspace<T>& ws,
                     const SoftmaxRows<T>& st, int rows, std::int64_t b, std::int64_t hkv, KeyRange keys,
                     std::int64_t i0, std::int64_t h);

}  // namespace attnv::core
