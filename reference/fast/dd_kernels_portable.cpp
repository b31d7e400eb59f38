// Portable loops: the lane structure of the AVX2 path written in scalar code.
#include "reference/fast/dd_kernels.h"
#include "reference/fast/dd_kernels_scalar.h"

namespace attnv::reference::dd {
namespace {

DotResult dot_portable(const double* a, const double* b, std::int64_t n) {
  constexpr int L = detail::kDotLanes;
  detail::DotLane lanes[L];
  const std::int64_t main = n - n % L;
  for (std::int64_t i = 0; i < main; i += L)
    for (int l = 0; l < L; ++l) detail::dot_step(lanes[l], a[i + l], b[i + l]);
  detail::DotLane r = detail::reduce(lanes);
  for (std::int64_t i = main; i < n; ++i) detail::dot_step(r, a[i], b[i]);
  return {detail::local_two_sum(r.p, r.s), r.a};
}

void axpy_portable(DD w, double w_err, const double* x, std::int64_t n, double* acc_hi,
                   double* acc_lo, double* abs, double* live, double* err) {
  if (w.hi == 0 && w_err == 0) return;  // an exactly zero term changes nothing
  for (std::int64_t d = 0; d < n; ++d)
    detail::axpy_step(w, w_err, x[d], acc_hi[d], acc_lo[d], abs[d], live[d], err ? err + d : nullptr);
}

}  // namespace

Kernels portable_kernels() { return {&dot_portable, &axpy_portable}; }

}  // namespace attnv::reference::dd
