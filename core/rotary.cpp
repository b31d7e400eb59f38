#include "core/rotary.h"

#include <cmath>
#include <string>
#include <vector>

#include "core/forward_params.h"
#include "core/microkernels.h"
#include "core/tensor_io.h"
#include "problem/error.h"

namespace attnv::core {
namespace {

void validate(const TensorRef& in, const TensorRef& out, const std::int64_t* positions, double base) {
  const std::string w = "apply_rotary: ";
  if (!in.present() || !out.present() || positions == nullptr) throw InputError(w + "in, out and positions are required");
  if (in.rank != 4 || out.rank != 4) throw InputError(w + "in and out must be rank-4 [B, H, T, D] views");
  for (int d = 0; d < 4; ++d) {
    if (in.shape[d] != out.shape[d])
      throw InputError(w + "out dimension " + std::to_string(d) + " is " + std::to_string(out.shape[d]) +
                       ", in has " + std::to_string(in.shape[d]));
    if (in.shape[d] < 1) throw InputError(w + "in dimension " + std::to_string(d) + " must be >= 1");
    if (in.stride[d] < 0 || out.stride[d] < 0) throw InputError(w + "negative stride");
  }
  if (in.shape[3] % 2 != 0) throw InputError(w + "the head dimension D = " + std::to_string(in.shape[3]) + " must be even");
  if (in.dtype != out.dtype) throw InputError(w + "in and out must have the same dtype");
  if (!(std::isfinite(base) && base > 0)) throw InputError(w + "base must be finite and > 0");
  for (std::int64_t i = 0; i < in.shape[0] * in.shape[2]; ++i)
    if (positions[i] < 0)
      throw InputError(w + "positions[b=" + std::to_string(i / in.shape[2]) + ", t=" + std::to_string(i % in.shape[2]) +
                       "] = " + std::to_string(positions[i]) + " is negative");
}

template <class T>
void rotate(const MicroKernels<T>& mk, const TensorRef& in, const TensorRef& out, const std::int64_t* positions,
            double base) {
  const std::int64_t B = in.shape[0], H = in.shape[1], Tn = in.shape[2], D = in.shape[3], half = D / 2;
  std::vector<double> inv_freq(static_cast<std::size_t>(half));
  for (std::int64_t d = 0; d < half; ++d)
    inv_freq[static_cast<std::size_t>(d)] = std::pow(base, -2.0 * static_cast<double>(d) / static_cast<double>(D));
  std::vector<T> c(static_cast<std::size_t>(half)), s(static_cast<std::size_t>(half));
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t < Tn; ++t) {
      const double pos = static_cast<double>(positions[b * Tn + t]);
      for (std::int64_t d = 0; d < half; ++d) {
        const double a = pos * inv_freq[static_cast<std::size_t>(d)];
        c[static_cast<std::size_t>(d)] = static_cast<T>(std::cos(a));
        s[static_cast<std::size_t>(d)] = static_cast<T>(std::sin(a));
      }
      for (std::int64_t h = 0; h < H; ++h) {
        const std::int64_t ib = offset_of(in, b, h, t), ob = offset_of(out, b, h, t);
        for (std::int64_t d = 0; d < half; ++d) {
          // Both inputs are read before either output is written: in place is safe.
          const T x0 = load_scalar<T>(in, ib + d * in.stride[3]);
          const T x1 = load_scalar<T>(in, ib + (d + half) * in.stride[3]);
          const T cd = c[static_cast<std::size_t>(d)], sd = s[static_cast<std::size_t>(d)];
          const T y0 = x0 * cd - x1 * sd;
          const T y1 = x1 * cd + x0 * sd;
          store_row(mk, out, ob + d * out.stride[3], 1, 1, &y0);
          store_row(mk, out, ob + (d + half) * out.stride[3], 1, 1, &y1);
        }
      }
    }
}

}  // namespace

void apply_rotary(const TensorRef& in, const TensorRef& out, const std::int64_t* positions, double base) {
  validate(in, out, positions, base);
  if (in.dtype == DType::f64)
    rotate<double>(portable_kernels_f64(), in, out, positions, base);
  else
    rotate<float>(kernels_f32(Isa::best), in, out, positions, base);
}

}  // namespace attnv::core
