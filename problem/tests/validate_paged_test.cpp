// Validation of a paged decode call (docs/semantics.md, "Paged KV cache"): page_size only in a
// decode call, capacity a whole number of pages, the pools' shapes, the block table present,
// its read entries naming pages of the pool, and no append into a page two entries map.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "problem/tests/paged_call.h"
#include "problem/validate.h"

namespace attnv {
namespace {

using I = std::int64_t;

using testing::PagedCall;

TEST(ValidatePaged, AValidCallPasses) {
  PagedCall c;
  EXPECT_EQ(c.first_error(), "");
  // Entries past what a row reads may hold anything (serving stacks pad with -1 or 0).
  c.table[2] = -1;  // sequence 0 reads blocks 0 and 1 (positions < 6)
  EXPECT_EQ(c.first_error(), "");
}

TEST(ValidatePaged, PageSizeBelongsToDecodeAndWholePages) {
  PagedCall c;
  Problem fwd = c.p;
  fwd.has_kv_len = false;
  ASSERT_FALSE(check_problem(fwd).empty());
  EXPECT_EQ(check_problem(fwd).back(), "page_size = 4: a paged KV cache belongs to a decode call only (a forward has no cache)");
  c.p.page_size = -2;
  EXPECT_EQ(c.first_error(), "page_size = -2 is negative (0: a contiguous cache)");
  c.p.page_size = 5;
  EXPECT_EQ(c.first_error(), "a paged cache holds whole pages: capacity Tk = 12 is not a multiple of page_size = 5");
}

TEST(ValidatePaged, TableAndPoolsMustMatchThePaging) {
  PagedCall c;
  c.v.block_table = nullptr;
  EXPECT_EQ(c.first_error(), "decode: block_table is required with page_size > 0 (a paged cache)");
  c.v.block_table = c.table.data();
  c.p.page_size = 0;
  EXPECT_EQ(c.first_error(), "decode: block_table given, but page_size = 0 (a contiguous cache)");
  c.p.page_size = 4;
  c.v.v_cache.shape[0] = 6;
  EXPECT_EQ(c.first_error(), "decode: the page pools k_cache and v_cache must be rank 4 with the same number of pages >= 1 "
                             "([num_pages, Hkv, page_size, D])");
  c.v.v_cache.shape[0] = 7;
  c.v.k_cache.shape[2] = 12;  // a contiguous cache's positions where a page's slots belong
  EXPECT_EQ(c.first_error(), "k_cache: dimension 2 is 12, expected 4");
}

TEST(ValidatePaged, ReadEntriesNamePagesOfThePool) {
  PagedCall c;
  c.table[4] = 7;
  EXPECT_EQ(c.first_error(), "block_table[1][1] = 7 is not a page of the pool (num_pages = 7)");
  c.table[4] = -1;
  EXPECT_EQ(c.first_error(), "block_table[1][1] = -1 is not a page of the pool (num_pages = 7)");
}

TEST(ValidatePaged, SharedPagesAreReadOnly) {
  PagedCall c;
  // Sequence 1's first block shares sequence 0's full first page: a shared prompt prefix, read only.
  c.table[3] = 3;
  c.cache_len = {4, 4};
  EXPECT_EQ(c.first_error(), "");
  // Sequence 1 now appends into page 3 (it holds 2 of its tokens): refused.
  c.cache_len = {4, 2};
  EXPECT_EQ(c.first_error(), "decode: block_table[1][0] = page 3 receives appended tokens, but block_table[0][0] maps the "
                             "same page: a page shared between table entries is read-only (append into a page of its own)");
  // The same page twice in one row, appended into.
  c.table = {3, 0, 6, 5, 5, 2};
  c.cache_len = {4, 3};
  EXPECT_EQ(c.first_error(), "decode: block_table[1][0] = page 5 receives appended tokens, but block_table[1][1] maps the "
                             "same page: a page shared between table entries is read-only (append into a page of its own)");
}

}  // namespace
}  // namespace attnv
