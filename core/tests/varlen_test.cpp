// Packed variable-length sequences in the core (core/varlen.h: one call per sequence), judged
// against the fast reference under the core's own bound on every ISA path this CPU runs, forward
// and backward, with sequences that are empty, have no keys, or cross the query and key tiles;
// and with per-sequence key lengths (kv_len [S], FlashAttention's seqused_k): each sequence's
// call takes its kv_len[s] and aligns bottom-right to it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "core/core_kernel.h"
#include "core/tests/core_test_util.h"
#include "gen/rng.h"
#include "problem/buffers.h"
#include "properties/checks/checks.h"

namespace attnv::core {
namespace {

using testing::forward_within_bound;
using testing::random_case;
using testing::runnable_isas;

// Bounds of S sequences over `total` rows, drawn: cuts anywhere, a repeated cut now and then.
std::vector<std::int64_t> cut(gen::Rng& rng, std::int64_t S, std::int64_t total) {
  std::vector<std::int64_t> cu(static_cast<std::size_t>(S + 1), total);
  cu[0] = 0;
  for (std::size_t s = 1; s + 1 < cu.size(); ++s) cu[s] = rng.bernoulli(0.25) ? cu[s - 1] : rng.uniform_int(0, total);
  std::sort(cu.begin(), cu.end());
  return cu;
}

struct Shape2 {
  std::int64_t tq, tk;
};

// One packed case: GQA heads, one option set per variant (causal either alignment, window,
// softcap with sinks, ALiBi), 1 to 4 sequences; with `seqused`, kv_len [S]: each sequence uses
// none, all or some of its keys.
Case packed_case(Shape2 sh, int variant, DType t, std::uint64_t seed, bool seqused = false) {
  Problem p;
  p.shape = {1, 4, 2, sh.tq, sh.tk, 24, 20};
  p.dtype = t;
  p.varlen_sequences = 1 + static_cast<std::int64_t>(seed % 4);
  p.has_kv_len = seqused;
  p.alignment = variant % 2 ? Alignment::bottom_right : Alignment::top_left;
  p.causal = variant < 4;
  if (variant == 2 || variant == 3) p.window = {7, 0};
  if (variant == 4) {
    p.softcap = 5.0;
    p.has_sinks = true;
  }
  if (variant == 5) p.has_alibi = true;
  Case c = random_case(p, seed);
  gen::Rng rng(seed * 31 + 7);
  c.sinks.assign(p.has_sinks ? 4 : 0, 0.0);
  for (double& z : c.sinks) z = round_to(t, 2 * rng.normal());
  c.alibi.assign(p.has_alibi ? 4 : 0, 0.0);
  for (std::size_t h = 0; h < c.alibi.size(); ++h) c.alibi[h] = round_to(t, std::exp2(-2.0 * static_cast<double>(h + 1)));
  c.cu_seqlens_q = cut(rng, p.varlen_sequences, sh.tq);
  c.cu_seqlens_k = cut(rng, p.varlen_sequences, sh.tk);
  for (std::size_t s = 0; s < c.kv_len.size(); ++s) {
    const std::int64_t len = c.cu_seqlens_k[s + 1] - c.cu_seqlens_k[s], r = rng.uniform_int(0, 3);
    c.kv_len[s] = r == 0 ? 0 : r == 1 ? len : rng.uniform_int(0, len);
  }
  c.id = describe(p);
  return c;
}

constexpr Shape2 kShapes[] = {{3, 5}, {9, 2}, {70, 130}, {200, 90}};
constexpr int kVariants = 6;

// Each packed case of every shape and variant, f32 on every path this CPU runs (the paths differ
// in the f32 micro-kernels) and every dtype on the widest (bf16 only on avx512_bf16), the layouts in turn, given to
// judge(core, isa, case, layout); seeds start at seed0. Returns how many were judged.
template <class Judge>
int on_every_path(std::uint64_t seed0, bool backward, Judge judge, bool seqused = false) {
  int judged = 0;
  for (const Isa isa : runnable_isas(DType::bf16)) {
    CoreKernel core({.threads = 0, .isa = isa});
    const bool widest = isa == widest_isa(cpu_features());
    for (const DType t : {DType::f32, DType::f16, DType::bf16, DType::f64}) {
      if (isa == Isa::avx512_bf16 ? t != DType::bf16 : t != DType::f32 && !widest) continue;
      std::uint64_t seed = seed0;
      for (const Shape2 sh : kShapes)
        for (int variant = 0; variant < kVariants; ++variant, ++seed) {
          if (backward && variant == 5) continue;  // ALiBi: the backward references do not take it yet
          Case c = packed_case(sh, variant, t, seed, seqused);
          if (backward) c = testing::with_dout(std::move(c), seed);
          judge(core, isa, c, seed % 3 == 0 ? Layout::bthd : Layout::bhtd);
          ++judged;
        }
    }
  }
  return judged;
}

TEST(CoreVarlen, ForwardWithinTheBoundOnEveryPath) {
  const int judged = on_every_path(1, false, [](CoreKernel& core, Isa isa, const Case& c, Layout layout) {
    EXPECT_TRUE(forward_within_bound(core, c, layout)) << isa_name(isa) << ' ' << c.id;
  });
  std::string paths;
  for (const Isa isa : runnable_isas(DType::bf16)) paths += std::string(paths.empty() ? "" : ", ") + isa_name(isa);
  std::printf("[ measured ] %d packed cases judged within the bound on %s\n", judged, paths.c_str());
  EXPECT_GE(judged, 4 * static_cast<int>(std::size(kShapes)) * kVariants);
}

// The backward per sequence (core/varlen.h): sequences without queries (dK = dV = 0 written
// by the split), without keys (dQ = 0), and dsinks summed over the sequences.
TEST(CoreVarlen, BackwardWithinTheBoundOnEveryPath) {
  const int judged = on_every_path(100, true, [](CoreKernel& core, Isa isa, const Case& c, Layout layout) {
    const checks::PropertyResult r = checks::check_backward_matches_reference(core, c, layout);
    EXPECT_TRUE(r.ok) << isa_name(isa) << ' ' << r;
    EXPECT_TRUE(r.message.empty()) << r;  // judged, not "not claimed"
  });
  std::printf("[ measured ] %d packed backward cases judged within the bound\n", judged);
  EXPECT_GE(judged, 4 * static_cast<int>(std::size(kShapes)) * (kVariants - 1));
}

// Per-sequence key lengths, forward and backward, on every path: a key a sequence does not use
// gets dK = dV = 0, a sequence using none of its keys has dQ = 0 on its rows.
TEST(CoreVarlen, PerSequenceKeyLengthsWithinTheBoundOnEveryPath) {
  const auto forward = [](CoreKernel& core, Isa isa, const Case& c, Layout layout) {
    ASSERT_TRUE(c.problem.has_kv_len && c.kv_len.size() == static_cast<std::size_t>(c.problem.varlen_sequences));
    EXPECT_TRUE(forward_within_bound(core, c, layout)) << isa_name(isa) << ' ' << c.id;
  };
  const auto backward = [](CoreKernel& core, Isa isa, const Case& c, Layout layout) {
    const checks::PropertyResult r = checks::check_backward_matches_reference(core, c, layout);
    EXPECT_TRUE(r.ok) << isa_name(isa) << ' ' << r;
    EXPECT_TRUE(r.message.empty()) << r;  // judged, not "not claimed"
  };
  const int judged = on_every_path(300, false, forward, true) + on_every_path(400, true, backward, true);
  std::printf("[ measured ] %d packed cases with kv_len [S] judged within the bound, forward and backward\n", judged);
  EXPECT_GE(judged, 4 * static_cast<int>(std::size(kShapes)) * (2 * kVariants - 1));
}

// Every gradient element is written: the judged runs above start from zeroed buffers, where a
// sequence's dQ (no keys) or dK, dV (no queries) left unwritten would still read as the exact 0.
// Here the buffers start as NaN and must end bitwise as the zeroed run's.
TEST(CoreVarlen, BackwardWritesEveryGradientElement) {
  CoreKernel core;
  int with_empty = 0;
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    const Case c = testing::with_dout(packed_case(kShapes[seed % 2], static_cast<int>(seed % 5), DType::f32, seed, seed % 3 == 0), seed);
    for (std::size_t s = 0; s + 1 < c.cu_seqlens_q.size(); ++s)
      with_empty += (c.cu_seqlens_q[s] == c.cu_seqlens_q[s + 1]) != (c.cu_seqlens_k[s] == c.cu_seqlens_k[s + 1]);
    const Outputs zeroed = run_backward(core, c);
    CaseBuffers buf(c, Layout::bhtd, true);
    core.forward(c.problem, buf.views());
    for (const TensorRef* t : {&buf.views().dq, &buf.views().dk, &buf.views().dv})
      for (std::int64_t h = 0; h < t->shape[1]; ++h)
        for (std::int64_t i = 0; i < t->shape[2]; ++i)
          for (std::int64_t d = 0; d < t->shape[3]; ++d) store(*t, {0, h, i, d}, std::nan(""));
    core.backward(c.problem, buf.views());
    EXPECT_TRUE(testing::same_gradients(buf.outputs(), zeroed)) << c.id;
  }
  EXPECT_GT(with_empty, 5);  // sequences with queries but no keys, or keys but no queries
}

}  // namespace
}  // namespace attnv::core
