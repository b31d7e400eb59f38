#include "core/tensor_io.h"


#include "problem/dtype.h"

namespace attnv::core {
namespace {

template <class S>
const S* typed(const TensorRef& t, std::int64_t off) {
  return static_cast<const S*>(t.data) + off;
}
template <class S>
S* typed_out(const TensorRef& t, std::int64_t off) {
  return static_cast<S*>(t.data) + off;
}

}  // namespace

template <class T>
T load_scalar(const TensorRef& t, std::int64_t off) {
  switch (t.dtype) {
    case DType::f64: return static_cast<T>(*typed<double>(t, off));
    case DType::f32: return static_cast<T>(*typed<float>(t, off));
    case DType::f16: return static_cast<T>(f16_bits_to_f32(*typed<std::uint16_t>(t, off)));
    case DType::bf16: return static_cast<T>(bf16_bits_to_f32(*typed<std::uint16_t>(t, off)));
  }
  return T(0);
}

template <class T>
void load_row(const MicroKernels<T>& mk, const TensorRef& t, std::int64_t off, std::int64_t step,
              std::int64_t n, T* out) {
  if (step != 1) {
    for (std::int64_t i = 0; i < n; ++i) out[i] = load_scalar<T>(t, off + i * step);
    return;
  }
  switch (t.dtype) {
    case DType::f64: {
      const double* in = typed<double>(t, off);
      for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(in[i]);
      return;
    }
    case DType::f32: {
      const float* in = typed<float>(t, off);
      if constexpr (sizeof(T) == sizeof(float)) {
        std::memcpy(out, in, static_cast<std::size_t>(n) * sizeof(float));
      } else {
        for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(in[i]);
      }
      return;
    }
    case DType::f16: mk.from_f16(typed<std::uint16_t>(t, off), n, out); return;
    case DType::bf16: mk.from_bf16(typed<std::uint16_t>(t, off), n, out); return;
  }
}

template <class T>
void store_row(const MicroKernels<T>& mk, const TensorRef& t, std::int64_t off, std::int64_t step,
               std::int64_t n, const T* in) {
  if (step == 1 && (t.dtype == DType::f16 || t.dtype == DType::bf16)) {
    std::uint16_t* out = typed_out<std::uint16_t>(t, off);
    (t.dtype == DType::f16 ? mk.to_f16 : mk.to_bf16)(in, n, out);
    return;
  }
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t at = off + i * step;
    switch (t.dtype) {
      case DType::f64: *typed_out<double>(t, at) = static_cast<double>(in[i]); break;
      // f32 outputs of an f64 accumulator round once from the double (static_cast rounds to nearest).
      case DType::f32: *typed_out<float>(t, at) = static_cast<float>(in[i]); break;
      case DType::f16: mk.to_f16(in + i, 1, typed_out<std::uint16_t>(t, at)); break;
      case DType::bf16: mk.to_bf16(in + i, 1, typed_out<std::uint16_t>(t, at)); break;
    }
  }
}

template float load_scalar<float>(const TensorRef&, std::int64_t);
template double load_scalar<double>(const TensorRef&, std::int64_t);
template void load_row<float>(const MicroKernels<float>&, const TensorRef&, std::int64_t,
                              std::int64_t, std::int64_t, float*);
template void load_row<double>(const MicroKernels<double>&, const TensorRef&, std::int64_t,
                               std::int64_t, std::int64_t, double*);
template void store_row<float>(const MicroKernels<float>&, const TensorRef&, std::int64_t,
                               std::int64_t, std::int64_t, const float*);
template void store_row<double>(const MicroKernels<double>&, const TensorRef&, std::int64_t,
                                std::int64_t, std::int64_t, const double*);

}  // namespace attnv::core
