#pragma once
// A sliding window (left, right) around each query's position (docs/semantics.md, "Which keys a
// query sees"); -1 leaves a side unbounded.
#include "problem/features/feature.h"

namespace attnv::features {

inline constexpr ClaimInfo kWindowClaims[] = {
    {.key = "window", .label = "window", .member = &Capabilities::window, .abi_bit = ATTNV_CAP_WINDOW,
     .used_by = [](const Problem& p) -> std::string_view { return p.window.bounded() ? "window" : ""; },
     .files_default = true, .drop = [](Problem& p, const Capabilities&) { p.window = {}; }},
};
inline constexpr Feature kWindow{.name = "window", .claims = kWindowClaims};

}  // namespace attnv::features
