#include "core/block_range.h"

#include <algorithm>

namespace attnv::core {

KeyRange block_key_hull(const KeyRange* rows, int n_rows) {
  KeyRange hull{0, 0};
  bool any = false;
  for (int r = 0; r < n_rows; ++r) {
    if (rows[r].empty()) continue;
    hull = any ? KeyRange{std::min(hull.lo, rows[r].lo), std::max(hull.hi, rows[r].hi)} : rows[r];
    any = true;
  }
  return hull;
}

TileKind classify_tile(const KeyRange* rows, int n_rows, std::int64_t j0, std::int64_t j1,
                       bool per_element_rules) {
  bool any_visible = false, all_visible = true;
  for (int r = 0; r < n_rows; ++r) {
    const KeyRange& k = rows[r];
    if (!k.empty() && k.lo < j1 && k.hi > j0) any_visible = true;
    if (k.lo > j0 || k.hi < j1) all_visible = false;
  }
  if (!any_visible) return TileKind::skip;
  return all_visible && !per_element_rules ? TileKind::full : TileKind::partial;
}

}  // namespace attnv::core
