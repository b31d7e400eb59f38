#include "problem/dtype.h"

#include <bit>
#include <cmath>
#include <limits>

namespace attnv {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f64: return "f64";
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
  if (s == "f64" || s == "float64" || s == "double") return DType::f64;
  if (s == "f32" || s == "float32" || s == "float") return DType::f32;
  if (s == "f16" || s == "float16" || s == "half") return DType::f16;
  if (s == "bf16" || s == "bfloat16") return DType::bf16;
  return std::nullopt;
}

int dtype_bytes(DType t) { return t == DType::f64 ? 8 : t == DType::f32 ? 4 : 2; }

int mantissa_bits(DType t) {
  switch (t) {
    case DType::f64: return 53;
    case DType::f32: return 24;
    case DType::f16: return 11;
    case DType::bf16: return 8;
  }
  return 53;
}

int min_exponent(DType t) {
  switch (t) {
    case DType::f64: return -1022;
    case DType::f16: return -14;
    default: return -126;
  }
}

int max_exponent(DType t) {
  switch (t) {
    case DType::f64: return 1023;
    case DType::f16: return 15;
    default: return 127;
  }
}

double unit_roundoff(DType t) { return std::ldexp(1.0, -mantissa_bits(t)); }

double max_finite(DType t) {  // (2 - 2^(1-p)) 2^emax, written out: round_to asks for it per value
  switch (t) {
    case DType::f64: return std::numeric_limits<double>::max();
    case DType::f32: return std::numeric_limits<float>::max();
    case DType::f16: return 65504.0;
    case DType::bf16: return 0x1.fep127;
  }
  return std::numeric_limits<double>::max();
}

double min_normal(DType t) { return std::ldexp(1.0, min_exponent(t)); }

namespace {

// Quantum (spacing) of dtype t at magnitude |x|, ignoring overflow: 2^(max(e, emin) - p + 1).
double quantum(DType t, double x) {
  int e = x == 0.0 ? min_exponent(t) : std::ilogb(x);
  if (e < min_exponent(t)) e = min_exponent(t);
  return std::ldexp(1.0, e - mantissa_bits(t) + 1);
}

// Dividing by a power of two is exact here: x / q keeps every bit because q is at least the
// smallest subnormal of t, which is far above f64's own subnormal range for f32/f16/bf16.
double round_with(DType t, double x, bool truncate) {
  if (t == DType::f64 || !std::isfinite(x) || x == 0.0) return x;
  const double q = quantum(t, x);
  const double m = x / q;
  const double r = (truncate ? std::trunc(m) : std::nearbyint(m)) * q;
  if (std::fabs(r) > max_finite(t)) {
    // Rounded beyond the largest finite value: IEEE round-to-nearest overflows to inf;
    // truncation saturates at the largest finite value.
    return truncate ? std::copysign(max_finite(t), x) : std::copysign(HUGE_VAL, x);
  }
  return r;
}

}  // namespace

// Round to nearest, ties to even, the way round_with does, without its library calls (the
// references and the buffers round every value they touch). The quantum q = 2^k comes from the
// exponent bits; adding C = 1.5 * 2^(k+52) puts a in C's binade, whose ulp is q, so the double
// addition itself rounds a to a multiple of q, to nearest even (C / q is even), and subtracting
// C is exact. That needs a < 2^(k+51): a < 2^(e+1) = 2^(k+p) with p <= 11 here. (It also needs
// the compiler to keep (a + c) - c: no -ffast-math, which no target of this project sets.)
double round_nearest_16(DType t, double x) {
  if (!std::isfinite(x) || x == 0.0) return x;
  const double a = std::fabs(x);
  int e = static_cast<int>(std::bit_cast<std::uint64_t>(a) >> 52) - 1023;  // f64 subnormals: -1023
  if (e > max_exponent(t)) return std::copysign(HUGE_VAL, x);  // a >= 2^(emax+1): past max + q/2
  if (e < min_exponent(t)) e = min_exponent(t);
  const int k = e - mantissa_bits(t) + 1;
  const auto c = std::bit_cast<double>(static_cast<std::uint64_t>(k + 52 + 1023) << 52 | std::uint64_t{1} << 51);
  const double r = (a + c) - c;
  return std::copysign(r > max_finite(t) ? HUGE_VAL : r, x);
}

double truncate_to(DType t, double x) { return round_with(t, x, true); }

