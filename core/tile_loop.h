#pragma once
// The tile loop: one block of query rows of one (batch, head) against its visible key tiles.
#include <cstdint>

#include "core/forward_params.h"
#include "core/microkernels.h"
#include "core/workspace.h"

namespace attnv::core {

struct QueryBlock {
  std::int64_t b = 0, h = 0;  // batch and query head
  std::int64_t i0 = 0, i1 = 0;  // query rows [i0, i1), at most kForwardBlocks kQueryBlock
};

// Computes O and LSE of the rows and writes them to p.views.out / p.views.lse. The rows are cut
// into query blocks of kQueryBlock from i0, each computed as if alone (the same bits), and each
// key tile is loaded once for all of them (ws.capacity >= i1 - i0).
template <class T>
void forward_query_block(const ForwardParams& p, const MicroKernels<T>& mk, Workspace<T>& ws,
                         const QueryBlock& qb);

// The key-tile sweep the forward and decode share: `rows` query rows already in ws.q() (zero
// padded to ws.dk_pad), their key intervals in ws.ranges(), against the key tiles of KV head
// (b, hkv) starting at keys.lo and ending at keys.hi, folded into the online-softmax state `st`
// and the accumulator ws.o(). `i0` is the query index of row 0 and `h` the rows' query head,
// read by the per-row rules: mask and bias rows, ALiBi, dropout's mask (callers that stack rows
// of several heads or positions, decode's stacked blocks, pass problems with none of these).
template <class T>
void attend_key_tiles(const ForwardParams& p, const MicroKernels<T>& mk, Workspace<T>& ws,
                      const SoftmaxRows<T>& st, int rows, std::int64_t i0, std::int64_t b,
                      std::int64_t hkv, KeyRange keys, std::int64_t h = -1);

}  // namespace attnv::core
