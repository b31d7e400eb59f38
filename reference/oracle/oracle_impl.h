#pragma once
// The oracle's arithmetic, templated on the real type (private: included only through
// oracle_run.h by the two backend .cpp files, and by the oracle's own tests, to keep
// Boost.Multiprecision in few translation units). Written from SPEC alone.
//
// Per row (b, h, i), with kv head h / G and the visible keys of the ReadPlan:
//   r_j = scale q_i . k_j;  t_j = c tanh(r_j / c) (softcap c) or r_j;  t_j += bias_ij
//   m = max_j t_j,  e_j = exp(t_j - m),  S = sum e_j,  L = m + log S,  P_j = e_j / S,
//   O = sum_j P_j v_j.
// Backward of sum(dO * O):
//   dV_j += P_j dO_i;  dP_j = dO_i . v_j;  D = sum_j P_j dP_j;  dS_j = P_j (dP_j - D)
//   (evaluated as P_j (dP_j sum_{l!=j} P_l - sum_{l!=j} P_l dP_l): its rounding error then
//   scales with the other keys' weight, not with |dP_j|, which matters when P_j ~ 1);
//   dR_j = scale dS_j sech^2(r_j / c) with a softcap, else scale dS_j;
//   dQ_i = sum_j dR_j k_j;  dK_j += dR_j q_i  (summed over the G query heads that read it).
// A row without visible keys: O = 0, L = -inf (with an attention sink s_h: L = s_h), no gradient
// contribution. A sink is a term exp(s_h - m) of the row's sum with no value (docs/semantics.md):
// then sum_l P_l = 1 - P_sink, which the dS form below carries as P_sink + sum_{l!=n} P_l, and
// the sink's gradient is dsinks_h = -sum over the rows (b, i) of head h of P_sink D_i, with radius
// eps P_sink sum_l P_l mdP_l per row (eps as for dq; mdP below).
//
// Error radius (optional): a first-order bound on |computed - exact| for every element, from
// the standard model |fl(a op b) - a op b| <= u |a op b| with u = numeric_limits<Real>::epsilon()
// (twice the unit roundoff, so it also covers cpp_bin_float's exp/log/tanh, which are accurate
// to a couple of ulps; MPFR's are correctly rounded), and gamma_n = n u for sums of n terms:
//   logit:   e_t = (Dk + 2) u scale sum_d |q_d k_d|  +  8 u (|t| + |bias| + c)
//   P_j relative:           eps_P = 2 max_j e_t + (Tk + 16) u
//                           (e^(t_j - m) / S: t_j and the maximum each off by e_t; exp, sum, divide)
//   row relative:           eps = eps_P + (Dk + Dv + Tk + G Tq + 32) u + 2 max_j e_r / c
//                           (e_r = the part of e_t before the softcap: sech^2's relative
//                            sensitivity to its argument is 2 |tanh| <= 2)
//   out_d:   eps_P' sum_j P_j |v_jd|          with eps_P' = eps_P + (Tk + 2) u
//   lse:     max e_t + (8 (|m| + |log S|) + Tk + 8) u
//   dq_d:    eps sum_j mR_j |k_jd|,  dk_jd: sum over rows of eps mR_j |q_d|,
//   dv_jd:   sum over rows of eps P_j |dO_d|,
//   where, with mdP_j = sum_d |dO_d v_jd|,
//   mR_j = scale sech^2_j P_j (mdP_j sum_{l!=j} P_l + sum_{l!=j} P_l mdP_l) bounds |dR_j| together
//   with the terms its evaluation cancels.
// Every radius is doubled to cover the second-order terms (products of two errors ~1e-190).
// The radius matters only where cancellation leaves a result below ~1e-90 of its terms (an
// exactly zero gradient computed as +-1e-102): there the double returned may not be the
// correctly rounded one, and the element is counted as unresolved.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "problem/case.h"
#include "reference/oracle/oracle_plan.h"
#include "reference/oracle/oracle_visibility.h"
#include "util/parallel.h"

