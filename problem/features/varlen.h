#pragma once
// Packed variable-length sequences (FlashAttention's varlen API): S >= 1 sequences packed along
// Tq and Tk with B == 1, their bounds cu_seqlens_q / cu_seqlens_k [S+1]; query i of sequence s
// sees only keys of sequence s, at local positions (docs/semantics.md, "Packed variable-length
// sequences").
#include "problem/features/feature.h"

namespace attnv::features {

inline constexpr ClaimInfo kVarlenClaims[] = {
    {.key = "varlen", .label = "packed variable-length sequences", .member = &Capabilities::varlen,
     .abi_bit = ATTNV_CAP_VARLEN,
     .used_by = [](const Problem& p) -> std::string_view { return p.varlen_sequences > 0 ? "varlen" : ""; },
     .may_be_omitted = true, .drop = [](Problem& p, const Capabilities&) { p.varlen_sequences = 0; },
     .doc = "Packed variable-length sequences (cu_seqlens_q, cu_seqlens_k): each query sees only its own sequence's "
            "keys, at local positions (docs/semantics.md)."},
};
inline constexpr ProblemOption kVarlenOptions[] = {
    {.key = "varlen_sequences", .kind = ProblemOption::Kind::count,
     .get = [](const Problem& p) { return p.varlen_sequences; },
     .set = [](Problem& p, std::int64_t v) { p.varlen_sequences = v; }, .word = "varlen", .in_manifest = true,
     .abi_count = &attnv_problem::varlen_sequences,
     .doc = "S >= 1: S packed variable-length sequences, their bounds in cu_seqlens_q.npy and cu_seqlens_k.npy, "
            "int64 [S+1] each (docs/semantics.md)."},
};
constexpr bool packs(const Problem& p) { return p.varlen_sequences > 0; }
constexpr std::int64_t bounds_extent(const Problem& p) { return p.varlen_sequences + 1; }
constexpr std::string_view bounds_dims(const Problem&) { return "[S+1]"; }
inline constexpr IndexInput kVarlenInputs[] = {
    {.name = "cu_seqlens_q", .file_key = "varlen_sequences", .dims = bounds_dims, .present = packs,
     .extent = bounds_extent, .values = &Case::cu_seqlens_q, .view = &KernelViews::cu_seqlens_q,
     .rule = IndexInput::Rule::bounds, .total = &Shape::Tq, .total_name = "Tq",
     .hash = IndexInput::Hash::when_present, .hash_tag = 0x7661726c656eull /* "varlen" */,
     .abi_view = &attnv_views::cu_seqlens_q},
    {.name = "cu_seqlens_k", .file_key = "varlen_sequences", .dims = bounds_dims, .present = packs,
     .extent = bounds_extent, .values = &Case::cu_seqlens_k, .view = &KernelViews::cu_seqlens_k,
     .rule = IndexInput::Rule::bounds, .total = &Shape::Tk, .total_name = "Tk",
     .hash = IndexInput::Hash::when_present, .hash_tag = 0, .abi_view = &attnv_views::cu_seqlens_k},
};
inline constexpr Feature kVarlen{
    .name = "varlen", .claims = kVarlenClaims, .options = kVarlenOptions, .index_inputs = kVarlenInputs};

}  // namespace attnv::features
