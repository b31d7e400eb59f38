#pragma once
// A vector of double-double accumulators fed by the axpy kernel, with the two double sums its
// error radius needs: abs = sum |w| |x| and err = sum w_err |x| (the propagated errors of the
// weights w), and live = max |x| over the terms whose weight may be nonzero (a nonzero term
// whose product underflowed leaves abs = err = 0 but live > 0).
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "reference/fast/dd.h"
#include "reference/fast/fast.h"
#include "reference/fast/dd_kernels.h"
#include "reference/fast/resolve.h"
#include "reference/fast/row_softmax.h"

namespace attnv::reference::fast_detail {

struct Accumulators {
  std::vector<double> hi, lo, abs, live, err;

  void reset(std::size_t n) {
    hi.assign(n, 0.0);
    lo.assign(n, 0.0);
    abs.assign(n, 0.0);
    live.assign(n, 0.0);
    err.assign(n, 0.0);
  }
  double* hi_at(std::size_t off) { return hi.data() + off; }
  double* lo_at(std::size_t off) { return lo.data() + off; }
  double* abs_at(std::size_t off) { return abs.data() + off; }
  double* live_at(std::size_t off) { return live.data() + off; }
  double* err_at(std::size_t off) { return err.data() + off; }
  // The sum itself stayed in the double range. err may still be inf (a weight whose error the
  // bound cannot size): that is an undecided element with an infinite radius, not an overflow.
  bool finite(std::size_t e) const { return std::isfinite(abs[e]) && std::isfinite(hi[e]); }
};

struct Finished {
  double value;
  bool resolved;
  double radius;
};

// The element e of `acc`, after n_terms axpy steps, times `factor` (a double; 1 for none).
// Radius: factor * (err + acc_err_factor(n) * abs), each factor 1.01 for the rounding of the
// double sums abs and err (relative error <= n u with n < 2^40) and for the use of |w.hi| in
// place of |w|; + 2 u^2 |value| for the product by factor; + the underflow allowance when any
// term may be nonzero. Only a sum whose every term is exactly zero is exactly zero: a test on abs
// or err alone would call a sum of underflowed products (three weights 1/3 times 2^-1074) an
// exact 0 when it is 2^-1074.
inline Finished finish(const Accumulators& acc, std::size_t e, std::int64_t n_terms,
                       double factor) {
  dd::DD v{acc.hi[e], acc.lo[e]};
  if (factor != 1.0) v = dd::mul_d(v, factor);
  const double f = std::fabs(factor);
  double radius = f * 1.01 * (acc.err[e] + dd::acc_err_factor(n_terms) * acc.abs[e] * 1.01);
  if (factor != 1.0) radius += 2 * dd::kU2 * std::fabs(v.hi) * 1.01;
  if (acc.live[e] > 0) radius += f * underflow_allowance(n_terms) + underflow_allowance(1);
  if (std::isnan(radius)) radius = std::numeric_limits<double>::infinity();  // inf error times 0
  return {dd::to_double(v), dd::decides_rounding(v, radius), radius};
}

// Where a finished element goes: its value into an Outputs field, its radius and resolution into
// the optional FastAccuracy, and the count of unresolved elements.
struct ElementSink {
  Outputs* out;
  FastAccuracy* accuracy;  // may be null
  std::int64_t unresolved = 0;

  void put(std::vector<double> Outputs::*field, std::size_t index, const Finished& f) {
    (out->*field)[index] = f.value;
    if (!f.resolved) ++unresolved;
    if (accuracy) {
      (accuracy->radius.*field)[index] = f.radius;
      (accuracy->resolved.*field)[index] = f.resolved ? 1.0 : 0.0;
    }
  }
};

// Sizes the accuracy record like `out` (radius 0, resolved 1: elements never written are exact).
inline void prepare_accuracy(const Outputs& out, FastAccuracy* accuracy) {
  if (!accuracy) return;
  for (auto field : {&Outputs::out, &Outputs::lse, &Outputs::dq, &Outputs::dk, &Outputs::dv, &Outputs::dsinks}) {
    (accuracy->radius.*field).assign((out.*field).size(), 0.0);
    (accuracy->resolved.*field).assign((out.*field).size(), 1.0);
  }
}

}  // namespace attnv::reference::fast_detail
