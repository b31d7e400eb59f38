#include "problem/fp8.h"

#include <cmath>

namespace attnv {
namespace {

std::uint8_t nan_code(Fp8Format f) {
  switch (f) {
    case Fp8Format::e4m3fn: return 0x7F;
    case Fp8Format::e5m2: return 0x7E;
    default: return 0x80;
  }
}

// The largest finite code's magnitude bits (sign clear).
std::uint8_t largest_code(Fp8Format f) {
  switch (f) {
    case Fp8Format::e4m3fn: return 0x7E;  // e = 15, m = 6: m = 7 is the NaN
    case Fp8Format::e5m2: return 0x7B;    // e = 30, m = 3: e = 31 is inf and NaN
    default: return 0x7F;                 // fnuz: every e, every m
  }
}

// Everything of fp8_spec but `largest`, which fp8_value computes from it.
Fp8Spec layout(Fp8Format f) {
  const bool e4m3 = f == Fp8Format::e4m3fn || f == Fp8Format::e4m3fnuz;
  Fp8Spec s;
  s.fnuz = f == Fp8Format::e4m3fnuz || f == Fp8Format::e5m2fnuz;
  s.exponent_bits = e4m3 ? 4 : 5;
  s.mantissa_bits = e4m3 ? 3 : 2;
  s.bias = (e4m3 ? 7 : 15) + (s.fnuz ? 1 : 0);
  s.ieee_specials = f == Fp8Format::e5m2;
  return s;
}

}  // namespace

std::string_view fp8_format_name(Fp8Format f) {
  switch (f) {
    case Fp8Format::e4m3fn: return "e4m3fn";
    case Fp8Format::e5m2: return "e5m2";
    case Fp8Format::e4m3fnuz: return "e4m3fnuz";
    case Fp8Format::e5m2fnuz: return "e5m2fnuz";
  }
  return "?";
}

std::optional<Fp8Format> parse_fp8_format(std::string_view name) {
  for (Fp8Format f : kFp8Formats)
    if (name == fp8_format_name(f)) return f;
  return std::nullopt;
}

Fp8Spec fp8_spec(Fp8Format f) {
  Fp8Spec s = layout(f);
  s.largest = fp8_value(f, largest_code(f));
  return s;
}

bool fp8_is_nan(Fp8Format f, std::uint8_t code) {
  switch (f) {
    case Fp8Format::e4m3fn: return (code & 0x7F) == 0x7F;
    case Fp8Format::e5m2: return (code & 0x7C) == 0x7C && (code & 0x03) != 0;
    default: return code == 0x80;
  }
}

double fp8_value(Fp8Format f, std::uint8_t code) {
  if (fp8_is_nan(f, code)) return std::nan("");
  const Fp8Spec s = layout(f);
  const int M = s.mantissa_bits, bias = s.bias;
  const int e = (code & 0x7F) >> M;
  const int m = code & ((1 << M) - 1);
  const double sign = (code & 0x80) ? -1.0 : 1.0;
  if (s.ieee_specials && e == 31) return sign * HUGE_VAL;  // m = 0: NaNs returned above
  if (e == 0) return sign * std::ldexp(m, 1 - bias - M);
  return sign * std::ldexp((1 << M) + m, e - bias - M);
}

std::uint8_t fp8_code(Fp8Format f, double x, Fp8Overflow overflow) {
  if (std::isnan(x)) return nan_code(f);
  const Fp8Spec s = fp8_spec(f);
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const double a = std::fabs(x);
  const int M = s.mantissa_bits, min_exp = 1 - s.bias;  // exponent of the smallest normal
  // The spacing of the values around a: 2^(E - M) in binade E, and the subnormals' below
  // 2^min_exp. a / spacing is exact (a power of two), its rounding to an integer n is the whole
  // rounding: n spacing is the nearest value of an unbounded-exponent format, ties to even n.
  int E = a == 0 || std::isinf(a) ? min_exp : std::ilogb(a);
  if (E < min_exp) E = min_exp;
  double n = 0;
  if (!std::isinf(a)) {
    const double t = std::ldexp(a, M - E);
    n = std::floor(t);
    const double frac = t - n;
    if (frac > 0.5 || (frac == 0.5 && std::fmod(n, 2.0) != 0)) n += 1;
  }
  const double rounded = std::isinf(a) ? HUGE_VAL : std::ldexp(n, E - M);
  if (rounded > s.largest) {
    if (overflow == Fp8Overflow::saturate) return sign | largest_code(f);
    return s.ieee_specials ? static_cast<std::uint8_t>(sign | 0x7C) : nan_code(f);
  }
  if (rounded == 0) return s.fnuz ? 0x00 : sign;
  // n = 2^(M+1) rounded up into the next binade: its exponent code takes the carry.
  const int e = rounded < std::ldexp(1.0, min_exp) ? 0 : std::ilogb(rounded) + s.bias;
  const int m = e == 0 ? static_cast<int>(std::ldexp(rounded, M - min_exp))
                       : static_cast<int>(std::ldexp(rounded, M - (e - s.bias))) - (1 << M);
  return static_cast<std::uint8_t>(sign | (e << M) | m);
}

}  // namespace attnv
