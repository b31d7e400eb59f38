#pragma once
// Internal: the rounded arithmetic of one precision model. Each operation is computed in double
// and rounded once to the target dtype: for +, -, *, / of values of a dtype with p <= 24 bits
// the double result is exact or rounded at 53 >= 2p + 2 bits, so the double rounding is
// innocuous and the result is the correctly rounded one. exp, log and tanh come from libm
// (< 1 ulp of double) then rounded: within 0.5 ulp + a hair of the target, inside exp_ulps = 2.
#include <cmath>
#include <vector>

#include "kernels/emulated/emulated.h"

namespace attnv::kernels::emulated::detail {

struct Arith {
  DType acc = DType::f32;   // accumulator (the backward's arithmetic)
  // The forward's stages (PrecisionModel's dot, score, softmax, pv; accum when unset).
  DType dot = DType::f32;
  DType score = DType::f32;
  DType sm = DType::f32;
  DType pv = DType::f32;     // the P.V products and the final division
  DType pv_acc = DType::f32;  // the P.V accumulator's sums and rescales (f16 under the bug)
  DType p = DType::f32;     // P and dS before their products
  DType out = DType::f32;
  bool sloppy_exp = false;
  bool truncate_output = false;

  double r(double x) const { return round_to(acc, x); }
  double add(double a, double b) const { return r(a + b); }
  double sub(double a, double b) const { return r(a - b); }
  double mul(double a, double b) const { return r(a * b); }
  double div(double a, double b) const { return r(a / b); }
  double exp(double x) const { return exp_in(acc, x); }
  double log(double x) const { return r(std::log(x)); }
  double tanh(double x) const { return r(std::tanh(x)); }
  // The same in a stage's dtype.
  static double in(DType t, double x) { return round_to(t, x); }
  double exp_in(DType t, double x) const;
  double to_p(double x) const { return round_to(p, x); }
  double to_out(double x) const { return truncate_output ? truncate_to(out, x) : round_to(out, x); }
};

Arith arith_of(const Config& cfg);

// The rounded logit of key j for query (b, h, i), and the rounded pre-softcap score (for the
// softcap's derivative in the backward).
struct Logit {
  double t = 0;
  double s = 0;
};
Logit logit(const Case& c, const Config& cfg, const Arith& a, std::int64_t b, std::int64_t h,
            std::int64_t i, std::int64_t j);

// Forward of one row into out_row (Dv values, already rounded to model.out); returns the LSE
// in the accumulator dtype (-inf for a row without visible keys).
double forward_row(const Case& c, const Config& cfg, const Arith& a, std::int64_t b,
                   std::int64_t h, std::int64_t i, double* out_row);

}  // namespace attnv::kernels::emulated::detail
