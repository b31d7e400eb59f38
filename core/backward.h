#pragma once
// The backward driver (FlashAttention-2 by recomputation): row statistics, then two passes.
//   rows:   L_i (the forward's LSE as stored) and D_i = rowsum(dO_i * O_i) from the stored O;
//   pass 1: work items (batch, KV head, key tile): dK and dV of the tile, summed over the G
//           query heads and all query tiles in a fixed order (one writer per element, no atomics);
//   pass 2: work items (batch, query head, query tile): dQ, summed over the key tiles in order.
// dQ gets its own pass, recomputing P and dS, rather than per-key-tile partials summed in a
// fixed order: partials need Tk / kBwdKeys copies of dQ (128 MB per head at T = 4096, D = 128)
// or serialize the key tiles of a head; the second pass needs no extra memory, reuses the same
// tile code, and is deterministic for free. The price is recomputing S, P, dP (3 of 7 products).
// Each item's result depends only on the item, so any thread count gives the same bits.
#include "core/forward.h"
#include "core/forward_params.h"

namespace attnv::core {

void backward(const ForwardParams& p, const ForwardOptions& opt);

}  // namespace attnv::core
