#pragma once
// ALiBi: one slope per query head [Hq], m_h >= 0, adding -m_h * |j - p_i| to every logit, p_i
// the query's position under the alignment (docs/semantics.md, "ALiBi"). Forward, backward and
// decode.
#include "problem/features/feature.h"

namespace attnv::features {

inline constexpr ClaimInfo kAlibiClaims[] = {
    {.key = "alibi", .label = "ALiBi", .member = &Capabilities::alibi, .abi_bit = ATTNV_CAP_ALIBI,
     .used_by = [](const Problem& p) -> std::string_view { return p.has_alibi ? "ALiBi" : ""; },
     .may_be_omitted = true, .drop = [](Problem& p, const Capabilities&) { p.has_alibi = false; },
     .doc = "ALiBi: per-head slopes m_h, -m_h |j - p_i| added to every logit (docs/semantics.md)."},
};
inline constexpr ProblemOption kAlibiOptions[] = {flag_option<&Problem::has_alibi>(
    "alibi", "alibi", &attnv_problem::has_alibi, "alibi.npy, float [Hq], is present: ALiBi slopes (docs/semantics.md).")};
inline constexpr HeadInput kAlibiInputs[] = {
    {.name = "alibi", .present = &Problem::has_alibi, .values = &Case::alibi, .view = &KernelViews::alibi,
     .decode_view = &DecodeViews::alibi, .nonnegative = true, .hash_tag = 0x616c696269ull /* "alibi" */,
     .abi_view = &attnv_views::alibi, .abi_decode_view = &attnv_decode_views::alibi},
};
inline constexpr Feature kAlibi{
    .name = "alibi", .claims = kAlibiClaims, .options = kAlibiOptions, .head_inputs = kAlibiInputs};

}  // namespace attnv::features
