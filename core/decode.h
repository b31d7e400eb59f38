#pragma once
// Decode with a KV cache in the core (problem/kernel.h, Kernel::decode): append the new tokens'
// K and V to the caches, then attend with the forward's tile loop (tile_loop.h) as the forward
// with kv_len[b] = cache_len[b] + n and bottom-right causal alignment would.
//
// Decode is bandwidth-bound (one query row per head reads the whole cache), so:
//  * the G query heads sharing a KV head, and the n new rows, are stacked into one block of
//    G n rows (row r = query i = r / G of head hkv G + r % G): K and V are read once per KV head;
//  * when the (batch, KV head, row block) items are too few for the threads, split-KV
//    (split_kv.h) cuts the keys into chunks run in parallel and merged.
// Every item's result depends only on the item, so any thread count gives the same bits.
// A paged cache (p.page_size > 0) is read and appended through the block table (problem/cache_pages.h)
// with the contiguous path's arithmetic in the same order: the same bits as the same cache laid
// out contiguously.
#include "core/forward.h"
#include "problem/problem.h"
#include "problem/tensor.h"

namespace attnv::core {

// The views are validated by the caller (check_decode_views).
void decode(const Problem& p, const DecodeViews& v, const ForwardOptions& opt);

}  // namespace attnv::core
