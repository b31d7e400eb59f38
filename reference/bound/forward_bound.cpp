// The forward bound (BOUND.md sections 2-4). Notation as in BOUND.md: P_j exact weights, rho_j
// the bound on the relative error of key j's effective weight, sigma = sum_j P_j rho_j.
#include <algorithm>
#include <cmath>
#include <limits>

#include "problem/error.h"
#include "reference/bound/bound.h"
#include "reference/bound/forward_row.h"
#include "util/parallel.h"

namespace attnv::bound {
namespace detail {

RowForward forward_row(const Case& c, const ModelConstants& k, const RowTerms& r,
                       std::int64_t b, std::int64_t h, const double* exact_out) {
  const Shape& s = c.problem.shape;
  const std::int64_t hk = h / c.problem.group();
  const std::size_t n = r.keys.size();
  RowForward f;
  f.out.assign(static_cast<std::size_t>(s.Dv), 0.0);
  f.range.assign(static_cast<std::size_t>(s.Dv), 0.0);
  if (n == 0 && !r.has_sink) {  // fully masked row: O = 0 and L = -inf exactly (SPEC); bound 0
    f.lse = 0;
    return f;
  }
  // The softmax's arithmetic and the numerator's (BOUND.md section 1, "Stages"; both are the
  // accumulator's u for an unstaged model).
  const double u = k.u_sm;
  const double u_num = k.u_num;
  const double nk = static_cast<double>(n);
  const double nb = static_cast<double>(k.nb);
  // An attention sink is one more term of the denominator, an exact logit with value 0: it
  // adds an addition to the denominator's sum (n_den terms) and a term to sigma, nothing to the
  // numerator (BOUND.md section 3, "Attention sinks").
  const double n_den = nk + (r.has_sink ? 1 : 0);
  // Roundings on a numerator path: the product (or P's division, naive), the n additions and
  // nb rescales, and one spare for the naive kernel's division; the denominator: n_den + nb.
  const double g_num = gamma(nk + nb + k.n_num_extra, u_num);
  const double g_den = gamma(n_den + nb, u);
  // Each weight: one exp, then up to nb rescale factors exp(m_old - m_new), each within u_exp.
  const double exp_chain = (1 + nb) * std::log1p(k.u_exp_sm);
  // Flushing (BOUND.md section 12, 0 otherwise): the exponent's subtraction and each of the nb
  // rescale arguments may flush, < min_normal each; the telescoping of section 2 then no
  // longer cancels those.
  const double arg_flush = (1 + nb) * k.mn_sm;
  std::vector<double> rho(n);
  double sigma = 0, delta_max = 0;
  for (std::size_t jj = 0; jj < n; ++jj) {
    if (below_double_range(r, jj)) continue;  // weight exactly 0 in the kernel too: no term
    // Argument error: the logit error, plus the subtraction of the running max, which
    // telescopes over the rescales to u (m_hat - t_hat) <= u (m - t + delta0 + dmax).
    const double delta = (r.delta0[jj] + u * (r.m - r.t[jj] + r.delta0[jj] + r.dmax) + arg_flush) * (1 + 2 * u);
    delta_max = std::max(delta_max, delta);
    rho[jj] = std::expm1(delta + exp_chain);
    sigma += r.P[jj] * rho[jj];
  }
  // The sink's argument error is the subtraction of the running max alone (its logit is exact).
  double rho_sink = 0;
  if (r.has_sink) {
    // Flushing: a subnormal sink is read as zero.
    const double sink_daz = daz_zeroed(r.sink, k.mn_sm) ? std::fabs(r.sink) : 0;
    const double delta = (u * (r.m - r.sink + r.dmax) + arg_flush + sink_daz) * (1 + 2 * u);
    delta_max = std::max(delta_max, delta);
    rho_sink = std::expm1(delta + exp_chain);
    sigma += r.P_sink * rho_sink;
  }
  // Underflow of a weight (exp, rescale products) is absolute: at most (exp_ulps + nb + 1) eta
  // per key, relative to a row sum >= exp(-dmax) (the max key's weight). Tiny; kept for rigour.
  const double under = (k.u_exp_sm / (2 * u) + nb + 1) * k.eta_sm * std::exp(r.dmax);
  const double sigma_all = sigma + n_den * under;
  const double den = 1 - sigma_all - g_den * (1 + sigma_all);
  // kappa: how far the weights of the "weighted average" view can sum away from 1 (the cap).
  // gamma_n >= 1 once n u >= 1/2 (n + nb past ~1024 keys for an f16 accumulator): then nothing
  // bounds how far the sum strays, and the cap is infinite, not the negative number
  // 1 / (1 - gamma) - 1 would give.
  const double kappa = g_den < 1 ? (1 + k.u_p) * (1 + g_num) / (1 - g_den) - 1 : std::numeric_limits<double>::infinity();
  const double floor_abs = (2 * n_den + 2 * nb + 8) * k.eta_acc * std::exp(r.dmax);

  // The sums over keys, per output column: walked key by key (rows of v are contiguous), each
  // column's sum still in key order, so every term is the double it was column by column.
  const std::size_t dv = static_cast<std::size_t>(s.Dv);
  std::vector<double> t1s(dv), t2s(dv), t4s(dv), max_devs(dv), t_unders(dv), t_dazs(dv);
  for (std::size_t jj = 0; jj < n; ++jj) {
    if (below_double_range(r, jj)) continue;  // not in the kernel's weighted average either
    const double* vr = c.v.data() + c.vi(b, hk, r.keys[jj], 0);
    const double w1 = r.P[jj] * rho[jj], w2 = r.P[jj] * (1 + rho[jj]);
    for (std::size_t d = 0; d < dv; ++d) {
      const double dev = std::fabs(vr[d] - exact_out[d]);
      t1s[d] += w1 * dev;
      t2s[d] += w2 * std::fabs(vr[d]);
      t_unders[d] += under * dev;
      max_devs[d] = std::max(max_devs[d], dev);
    }
    // Flushing: a subnormal v is read as zero, dropping its term of the numerator; in the
    // weighted-average view (the cap) it moves that key's value by |v|.
    if (k.flush)
      for (std::size_t d = 0; d < dv; ++d)
        if (daz_zeroed(vr[d], k.mn_pv)) {
          t_dazs[d] += w2 * std::fabs(vr[d]);
          max_devs[d] = std::max(max_devs[d], std::fabs(vr[d] - exact_out[d]) + std::fabs(vr[d]));
        }
    // P rounded to p_dtype: below its normal range the error is absolute, eta_p / 2.
    if (k.eta_p > 0 && r.P[jj] * (1 - rho[jj] - g_num) < k.min_normal_p)
      for (std::size_t d = 0; d < dv; ++d) t4s[d] += 0.5 * k.eta_p * std::fabs(vr[d]);
  }

  for (std::size_t d = 0; d < dv; ++d) {
    const double O = exact_out[d];
    double t1 = t1s[d], t2 = t2s[d], t4 = t4s[d] * (1 + g_num), max_dev = max_devs[d], t_under = t_unders[d];
    const double t_daz = t_dazs[d];
    if (r.has_sink) {  // the sink as a key of value 0: |v - O| = |O|, |v| = 0
      t1 += r.P_sink * rho_sink * std::fabs(O);
      t_under += under * std::fabs(O);
      max_dev = std::max(max_dev, std::fabs(O));
    }
    const double num = t1 + t_under + (k.u_p + g_num + k.u_p * g_num) * t2 +
                       g_den * (1 + sigma_all) * std::fabs(O) + t4;
    // The dropped terms carry the numerator's roundings like any other (0 without flushing).
    // (Guarded: g_num may be +inf, and inf * 0 would be NaN.)
    const double num_daz = t_daz > 0 ? (1 + k.u_p) * (1 + g_num) * t_daz : 0;
    double bnd = std::numeric_limits<double>::infinity();
    if (den > 0) bnd = (1 + u_num) * (num + num_daz) / den + u_num * std::fabs(O);
    const double cap = std::isinf(kappa) ? kappa
                                         : (1 + u_num) * ((1 + kappa) * max_dev + kappa * std::fabs(O) + t4) + u_num * std::fabs(O);
    // Flushing: the final division's flush and the output rounding's (which the acceptance
    // rule's ulp_out / 2 does not cover: a flushed output errs by < min_normal(out)), each only
    // where the value can lie below that min_normal: |O| - bound < mn (0 without flushing).
    const double b0 = std::min(bnd, cap) + floor_abs;
    const double div_flush = std::fabs(O) - b0 < k.mn_pv ? k.mn_pv : 0;
    const double out_flush = std::fabs(O) - (b0 + div_flush) < k.mn_out ? k.mn_out : 0;
    f.out[static_cast<std::size_t>(d)] = (b0 + div_flush + out_flush) * r.inflation;
    f.range[static_cast<std::size_t>(d)] = max_dev;
  }

  // LSE: L_hat = fl(m_hat + fl(log l_hat)), log l_hat + m_hat = L + log(1 + kappa_L).
  double lg = std::numeric_limits<double>::infinity();
  const double kl = sigma_all + g_den * (1 + sigma_all);
  if (kl < 1) lg = -std::log1p(-kl);
  // Weighted-average view: every weight's factor lies within exp(+-(delta + exp_chain)), so
  // the log of their weighted mean does too (always finite).
  lg = std::min(lg, delta_max + exp_chain + n_den * under - std::log1p(-std::min(g_den, 0.5)));
  // |log l_hat| <= (L - m) + dmax + lg; the log rounds within u_exp, the final add within u.
  const double log_mag = (r.L - r.m) + r.dmax + lg;
  const double after_log = lg + k.u_exp_sm * log_mag;
  // Flushing: the log's and the addition's flushes, m_hat read as zero when subnormal (< min_normal
  // each), and the output rounding's flush where |L| may lie below min_normal(out).
  const double lse_flush = 3 * k.mn_sm + (std::fabs(r.L) - after_log < k.mn_out ? k.mn_out : 0);
  f.lse = ((after_log + u * (std::fabs(r.L) + after_log)) * (1 + 2 * u) + lse_flush) * r.inflation;
  return f;
}

void require_outputs(const Case& c, const Outputs& e, bool backward) {
  const Shape& s = c.problem.shape;
  auto need = [](const std::vector<double>& v, std::int64_t n, const char* what) {
    if (static_cast<std::int64_t>(v.size()) != n)
      throw InputError(std::string("bound: exact ") + what + " has " + std::to_string(v.size()) +
                       " elements, the problem needs " + std::to_string(n));
  };
  need(e.out, out_elements(s), "out");
  need(e.lse, lse_elements(s), "lse");
  if (backward) {
    if (!c.has_dout()) throw InputError("backward_bound: the case has no dout");
    need(e.dq, q_elements(s), "dq");
    need(e.dk, k_elements(s), "dk");
    need(e.dv, v_elements(s), "dv");
    if (c.problem.has_sinks) need(e.dsinks, s.Hq, "dsinks");
  }
}

}  // namespace detail

Bounds forward_bound(const Case& c, const Outputs& exact, const PrecisionModel& m) {
  detail::require_outputs(c, exact, false);
  const Shape& s = c.problem.shape;
  const detail::ModelConstants k = detail::constants_of(c, m);
  Bounds out;
  out.out.assign(exact.out.size(), 0.0);
  out.lse.assign(exact.lse.size(), 0.0);
  out.out_range.assign(exact.out.size(), 0.0);
  // Rows are independent: one parallel task per (b, h, i).
  parallel_for(s.B * s.Hq * s.Tq, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t row = begin; row < end; ++row) {
        const std::int64_t i = row % s.Tq, h = (row / s.Tq) % s.Hq, b = row / (s.Tq * s.Hq);
        const std::size_t li = c.li(b, h, i);
        const detail::RowTerms r = detail::row_terms(c, k, b, h, i, exact.lse[li]);
        const detail::RowForward f =
            detail::forward_row(c, k, r, b, h, exact.out.data() + c.oi(b, h, i, 0));
        out.lse[li] = f.lse;
        std::copy(f.out.begin(), f.out.end(), out.out.begin() + static_cast<std::ptrdiff_t>(c.oi(b, h, i, 0)));
        std::copy(f.range.begin(), f.range.end(), out.out_range.begin() + static_cast<std::ptrdiff_t>(c.oi(b, h, i, 0)));
    }
  }, 0, 8);
  return out;
}

}  // namespace attnv::bound
