// Per-sequence key lengths (kv_len [S] with packed sequences, FlashAttention's seqused_k) in the
// references: docs/semantics.md's worked example by hand, in both references, and the
// validation of the lengths against each sequence's own keys (the two references' agreement on
// drawn cases is in varlen_test.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "problem/buffers.h"
#include "problem/tests/only_error.h"
#include "problem/validate.h"
#include "reference/fast/fast.h"
#include "reference/oracle/oracle.h"
#include "reference/oracle/oracle_visibility.h"
#include "reference/fast/tests/visible_rows.h"
#include "problem/visibility.h"

namespace attnv::reference {
namespace {

using Keys = std::vector<std::int64_t>;
using testing::only_error;

// docs/semantics.md: cu_seqlens_q = [0, 1, 3], cu_seqlens_k = [0, 1, 5], kv_len = [0, 3], causal:
// sequence 0 (query 0, key 0) uses no key; sequence 1 (queries 1-2, keys 1-4) uses keys 1-3.
// Zero scores, so each row's output is the mean of its visible keys' values (v_j = 2^j).
Case worked_example_with_used_keys(Alignment a) {
  Problem p;
  p.shape = {1, 1, 1, 3, 5, 1, 1};
  p.dtype = DType::f64;
  p.causal = true;
  p.alignment = a;
  p.varlen_sequences = 2;
  p.has_kv_len = true;
  Case c = make_zero_case(p);
  c.cu_seqlens_q = {0, 1, 3};
  c.cu_seqlens_k = {0, 1, 5};
  c.kv_len = {0, 3};
  c.v = {1, 2, 4, 8, 16};
  return c;
}

TEST(Seqused, WorkedExampleSeesTheUsedKeysAlignedToThem) {
  // Bottom-right aligns to the keys a sequence uses: row 1 sits at local 0 + 3 - 2 = 1, not at
  // 0 + 4 - 2 = 2 (the stored keys, which would show it key 3 too).
  const std::vector<Keys> top_left = {{}, {1}, {1, 2}}, bottom_right = {{}, {1, 2}, {1, 2, 3}};
  for (const Alignment a : {Alignment::top_left, Alignment::bottom_right}) {
    test::expect_rows_see(worked_example_with_used_keys(a), a == Alignment::top_left ? top_left : bottom_right,
                          std::string(alignment_name(a)));
  }
}

TEST(Seqused, AllKeysUsedIsThePackedCaseWithoutKvLen) {
  // kv_len[s] = len_k[s] everywhere changes nothing: the same outputs, bit for bit.
  for (const Alignment a : {Alignment::top_left, Alignment::bottom_right}) {
    Case with = worked_example_with_used_keys(a);
    with.kv_len = {1, 4};
    Case without = with;
    without.problem.has_kv_len = false;
    without.kv_len.clear();
    const Outputs x = fast_forward(with), y = fast_forward(without);
    EXPECT_EQ(x.out, y.out);
    EXPECT_EQ(x.lse, y.lse);
  }
}

TEST(Seqused, ALiBiDistancesCountFromTheUsedKeys) {
  // Bottom-right, no causal rule: row 2 (local query 1 of 2, 3 keys used) sits at local 2, so
  // key j (local j - 1) is |j - 3| away: weights e^-2, e^-1, 1 on keys 1, 2, 3.
  Case c = worked_example_with_used_keys(Alignment::bottom_right);
  c.problem.causal = false;
  c.problem.has_alibi = true;
  c.alibi = {1.0};
  double num = 0, den = 0;
  for (int j = 1; j <= 3; ++j) {
    num += std::exp(-std::abs(j - 3.0)) * c.v[static_cast<std::size_t>(j)];
    den += std::exp(-std::abs(j - 3.0));
  }
  const Outputs fast = fast_forward(c);
  EXPECT_NEAR(fast.out[2], num / den, 1e-15 * num / den);
  EXPECT_EQ(fast.out[2], oracle_forward(c).out[2]);
}


TEST(Seqused, LengthsAreCheckedAgainstEachSequencesKeys) {
  Case c = worked_example_with_used_keys(Alignment::top_left);
  c.kv_len = {0, 5};  // within Tk = 5, beyond sequence 1's 4 keys
  EXPECT_EQ(only_error(c), "kv_len[1] = 5 is outside [0, 4], sequence 1's keys");
  c.kv_len = {2, 1};
  EXPECT_EQ(only_error(c), "kv_len[0] = 2 is outside [0, 1], sequence 0's keys");
  c.kv_len = {-1, 1};
  EXPECT_EQ(only_error(c), "kv_len[0] = -1 is outside [0, 1], sequence 0's keys");
  c.kv_len = {1};  // [B], not [S]
  EXPECT_EQ(only_error(c), "kv_len has 1 elements, expected 2");
  // Bounds that are wrong themselves are reported; the lengths are then held to Tk only.
  c.kv_len = {0, 3};
  c.cu_seqlens_k = {0, 1, 4};
  EXPECT_EQ(only_error(c), "cu_seqlens_k[2] = 4, expected Tk = 5 (the packed total)");
  c.kv_len = {0, 6};
  const auto e = check_case(c);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0], "kv_len[1] = 6 is outside [0, Tk=5]");

  // The views say the same (the plugin export adapter and every kernel call check them).
  c = worked_example_with_used_keys(Alignment::bottom_right);
  CaseBuffers buf(c, Layout::bhtd, false);
  EXPECT_TRUE(check_views(c.problem, buf.views()).empty());
  EXPECT_EQ(case_from_views(c.problem, buf.views()).kv_len, c.kv_len);  // [S] elements read back
  KernelViews v = buf.views();
  const std::int64_t too_long[] = {0, 5};
  v.kv_len = too_long;
  EXPECT_EQ(check_views(c.problem, v), std::vector<std::string>{"kv_len[1] = 5 is outside [0, 4], sequence 1's keys"});

  // A decode call still takes neither.
  EXPECT_EQ(check_decode_problem(c.problem).size(), 2u);
}

TEST(Seqused, TheZeroCaseUsesEveryKeyOfItsOneSequence) {
  // make_zero_case puts every row in sequence 0; its kv_len says sequence 0 uses all Tk keys.
  Problem p = worked_example_with_used_keys(Alignment::top_left).problem;
  p.varlen_sequences = 3;
  const Case z = make_zero_case(p);
  EXPECT_EQ(z.cu_seqlens_k, (std::vector<std::int64_t>{0, 5, 5, 5}));
  EXPECT_EQ(z.kv_len, (std::vector<std::int64_t>{5, 0, 0}));
  EXPECT_TRUE(check_case(z).empty());
}

}  // namespace
}  // namespace attnv::reference
