#pragma once
// Rotary position embedding (RoPE) in the NeoX half-split form (docs/semantics.md, "The
// multi-head layer and rotary embedding"): for a head vector x of even dimension D at absolute
// position p, element d < D/2 is paired with d + D/2 and the pair rotated by the angle
// a = p theta_d, theta_d = base^(-2d/D):
//   y_d       = x_d cos a - x_{d+D/2} sin a
//   y_{d+D/2} = x_{d+D/2} cos a + x_d sin a.
// Applied to Q and K before attention; with a KV cache each new token is rotated at its own
// absolute position cache_len[b] + i, so the cache holds rotated keys and prefill == decode.
//
// Numerics (the model reference/rotary.h derives its bound for): the angle in double
// (pow, then the product: within 16 double ulps of the exact a), cos and sin in double rounded
// once to the accumulator (f32; f64 for f64 storage), the two-term rotation in the accumulator
// (FMA or not), the result rounded once to the storage dtype.
#include <cstdint>

#include "problem/tensor.h"

namespace attnv::core {

// in and out: [B, H, T, D] views of one dtype, any non-negative strides; out may be the same
// view as in (in place). positions: int64 [B, T], row-major: the position of token t of batch b.
// InputError on an odd D, mismatched shapes or dtypes, a negative position or base <= 0.
void apply_rotary(const TensorRef& in, const TensorRef& out, const std::int64_t* positions, double base = 10000);

}  // namespace attnv::core
