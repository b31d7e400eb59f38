#pragma once
// Logit soft-capping, s <- c * tanh(s / c) before the bias (docs/semantics.md, "Softcap").
#include "problem/features/feature.h"

namespace attnv::features {

inline constexpr ClaimInfo kSoftcapClaims[] = {
    {.key = "softcap", .label = "softcap", .member = &Capabilities::softcap, .abi_bit = ATTNV_CAP_SOFTCAP,
     .used_by = [](const Problem& p) -> std::string_view { return p.softcap ? "softcap" : ""; },
     .files_default = true, .drop = [](Problem& p, const Capabilities&) { p.softcap.reset(); }},
};
inline constexpr Feature kSoftcap{.name = "softcap", .claims = kSoftcapClaims};

}  // namespace attnv::features
