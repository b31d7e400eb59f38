// The avx512_bf16 path (core/isa.h): its Q.K^T and P.V on vdpbf16ps and its rounding of P
// (microkernels_avx512_bf16.cpp) bit for bit against scalar emulations of the instructions'
// documented arithmetic, the forward taking it for bf16 storage only, and the subnormal flush
// the core declares on it being needed.
// The whole path is certified on bf16 by the conformance suite (core_conformance_test.cpp); on a
// CPU without AVX512_BF16 every test here is one skip naming the missing feature.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/core_kernel.h"
#include "core/isa.h"
#include "core/microkernels.h"
#include "core/tile_ops.h"
#include "core/tests/core_test_util.h"
#include "core/workspace.h"
#include "problem/buffers.h"
#include "gen/rng.h"

namespace attnv::core {
namespace {

std::string missing_bf16() { return missing_features(Isa::avx512_bf16, cpu_features()); }
#define REQUIRE_BF16_PATH() \
  if (!missing_bf16().empty()) GTEST_SKIP() << "the avx512_bf16 path cannot run here: this CPU lacks " << missing_bf16()

float flushed(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }

// What one f32 lane of vdpbf16ps computes, per the Intel SDM: acc = fma(a_odd, b_odd, acc), then
// acc = fma(a_even, b_even, acc), every operand subnormal read as zero and every subnormal result
// flushed to a signed zero (MXCSR ignored). The two mutants the test must tell apart from it:
// the even element first, and gradual underflow.
enum class Emulation { sdm, even_first, no_flush };
float dp_lane(float acc, std::uint32_t a, std::uint32_t b, Emulation e) {
  const auto f = [e](float x) { return e == Emulation::no_flush ? x : flushed(x); };
  const float a0 = f(bf16_bits_to_f32(a & 0xffff)), a1 = f(bf16_bits_to_f32(a >> 16));
  const float b0 = f(bf16_bits_to_f32(b & 0xffff)), b1 = f(bf16_bits_to_f32(b >> 16));
  acc = f(acc);
  if (e == Emulation::even_first) return f(std::fma(a1, b1, f(std::fma(a0, b0, acc))));
  return f(std::fma(a0, b0, f(std::fma(a1, b1, acc))));
}

// A bf16 value: a third normal(0, 1), a third tiny normals near the underflow threshold, a third
// subnormal (each sign), so products and sums cross the flush threshold often.
std::uint16_t random_bf16(gen::Rng& rng) {
  const std::uint64_t r = rng.next();
  const std::uint16_t sign = (r >> 8) & 1 ? 0x8000 : 0;
  switch (r % 3) {
    case 0: return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(static_cast<float>(rng.normal())) >> 16);
    case 1: return static_cast<std::uint16_t>(sign | (0x0080 + (r >> 16) % 0x0c00));  // exponents 1..24
    default: return static_cast<std::uint16_t>(sign | (1 + (r >> 16) % 0x7f));         // subnormal
  }
}
std::uint32_t random_word(gen::Rng& rng) { return random_bf16(rng) | std::uint32_t{random_bf16(rng)} << 16; }

// scores_bf16 against the emulation, every element bit for bit, over shapes around every
// register block and tail. Also counts where each mutant emulation disagrees with the kernel:
// both must, or this comparison could not tell them apart.
TEST(CoreBf16Path, BitwiseEqualTheInstructionsArithmetic) {
  REQUIRE_BF16_PATH();
  const MicroKernels<float>& mk = kernels_f32(Isa::avx512_bf16);
  ASSERT_NE(mk.scores_bf16, nullptr);
  gen::Rng rng(1701);
  std::int64_t compared = 0, even_first_differs = 0, no_flush_differs = 0;
  for (int rows : {1, 5, 6, 7, 12, 13})
    for (int n : {1, 15, 16, 17, 48, 63, 64})
      for (std::int64_t words : {1, 3, 4, 36, 64}) {
        const std::int64_t ldk = round_up(n, 16), lds = ldk, ldq = words + 1;
        std::vector<std::uint32_t> q(static_cast<std::size_t>(rows * ldq)), k(static_cast<std::size_t>(words * ldk));
        for (auto& x : q) x = random_word(rng);
        for (std::int64_t w = 0; w < words; ++w)
          for (std::int64_t c = 0; c < ldk; ++c) k[w * ldk + c] = c < n ? random_word(rng) : 0;  // the zero fill
        const float scale = 0.125f;
        std::vector<float> s(static_cast<std::size_t>(rows * lds));
        mk.scores_bf16(q.data(), ldq, rows, k.data(), ldk, n, words, scale, s.data(), lds);
        for (int r = 0; r < rows; ++r)
          for (int c = 0; c < n; ++c) {
            float want[3];
            for (Emulation e : {Emulation::sdm, Emulation::even_first, Emulation::no_flush}) {
              float acc = 0;
              for (std::int64_t w = 0; w < words; ++w) acc = dp_lane(acc, q[r * ldq + w], k[w * ldk + c], e);
              want[static_cast<int>(e)] = acc * scale;  // vmulps: MXCSR's default, gradual underflow
            }
            const std::uint32_t got = std::bit_cast<std::uint32_t>(s[r * lds + c]);
            ASSERT_EQ(got, std::bit_cast<std::uint32_t>(want[0]))
                << "rows " << rows << " n " << n << " words " << words << " at " << r << ", " << c;
            ++compared;
            even_first_differs += got != std::bit_cast<std::uint32_t>(want[1]);
            no_flush_differs += got != std::bit_cast<std::uint32_t>(want[2]);
          }
      }
  std::printf("[ measured ] %lld scores bit for bit; the even-first mutant differs in %lld, the non-flushing one in %lld\n",
              static_cast<long long>(compared), static_cast<long long>(even_first_differs),
              static_cast<long long>(no_flush_differs));
  EXPECT_GT(even_first_differs, 0);
  EXPECT_GT(no_flush_differs, 0);
}

float as_float(std::uint32_t w) { return std::bit_cast<float>(w); }
std::uint32_t as_word(float x) { return std::bit_cast<std::uint32_t>(x); }

// A weight as the forward's P: a third ordinary (0, 1], a third tiny down to the subnormal range,
// a sixth zero (hidden keys), a sixth 1.
float random_weight(gen::Rng& rng) {
  const std::uint64_t r = rng.next() % 6;
  if (r < 2) return static_cast<float>(rng.uniform());
  if (r < 4) return std::ldexp(static_cast<float>(rng.uniform()), -120 - static_cast<int>(rng.next() % 20));
  return r == 4 ? 0.0f : 1.0f;
}

// p_to_bf16_pairs: each weight rounded to nearest even (a subnormal read as zero), in order, the
// missing P[n] of odd n zero; every word compared.
TEST(CoreBf16Path, PRoundedToBf16PairsInPlace) {
  REQUIRE_BF16_PATH();
  const MicroKernels<float>& mk = kernels_f32(Isa::avx512_bf16);
  gen::Rng rng(1702);
  std::int64_t compared = 0;
  for (int rows : {1, 3, 6})
    for (int n : {1, 2, 15, 16, 17, 31, 32, 33, 63, 64}) {
      const std::int64_t lds = kKeyBlock;
      std::vector<float> s(static_cast<std::size_t>(rows * lds));
      for (float& x : s) x = random_weight(rng);
      const std::vector<float> before = s;
      mk.p_to_bf16_pairs(s.data(), lds, rows, n);
      for (int r = 0; r < rows; ++r)
        for (int w = 0; w < (n + 1) / 2; ++w) {
          const auto rounded = [&](int c) -> std::uint32_t {
            return c < n ? f32_to_bf16_bits(flushed(before[r * lds + c])) : 0;
          };
          ASSERT_EQ(as_word(s[r * lds + w]), rounded(2 * w) | rounded(2 * w + 1) << 16)
              << "rows " << rows << " n " << n << " at " << r << ", word " << w;
          ++compared;
        }
    }
  std::printf("[ measured ] %lld words of rounded weights bit for bit\n", static_cast<long long>(compared));
}

// pv_bf16 against pv_bf16_skipping_hidden (tile_ops.h), the scalar emulation the forward takes on
// tiles with non-finite V: bit for bit on finite V, with zero and subnormal weights, tiny and
// subnormal values and accumulators; so the NaN-safe variant rounds exactly like the kernel (R6).
// The even-first emulation (a planted mutant of the emulation) must differ somewhere.
TEST(CoreBf16Path, PvBitwiseEqualsItsNaNSafeEmulation) {
  REQUIRE_BF16_PATH();
  const MicroKernels<float>& mk = kernels_f32(Isa::avx512_bf16);
  gen::Rng rng(1703);
  std::int64_t compared = 0, even_first_differs = 0;
  for (int rows : {1, 5, 6, 7, 13})
    for (int n : {1, 2, 15, 16, 17, 63, 64})
      for (std::int64_t dv : {16, 64, 80, 128}) {
        const std::int64_t ldv = kKeyBlock / 2 * kPanel, ldp = kKeyBlock, pairs = (n + 1) / 2;
        AlignedArray<float> v((dv / kPanel) * ldv);
        for (std::int64_t i = 0; i < (dv / kPanel) * ldv; ++i) {
          const std::uint32_t w = random_word(rng);
          std::memcpy(v.get() + i, &w, sizeof w);
        }
        std::vector<float> p(static_cast<std::size_t>(rows * ldp));
        for (int r = 0; r < rows; ++r)
          for (std::int64_t w = 0; w < pairs; ++w) {
            const auto half = [&](std::int64_t c) { return c < n ? f32_to_bf16_bits(random_weight(rng)) : 0u; };
            p[r * ldp + w] = as_float(half(2 * w) | half(2 * w + 1) << 16);
          }
        std::vector<float> alpha(static_cast<std::size_t>(rows)), o0(static_cast<std::size_t>(rows * dv));
        for (float& a : alpha) a = rng.next() % 4 == 0 ? 1.0f : static_cast<float>(rng.uniform());
        for (float& x : o0) x = bf16_bits_to_f32(random_bf16(rng));
        std::vector<float> a = o0, b = o0, c = o0;
        mk.pv_bf16(reinterpret_cast<const std::uint32_t*>(p.data()), ldp, rows, alpha.data(),
                   reinterpret_cast<const std::uint32_t*>(v.get()), ldv, n, dv, a.data(), dv);
        pv_bf16_skipping_hidden(p.data(), ldp, rows, alpha.data(), v.get(), ldv, n, dv, b.data(), dv);
        // The mutant: each word's halves swapped in P and V, i.e. the even key first.
        std::vector<float> ps(p.size());
        AlignedArray<float> vs((dv / kPanel) * ldv);
        const auto swap = [](float x) { const std::uint32_t w = as_word(x); return as_float(w >> 16 | w << 16); };
        for (std::size_t i = 0; i < p.size(); ++i) ps[i] = swap(p[i]);
        for (std::int64_t i = 0; i < (dv / kPanel) * ldv; ++i) vs.get()[i] = swap(v.get()[i]);
        pv_bf16_skipping_hidden(ps.data(), ldp, rows, alpha.data(), vs.get(), ldv, n, dv, c.data(), dv);
        for (std::size_t i = 0; i < a.size(); ++i) {
          ASSERT_EQ(as_word(a[i]), as_word(b[i])) << "rows " << rows << " n " << n << " dv " << dv << " at " << i;
          even_first_differs += as_word(a[i]) != as_word(c[i]);
          ++compared;
        }
      }
  std::printf("[ measured ] %lld outputs of pv bit for bit; the even-first emulation differs in %lld\n",
              static_cast<long long>(compared), static_cast<long long>(even_first_differs));
  EXPECT_GT(even_first_differs, 0);
}

// The forward on avx512_bf16 against avx512: both within the bound of their declared models, the
// same bits for f32 and f16 storage (the path differs for bf16 only), other bits for bf16 (the
// dot's order differs: evidence that the path runs). Feature variants cover odd and even Dk,
// masks, GQA, and the shared key tiles (Tq up to 4 query blocks).
TEST(CoreBf16Path, ForwardTakesThePathForBf16StorageOnly) {
  REQUIRE_BF16_PATH();
  CoreKernel base({.isa = Isa::avx512}), dp({.isa = Isa::avx512_bf16});
  int differ = 0, cases = 0;
  for (DType t : {DType::f32, DType::f16, DType::bf16})
    for (int variant = 0; variant < testing::kFeatureVariants; ++variant)
      for (auto [tq, tk] : {std::pair<std::int64_t, std::int64_t>{7, 70}, {300, 129}}) {
        Problem p = testing::feature_variant(variant, tq, tk, 20, t);
        if (variant % 3 == 0) p.shape.Dk = 25;  // odd: K rows packed through the staging rows
        const Case c = testing::random_case(p, 17000 + variant);
        Outputs a, b;
        ASSERT_TRUE(testing::forward_within_bound(base, c, Layout::bhtd, &a)) << dtype_name(t) << ' ' << variant;
        ASSERT_TRUE(testing::forward_within_bound(dp, c, variant % 2 ? Layout::bthd : Layout::bhtd, &b))
            << dtype_name(t) << ' ' << variant;
        if (t != DType::bf16) {
          EXPECT_TRUE(testing::bitwise_equal(a, b)) << dtype_name(t) << ' ' << variant;
          continue;
        }
        ++cases;
        differ += !testing::bitwise_equal(a, b);
      }
  std::printf("[ measured ] bf16: %d of %d forward cases differ in some bit from the avx512 path\n", differ, cases);
  EXPECT_GT(differ, cases / 2);
  EXPECT_TRUE(dp.precision(DType::bf16).flush_subnormals);
  EXPECT_FALSE(dp.precision(DType::f32).flush_subnormals);
  EXPECT_FALSE(base.precision(DType::bf16).flush_subnormals);
}

// Blocks sharing a key tile (tile_loop.cpp): with causal bottom-right and Tk = Tq + 1, the first
// query block's hull ends at key 193, so it takes the tile of keys 192.. with n = 1, and its last
// pair holds key 193, which the second block loaded and the first never sees. Key 193's V set to
// inf: the first block's rows must keep their bits (the NaN-safe P.V skips the weight-0 half), the
// second block's rows that see key 193 become non-finite, as they must.
TEST(CoreBf16Path, NonFiniteValueOfAKeyPairedInASharedTileDoesNotLeak) {
  REQUIRE_BF16_PATH();
  Problem p = testing::make_problem(2 * kQueryBlock, 2 * kQueryBlock + 1, DType::bf16);
  p.shape.Hq = 4;  // 8 blocks: one thread then runs items of two blocks (forward.cpp), which share tiles
  p.causal = true;
  p.alignment = Alignment::bottom_right;
  Case c = testing::random_case(p, 1704);
  CoreKernel core({.threads = 1, .isa = Isa::avx512_bf16});
  Outputs clean, dirty;
  ASSERT_TRUE(testing::forward_within_bound(core, c, Layout::bhtd, &clean));
  for (std::int64_t d = 0; d < p.shape.Dv; ++d) c.v[c.vi(0, 0, kQueryBlock + 1, d)] = INFINITY;
  {
    CaseBuffers buf(c, Layout::bhtd, false);
    core.forward(c.problem, buf.views());
    dirty = buf.outputs();
  }
  for (std::int64_t h = 0; h < p.shape.Hq; ++h) {
    for (std::int64_t i = 0; i < kQueryBlock; ++i)
      for (std::int64_t d = 0; d < p.shape.Dv; ++d)
        ASSERT_EQ(std::bit_cast<std::uint64_t>(clean.out[c.oi(0, h, i, d)]),
                  std::bit_cast<std::uint64_t>(dirty.out[c.oi(0, h, i, d)]))
            << "head " << h << " row " << i;
    EXPECT_FALSE(std::isfinite(dirty.out[c.oi(0, h, kQueryBlock, 0)]));  // row 192 sees key 193
  }
}

// The core on avx512_bf16 with one part of its declaration dropped: the planted mistakes.
class Misdeclared final : public Kernel {
 public:
  Misdeclared(bool flush, DType p_dtype) : flush_(flush), p_dtype_(p_dtype) {}
  std::string name() const override { return core_.name(); }
  Capabilities capabilities() const override { return core_.capabilities(); }
  PrecisionModel precision(DType storage) const override {
    PrecisionModel m = core_.precision(storage);
    m.flush_subnormals = flush_;
    m.p_dtype = p_dtype_;
    return m;
  }
  void forward(const Problem& p, const KernelViews& v) override { core_.forward(p, v); }

