#pragma once
// Chunked local attention (Llama 4's attention_chunk_size): chunk = C > 0 hides key j from query
// i unless both lie in the same chunk of C positions, floor(j / C) == floor(p_i / C)
// (docs/semantics.md, "Which keys a query sees"). Positional, like the window.
#include "problem/features/feature.h"

namespace attnv::features {

inline constexpr ClaimInfo kChunkClaims[] = {
    {.key = "chunked", .label = "chunked local attention", .member = &Capabilities::chunked,
     .abi_bit = ATTNV_CAP_CHUNKED,
     .used_by = [](const Problem& p) -> std::string_view { return p.chunk > 0 ? "chunked" : ""; },
     .may_be_omitted = true, .drop = [](Problem& p, const Capabilities&) { p.chunk = 0; },
     .doc = "Chunked local attention (chunk = C > 0): a query sees only keys in its own chunk of C positions "
            "(docs/semantics.md)."},
};
inline constexpr ProblemOption kChunkOptions[] = {
    {.key = "chunk", .kind = ProblemOption::Kind::count, .get = [](const Problem& p) { return p.chunk; },
     .set = [](Problem& p, std::int64_t v) { p.chunk = v; }, .word = "chunk", .in_manifest = true,
     .abi_count = &attnv_problem::chunk,
     .doc = "C >= 1: chunked local attention, key j visible to query i only when floor(j / C) == floor(p_i / C) "
            "(docs/semantics.md).",
     .call_keyword = true, .hash_tag = 0x6368756e6bull /* "chunk" */},
};
inline constexpr Feature kChunk{.name = "chunk", .claims = kChunkClaims, .options = kChunkOptions};

}  // namespace attnv::features