namespace attnv::reference::oracle_detail {

// Input values converted to Real, in the dense layout of Case. Values the plan does not read
// stay 0 (so NaN stored in hidden positions is never even converted).
template <class Real>
struct RealInputs {
  std::vector<Real> q, k, v, bias, sinks, dout;
};

// Outputs in Real, before rounding: lse is -inf for rows without visible keys. The r_* vectors
// hold the error radii, when asked for (else empty).
template <class Real>
struct RealOutputs {
  std::vector<Real> out, lse, dq, dk, dv, dsinks;
  std::vector<Real> r_out, r_lse, r_dq, r_dk, r_dv, r_dsinks;
};

template <class Real>
RealInputs<Real> to_real_inputs(const Case& c, const ReadPlan& plan, bool with_dout) {
  const Shape& s = c.problem.shape;
  RealInputs<Real> in;
  in.q.resize(c.q.size());
  in.k.resize(c.k.size());
  in.v.resize(c.v.size());
  in.bias.resize(c.bias.size());
  if (with_dout) in.dout.resize(c.dout.size());
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t h = 0; h < s.Hq; ++h)
      for (std::int64_t i = 0; i < s.Tq; ++i) {
        if (plan.visible(b, h, i).empty()) continue;
        for (std::int64_t d = 0; d < s.Dk; ++d) in.q[c.qi(b, h, i, d)] = c.q[c.qi(b, h, i, d)];
        if (with_dout)
          for (std::int64_t d = 0; d < s.Dv; ++d) in.dout[c.oi(b, h, i, d)] = c.dout[c.oi(b, h, i, d)];
      }
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t kvh = 0; kvh < s.Hkv; ++kvh)
      for (std::int64_t j = 0; j < s.Tk; ++j) {
        if (!plan.key_read[static_cast<std::size_t>((b * s.Hkv + kvh) * s.Tk + j)]) continue;
        for (std::int64_t d = 0; d < s.Dk; ++d) in.k[c.ki(b, kvh, j, d)] = c.k[c.ki(b, kvh, j, d)];
        for (std::int64_t d = 0; d < s.Dv; ++d) in.v[c.vi(b, kvh, j, d)] = c.v[c.vi(b, kvh, j, d)];
      }
  for (std::size_t at = 0; at < plan.bias_read.size(); ++at)
    if (plan.bias_read[at]) in.bias[at] = c.bias[at];
  in.sinks.assign(c.sinks.begin(), c.sinks.end());
  return in;
}

// The scalars of the problem in Real. scale is Problem::effective_scale(), the double a kernel
// is given (for the default, 1.0 / sqrt(Dk) evaluated in double: docs/semantics.md, "The default
// scale"), taken as exact.
template <class Real>
struct RowParams {
  std::int64_t Dk = 0, Dv = 0, Tk = 0, G = 1, Tq = 0;
  Real scale;
  std::optional<Real> softcap;
  bool has_bias = false;
  bool with_radius = false;
  Real u;  // numeric_limits<Real>::epsilon()

  RowParams(const Problem& p, bool radius)
      : Dk(p.shape.Dk), Dv(p.shape.Dv), Tk(p.shape.Tk), G(p.group()), Tq(p.shape.Tq),
        scale(p.effective_scale()), has_bias(p.has_bias || p.has_alibi), with_radius(radius),
        u(std::numeric_limits<Real>::epsilon()) {
    if (p.softcap) softcap = Real(*p.softcap);
  }
};

// The additive term of each visible key of row (b, h, i) into `out`: the bias (bias_at(n), read
// only when the problem has one) minus ALiBi's m_h |j - p_i| (docs/semantics.md, "ALiBi"). Exact:
// a slope of 53 bits times a distance below 2^61 fits the oracle's precision.
template <class Real, class BiasAt>
void row_additive_terms(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i,
                        const std::vector<std::int64_t>& keys, BiasAt bias_at, std::vector<Real>& out) {
  const Problem& p = c.problem;
  out.assign(keys.size(), Real(0.0));
  if (p.has_bias)
    for (std::size_t n = 0; n < keys.size(); ++n) out[n] = bias_at(n);
  if (!p.has_alibi) return;
  const Real slope(c.alibi[static_cast<std::size_t>(h)]);
  for (std::size_t n = 0; n < keys.size(); ++n)
    out[n] -= slope * Real(static_cast<double>(oracle_alibi_distance(c, b, i, keys[n])));
}

