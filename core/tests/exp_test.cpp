// The SIMD exps the core uses must be within the exp_ulps its precision model declares (the
// bound assumes it). Measured against the double exp of every tested f32 argument.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/core_kernel.h"
#include "core/microkernels.h"
#include "problem/dtype.h"

namespace attnv::core {
namespace {

// |got - exact| in ulps of f32 at the exact value (subnormal range: ulps of the smallest step).
double ulps_error(float got, double exact) {
  return std::abs(static_cast<double>(got) - exact) / ulp(DType::f32, exact);
}

// Every 61st f32 of [-110, -0] (about 17 million arguments), and 0.
std::vector<float> sweep() {
  const float lo = -110.0f;
  std::uint32_t lo_bits;
  std::memcpy(&lo_bits, &lo, 4);
  std::vector<float> x;
  for (std::uint32_t u = 0x80000000u; u <= lo_bits; u += 61) {
    float v;
    std::memcpy(&v, &u, 4);
    x.push_back(v);
  }
  x.push_back(0.0f);
  return x;
}

double worst_ulps(const MicroKernels<float>& mk) {
  const std::vector<float> x = sweep();
  std::vector<float> e = x;
  mk.exp_inplace(e.data(), static_cast<int>(e.size()));
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    worst = std::max(worst, ulps_error(e[i], std::exp(static_cast<double>(x[i]))));
  return worst;
}

// The AVX2 and AVX-512 exps do the same operations per lane (exp_constants.h), so they agree;
// each is measured on its own, where it runs.
TEST(CoreExp, SimdExpWithinDeclaredUlps) {
  const double declared = CoreKernel().precision(DType::f32).exp_ulps;
  int measured = 0;
  for (const MicroKernels<float>* mk : {avx2_kernels_f32(), avx512_kernels_f32()}) {
    if (mk == nullptr) continue;
    const double worst = worst_ulps(*mk);
    RecordProperty(std::string(mk->name) + "_worst_ulps", std::to_string(worst));
    std::printf("%s exp: worst error %.3f ulps over [-110, 0] (declared %.1f)\n", mk->name, worst, declared);
    EXPECT_LE(worst, declared) << mk->name;
    ++measured;
  }
  if (measured == 0) GTEST_SKIP() << "no SIMD path on this CPU";
}

// The AVX-512 exp scales by 2^n with vscalefps where the AVX2 one multiplies by two powers of
// two (microkernels_avx512.cpp says why that is the same rounding): the same bits on the sweep,
// subnormal results included, and through exp_sum (which skips the upper clamp).
TEST(CoreExp, Avx512BitwiseEqualsAvx2) {
  const MicroKernels<float>* a = avx512_kernels_f32();
  const MicroKernels<float>* b = avx2_kernels_f32();
  if (a == nullptr || b == nullptr) GTEST_SKIP() << "needs both the avx2 and avx512 paths";
  const std::vector<float> x = sweep();
  std::vector<float> ea = x, eb = x;
  a->exp_inplace(ea.data(), static_cast<int>(ea.size()));
  b->exp_inplace(eb.data(), static_cast<int>(eb.size()));
  EXPECT_EQ(std::memcmp(ea.data(), eb.data(), ea.size() * sizeof(float)), 0);
  ea = x, eb = x;
  const float sa = a->exp_sum(ea.data(), static_cast<int>(ea.size()), 0.0f);
  const float sb = b->exp_sum(eb.data(), static_cast<int>(eb.size()), 0.0f);
  EXPECT_EQ(std::memcmp(&sa, &sb, sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(ea.data(), eb.data(), ea.size() * sizeof(float)), 0);
}

TEST(CoreExp, SpecialValues) {
  for (const MicroKernels<float>* mk : {avx512_kernels_f32(), avx2_kernels_f32(), &portable_kernels_f32()}) {
    if (mk == nullptr) continue;
    float x[5] = {-std::numeric_limits<float>::infinity(), 0.0f, -1000.0f,
                  std::numeric_limits<float>::quiet_NaN(), -87.5f};
    mk->exp_inplace(x, 5);
    EXPECT_EQ(x[0], 0.0f) << mk->name;
    EXPECT_EQ(x[1], 1.0f) << mk->name;  // exp(0) = 1 exactly: a rescale by alpha = 1 is exact
    EXPECT_EQ(x[2], 0.0f) << mk->name;
    EXPECT_TRUE(std::isnan(x[3])) << mk->name;
    EXPECT_GT(x[4], 0.0f) << mk->name;  // subnormal result, not flushed to zero
    EXPECT_LE(ulps_error(x[4], std::exp(-87.5)), 2.0) << mk->name;
  }
}

}  // namespace
}  // namespace attnv::core
