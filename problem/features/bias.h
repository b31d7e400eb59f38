#pragma once
// An additive bias [B|1, Hq|1, Tq, Tk], added after the softcap; -inf hides a key
// (docs/semantics.md, "Masks and biases"). Its own batch or head extent is the broadcast feature
// (mask_bias_broadcast.h).
#include "problem/features/feature.h"

namespace attnv::features {

inline constexpr ClaimInfo kBiasClaims[] = {
    {.key = "bias", .label = "bias", .member = &Capabilities::bias, .abi_bit = ATTNV_CAP_BIAS,
     .used_by = [](const Problem& p) -> std::string_view { return p.has_bias ? "bias" : ""; },
     .files_default = true, .drop = [](Problem& p, const Capabilities&) { p.has_bias = false, p.bias_dims = {}; }},
};
inline constexpr Feature kBias{.name = "bias", .claims = kBiasClaims};

}  // namespace attnv::features
