// The FP8 formats (problem/fp8.h): every code decoded as the definitions say (a table computed
// apart, by tests/fp8_table.py), and rounding to nearest, ties to even, with each overflow rule.
#include "problem/fp8.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace attnv {
namespace {

using Table = std::map<std::pair<std::string, int>, double>;  // (format, code) -> value

Table read_table() {
  std::ifstream in(ATTNV_FP8_TABLE);
  Table t;
  std::string format, code, value;
  while (in >> format >> code >> value) t[{format, std::stoi(code, nullptr, 16)}] = std::strtod(value.c_str(), nullptr);
  return t;
}

bool same(double a, double b) {  // NaN equals NaN; -0 differs from +0
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// How many codes of `f` decode differently from the table's `as` column.
int mismatches(const Table& t, Fp8Format f, Fp8Format as) {
  int n = 0;
  for (int code = 0; code < 256; ++code)
    n += !same(fp8_value(f, static_cast<std::uint8_t>(code)), t.at({std::string(fp8_format_name(as)), code}));
  return n;
}

TEST(Fp8, EveryCodeDecodesAsTheDefinitionsTableSays) {
  const Table t = read_table();
  ASSERT_EQ(t.size(), 4u * 256u) << "the table " << ATTNV_FP8_TABLE << " is incomplete";
  for (Fp8Format f : kFp8Formats) EXPECT_EQ(mismatches(t, f, f), 0) << fp8_format_name(f);
}

// The table tells the formats apart: decoding e4m3fn codes as e5m2 (the swap issue 41 names as a
// bug class), or e4m3fnuz as e4m3fn (a bias off by one), disagrees on most codes.
TEST(Fp8, TheTableCatchesAFormatReadAsAnother) {
  const Table t = read_table();
  EXPECT_GT(mismatches(t, Fp8Format::e5m2, Fp8Format::e4m3fn), 200);
  EXPECT_GT(mismatches(t, Fp8Format::e4m3fn, Fp8Format::e4m3fnuz), 200);
  EXPECT_GT(mismatches(t, Fp8Format::e5m2fnuz, Fp8Format::e5m2), 200);
}

// docs/quantized.md's table: finite codes, largest, smallest normal and subnormal.
TEST(Fp8, TheFormatsHaveTheExtremesTheContractStates) {
  struct Row { Fp8Format f; int finite; double largest, min_normal, min_subnormal; };
  for (const Row& r : {Row{Fp8Format::e4m3fn, 254, 448, 0x1p-6, 0x1p-9}, Row{Fp8Format::e5m2, 248, 57344, 0x1p-14, 0x1p-16},
                       Row{Fp8Format::e4m3fnuz, 255, 240, 0x1p-7, 0x1p-10}, Row{Fp8Format::e5m2fnuz, 255, 57344, 0x1p-15, 0x1p-17}}) {
    int finite = 0;
    double largest = 0;
    for (int c = 0; c < 256; ++c) {
      const double v = fp8_value(r.f, static_cast<std::uint8_t>(c));
      finite += std::isfinite(v);
      if (std::isfinite(v)) largest = std::max(largest, v);
    }
    EXPECT_EQ(finite, r.finite) << fp8_format_name(r.f);
    EXPECT_EQ(largest, r.largest) << fp8_format_name(r.f);
    EXPECT_EQ(fp8_spec(r.f).largest, r.largest) << fp8_format_name(r.f);
    EXPECT_EQ(fp8_value(r.f, 0x01), r.min_subnormal) << fp8_format_name(r.f);
    EXPECT_EQ(fp8_value(r.f, static_cast<std::uint8_t>(1 << fp8_spec(r.f).mantissa_bits)), r.min_normal) << fp8_format_name(r.f);
    EXPECT_EQ(parse_fp8_format(fp8_format_name(r.f)), r.f);
  }
  EXPECT_EQ(parse_fp8_format("e4m3"), std::nullopt);
}

// Every finite value rounds to its own code (fnuz's 0 included; -0 keeps its code where it has one).
TEST(Fp8, EveryFiniteValueRoundsToItsOwnCode) {
  for (Fp8Format f : kFp8Formats)
    for (int c = 0; c < 256; ++c) {
      const auto code = static_cast<std::uint8_t>(c);
      const double v = fp8_value(f, code);
      if (!std::isfinite(v)) continue;
      for (Fp8Overflow o : {Fp8Overflow::saturate, Fp8Overflow::nonfinite})
        EXPECT_EQ(fp8_code(f, v, o), code) << fp8_format_name(f) << " code " << c << " value " << v;
    }
}

// Between two neighbouring values: below the midpoint the lower, above it the upper, at it the
// even code (mantissa's last bit 0). Covers the subnormals, each binade and zero's neighbour.
TEST(Fp8, RoundsToNearestWithTiesToEven) {
  for (Fp8Format f : kFp8Formats) {
    const int top = static_cast<int>(fp8_code(f, fp8_spec(f).largest, Fp8Overflow::saturate));
    for (int c = 0; c < top; ++c) {
      const auto lo = static_cast<std::uint8_t>(c), hi = static_cast<std::uint8_t>(c + 1);
      const double a = fp8_value(f, lo), b = fp8_value(f, hi), mid = (a + b) / 2;
      for (double sign : {1.0, -1.0}) {
        const auto signed_code = [&](std::uint8_t x) {
          return static_cast<std::uint8_t>(sign > 0 || (fp8_spec(f).fnuz && x == 0) ? x : x | 0x80);
        };
        const auto code = [&](double x) { return fp8_code(f, sign * x, Fp8Overflow::nonfinite); };
        EXPECT_EQ(code(std::nextafter(mid, a)), signed_code(lo)) << fp8_format_name(f) << " below " << mid;
        EXPECT_EQ(code(std::nextafter(mid, b)), signed_code(hi)) << fp8_format_name(f) << " above " << mid;
        EXPECT_EQ(code(mid), signed_code(c % 2 == 0 ? lo : hi)) << fp8_format_name(f) << " at " << mid;
      }
    }
  }
}

// Past the largest value: up to half its spacing (the tie included where the largest code is even,
// as e4m3fn's 448 is) it is the largest; beyond, saturate keeps it and nonfinite gives inf where the
// format has one and NaN where it has none. NaN in gives the format's NaN code.
TEST(Fp8, OverflowFollowsTheDeclaredRule) {
  struct Row { Fp8Format f; double tie; bool tie_stays; std::uint8_t beyond; };
  for (const Row& r : {Row{Fp8Format::e4m3fn, 464, true, 0x7F}, Row{Fp8Format::e5m2, 61440, false, 0x7C},
                       Row{Fp8Format::e4m3fnuz, 248, false, 0x80}, Row{Fp8Format::e5m2fnuz, 61440, false, 0x80}}) {
    const std::uint8_t largest = fp8_code(r.f, fp8_spec(r.f).largest, Fp8Overflow::saturate);
    const char* name = fp8_format_name(r.f).data();
    EXPECT_EQ(fp8_code(r.f, std::nextafter(r.tie, 0.0), Fp8Overflow::nonfinite), largest) << name;
    EXPECT_EQ(fp8_code(r.f, r.tie, Fp8Overflow::nonfinite), r.tie_stays ? largest : r.beyond) << name;
    EXPECT_EQ(fp8_code(r.f, std::nextafter(r.tie, 1e9), Fp8Overflow::nonfinite), r.beyond) << name;
    EXPECT_EQ(fp8_code(r.f, std::nextafter(r.tie, 1e9), Fp8Overflow::saturate), largest) << name;
    EXPECT_EQ(fp8_code(r.f, -1e30, Fp8Overflow::saturate), largest | 0x80) << name;
    EXPECT_EQ(fp8_code(r.f, HUGE_VAL, Fp8Overflow::saturate), largest) << name;
    EXPECT_TRUE(fp8_is_nan(r.f, fp8_code(r.f, std::nan(""), Fp8Overflow::saturate))) << name;
  }
  EXPECT_EQ(fp8_code(Fp8Format::e5m2, -HUGE_VAL, Fp8Overflow::nonfinite), 0xFC);
}

}  // namespace
}  // namespace attnv
