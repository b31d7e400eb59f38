// Shapes around the tile sizes, every visibility rule, grouped heads, fully masked rows,
// bitwise determinism across thread counts and runs, and the interface claims.
#include <cmath>
#include <limits>
#include <utility>
#include <string>

#include <gtest/gtest.h>

#include "core/core_kernel.h"
#include "core/workspace.h"
#include "core_test_util.h"
#include "problem/error.h"

namespace attnv::core {
namespace {

using testing::runnable_isas;
using testing::bitwise_equal;
using testing::forward_within_bound;
using testing::random_case;
using testing::feature_variant;
using testing::kFeatureVariants;
using testing::make_problem;


// Query and key lengths on both sides of the 64-row / 64-key tiles, Tq = 1 among them.
TEST(CoreEdges, LengthsAroundTiles) {
  CoreKernel core;
  std::uint64_t seed = 100;
  for (std::int64_t tq : {1, 63, 65, 129})
    for (std::int64_t tk : {1, 63, 65, 127, 129}) {
      Problem p = make_problem(tq, tk);
      EXPECT_TRUE(forward_within_bound(core, random_case(p, ++seed), Layout::bhtd));
      p.causal = true;
      p.alignment = Alignment::bottom_right;
      EXPECT_TRUE(forward_within_bound(core, random_case(p, ++seed), Layout::bthd));
    }
}

// Every visibility rule and option on multi-tile shapes, in f32 and bf16.
TEST(CoreEdges, VisibilityRulesAcrossTiles) {
  CoreKernel core;
  std::uint64_t seed = 200;
  for (DType t : {DType::f32, DType::bf16})
    for (int variant = 0; variant < kFeatureVariants; ++variant) {
      const Problem p = feature_variant(variant, 100, 150, 40, t);
      const Case c = random_case(p, ++seed);
      for (Layout layout : {Layout::bhtd, Layout::gapped})
        EXPECT_TRUE(forward_within_bound(core, c, layout)) << "variant " << variant;
    }
}

// Window sides up to 2^63 - 1 (the manifest allows them): pos + wr and pos - wl must not wrap
// around. A side at least as long as the sequence is no limit, so the outputs equal those without
// that side bit for bit, in both alignments, causal or not, Tq > Tk and Tq < Tk.
TEST(CoreEdges, WindowSidesNear2To63AreNoLimit) {
  CoreKernel core;
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::uint64_t seed = 300;
  for (const auto& [tq, tk] : {std::pair<std::int64_t, std::int64_t>{70, 130}, {130, 70}})
    for (const Alignment align : {Alignment::top_left, Alignment::bottom_right})
      for (const bool causal : {false, true})
        for (const auto& [wl, wr] : {std::pair{std::int64_t{-1}, kMax}, {kMax, std::int64_t{-1}}, {kMax, kMax},
                                    {kMax - 1, std::int64_t{5}}, {std::int64_t{5}, kMax - 1}}) {
          Problem p = make_problem(tq, tk);
          p.alignment = align;
          p.causal = causal;
          p.window = {wl, wr};
          const Case c = random_case(p, ++seed);
          Outputs huge, plain;
          ASSERT_TRUE(forward_within_bound(core, c, Layout::bhtd, &huge)) << wl << ", " << wr;
          Case unbounded = c;  // the same limits, written without the huge sides
          unbounded.problem.window = {wl > tk + tq ? -1 : wl, wr > tk + tq ? -1 : wr};
          ASSERT_TRUE(forward_within_bound(core, unbounded, Layout::bhtd, &plain));
          EXPECT_TRUE(bitwise_equal(huge, plain)) << "window (" << wl << ", " << wr << ")";
        }
}

// Rows with no visible key: exactly O = 0 and LSE = -inf (checked inside forward_within_bound),
// here with whole blocks masked (kv_len = 0 for one batch, bottom-right with Tq > kv_len).
TEST(CoreEdges, FullyMaskedRowsExact) {
  CoreKernel core;
  Problem p = make_problem(130, 70);
  p.shape.B = 2;
  p.causal = true;
  p.alignment = Alignment::bottom_right;  // the first 60 rows see nothing
  p.has_kv_len = true;
  Case c = random_case(p, 7);
  c.kv_len = {0, 70};
  Outputs got;
  ASSERT_TRUE(forward_within_bound(core, c, Layout::bhtd, &got));
  std::int64_t masked = 0;
  for (double l : got.lse) masked += std::isinf(l) ? 1 : 0;
  EXPECT_EQ(masked, 2 * (130 + 60));  // batch 0: all rows of both heads; batch 1: 60 per head
}

// Hidden keys whose K, V and bias hold NaN/inf must not change any output (SPEC).
// Every micro-kernel path and accumulator type: the NaN-safe P.V variant must round exactly like
// the micro-kernel it stands in for (the f64/portable path once differed in the last bits; found
// by the conformance suite, requirement R6); and bf16 on avx512_bf16, whose Q.K^T reads a hidden
// key's NaN through vdpbf16ps.
TEST(CoreEdges, HiddenNonFiniteValuesIgnored) {
  for (DType t : {DType::f32, DType::bf16, DType::f64})
    for (Isa isa : runnable_isas(t)) {
      if (t == DType::bf16 && isa != Isa::avx512_bf16) continue;  // the f32 kernels: as f32
      CoreKernel core({.threads = 0, .isa = isa});
      Problem p = make_problem(70, 90, t);
      p.has_mask = true;
      p.causal = true;
      Case c = random_case(p, 9);
      // Key 3 hidden from every row by the mask (the tile holding it is still visited: other
      // keys of it are visible), then its K and V made non-finite: the outputs must not move.
      for (std::int64_t i = 0; i < 70; ++i) c.mask[c.mi(0, 0, i, 3)] = 0;
      const Outputs ref_masked = [&] {
        Outputs o;
        EXPECT_TRUE(forward_within_bound(core, c, Layout::bhtd, &o));
        return o;
      }();
      for (std::int64_t d = 0; d < 16; ++d) {  // the single KV head
        c.k[c.ki(0, 0, 3, d)] = NAN;
        c.v[c.vi(0, 0, 3, d)] = INFINITY;
      }
      CaseBuffers buf(c, Layout::bhtd, false);
      core.forward(c.problem, buf.views());
      EXPECT_TRUE(bitwise_equal(buf.outputs(), ref_masked)) << dtype_name(t) << ' ' << isa_name(isa);
    }
}

// Same bits with 1 and 2 threads and across repeated runs (several query blocks per head, so
// the two threads really split the work).
TEST(CoreEdges, BitwiseDeterministic) {
  Problem p = make_problem(3 * kQueryBlock - 5, 200, DType::f16);
  p.shape.Hq = 4;
  p.causal = true;
  const Case c = random_case(p, 21);
  CoreKernel one({.threads = 1}), two({.threads = 2});
  const Outputs a = run_forward(one, c, Layout::bthd);
  const Outputs b = run_forward(two, c, Layout::bthd);
  const Outputs a2 = run_forward(one, c, Layout::bthd);
  const Outputs b2 = run_forward(two, c, Layout::bthd);
  EXPECT_TRUE(bitwise_equal(a, b));
  EXPECT_TRUE(bitwise_equal(a, a2));
  EXPECT_TRUE(bitwise_equal(b, b2));
}

// The forward runs up to kForwardBlocks query blocks against each key tile it loads, fewer when
// the threads need more items: one thread groups the five blocks of these heads four and one,
// eight threads not at all. Every visibility rule (windows whose blocks start their tiles at
// different keys among them), every path: the same bits either way.
TEST(CoreEdges, SharedKeyTilesGiveTheBitsOfOneBlockAtATime) {
  std::uint64_t seed = 2600;
  for (Isa isa : runnable_isas(DType::bf16))
    for (int variant = 0; variant < kFeatureVariants; ++variant) {
      // f32, except on avx512_bf16, which computes differently only for bf16 (Q and K packed as pairs).
      const DType t = isa == Isa::avx512_bf16 ? DType::bf16 : DType::f32;
      const Problem p = feature_variant(variant, 5 * kQueryBlock - 7, 300, 40, t);
      const Case c = random_case(p, ++seed);
      CoreKernel grouped({.threads = 1, .isa = isa}), single({.threads = 8, .isa = isa});
      EXPECT_TRUE(bitwise_equal(run_forward(grouped, c, Layout::bhtd), run_forward(single, c, Layout::bhtd)))
          << "variant " << variant << ", " << isa_name(isa);
    }
}

TEST(CoreInterface, NameCapabilitiesAndPrecision) {
  CoreKernel core;
  EXPECT_EQ(core.name(), "core");
  const Capabilities caps = core.capabilities();
  EXPECT_TRUE(caps.gqa && caps.causal_top_left && caps.causal_bottom_right && caps.window &&
              caps.mask && caps.bias && caps.kv_len && caps.softcap && caps.custom_scale &&
              caps.lse && caps.strided);
  EXPECT_TRUE(caps.backward);
  EXPECT_EQ(caps.dtypes.size(), 4u);
  const PrecisionModel f16 = core.precision(DType::f16);
  EXPECT_EQ(f16.accum, DType::f32);
  EXPECT_EQ(f16.p_dtype, DType::f32);
  EXPECT_EQ(f16.out, DType::f16);
  EXPECT_EQ(f16.block, kKeyBlock);
  EXPECT_EQ(core.precision(DType::f64).accum, DType::f64);
}

TEST(CoreInterface, BadViewsAreInputErrors) {
  CoreKernel core;
  const Case c = random_case(make_problem(4, 5), 3);
  CaseBuffers buf(c, Layout::bhtd, false);
  KernelViews v = buf.views();
  v.out.shape[3] = 99;  // wrong Dv
  EXPECT_THROW(core.forward(c.problem, v), InputError);
}

}  // namespace
}  // namespace attnv::core
