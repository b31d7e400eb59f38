// The result must not depend on how it was computed: AVX2 and portable kernels give the same
// bits, and so do 1 and 2 threads (forward and backward).
#include <gtest/gtest.h>

#include "gen/rng.h"
#include "reference/fast/dd_kernels.h"
#include "reference/fast/fast.h"

namespace attnv::reference {
namespace {

// Restores the automatic choice after a test forced one.
struct IsaGuard {
  dd::Isa saved = dd::active_isa();
  ~IsaGuard() { dd::force_isa(saved); }
};

Case random_case(std::uint64_t seed, std::int64_t D, bool softcap) {
  Problem p;
  p.shape = {2, 4, 2, 7, 9, D, D + 2};
  p.dtype = DType::f64;
  p.causal = true;
  p.alignment = Alignment::bottom_right;
  if (softcap) p.softcap = 3.0;
  p.has_bias = true;
  Case c = make_zero_case(p, true);
  gen::Rng rng(seed);
  for (auto* t : {&c.q, &c.k, &c.v, &c.dout, &c.bias})
    for (double& x : *t) x = rng.normal() * 2;
  return c;
}

void expect_same_bits(const Outputs& a, const Outputs& b) {
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(a.lse, b.lse);
  EXPECT_EQ(a.dq, b.dq);
  EXPECT_EQ(a.dk, b.dk);
  EXPECT_EQ(a.dv, b.dv);
}

TEST(FastPaths, KernelsBitwiseEqualAcrossIsas) {
  if (!dd::cpu_has_avx2_fma()) GTEST_SKIP() << "no AVX2+FMA on this CPU";
  const dd::Kernels port = dd::portable_kernels(), avx = dd::avx2_kernels();
  gen::Rng rng(21);
  for (std::int64_t n = 0; n <= 37; ++n) {
    std::vector<double> a(n), b(n);
    for (std::int64_t k = 0; k < n; ++k) {
      a[k] = rng.normal() * std::ldexp(1.0, static_cast<int>(rng.uniform_int(-30, 30)));
      b[k] = rng.normal();
    }
    const dd::DotResult x = port.dot(a.data(), b.data(), n), y = avx.dot(a.data(), b.data(), n);
    ASSERT_EQ(x.value.hi, y.value.hi);
    ASSERT_EQ(x.value.lo, y.value.lo);
    ASSERT_EQ(x.abs_sum, y.abs_sum);
    std::vector<double> h1(n, 0.5), l1(n, 0x1p-60), s1(n, 1), v1(n, 0), e1(n, 0);
    std::vector<double> h2 = h1, l2 = l1, s2 = s1, v2 = v1, e2 = e1;
    for (int rep = 0; rep < 5; ++rep) {
      const dd::DD w = dd::fast_two_sum(rng.normal(), rng.normal() * 0x1p-55);
      port.axpy(w, 1e-30, a.data(), n, h1.data(), l1.data(), s1.data(), v1.data(), e1.data());
      avx.axpy(w, 1e-30, a.data(), n, h2.data(), l2.data(), s2.data(), v2.data(), e2.data());
    }
    ASSERT_EQ(h1, h2);
    ASSERT_EQ(l1, l2);
    ASSERT_EQ(s1, s2);
    ASSERT_EQ(v1, v2);
    ASSERT_EQ(e1, e2);
  }
}

TEST(FastPaths, ForwardAndBackwardBitwiseEqualAcrossIsas) {
  if (!dd::cpu_has_avx2_fma()) GTEST_SKIP() << "no AVX2+FMA on this CPU";
  IsaGuard guard;
  for (const bool softcap : {false, true}) {
    for (const std::int64_t D : {5, 8, 13}) {
      const Case c = random_case(static_cast<std::uint64_t>(D) + (softcap ? 100 : 0), D, softcap);
      dd::force_isa(dd::Isa::portable);
      const Outputs port = fast_backward(c, {1});
      dd::force_isa(dd::Isa::avx2);
      const Outputs avx = fast_backward(c, {1});
      expect_same_bits(port, avx);
      EXPECT_FALSE(avx.dq.empty());
    }
  }
}

TEST(FastPaths, ThreadCountDoesNotChangeBits) {
  const Case c = random_case(31, 16, true);
  expect_same_bits(fast_backward(c, {1}), fast_backward(c, {2}));
  expect_same_bits(fast_backward(c, {1}), fast_backward(c, {3}));
  expect_same_bits(fast_forward(c, {1}), fast_forward(c, {2}));
  // And the forward inside the backward is the forward.
  const Outputs f = fast_forward(c, {2}), b = fast_backward(c, {2});
  EXPECT_EQ(f.out, b.out);
  EXPECT_EQ(f.lse, b.lse);
}

}  // namespace
}  // namespace attnv::reference