// acc += a * b without a temporary per call (with et_off each temporary of an MPFR number is a
// heap allocation); rounds exactly as acc += a * b does.
template <class Real>
inline void mul_add(Real& acc, const Real& a, const Real& b, Real& tmp) {
  tmp = a;
  tmp *= b;
  acc += tmp;
}

// acc += |a| |b|, for the radii.
template <class Real>
inline void abs_mul_add(Real& acc, const Real& a, const Real& b, Real& tmp) {
  tmp = a;
  tmp *= b;
  if (tmp < 0) acc -= tmp; else acc += tmp;
}

// The softmax of one row over its visible keys (index n into the key list).
template <class Real>
struct RowSoftmax {
  std::vector<Real> p;   // P_n
  std::vector<Real> rc;  // r_n / c, only with a softcap
  Real lse;
  Real p_sink;  // the sink's own weight exp(s_h - L); 0 without a sink
  // With radii: relative error of every P_n, the largest pre-softcap logit error, lse's radius.
  Real eps_p, max_e_r, r_lse;
};

// krow(n): pointer to the Dk values of the n-th visible key; bias(n): its bias (read only when
// the problem has one); sink: the head's attention sink, when the problem has them (an exact
// logit that joins the sum, not P). nkeys may be 0 only with a sink.
template <class Real, class KRow, class Bias>
void row_softmax(const RowParams<Real>& rp, const Real* q, std::size_t nkeys, KRow krow, Bias bias,
                 const Real* sink, RowSoftmax<Real>& sm) {
  using std::abs;
  using std::exp;
  using std::log;
  using std::tanh;
  sm.p.resize(nkeys);
  if (rp.softcap) sm.rc.resize(nkeys);
  Real dot, tmp, absdot, t, e_t, max_e_t = 0;
  sm.max_e_r = 0;
  for (std::size_t n = 0; n < nkeys; ++n) {
    const Real* k = krow(n);
    dot = 0;
    for (std::int64_t d = 0; d < rp.Dk; ++d) mul_add(dot, q[d], k[d], tmp);
    t = rp.scale * dot;
    if (rp.with_radius) {
      absdot = 0;
      for (std::int64_t d = 0; d < rp.Dk; ++d) abs_mul_add(absdot, q[d], k[d], tmp);
      const Real e_r = (rp.Dk + 2) * rp.u * rp.scale * absdot;
      if (e_r > sm.max_e_r) sm.max_e_r = e_r;
      e_t = e_r + 8 * rp.u * (abs(t) + (rp.softcap ? *rp.softcap : Real(0)));
    }
    if (rp.softcap) {
      sm.rc[n] = t / *rp.softcap;
      t = *rp.softcap * tanh(sm.rc[n]);
    }
    if (rp.has_bias) {
      if (rp.with_radius) e_t += 8 * rp.u * (abs(t) + abs(bias(n)));
      t += bias(n);
    }
    if (rp.with_radius && e_t > max_e_t) max_e_t = e_t;
    sm.p[n] = t;  // the logit for now
  }
  Real m = nkeys > 0 ? sm.p[0] : *sink;
  for (std::size_t n = 1; n < nkeys; ++n)
    if (sm.p[n] > m) m = sm.p[n];
  if (sink && *sink > m) m = *sink;
  Real sum = 0;
  for (std::size_t n = 0; n < nkeys; ++n) {
    sm.p[n] = exp(sm.p[n] - m);
    sum += sm.p[n];
  }
  sm.p_sink = 0;
  if (sink) {
    sm.p_sink = exp(*sink - m);
    sum += sm.p_sink;
  }
  const Real log_sum = log(sum);
  sm.lse = m + log_sum;
  for (std::size_t n = 0; n < nkeys; ++n) sm.p[n] /= sum;
  if (sink) sm.p_sink /= sum;
  if (rp.with_radius) {
    // One more term in the sum with a sink: Tk + 1 counts it.
    sm.eps_p = 2 * max_e_t + (rp.Tk + 17) * rp.u;
    sm.r_lse = 2 * (max_e_t + (8 * (abs(m) + abs(log_sum)) + rp.Tk + 9) * rp.u);
  }
}

