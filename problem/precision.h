#pragma once
// A kernel's declared precision model: what the error bound (reference/bound) is derived for.
#include <cstdint>
#include <string>

#include "problem/dtype.h"

namespace attnv {

struct PrecisionModel {
  DType storage = DType::f32;  // dtype the inputs are stored in
  DType accum = DType::f32;    // dtype of dot products, softmax sums and the P.V accumulator
  DType p_dtype = DType::f32;  // dtype P is rounded to before the P.V product (accum: no rounding)
  DType out = DType::f32;      // dtype the outputs (O, LSE, gradients) are rounded to
  std::int64_t block = 0;      // online-softmax key block; 0 = single pass over all keys
  double exp_ulps = 2;         // accuracy of the kernel's exp, in ulps of accum

  // The usual model for a storage dtype: f64 accumulates in f64, everything else in f32;
  // P stays in the accumulator; outputs are rounded to the storage dtype.
  static PrecisionModel natural(DType storage, std::int64_t block = 0);
  bool operator==(const PrecisionModel&) const = default;
};

std::string describe(const PrecisionModel& m);

}  // namespace attnv
