// The core's decode with a KV cache: the append (exactly the new K/V at cache_len, nothing else
// written), the attention (within the error bound of the equivalent forward with
// kv_len = cache_len + n, bottom-right causal) for every dtype, GQA/MQA/MHA, batches with
// different cache lengths, single and multi-token steps; split-KV and whole-range sweeps each
// bitwise independent of the thread count; bad views rejected with clear messages. The numeric
// tests run on every ISA path the CPU runs; the avx512 and avx2 paths agree bit for bit.
#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "core/core_kernel.h"
#include "core/rotary.h"
#include "core_test_util.h"
#include "decode_call.h"
#include "problem/error.h"
#include "reference/bound/bound.h"
#include "reference/fast/fast.h"

namespace attnv::core {
namespace {

using testing::DecodeCall;
using testing::decode_case;
using testing::I;
using testing::kFill;
using testing::Shape4;

::testing::AssertionResult decode_within_bound(CoreKernel& k, const Case& full, Layout layout, Outputs* out = nullptr,
                                               double fill = kFill) {
  DecodeCall call(full, layout, fill);
  k.decode(call.problem(), call.views());
  if (std::string d = call.cache_difference(); !d.empty()) return ::testing::AssertionFailure() << "cache: " << d;
  if (!call.inputs_unchanged()) return ::testing::AssertionFailure() << "q, k_new or v_new was written";
  const Outputs got = call.outputs();
  const Outputs exact = reference::fast_forward(full);
  const PrecisionModel m = k.precision(full.problem.dtype);
  const bound::Comparison cmp = bound::compare(got, exact, bound::forward_bound(full, exact, m), m.out);
  if (!cmp.ok()) return ::testing::AssertionFailure() << describe(full.problem) << "\n" << cmp.summary();
  if (out) *out = got;
  return ::testing::AssertionSuccess();
}

// The numeric tests run on every ISA path this CPU runs (the row kernels differ per path:
// row_kernels.h), each path within the bound on its own; the test name ends with the path.
class CoreDecodePath : public ::testing::TestWithParam<Isa> {
 protected:
  ForwardOptions on_path(ForwardOptions o = {}) const {
    o.isa = GetParam();
    return o;
  }
};

TEST_P(CoreDecodePath, WithinBoundEveryDtypeAndGrouping) {
  CoreKernel core(on_path());
  const std::pair<I, I> heads[] = {{4, 2}, {4, 1}, {3, 3}};  // GQA, MQA, MHA
  std::uint64_t seed = 1;
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64})
    for (auto [hq, hkv] : heads)
      for (I n : {1, 3}) {
        // Batches at different points: an empty cache, a short one, one past a key tile.
        // Dv = 32 (a whole number of SIMD widths: f32 V rows are read in place) and 20 (padded).
        const Case full = decode_case(t, hq, hkv, n, 90, {0, 5, 80}, seed++, 24, n == 1 ? 32 : 20);
        EXPECT_TRUE(decode_within_bound(core, full, Layout::bhtd)) << dtype_name(t) << " Hq=" << hq << " Hkv=" << hkv << " n=" << n;
        EXPECT_TRUE(decode_within_bound(core, full, Layout::gapped)) << dtype_name(t) << " gapped";
      }
}

TEST_P(CoreDecodePath, WindowSoftcapScaleWithinBound) {
  CoreKernel core(on_path());
  Case full = decode_case(DType::f32, 4, 2, 2, 200, {150, 37}, 99);
  full.problem.window = {40, 0};
  full.problem.softcap = 2.5;
  full.problem.scale = 0.3;
  EXPECT_TRUE(decode_within_bound(core, full, Layout::bthd));
  CoreKernel split(on_path({.threads = 2, .decode_split_keys = 64}));
  EXPECT_TRUE(decode_within_bound(split, full, Layout::bthd));
}