// d tanh(x)/dx = 1 - tanh^2(x) = 4 e / (1 + e)^2 with e = exp(-2|x|). Written this way because
// 1 - tanh^2 cancels catastrophically once tanh(x) rounds to 1 (|x| > ~116 at 100 digits),
// which a softcap reaches with logits a few hundred times c.
template <class Real>
Real sech_squared(const Real& x) {
  using std::abs;
  using std::exp;
  const Real e = exp(-2 * abs(x));
  const Real one_plus = 1 + e;
  return 4 * e / (one_plus * one_plus);
}

// out = sum_n P_n v_n; with radii also r_out (Dv values).
template <class Real, class VRow>
void row_output(const RowParams<Real>& rp, const RowSoftmax<Real>& sm, VRow vrow, Real* out,
                Real* r_out) {
  Real tmp;
  for (std::int64_t d = 0; d < rp.Dv; ++d) out[d] = 0;
  if (r_out)
    for (std::int64_t d = 0; d < rp.Dv; ++d) r_out[d] = 0;
  for (std::size_t n = 0; n < sm.p.size(); ++n) {
    const Real* v = vrow(n);
    for (std::int64_t d = 0; d < rp.Dv; ++d) mul_add(out[d], sm.p[n], v[d], tmp);
    if (r_out)
      for (std::int64_t d = 0; d < rp.Dv; ++d) abs_mul_add(r_out[d], sm.p[n], v[d], tmp);
  }
  if (r_out) {
    const Real eps = 2 * (sm.eps_p + (rp.Tk + 2) * rp.u);
    for (std::int64_t d = 0; d < rp.Dv; ++d) r_out[d] *= eps;
  }
}

// others[n] = sum_{l != n} x_l, from a prefix and a suffix pass (O(n), no subtraction, so a
// sum of small terms stays accurate next to a large x_n).
template <class Real>
void sum_of_others(const std::vector<Real>& x, std::vector<Real>& others, Real& suffix) {
  const std::size_t n = x.size();
  others.resize(n);
  if (n == 0) return;
  others[0] = 0;
  for (std::size_t l = 1; l < n; ++l) others[l] = others[l - 1] + x[l - 1];  // prefix
  suffix = 0;
  for (std::size_t l = n; l-- > 0;) {
    others[l] += suffix;
    suffix += x[l];
  }
}

// Touch exp/log/tanh once on the calling thread before threads start. Belt and braces: in
// Boost 1.74 cpp_bin_float's constants (ln 2, pi) are thread_local, and MPFR's constant caches
// are thread-local when MPFR is built with TLS (checked by a test); Boost's fixed-precision
// mpfr_float_backend never reads its shared default-precision variable.
template <class Real>
void warm_up() {
  using std::exp;
  using std::log;
  using std::tanh;
  Real x = 0.5;
  x = exp(x) + log(x) + tanh(x) + exp(Real(-700)) + log(Real(1e300)) + tanh(Real(20));
  // Boost's numeric_limits of a variable-precision MPFR number fill a function-local static on
  // first use, flagging it filled before the value is set: a worker racing the first call read
  // 1, and a fully masked row's LSE came out -1 (OracleBackends failed one run in three).
  x = std::numeric_limits<Real>::infinity() + std::numeric_limits<Real>::epsilon();
  (void)x;
}

// Backends may keep per-thread caches (MPFR keeps constants such as log 2 in thread-local
// storage, freed only on request). A worker thread that exits without releasing them leaks them,
// which adds up in a long-running certifier: every worker chunk releases them on the way out.
// Releasing is harmless for a thread that never used MPFR, so it is done whatever the backend
// (the tests also instantiate this file at lower MPFR precisions). Defined in oracle_mpfr.cpp.
void release_mpfr_thread_caches();

template <class Real>
struct ThreadCacheRelease {
  ThreadCacheRelease() = default;
  ThreadCacheRelease(const ThreadCacheRelease&) = delete;
  ThreadCacheRelease& operator=(const ThreadCacheRelease&) = delete;
  ~ThreadCacheRelease() { release_mpfr_thread_caches(); }
};

