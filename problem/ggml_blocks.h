#pragma once
// ggml's block formats of a quantized KV cache (docs/quantized.md; llama.cpp's ggml-common.h):
// 32 elements along D per block, first the block's scale d as an f16 (little-endian), then the
// codes. q8_0: 32 int8 codes, value d * code (34 bytes). q4_0: 16 bytes, element j < 16 in the
// low nibble of byte j and element j + 16 in its high nibble, value d * (nibble - 8) (18 bytes).
// Every value is exact in a double (an f16 times an integer of magnitude <= 128). A brick of
// issue 41: no claim selects these formats yet.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace attnv {

enum class GgmlBlock : std::uint8_t { q8_0, q4_0 };
inline constexpr int kGgmlBlockElements = 32;

std::string_view ggml_block_name(GgmlBlock f);  // "q8_0", "q4_0"
int ggml_block_bytes(GgmlBlock f);              // 34, 18

// The block's scale d (its first two bytes, an f16, little-endian) and element j's exact value.
// `block` holds ggml_block_bytes(f) bytes.
double ggml_block_scale(std::span<const std::uint8_t> block);
double ggml_block_value(GgmlBlock f, std::span<const std::uint8_t> block, int j);

// x[0..31] as ggml's reference quantizers write it (quantize_row_q8_0_ref, _q4_0_ref), in float
// as they compute: q8_0 d = amax / 127, codes roundf(x / d); q4_0 d = (the element of largest
// magnitude, signed) / -8, codes min(15, trunc(x / d + 8.5)). Both round with the float d and
// store it as an f16, so a value may sit past half a quantum of the stored scale
// (ggml_allowance says how far). An element not finite as a float is refused (InputError).
std::vector<std::uint8_t> ggml_quantize_block(GgmlBlock f, std::span<const double, kGgmlBlockElements> x);

// How far a value quantized as ggml does may lie from d * code, d the stored scale: half a
// quantum (q8_0) or one (q4_0, whose clamp at nibble 15 costs a whole one), widened by 2^-9 for
// the float arithmetic, plus |code| (<= 128, or 8) times half an f16 ulp of d, what storing d
// as an f16 moved each value (derivation in ggml_blocks.cpp).
double ggml_allowance(GgmlBlock f, double d);

}  // namespace attnv
