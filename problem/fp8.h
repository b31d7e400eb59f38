#pragma once
// The four FP8 formats of docs/quantized.md: each byte code's exact value, and rounding a value
// to a code. The first brick of issue 41 (quantized attention): nothing selects an FP8 format
// yet; the reference, the generators and the ABI will read their values from here.
//
// A code is s eeee mmm (E4M3) or s eeeee mm (E5M2). Where finite, its value is
//   e > 0: (-1)^s 2^(e - bias) (1 + m / 2^M),   e = 0: (-1)^s 2^(1 - bias) (m / 2^M),
// exact in a double (at most 4 significant bits, exponents within [-17, 15]). What is not finite
// differs by format (fp8_spec). Checked code by code against a table that tests/fp8_table.py
// computes from the definitions alone, with Python's exact fractions.
#include <cstdint>
#include <optional>
#include <string_view>

namespace attnv {

enum class Fp8Format : std::uint8_t { e4m3fn, e5m2, e4m3fnuz, e5m2fnuz };
inline constexpr Fp8Format kFp8Formats[] = {Fp8Format::e4m3fn, Fp8Format::e5m2, Fp8Format::e4m3fnuz,
                                            Fp8Format::e5m2fnuz};

struct Fp8Spec {
  int exponent_bits = 0;
  int mantissa_bits = 0;  // M, without the implicit bit
  int bias = 0;
  // e5m2 (IEEE-like): e = 2^E - 1 holds +-inf (m = 0) and NaNs. e4m3fn: only e = 15, m = 7 is NaN
  // (no infinity). fnuz: 0x80 (which would be -0) is the one NaN; no infinity, no -0.
  bool ieee_specials = false;
  bool fnuz = false;
  double largest = 0;  // the largest finite value: 448, 57344, 240, 57344
};

std::string_view fp8_format_name(Fp8Format f);  // "e4m3fn", "e5m2", "e4m3fnuz", "e5m2fnuz"
std::optional<Fp8Format> parse_fp8_format(std::string_view name);
Fp8Spec fp8_spec(Fp8Format f);

// The exact value of `code`: a NaN for a NaN code, +-inf for e5m2's infinities, -0.0 for the
// IEEE-like formats' 0x80.
double fp8_value(Fp8Format f, std::uint8_t code);
bool fp8_is_nan(Fp8Format f, std::uint8_t code);

// What rounding does past the largest finite value (docs/quantized.md: a kernel declares which
// its quantizer does). Both round to nearest first: a value below largest + half its spacing
// is `largest`. Beyond it, `saturate` gives +-largest; `nonfinite` gives +-inf where the format
// has an infinity (e5m2) and NaN where it has none.
enum class Fp8Overflow : std::uint8_t { saturate, nonfinite };

// The code nearest x, ties to the even code (mantissa's last bit 0), as the OCP FP8 and IEEE
// rules round. Zero and results that round to zero keep x's sign where the format has -0; fnuz
// formats give 0x00. A NaN x gives the format's NaN code (0x7F for e4m3fn, 0x7E for e5m2, 0x80
// for fnuz); +-inf is an overflow.
std::uint8_t fp8_code(Fp8Format f, double x, Fp8Overflow overflow);

}  // namespace attnv