template <class Real>
Real minus_infinity() {
  return Real(-std::numeric_limits<double>::infinity());  // not numeric_limits<Real>: see warm_up
}

template <class Real>
std::size_t resize_all(RealOutputs<Real>& res, const Shape& s, bool backward, bool radius) {
  res.out.resize(static_cast<std::size_t>(out_elements(s)));
  res.lse.resize(static_cast<std::size_t>(lse_elements(s)));
  if (radius) {
    res.r_out.resize(res.out.size());
    res.r_lse.resize(res.lse.size());
  }
  if (!backward) return 0;
  res.dq.resize(static_cast<std::size_t>(q_elements(s)));
  res.dk.resize(static_cast<std::size_t>(k_elements(s)));
  res.dv.resize(static_cast<std::size_t>(v_elements(s)));
  if (radius) {
    res.r_dq.resize(res.dq.size());
    res.r_dk.resize(res.dk.size());
    res.r_dv.resize(res.dv.size());
  }
  return 0;
}

// The sinks' gradient, one term per row (b, h, i) in lse order, summed per head in the fixed order
// (b, i) so the result does not depend on the thread count.
template <class Real>
void sum_sink_terms(const Shape& s, const std::vector<Real>& terms, const std::vector<Real>& r_terms,
                    RealOutputs<Real>& res) {
  res.dsinks.assign(static_cast<std::size_t>(s.Hq), Real(0));
  if (!r_terms.empty()) res.r_dsinks.assign(static_cast<std::size_t>(s.Hq), Real(0));
  for (std::int64_t h = 0; h < s.Hq; ++h)
    for (std::int64_t b = 0; b < s.B; ++b)
      for (std::int64_t i = 0; i < s.Tq; ++i) {
        const auto at = static_cast<std::size_t>((b * s.Hq + h) * s.Tq + i);
        res.dsinks[static_cast<std::size_t>(h)] += terms[at];
        if (!r_terms.empty()) res.r_dsinks[static_cast<std::size_t>(h)] += r_terms[at];
      }
}

// Forward of every row from Real inputs (no checks: the plan and the values were checked).
template <class Real>
RealOutputs<Real> forward_all(const Case& c, const ReadPlan& plan, const RealInputs<Real>& in,
                              int threads = 0, bool with_radius = false) {
  const Problem& p = c.problem;
  const Shape& s = p.shape;
  const std::int64_t G = p.group();
  RealOutputs<Real> res;
  resize_all(res, s, false, with_radius);
  warm_up<Real>();
  const RowParams<Real> rp(p, with_radius);
  parallel_for(
      s.B * s.Hq * s.Tq,
      [&](std::int64_t begin, std::int64_t end) {
        const ThreadCacheRelease<Real> release;
        RowSoftmax<Real> sm;
        std::vector<Real> additive;  // the row's bias + ALiBi, when the problem has either
        for (std::int64_t r = begin; r < end; ++r) {
          const std::int64_t i = r % s.Tq, h = (r / s.Tq) % s.Hq, b = r / (s.Tq * s.Hq);
          const std::int64_t kvh = h / G;
          const auto& keys = plan.visible(b, h, i);
          Real* out = &res.out[c.oi(b, h, i, 0)];
          const Real* sink = p.has_sinks ? &in.sinks[static_cast<std::size_t>(h)] : nullptr;
          if (keys.empty() && !sink) {  // O = 0 and L = -inf exactly: radius 0
            for (std::int64_t d = 0; d < s.Dv; ++d) out[d] = 0;
            res.lse[c.li(b, h, i)] = minus_infinity<Real>();
            continue;
          }
          auto krow = [&](std::size_t n) { return &in.k[c.ki(b, kvh, keys[n], 0)]; };
          auto vrow = [&](std::size_t n) { return &in.v[c.vi(b, kvh, keys[n], 0)]; };
          if (rp.has_bias)
            row_additive_terms<Real>(c, b, h, i, keys, [&](std::size_t n) { return in.bias[c.bi(b, h, i, keys[n])]; }, additive);
          auto bias = [&](std::size_t n) -> const Real& { return additive[n]; };
          row_softmax(rp, &in.q[c.qi(b, h, i, 0)], keys.size(), krow, bias, sink, sm);
          res.lse[c.li(b, h, i)] = sm.lse;
          row_output(rp, sm, vrow, out, with_radius ? &res.r_out[c.oi(b, h, i, 0)] : nullptr);
          if (with_radius) res.r_lse[c.li(b, h, i)] = sm.r_lse;
        }
      },
      threads);
  return res;
}

