#pragma once
// Block ranges: for a block of query rows, the key interval worth visiting and, per key tile,
// whether it can be skipped (no row sees any of its keys), is full (every row sees every key:
// no per-element visibility work) or partial.
#include <cstdint>

#include "core/visibility.h"

namespace attnv::core {

// The hull of the rows' key ranges (empty rows ignored); empty when every row is empty.
KeyRange block_key_hull(const KeyRange* rows, int n_rows);

enum class TileKind { skip, full, partial };

// Tile [j0, j1) against the rows' interval ranges. `per_element_rules`: a mask or bias is set,
// so no tile is full (a key may still be hidden inside the interval).
TileKind classify_tile(const KeyRange* rows, int n_rows, std::int64_t j0, std::int64_t j1,
                       bool per_element_rules);

}  // namespace attnv::core
