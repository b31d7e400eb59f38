#pragma once
// A scale other than 1/sqrt(Dk).
#include "problem/features/feature.h"

namespace attnv::features {

inline constexpr ClaimInfo kScaleClaims[] = {
    {.key = "custom_scale", .label = "custom scale", .member = &Capabilities::custom_scale,
     .abi_bit = ATTNV_CAP_CUSTOM_SCALE,
     .used_by = [](const Problem& p) -> std::string_view { return p.scale ? "custom scale" : ""; },
     .files_default = true, .drop = [](Problem& p, const Capabilities&) { p.scale.reset(); }},
};
inline constexpr Feature kScale{.name = "custom_scale", .claims = kScaleClaims};

}  // namespace attnv::features
