#include "reference/oracle/oracle_visibility.h"

#include <cmath>

namespace attnv::reference::oracle_detail {
namespace {

__extension__ typedef __int128 Wide;  // -Wpedantic: a GCC/Clang extension, on purpose

// Where query i stands: the keys [first, end) it may see at all and its position p_i, in the
// packed key coordinates. Without packed sequences the frame is [0, kv_len[b]) with Tq queries;
// with them, the sequence s that holds i (found by a plain scan, unlike the fast reference's
// binary search), whose keys are [cu_k[s], cu_k[s+1]) and whose len_q[s] queries take Tq's role:
// p_i = cu_k[s] + i' (top-left) or cu_k[s] + i' + len_k[s] - len_q[s] (bottom-right), where a
// kv_len, per sequence then, shortens the keys to [cu_k[s], cu_k[s] + kv_len[s]) and len_k[s]
// to kv_len[s] (FlashAttention's seqused_k).
struct Frame {
  Wide first, end, pos;
};

Frame frame_of(const Case& c, std::int64_t b, std::int64_t i) {
  const Problem& p = c.problem;
  Wide q0 = 0, queries = p.shape.Tq, first = 0;
  Wide end = p.has_kv_len ? c.kv_len[static_cast<std::size_t>(b)] : p.shape.Tk;
  for (std::size_t s = 0; s + 1 < c.cu_seqlens_q.size(); ++s)
    if (c.cu_seqlens_q[s] <= i && i < c.cu_seqlens_q[s + 1]) {
      q0 = c.cu_seqlens_q[s];
      queries = Wide{c.cu_seqlens_q[s + 1]} - q0;
      first = c.cu_seqlens_k[s];
      end = p.has_kv_len ? first + c.kv_len[s] : Wide{c.cu_seqlens_k[s + 1]};
      break;
    }
  const Wide local = Wide{i} - q0;
  const Wide pos = p.alignment == Alignment::top_left ? first + local : first + local + (end - first) - queries;
  return {first, end, pos};
}

}  // namespace

std::vector<std::int64_t> oracle_visible_keys(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i) {
  const Problem& p = c.problem;
  const Frame f = frame_of(c, b, i);
  const Wide pos = f.pos;
  // Unbounded sides (-1) as bounds no key reaches.
  const Wide lowest = p.window.left < 0 ? Wide{-1} << 100 : pos - Wide{p.window.left};
  Wide highest = p.window.right < 0 ? Wide{1} << 100 : pos + Wide{p.window.right};
  if (p.causal && pos < highest) highest = pos;
  // The chunk holding pos, [start, start + C), chunks counted from the frame's first key: floor
  // division in 128 bits (a position below the first key rounds down into a chunk of no key).
  Wide chunk_lo = Wide{-1} << 100, chunk_hi = Wide{1} << 100;
  if (p.chunk > 0) {
    const Wide C = p.chunk, rel = pos - f.first;
    Wide n = rel / C;
    if (rel % C != 0 && rel < 0) n -= 1;
    chunk_lo = f.first + n * C;
    chunk_hi = chunk_lo + C - 1;
  }
  std::vector<std::int64_t> keys;
  for (std::int64_t j = 0; j < p.shape.Tk; ++j) {
    const Wide wj = j;
    if (wj < f.first || wj >= f.end || wj < lowest || wj > highest || wj < chunk_lo || wj > chunk_hi) continue;
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
  const Wide d = Wide{j} - frame_of(c, b, i).pos;
  return static_cast<std::int64_t>(d < 0 ? -d : d);
}

}  // namespace attnv::reference::oracle_detail