// Attention sinks in decode: each stacked row of a block starts at its own head's sink, and the
// split path counts the sink once (chunk 0 carries it). Sinks of both signs, one dominating.
TEST(CoreDecode, SinksWholeAndSplitWithinBound) {
  for (DType t : {DType::f32, DType::bf16, DType::f64}) {
    Case full = decode_case(t, 4, 2, 2, 200, {150, 0}, 7);
    full.problem.has_sinks = true;
    full.sinks = {2.0, -3.0, 0.5, 12.0};
    for (I split : {I{-1}, I{64}}) {
      CoreKernel core({.threads = 2, .decode_split_keys = split});
      EXPECT_TRUE(decode_within_bound(core, full, Layout::bthd)) << dtype_name(t) << " split " << split;
    }
    // The check can fail: the same call judged without its sinks is outside the bound.
    Case without = full;
    without.problem.has_sinks = false;
    without.sinks.clear();
    CoreKernel core;
    DecodeCall call(full, Layout::bhtd);
    core.decode(call.problem(), call.views());
    const Outputs exact = reference::fast_forward(without);
    const Outputs got = call.outputs();
    bool differs = false;
    for (std::size_t e = 0; e < got.out.size(); ++e) differs |= std::fabs(got.out[e] - exact.out[e]) > 1e-2 * (std::fabs(exact.out[e]) + 1e-3);
    EXPECT_TRUE(differs) << dtype_name(t);
  }
}

// ALiBi in decode: a block then holds one query head (its slope, its queries' positions
// cache_len + i), through the row sweep (n = 2) and the tiles (n = 12 > kRowSweepRows), whole
// and split, with GQA so that a row given its KV head's or head 0's slope shows.
TEST_P(CoreDecodePath, AlibiRowsAndTilesWholeAndSplitWithinBound) {
  for (DType t : {DType::f32, DType::f16, DType::f64})
    for (I n : {I{2}, I{12}}) {
      Case full = decode_case(t, 4, 2, n, 200, {150, 0}, 11 + static_cast<std::uint64_t>(n));
      full.problem.has_alibi = true;
      full.alibi = {0.5, 0.25, 0.0625, 0.0};
      for (I split : {I{-1}, I{64}}) {
        CoreKernel core(on_path({.threads = 2, .decode_split_keys = split}));
        EXPECT_TRUE(decode_within_bound(core, full, Layout::bthd)) << dtype_name(t) << " n=" << n << " split " << split;
      }
      // The check can fail: the slopes of heads 0 and 2 swapped put the call outside the bound.
      Case swapped = full;
      std::swap(swapped.alibi[0], swapped.alibi[2]);
      CoreKernel core(on_path());
      DecodeCall call(full, Layout::bhtd);
      core.decode(call.problem(), call.views());
      const Outputs exact = reference::fast_forward(swapped);
      const PrecisionModel m = core.precision(t);
      EXPECT_FALSE(bound::compare(call.outputs(), exact, bound::forward_bound(swapped, exact, m), m.out).ok())
          << dtype_name(t) << " n=" << n;
    }
}

// A real cache holds anything past cache_len (stale or uninitialised memory), and a key hidden
// from one query row by the window may be visible to another row of the same step. NaN past
// cache_len + n, and NaN K / inf V at keys the last new token's window excludes but the first
// one's includes, must leave the last token's outputs bitwise unchanged (the first tokens' rows
// see those keys: their outputs may change, so they are not compared).
TEST_P(CoreDecodePath, NonFiniteHiddenKeysDoNotLeak) {
  const I n = 3, w = 20;
  Case full = decode_case(DType::f32, 4, 2, n, 256, {200, 70}, 51, 32, 32);
  full.problem.window = {w, 0};
  Case poisoned = full;
  for (I b = 0; b < 2; ++b) {
    const I c0 = full.kv_len[static_cast<std::size_t>(b)] - n;  // row i sees [c0 + i - w, c0 + i]
    for (I h = 0; h < 2; ++h)
      for (I j = c0 - w; j < c0 - w + n - 1; ++j)  // visible to row 0, hidden from row n - 1
        for (I d = 0; d < 32; ++d) {
          poisoned.k[poisoned.ki(b, h, j, d)] = NAN;
          poisoned.v[poisoned.vi(b, h, j, d)] = INFINITY;
        }
  }
  for (I split : {I{-1}, I{64}}) {
    CoreKernel core(on_path({.threads = 2, .decode_split_keys = split}));
    Outputs a;
    ASSERT_TRUE(decode_within_bound(core, full, Layout::bhtd, &a)) << "split " << split;
    DecodeCall call(poisoned, Layout::bhtd, NAN);
    core.decode(call.problem(), call.views());
    EXPECT_EQ(call.cache_difference(), "");
    const Outputs b = call.outputs();
    for (I bb = 0; bb < 2; ++bb)
      for (I h = 0; h < 4; ++h) {
        for (I d = 0; d < 32; ++d) {
          const std::size_t at = full.oi(bb, h, n - 1, d);
          EXPECT_EQ(std::memcmp(&a.out[at], &b.out[at], sizeof(double)), 0) << "out b=" << bb << " h=" << h << " d=" << d;
        }
        const std::size_t l = full.li(bb, h, n - 1);
        EXPECT_EQ(std::memcmp(&a.lse[l], &b.lse[l], sizeof(double)), 0) << "lse b=" << bb << " h=" << h;
      }
  }
}

