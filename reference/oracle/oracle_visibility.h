#pragma once
// The oracle's own reading of SPEC visibility (padding, alignment, causal, window, mask, -inf
// bias). Deliberately a second copy: problem/visibility.cpp serves the fast reference, the
// bound and the emulated kernels; if the oracle shared it, a mistake there (as once: window sides
// near 2^63 overflowing pos + wr) would be made identically by everything that checks it, and no
// cross-check could see it. Written differently on purpose: positions in 128-bit integers, the
// rules as SPEC states them (p_i - wl <= j <= p_i + wr), so no expression can overflow.
#include <cstdint>
#include <vector>

#include "problem/case.h"

namespace attnv::reference::oracle_detail {

// The keys of batch b visible to query i of head h, increasing (with packed sequences, only keys
// of the query's own sequence, at local positions: docs/semantics.md).
std::vector<std::int64_t> oracle_visible_keys(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i);

// |j - p_i| for ALiBi, with p_i the query's position under the alignment (in 128 bits as above).
std::int64_t oracle_alibi_distance(const Case& c, std::int64_t b, std::int64_t i, std::int64_t j);

}  // namespace attnv::reference::oracle_detail
