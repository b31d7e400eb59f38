// Chunked local attention in the references: docs/semantics.md's worked example by hand (the
// problem's visibility, the oracle's own and both references' outputs), chunks counted from each
// packed sequence's first key, a chunk of 2^63 - 1 keys hiding nothing, and a negative chunk refused.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "problem/buffers.h"
#include "problem/validate.h"
#include "reference/fast/tests/visible_rows.h"

namespace attnv::reference {
namespace {

using test::expect_rows_see;
using Keys = test::Keys;

Case chunked(std::int64_t Tq, std::int64_t Tk, std::int64_t chunk) {
  Problem p;
  p.shape = {1, 1, 1, Tq, Tk, 1, 1};
  p.dtype = DType::f64;
  p.chunk = chunk;
  Case c = make_zero_case(p);
  for (std::int64_t j = 0; j < Tk; ++j) c.v[static_cast<std::size_t>(j)] = std::ldexp(1.0, static_cast<int>(j));
  return c;
}

// docs/semantics.md: C = 2, Tq = Tk = 4, causal; then kv_len = [3] bottom-right, p_i = i - 1.
TEST(Chunk, WorkedExample) {
  Case c = chunked(4, 4, 2);
  c.problem.causal = true;
  expect_rows_see(c, {{0}, {0, 1}, {2}, {2, 3}}, "causal top-left");
  c.problem.alignment = Alignment::bottom_right;
  c.problem.has_kv_len = true;
  c.kv_len = {3};
  expect_rows_see(c, {{}, {0}, {0, 1}, {2}}, "causal bottom-right, kv_len 3");
  // Without causal the whole chunk: a query at position -1 is still in no key's chunk.
  c.problem.causal = false;
  expect_rows_see(c, {{}, {0, 1}, {0, 1}, {2}}, "bottom-right, kv_len 3");
}

// Packed sequences count chunks from their own first key: keys 3-6 of sequence 1 are its local
// 0-3, so its queries (local 0 and 1) see keys 3 and 4, not the chunk {2, 3} of the packed Tk.
TEST(Chunk, PackedSequencesCountFromTheirOwnFirstKey) {
  Case c = chunked(4, 7, 2);
  c.problem.varlen_sequences = 2;
  c.cu_seqlens_q = {0, 2, 4};
  c.cu_seqlens_k = {0, 3, 7};
  expect_rows_see(c, {{0, 1}, {0, 1}, {3, 4}, {3, 4}}, "packed, top-left");
}

TEST(Chunk, AChunkOf2To63KeysHidesNothingAndANegativeOneIsRefused) {
  Case c = chunked(3, 5, std::numeric_limits<std::int64_t>::max());
  c.problem.alignment = Alignment::bottom_right;
  expect_rows_see(c, {{0, 1, 2, 3, 4}, {0, 1, 2, 3, 4}, {0, 1, 2, 3, 4}}, "chunk 2^63 - 1");
  c.problem.chunk = -1;
  ASSERT_FALSE(check_problem(c.problem).empty());
  EXPECT_NE(check_problem(c.problem)[0].find("chunk must be >= 0"), std::string::npos) << check_problem(c.problem)[0];
}

}  // namespace
}  // namespace attnv::reference
