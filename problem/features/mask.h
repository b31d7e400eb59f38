#pragma once
// A boolean mask [B|1, Hq|1, Tq, Tk], true = visible (docs/semantics.md, "Masks and biases").
// Its own batch or head extent is the broadcast feature (mask_bias_broadcast.h).
#include "problem/features/feature.h"

namespace attnv::features {

inline constexpr ClaimInfo kMaskClaims[] = {
    {.key = "mask", .label = "mask", .member = &Capabilities::mask, .abi_bit = ATTNV_CAP_MASK,
     .used_by = [](const Problem& p) -> std::string_view { return p.has_mask ? "mask" : ""; },
     .files_default = true, .drop = [](Problem& p, const Capabilities&) { p.has_mask = false, p.mask_dims = {}; }},
};
inline constexpr Feature kMask{.name = "mask", .claims = kMaskClaims};

}  // namespace attnv::features
