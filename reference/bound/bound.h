#pragma once
// The per-element error bound of a declared precision model (docs/semantics.md "Within
// tolerance: the error bound"), the acceptance rule, a structured comparison and the campaign sign test for biased
// rounding. Every formula is derived in reference/bound/BOUND.md; the section named next to a
// function is where its derivation lives.
//
// The bound is a function of the case, the exact outputs (correctly rounded doubles from the
// reference) and the PrecisionModel only; it never looks at the kernel's answer.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "problem/case.h"
#include "problem/precision.h"

namespace attnv::bound {

// Per-element bounds on |kernel - exact| BEFORE the output rounding and the reference's own
// rounding (both are added by accept()), in the dense layout of Outputs. A field is empty when
// not computed. 0 means "must be exact": fully masked rows (O = 0, LSE = -inf) and hidden keys'
// gradients. +inf means the model gives no useful bound for that element (never for f32/f64).
struct Bounds {
  std::vector<double> out, lse, dq, dk, dv;
  std::vector<double> dsinks;  // [Hq], only for a backward with sinks (BOUND.md 5.7)
  // Per O element: how far the farthest visible value (0 for a sink) lies from the exact O. Every
  // value in the hull of the visible values is within it of O, so an allowance at least this wide
  // passes any of them: such an element is uninformative (compare() counts it; it is no
  // evidence). 0 for a row with one visible key (O is that value) or none.
  std::vector<double> out_range;
};

// BOUND.md sections 2-4: bounds on O and LSE. `exact` must hold out and lse.
Bounds forward_bound(const Case& c, const Outputs& exact, const PrecisionModel& m);
// BOUND.md section 5: forward bounds plus dQ, dK, dV (FlashAttention-2 style backward: P
// recomputed from the kernel's LSE, D = rowsum(dO * O) with the kernel's rounded O).
// `exact` must hold out, lse, dq, dk, dv (and dsinks with sinks); the case must have dout.
Bounds backward_bound(const Case& c, const Outputs& exact, const PrecisionModel& m);

// BOUND.md section 6, the acceptance rule:
//   accept iff |out - exact| <= b + 2^-53 |exact| + ulp_out(out) / 2,
// where 2^-53|exact| is the reference's own rounding to double and ulp_out(out)/2 the kernel's
// final rounding to its output dtype. Non-finite exact values (LSE = -inf of a fully masked
// row) require the identical value. Non-finite kernel output where exact is finite: reject,
// except an infinity of the exact value's sign when |exact| + b + 2^-53|exact| reaches the
// dtype's overflow threshold max + ulp(max)/2 (correct rounding of a value that overflows).
bool accept(double out, double exact, double b, DType out_dtype);
bool overflow_allowed(double out, double exact, double b, DType out_dtype);
// The right-hand side above (the threshold the error is compared with).
double threshold(double out, double exact, double b, DType out_dtype);

// How the elements' error / threshold ratios are spread: the data of the certificate's
// histograms. Bin 0 holds exact answers (ratio 0); bins 1..kBins-2 split [1e-6, 10) into
// quarter decades (ratios below 1e-6 go to bin 1); the last bin holds ratios >= 10 and
// non-finite answers where the exact value is finite.
struct RatioHistogram {
  static constexpr int kBins = 30;
  std::array<std::int64_t, kBins> count{};
  void add(double ratio);
  RatioHistogram& operator+=(const RatioHistogram& o);
  std::int64_t total() const;
  // The ratio interval [lower, upper) of bin i (bin 0: [0, 0]; last: [10, inf)).
  static double lower_edge(int i);
  static double upper_edge(int i);
};

// How wide the allowances were against the exact values (issue 39: a PASS says how much it
// proves): threshold(exact) / |exact| for every judged element with a finite nonzero exact value
// and a finite bound. Bin 0 holds ratios below 1e-17, bins 1..80 split [1e-17, 1e3) into
// quarter decades, the last bin ratios >= 1e3; the largest ratio is kept exactly.
struct TightnessHistogram {
  static constexpr int kBins = 82;
  std::array<std::int64_t, kBins> count{};
  double max = 0;
  void add(double relative_allowance);
  TightnessHistogram& operator+=(const TightnessHistogram& o);
  std::int64_t total() const;
  // The upper edge of the bin that holds the median element: the median is at most this (within
  // a quarter decade); 0 when empty, inf when the median lies in the last bin.
  double median_at_most() const;
  // Elements whose allowance was at least |exact|: no relative accuracy shown there.
  std::int64_t at_least_own_size() const;
};

// One output tensor compared element by element.
struct TensorReport {
  std::string name;             // "out", "lse", "dq", "dk", "dv"
  DType out_dtype = DType::f32;  // what the kernel's outputs were rounded to
  std::int64_t elements = 0;
  std::int64_t failures = 0;    // elements not accepted (non-finite ones included)
  std::int64_t non_finite = 0;  // kernel NaN/inf where the exact value is finite (reported apart)
  std::int64_t unjudged = 0;    // finite outputs whose bound is infinite (the model bounds nothing there)
  // Judged elements whose allowance covers the visible values' range (Bounds::out_range): any
  // value in it would pass, so the element is no evidence of the kernel's accuracy (O only).
  std::int64_t uninformative = 0;
  // max over elements of |out - exact| / threshold; inf for a non-finite output where the exact
  // value is finite, so that a NaN ranks first in every headline instead of hiding behind the
  // finite elements' ratios.
  double worst_ratio = 0;
  std::int64_t worst_index = -1;  // dense index of that element (-1: none); the first NaN/inf one
  double worst_out = 0, worst_exact = 0, worst_bound = 0;
  double worst_threshold = 0;   // what the element was allowed: the bound plus the roundings
  // How much of the derived bound b the error uses beyond the output rounding and the
  // reference's rounding: max over elements with b > 0 of
  // max(0, |out - exact| - ulp_out(out)/2 - 2^-53 |exact|) / b. Where the output dtype is
  // narrower than the accumulator, worst_ratio is dominated by ulp_out/2 and this says whether
  // b itself is respected with room to spare.
  double worst_bound_usage = 0;
  RatioHistogram hist;  // every element with a finite exact value
  TightnessHistogram tightness;  // judged elements with a finite nonzero exact value
  bool ok() const { return failures == 0; }
};

struct Comparison {
  std::vector<TensorReport> tensors;  // only the tensors present in both outputs and bounds
  bool ok() const;
  double worst_ratio() const;
  std::int64_t elements() const;
  std::int64_t unjudged() const;  // elements accepted only because their bound is infinite
  std::int64_t uninformative() const;  // judged elements whose allowance covers their range
  TightnessHistogram tightness() const;  // over every tensor
  std::string summary() const;  // one line per tensor
};

// Compares every tensor present in `kernel`, `exact` and `bounds`. A tensor the kernel gives
// with the wrong size counts every element as a failure. Never asserts, never throws for data;
// a NaN bound (attnv's own defect) is a HarnessError naming the element, never a kernel's FAIL.
Comparison compare(const Outputs& kernel, const Outputs& exact, const Bounds& bounds,
                   DType out_dtype);

// BOUND.md section 7, the sign test for biased rounding.
// Mean over the elements with finite nonzero exact value of (out - exact) * sign(exact), in
// units of ulp_out(exact). Negative: the case's errors point toward zero (truncation does).
// Returns 0 when no element qualifies.
double mean_signed_error_ulps(const std::vector<double>& out, const std::vector<double>& exact,
                              DType out_dtype);

struct SignTest {
  std::int64_t cases = 0;        // cases with a finite nonzero mean (ties are dropped)
  std::int64_t toward_zero = 0;  // cases whose mean signed error is < 0
  double share = 0;              // toward_zero / cases
  double p_value = 1;            // P(X >= toward_zero), X ~ Binomial(cases, 1/2)
  bool biased = false;           // p_value < alpha
};

// One-sided binomial test of H0 "a case points toward zero with probability <= 1/2".
// alpha = 1e-6 by default: NUMERICS measured 43-47% for correct kernels and 95-99.6% for
// truncation. Under H0 the false alarm rate is <= 1e-6 per campaign; a correct kernel even at a
// true share of 51% is flagged with probability < 1e-3 for up to 4,000 cases (the critical count
// is n/2 + 4.75 sqrt(n)/2, 3.5 standard deviations above 0.51 n at n = 4,000), while truncation
// at a true share of 95% is flagged with probability > 0.99 from 60 cases on (critical count 49
// of 60, expected 57, standard deviation 1.7).
SignTest sign_test(const std::vector<double>& per_case_means, double alpha = 1e-6);

}  // namespace attnv::bound