// Whole and split, on the shapes of a decode step (8 query heads per KV head).
TEST_P(CoreDecodePath, StepWholeAndSplitWithinBound) {
  for (DType t : {DType::f32, DType::f16}) {
    const Case full = decode_case(t, 8, 2, 1, 300, {299, 120}, 41, 32, 32);
    CoreKernel whole(on_path({.threads = 2, .decode_split_keys = -1}));
    CoreKernel split(on_path({.threads = 2, .decode_split_keys = 64}));
    EXPECT_TRUE(decode_within_bound(whole, full, Layout::bhtd)) << dtype_name(t);
    EXPECT_TRUE(decode_within_bound(split, full, Layout::bthd)) << dtype_name(t);
  }
}

// An f16 or bf16 cache whose rows are read in place (converted as loaded: row_kernels.h
// dots_half, pv_rows_half) gives bitwise what the f32 kernels give on the same values stored as
// f32: the conversion is exact and the operations are the same. Whole and split, GQA 4 rows and
// MHA 1 row, a tail tile whose length is not a multiple of 4.
TEST_P(CoreDecodePath, HalfCacheReadInPlaceEqualsF32OnTheSameValues) {
  for (DType t : {DType::f16, DType::bf16})
    for (auto [hq, hkv] : {std::pair<I, I>{8, 2}, std::pair<I, I>{2, 2}}) {
      const Case half = decode_case(t, hq, hkv, 1, 1300, {1297, 450}, 77, 32, 48);
      Case wide = half;
      wide.problem.dtype = DType::f32;  // the same values, all exact in f32
      for (I split : {I{-1}, I{256}}) {
        CoreKernel core(on_path({.threads = 2, .decode_split_keys = split}));
        Outputs a, b;
        ASSERT_TRUE(decode_within_bound(core, half, Layout::bhtd, &a)) << dtype_name(t);
        ASSERT_TRUE(decode_within_bound(core, wide, Layout::bhtd, &b)) << dtype_name(t);
        for (double& x : b.out) x = round_to(t, x);  // the one rounding of O to storage
        EXPECT_TRUE(testing::bitwise_equal(a, b)) << dtype_name(t) << " Hq=" << hq << " split " << split;
      }
    }
}

// Split-KV (forced small chunks, and the automatic choice on a long cache) and the whole-range
// sweep: each within the bound and bitwise the same for 1, 2 and 3 threads.
TEST_P(CoreDecodePath, SplitKvWithinBoundAndThreadIndependent) {
  const Case longer = decode_case(DType::f16, 8, 2, 1, 2100, {2099}, 7, 64, 64);  // auto: splits
  const Case mixed = decode_case(DType::f32, 4, 2, 3, 700, {600, 0, 250}, 8);
  for (const Case* full : {&longer, &mixed})
    for (I split : {I{0}, I{-1}, I{128}}) {
      Outputs first;
      for (int threads : {1, 2, 3}) {
        CoreKernel core(on_path({.threads = threads, .decode_split_keys = split}));
        Outputs got;
        ASSERT_TRUE(decode_within_bound(core, *full, Layout::bhtd, &got)) << "split " << split << " threads " << threads;
        if (threads == 1)
          first = got;
        else
          EXPECT_TRUE(testing::bitwise_equal(first, got)) << "split " << split << " threads " << threads;
      }
    }
}

// Rotary rows [t0, t0 + n) of a dense [B, H, T, D] tensor of doubles at positions pos0 + i
// (a decode step rotates its new tokens at cache_len + i: pos0 = t0), through core::apply_rotary.
std::vector<double> rotated_rows(const std::vector<double>& x, Shape4 s, I t0, I n, DType t, I pos0) {
  std::vector<unsigned char> bytes(static_cast<std::size_t>(s[0] * s[1] * n * s[3] * dtype_bytes(t)));
  const std::array<I, 4> shape{s[0], s[1], n, s[3]};
  const TensorRef ref{bytes.data(), t, 4, shape, dense_strides(shape, 4)};
  for (I b = 0; b < s[0]; ++b)
    for (I h = 0; h < s[1]; ++h)
      for (I i = 0; i < n; ++i)
        for (I d = 0; d < s[3]; ++d) store(ref, {b, h, i, d}, x[static_cast<std::size_t>(((b * s[1] + h) * s[2] + t0 + i) * s[3] + d)]);
  std::vector<I> pos;
  for (I b = 0; b < s[0]; ++b)
    for (I i = 0; i < n; ++i) pos.push_back(pos0 + i);
  apply_rotary(ref, ref, pos.data());
  std::vector<double> y;
  for (I b = 0; b < s[0]; ++b)
    for (I h = 0; h < s[1]; ++h)
      for (I i = 0; i < n; ++i)
        for (I d = 0; d < s[3]; ++d) y.push_back(load(ref, {b, h, i, d}));
  return y;
}

