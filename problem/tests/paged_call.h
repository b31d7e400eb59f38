#pragma once
// A small paged decode call (docs/semantics.md, "Paged KV cache") for tests of its validation
// and of its crossing to a plugin: B = 2 sequences, Hq = Hkv = 1, n = 2 new tokens, pages of 4,
// capacity 12 (3 blocks), a pool of 7 pages; sequence 0 holds 4 tokens (one full page), sequence
// 1 holds 5. Every tensor holds small distinct values (exact in f32), so a misplaced read or
// write changes something.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "problem/problem.h"
#include "problem/tensor.h"
#include "problem/validate.h"

namespace attnv::testing {

struct PagedCall {
  Problem p;
  std::vector<float> q, kn, vn, kp, vp, out, lse;
  std::vector<std::int64_t> cache_len = {4, 5};
  // [2, 3]; sequence 0 reads blocks 0 and 1 only (positions < 6), so entry [0][2] is never read.
  std::vector<std::int64_t> table = {3, 0, 6, 5, 1, 2};
  DecodeViews v;

  PagedCall() {
    p.shape = Shape{2, 1, 1, 2, 12, 8, 8};
    p.causal = true;
    p.alignment = Alignment::bottom_right;
    p.page_size = 4;
    v.q = dense(q, {2, 1, 2, 8}, 1);
    v.k_new = dense(kn, {2, 1, 2, 8}, 2);
    v.v_new = dense(vn, {2, 1, 2, 8}, 3);
    v.k_cache = dense(kp, {7, 1, 4, 8}, 4);
    v.v_cache = dense(vp, {7, 1, 4, 8}, 5);
    v.out = dense(out, {2, 1, 2, 8}, 0);
    lse.assign(4, 0.f);
    v.lse = TensorRef{lse.data(), DType::f32, 3, {2, 1, 2, 0}, dense_strides({2, 1, 2, 0}, 3)};
    v.cache_len = cache_len.data();
    v.block_table = table.data();
  }
  PagedCall(const PagedCall&) = delete;  // the views point into this object's vectors

  // What check_decode_views says first ("" for a valid call).
  std::string first_error() const {
    const auto e = check_decode_views(p, v);
    return e.empty() ? "" : e[0];
  }

  // A dense tensor of small distinct values (`seed` tells the tensors apart).
  static TensorRef dense(std::vector<float>& buf, std::array<std::int64_t, 4> shape, int seed) {
    buf.resize(static_cast<std::size_t>(shape[0] * shape[1] * shape[2] * shape[3]));
    for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<float>(static_cast<int>((i * 7 + seed * 3) % 11) - 5) / 8;
    return TensorRef{buf.data(), DType::f32, 4, shape, dense_strides(shape, 4)};
  }
};

}  // namespace attnv::testing
