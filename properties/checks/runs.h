#pragma once
// Shared plumbing of the checks: running a kernel on a case, the reference and its bound,
// bitwise and within-the-bound comparison of two runs, naming an element.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "judge/judge.h"
#include "problem/buffers.h"
#include "problem/case.h"
#include "problem/element_name.h"
#include "problem/kernel.h"
#include "reference/bound/bound.h"

namespace attnv::checks::detail {

// Kernel calls, told apart from attnv's own errors, and the kernel's precision query: the judge's
// (judge/kernel_call.h), so a check and attnv fuzz charge the kernel with the same things.
using judge::kernel_call;
using judge::kernel_precision;

// Why the kernel does not claim this case ("" when it does).
std::string not_claimed(Kernel& k, const Case& c, bool backward);

// judge::run (lay out, validate the views, call, read back; no LSE asked of a kernel that does
// not claim it), recorded for the evidence of a failure (recording.h).
using judge::Run;
Run run(Kernel& k, const Case& c, Layout layout, bool backward = false);

// The fast reference and the bound of the kernel's model (judge::reference), recorded.
using Exact = judge::Reference;
Exact exact_forward(Kernel& k, const Case& c);
Exact exact_backward(Kernel& k, const Case& c);

using attnv::bitwise_difference;  // problem/element_name.h
using attnv::element_name;

// |a - b| <= threshold(a) + threshold(b) around the common exact value (checks.h); returns "" or
// a description of the worst offending element. Non-finite values must agree exactly with each
// other and with a non-finite exact value.
std::string disagreement(const Case& c, const std::string& tensor, const std::vector<double>& a,
                         const std::vector<double>& b, const std::vector<double>& exact,
                         const std::vector<double>& bnd, DType out_dtype);
// Same for two runs of two cases with the same exact values but their own bounds (a
// transformation that keeps the exact outputs but changes how hard they are to compute):
// |a - b| <= threshold(a, bnd_a) + threshold(b, bnd_b). `worst_ratio`, when given, receives the
// largest |a - b| / allowance over the finite elements.
std::string disagreement(const Case& c, const std::string& tensor, const std::vector<double>& a,
                         const std::vector<double>& b, const std::vector<double>& exact,
                         const std::vector<double>& bnd_a, const std::vector<double>& bnd_b, DType out_dtype,
                         double* worst_ratio = nullptr);

// A power-of-two grid g for values of magnitude < 4M in dtype t: every multiple of g below 4M in
// magnitude is representable (at most p significant bits, exponent in range), so sums of two
// grid values below 2M each are exact. 0 when 4M overflows the dtype.
double exact_grid(DType t, double M);
double on_grid(double x, double g);
double max_abs(const std::vector<double>& v);

// The case with V replaced by identity rows (Dv = Tk, v_j = e_j) and no dO: its output row i is
// the weight row P_i. The caller keeps Tk small.
Case with_identity_v(const Case& c);

// The output row index (b, h, i) of a dense row number, and visibility of a key for a row.
bool row_sees_any(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i);

}  // namespace attnv::checks::detail