// Prefill with rotary (Q, K rotated at positions 0..T-1, one causal forward) equals decode with
// rotary at absolute positions: a step of n tokens after c0 cached ones rotates its q and k_new at
// c0 + i; its outputs must be within the bound of the full prefill's reference rows c0 .. c0+n-1.
// The classic bug, rotating the new tokens at their offset i in the step, must fail it.
TEST_P(CoreDecodePath, RotaryAtAbsolutePositionsEqualsPrefill) {
  const I T = 12, cap = 14, B = 2, Hq = 4, Hkv = 2, D = 16;
  for (DType t : {DType::f32, DType::bf16}) {
    Problem fp;
    fp.shape = Shape{B, Hq, Hkv, T, T, D, D};
    fp.dtype = t;
    fp.causal = true;
    Case raw = testing::random_case(fp, 31);
    Case full = raw;  // the prefill: every token rotated at its position
    full.q = rotated_rows(raw.q, {B, Hq, T, D}, 0, T, t, 0);
    full.k = rotated_rows(raw.k, {B, Hkv, T, D}, 0, T, t, 0);
    const Outputs exact = reference::fast_forward(full);
    CoreKernel core(on_path());
    const PrecisionModel m = core.precision(t);
    const bound::Bounds bounds = bound::forward_bound(full, exact, m);
    for (bool buggy : {false, true})
      for (auto [c0, n] : {std::pair<I, I>{T - 1, 1}, {T - 3, 1}, {4, 3}}) {
        // The step's equivalent forward: cache rows < c0 as prefill left them, the new tokens
        // rotated at c0 + i (or, buggy, at i).
        Case step = decode_case(t, Hq, Hkv, n, cap, std::vector<I>(B, c0), 1, D, D);
        const I at = buggy ? 0 : c0;
        const std::vector<double> q_at = rotated_rows(raw.q, {B, Hq, T, D}, c0, n, t, at);
        const std::vector<double> k_new = rotated_rows(raw.k, {B, Hkv, T, D}, c0, n, t, at);
        for (I b = 0; b < B; ++b) {
          for (I h = 0; h < Hq; ++h)
            for (I i = 0; i < n; ++i)
              for (I d = 0; d < D; ++d)
                step.q[step.qi(b, h, i, d)] = q_at[static_cast<std::size_t>(((b * Hq + h) * n + i) * D + d)];
          for (I h = 0; h < Hkv; ++h)
            for (I j = 0; j < c0 + n; ++j)
              for (I d = 0; d < D; ++d) {
                step.k[step.ki(b, h, j, d)] = j < c0 ? full.k[full.ki(b, h, j, d)]
                                                     : k_new[static_cast<std::size_t>(((b * Hkv + h) * n + j - c0) * D + d)];
                step.v[step.vi(b, h, j, d)] = raw.v[raw.vi(b, h, j, d)];
              }
        }
        Outputs got;
        ASSERT_TRUE(decode_within_bound(core, step, Layout::bhtd, &got));
        std::string first_reject;
        for (I b = 0; b < B && first_reject.empty(); ++b)
          for (I h = 0; h < Hq; ++h)
            for (I i = 0; i < n; ++i)
              for (I d = 0; d < D; ++d) {
                const std::size_t r = full.oi(b, h, c0 + i, d);
                if (!bound::accept(got.out[step.oi(b, h, i, d)], exact.out[r], bounds.out[r], m.out) && first_reject.empty())
                  first_reject = "b=" + std::to_string(b) + " h=" + std::to_string(h) + " i=" + std::to_string(c0 + i);
              }
        if (buggy)
          EXPECT_NE(first_reject, "") << "rotating at the step offset went unnoticed, c0=" << c0 << " " << dtype_name(t);
        else
          EXPECT_EQ(first_reject, "") << "c0=" << c0 << " n=" << n << " " << dtype_name(t);
      }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryIsaPath, CoreDecodePath, ::testing::ValuesIn(testing::runnable_isas()),
                         [](const ::testing::TestParamInfo<Isa>& i) { return std::string(isa_name(i.param)); });

// The avx512 and avx2 paths give the same bits (their row kernels do: isa_test.cpp, and the
// micro-kernels of the softmax and of the forward's tiles for larger blocks too): every dtype,
// GQA / MHA, single and multi-token steps (4 x 3 = 12 rows: the forward's tiles), whole and split,
// heads a whole number of SIMD widths (read in place) and not (staged), dense and gapped.
TEST(CoreDecode, Avx512BitwiseEqualsAvx2) {
  if (!missing_features(Isa::avx512, cpu_features()).empty() || !missing_features(Isa::avx2, cpu_features()).empty())
    GTEST_SKIP() << "needs both the avx2 and avx512 paths";
  std::uint64_t seed = 500;
  for (DType t : {DType::f32, DType::f16, DType::bf16})
    for (auto [hq, hkv, n] : {std::tuple<I, I, I>{8, 2, 1}, {4, 4, 1}, {4, 1, 3}})
      for (I d : {I{128}, I{40}}) {
        const Case full = decode_case(t, hq, hkv, n, 400, {400 - n, 150}, seed++, d, d);
        for (Layout layout : {Layout::bhtd, Layout::gapped}) {
          // Bits only (each path's bound is the tests above). A second call on the same views
          // appends the same rows again and overwrites the outputs.
          DecodeCall call(full, layout);
          auto run = [&](Isa isa, I split) {
            CoreKernel k({.threads = 2, .isa = isa, .decode_split_keys = split});
            k.decode(call.problem(), call.views());
            return call.outputs();
          };
          for (I split : {I{-1}, I{128}})
            EXPECT_TRUE(testing::bitwise_equal(run(Isa::avx512, split), run(Isa::avx2, split)))
                << dtype_name(t) << " Hq=" << hq << " Hkv=" << hkv << " n=" << n << " D=" << d << " split " << split
                << (layout == Layout::gapped ? " gapped" : " dense");
        }
      }
}

std::string decode_error(const Problem& p, const DecodeViews& v) {
  CoreKernel core;
  try {
    core.decode(p, v);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CoreDecode, BadCallsGiveClearErrors) {
  const Case full = decode_case(DType::f32, 4, 2, 2, 16, {3, 14}, 3);
  DecodeCall call(full, Layout::bhtd);
  auto expect = [&](const Problem& p, const DecodeViews& v, const std::string& text) {
    const std::string msg = decode_error(p, v);
    EXPECT_NE(msg.find(text), std::string::npos) << "expected '" << text << "' in: " << msg;
  };
  // cache_len[1] = 14 + n = 2 fits exactly; 15 does not.
  std::vector<I> too_long = {3, 15};
  DecodeViews v = call.views();
  v.cache_len = too_long.data();
  expect(call.problem(), v, "cache_len[1] = 15 plus n = 2 new tokens exceeds the cache capacity Tk = 16");
  std::vector<I> negative = {-1, 0};
  v.cache_len = negative.data();
  expect(call.problem(), v, "cache_len[0] = -1 is negative");
  v = call.views();
  v.cache_len = nullptr;
  expect(call.problem(), v, "cache_len is required");
  v = call.views();
  v.k_cache = TensorRef{};
  expect(call.problem(), v, "k_cache is required");
  v = call.views();
  v.v_new.dtype = DType::f16;
  expect(call.problem(), v, "v_new: dtype f16, expected the problem's f32");
  v = call.views();
  v.k_new.shape[2] = 3;
  expect(call.problem(), v, "k_new: dimension 2 is 3, expected 2");
  v = call.views();
  v.out = v.k_cache;
  v.out.shape = call.views().out.shape;
  expect(call.problem(), v, "overlaps");
  Problem p = call.problem();
  p.alignment = Alignment::top_left;
  expect(p, call.views(), "causal with bottom_right alignment");
  p = call.problem();
  p.has_mask = true;
  expect(p, call.views(), "a decode call takes no mask");
  // Nothing was appended by the rejected calls.
  EXPECT_EQ(call.cache_difference(false), "");
  EXPECT_NE(call.cache_difference(true), "");
}

}  // namespace
}  // namespace attnv::core
