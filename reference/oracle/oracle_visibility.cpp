#include "reference/oracle/oracle_visibility.h"

#include <cmath>

namespace attnv::ref::oracle_detail {

std::vector<std::int64_t> oracle_visible_keys(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i) {
  __extension__ typedef __int128 Wide;  // -Wpedantic: a GCC/Clang extension, on purpose
  const Problem& p = c.problem;
  const Wide kv_len = p.has_kv_len ? c.kv_len[static_cast<std::size_t>(b)] : p.shape.Tk;
  const Wide pos = p.alignment == Alignment::top_left ? Wide{i} : Wide{i} + kv_len - Wide{p.shape.Tq};
  // Unbounded sides (-1) as bounds no key reaches.
  const Wide lowest = p.window.left < 0 ? Wide{-1} << 100 : pos - Wide{p.window.left};
  Wide highest = p.window.right < 0 ? Wide{1} << 100 : pos + Wide{p.window.right};
  if (p.causal && pos < highest) highest = pos;
  std::vector<std::int64_t> keys;
  for (std::int64_t j = 0; j < p.shape.Tk; ++j) {
    const Wide wj = j;
    if (wj >= kv_len || wj < lowest || wj > highest) continue;
    // Planes addressed here, not through Case::mi/bi, for the same reason as the rest of this file:
    // a broadcast mistake there must show up as a disagreement with the fast reference.
    auto plane_at = [&](Leading d) {
      const std::int64_t plane = (d.batch ? b * (d.heads ? p.shape.Hq : 1) : 0) + (d.heads ? h : 0);
      return static_cast<std::size_t>((plane * p.shape.Tq + i) * p.shape.Tk + j);
    };
    if (p.has_mask && c.mask[plane_at(p.mask_dims)] == 0) continue;
    if (p.has_bias) {
      const double bias = c.bias[plane_at(p.bias_dims)];
      if (std::isinf(bias) && bias < 0) continue;
    }
    keys.push_back(j);
  }
  return keys;
}

std::int64_t oracle_alibi_distance(const Case& c, std::int64_t b, std::int64_t i, std::int64_t j) {
  __extension__ typedef __int128 Wide;
  const Problem& p = c.problem;
  const Wide kv_len = p.has_kv_len ? c.kv_len[static_cast<std::size_t>(b)] : p.shape.Tk;
  const Wide pos = p.alignment == Alignment::top_left ? Wide{i} : Wide{i} + kv_len - Wide{p.shape.Tq};
  const Wide d = Wide{j} - pos;
  return static_cast<std::int64_t>(d < 0 ? -d : d);
}

}  // namespace attnv::ref::oracle_detail
