#pragma once
// The backward driver (FlashAttention-2 by recomputation): row statistics, then one pass or two.
//   rows:   L_i (the forward's LSE as stored) and D_i = rowsum(dO_i * O_i) from the stored O;
//   one pass, items (batch, KV head): for each key tile in order, dK and dV of the tile summed
//           over the G query heads and their query tiles in order, and each tile's dS K added to
//           the group's dQ accumulator (one writer per element, no atomics);
//   two passes, when there are too few (batch, KV head) items for the threads:
//     pass 1: items (batch, KV head, key tile): dK and dV as above;
//     pass 2: items (batch, query head, query tile): dQ, summed over the same key tiles in order,
//             recomputing S, P, dP (4 of the 14 tile products are the recomputation).
// Per-key-tile partials of dQ summed afterwards would parallelize one pass over key tiles, but
// they need Tk / kBwdKeys copies of dQ (128 MB per head at T = 4096, D = 128).
// Both drivers sum every element's terms in the same order, so they give the same bits, and each
// item's result depends only on the item: any thread count gives the same bits.
#include "core/forward.h"
#include "core/forward_params.h"

namespace attnv::core {

void backward(const ForwardParams& p, const ForwardOptions& opt);

}  // namespace attnv::core
