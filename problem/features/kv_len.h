#pragma once
// Per-batch key lengths kv_len [B]: batch entry b sees keys 0 .. kv_len[b]-1 (docs/semantics.md,
// "Key lengths"); absent means kv_len[b] = Tk. With packed sequences it holds one length per
// sequence instead ([S], FlashAttention's seqused_k), a claim of its own (seqused.h). has_kv_len
// is one of format 1's options, written out in the manifest and attnv_problem.
#include "problem/features/feature.h"

namespace attnv::features {

inline constexpr ClaimInfo kKvLenClaims[] = {
    {.key = "kv_len", .label = "kv_len", .member = &Capabilities::kv_len, .abi_bit = ATTNV_CAP_KV_LEN,
     .used_by = [](const Problem& p) -> std::string_view { return p.has_kv_len ? "kv_len" : ""; },
     .files_default = true, .drop = [](Problem& p, const Capabilities&) { p.has_kv_len = false; }},
};
inline constexpr IndexInput kKvLenInputs[] = {
    {.name = "kv_len",
     .file_key = "kv_len",
     .dims = [](const Problem& p) -> std::string_view { return p.varlen_sequences > 0 ? "[S]" : "[B]"; },
     .present = [](const Problem& p) { return p.has_kv_len; },
     .extent = [](const Problem& p) { return p.varlen_sequences > 0 ? p.varlen_sequences : p.shape.B; },
     .values = &Case::kv_len,
     .view = &KernelViews::kv_len,
     .rule = IndexInput::Rule::lengths,
     .total = &Shape::Tk,
     .total_name = "Tk",
     .hash = IndexInput::Hash::with_tensors,
     .hash_tag = 0,
     .per_sequence_of = "cu_seqlens_k",
     .per_sequence_unit = "keys",
     .python_none_when_absent = true,
     .abi_view = &attnv_views::kv_len},
};
inline constexpr Feature kKvLen{.name = "kv_len", .claims = kKvLenClaims, .index_inputs = kKvLenInputs};

}  // namespace attnv::features
