#pragma once
// Where position j of KV head (b, h) lives in a decode call's caches (docs/semantics.md, "Paged
// KV cache"): [b, h, j] of a contiguous [B, Hkv, Tk, D] view, or slot j % page_size of page
// block_table[b][j / page_size] of a pool [num_pages, Hkv, page_size, D]. One definition for
// every reader and writer of the caches: the core's tile loops and decode sweep, the naive
// kernel, the decode checks and their tests.
#include <array>
#include <cstdint>
#include <limits>

#include "problem/problem.h"
#include "problem/tensor.h"

namespace attnv {

struct CachePages {
  const std::int64_t* table = nullptr;  // [B, blocks] dense; null: contiguous
  std::int64_t page_size = 0;
  std::int64_t blocks = 0;              // entries per table row: Tk / page_size

  // The paging of a (validated) decode call: contiguous unless p.page_size > 0.
  static CachePages of(const Problem& p, const DecodeViews& v) {
    if (p.page_size <= 0) return {};
    return {v.block_table, p.page_size, p.shape.Tk / p.page_size};
  }
  bool paged() const { return table != nullptr; }
  // Index [b|page, h, j|slot, d] of element d of position j of KV head (b, h).
  std::array<std::int64_t, 4> index(std::int64_t b, std::int64_t h, std::int64_t j, std::int64_t d) const {
    if (table == nullptr) return {b, h, j, d};
    return {table[b * blocks + j / page_size], h, j % page_size, d};
  }
  // Element offset of position j of KV head (b, h) in t (element 0 of its row).
  std::int64_t offset(const TensorRef& t, std::int64_t b, std::int64_t h, std::int64_t j) const {
    const std::array<std::int64_t, 4> i = index(b, h, j, 0);
    return i[0] * t.stride[0] + i[1] * t.stride[1] + i[2] * t.stride[2];
  }
  // How many positions from j on lie t.stride[2] apart in memory: to the end of j's page.
  std::int64_t run(std::int64_t j) const {
    return table == nullptr ? std::numeric_limits<std::int64_t>::max() : page_size - j % page_size;
  }
};

}  // namespace attnv