 private:
  CoreKernel core_{{.isa = Isa::avx512_bf16}};
  bool flush_;
  DType p_dtype_;
};

// One key, q = (2^-127, 0, ...), k = (2^127, 0, ...): vdpbf16ps reads the subnormal q_0 as zero,
// so the logit is 0 where the exact one is 2^-127 2^127 / 4 = 1/4, and so is LSE (the logit, with
// one key). The natural model's bound is a few roundings of 1/4 (the product is exact in f32: the
// avx512 path gets it right); the flushing model's adds |scale| min_normal (|q_0| + |k_0|) = 1/2
// for the operand read as zero (BOUND.md section 12). So the core's declaration passes, the same
// kernel declaring all but the flush fails, and the avx512 path passes the natural model.
// (A subnormal times an ordinary k is lost below every other term of the bound: only a large
// factor makes the flush visible, which is why the declaration is checked on such a case.)
TEST(CoreBf16Path, TheFlushItDeclaresIsNeeded) {
  REQUIRE_BF16_PATH();
  const Problem p = testing::make_problem(1, 1, DType::bf16);
  Case c = make_zero_case(p);
  c.q[c.qi(0, 0, 0, 0)] = std::ldexp(1.0, -127);
  c.k[c.ki(0, 0, 0, 0)] = std::ldexp(1.0, 127);
  c.v[c.vi(0, 0, 0, 0)] = 1;
  CoreKernel declared({.isa = Isa::avx512_bf16}), exact({.isa = Isa::avx512});
  Misdeclared no_flush(false, DType::bf16);
  EXPECT_TRUE(testing::forward_within_bound(declared, c, Layout::bhtd));
  EXPECT_FALSE(testing::forward_within_bound(no_flush, c, Layout::bhtd));
  EXPECT_TRUE(testing::forward_within_bound(exact, c, Layout::bhtd));
}

// P rounded to bf16 is a loss of ordinary size (2^-9 of each weight), not an underflow: the same
// kernel declaring P kept in f32 fails on ordinary random cases, which the core's declaration
// (p_dtype = bf16) passes.
TEST(CoreBf16Path, ThePRoundingItDeclaresIsNeeded) {
  REQUIRE_BF16_PATH();
  CoreKernel declared({.isa = Isa::avx512_bf16});
  Misdeclared p_in_f32(true, DType::f32);
  int caught = 0, cases = 0;
  for (int variant = 0; variant < testing::kFeatureVariants; ++variant, ++cases) {
    const Case c = testing::random_case(testing::feature_variant(variant, 40, 300, 32, DType::bf16), 17100 + variant);
    EXPECT_TRUE(testing::forward_within_bound(declared, c, Layout::bhtd)) << variant;
    caught += !testing::forward_within_bound(p_in_f32, c, Layout::bhtd);
  }
  std::printf("[ measured ] P declared f32: %d of %d cases out of the bound\n", caught, cases);
  EXPECT_GT(caught, 0);
}

}  // namespace
}  // namespace attnv::core
