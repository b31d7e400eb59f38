#pragma once
// Which keys a query sees (docs/semantics.md "Which keys a query sees"), written from it alone,
// for the fast reference, the emulated kernels and the checks. The core and the naive kernel
// never include it (docs/architecture.md; the layer test), so a misreading here cannot be shared
// with what the reference judges independently. The
// oracle does not use this file either: it has its own copy (oracle/oracle_visibility.cpp, in
// 128-bit positions), so that a mistake here (window sides near 2^63 once wrapped around) is a
// disagreement between the oracle and the fast reference, not a shared blind spot.
#include <cstdint>
#include <utility>
#include <vector>

#include "problem/case.h"

namespace attnv {

// The query's position p_i for batch b: i (top-left) or i + kv_len[b] - Tq (bottom-right).
// Packed sequences (varlen): sequence s's local position (i' or i' + len_k[s] - len_q[s], with
// i' = i - cu_seqlens_q[s] and len_k[s] the keys it uses, kv_len[s] when given) plus
// cu_seqlens_k[s], so that j - p_i is the local distance j' - p_i'.
std::int64_t query_position(const Case& c, std::int64_t b, std::int64_t i);

// The keys query i of batch b may see at all, [first, second): [0, kv_len[b]), or with packed
// sequences its own sequence's keys [cu_seqlens_k[s], cu_seqlens_k[s+1]), or its first kv_len[s].
std::pair<std::int64_t, std::int64_t> key_range(const Case& c, std::int64_t b, std::int64_t i);

// True when key j is visible to query i of head h, batch b: j in key_range, causal j <= p_i,
// window p_i - left <= j <= p_i + right, boolean mask (b, h, i, j) true, and bias (b, h, i, j)
// not -inf (masks and biases may differ per batch and per head: Problem::mask_dims, bias_dims).
bool visible(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j);

// The visible keys of row (b, h, i) in increasing order.
std::vector<std::int64_t> visible_keys(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i);

}  // namespace attnv
