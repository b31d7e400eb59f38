#pragma once
// Per-sequence key lengths (FlashAttention's seqused_k): kv_len [S] with packed sequences, element
// s in [0, sequence s's keys] (kv_len.h's row: its extent and rule follow the packing). A claim of
// its own: a kernel claiming varlen and kv_len was never sent the two together (validate.cpp
// rejected it until then), so it must not start receiving them unasked.
#include "problem/features/feature.h"

namespace attnv::features {

inline constexpr ClaimInfo kSequsedClaims[] = {
    {.key = "varlen_kv_len", .label = "per-sequence key lengths (seqused_k)", .member = &Capabilities::varlen_kv_len,
     .abi_bit = ATTNV_CAP_VARLEN_KV_LEN,
     .used_by = [](const Problem& p) -> std::string_view {
       return p.varlen_sequences > 0 && p.has_kv_len ? "per-sequence key lengths (varlen with kv_len)" : "";
     },
     .may_be_omitted = true, .drop = [](Problem& p, const Capabilities&) { p.has_kv_len = false; },
     .doc = "Per-sequence key lengths with packed sequences (FlashAttention's seqused_k): kv_len [S], sequence s using "
            "its first kv_len[s] keys, bottom-right aligned to them (docs/semantics.md)."},
};
inline constexpr Feature kSeqused{.name = "seqused", .claims = kSequsedClaims};

}  // namespace attnv::features
