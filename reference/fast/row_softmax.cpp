#include "reference/fast/row_softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "problem/error.h"
#include "reference/fast/dd_math.h"

namespace attnv::ref::fast_detail {
namespace {

constexpr double kU2 = dd::kU2;
constexpr double kInf = std::numeric_limits<double>::infinity();
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

// Error bookkeeping per key j (all absolute errors of the computed double-double values; u^2
// constants from dd.h / dd_math.h):
//   r_j = scale * (q . k_j):  err_r = scale * dot_err_factor(Dk) * A_j * 1.01 + 2 u^2 |r_j|
//     (A_j = sum |q k|; 1.01 covers A_j's own rounding; mul_d adds 2 u^2).
//   softcap t = c tanh(r / c): y = r / c has error err_r / c + 3 u^2 |y| (div_d); tanh is
//     1-Lipschitz, so c tanh(y) moves by <= err_r + 3 u^2 |r|, plus tanh's own relative error and
//     the product by c: + (kTanhRelErr + 2 u^2) |t|.
//   bias: t + bias (add_d): + 2 u^2 |t + bias|.
//   x_j = t_j - m (add_d, m the largest hi): err_x = err_t + 2 u^2 |x_j|.
//   e_j = exp(x_j): relative error <= (exp(err_x) - 1)(1 + kExpRelErr) + kExpRelErr
//     <= 1.01 (err_x + kExpRelErr) while err_x <= 1e-3.
//   S = sum e_j (accurate dd additions of positive terms): relative error <= max_j rel(e_j)
//     + acc_err_factor(n) + (tiny weights' absolute errors) / S.
//   P_j = e_j / S (div, 15 u^2): rel(P_j) <= 1.01 (rel(e_j) + rel(S) + 15 u^2).
//   L = m + log S: |log S_c - log S| <= 1.01 rel(S); log adds kLogAbsErr + kLogRelErr |log S|;
//     the final add_d 2 u^2 |L|.
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
  if (n == 0) {
    w.lse = {-kInf, 0};
    w.lse_radius = 0;
    return;
  }
  const std::size_t q0 = c.qi(b, h, i, 0);
  const double* q = c.q.data() + q0;
  const double dot_factor = dd::dot_err_factor(Dk) * 1.01;

  double m = -kInf;
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
    const double r_abs = std::fabs(t.hi);
    double err = ctx.scale * dot_factor * dot.abs_sum + 2 * kU2 * r_abs;
    if (ctx.has_softcap) {
      const DD y = dd::div_d(t, ctx.cap);
      if (sech2_wanted) {
        // sech2'/sech2 = -2 tanh: |d ln sech2| <= 2 |dy|, dy = err / c + 3 u^2 |y|.
        const double dy = err / ctx.cap + 3 * kU2 * std::fabs(y.hi);
        w.y_err[jj] = dy;
        w.sech2[jj] = dd::sech2(y);
        w.sech2_rel[jj] = dy <= kMaxLogitErr ? dd::kSech2RelErr + 2.02 * dy : kInf;
        w.sech2_abs[jj] = dd::kSech2AbsErr;
      }
      t = dd::mul_d(dd::tanh(y), ctx.cap);
      err = 1.01 * err + 3 * kU2 * r_abs + (dd::kTanhRelErr + 2 * kU2) * std::fabs(t.hi) * 1.01;
    }
    if (pr.has_bias) {
      const double bias = c.bias[c.mi(i, j)];
      if (!std::isfinite(bias)) {
        std::ostringstream msg;
        msg << "fast reference (" << (c.id.empty() ? describe(pr) : c.id) << "): non-finite bias[i="
            << i << ",j=" << j << "] = " << bias << " on a visible key";
        throw InputError(msg.str());
      }
      t = dd::add_d(t, bias);
      err += 2 * kU2 * std::fabs(t.hi) * 1.01;
    }
    if (!std::isfinite(t.hi)) throw_non_finite("k", c, c.k, k0, Dk, b, hk, j, "logit overflow");
    w.t[jj] = t;
    w.t_err[jj] = err;
    m = std::max(m, t.hi);
  }

  // Weights e_j = exp(t_j - m), stored in w.p until divided by S.
  DD S{0, 0};
  double rel_e_max = 0;
  for (std::size_t jj = 0; jj < n; ++jj) {
    const DD x = dd::add_d(w.t[jj], -m);
    const double err_x = w.t_err[jj] + 2 * kU2 * std::fabs(x.hi) * 1.01;
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
  // S >= the weight of the key whose hi is m, exp(lo part) ~ 1: S.hi >= 0.5 with a wide margin.
  const double rel_S = rel_e_max + dd::acc_err_factor(static_cast<std::int64_t>(n)) +
                       static_cast<double>(n) * kExpAbsErr / S.hi * 1.01;
  for (std::size_t jj = 0; jj < n; ++jj) {
    w.p[jj] = dd::div(w.p[jj], S);
    // |e_c/S_c - e/S| <= e_c |1/S_c - 1/S| + |e_c - e| / S: relative rel(e) + rel(S) + div's
    // 15 u^2, plus exp's absolute 2^-1074 over S >= 0.5, plus an underflow allowance for the
    // division of a subnormal weight (its result is then within 2^-1070 absolutely).
    w.p_rel[jj] = 1.01 * (w.p_rel[jj] + rel_S + 15 * kU2);
    w.p_err[jj] = w.p_rel[jj] * std::fabs(w.p[jj].hi) * (1 + 0x1p-50) + kPAbsErr;
  }
  const DD log_s = dd::log(S);
  w.lse = dd::add_d(log_s, m);
  w.lse_radius = 1.01 * (1.01 * rel_S + dd::kLogAbsErr + dd::kLogRelErr * std::fabs(log_s.hi)) +
                 2 * kU2 * std::fabs(w.lse.hi) * 1.01 + underflow_allowance(1);
  if (!(rel_S <= kMaxLogitErr)) w.lse_radius = kInf;
}

}  // namespace attnv::ref::fast_detail
