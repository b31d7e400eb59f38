// The core's decode through a paged KV cache (docs/semantics.md, "Paged KV cache") against the
// same call on a contiguous cache: the same bits (O and LSE) on every ISA path, in every dtype,
// with pages of 1 key up to two key tiles, through the row sweep (G n <= 8 rows) and the tile
// path (more rows), whole and split-KV. The pools, shuffled pages with NaN in every slot not
// filled, hold exactly the appended K/V afterwards and every other byte untouched.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/core_kernel.h"
#include "core_test_util.h"
#include "decode_call.h"
#include "problem/error.h"
#include "judge/paged_cache.h"

namespace attnv::core {
namespace {

using testing::DecodeCall;
using testing::decode_case;
using testing::I;

struct PagedResult {
  Outputs out;
  std::string cache;  // "" when the pools hold what they should, bit for bit
};

// The decode step `full` (decode_call.h) through a paged cache of pages of `ps`: the pages
// shuffled by `seed`, positions below cache_len filled, NaN everywhere else.
PagedResult decode_paged(Kernel& k, const Case& full, I ps, std::uint64_t seed) {
  DecodeCall call(full, Layout::bhtd);  // q, k_new, v_new, out, lse and cache_len; its cache unused
  Problem p = call.problem();
  p.page_size = ps;
  auto values = [&full](int which, I b, I h, I j, I d) {
    return which == 0 ? full.k[full.ki(b, h, j, d)] : full.v[full.vi(b, h, j, d)];
  };
  judge::PagedCache cache(p, 0, seed, NAN, NAN);
  std::vector<I> before, after;
  for (I b = 0; b < p.shape.B; ++b) {
    after.push_back(full.kv_len[static_cast<std::size_t>(b)]);
    before.push_back(after.back() - p.shape.Tq);
  }
  cache.prefill(before, values);
  DecodeViews v = call.views();
  v.k_cache = cache.k();
  v.v_cache = cache.v();
  v.block_table = cache.table();
  k.decode(p, v);
  return {call.outputs(), cache.difference(after, values)};
}

Outputs decode_contiguous(Kernel& k, const Case& full) {
  DecodeCall call(full, Layout::bhtd);
  k.decode(call.problem(), call.views());
  return call.outputs();
}

class CorePagedDecodePath : public ::testing::TestWithParam<Isa> {};

TEST_P(CorePagedDecodePath, SameBitsAsContiguousAndPagesHoldExactlyTheAppends) {
  int runs = 0;
  std::uint64_t seed = 1;
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64})
    for (auto [hq, hkv] : {std::pair<I, I>{4, 2}, std::pair<I, I>{8, 2}})
      for (I n : {1, 3}) {
        // Capacity 384 is whole pages of every size below. An empty cache, a short one, one past a
        // key tile, one past several; Dv 32 read in place, 20 staged (as decode_test.cpp).
        const Case full = decode_case(t, hq, hkv, n, 384, {0, 5, 80, 300}, seed++, 32, n == 1 ? 32 : 20);
        for (I split : {I{-1}, I{64}}) {
          CoreKernel core({.threads = 2, .isa = GetParam(), .decode_split_keys = split});
          const Outputs want = decode_contiguous(core, full);
          for (I ps : {1, 3, 16, 64, 128}) {
            const PagedResult got = decode_paged(core, full, ps, seed * 131 + static_cast<std::uint64_t>(ps));
            const std::string what = std::string(dtype_name(t)) + " Hq=" + std::to_string(hq) + " n=" + std::to_string(n) +
                                     " split " + std::to_string(split) + " page_size " + std::to_string(ps);
            EXPECT_EQ(got.cache, "") << what;
            EXPECT_TRUE(testing::bitwise_equal(got.out, want)) << what;
            ++runs;
          }
        }
      }
  EXPECT_EQ(runs, 160);
}

INSTANTIATE_TEST_SUITE_P(EveryIsaPath, CorePagedDecodePath, ::testing::ValuesIn(testing::runnable_isas()),
                         [](const ::testing::TestParamInfo<Isa>& i) { return std::string(isa_name(i.param)); });

// A bad paged call is refused before anything is written, naming what is wrong.
TEST(CorePagedDecode, BadTableGivesAClearError) {
  const Case full = decode_case(DType::f32, 4, 2, 1, 32, {3, 9}, 5);
  DecodeCall call(full, Layout::bhtd);
  Problem p = call.problem();
  p.page_size = 8;
  judge::PagedCache cache(p, 0, 3, 0.0, 0.0);
  DecodeViews v = call.views();
  v.k_cache = cache.k();
  v.v_cache = cache.v();
  std::vector<I> table(cache.table(), cache.table() + 8);
  table[4] = 99;  // sequence 1, block 0
  v.block_table = table.data();
  CoreKernel core;
  try {
    core.decode(p, v);
    FAIL() << "accepted a page outside the pool";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("block_table[1][0] = 99 is not a page of the pool (num_pages = 10)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace attnv::core
