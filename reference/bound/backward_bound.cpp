// The backward bound (BOUND.md section 5): a FlashAttention-2 style backward that recomputes
// P_hat = exp(t_hat - L_hat) from its own LSE, forms D_hat = rowsum(dO * O_hat) from its own
// rounded output, dP_hat = dO V^T, dS_hat = P_hat (dP_hat - D_hat) [times the softcap's
// derivative], optionally rounds P and dS to p_dtype, then dV = P^T dO, dQ = scale dS K,
// dK = scale dS^T Q, summing over the G query heads of a KV head; with sinks, dsinks_h = -sum over
// the rows of head h of P_sink_hat D_hat, P_sink_hat = exp(s_h - L_hat) (section 5.7).
#include <algorithm>
#include <cmath>

#include "problem/error.h"
#include "reference/bound/bound.h"
#include "reference/bound/forward_row.h"
#include "util/parallel.h"

namespace attnv::bound {

Bounds backward_bound(const Case& c, const Outputs& exact, const PrecisionModel& m) {
  detail::require_outputs(c, exact, true);
  using detail::gamma;
  using detail::daz_zeroed;
  const Problem& p = c.problem;
  const Shape& s = p.shape;
  const std::int64_t G = p.group();
  // A staged model (BOUND.md section 1, "Stages"): the derivation below has one dtype; the
  // least precise stage's covers every stage.
  const detail::ModelConstants k = detail::constants_of(c, m.staged() ? m.unstaged() : m);
  const double u = k.u;
  const double u64 = std::ldexp(1.0, -53);
  const double scale = std::fabs(p.effective_scale());
  const double u_out = unit_roundoff(m.out);
  // Rounding counts: D and dP are Dv-term dots; dQ sums Tk terms, dK and dV sum G*Tq terms;
  // dQ and dK also take fl(scale) and one multiply.
  const double g_d = gamma(static_cast<double>(s.Dv + 1), u);
  const double g_dp = gamma(static_cast<double>(k.n_dot_v), u);
  const double g_q = gamma(static_cast<double>(s.Tk + 2), u);
  const double g_k = gamma(static_cast<double>(G * s.Tq + 2), u);
  const double g_v = gamma(static_cast<double>(G * s.Tq + 1), u);
  // Underflow of a recomputed P is absolute: exp within exp_ulps ulps of eta. A kernel that
  // flushes (BOUND.md section 12) may also flush that result: one more unit, and eta is then
  // 2 min_normal.
  const double exp_under_ulps = k.u_exp / (2 * u) + (k.flush ? 1 : 0);  // P_hat's own underflow, in eta
  const double p_under = exp_under_ulps * k.eta;
  // |d/dx (1 - tanh^2 x)| = |2 tanh x sech^2 x| <= 4 / (3 sqrt 3) < 0.7699.
  const double dtanh2 = 0.7699;

  // The product of two nonnegative error terms, either of which may be +inf ("unbounded": a
  // gamma_n with n u >= 1, an exp factor beyond double): 0 when either is 0, since a zero term
  // errs by nothing, where inf * 0 would give a NaN bound (which the comparison refuses as
  // attnv's own error: BoundNaN tests).
  auto times = [](double a, double b) { return a == 0 || b == 0 ? 0.0 : a * b; };

  // Underflow (section 5.6): a product rounded in the accumulator's subnormal range errs by up to
  // eta / 2 absolutely, whatever its relative error. These terms are collected in units of eta
  // (so their double evaluation never underflows, even for f64) and added at the end.
  std::vector<double> uq(exact.dq.size(), 0.0), uk(exact.dk.size(), 0.0), uv(exact.dv.size(), 0.0);
  // Flushing: each term of a dQ, dK, dV sum also adds one accumulation step whose running sum
  // may be read as zero and whose result may flush (section 12): two more units.
  const double sum_flushes = k.flush ? 2 : 0;

  Bounds out;
  out.out.assign(exact.out.size(), 0.0);
  out.lse.assign(exact.lse.size(), 0.0);
  out.dq.assign(exact.dq.size(), 0.0);
  out.dk.assign(exact.dk.size(), 0.0);
  out.dv.assign(exact.dv.size(), 0.0);
  out.out_range.assign(exact.out.size(), 0.0);
  // Per row (lse order): the bound of its term of dsinks and its underflow count (section 5.7).
  const bool sinks = p.has_sinks;
  std::vector<double> sink_err(sinks ? exact.lse.size() : 0, 0.0), sink_under(sink_err.size(), 0.0);
  const double g_s = gamma(static_cast<double>(s.B * s.Tq + 1), u);

  // One task per (b, KV head): dK and dV of a KV head collect from all its G*Tq query rows.
  parallel_for(s.B * s.Hkv, [&](std::int64_t begin, std::int64_t end) {
    std::vector<double> bo(static_cast<std::size_t>(s.Dv));
    for (std::int64_t task = begin; task < end; ++task) {
      const std::int64_t b = task / s.Hkv, hk = task % s.Hkv;
      for (std::int64_t h = hk * G; h < (hk + 1) * G; ++h)
        for (std::int64_t i = 0; i < s.Tq; ++i) {
          const std::size_t li = c.li(b, h, i);
          const double* O = exact.out.data() + c.oi(b, h, i, 0);
          const double* dO = c.dout.data() + c.oi(b, h, i, 0);
          const detail::RowTerms r = detail::row_terms(c, k, b, h, i, exact.lse[li]);
          const detail::RowForward f = detail::forward_row(c, k, r, b, h, O);
          out.lse[li] = f.lse;
          std::copy(f.out.begin(), f.out.end(), out.out.begin() + static_cast<std::ptrdiff_t>(c.oi(b, h, i, 0)));
          std::copy(f.range.begin(), f.range.end(), out.out_range.begin() + static_cast<std::ptrdiff_t>(c.oi(b, h, i, 0)));
          if (r.keys.empty()) continue;  // no visible key: zero gradients, bound 0
          // The kernel's O passed the acceptance rule, so |O_hat - O| <= bo (section 5.2).
          double D = 0, d_abs = 0, d_err = 0, d_drop = 0;
          for (std::int64_t d = 0; d < s.Dv; ++d) {
            const double od = std::fabs(O[d]), bd = f.out[static_cast<std::size_t>(d)];
            const double worst = (od + bd) * (1 + 4 * u64) * (1 + 2 * u_out);
            // (An unbounded forward output, bd = +inf, leaves O_hat unbounded: no ulp of it.)
            bo[static_cast<std::size_t>(d)] = std::isinf(bd) ? bd : bd + u64 * od + 0.5 * ulp(m.out, worst);
            D += dO[d] * O[d];
            d_abs += std::fabs(dO[d]) * od;
            d_err += times(std::fabs(dO[d]), bo[static_cast<std::size_t>(d)]);
            // Flushing: a subnormal dO read as zero drops the product, |dO| |O_hat| <= |dO| (|O| + bo);
            // an O_hat that may be subnormal (|O| - bo < mn) read as zero drops < |dO| mn.
            if (k.flush) {
              const double o_hat = od + bo[static_cast<std::size_t>(d)];
              if (daz_zeroed(dO[d], k.mn)) d_drop += std::fabs(dO[d]) * o_hat;
              else if (od - bo[static_cast<std::size_t>(d)] < k.mn) d_drop += std::fabs(dO[d]) * std::min(o_hat, k.mn);
            }
          }
          // Flushing: the dropped products and two flushes per accumulation step (0 otherwise).
          const double D_flush = k.flush ? d_drop + 2 * static_cast<double>(s.Dv + 1) * k.mn : 0;
          const double e_D = times(1 + g_d, d_err + D_flush) + times(g_d, d_abs);
          const double bL = f.lse;
          if (sinks) {
            // Section 5.7: the row's term -P_sink_hat D_hat. The sink's logit is exact, so
            // P_sink_hat's argument errs by the LSE's error and the subtraction alone.
            const double Ps = r.P_sink;
            const double D_abs = std::fabs(D) + 2 * static_cast<double>(s.Dv + 2) * u64 * d_abs;
            // Flushing: the subtraction's flush, and a subnormal sink read as zero.
            const double sink_flush = k.flush ? k.mn + (daz_zeroed(r.sink, k.mn) ? std::fabs(r.sink) : 0) : 0;
            const double arg = (bL + u * (r.L - r.sink + bL) + sink_flush) * (1 + 2 * u);
            const double e_Ps = times(Ps == 0 ? 0x1p-1074 : Ps, std::expm1(arg + std::log1p(k.u_exp))) + p_under;
            double e_t = times(e_Ps, D_abs) * (1 + u) + times(Ps + e_Ps, e_D) * (1 + u) + u * Ps * D_abs;
            if (k.u_p > 0) e_t += k.u_p * (Ps * D_abs + e_t) + (Ps * D_abs - e_t < k.min_normal_p ? 0.5 * k.eta_p : 0);
            sink_err[li] = (times(e_t, 1 + g_s) + times(g_s, Ps * D_abs)) * r.inflation;
            sink_under[li] = exp_under_ulps * (D_abs + e_D) + 1 + sum_flushes;
          }
          for (std::size_t jj = 0; jj < r.keys.size(); ++jj) {
            // P_hat and dS_hat exactly 0 (logit_error.h): every product with them is an exact 0.
            if (below_double_range(r, jj)) continue;
            const std::int64_t j = r.keys[jj];
            const double P = r.P[jj];
            double dP = 0, B = 0, B_drop = 0;
            for (std::int64_t d = 0; d < s.Dv; ++d) {
              const double vv = c.v[c.vi(b, hk, j, d)];
              dP += dO[d] * vv;
              B += std::fabs(dO[d] * vv);
              if (daz_zeroed(dO[d], k.mn) || daz_zeroed(vv, k.mn)) B_drop += std::fabs(dO[d] * vv);
            }
            // Flushing: dP's dropped products and two flushes per accumulation step.
            const double dP_flush =
                k.flush ? times(B_drop, 1 + g_dp) + 2 * static_cast<double>(k.n_dot_v) * k.mn : 0;
            // |g| evaluated in double, rounded up by its own evaluation error.
            const double g_abs = std::fabs(dP - D) + 2 * static_cast<double>(s.Dv + 2) * u64 * (B + d_abs);
            // Section 5.1: P_hat's exponent errs by the logit error, the LSE error, and the
            // subtraction's rounding; the exp adds u_exp.
            // (Flushing: the subtraction's flush, k.mn; 0 otherwise.)
            const double arg = (r.delta0[jj] + bL + u * (r.L - r.t[jj] + r.delta0[jj] + bL) + k.mn) * (1 + 2 * u);
            // (A visible key's weight that underflows in double, P == 0, is below 2^-1074, not
            // 0: the kernel's may be that times exp(arg), unbounded when arg is; 0 * inf was a
            // NaN bound.)
            const double P_err = P == 0 ? 0x1p-1074 : P;
            const double e_P = times(P_err, std::expm1(arg + std::log1p(k.u_exp))) + p_under;
            // Section 5.3: g_hat = fl(dP_hat - D_hat).
            // (Flushing: dP's flushes, and the subtraction's own, k.mn.)
            const double e_g = times(g_dp, B) + dP_flush + e_D + u * (g_abs + times(g_dp, B) + dP_flush + e_D) + k.mn;
            // Section 5.4: dS_hat = fl(P_hat g_hat).
            double e_S = times(e_P, g_abs) * (1 + u) + times(P + e_P, e_g) * (1 + u) + u * P * g_abs;
            double dS_abs = P * g_abs;
            if (p.softcap) {
              const double cap = *p.softcap;
              const double th = std::tanh(r.s[jj] / cap);
              const double dc = 1 - th * th;
              const double e_c = (dtanh2 * (r.delta_pre[jj] + u * std::fabs(r.s[jj]) * 1.01) / cap +
                                  2.01 * k.u_exp + 2.01 * u);
              // times(): a saturated tanh gives dc = 0 in double, and an unbounded e_S (an
              // unbounded P_hat) times it was a NaN bound (attnv fuzz, the core's avx512_bf16 path:
              // scale 5, |q|, |k| up to 1e3, softcap 6). The term e_c (dS_abs + e_S) keeps it
              // unbounded, as it must be: the kernel's own derivative need not be 0 there.
              e_S = (times(dc, e_S) + times(e_c, dS_abs + e_S)) * (1 + u) + u * dS_abs * dc;
              dS_abs *= dc;
            }
            double e_Pv = e_P;
            if (k.u_p > 0) {  // P and dS rounded to p_dtype before their products
              e_S += k.u_p * (dS_abs + e_S) + (dS_abs - e_S < k.min_normal_p ? 0.5 * k.eta_p : 0);
              e_Pv += k.u_p * (P + e_P) + (P - e_P < k.min_normal_p ? 0.5 * k.eta_p : 0);
            }
            const double infl = r.inflation;
            const double wq = scale * (times(e_S, 1 + g_q) + times(g_q, dS_abs)) * infl;
            const double wk = scale * (times(e_S, 1 + g_k) + times(g_k, dS_abs)) * infl;
            const double wv = (times(e_Pv, 1 + g_v) + times(g_v, P)) * infl;
            // dS_hat's underflow in eta: P_hat's (times |g_hat|), the product P g, the softcap's.
            const double s_under = exp_under_ulps * (g_abs + e_g) + 1 + (p.softcap ? 2 : 0);
            for (std::int64_t d = 0; d < s.Dk; ++d) {
              const double kd = std::fabs(c.k[c.ki(b, hk, j, d)]), qd = std::fabs(c.q[c.qi(b, h, i, d)]);
              out.dq[c.qi(b, h, i, d)] += times(wq, kd);
              out.dk[c.ki(b, hk, j, d)] += times(wk, qd);
              // + the product dS k itself, whose eta / 2 the scale multiplies when it is applied
              // last (BOUND.md 5.6; attnv fuzz found the core at 1.02x the bound with scale 14),
              // + the product scale dS, whose eta / 2 |k| multiplies when the scale is applied
              // first (FlashAttention-2's order: a correct f64 kernel failed R2 at 2.56x a bound
              // that counted only the first order, dK 4.37e-321 vs 4.03e-321 with |q| 147.5).
              uq[c.qi(b, h, i, d)] += times(s_under * scale, kd) + std::max(1.0, scale) + kd + sum_flushes;
              uk[c.ki(b, hk, j, d)] += times(s_under * scale, qd) + std::max(1.0, scale) + qd + sum_flushes;
              // Flushing: a subnormal k (q) read as zero drops the whole product dS_hat k.
              if (k.flush && daz_zeroed(kd, k.mn))
                out.dq[c.qi(b, h, i, d)] += times(scale * (dS_abs + e_S) * kd, 1 + g_q) * infl;
              if (k.flush && daz_zeroed(qd, k.mn))
                out.dk[c.ki(b, hk, j, d)] += times(scale * (dS_abs + e_S) * qd, 1 + g_k) * infl;
            }
            for (std::int64_t d = 0; d < s.Dv; ++d) {
              out.dv[c.vi(b, hk, j, d)] += times(wv, std::fabs(dO[d]));
              uv[c.vi(b, hk, j, d)] += exp_under_ulps * std::fabs(dO[d]) + 1 + sum_flushes;
              // Flushing: a subnormal dO read as zero drops P_hat dO.
              if (k.flush && daz_zeroed(dO[d], k.mn))
                out.dv[c.vi(b, hk, j, d)] += times((P + e_Pv) * std::fabs(dO[d]), 1 + g_v) * infl;
            }
          }
        }
    }
  }, 0, 1);
  // The sums above are of nonnegative terms: their double evaluation errs by at most
  // gamma64_(G*Tq + Tk) relative, covered by one more factor.
  const double tail = 1 + 2 * gamma(static_cast<double>(G * s.Tq + s.Tk + 4), u64);
  for (auto* v : {&out.dq, &out.dk, &out.dv})
    for (double& x : *v) x *= tail;
  // eta (2 U + 4) for every element with at least one visible term (U >= 1 there): the kernel's
  // underflows (U, at eta / 2 each, and the scale's multiply), plus the double evaluation of
  // this bound, whose products of subnormal size lose at most eta / 2 each, a few per term
  // (f64 only: f32's subnormals are normal doubles). Elements without a term keep bound 0.
  // Flushing: + the output rounding's flush, where the value may lie below min_normal(out).
  auto add_floor = [&](std::vector<double>& bnd, const std::vector<double>& under, const std::vector<double>& ex) {
    for (std::size_t e = 0; e < bnd.size(); ++e)
      if (under[e] > 0) {
        const double b = bnd[e] + k.eta * (2 * under[e] + 4);
        bnd[e] = b + (std::fabs(ex[e]) - b < k.mn_out ? k.mn_out : 0);
      }
  };
  add_floor(out.dq, uq, exact.dq);
  add_floor(out.dk, uk, exact.dk);
  add_floor(out.dv, uv, exact.dv);
  if (sinks) {
    out.dsinks.assign(static_cast<std::size_t>(s.Hq), 0.0);
    std::vector<double> us(out.dsinks.size(), 0.0);
    for (std::int64_t b = 0; b < s.B; ++b)
      for (std::int64_t h = 0; h < s.Hq; ++h)
        for (std::int64_t i = 0; i < s.Tq; ++i) {
          out.dsinks[static_cast<std::size_t>(h)] += sink_err[c.li(b, h, i)];
          us[static_cast<std::size_t>(h)] += sink_under[c.li(b, h, i)];
        }
    const double tail_s = 1 + 2 * gamma(static_cast<double>(s.B * s.Tq + 4), u64);
    for (double& x : out.dsinks) x *= tail_s;
    add_floor(out.dsinks, us, exact.dsinks);
  }
  return out;
}

}  // namespace attnv::bound
