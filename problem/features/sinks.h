#pragma once
// Attention sinks: one learned logit per query head [Hq] that joins every row's softmax
// denominator as a key of value 0 (docs/semantics.md, "Attention sinks"). Forward, backward (its
// gradient dsinks) and decode.
#include "problem/features/feature.h"

namespace attnv::features {

inline constexpr ClaimInfo kSinksClaims[] = {
    {.key = "sinks", .label = "attention sinks", .member = &Capabilities::sinks, .abi_bit = ATTNV_CAP_SINKS,
     .used_by = [](const Problem& p) -> std::string_view { return p.has_sinks ? "sinks" : ""; },
     .may_be_omitted = true, .drop = [](Problem& p, const Capabilities&) { p.has_sinks = false; },
     .doc = "Attention sinks: a per-head logit that joins every row's softmax denominator (docs/semantics.md)."},
};
inline constexpr ProblemOption kSinksOptions[] = {flag_option<&Problem::has_sinks>(
    "sinks", "sinks", &attnv_problem::has_sinks, "sinks.npy, float [Hq], is present: attention sinks (docs/semantics.md).")};
inline constexpr HeadInput kSinksInputs[] = {
    {.name = "sinks", .present = &Problem::has_sinks, .values = &Case::sinks, .view = &KernelViews::sinks,
     .decode_view = &DecodeViews::sinks, .nonnegative = false, .hash_tag = 0x73696e6b73ull /* "sinks" */,
     .abi_view = &attnv_views::sinks, .abi_decode_view = &attnv_decode_views::sinks},
};
inline constexpr Feature kSinks{
    .name = "sinks", .claims = kSinksClaims, .options = kSinksOptions, .head_inputs = kSinksInputs};

}  // namespace attnv::features
