#include "problem/ggml_blocks.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "problem/dtype.h"
#include "problem/error.h"

namespace attnv {

std::string_view ggml_block_name(GgmlBlock f) { return f == GgmlBlock::q8_0 ? "q8_0" : "q4_0"; }

int ggml_block_bytes(GgmlBlock f) { return f == GgmlBlock::q8_0 ? 2 + 32 : 2 + 16; }

double ggml_block_scale(std::span<const std::uint8_t> block) {
  return f16_value(static_cast<std::uint16_t>(block[0] | block[1] << 8));
}

double ggml_block_value(GgmlBlock f, std::span<const std::uint8_t> block, int j) {
  const double d = ggml_block_scale(block);
  if (f == GgmlBlock::q8_0) return d * static_cast<std::int8_t>(block[2 + j]);
  const std::uint8_t byte = block[2 + j % 16];
  const int nibble = j < 16 ? byte & 15 : byte >> 4;
  return d * (nibble - 8);
}

std::vector<std::uint8_t> ggml_quantize_block(GgmlBlock f, std::span<const double, kGgmlBlockElements> x) {
  // In float, as ggml computes (ggml-quants.c), from the values as floats.
  for (int j = 0; j < kGgmlBlockElements; ++j)
    if (!std::isfinite(static_cast<float>(x[static_cast<std::size_t>(j)])))
      throw InputError(std::string(ggml_block_name(f)) + " block: element " + std::to_string(j) + " = " +
                       std::to_string(x[static_cast<std::size_t>(j)]) + " is not finite as a float (ggml quantizes floats)");
  float amax = 0, max = 0;
  for (double v : x)
    if (const float a = std::fabs(static_cast<float>(v)); a > amax) {
      amax = a;
      max = static_cast<float>(v);
    }
  const float d = f == GgmlBlock::q8_0 ? amax / 127 : max / -8;
  const float id = d != 0 ? 1.0f / d : 0.0f;
  std::vector<std::uint8_t> out(static_cast<std::size_t>(ggml_block_bytes(f)), 0);
  const std::uint16_t bits = f16_bits(static_cast<double>(d));
  out[0] = static_cast<std::uint8_t>(bits & 255);
  out[1] = static_cast<std::uint8_t>(bits >> 8);
  for (int j = 0; j < kGgmlBlockElements; ++j) {
    const float t = static_cast<float>(x[static_cast<std::size_t>(j)]) * id;
    if (f == GgmlBlock::q8_0) {
      out[static_cast<std::size_t>(2 + j)] = static_cast<std::uint8_t>(static_cast<std::int8_t>(std::roundf(t)));
    } else {
      const int nibble = std::min(15, static_cast<int>(static_cast<std::int8_t>(t + 8.5f)));
      out[static_cast<std::size_t>(2 + j % 16)] |= static_cast<std::uint8_t>(j < 16 ? nibble : nibble << 4);
    }
  }
  return out;
}

// q8_0 rounds x / d to the nearest code: half a quantum. q4_0 takes trunc(x / d + 8.5), the
// nearest code too, except that the extreme of the other sign maps to x / d = 8, clamped to
// code 7 (nibble 15): one quantum. The float arithmetic adds a few units of 2^-24 of the 128
// quanta at most (the factor 1 + 2^-9 covers them); the f16 d moves each value by |code| times
// its rounding error, at most half an f16 ulp of d, for |code| <= 128 (q8_0) or 8 (q4_0).
double ggml_allowance(GgmlBlock f, double d) {
  const double a = std::fabs(d);
  const double quanta = f == GgmlBlock::q8_0 ? 0.5 : 1.0;
  const double codes = f == GgmlBlock::q8_0 ? 128 : 8;
  return a * quanta * (1 + std::ldexp(1.0, -9)) + codes * ulp(DType::f16, a) / 2;
}

}  // namespace attnv
