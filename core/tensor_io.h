#pragma once
// Moving rows between strided storage (any dtype, any non-negative strides) and the f32/f64
// working buffers of the tile loop. Loads are exact (every storage value is representable in
// the accumulator); stores round to nearest even once.
#include <cstdint>
#include <cstring>

#include "core/microkernels.h"
#include "problem/tensor.h"

namespace attnv::core {

// Reads n elements starting at element offset `off`, `step` elements apart, into out[0..n).
template <class T>
void load_row(const MicroKernels<T>& mk, const TensorRef& t, std::int64_t off, std::int64_t step,
              std::int64_t n, T* out);
// Writes in[0..n) rounded to t.dtype at element offset `off`, `step` elements apart.
template <class T>
void store_row(const MicroKernels<T>& mk, const TensorRef& t, std::int64_t off, std::int64_t step,
               std::int64_t n, const T* in);
// One element as T (bias values, outside the hot loops).
template <class T>
T load_scalar(const TensorRef& t, std::int64_t off);

}  // namespace attnv::core