double ulp(DType t, double x) {
  const double a = std::fabs(x);
  if (!std::isfinite(a)) return std::numeric_limits<double>::quiet_NaN();
  if (t == DType::f64) {
    const double down = a;  // ulp of the binade containing |x|
    return std::nextafter(down, HUGE_VAL) - down;
  }
  return quantum(t, a);
}

namespace {

std::uint16_t bits16(double x, int p, int emin, int exp_bias, int exp_field_bits) {
  // Generic packing of an already representable value into sign | exponent | fraction.
  const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const int frac_bits = p - 1;
  const std::uint16_t exp_all_ones = static_cast<std::uint16_t>((1 << exp_field_bits) - 1);
  if (std::isnan(x)) return sign | static_cast<std::uint16_t>(exp_all_ones << frac_bits) | (1u << (frac_bits - 1));
  if (std::isinf(x)) return sign | static_cast<std::uint16_t>(exp_all_ones << frac_bits);
  const double a = std::fabs(x);
  if (a == 0.0) return sign;
  int e = std::ilogb(a);
  if (e < emin) {  // subnormal: exponent field 0, fraction = a / 2^(emin - frac_bits)
    const auto frac = static_cast<std::uint16_t>(std::ldexp(a, frac_bits - emin));
    return sign | frac;
  }
  const double mant = std::ldexp(a, -e) - 1.0;  // in [0, 1)
  const auto frac = static_cast<std::uint16_t>(std::ldexp(mant, frac_bits));
  return sign | static_cast<std::uint16_t>((e + exp_bias) << frac_bits) | frac;
}

double value16(std::uint16_t b, int p, int emin, int exp_bias, int exp_field_bits) {
  const int frac_bits = p - 1;
  const int exp_field = (b >> frac_bits) & ((1 << exp_field_bits) - 1);
  const int frac = b & ((1 << frac_bits) - 1);
  const double sign = (b & 0x8000) ? -1.0 : 1.0;
  if (exp_field == (1 << exp_field_bits) - 1)
    return frac ? std::numeric_limits<double>::quiet_NaN() : sign * HUGE_VAL;
  if (exp_field == 0) return sign * std::ldexp(frac, emin - frac_bits);
  return sign * std::ldexp(1.0 + std::ldexp(frac, -frac_bits), exp_field - exp_bias);
}

}  // namespace

// The 16-bit formats through float, which holds every f16 and bf16 value exactly (bf16 is
// float's upper half; an f16 normal is a float with a shorter fraction). NaN keeps the generic
// packing, whose payload the tests pin.
std::uint16_t f16_bits(double x) {
  const double r = round_to(DType::f16, x);
  if (std::isnan(r)) return bits16(r, 11, -14, 15, 5);
  const std::uint16_t sign = std::signbit(r) ? 0x8000 : 0;
  const double a = std::fabs(r);
  if (a == HUGE_VAL) return sign | 0x7c00;
  if (a < 0x1p-14) return sign | static_cast<std::uint16_t>(a * 0x1p24);  // subnormal: a multiple of 2^-24
  const auto u = std::bit_cast<std::uint32_t>(static_cast<float>(a));
  return sign | static_cast<std::uint16_t>((((u >> 23) - 127 + 15) << 10) | ((u >> 13) & 0x3ff));
}
double f16_value(std::uint16_t b) {
  const std::uint32_t exp_field = (b >> 10) & 0x1f, frac = b & 0x3ffu;
  if (exp_field == 0x1f) return value16(b, 11, -14, 15, 5);
  const std::uint32_t sign = static_cast<std::uint32_t>(b & 0x8000) << 16;
  if (exp_field == 0) {  // zero or subnormal: frac 2^-24
    const double m = frac * 0x1p-24;
    return sign ? -m : m;
  }
  return std::bit_cast<float>(sign | ((exp_field - 15 + 127) << 23) | (frac << 13));
}
std::uint16_t bf16_bits(double x) {
  const double r = round_to(DType::bf16, x);
  if (std::isnan(r)) return bits16(r, 8, -126, 127, 8);
  return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(static_cast<float>(r)) >> 16);  // exact: r is a bf16
}
double bf16_value(std::uint16_t b) {
  if ((b & 0x7f80) == 0x7f80 && (b & 0x7f)) return std::numeric_limits<double>::quiet_NaN();
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

}  // namespace attnv
