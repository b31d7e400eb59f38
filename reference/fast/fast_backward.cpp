// fast_backward: gradients of sum(dO * O), parallel over (batch, KV head). One task owns the dK
// and dV of its KV head and visits its rows (query i, then the G heads of the group) in a fixed
// order, so every sum is accumulated in the same order whatever the thread count.
#include <atomic>
#include <cmath>

#include "problem/error.h"
#include "reference/fast/accumulator.h"
#include "reference/fast/case_checks.h"
#include "reference/fast/fast.h"
#include "reference/fast/row_output.h"
#include "reference/fast/row_softmax.h"
#include "problem/visibility.h"
#include "util/parallel.h"

namespace attnv::reference {
namespace fd = fast_detail;

namespace {

constexpr double kU2 = dd::kU2;

struct KvHeadState {
  fd::Accumulators dk, dv;
  std::vector<std::int64_t> terms;  // rows that saw key j: the length of dK_j's and dV_j's sums
  fd::Accumulators dq, o;
  fd::RowWeights w;
  std::vector<dd::DD> dp;
  std::vector<double> dp_err;
  std::vector<double> k_pivot, kdiff_hi, kdiff_lo;  // -k_a, and k_j - k_a split exactly
};

// One row's term -P_sink D_i of its head's sink gradient, with its error bound.
struct SinkTerm {
  dd::DD value{0, 0};
  double err = 0;
};

// Row (b, h, i) of the backward, after its weights. g_j = dP_j - D with D = sum_l P_l dP_l is
// computed around the key a of largest weight, using sum_l P_l = 1 (exact weights):
//   g_j = D' - delta_j,  delta_l = dP_a - dP_l,  D' = sum_l P_l delta_l  (delta_a = 0),
// so that g_a = D' keeps its relative accuracy when one key dominates (one-hot rows: g_a is a
// sum of tiny terms, where dP_a - D would cancel to noise of the size of dP_a's error), and a
// single visible key gives g = 0 exactly. Errors (absolute bounds on computed dd values):
//   dP_l = dO_i . v_l (Dot2):   E_dP_l = dot_err_factor(Dv) * sum_d |dO v| * 1.01
//       (+ dot_underflow_allowance when the products are tiny)
//   delta_l (sub, 3 u^2):       E_delta_l = E_dP_a + E_dP_l + 3 u^2 |delta_l| * 1.01, E_delta_a = 0
//   D' (mul 4 u^2, accurate adds): E_D' = 1.01 sum_l [p_err_l |delta_l| + P_l E_delta_l]
//       + acc_err_factor(n) * sum_l P_l |delta_l| * 1.01 (+ underflow allowance if nonzero)
//   g_j = D' - delta_j (3 u^2): E_g_j = E_D' + E_delta_j + 3 u^2 |g_j| * 1.01
//   dS_j = P_j g_j sc_j, sc the softcap derivative (1 without softcap; relative error sc_rel,
//       absolute sc_abs): E_dS_j = 1.01 [p_err_j |g_j| sc_j + P_j E_g_j sc_j
//       + |dS_j| (sc_rel_j + 8 u^2) + P_j |g_j| sc_abs_j]   (two products of 4 u^2)
//   dQ_i = scale sum_j dS_j k_j, dK_j += scale dS_j q_i, dV_j += P_j dO_i: axpy with w_err =
//       E_dS_j (resp. p_err_j); finish() adds the accumulation error and the product by scale.
// With an attention sink sum_l P_l = 1 - P_sink, so D = dP_a (1 - P_sink) - D' and
//   g_j = (D' + P_sink dP_a) - delta_j:
//   D' gets the term P_sink dP_a (mul 4 u^2, add 3 u^2):
//       E_D' += 1.01 [p_sink_err |dP_a| + P_sink E_dP_a + 7 u^2 (|P_sink dP_a| + |D'|)]
//   and the sink's own gradient term (docs/semantics.md) -P_sink D, with D summed directly,
//   D = sum_l P_l dP_l (not dP_a - g_a: when the sink takes nearly all the weight, D is tiny and
//   that difference would cancel to noise of the size of dP_a's error):
//       E_D = 1.01 sum_l [p_err_l |dP_l| + P_l E_dP_l] + acc_err_factor(n) sum_l |P_l dP_l| 1.01
//       E_term = 1.01 [p_sink_err |D| + P_sink E_D + 4 u^2 |P_sink D|].
//   The dQ pivot identity sum_j dS_j = 0 becomes sum_j dS_j = P_sink D: not zero, so with a
//   sink dQ takes the keys unpivoted, as with a softcap.
void backward_row(const fd::RowContext& ctx, std::int64_t b, std::int64_t h, std::int64_t i,
                  KvHeadState& st, fd::ElementSink& sink, SinkTerm& sink_term) {
  const Case& c = *ctx.c;
  const Shape& s = c.problem.shape;
  const std::int64_t hk = h / c.problem.group();
  const fd::RowWeights& w = st.w;
  const std::size_t n = w.keys.size();
  if (n == 0) return;  // dQ_i = 0 and no contribution to dK, dV: exact
  const std::size_t o0 = c.oi(b, h, i, 0);
  const double* dout = c.dout.data() + o0;
  const double* q = c.q.data() + c.qi(b, h, i, 0);
  st.dp.resize(n);
  st.dp_err.resize(n);
  const double dot_factor = dd::dot_err_factor(s.Dv) * 1.01;
  std::size_t a = 0;
  const bool has_sink = c.problem.has_sinks;
  dd::DD D_direct{0, 0};
  double D_abs = 0, D_err = 0;
  bool D_may_be_nonzero = false;  // as may_be_nonzero below, for D summed directly
  for (std::size_t jj = 0; jj < n; ++jj) {
    const std::size_t v0 = c.vi(b, hk, w.keys[jj], 0);
    const dd::DotResult dp = ctx.kernels->dot(dout, c.v.data() + v0, s.Dv);
    if (!std::isfinite(dp.abs_sum)) {
      for (std::int64_t d = 0; d < s.Dv; ++d)
        if (!std::isfinite(dout[d]))
          fd::throw_non_finite("dout", c, c.dout, o0, s.Dv, b, h, i, "a query with visible keys");
      fd::throw_non_finite("v", c, c.v, v0, s.Dv, b, hk, w.keys[jj], "a value row visible to some query");
    }
    st.dp[jj] = dp.value;
    st.dp_err[jj] = dot_factor * dp.abs_sum + fd::dot_underflow_allowance(dout, c.v.data() + v0, s.Dv, dp.abs_sum);
    if (has_sink) {
      D_direct = dd::add(D_direct, dd::mul(w.p[jj], dp.value));
      D_abs += std::fabs(w.p[jj].hi) * std::fabs(dp.value.hi);
      D_err += w.p_err[jj] * std::fabs(dp.value.hi) + std::fabs(w.p[jj].hi) * st.dp_err[jj];
      D_may_be_nonzero = D_may_be_nonzero || ((w.p[jj].hi != 0 || w.p_err[jj] > 0) && (dp.value.hi != 0 || st.dp_err[jj] > 0));
    }
    if (dd::less(w.p[a], w.p[jj])) a = jj;
  }
  // delta_l = dP_a - dP_l, kept in st.dp (dP itself is no longer needed), its error in st.dp_err.
  const dd::DD dp_a = st.dp[a];
  const double e_dp_a = st.dp_err[a];
  dd::DD Dp{0, 0};
  double pd_abs = 0, e_d = 0;
  // Whether some term P_l delta_l may be nonzero: its error products (a subnormal weight's
  // 2^-1070 times a delta of 2^-10) underflow to 0 in double, so err_D > 0 cannot tell. An exact
  // D' of -4e-325 was computed as 0 with error 0: decided, and its gradients wrong (issue 39).
  bool may_be_nonzero = false;
  for (std::size_t jj = 0; jj < n; ++jj) {
    if (jj == a) {
      st.dp[jj] = {0, 0};
      st.dp_err[jj] = 0;
      continue;
    }
    const dd::DD delta = dd::sub(dp_a, st.dp[jj]);
    st.dp[jj] = delta;
    st.dp_err[jj] = e_dp_a + st.dp_err[jj] + 3 * kU2 * std::fabs(delta.hi) * 1.01;
    const double p = std::fabs(w.p[jj].hi), da = std::fabs(delta.hi);
    Dp = dd::add(Dp, dd::mul(w.p[jj], delta));
    pd_abs += p * da;
    e_d += w.p_err[jj] * da + p * st.dp_err[jj];
    may_be_nonzero = may_be_nonzero || ((p > 0 || w.p_err[jj] > 0) && (da > 0 || st.dp_err[jj] > 0));
  }
  double err_D = 1.01 * e_d + dd::acc_err_factor(static_cast<std::int64_t>(n)) * pd_abs * 1.01;
  if (err_D > 0 || may_be_nonzero) err_D += fd::underflow_allowance(static_cast<std::int64_t>(n));
  if (has_sink) {
    const dd::DD ps_dp = dd::mul(w.p_sink, dp_a);
    Dp = dd::add(Dp, ps_dp);
    err_D += 1.01 * (w.p_sink_err * std::fabs(dp_a.hi) + std::fabs(w.p_sink.hi) * e_dp_a +
                     7 * kU2 * (std::fabs(ps_dp.hi) + std::fabs(Dp.hi))) + fd::underflow_allowance(2);
    const dd::DD& D = D_direct;
    double e_D = 1.01 * D_err + dd::acc_err_factor(static_cast<std::int64_t>(n)) * D_abs * 1.01;
    if (e_D > 0 || D.hi != 0 || D_may_be_nonzero) e_D += fd::underflow_allowance(2 * static_cast<std::int64_t>(n));
    sink_term.value = dd::neg(dd::mul(w.p_sink, D));
    sink_term.err = 1.01 * (w.p_sink_err * std::fabs(D.hi) + std::fabs(w.p_sink.hi) * e_D +
                            4 * kU2 * std::fabs(sink_term.value.hi)) + fd::underflow_allowance(1);
  }
  const bool softcap = ctx.has_softcap;
  const bool unpivoted = softcap || has_sink;
  st.dq.reset(static_cast<std::size_t>(s.Dk));
  st.k_pivot.resize(static_cast<std::size_t>(s.Dk));
  st.kdiff_hi.resize(static_cast<std::size_t>(s.Dk));
  st.kdiff_lo.resize(static_cast<std::size_t>(s.Dk));
  const double* ka = c.k.data() + c.ki(b, hk, w.keys[a], 0);
  for (std::int64_t d = 0; d < s.Dk; ++d) st.k_pivot[static_cast<std::size_t>(d)] = -ka[d];
  for (std::size_t jj = 0; jj < n; ++jj) {
    const std::int64_t j = w.keys[jj];
    const dd::DD g = dd::sub(Dp, st.dp[jj]);
    const double ga = std::fabs(g.hi), p = std::fabs(w.p[jj].hi);
    const double err_g = err_D + st.dp_err[jj] + 3 * kU2 * ga * 1.01;
    dd::DD ds = dd::mul(w.p[jj], g);
    double sc = 1, sc_rel = 0, sc_abs = 0;
    if (softcap) {
      ds = dd::mul(ds, w.sech2[jj]);
      sc = std::fabs(w.sech2[jj].hi) * 1.01;
      sc_rel = w.sech2_rel[jj];
      sc_abs = w.sech2_abs[jj];
    }
    double err_ds = 1.01 * (w.p_err[jj] * ga * sc + p * err_g * sc +
                            std::fabs(ds.hi) * (sc_rel + 8 * kU2) + p * ga * sc_abs);
    // (As for D': the products above may underflow to 0 though dS may be nonzero.)
    if (err_ds > 0 || ds.hi != 0 || ((p > 0 || w.p_err[jj] > 0) && (ga > 0 || err_g > 0)))
      err_ds += fd::underflow_allowance(1);
    const std::size_t k0 = c.ki(b, hk, j, 0);
    const auto ju = static_cast<std::size_t>(j);
    // Without a softcap, dQ_i = scale sum_j dS_j (k_j - k_a): sum_j dS_j = sum_j P_j g_j = 0
    // for the exact values, so subtracting the pivot's key changes nothing exactly, and keys
    // that nearly tie no longer cancel in the sum. k_j - k_a is split exactly into hi + lo
    // (two_sum); both parts go through the axpy, so the sum has 2n terms and the weights' errors
    // multiply |hi| + |lo|. (With a softcap dS_j carries sech^2_j and the identity fails.)
    if (unpivoted) {
      ctx.kernels->axpy(ds, err_ds, c.k.data() + k0, s.Dk, st.dq.hi.data(), st.dq.lo.data(),
                        st.dq.abs.data(), st.dq.live.data(), st.dq.err.data());
    } else if (jj != a) {
      const double* kj_row = c.k.data() + k0;
      for (std::int64_t d = 0; d < s.Dk; ++d) {
        const dd::DD diff = dd::two_sum(kj_row[d], st.k_pivot[static_cast<std::size_t>(d)]);
        st.kdiff_hi[static_cast<std::size_t>(d)] = diff.hi;
        st.kdiff_lo[static_cast<std::size_t>(d)] = diff.lo;
      }
      ctx.kernels->axpy(ds, err_ds, st.kdiff_hi.data(), s.Dk, st.dq.hi.data(), st.dq.lo.data(),
                        st.dq.abs.data(), st.dq.live.data(), st.dq.err.data());
      ctx.kernels->axpy(ds, err_ds, st.kdiff_lo.data(), s.Dk, st.dq.hi.data(), st.dq.lo.data(),
                        st.dq.abs.data(), st.dq.live.data(), st.dq.err.data());
    }
    const std::size_t kj = ju * static_cast<std::size_t>(s.Dk);
    const std::size_t vj = ju * static_cast<std::size_t>(s.Dv);
    ctx.kernels->axpy(ds, err_ds, q, s.Dk, st.dk.hi_at(kj), st.dk.lo_at(kj), st.dk.abs_at(kj),
                      st.dk.live_at(kj), st.dk.err_at(kj));
    ctx.kernels->axpy(w.p[jj], w.p_err[jj], dout, s.Dv, st.dv.hi_at(vj), st.dv.lo_at(vj),
                      st.dv.abs_at(vj), st.dv.live_at(vj), st.dv.err_at(vj));
    ++st.terms[ju];
  }
  const std::size_t q0 = c.qi(b, h, i, 0);
  for (std::int64_t d = 0; d < s.Dk; ++d) {
    const auto e = static_cast<std::size_t>(d);
    if (!st.dq.finite(e))
      fd::throw_non_finite("q", c, c.q, q0, s.Dk, b, h, i, "dQ overflows");
    sink.put(&Outputs::dq, q0 + e, fd::finish(st.dq, e, 2 * static_cast<std::int64_t>(n), ctx.scale));
  }
}

}  // namespace

Outputs fast_backward(const Case& c, const FastOptions& opt, FastStats* stats,
                      FastAccuracy* accuracy) {
  fd::require_readable(c, true);
  const Shape& s = c.problem.shape;
  const bool has_sinks = c.problem.has_sinks;
  const std::int64_t G = c.problem.group();
  Outputs out;
  out.out.assign(static_cast<std::size_t>(out_elements(s)), 0.0);
  out.lse.assign(static_cast<std::size_t>(lse_elements(s)), 0.0);
  out.dq.assign(static_cast<std::size_t>(q_elements(s)), 0.0);
  out.dk.assign(static_cast<std::size_t>(k_elements(s)), 0.0);
  out.dv.assign(static_cast<std::size_t>(v_elements(s)), 0.0);
  if (has_sinks) out.dsinks.assign(static_cast<std::size_t>(s.Hq), 0.0);
  fd::prepare_accuracy(out, accuracy);
  // Each row's sink term, summed per head after the parallel part in a fixed order (b, then i).
  std::vector<SinkTerm> sink_terms(has_sinks ? static_cast<std::size_t>(lse_elements(s)) : 0);
  SinkTerm unused_term;
  const fd::RowContext ctx(c);
  std::atomic<std::int64_t> unresolved{0};

  parallel_for(
      s.B * s.Hkv,
      [&](std::int64_t begin, std::int64_t end) {
        KvHeadState st;
        fd::ElementSink sink{&out, accuracy};
        for (std::int64_t task = begin; task < end; ++task) {
          const std::int64_t b = task / s.Hkv, hk = task % s.Hkv;
          st.dk.reset(static_cast<std::size_t>(s.Tk * s.Dk));
          st.dv.reset(static_cast<std::size_t>(s.Tk * s.Dv));
          st.terms.assign(static_cast<std::size_t>(s.Tk), 0);
          for (std::int64_t i = 0; i < s.Tq; ++i) {
            for (std::int64_t g = 0; g < G; ++g) {
              const std::int64_t h = hk * G + g;
              st.w.keys = visible_keys(c, b, h, i);
              fd::compute_row_weights(ctx, b, h, i, st.w, true);
              fd::write_row_output(ctx, b, h, i, st.w, st.o, sink);
              backward_row(ctx, b, h, i, st, sink, has_sinks ? sink_terms[c.li(b, h, i)] : unused_term);
            }
          }
          for (std::int64_t j = 0; j < s.Tk; ++j) {
            const std::int64_t n = st.terms[static_cast<std::size_t>(j)];
            if (n == 0) continue;  // hidden from every row: zero gradient, exact
            for (std::int64_t d = 0; d < s.Dk; ++d) {
              const auto e = static_cast<std::size_t>(j * s.Dk + d);
              if (!st.dk.finite(e))
                throw InputError("fast reference: dK[b=" + std::to_string(b) + ",h=" + std::to_string(hk) +
                                 ",j=" + std::to_string(j) + "] overflows the double range");
              sink.put(&Outputs::dk, c.ki(b, hk, j, d), fd::finish(st.dk, e, n, ctx.scale));
            }
            for (std::int64_t d = 0; d < s.Dv; ++d) {
              const auto e = static_cast<std::size_t>(j * s.Dv + d);
              if (!st.dv.finite(e))
                throw InputError("fast reference: dV[b=" + std::to_string(b) + ",h=" + std::to_string(hk) +
                                 ",j=" + std::to_string(j) + "] overflows the double range");
              sink.put(&Outputs::dv, c.vi(b, hk, j, d), fd::finish(st.dv, e, n, 1.0));
            }
          }
        }
        unresolved += sink.unresolved;
      },
      opt.threads, 1);

  if (has_sinks) {
    // dsinks[h] = sum over (b, i) of -P_sink D_i: the axpy with x = 1 adds each term exactly as
    // a product would, so finish() bounds the sum as it does dK's.
    fd::Accumulators acc;
    fd::ElementSink put{&out, accuracy};
    const double one = 1.0;
    for (std::int64_t h = 0; h < s.Hq; ++h) {
      acc.reset(1);
      std::int64_t n = 0;
      for (std::int64_t b = 0; b < s.B; ++b)
        for (std::int64_t i = 0; i < s.Tq; ++i) {
          const SinkTerm& t = sink_terms[c.li(b, h, i)];
          if (t.value.hi == 0 && t.err == 0) continue;  // a row with no visible key adds exactly 0
          ctx.kernels->axpy(t.value, t.err, &one, 1, acc.hi_at(0), acc.lo_at(0), acc.abs_at(0), acc.live_at(0),
                            acc.err_at(0));
          ++n;
        }
      if (n > 0) put.put(&Outputs::dsinks, static_cast<std::size_t>(h), fd::finish(acc, 0, n, 1.0));
    }
    unresolved += put.unresolved;
  }
  if (stats) {
    stats->elements += out_elements(s) + lse_elements(s) + q_elements(s) + k_elements(s) + v_elements(s) +
                       static_cast<std::int64_t>(out.dsinks.size());
    stats->unresolved += unresolved.load();
  }
  return out;
}

}  // namespace attnv::reference
