#include "core/visibility.h"

#include <algorithm>

namespace attnv::core {

std::int64_t query_position(const ForwardParams& p, std::int64_t kv_len, std::int64_t i) {
  return p.alignment == Alignment::top_left ? i : kv_len - (p.shape.Tq - i);
}

KeyRange row_key_range(const ForwardParams& p, std::int64_t kv_len, std::int64_t i) {
  const std::int64_t pos = query_position(p, kv_len, i);
  KeyRange r{0, kv_len};
  if (p.causal) r.hi = std::min(r.hi, pos + 1);
  // Window sides reach 2^63 - 1, where pos + wr + 1 and pos - wl overflow: a side only moves the
  // bound when it is shorter than the distance to it, and then the sum stays inside the range.
  if (p.window.right >= 0 && p.window.right < r.hi - pos - 1) r.hi = pos + p.window.right + 1;
  if (p.window.left >= 0 && p.window.left < pos - r.lo) r.lo = pos - p.window.left;
  if (r.hi <= r.lo) r = KeyRange{0, 0};  // one canonical empty range
  return r;
}

}  // namespace attnv::core
