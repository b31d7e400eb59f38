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
  // The chunk [c0, c0 + chunk) holding pos; none for pos < 0 (its chunk lies below key 0). For
  // pos >= 0, c0 <= pos and c0 + chunk cannot overflow: c0 > 0 means chunk <= c0 <= pos.
  if (p.chunk > 0) {
    if (pos < 0) return KeyRange{0, 0};
    const std::int64_t c0 = pos / p.chunk * p.chunk;
    r.lo = std::max(r.lo, c0);
    if (p.chunk < r.hi - c0) r.hi = c0 + p.chunk;
  }
  if (r.hi <= r.lo) r = KeyRange{0, 0};  // one canonical empty range
  return r;
}

}  // namespace attnv::core
