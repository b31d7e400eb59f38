#pragma once
// Storage dtypes and their exact rounding.
//
// Every value attnv handles is kept as a double: f32, f16 and bf16 values are all exactly
// representable in f64, so "the exact value its storage holds" (SPEC) is a double. Rounding to
// a narrower dtype is emulated exactly (round to nearest, ties to even, IEEE overflow to inf,
// gradual underflow), directly from the double: going through float first would round twice.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

namespace attnv {

enum class DType : std::uint8_t { f64, f32, f16, bf16 };

inline constexpr DType kAllDTypes[] = {DType::f64, DType::f32, DType::f16, DType::bf16};
inline constexpr double kInf = std::numeric_limits<double>::infinity();

std::string_view dtype_name(DType t);                     // "f64", "f32", "f16", "bf16"
std::optional<DType> parse_dtype(std::string_view name);  // also accepts "float32", "half", ...
int dtype_bytes(DType t);
int mantissa_bits(DType t);    // precision p, counting the implicit bit: 53, 24, 11, 8
int min_exponent(DType t);     // exponent of the smallest normal: -1022, -126, -14, -126
int max_exponent(DType t);     // exponent of the largest finite: 1023, 127, 15, 127
double unit_roundoff(DType t); // u = 2^-p
double max_finite(DType t);
double min_normal(DType t);

// round_to for f16 and bf16 (dtype.cpp).
double round_nearest_16(DType t, double x);

// Round x to the nearest value of dtype t (ties to even). NaN stays NaN, overflow gives +-inf.
// Inline: the references, the generators and the buffers call it per element, and for f32 and
// f64 the call cost more than the rounding (8.6% of the quick certify's samples, session 21).
inline double round_to(DType t, double x) {
  if (t == DType::f32) return static_cast<double>(static_cast<float>(x));  // hardware RNE
  if (t == DType::f64) return x;
  return round_nearest_16(t, x);
}
// Round toward zero (truncation); used only to emulate a classic precision bug.
double truncate_to(DType t, double x);
inline bool representable(DType t, double x) { return std::isnan(x) || round_to(t, x) == x; }
// ulp(x) in dtype t: the gap between |x| rounded down to t and the next larger value of t.
double ulp(DType t, double x);

// Bit patterns of the 16-bit formats (x must already be representable, or it is rounded).
std::uint16_t f16_bits(double x);
double f16_value(std::uint16_t bits);
std::uint16_t bf16_bits(double x);
double bf16_value(std::uint16_t bits);

}  // namespace attnv