// Forward and backward from Real inputs; parallel over (b, kv head), each task owning the dK,
// dV of its kv head and the out, lse, dQ of the G query heads that read it.
template <class Real>
RealOutputs<Real> backward_all(const Case& c, const ReadPlan& plan, const RealInputs<Real>& in,
                               int threads = 0, bool with_radius = false) {
  const Problem& p = c.problem;
  const Shape& s = p.shape;
  const std::int64_t G = p.group();
  RealOutputs<Real> res;
  resize_all(res, s, true, with_radius);
  std::vector<Real> sink_terms, r_sink_terms;
  if (p.has_sinks) {
    sink_terms.assign(res.lse.size(), Real(0));
    if (with_radius) r_sink_terms.assign(res.lse.size(), Real(0));
  }
  warm_up<Real>();
  const RowParams<Real> rp(p, with_radius);
  parallel_for(
      s.B * s.Hkv,
      [&](std::int64_t begin, std::int64_t end) {
        const ThreadCacheRelease<Real> release;
        RowSoftmax<Real> sm;
        std::vector<Real> dr, mdp, pdp, others_p, others_pdp, others_pmdp, additive;
        Real dp, tmp, eps, mr, sech2;
        for (std::int64_t task = begin; task < end; ++task) {
          const std::int64_t b = task / s.Hkv, kvh = task % s.Hkv;
          for (std::int64_t h = kvh * G; h < (kvh + 1) * G; ++h)
            for (std::int64_t i = 0; i < s.Tq; ++i) {
              const auto& keys = plan.visible(b, h, i);
              Real* out = &res.out[c.oi(b, h, i, 0)];
              Real* dq = &res.dq[c.qi(b, h, i, 0)];
              Real* r_dq = with_radius ? &res.r_dq[c.qi(b, h, i, 0)] : nullptr;
              for (std::int64_t d = 0; d < s.Dk; ++d) dq[d] = 0;
              const Real* sink = p.has_sinks ? &in.sinks[static_cast<std::size_t>(h)] : nullptr;
              if (keys.empty()) {  // O = 0, so D = 0: no gradient anywhere, the sink's included
                for (std::int64_t d = 0; d < s.Dv; ++d) out[d] = 0;
                res.lse[c.li(b, h, i)] = sink ? *sink : minus_infinity<Real>();
                continue;
              }
              auto krow = [&](std::size_t n) { return &in.k[c.ki(b, kvh, keys[n], 0)]; };
              auto vrow = [&](std::size_t n) { return &in.v[c.vi(b, kvh, keys[n], 0)]; };
              if (rp.has_bias)
                row_additive_terms<Real>(c, b, h, i, keys, [&](std::size_t n) { return in.bias[c.bi(b, h, i, keys[n])]; }, additive);
              auto bias = [&](std::size_t n) -> const Real& { return additive[n]; };
              const Real* q = &in.q[c.qi(b, h, i, 0)];
              const Real* dout = &in.dout[c.oi(b, h, i, 0)];
              row_softmax(rp, q, keys.size(), krow, bias, sink, sm);
              res.lse[c.li(b, h, i)] = sm.lse;
              row_output(rp, sm, vrow, out, with_radius ? &res.r_out[c.oi(b, h, i, 0)] : nullptr);
              // dP_n = dO . v_n and dS_n = P_n (dP_n - D), D = sum_l P_l dP_l. Written as
              //   dP_n - D = dP_n sum_{l != n} P_l - sum_{l != n} P_l dP_l   (sum_l P_l = 1)
              // so that when P_n ~ 1 (one key dominates) the two tiny terms are computed
              // accurately instead of as the difference of two nearly equal numbers (which
              // left ~1e-101 of noise where the exact dS is ~1e-400). With one visible key
              // both sums are empty and dS = 0 exactly.
              const std::size_t nk = keys.size();
              dr.resize(nk);
              pdp.resize(nk);
              for (std::size_t n = 0; n < nk; ++n) {
                const Real* v = vrow(n);
                dp = 0;
                for (std::int64_t d = 0; d < s.Dv; ++d) mul_add(dp, dout[d], v[d], tmp);
                dr[n] = dp;
                pdp[n] = sm.p[n] * dp;
              }
              sum_of_others(sm.p, others_p, tmp);
              // The weights sum to 1 - P_sink: dP_n - D = dP_n (P_sink + sum_{l!=n} P_l) - ...
              if (sink)
                for (std::size_t n = 0; n < nk; ++n) others_p[n] += sm.p_sink;
              sum_of_others(pdp, others_pdp, tmp);
              // tmp now holds D = sum_l P_l dP_l (the suffix pass's total).
              if (sink) sink_terms[c.li(b, h, i)] = -(sm.p_sink * tmp);
              if (with_radius) {
                res.r_lse[c.li(b, h, i)] = sm.r_lse;
                mdp.resize(nk);
                pdp.resize(nk);
                for (std::size_t n = 0; n < nk; ++n) {
                  const Real* v = vrow(n);
                  mdp[n] = 0;
                  for (std::int64_t d = 0; d < s.Dv; ++d) abs_mul_add(mdp[n], dout[d], v[d], tmp);
                  pdp[n] = sm.p[n] * mdp[n];
                }
                sum_of_others(pdp, others_pmdp, tmp);
                eps = sm.eps_p + (rp.Dk + rp.Dv + rp.Tk + rp.G * rp.Tq + 32) * rp.u;
                if (rp.softcap) eps += 2 * sm.max_e_r / *rp.softcap;
                eps *= 2;
                if (sink) {  // + the sum over (b, i): B Tq more additions
                  Real pm = 0;
                  for (std::size_t n = 0; n < nk; ++n) pm += pdp[n];
                  r_sink_terms[c.li(b, h, i)] = (eps + 2 * (s.B * s.Tq) * rp.u) * sm.p_sink * pm;
                }
              }
              for (std::size_t n = 0; n < nk; ++n) {
                dr[n] *= others_p[n];
                dr[n] -= others_pdp[n];
                dr[n] *= sm.p[n];
                if (rp.softcap) {
                  sech2 = sech_squared(sm.rc[n]);
                  dr[n] *= sech2;
                }
                dr[n] *= rp.scale;  // now d loss / d (q . k_n)
                const Real* k = krow(n);
                Real* dk = &res.dk[c.ki(b, kvh, keys[n], 0)];
                Real* dv = &res.dv[c.vi(b, kvh, keys[n], 0)];
                for (std::int64_t d = 0; d < s.Dk; ++d) {
                  mul_add(dq[d], dr[n], k[d], tmp);
                  mul_add(dk[d], dr[n], q[d], tmp);
                }
                for (std::int64_t d = 0; d < s.Dv; ++d) mul_add(dv[d], sm.p[n], dout[d], tmp);
                if (with_radius) {
                  // |dS_n| and the terms its computation cancels: P_n (|dP_n| others_p + others |P dP|).
                  mr = eps * rp.scale * sm.p[n] * (mdp[n] * others_p[n] + others_pmdp[n]);
                  if (rp.softcap) mr *= sech2;
                  Real* r_dk = &res.r_dk[c.ki(b, kvh, keys[n], 0)];
                  Real* r_dv = &res.r_dv[c.vi(b, kvh, keys[n], 0)];
                  for (std::int64_t d = 0; d < s.Dk; ++d) {
                    abs_mul_add(r_dq[d], mr, k[d], tmp);
                    abs_mul_add(r_dk[d], mr, q[d], tmp);
                  }
                  for (std::int64_t d = 0; d < s.Dv; ++d) {
                    tmp = eps * sm.p[n];
                    abs_mul_add(r_dv[d], tmp, dout[d], dp);
                  }
                }
              }
            }
        }
      },
      threads);
  if (p.has_sinks) sum_sink_terms(s, sink_terms, r_sink_terms, res);
  return res;
}

}  // namespace attnv::reference::oracle_detail
