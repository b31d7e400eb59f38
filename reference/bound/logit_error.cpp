#include "reference/bound/logit_error.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "problem/visibility.h"

namespace attnv::bound::detail {

double gamma(double n, double u) {
  const double nu = n * u;
  return nu < 1 ? nu / (1 - nu) : std::numeric_limits<double>::infinity();
}

namespace {
double smallest_subnormal(DType t) {
  return std::ldexp(1.0, min_exponent(t) - mantissa_bits(t) + 1);
}
}  // namespace

ModelConstants constants_of(const Case& c, const PrecisionModel& m) {
  const Shape& s = c.problem.shape;
  ModelConstants k;
  k.u = unit_roundoff(m.accum);
  // An error of e ulps is at most 2 e u relative: ulp(x) <= 2 u |x|.
  k.u_exp = 2 * m.exp_ulps * k.u;
  const bool p_rounded = m.p_dtype != m.accum;
  k.u_p = p_rounded ? unit_roundoff(m.p_dtype) : 0;
  k.eta = smallest_subnormal(m.accum);
  k.eta_p = p_rounded ? smallest_subnormal(m.p_dtype) : 0;
  k.min_normal_p = p_rounded ? min_normal(m.p_dtype) : 0;
  // Products of two storage values are exact in the accumulator when 2 p_storage <= p_accum
  // (f16: 22 <= 24, bf16: 16 <= 24); then a D-term dot product rounds D - 1 times, and D is one
  // spare (NUMERICS' count). Otherwise each product rounds once more: D + 1.
  const bool exact_products = 2 * mantissa_bits(m.storage) <= mantissa_bits(m.dot_dtype());
  k.n_dot_k = s.Dk + (exact_products ? 0 : 1);
  k.n_dot_v = s.Dv + (exact_products ? 0 : 1);
  k.nb = m.block > 0 ? (s.Tk + m.block - 1) / m.block : 0;
  // The stages (BOUND.md section 1, "Stages").
  k.u_dot = unit_roundoff(m.dot_dtype());
  k.u_score = unit_roundoff(m.score_dtype());
  k.u_exp_score = 2 * m.exp_ulps * k.u_score;
  k.u_sm = unit_roundoff(m.softmax_dtype());
  k.u_sm_in = k.u_sm > k.u_score ? k.u_sm : 0;
  k.u_exp_sm = 2 * m.exp_ulps * k.u_sm;
  // The numerator mixes P (formed in the softmax dtype; the naive kernel's division e / l
  // rounds there) with the P.V accumulator: the less precise of the two covers both.
  k.u_num = std::max(k.u_sm, unit_roundoff(m.pv_dtype()));
  k.eta_sm = smallest_subnormal(m.softmax_dtype());
  k.eta_acc = std::max(k.eta_sm, smallest_subnormal(m.pv_dtype()));
  // A P.V dtype other than the softmax's converts P and v before the product: two more.
  k.n_num_extra = m.pv_dtype() == m.softmax_dtype() ? 2 : 4;
  if (m.flush_subnormals) {
    // BOUND.md section 12: a result that underflows becomes zero, an error < min_normal where
    // gradual underflow errs by <= eta / 2. Every count of underflowing operations below is
    // in units of eta / 2, so eta -> 2 min_normal keeps the counts and prices each at min_normal.
    k.flush = true;
    k.eta = 2 * min_normal(m.accum);
    if (p_rounded) k.eta_p = 2 * min_normal(m.p_dtype);
    k.eta_sm = 2 * min_normal(m.softmax_dtype());
    k.eta_acc = std::max(k.eta_sm, 2 * min_normal(m.pv_dtype()));
    k.mn = min_normal(m.accum);
    k.mn_dot = min_normal(m.dot_dtype());
    k.mn_score = min_normal(m.score_dtype());
    k.mn_sm = min_normal(m.softmax_dtype());
    k.mn_pv = min_normal(m.pv_dtype());
    k.mn_out = min_normal(m.out);
  }
  return k;
}

RowTerms row_terms(const Case& c, const ModelConstants& k, std::int64_t b, std::int64_t h,
                   std::int64_t i, double exact_lse) {
  const Problem& p = c.problem;
  const Shape& s = p.shape;
  const std::int64_t hk = h / p.group();
  const double scale = p.effective_scale();
  RowTerms r;
  r.keys = visible_keys(c, b, h, i);
  r.L = exact_lse;
  const std::size_t n = r.keys.size();
  r.t.resize(n);
  r.P.resize(n);
  r.A.resize(n);
  r.delta0.resize(n);
  r.delta_pre.resize(n);
  r.s.resize(n);
  r.m = -std::numeric_limits<double>::infinity();
  // Scores: the dot product rounds n_dot_k times, then fl(scale) and the multiply: 2 more; in a
  // score dtype other than the dot's, those two and the dot's conversion round in it.
  const double g_score =
      k.u_dot == k.u_score
          ? gamma(static_cast<double>(k.n_dot_k + 2), k.u_dot)
          : (1 + gamma(static_cast<double>(k.n_dot_k), k.u_dot)) * (1 + gamma(3, k.u_score)) - 1;
  const double u_logit = std::max({k.u_dot, k.u_score, k.u_sm_in});
  double max_a = 0;
  const double* qr = c.q.data() + c.qi(b, h, i, 0);
  for (std::size_t jj = 0; jj < n; ++jj) {
    const std::int64_t j = r.keys[jj];
    const double* kr = c.k.data() + c.ki(b, hk, j, 0);
    double dot = 0, abs_dot = 0, dropped = 0;
    for (std::int64_t d = 0; d < s.Dk; ++d) {
      dot += qr[d] * kr[d];
      abs_dot += std::fabs(qr[d] * kr[d]);
    }
    // DAZ (section 12): a subnormal q or k is read as zero, dropping its product exactly.
    if (k.flush)
      for (std::int64_t d = 0; d < s.Dk; ++d)
        if (daz_zeroed(qr[d], k.mn_dot) || daz_zeroed(kr[d], k.mn_dot)) dropped += std::fabs(qr[d] * kr[d]);
    const double score = scale * dot;
    const double A = std::fabs(scale) * abs_dot;
    double t = score;
    // Flushing (section 12, 0 otherwise): the dropped products and, per accumulation step, a
    // flushed result and a flushed running sum (< min_normal each), all through the scale's
    // multiply (1 + g_score); then the multiply's and the conversion's own flushes.
    const double d_flush =
        k.flush ? std::fabs(scale) * (dropped + 2 * static_cast<double>(k.n_dot_k) * k.mn_dot) * (1 + g_score) +
                      2 * k.mn_score
                : 0;
    const double d_pre = g_score * A + d_flush;
    double d0 = d_pre;
    if (p.softcap) {
      // An error e in the score moves c tanh(s/c) by at most e times the largest sech^2 on
      // [y - e/c, y + e/c], y = s/c: at most e (tanh is 1-Lipschitz), and, once e/c <= |y|/2,
      // every z there has |z| >= |y|/2 and sech^2(z) <= 4 e^(-2|z|) <= 4 e^(-|y|) (the fast
      // reference's slope, reference/fast/row_softmax.cpp; 1.01 covers std::exp and |y| in
      // double; floored at 2^-1000, which 4 e^(-|y|) is below wherever std::exp underflows). The
      // score's error e: the dot and the scale (d_pre) and the division by c (u |s|). Carried
      // whole, a saturated tanh kept the full dot error (1.57 in ggml's tiled softcap path) and
      // passed an output of -0.0856 against an exact -0.1529 at 0.0235 of its allowance.
      // Then rounding c to the accumulator (|d(c tanh(s/c))/dc| <= |tanh(s/c)|), tanh itself and
      // the multiply by c add u + u_exp + u relative to |softcapped| <= min(|score_hat|, c).
      const double cap = std::fabs(*p.softcap);
      t = *p.softcap * std::tanh(score / *p.softcap);
      const double e_score = d_pre + k.u_score * A * (1 + g_score);
      const double y = std::fabs(score) / cap, dy = e_score / cap;
      const double slope = dy <= 0.5 * y ? std::max(std::min(1.0, 4 * std::exp(-y) * 1.01), 0x1p-1000) : 1.0;
      d0 = slope * e_score + (2 * k.u_score + k.u_exp_score) * std::min(A * (1 + g_score), cap);
      // Flushing: the division's and tanh's flushes (< min_normal in the argument or the
      // value) are multiplied by |c|; the multiply's is not.
      d0 += (2 * std::fabs(*p.softcap) + 1) * k.mn_score;
    }
    double bias = 0, alibi_abs = 0;
    if (p.has_bias) bias = c.bias[c.bi(b, h, i, j)];
    t += bias;
    // Adding the bias rounds once, relative to |t_hat| <= A (1 + g_score) + |bias|.
    d0 += k.u_score * (A * (1 + g_score) + std::fabs(bias));
    // Flushing: the addition's flush, and a subnormal bias read as zero.
    if (k.flush) d0 += k.mn_score + (daz_zeroed(bias, k.mn_score) ? std::fabs(bias) : 0);
    if (p.has_alibi) {
      // ALiBi -m_h |j - p_i| as the kernel forms it (a score step): the product rounds once
      // (u |alibi|; the distance is exact in the accumulator), the subtraction once, relative to
      // |t_hat| <= A (1 + g_score) + |bias| + |alibi|.
      const std::int64_t dist = j - query_position(c, b, i);
      const double alibi = -c.alibi[static_cast<std::size_t>(h)] * static_cast<double>(dist < 0 ? -dist : dist);
      t += alibi;
      alibi_abs = std::fabs(alibi);
      d0 += k.u_score * (2 * alibi_abs + A * (1 + g_score) + std::fabs(bias));
      // Flushing: the product's and the subtraction's flushes; a subnormal slope read as zero
      // drops the whole term.
      if (k.flush)
        d0 += 2 * k.mn_score + (daz_zeroed(c.alibi[static_cast<std::size_t>(h)], k.mn_score) ? alibi_abs : 0);
    }
    // The logit's conversion into a softmax dtype narrower than the score's (0 otherwise).
    d0 += k.u_sm_in * (A * (1 + g_score) + std::fabs(bias) + alibi_abs);
    d0 += k.mn_sm;  // flushing: that conversion's flush (0 without flushing)
    r.s[jj] = score;
    r.t[jj] = t;
    r.A[jj] = A;
    r.delta_pre[jj] = d_pre;
    r.delta0[jj] = d0 * (1 + 4 * u_logit);  // second-order products of the u-terms above
    if (t == -std::numeric_limits<double>::infinity()) {
      // A logit below -DBL_MAX (a huge bias or ALiBi term; docs/semantics.md: its weight is 0).
      // Every term above is relative to the logit's parts, so the kernel's logit is below
      // -2^1023 too, and the reference computes such a row only when its largest logit is above
      // -2^1022 (reference/fast/row_softmax.cpp): the kernel's weight exp(t_hat - m_hat) is then
      // an exact 0, as P is. No error to carry, and none to spread over the row through dmax.
      r.delta0[jj] = 0;
      continue;
    }
    r.m = std::max(r.m, t);
    max_a = std::max(max_a, A + std::fabs(bias) + alibi_abs);
  }
  if (p.has_sinks) {
    r.has_sink = true;
    r.sink = c.sinks[static_cast<std::size_t>(h)];
    r.m = std::max(r.m, r.sink);
    r.P_sink = std::exp(r.sink - r.L);
    max_a = std::max(max_a, std::fabs(r.sink));
  }
  r.dmax = 0;
  for (std::size_t jj = 0; jj < n; ++jj) {
    r.P[jj] = std::exp(r.t[jj] - r.L);
    r.dmax = std::max(r.dmax, r.delta0[jj]);
  }
  // Double evaluation (BOUND.md section 8): t_ij carries at most gamma64_(Dk+3) (A + |bias|)
  // absolute error, hence P a relative error of about that times (1 + |L|) contributions; the
  // sums over keys add gamma64_Tk. 8x that, plus 2^-40, bounds the relative error of every
  // computed bound term with a wide margin.
  const double u64 = std::ldexp(1.0, -53);
  r.inflation = 1 + std::ldexp(1.0, -40) +
                8 * static_cast<double>(s.Dk + s.Dv + s.Tk + 8) * u64 *
                    (1 + max_a + (std::isfinite(r.L) ? std::fabs(r.L) : 0));
  return r;
}

}  // namespace attnv::bound::detail
