#include <cmath>
#include <string>

#include "core/row_kernels.h"
#include "problem/error.h"

namespace attnv::core {
namespace {

template <class T>
void dots(const T* q, std::int64_t ldq, int rows, const T* k, std::int64_t ldk, int n, std::int64_t dk_pad, T scale,
          T* s, std::int64_t lds) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < n; ++c) {
      T acc = 0;
      for (std::int64_t d = 0; d < dk_pad; ++d) acc = std::fma(q[r * ldq + d], k[c * ldk + d], acc);
      s[r * lds + c] = acc * scale;
    }
}

template <class T>
void axpy(const T* w, std::int64_t ldw, int rows, const T* v, std::int64_t dv_pad, T* o, std::int64_t ldo) {
  for (int r = 0; r < rows; ++r) {
    const T x = w[r * ldw];
    if (x == 0) continue;
    for (std::int64_t d = 0; d < dv_pad; ++d) o[r * ldo + d] = std::fma(x, v[d], o[r * ldo + d]);
  }
}

template <class T>
void pv_rows(const T* p, std::int64_t ldp, int rows, const T* v, std::int64_t ldv, int n, std::int64_t dv_pad, T* o,
             std::int64_t ldo) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < n; ++c)
      for (std::int64_t d = 0; d < dv_pad; ++d) o[r * ldo + d] = std::fma(p[r * ldp + c], v[c * ldv + d], o[r * ldo + d]);
}

}  // namespace

const RowKernels<float>& row_kernels_f32(Isa isa) {
  static const RowKernels<float> portable{"portable-rows-f32", &dots<float>, &axpy<float>, &pv_rows<float>};
  const Isa path = resolve_isa(isa);
  // avx512_bf16 differs from avx512 in the forward's Q.K^T only (isa.h): the same row kernels.
  const RowKernels<float>* k = path == Isa::avx512 || path == Isa::avx512_bf16 ? avx512_row_kernels_f32()
                               : path == Isa::avx2 ? avx2_row_kernels_f32()
                                                   : &portable;
  if (k == nullptr) throw InputError(std::string("core: the ") + isa_name(path) + " path is not compiled in this build");
  return *k;
}

const RowKernels<double>& row_kernels_f64() {
  static const RowKernels<double> k{"portable-rows-f64", &dots<double>, &axpy<double>, &pv_rows<double>};
  return k;
}

}  // namespace attnv::core
