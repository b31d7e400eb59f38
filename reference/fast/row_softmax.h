#pragma once
// One query row's softmax in double-double, with a rigorous error bound on every weight: the
// part shared by the forward and the backward pass.
#include <cstdint>
#include <string>
#include <vector>

#include "problem/case.h"
#include "reference/fast/dd.h"
#include "reference/fast/dd_kernels.h"

namespace attnv::reference::fast_detail {

using dd::DD;

// Per-case constants.
struct RowContext {
  const Case* c = nullptr;
  double scale = 1;
  bool has_softcap = false;
  double cap = 0;
  const dd::Kernels* kernels = nullptr;

  explicit RowContext(const Case& cs);
};

// The weights of row (b, h, i) over its visible keys. Error model, for every visible key j:
//   |p_computed[j] - P_exact[j]| <= p_err[j]
// (p_err = p_rel[j] * p + 2^-1070: the absolute part covers weights that underflow). lse carries |lse_computed - L_exact| <= lse_radius.
struct RowWeights {
  std::vector<std::int64_t> keys;  // visible keys, increasing; filled by the caller
  std::vector<DD> p;
  std::vector<double> p_err;
  std::vector<double> p_rel;       // relative part of p_err (inf when the logit error is too large)
  // Softcap derivative 1 - tanh^2(r/c) per key (only when asked and a softcap is set) and its
  // error: |sech2_computed - exact| <= sech2_rel[j] * sech2 + sech2_abs[j].
  std::vector<DD> sech2;
  std::vector<double> sech2_rel, sech2_abs;
  DD lse{0, 0};
  double lse_radius = 0;
  // The attention sink's own weight exp(s_h - L) and its error bound (0 without a sink): the
  // backward needs it for the sink's gradient and for sum_j P_j = 1 - P_sink.
  DD p_sink{0, 0};
  double p_sink_err = 0;

  // Scratch reused between rows.
  std::vector<DD> t;
  std::vector<double> t_err, y_err;
};

// Fills w (w.keys must be set; empty keys and no sink: lse = -inf, radius 0; a sink joins S and L). Throws InputError on a
// non-finite q element, visible k element or visible bias, naming it; or when a logit overflows.
void compute_row_weights(const RowContext& ctx, std::int64_t b, std::int64_t h, std::int64_t i,
                         RowWeights& w, bool want_sech2);

// Locating a non-finite value after a kernel saw one: throws InputError naming the first
// non-finite element of `what` row (tensor name and index); if none, throws one that reports an
// overflow of the double-double range at that row.
[[noreturn]] void throw_non_finite(const char* tensor, const Case& c, const std::vector<double>& data,
                                   std::size_t offset, std::int64_t len, std::int64_t b,
                                   std::int64_t h, std::int64_t row, const std::string& context);

// The absolute allowance for underflow in n steps of dd arithmetic whose terms are not all
// zero: an error-free transformation stays exact unless a result falls into the subnormal
// range, where each of its roundings errs by at most 2^-1075; a step (product, fma, two sums)
// has fewer than 16 of them, so 2^-1070 per step with 8 steps to spare.
inline double underflow_allowance(std::int64_t n) {
  return static_cast<double>(n + 8) * 0x1p-1070;
}

// The error of a Dot2 result beyond dot_err_factor(n) * abs_sum (dd_kernels.h), which assumes no
// underflow: two_prod splits a product exactly unless it lies below ~2^-969, where its low part
// rounds (by <= 2^-1075). Once abs_sum >= 2^-900 the relative term exceeds n such roundings
// many times over; below, an allowance is due unless every product is exactly zero (an
// underflowed abs_sum of 0 does not prove that, so the factors are looked at).
inline double dot_underflow_allowance(const double* a, const double* b, std::int64_t n, double abs_sum) {
  if (abs_sum >= 0x1p-900) return 0;
  for (std::int64_t k = 0; k < n; ++k)
    if (a[k] != 0 && b[k] != 0) return underflow_allowance(2 * n);
  return 0;
}

}  // namespace attnv::reference::fast_detail
