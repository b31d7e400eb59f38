#pragma once
// Internal to the bound: the model's constants and, per query row, the exact weights and the
// bound on each logit's error (BOUND.md sections 1-2). Evaluated in plain double; section 8 of
// BOUND.md says why that is safe and what `inflation` covers.
#include <cstdint>
#include <limits>
#include <vector>

#include "problem/case.h"
#include "problem/precision.h"

namespace attnv::bound::detail {

// gamma_n = n u / (1 - n u); +inf when n u >= 1 (the model then bounds nothing).
double gamma(double n, double u);

struct ModelConstants {
  double u = 0;          // unit roundoff of the accumulator (the backward's arithmetic)
  double u_exp = 0;      // relative error of exp/log/tanh: exp_ulps ulps <= 2 exp_ulps u
  // The forward's stages (BOUND.md section 1, "Stages"). For an unstaged model every one is u
  // (u_exp for the exps), u_sm_in is 0, the etas are eta and n_num_extra is 2: the formulas are
  // then exactly those of the one-dtype model.
  double u_dot = 0;      // the q.k dot product's accumulation
  double u_score = 0;    // fl(scale), the multiply, softcap, the bias add; a conversion from dot
  double u_exp_score = 0;  // tanh in the score dtype
  double u_sm_in = 0;    // the logit rounded into the softmax dtype, when narrower than the score's
  double u_sm = 0;       // max subtraction, the denominator's sums and rescales, LSE
  double u_exp_sm = 0;   // exp and log in the softmax dtype
  double u_num = 0;      // the numerator: P.V products, sums, rescales and the division
  double eta_sm = 0;     // smallest subnormal of the softmax dtype (a weight's underflow)
  double eta_acc = 0;    // the larger smallest subnormal of the softmax and P.V dtypes
  double n_num_extra = 2;  // g_N's roundings besides the n additions and nb rescales
  double u_p = 0;        // roundoff of the dtype P (and dS) is rounded to; 0 when it stays in accum
  double eta = 0;        // smallest subnormal of the accumulator (absolute error of underflow)
  double eta_p = 0;      // smallest subnormal of p_dtype (0 when P is not rounded)
  double min_normal_p = 0;
  std::int64_t n_dot_k = 0;  // rounding count of a q.k dot product (Dk, or Dk+1 if products round)
  std::int64_t n_dot_v = 0;  // same for dO.v (Dv or Dv+1)
  std::int64_t nb = 0;       // online-softmax rescales a key can undergo: ceil(Tk / block)
  // A kernel that flushes subnormals (PrecisionModel::flush_subnormals, BOUND.md section 12).
  // Then every eta above is 2 min_normal (a flushed result errs by < min_normal where a
  // gradual one errs by eta / 2), and these are each stage's min_normal: the absolute error of
  // one flushed result, and the threshold below which an operand is read as zero. All 0 when
  // the kernel does not flush, which leaves every formula as it was.
  bool flush = false;
  double mn = 0;        // the accumulator's (the backward's arithmetic)
  double mn_dot = 0, mn_score = 0, mn_sm = 0, mn_pv = 0;
  double mn_out = 0;    // the output dtype's: the final rounding to it may flush
};

// Whether an operand is read as zero by a kernel that flushes (DAZ): nonzero and below the
// min_normal of the dtype it is read in (`mn`, 0 when the kernel does not flush).
inline bool daz_zeroed(double x, double mn) { return x != 0 && x < mn && -x < mn; }

ModelConstants constants_of(const Case& c, const PrecisionModel& m);

// One query row (b, h, i): its visible keys and, per visible key, exact-in-double terms.
struct RowTerms {
  std::vector<std::int64_t> keys;  // visible keys, increasing
  std::vector<double> t;           // logits t_ij = softcap(scale q.k) + bias
  std::vector<double> P;           // exp(t_ij - L_i), L_i the exact LSE from the reference
  std::vector<double> A;           // |scale| sum_k |q_ik||k_jk|
  std::vector<double> delta0;      // bound on |t_hat - t| (dot, scale, softcap, bias)
  std::vector<double> delta_pre;   // bound on the pre-softcap score error (= delta0 sans bias/softcap)
  std::vector<double> s;           // pre-softcap score scale q.k (only meaningful with softcap)
  double m = 0;                    // max_j t_ij
  double L = 0;                    // exact LSE
  double dmax = 0;                 // max_j delta0
  // An attention sink (docs/semantics.md): an exact logit in the denominator with value 0.
  bool has_sink = false;
  double sink = 0;                 // its logit (m includes it)
  double P_sink = 0;               // exp(sink - L)
  double inflation = 1;            // relative factor covering the double evaluation of the bound
};

RowTerms row_terms(const Case& c, const ModelConstants& k, std::int64_t b, std::int64_t h,
                   std::int64_t i, double exact_lse);

// A visible key whose logit is below -DBL_MAX (a huge negative bias or ALiBi term): its weight
// is 0 (docs/semantics.md), and a kernel within its model computes it as exactly 0, as it does
// every product with it, when the row's largest logit is above -2^1022 (the only rows the
// reference computes with such keys: row_terms, reference/fast/row_softmax.cpp). Every bound
// term skips it.
inline bool below_double_range(const RowTerms& r, std::size_t jj) { return r.t[jj] == -std::numeric_limits<double>::infinity(); }

}  // namespace attnv::bound::detail
