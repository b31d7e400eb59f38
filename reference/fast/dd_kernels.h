#pragma once
// The two hot loops of the fast reference, with an AVX2+FMA path chosen at run time and a
// portable path that computes bit for bit the same thing (same operations, same order: the dot
// product runs 8 independent lanes then a fixed reduction, the axpy is independent per element).
#include <cstdint>

#include "reference/fast/dd.h"

namespace attnv::reference::dd {

struct DotResult {
  DD value;         // sum_k a_k b_k, Dot2 (Ogita-Rump-Oishi) without the final rounding
  double abs_sum;   // sum_k |a_k b_k| in plain double (relative error <= n u)
};

// Error of DotResult::value: the products and partial sums are split exactly by two_prod and
// two_sum; only the plain-double sum of the 2n + 6 correction terms rounds, and those terms sum
// in magnitude to <= gamma_n sum |a b|, so the error is <= gamma_(2n+6) gamma_n sum |a b|
// (ORO 2005, Prop. 4.5, with the lanes' reduction counted as 3 more two_sums and 3 more adds).
// Returned with a factor 2 of margin; used as dot_err_factor(n) * abs_sum * 1.01 (abs_sum's own
// rounding).
inline double dot_err_factor(std::int64_t n) {
  const double m = static_cast<double>(2 * n + 16);
  return 2.0 * m * m * kU2;
}

// acc[d] += w * x[d] (dd product w * x[d] with relative error <= 2 u^2, then the accurate dd
// addition, <= 3 u^2 of the partial sum), abs[d] += |w.hi| |x[d]| in double, live[d] =
// max(live[d], |x[d]|), and, when err is not null, err[d] += w_err |x[d]|. A term with w = 0 and
// w_err = 0 is exactly zero and skipped. live[d] > 0 says that some term may be nonzero even when
// every product underflowed (abs and err then read 0): the result is not an exact zero.
struct Kernels {
  DotResult (*dot)(const double* a, const double* b, std::int64_t n);
  void (*axpy)(DD w, double w_err, const double* x, std::int64_t n, double* acc_hi,
               double* acc_lo, double* abs, double* live, double* err);
};

enum class Isa { portable, avx2 };

Kernels portable_kernels();
Kernels avx2_kernels();          // only call when cpu_has_avx2_fma()
bool cpu_has_avx2_fma();

// The kernels in use: AVX2 when the CPU has it, unless force_isa says otherwise (tests).
const Kernels& active_kernels();
Isa active_isa();
void force_isa(Isa isa);  // throws std::runtime_error when asking for AVX2 on a CPU without it

// Relative error of a sum of n same-sign-or-mixed terms accumulated by axpy: each step is a
// product (2 u^2 of the term) and an accurate addition (3 u^2 of the partial sum, bounded by the
// sum of |terms|): <= (3 n + 2) u^2 sum |terms|, doubled for margin.
inline double acc_err_factor(std::int64_t n) {
  return 2.0 * (3.0 * static_cast<double>(n) + 4.0) * kU2;
}

}  // namespace attnv::reference::dd
