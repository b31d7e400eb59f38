// Portable micro-kernels: plain loops in T (f32 or f64), std::exp (glibc: < 1 ulp).
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "core/microkernels.h"
#include "problem/dtype.h"
#include "problem/error.h"

namespace attnv::core {

// Exact from the double: attnv's f16 rounding works on the exact value, so no double rounding.
std::uint16_t f32_to_f16_bits(float x) { return f16_bits(static_cast<double>(x)); }
float f16_bits_to_f32(std::uint16_t h) { return static_cast<float>(f16_value(h)); }

std::uint16_t f32_to_bf16_bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even (overflow carries into inf)
  return static_cast<std::uint16_t>(u >> 16);
}

namespace {

template <class T>
void scores(const T* q, std::int64_t ldq, int rows, const T* k, std::int64_t ldk, int n,
            std::int64_t dk_pad, T scale, T* s, std::int64_t lds) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < n; ++c) {
      T acc = 0;
      for (std::int64_t d = 0; d < dk_pad; ++d) acc += q[r * ldq + d] * k[d * ldk + c];
      s[r * lds + c] = acc * scale;
    }
}

template <class T>
T row_max(const T* x, int n) {
  T m = -std::numeric_limits<T>::infinity();
  for (int c = 0; c < n; ++c) m = x[c] > m ? x[c] : m;
  return m;
}

template <class T>
T exp_sum(T* x, int n, T m) {
  T sum = 0;
  for (int c = 0; c < n; ++c) {
    x[c] = std::exp(x[c] - m);
    sum += x[c];
  }
  return sum;
}

template <class T>
void exp_inplace(T* x, int n) {
  for (int c = 0; c < n; ++c) x[c] = std::exp(x[c]);
}

template <class T>
void pv(const T* p, std::int64_t ldp, int rows, const T* alpha, const T* v, std::int64_t ldv,
        int n, std::int64_t dv_pad, T* o, std::int64_t ldo) {
  for (int r = 0; r < rows; ++r) {
    T* orow = o + r * ldo;
    for (std::int64_t d = 0; d < dv_pad; ++d) orow[d] *= alpha[r];
    for (int c = 0; c < n; ++c) {
      const T w = p[r * ldp + c];
      for (std::int64_t d = 0; d < dv_pad; ++d) orow[d] += w * v[panel_index(c, d, ldv)];
    }
  }
}

template <class T>
void from_f16(const std::uint16_t* in, std::int64_t n, T* out) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(f16_bits_to_f32(in[i]));
}
template <class T>
void from_bf16(const std::uint16_t* in, std::int64_t n, T* out) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(bf16_bits_to_f32(in[i]));
}
// The 16-bit outputs only occur with f32 accumulation; for f64 they round from the exact double.
template <class T>
void to_f16(const T* in, std::int64_t n, std::uint16_t* out) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = f16_bits(static_cast<double>(in[i]));
}
template <class T>
void to_bf16(const T* in, std::int64_t n, std::uint16_t* out) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = bf16_bits(static_cast<double>(in[i]));
}

template <class T>
MicroKernels<T> make(const char* name) {
  return {name,   &scores<T>,    &row_max<T>, &exp_sum<T>, &exp_inplace<T>, &pv<T>,
          false,  &from_f16<T>,  &from_bf16<T>, &to_f16<T>,  &to_bf16<T>};
}

}  // namespace

const MicroKernels<float>& portable_kernels_f32() {
  static const MicroKernels<float> k = make<float>("portable-f32");
  return k;
}
const MicroKernels<double>& portable_kernels_f64() {
  static const MicroKernels<double> k = make<double>("portable-f64");
  return k;
}

const MicroKernels<float>& kernels_f32(Isa isa) {
  // resolve_isa has checked the CPU, so a null table here is a path this build lacks, which
  // missing_features reports as such: never reached on x86-64.
  const Isa path = resolve_isa(isa);
  const MicroKernels<float>* k = path == Isa::avx512_bf16 ? avx512_bf16_kernels_f32()
                                 : path == Isa::avx512    ? avx512_kernels_f32()
                                 : path == Isa::avx2 ? avx2_kernels_f32()
                                                     : &portable_kernels_f32();
  if (k == nullptr) throw InputError(std::string("core: the ") + isa_name(path) + " path is not compiled in this build");
  return *k;
}

}  // namespace attnv::core
