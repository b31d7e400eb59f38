#pragma once
// The paged KV cache R21 decodes into (docs/semantics.md, "Paged KV cache"): page pools
// [num_pages, Hkv, page_size, D] and a block table [B, blocks] laid out the way a serving stack
// leaves them, so that a kernel reading or writing the wrong slot shows:
//  * the pages of every sequence in a shuffled order, two spare pages mapped by no one;
//  * the last sequence's first `shared_blocks` table entries name the same pages as sequence
//    0's (a shared prompt prefix: the caller gives both the same first shared_blocks *
//    page_size tokens and fills them before the first call, as a prefix cache would);
//  * every slot not yet filled holds `garbage` (NaN for kernels that claim hidden NaN stays
//    hidden): the slots of a last page past cache_len + n and never mapped pages alike.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "problem/problem.h"
#include "problem/tensor.h"

namespace attnv::judge {

class PagedCache {
 public:
  // The prompt's value of K (which = 0) or V (1) at element d of position j, KV head h, sequence b.
  using Values = std::function<double(int which, std::int64_t b, std::int64_t h, std::int64_t j, std::int64_t d)>;

  // p: B sequences, Hkv, Dk, Dv, dtype and page_size of the calls; p.shape.Tk the capacity
  // (blocks * page_size). k_garbage and v_garbage are the unfilled slots' values.
  PagedCache(const Problem& p, std::int64_t shared_blocks, std::uint64_t seed, double k_garbage, double v_garbage);

  const TensorRef& k() const { return k_; }
  const TensorRef& v() const { return v_; }
  const std::int64_t* table() const { return table_.data(); }
  std::int64_t shared_pages() const { return shared_; }

  // Writes positions < upto[b] of each sequence b (through its table row) with the prompt's values.
  void prefill(const std::vector<std::int64_t>& upto, const Values& values);
  // "" when the pools hold, bit for bit, the prompt's values at positions < cache_len[b] of each
  // sequence and the garbage in every other slot, and the table is as made; else the first
  // difference, named by page, slot and what it should hold.
  std::string difference(const std::vector<std::int64_t>& cache_len, const Values& values) const;

 private:
  struct Pool {
    std::vector<double> storage;  // bytes of the pool, 8-aligned
    TensorRef ref;
  };
  Pool make_pool(std::int64_t D, double garbage) const;
  void write(const std::vector<std::int64_t>& upto, const Values& values, const TensorRef& k, const TensorRef& v) const;

  Problem p_;
  std::int64_t blocks_ = 0, num_pages_ = 0, shared_ = 0;
  double k_garbage_ = 0, v_garbage_ = 0;
  std::vector<std::int64_t> table_, table_made_;
  Pool k_pool_, v_pool_;
  TensorRef k_, v_;
};

}  // namespace attnv::judge
