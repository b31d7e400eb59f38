#pragma once
// Validation of a paged KV cache's block table (docs/semantics.md, "Paged KV cache"), apart from
// check_decode_views which checks the views' shapes and calls this once cache_len is valid.
#include <cstdint>
#include <string>
#include <vector>

#include "problem/problem.h"

namespace attnv {

// The entries a call reads, blocks t < ceil((cache_len[b] + n) / page_size) of each row b of
// table [B, Tk / page_size], must name pages of the pool, in [0, num_pages). A page the call
// appends into (the blocks holding positions cache_len[b] .. cache_len[b] + n - 1) must be
// mapped by no other read entry, of any row: pages shared between sequences (a common prompt
// prefix) are read-only, so an append can never change what another sequence, or another
// position of the same one, reads. Entries past what a row reads are not looked at (serving
// stacks pad rows with 0 or -1). The first problem found, as a one-element list; empty if none.
std::vector<std::string> check_block_table(const Problem& p, const std::int64_t* cache_len, const std::int64_t* table,
                                           std::int64_t num_pages);

}  // namespace attnv
