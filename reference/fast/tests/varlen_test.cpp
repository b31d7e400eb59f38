// Packed variable-length sequences in the references: a hand case whose visible keys are known
// per alignment (docs/semantics.md's worked example), the fast reference against the MPFR oracle
// on every family packed into sequences (forward and backward), and the validation of the bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gen/families.h"
#include "gen/rng.h"
#include "problem/buffers.h"
#include "problem/tests/only_error.h"
#include "problem/validate.h"
#include "reference/fast/fast.h"
#include "reference/fast/tests/agreement.h"
#include "reference/fast/tests/visible_rows.h"
#include "reference/oracle/oracle.h"
#include "reference/oracle/oracle_visibility.h"
#include "problem/visibility.h"

namespace attnv::reference {
namespace {

using Keys = std::vector<std::int64_t>;

// docs/semantics.md: cu_seqlens_q = [0, 2, 3], cu_seqlens_k = [0, 1, 5], causal. Zero scores, so
// each row's output is the mean of its visible keys' values (v_j = 2^j tells them apart).
Case worked_example(Alignment a) {
  Problem p;
  p.shape = {1, 1, 1, 3, 5, 1, 1};
  p.dtype = DType::f64;
  p.causal = true;
  p.alignment = a;
  p.varlen_sequences = 2;
  Case c = make_zero_case(p);
  c.cu_seqlens_q = {0, 2, 3};
  c.cu_seqlens_k = {0, 1, 5};
  c.v = {1, 2, 4, 8, 16};
  return c;
}

TEST(Varlen, WorkedExampleSeesExactlyTheKeysOfTheSpecPerAlignment) {
  const std::vector<Keys> top_left = {{0}, {0}, {1}}, bottom_right = {{}, {0}, {1, 2, 3, 4}};
  for (const Alignment a : {Alignment::top_left, Alignment::bottom_right}) {
    test::expect_rows_see(worked_example(a), a == Alignment::top_left ? top_left : bottom_right,
                          std::string(alignment_name(a)));
  }
}

TEST(Varlen, AlibiDistancesAndWindowsAreLocalToTheSequence) {
  // Row 2 is query 0 of sequence 1 (keys 1..4): top-left without a causal rule, its ALiBi
  // distances are |j - 1| (local |j'|), and a window (0, 1) keeps keys 1 and 2 only.
  Case c = worked_example(Alignment::top_left);
  c.problem.causal = false;
  c.problem.has_alibi = true;
  c.alibi = {1.0};
  double num = 0, den = 0;
  for (int j = 1; j <= 4; ++j) {
    num += std::exp(-(j - 1.0)) * c.v[static_cast<std::size_t>(j)];
    den += std::exp(-(j - 1.0));
  }
  Outputs fast = fast_forward(c);
  EXPECT_NEAR(fast.out[2], num / den, 1e-15 * num / den);
  EXPECT_EQ(fast.out[2], oracle_forward(c).out[2]);
  c.problem.has_alibi = false;
  c.alibi.clear();
  c.problem.window = {0, 1};
  EXPECT_EQ(visible_keys(c, 0, 0, 2), (Keys{1, 2}));
  EXPECT_EQ(oracle_detail::oracle_visible_keys(c, 0, 0, 2), (Keys{1, 2}));
  // Row 1 sits at local position 1 of sequence 0, whose one key (local 0) is 1 to its left.
  EXPECT_EQ(visible_keys(c, 0, 0, 1), Keys{});
  EXPECT_EQ(oracle_detail::oracle_visible_keys(c, 0, 0, 1), Keys{});
}

// A family's case cut down to its first batch entry and packed into 1-4 sequences with drawn
// bounds (empty sequences likely), a drawn alignment, causal rule, window and sometimes ALiBi;
// with `seqused`, kv_len [S] too (per-sequence key lengths: none, all or some of each's keys).
Case packed(gen::Family f, std::uint64_t seed, DType t, bool with_dout, bool seqused = false) {
  Case c = gen::make_case(f, seed, {t, gen::Size::small, with_dout, false});
  Problem& p = c.problem;
  p.shape.B = 1;
  p.has_mask = p.has_bias = p.has_kv_len = false;  // none combines with packed sequences
  p.mask_dims = p.bias_dims = {};
  c.mask.clear();
  c.bias.clear();
  c.kv_len.clear();
  c.q.resize(static_cast<std::size_t>(q_elements(p.shape)));
  c.k.resize(static_cast<std::size_t>(k_elements(p.shape)));
  c.v.resize(static_cast<std::size_t>(v_elements(p.shape)));
  if (with_dout) c.dout.resize(static_cast<std::size_t>(out_elements(p.shape)));
  gen::Rng rng(seed * 7919 + 3);
  p.varlen_sequences = rng.uniform_int(1, 4);
  p.causal = rng.bernoulli(0.6);
  p.alignment = rng.bernoulli(0.5) ? Alignment::bottom_right : Alignment::top_left;
  if (rng.bernoulli(0.3)) p.window = {rng.uniform_int(-1, 4), rng.uniform_int(-1, 4)};
  p.has_alibi = !with_dout && rng.bernoulli(0.3);
  c.alibi.assign(p.has_alibi ? static_cast<std::size_t>(p.shape.Hq) : 0, 0.0);
  for (double& m : c.alibi) m = round_to(t, rng.uniform(0, 1));
  const auto cut = [&](std::vector<std::int64_t>& cu, std::int64_t total) {
    cu.assign(static_cast<std::size_t>(p.varlen_sequences + 1), total);
    cu[0] = 0;
    for (std::size_t s = 1; s + 1 < cu.size(); ++s) cu[s] = rng.bernoulli(0.25) ? cu[s - 1] : rng.uniform_int(0, total);
    std::sort(cu.begin(), cu.end());
  };
  cut(c.cu_seqlens_q, p.shape.Tq);
  cut(c.cu_seqlens_k, p.shape.Tk);
  p.has_kv_len = seqused;
  c.kv_len.assign(seqused ? static_cast<std::size_t>(p.varlen_sequences) : 0, 0);
  for (std::size_t s = 0; s < c.kv_len.size(); ++s) {
    const std::int64_t len = c.cu_seqlens_k[s + 1] - c.cu_seqlens_k[s], r = rng.uniform_int(0, 3);
    c.kv_len[s] = r == 0 ? 0 : r == 1 ? len : rng.uniform_int(0, len);
  }
  c.id += " packed " + describe(p);
  return c;
}

// Both references over the same packed cases, with kv_len [S] when `seqused`.
void fast_matches_oracle(bool seqused) {
  test::Agreement fwd, bwd;
  int cases = 0, empty_sequences = 0, shortened = 0;
  for (const gen::Family f : gen::all_families())
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
      if (f == gen::Family::long_rows && seed > 1) continue;
      const DType t = kAllDTypes[seed % 4];
      const bool backward = seed % 3 == 0;
      const Case c = packed(f, seed, t, backward, seqused);
      ASSERT_TRUE(check_case(c).empty()) << c.id << ": " << check_case(c)[0];
      ++cases;
      for (std::size_t s = 0; s + 1 < c.cu_seqlens_k.size(); ++s)
        empty_sequences += c.cu_seqlens_k[s] == c.cu_seqlens_k[s + 1] || c.cu_seqlens_q[s] == c.cu_seqlens_q[s + 1];
      for (std::size_t s = 0; s < c.kv_len.size(); ++s) shortened += c.kv_len[s] < c.cu_seqlens_k[s + 1] - c.cu_seqlens_k[s];
      FastAccuracy acc;
      OracleAccuracy oacc;
      const Outputs fast = backward ? fast_backward(c, {}, nullptr, &acc) : fast_forward(c, {}, nullptr, &acc);
      const Outputs oracle = backward ? oracle_backward(c, Backend::mpfr, &oacc) : oracle_forward(c, Backend::mpfr, &oacc);
      test::compare(c.id + " out", fast.out, oracle.out, acc.radius.out, acc.resolved.out, oacc.radius.out, fwd);
      test::compare(c.id + " lse", fast.lse, oracle.lse, acc.radius.lse, acc.resolved.lse, oacc.radius.lse, fwd);
      if (!backward) continue;
      test::compare(c.id + " dq", fast.dq, oracle.dq, acc.radius.dq, acc.resolved.dq, oacc.radius.dq, bwd);
      test::compare(c.id + " dk", fast.dk, oracle.dk, acc.radius.dk, acc.resolved.dk, oacc.radius.dk, bwd);
      test::compare(c.id + " dv", fast.dv, oracle.dv, acc.radius.dv, acc.resolved.dv, oacc.radius.dv, bwd);
    }
  const std::string what = seqused ? "packed sequences with kv_len [S]" : "packed sequences";
  test::report((what + ", forward, " + std::to_string(cases) + " cases").c_str(), fwd);
  test::report((what + ", backward").c_str(), bwd);
  EXPECT_TRUE(fwd.ok()) << fwd.first_problem;
  EXPECT_TRUE(bwd.ok()) << bwd.first_problem;
  EXPECT_GT(fwd.compared, 1000);
  EXPECT_GT(bwd.compared, 300);
  EXPECT_GT(empty_sequences, 10);  // the generator reaches sequences with no queries or no keys
  if (seqused) {
    EXPECT_GT(shortened, 50);  // sequences that use fewer keys than they hold
  }
}

TEST(Varlen, FastReferenceMatchesTheOracleBitForBit) { fast_matches_oracle(false); }

// Per-sequence key lengths (FlashAttention's seqused_k): the two references agree on them too.
TEST(Varlen, FastReferenceMatchesTheOracleWithPerSequenceKeyLengths) { fast_matches_oracle(true); }

using testing::only_error;

TEST(Varlen, BadBoundsAndCombinationsAreNamedInputErrors) {
  Case c = worked_example(Alignment::top_left);
  EXPECT_EQ(only_error(c), "(0 errors)");
  c.cu_seqlens_q = {0, 3, 2};
  EXPECT_EQ(only_error(c), "cu_seqlens_q decreases: cu_seqlens_q[2] = 2 < cu_seqlens_q[1] = 3");
  c.cu_seqlens_q = {0, 2, 4};
  EXPECT_EQ(only_error(c), "cu_seqlens_q[2] = 4, expected Tq = 3 (the packed total)");
  c.cu_seqlens_q = {1, 2, 3};
  EXPECT_EQ(only_error(c), "cu_seqlens_q[0] = 1, expected 0");
  c.cu_seqlens_q = {0, 2, 3};
  c.cu_seqlens_k = {0, 1, 4};
  EXPECT_EQ(only_error(c), "cu_seqlens_k[2] = 4, expected Tk = 5 (the packed total)");
  c.cu_seqlens_k = {0, 5};
  EXPECT_EQ(only_error(c), "cu_seqlens_k has 2 elements, expected 3");

  Problem p = worked_example(Alignment::top_left).problem;
  p.shape.B = 2;
  EXPECT_EQ(check_problem(p), std::vector<std::string>{"varlen packs every sequence into one batch entry: B must be 1, got 2"});
  p.shape.B = 1;
  p.has_kv_len = true;  // per-sequence key lengths: allowed (seqused_test.cpp checks their values)
  EXPECT_TRUE(check_problem(p).empty());
  p.has_kv_len = false;
  p.has_mask = true;
  EXPECT_EQ(check_problem(p).size(), 1u);
  p.has_mask = false;
  p.varlen_sequences = -1;
  EXPECT_EQ(check_problem(p), std::vector<std::string>{"varlen_sequences must be >= 0 (0: not varlen), got -1"});
  p.varlen_sequences = 2;
  p.causal = true;
  p.alignment = Alignment::bottom_right;
  EXPECT_EQ(check_decode_problem(p), std::vector<std::string>{"a decode call takes no packed sequences (varlen)"});
}

TEST(Varlen, ViewsCarryTheBoundsAndAreCheckedLikeTheCase) {
  const Case c = worked_example(Alignment::bottom_right);
  CaseBuffers buf(c, Layout::bhtd, false);
  EXPECT_TRUE(check_views(c.problem, buf.views()).empty());
  EXPECT_EQ(case_from_views(c.problem, buf.views()).cu_seqlens_k, c.cu_seqlens_k);
  KernelViews v = buf.views();
  v.cu_seqlens_k = nullptr;
  EXPECT_EQ(check_views(c.problem, v), std::vector<std::string>{"cu_seqlens_k presence does not match the problem"});
  const std::int64_t bad[] = {0, 3, 2};
  v = buf.views();
  v.cu_seqlens_q = bad;
  EXPECT_EQ(check_views(c.problem, v), std::vector<std::string>{"cu_seqlens_q decreases: cu_seqlens_q[2] = 2 < cu_seqlens_q[1] = 3"});
}

}  // namespace
}  // namespace attnv::reference
