#include "problem/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace attnv {
namespace {

// Every f16 bit pattern decodes to a value that encodes back to the same bits: the codec is a
// bijection on non-NaN patterns, so round_to(f16) lands exactly on f16 values.
TEST(DType, F16BitsRoundTripEveryPattern) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const double x = f16_value(bits);
    if (std::isnan(x)) continue;
    EXPECT_EQ(f16_bits(x), bits) << std::hex << b;
    EXPECT_EQ(round_to(DType::f16, x), x);
  }
}

TEST(DType, Bf16BitsRoundTripEveryPattern) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const double x = bf16_value(bits);
    if (std::isnan(x)) continue;
    EXPECT_EQ(bf16_bits(x), bits) << std::hex << b;
    // bf16 is the top half of an f32: the decoded value must equal that reading.
    const std::uint32_t f32bits = std::uint32_t{bits} << 16;
    float f;
    std::memcpy(&f, &f32bits, 4);
    EXPECT_EQ(static_cast<double>(f), x) << std::hex << b;
  }
}

TEST(DType, KnownF16Values) {
  EXPECT_EQ(f16_bits(1.0), 0x3c00);
  EXPECT_EQ(f16_bits(65504.0), 0x7bff);
  EXPECT_EQ(f16_bits(-2.0), 0xc000);
  EXPECT_EQ(f16_value(0x0001), std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_EQ(max_finite(DType::f16), 65504.0);
  EXPECT_EQ(max_finite(DType::bf16), static_cast<double>(std::numeric_limits<float>::max()) * (1 - std::ldexp(1.0, -8)) / (1 - std::ldexp(1.0, -24)));
  EXPECT_EQ(max_finite(DType::f32), static_cast<double>(std::numeric_limits<float>::max()));
}

TEST(DType, RoundToNearestEvenAtTies) {
  // 1 + 2^-11 is halfway between f16 neighbours 1 and 1 + 2^-10: ties go to even (1).
  EXPECT_EQ(round_to(DType::f16, 1 + std::ldexp(1.0, -11)), 1.0);
  EXPECT_EQ(round_to(DType::f16, 1 + 3 * std::ldexp(1.0, -11)), 1 + std::ldexp(1.0, -9));
  EXPECT_EQ(round_to(DType::bf16, 1 + std::ldexp(1.0, -8)), 1.0);
  // Just above a tie rounds up: a double-rounding path (double -> float -> bf16) would get
  // this wrong, since the float rounding lands exactly on the tie.
  const double above = 1 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_EQ(round_to(DType::bf16, above), 1 + std::ldexp(1.0, -7));
}

// round_to against its definition on every gap of f16 and bf16: between adjacent values lo < hi
// (bit patterns b, b + 1), a point nearer to one rounds to it, the midpoint to the even pattern,
// and the same for -x with the sign kept. Past the largest finite value by half a gap is inf.
TEST(DType, RoundToIsTheNearestValueOnEveryGap) {
  struct Format {
    DType t;
    double (*value)(std::uint16_t);
    std::uint16_t max_bits;  // the largest finite pattern
  };
  for (const Format f : {Format{DType::f16, f16_value, 0x7bff}, Format{DType::bf16, bf16_value, 0x7f7f}}) {
    int checked = 0;
    for (std::uint32_t b = 0; b < f.max_bits; ++b) {
      const double lo = f.value(static_cast<std::uint16_t>(b)), hi = f.value(static_cast<std::uint16_t>(b + 1));
      const double mid = lo + (hi - lo) / 2;  // exact: one more bit than the format has
      const double even = (b % 2 == 0) ? lo : hi;
      for (const double sign : {1.0, -1.0}) {
        const auto expect = [&](double x, double want) {
          const double got = round_to(f.t, sign * x);
          EXPECT_EQ(got, sign * want) << dtype_name(f.t) << " x=" << sign * x << " pattern " << b;
          EXPECT_EQ(std::signbit(got), sign < 0) << dtype_name(f.t) << " x=" << sign * x;
        };
        expect(mid, even);
        expect(std::nextafter(mid, lo), lo);
        expect(std::nextafter(mid, hi), hi);
        expect(lo + (hi - lo) / 4, lo);
        expect(hi - (hi - lo) / 4, hi);
        ++checked;
      }
    }
    EXPECT_EQ(checked, 2 * f.max_bits);
    const double top = max_finite(f.t), gap = top - f.value(static_cast<std::uint16_t>(f.max_bits - 1));
    EXPECT_EQ(round_to(f.t, top + gap / 2), HUGE_VAL) << dtype_name(f.t);  // the tie goes to even: inf
    EXPECT_EQ(round_to(f.t, std::nextafter(top + gap / 2, 0.0)), top) << dtype_name(f.t);
    EXPECT_EQ(round_to(f.t, -1e300), -HUGE_VAL) << dtype_name(f.t);
    EXPECT_EQ(round_to(f.t, 5e-324), 0.0) << dtype_name(f.t);  // f64's smallest subnormal
    EXPECT_TRUE(std::signbit(round_to(f.t, -5e-324))) << dtype_name(f.t);
  }
}

TEST(DType, OverflowAndUnderflow) {
  EXPECT_EQ(round_to(DType::f16, 65519.0), 65504.0);           // below the overflow threshold
  EXPECT_TRUE(std::isinf(round_to(DType::f16, 65520.0)));     // ties to even overflow
  EXPECT_EQ(truncate_to(DType::f16, 1e6), 65504.0);           // truncation saturates
  EXPECT_EQ(round_to(DType::f16, std::ldexp(1.0, -26)), 0.0); // below half the smallest subnormal
  EXPECT_EQ(round_to(DType::f16, std::ldexp(3.0, -26)), std::ldexp(1.0, -24));
  EXPECT_TRUE(std::isnan(round_to(DType::bf16, std::nan(""))));
}

TEST(DType, F32RoundingMatchesTheHardware) {
  for (double x : {0.1, 1.0 / 3, 1e-40, 3.4028235677973366e38, -7.000000476837158})
    EXPECT_EQ(round_to(DType::f32, x), static_cast<double>(static_cast<float>(x)));
}

TEST(DType, TruncationGoesTowardZero) {
  const double x = 1 + 0.9 * std::ldexp(1.0, -7);
  EXPECT_EQ(truncate_to(DType::bf16, x), 1.0);
  EXPECT_EQ(truncate_to(DType::bf16, -x), -1.0);
  EXPECT_EQ(round_to(DType::bf16, x), 1 + std::ldexp(1.0, -7));
}

TEST(DType, UlpAndParse) {
  EXPECT_EQ(ulp(DType::f16, 1.0), std::ldexp(1.0, -10));
  EXPECT_EQ(ulp(DType::f16, 0.0), std::ldexp(1.0, -24));
  EXPECT_EQ(ulp(DType::f64, 1.0), std::ldexp(1.0, -52));
  EXPECT_EQ(parse_dtype("bfloat16"), DType::bf16);
  EXPECT_EQ(parse_dtype("f8"), std::nullopt);
  for (DType t : kAllDTypes) EXPECT_EQ(parse_dtype(dtype_name(t)), t);
}

}  // namespace
}  // namespace attnv
