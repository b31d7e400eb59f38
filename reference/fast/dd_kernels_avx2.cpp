// AVX2+FMA loops, compiled with -mavx2 -mfma (this file only) and called only after the CPU was
// checked. Each vector operation is the lane-wise twin of the scalar step in dd_kernels_scalar.h.
#include <immintrin.h>

#include "reference/fast/dd_kernels.h"
#include "reference/fast/dd_kernels_scalar.h"

namespace attnv::reference::dd {
namespace {

struct V2 {
  __m256d hi, lo;
};

inline __m256d vabs(__m256d x) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), x); }

inline V2 vtwo_sum(__m256d a, __m256d b) {
  const __m256d s = _mm256_add_pd(a, b);
  const __m256d bb = _mm256_sub_pd(s, a);
  const __m256d e =
      _mm256_add_pd(_mm256_sub_pd(a, _mm256_sub_pd(s, bb)), _mm256_sub_pd(b, bb));
  return {s, e};
}
inline V2 vfast_two_sum(__m256d a, __m256d b) {
  const __m256d s = _mm256_add_pd(a, b);
  const __m256d e = _mm256_sub_pd(b, _mm256_sub_pd(s, a));
  return {s, e};
}
inline V2 vtwo_prod(__m256d a, __m256d b) {
  const __m256d p = _mm256_mul_pd(a, b);
  const __m256d e = _mm256_fmsub_pd(a, b, p);  // fma(a, b, -p)
  return {p, e};
}
// Accurate dd addition, as dd::add.
inline V2 vadd(V2 x, V2 y) {
  const V2 s = vtwo_sum(x.hi, y.hi);
  const V2 t = vtwo_sum(x.lo, y.lo);
  const __m256d c = _mm256_add_pd(s.lo, t.hi);
  const V2 v = vfast_two_sum(s.hi, c);
  const __m256d w = _mm256_add_pd(t.lo, v.lo);
  return vfast_two_sum(v.hi, w);
}

// One Dot2 step on 4 lanes, the vector twin of detail::dot_step.
struct VLane {
  __m256d p = _mm256_setzero_pd(), s = _mm256_setzero_pd(), a = _mm256_setzero_pd();
};
inline void vdot_step(VLane& l, __m256d x, __m256d y) {
  const V2 h = vtwo_prod(x, y);
  const V2 t = vtwo_sum(l.p, h.hi);
  l.p = t.hi;
  l.s = _mm256_add_pd(l.s, _mm256_add_pd(t.lo, h.lo));
  l.a = _mm256_fmadd_pd(vabs(x), vabs(y), l.a);
}

DotResult dot_avx2(const double* a, const double* b, std::int64_t n) {
  static_assert(detail::kDotLanes == 8, "two vectors of 4 lanes");
  VLane v0, v1;  // lanes 0-3 and 4-7
  const std::int64_t main = n - n % 8;
  for (std::int64_t i = 0; i < main; i += 8) {
    vdot_step(v0, _mm256_loadu_pd(a + i), _mm256_loadu_pd(b + i));
    vdot_step(v1, _mm256_loadu_pd(a + i + 4), _mm256_loadu_pd(b + i + 4));
  }
  alignas(32) double ps[8], ss[8], as[8];
  _mm256_store_pd(ps, v0.p);
  _mm256_store_pd(ps + 4, v1.p);
  _mm256_store_pd(ss, v0.s);
  _mm256_store_pd(ss + 4, v1.s);
  _mm256_store_pd(as, v0.a);
  _mm256_store_pd(as + 4, v1.a);
  detail::DotLane lanes[8];
  for (int l = 0; l < 8; ++l) lanes[l] = {ps[l], ss[l], as[l]};
  detail::DotLane r = detail::reduce(lanes);
  for (std::int64_t i = main; i < n; ++i) detail::dot_step(r, a[i], b[i]);
  return {detail::local_two_sum(r.p, r.s), r.a};
}

void axpy_avx2(DD w, double w_err, const double* x, std::int64_t n, double* acc_hi,
               double* acc_lo, double* abs, double* live, double* err) {
  if (w.hi == 0 && w_err == 0) return;  // an exactly zero term changes nothing
  const __m256d wh = _mm256_set1_pd(w.hi), wl = _mm256_set1_pd(w.lo);
  const __m256d wabs = _mm256_set1_pd(std::fabs(w.hi)), we = _mm256_set1_pd(w_err);
  const std::int64_t main = n - n % 4;
  for (std::int64_t d = 0; d < main; d += 4) {
    const __m256d xv = _mm256_loadu_pd(x + d);
    const V2 c = vtwo_prod(wh, xv);
    const __m256d cl3 = _mm256_fmadd_pd(wl, xv, c.lo);
    const V2 prod = vfast_two_sum(c.hi, cl3);
    const V2 sum = vadd(V2{_mm256_loadu_pd(acc_hi + d), _mm256_loadu_pd(acc_lo + d)}, prod);
    _mm256_storeu_pd(acc_hi + d, sum.hi);
    _mm256_storeu_pd(acc_lo + d, sum.lo);
    const __m256d xa = vabs(xv);
    _mm256_storeu_pd(abs + d, _mm256_fmadd_pd(wabs, xa, _mm256_loadu_pd(abs + d)));
    _mm256_storeu_pd(live + d, _mm256_max_pd(xa, _mm256_loadu_pd(live + d)));
    if (err) _mm256_storeu_pd(err + d, _mm256_fmadd_pd(we, xa, _mm256_loadu_pd(err + d)));
  }
  for (std::int64_t d = main; d < n; ++d)
    detail::axpy_step(w, w_err, x[d], acc_hi[d], acc_lo[d], abs[d], live[d], err ? err + d : nullptr);
}

}  // namespace

Kernels avx2_kernels() { return {&dot_avx2, &axpy_avx2}; }

}  // namespace attnv::reference::dd
