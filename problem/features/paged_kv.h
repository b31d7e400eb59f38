#pragma once
// A paged KV cache (decode calls only): a pool of pages of page_size positions reached through a
// block table, Tk = one sequence's capacity, a whole number of pages (docs/semantics.md, "Paged
// KV cache"). A problem option, not only a views flag, so that supports() can decline a page
// size and unsupported() names the claim. A case folder holds calls, not caches: page_size is no
// manifest key. The block table is the decode call's own argument (DecodeViews::block_table).
#include "problem/features/feature.h"

namespace attnv::features {

inline constexpr ClaimInfo kPagedKvClaims[] = {
    {.key = "paged_kv", .label = "paged KV cache", .member = &Capabilities::paged_kv, .abi_bit = ATTNV_CAP_PAGED_KV,
     .used_by = [](const Problem& p) -> std::string_view { return p.page_size != 0 ? "paged KV cache" : ""; },
     .not_through_files = "a case folder holds calls, not page pools and a block table that persist between them",
     .may_be_omitted = true, .drop = [](Problem& p, const Capabilities&) { p.page_size = 0; },
     .doc = "Decode with a paged KV cache: page pools and a block table (docs/semantics.md, \"Paged KV cache\")."},
};
inline constexpr ProblemOption kPagedKvOptions[] = {
    {.key = "page_size", .kind = ProblemOption::Kind::count, .get = [](const Problem& p) { return p.page_size; },
     .set = [](Problem& p, std::int64_t v) { p.page_size = v; }, .word = "paged", .in_manifest = false,
     .abi_count = &attnv_problem::page_size},
};
inline constexpr Feature kPagedKv{.name = "paged_kv", .claims = kPagedKvClaims, .options = kPagedKvOptions};

}  // namespace attnv::features
