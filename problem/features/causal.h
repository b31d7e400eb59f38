#pragma once
// The causal rule and its alignment (docs/semantics.md, "Which keys a query sees"): top-left
// (p_i = i) or bottom-right (p_i = i + kv_len[b] - Tq). Bottom-right alignment is one claim
// whether it places a causal mask, a window or ALiBi's distances (p_i decides all three);
// top-left is the baseline every kernel takes for a window or ALiBi, and only its causal rule is
// a claim of its own.
#include "problem/features/feature.h"

namespace attnv::features {

// A causal rule the kernel cannot take top-left: bottom-right where it claims that, else none.
inline void drop_top_left(Problem& p, const Capabilities& caps) {
  if (caps.causal_bottom_right && !caps.withdrawn_in(p.dtype, "causal_bottom_right"))
    p.alignment = Alignment::bottom_right;
  else
    p.causal = false;
}

inline constexpr ClaimInfo kCausalClaims[] = {
    {.key = "causal_top_left", .label = "causal top-left", .member = &Capabilities::causal_top_left,
     .abi_bit = ATTNV_CAP_CAUSAL_TOP_LEFT,
     .used_by = [](const Problem& p) -> std::string_view {
       return p.causal && p.alignment == Alignment::top_left ? "causal top_left" : "";
     },
     .files_default = true, .drop = drop_top_left},
    {.key = "causal_bottom_right", .label = "causal bottom-right", .member = &Capabilities::causal_bottom_right,
     .abi_bit = ATTNV_CAP_CAUSAL_BOTTOM_RIGHT,
     .used_by = [](const Problem& p) -> std::string_view {
       if (p.alignment != Alignment::bottom_right) return "";
       return p.causal ? "causal bottom_right" : p.window.bounded() || p.has_alibi ? "bottom_right alignment" : "";
     },
     .files_default = true,
     .drop = [](Problem& p, const Capabilities&) { p.alignment = Alignment::top_left; }},
};
inline constexpr Feature kCausal{.name = "causal", .claims = kCausalClaims};

}  // namespace attnv::features
