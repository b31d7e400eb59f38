#pragma once
// Grouped-query heads: Hkv < Hq, query head h reads KV head h / (Hq / Hkv) (docs/semantics.md,
// "Heads"); MQA is Hkv = 1. A problem stops using it with as many KV heads as query heads.
#include "problem/features/feature.h"

namespace attnv::features {

inline constexpr ClaimInfo kGqaClaims[] = {
    {.key = "gqa", .label = "GQA", .member = &Capabilities::gqa, .abi_bit = ATTNV_CAP_GQA,
     .used_by = [](const Problem& p) -> std::string_view { return p.shape.Hkv != p.shape.Hq ? "grouped heads (Hkv < Hq)" : ""; },
     .files_default = true,
     .drop = [](Problem& p, const Capabilities&) { p.shape.Hkv = p.shape.Hq; }},
};
inline constexpr Feature kGqa{.name = "gqa", .claims = kGqaClaims};

}  // namespace attnv::features
