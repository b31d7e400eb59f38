#pragma once
// Which keys a query row sees (docs/semantics.md "Which keys a query sees"), written from it for
// the core alone (the core never includes reference/). The interval rules (padding, causal,
// window) give each row one contiguous key range; the boolean mask and a -inf bias hide single
// keys inside it and are applied per element by the tile loop.
#include <cstdint>

#include "core/forward_params.h"

namespace attnv::core {

// Half-open key interval [lo, hi); empty when lo >= hi.
struct KeyRange {
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  bool empty() const { return lo >= hi; }
};

// The query's position p_i: i (top-left) or i + kv_len - Tq (bottom-right).
std::int64_t query_position(const ForwardParams& p, std::int64_t kv_len, std::int64_t i);

// Keys of batch b visible to query i under padding (j < kv_len), causal (j <= p_i), the
// window (p_i - wl <= j <= p_i + wr) and the chunk (floor(j / C) == floor(p_i / C)). Mask and
// bias are not included.
KeyRange row_key_range(const ForwardParams& p, std::int64_t kv_len, std::int64_t i);

}  // namespace attnv::core
