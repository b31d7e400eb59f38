#include "reference/fast/row_softmax.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <sstream>

#include "problem/error.h"
#include "reference/fast/dd_math.h"
#include "problem/visibility.h"

namespace attnv::reference::fast_detail {
namespace {

constexpr double kU2 = dd::kU2;
// exp's error is relative (kExpRelErr) plus, once its result is subnormal or its low part
// underflows, the final scaling's rounding: at most 2^-1075 for each of hi and lo. Below -745.2
// it returns 0 and the exact value is < 2^-1075. So |e_c - e| <= kExpRelErr e + kExpAbsErr.
constexpr double kExpAbsErr = dd::kExpAbsErr;
constexpr double kExpZeroArg = -745.2;
// Absolute part of every weight's error: kExpAbsErr / S (S >= 0.5) and the dd division of a
// subnormal numerator, whose error-free steps may round at the 2^-1074 grid: <= 2^-1070.
constexpr double kPAbsErr = 0x1p-1070;
// Above this the first-order bounds (exp(delta) - 1 <= 1.001 delta) stop holding: give up.
constexpr double kMaxLogitErr = 1e-3;

}  // namespace

RowContext::RowContext(const Case& cs)
    : c(&cs),
      scale(cs.problem.effective_scale()),
      has_softcap(cs.problem.softcap.has_value()),
      cap(cs.problem.softcap.value_or(0)),
      kernels(&dd::active_kernels()) {}

void throw_non_finite(const char* tensor, const Case& c, const std::vector<double>& data,
                      std::size_t offset, std::int64_t len, std::int64_t b, std::int64_t h,
                      std::int64_t row, const std::string& context) {
  std::ostringstream msg;
  msg << "fast reference (" << (c.id.empty() ? describe(c.problem) : c.id) << "): ";
  for (std::int64_t d = 0; d < len; ++d) {
    const double x = data[offset + static_cast<std::size_t>(d)];
    if (!std::isfinite(x)) {
      msg << "non-finite " << tensor << "[b=" << b << ",h=" << h << ",t=" << row << ",d=" << d
          << "] = " << x << " (" << context << ")";
      throw InputError(msg.str());
    }
  }
  msg << "finite values of " << tensor << "[b=" << b << ",h=" << h << ",t=" << row
      << "] overflow the double range in a product or sum (" << context << ")";
  throw InputError(msg.str());
}

namespace {

std::string case_name(const Case& c) { return c.id.empty() ? describe(c.problem) : c.id; }

// A double-double result `r` whose plain double counterpart is `plain`: past the double range
// the error-free transformations leave a NaN low part (inf - inf) or a NaN sum, where the plain
// result keeps the sign; a logit past -DBL_MAX is -inf (weight 0), one past +DBL_MAX +inf.
DD saturated(DD r, double plain) {
  if (std::isfinite(r.hi) && std::isfinite(r.lo)) return r;
  if (std::isinf(plain)) return {plain, 0};
  return r;  // plain finite, or NaN: no sign to keep (the caller refuses it)
}

// A logit that is not a finite double: the exact LSE of the row is at least that logit, so it is
// not finite in f64 either; say which logit, not which tensor "overflows".
[[noreturn]] void throw_logit_overflow(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i,
                                       std::int64_t j) {
  std::ostringstream msg;
  msg << "fast reference (" << case_name(c) << "): the logit of query (b=" << b << ",h=" << h
      << ",i=" << i << ") and key j=" << j
      << " (scale * q.k, after the softcap and bias) is above the double range, so the row's"
         " log-sum-exp is not finite in f64 (every visible logit must stay below ~1.8e308)";
  throw InputError(msg.str());
}

[[noreturn]] void throw_lse_overflow(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i,
                                     double max_logit) {
  std::ostringstream msg;
  msg << "fast reference (" << case_name(c) << "): the log-sum-exp of row (b=" << b << ",h=" << h
      << ",i=" << i << ") overflows the double range (";
  if (max_logit == -kInf)
    msg << "every visible logit is below -1.8e308";
  else
    msg << "largest logit " << max_logit;
  msg << "): the exact LSE is not finite in f64";
  throw InputError(msg.str());
}

}  // namespace

// Error bookkeeping per key j (all absolute errors of the computed double-double values; u^2
// constants from dd.h / dd_math.h):
//   r_j = scale * (q . k_j):  err_r = scale * dot_err_factor(Dk) * A_j * 1.01 + 2 u^2 |r_j|
//     (A_j = sum |q k|; 1.01 covers A_j's own rounding; mul_d adds 2 u^2), plus the underflow
//     allowances of the dot and of the product.
//   softcap t = c tanh(r / c): y = r / c has error dy = err_r / c + 3 u^2 |y| (div_d); tanh
//     moves by <= dy max sech^2 on [y - dy, y + dy] <= dy min(1, 4 e^(-|y|)) when dy <= |y|/2, so
//     c tanh(y) by c dy times that, plus tanh's own relative error and the product by c:
//     + (kTanhRelErr + 2 u^2) |t|.
//   bias: t + bias (add_d): + 2 u^2 |t + bias|.
//   x_j = t_j - m (sub, m the largest t_j as a double-double): err_x = err_t + 3 u^2 |x_j|.
//     m must be the whole double-double: past |t| = 2^62 the low part alone can exceed 709, so
//     t - m.hi would overflow exp for the largest key itself.
//   e_j = exp(x_j): relative error <= (exp(err_x) - 1)(1 + kExpRelErr) + kExpRelErr
//     <= 1.01 (err_x + kExpRelErr) while err_x <= 1e-3.
//   S = sum e_j (accurate dd additions of positive terms): relative error <= max_j rel(e_j)
//     + acc_err_factor(n) + (tiny weights' absolute errors) / S.
//   P_j = e_j / S (div, 15 u^2): rel(P_j) <= 1.01 (rel(e_j) + rel(S) + 15 u^2).
//   L = m + log S: |log S_c - log S| <= 1.01 rel(S); log adds kLogAbsErr + kLogRelErr |log S|;
//     the final add 3 u^2 |L|.
void compute_row_weights(const RowContext& ctx, std::int64_t b, std::int64_t h, std::int64_t i,
                         RowWeights& w, bool want_sech2) {
  const Case& c = *ctx.c;
  const Problem& pr = c.problem;
  const std::int64_t Dk = pr.shape.Dk;
  const std::int64_t hk = h / pr.group();
  const std::size_t n = w.keys.size();
  w.p.resize(n);
  w.p_err.resize(n);
  w.p_rel.resize(n);
  w.t.resize(n);
  w.t_err.resize(n);
  const bool sech2_wanted = want_sech2 && ctx.has_softcap;
  if (sech2_wanted) {
    w.sech2.resize(n);
    w.sech2_rel.resize(n);
    w.sech2_abs.resize(n);
    w.y_err.resize(n);
  }
  // An attention sink (docs/semantics.md): an exact logit of value-0 "key" that joins the
  // denominator S, so it enters m, S and L but has no weight of its own in w.p.
  const bool has_sink = pr.has_sinks;
  const double sink = has_sink ? c.sinks[static_cast<std::size_t>(h)] : 0.0;
  w.p_sink = {0, 0};
  w.p_sink_err = 0;
  if (n == 0 && !has_sink) {
    w.lse = {-kInf, 0};
    w.lse_radius = 0;
    return;
  }
  const std::size_t q0 = c.qi(b, h, i, 0);
  const double* q = c.q.data() + q0;
  const double dot_factor = dd::dot_err_factor(Dk) * 1.01;

  DD m{-kInf, 0};
  for (std::size_t jj = 0; jj < n; ++jj) {
    const std::int64_t j = w.keys[jj];
    const std::size_t k0 = c.ki(b, hk, j, 0);
    const dd::DotResult dot = ctx.kernels->dot(q, c.k.data() + k0, Dk);
    if (!std::isfinite(dot.abs_sum)) {
      for (std::int64_t d = 0; d < Dk; ++d)
        if (!std::isfinite(q[d])) throw_non_finite("q", c, c.q, q0, Dk, b, h, i, "a query with visible keys");
      throw_non_finite("k", c, c.k, k0, Dk, b, hk, j, "a key visible to some query");
    }
    DD t = dd::mul_d(dot.value, ctx.scale);
    // scale * q.k past the double range (a huge scale): only its sign is known, and that is all
    // the softmax needs (-inf: weight 0; +inf: the LSE overflows; under a softcap: +-c).
    const bool r_overflow = !std::isfinite(t.hi);
    if (r_overflow) t = {std::copysign(kInf, dot.value.hi), 0};
    const double r_abs = std::fabs(t.hi);
    // + the dot's and the product's underflow: ~1e-320, nothing next to exp's own error, but
    // it keeps the bound true for logits of subnormal products.
    double err = ctx.scale * (dot_factor * dot.abs_sum + dot_underflow_allowance(q, c.k.data() + k0, Dk, dot.abs_sum)) +
                 2 * kU2 * r_abs + underflow_allowance(1);
    if (ctx.has_softcap && r_overflow) {
      // |y| = |r| / c > DBL_MAX / c >= 64: tanh(y) is +-1 within 2 e^(-2|y|) < 2^-183 and
      // sech^2(y) is 0 within 4 e^(-2|y|) < 2^-182.
      if (ctx.cap > DBL_MAX / 64) {
        std::ostringstream msg;
        msg << "fast reference (" << case_name(c) << "): the logit of query (b=" << b << ",h=" << h << ",i=" << i
            << ") and key j=" << j << " is past the double range before a softcap of " << ctx.cap
            << "; softcaps above DBL_MAX/64 with such logits are not supported";
        throw InputError(msg.str());
      }
      if (sech2_wanted) {
        w.y_err[jj] = 0;
        w.sech2[jj] = {0, 0};
        w.sech2_rel[jj] = 0;
        w.sech2_abs[jj] = 0x1p-182;
      }
      t = {std::copysign(ctx.cap, t.hi), 0};
      err = ctx.cap * 0x1p-183;
    } else if (ctx.has_softcap) {
      const DD y = dd::div_d(t, ctx.cap);
      const double dy = err / ctx.cap + 3 * kU2 * std::fabs(y.hi);
      if (sech2_wanted) {
        // sech2'/sech2 = -2 tanh: |d ln sech2| <= 2 |dy|, dy = err / c + 3 u^2 |y|.
        w.y_err[jj] = dy;
        w.sech2[jj] = dd::sech2(y);
        w.sech2_rel[jj] = dy <= kMaxLogitErr ? dd::kSech2RelErr + 2.02 * dy : kInf;
        w.sech2_abs[jj] = dd::kSech2AbsErr;
      }
      // tanh moves by at most dy times the largest sech^2 on [y - dy, y + dy], and sech^2(z) <=
      // 4 e^(-2|z|): far out on the flat part a large error in r barely moves t. Without that, a
      // logit of 1e77 under a softcap would carry an error of 1e45 and leave its row undecided.
      // Used once dy <= |y| / 2, so every z there has |z| >= |y| / 2 and the slope is at most
      // 4 e^(-|y|) (1.01: std::exp's rounding and |y.hi| for |y|); floored at 2^-1000, which
      // 4 e^(-|y|) is below wherever std::exp underflows, so the floor never claims too little.
      const double ya = std::fabs(y.hi);
      const double slope = dy <= 0.5 * ya ? std::max(std::min(1.0, 4 * std::exp(-ya) * 1.01), 0x1p-1000) : 1.0;
      t = dd::mul_d(dd::tanh(y), ctx.cap);
      err = 1.01 * ctx.cap * dy * slope + (dd::kTanhRelErr + 2 * kU2) * std::fabs(t.hi) * 1.01;
    }
    if (pr.has_bias) {
      const double bias = c.bias[c.bi(b, h, i, j)];
      if (!std::isfinite(bias)) {
        std::ostringstream msg;
        msg << "fast reference (" << (c.id.empty() ? describe(pr) : c.id) << "): non-finite bias[b=" << b << ",h=" << h
            << ",i=" << i << ",j=" << j << "] = " << bias << " on a visible key";
        throw InputError(msg.str());
      }
      t = saturated(dd::add_d(t, bias), t.hi + bias);
      err += 2 * kU2 * std::fabs(t.hi) * 1.01;
    }
    if (pr.has_alibi && t.hi != -kInf) {
      // -m_h |j - p_i|: the distance is an integer below 2^61, exact as a double below 2^53
      // (Tk <= 2^53 in any case this runs); mul_d errs by 2u^2 of the product, add by 3u^2.
      const std::int64_t d = j - query_position(c, b, i);
      const double dist = static_cast<double>(d < 0 ? -d : d), slope = c.alibi[static_cast<std::size_t>(h)];
      const DD a = saturated(dd::mul_d(DD{-slope, 0}, dist), -slope * dist);
      t = saturated(dd::add(t, a), t.hi + a.hi);
      err += (2 * kU2 * std::fabs(a.hi) + 3 * kU2 * std::fabs(t.hi)) * 1.01;
    }
    if (std::isnan(t.hi) || t.hi == kInf) throw_logit_overflow(c, b, h, i, j);
    // A logit below -DBL_MAX (a finite dot times a huge scale, a huge negative bias or ALiBi
    // term): against a largest logit m above -2^1022 (checked below) its exact weight exp(t - m)
    // is below exp(-2^1022), far under the absolute error every weight carries; kept as -inf and
    // given weight 0 below.
    w.t[jj] = t.hi == -kInf ? DD{-kInf, 0} : t;
    w.t_err[jj] = t.hi == -kInf ? 0 : err;
    if (t.hi != -kInf && (m.hi == -kInf || dd::less(m, t))) m = t;
  }

  if (has_sink && (m.hi == -kInf || dd::less(m, DD{sink, 0}))) m = DD{sink, 0};
  // Every logit below -DBL_MAX: the exact LSE is too (it is at most max t + log n).
  if (m.hi == -kInf) throw_lse_overflow(c, b, h, i, -kInf);
  // Some below -DBL_MAX beside a largest logit near it: their exact weights exp(t - m) need not
  // be negligible (t - m may be small), and t is not known in double. Above -2^1022, t - m is
  // below -2^1022 and every such weight is exactly 0 (the bound relies on this too).
  if (m.hi < -0x1p1022)
    for (std::size_t jj = 0; jj < n; ++jj)
      if (w.t[jj].hi == -kInf) {
        std::ostringstream msg;
        msg << "fast reference (" << case_name(c) << "): the logit of query (b=" << b << ",h=" << h << ",i=" << i
            << ") and key j=" << w.keys[jj] << " is below -DBL_MAX while the row's largest logit is " << m.hi
            << ", within a factor of 2 of it: that key's weight is not known in double (a row whose largest logit "
               "is above -2^1022 gives such keys weight 0)";
        throw InputError(msg.str());
      }
  // Weights e_j = exp(t_j - m), stored in w.p until divided by S.
  DD S{0, 0};
  double rel_e_max = 0;
  for (std::size_t jj = 0; jj < n; ++jj) {
    if (w.t[jj].hi == -kInf) {
      w.p[jj] = {0, 0};
      w.p_rel[jj] = 0;
      continue;
    }
    const DD x = dd::sub(w.t[jj], m);
    const double err_x = w.t_err[jj] + 3 * kU2 * std::fabs(x.hi) * 1.01;
    w.p[jj] = dd::exp(x);
    if (x.hi + err_x < kExpZeroArg) {
      w.p_rel[jj] = 0;  // exact and computed weight both < 2^-1075: the absolute term covers it
    } else {
      const double rel = err_x <= kMaxLogitErr ? 1.01 * (err_x + dd::kExpRelErr) : kInf;
      w.p_rel[jj] = rel;
      rel_e_max = std::max(rel_e_max, rel);
    }
    S = dd::add(S, w.p[jj]);
  }
  double rel_e_sink = 0;
  if (has_sink) {  // the sink's logit is exact: only the subtraction and the exp err
    const DD x = dd::sub(DD{sink, 0}, m);
    const double err_x = 3 * kU2 * std::fabs(x.hi) * 1.01;
    if (!(x.hi + err_x < kExpZeroArg)) {
      rel_e_sink = 1.01 * (err_x + dd::kExpRelErr);
      rel_e_max = std::max(rel_e_max, rel_e_sink);
    }
    w.p_sink = dd::exp(x);
    S = dd::add(S, w.p_sink);
  }
  const std::int64_t terms = static_cast<std::int64_t>(n) + (has_sink ? 1 : 0);
  // S >= the weight of the term whose logit is m, exp(0) = 1: S.hi >= 0.5 with a wide margin.
  const double rel_S = rel_e_max + dd::acc_err_factor(terms) +
                       static_cast<double>(terms) * kExpAbsErr / S.hi * 1.01;
  for (std::size_t jj = 0; jj < n; ++jj) {
    w.p[jj] = dd::div(w.p[jj], S);
    // |e_c/S_c - e/S| <= e_c |1/S_c - 1/S| + |e_c - e| / S: relative rel(e) + rel(S) + div's
    // 15 u^2, plus exp's absolute 2^-1074 over S >= 0.5, plus an underflow allowance for the
    // division of a subnormal weight (its result is then within 2^-1070 absolutely).
    w.p_rel[jj] = 1.01 * (w.p_rel[jj] + rel_S + 15 * kU2);
    w.p_err[jj] = w.p_rel[jj] * std::fabs(w.p[jj].hi) * (1 + 0x1p-50) + kPAbsErr;
  }
  if (has_sink) {  // as a key's weight just above
    w.p_sink = dd::div(w.p_sink, S);
    w.p_sink_err = 1.01 * (rel_e_sink + rel_S + 15 * kU2) * std::fabs(w.p_sink.hi) * (1 + 0x1p-50) + kPAbsErr;
  }
  const DD log_s = dd::log(S);
  w.lse = dd::add(log_s, m);
  if (!std::isfinite(w.lse.hi)) throw_lse_overflow(c, b, h, i, m.hi);
  w.lse_radius = 1.01 * (1.01 * rel_S + dd::kLogAbsErr + dd::kLogRelErr * std::fabs(log_s.hi)) +
                 3 * kU2 * std::fabs(w.lse.hi) * 1.01 + underflow_allowance(1);
  if (!(rel_S <= kMaxLogitErr)) w.lse_radius = kInf;
}

}  // namespace attnv::reference::fast_detail
