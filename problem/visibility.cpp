#include "problem/visibility.h"

#include <algorithm>
#include <cmath>

namespace attnv {
namespace {

// The packed sequence s holding query i: cu_seqlens_q[s] <= i < cu_seqlens_q[s+1] (empty
// sequences repeat a bound, so the last s whose start is <= i).
std::size_t sequence_of(const Case& c, std::int64_t i) {
  const auto& cu = c.cu_seqlens_q;
  return static_cast<std::size_t>(std::upper_bound(cu.begin(), cu.end(), i) - cu.begin() - 1);
}

// The keys sequence s uses: kv_len[s] when given (per-sequence key lengths, FlashAttention's
// seqused_k), else all of its own.
std::int64_t used_keys(const Case& c, std::size_t s) {
  return c.problem.has_kv_len ? c.kv_len[s] : c.cu_seqlens_k[s + 1] - c.cu_seqlens_k[s];
}

}  // namespace

std::int64_t query_position(const Case& c, std::int64_t b, std::int64_t i) {
  if (c.problem.varlen_sequences > 0) {
    const std::size_t s = sequence_of(c, i);
    const std::int64_t local = i - c.cu_seqlens_q[s];
    const std::int64_t len_q = c.cu_seqlens_q[s + 1] - c.cu_seqlens_q[s];
    const std::int64_t len_k = used_keys(c, s);
    const std::int64_t pos = c.problem.alignment == Alignment::top_left ? local : len_k - (len_q - local);
    return c.cu_seqlens_k[s] + pos;
  }
  if (c.problem.alignment == Alignment::top_left) return i;
  // kv_len - (Tq - i): each step stays in [-Tq, Tk], so no sum of two sizes is ever formed.
  return c.kv_len_of(b) - (c.problem.shape.Tq - i);
}

std::pair<std::int64_t, std::int64_t> key_range(const Case& c, std::int64_t b, std::int64_t i) {
  if (c.problem.varlen_sequences == 0) return {0, c.kv_len_of(b)};
  const std::size_t s = sequence_of(c, i);
  return {c.cu_seqlens_k[s], c.cu_seqlens_k[s] + used_keys(c, s)};
}

bool visible(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) {
  const Problem& p = c.problem;
  const auto [first, end] = key_range(c, b, i);
  if (j < first || j >= end) return false;
  const std::int64_t pos = query_position(c, b, i);
  if (p.causal && j > pos) return false;
  // Window sides go up to 2^63 - 1 (the manifest allows it), so pos - left and pos + right can
  // overflow; the distances pos - j and j - pos cannot (|pos|, j < 2^60 by check_problem).
  if (p.window.left >= 0 && pos - j > p.window.left) return false;
  if (p.window.right >= 0 && j - pos > p.window.right) return false;
  // Chunks count from the first key of the batch entry or sequence. A negative position lies in a
  // chunk below key 0 (floor division), which holds no key; else C++'s / is the floor.
  if (p.chunk > 0 && (pos < first || (j - first) / p.chunk != (pos - first) / p.chunk)) return false;
  if (p.has_mask && !c.mask[c.mi(b, h, i, j)]) return false;
  if (p.has_bias) {
    const double bias = c.bias[c.bi(b, h, i, j)];
    if (std::isinf(bias) && bias < 0) return false;
  }
  return true;
}

std::vector<std::int64_t> visible_keys(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i) {
  std::vector<std::int64_t> keys;
  for (std::int64_t j = 0; j < c.problem.shape.Tk; ++j)
    if (visible(c, b, h, i, j)) keys.push_back(j);
  return keys;
}

}  // namespace attnv
