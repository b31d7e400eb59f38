// Properties of the mathematical structure of attention: invariance of the weights under a key
// translation, linearity in V, the rank of the score matrix, entropy against temperature and the
// variance the 1/sqrt(Dk) scale gives. Each is judged through the reference's per-element bound,
// never a hand-picked epsilon (see each check for the argument).
#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>

#include "gen/rng.h"
#include "problem/dtype.h"
#include "properties/checks/checks.h"
#include "properties/checks/runs.h"

namespace attnv::checks {
namespace {

using I = std::int64_t;

using detail::exact_grid;
using detail::max_abs;
using detail::on_grid;

// A case built by the check itself (the statistical and the rank checks need their own shapes):
// Q and K N(0, sigma^2) rounded to the dtype, no options.
Case own_case(DType dtype, Shape s, std::uint64_t seed, double sigma, const std::string& id) {
  Problem p;
  p.shape = s;
  p.dtype = dtype;
  Case c = make_zero_case(p, false);
  gen::Rng rng(seed);
  for (double& x : c.q) x = sigma * rng.normal();
  for (double& x : c.k) x = sigma * rng.normal();
  for (double& x : c.v) x = rng.normal();
  round_to_storage(c);
  c.id = id;
  return c;
}

// -x ln x, the summand of the entropy; eta is increasing on [0, 1/e].
double eta(double x) { return x > 0 ? -x * std::log(x) : 0.0; }

// Singular values of a rows x cols matrix (row-major) by one-sided Jacobi: accurate to a few
// eps * ||A|| (it never forms A^T A, which would square the rounding away).
std::vector<double> singular_values(std::vector<double> a, I rows, I cols) {
  auto col = [&](I r, I c) -> double& { return a[static_cast<std::size_t>(r * cols + c)]; };
  for (int sweep = 0; sweep < 60; ++sweep) {
    bool rotated = false;
    for (I p = 0; p < cols; ++p)
      for (I q = p + 1; q < cols; ++q) {
        double alpha = 0, beta = 0, gamma = 0;
        for (I r = 0; r < rows; ++r) {
          alpha += col(r, p) * col(r, p);
          beta += col(r, q) * col(r, q);
          gamma += col(r, p) * col(r, q);
        }
        if (std::abs(gamma) <= 1e-15 * std::sqrt(alpha * beta) || gamma == 0) continue;
        rotated = true;
        const double zeta = (beta - alpha) / (2 * gamma);
        const double t = (zeta >= 0 ? 1 : -1) / (std::abs(zeta) + std::sqrt(1 + zeta * zeta));
        const double cs = 1 / std::sqrt(1 + t * t), sn = cs * t;
        for (I r = 0; r < rows; ++r) {
          const double x = col(r, p), y = col(r, q);
          col(r, p) = cs * x - sn * y;
          col(r, q) = sn * x + cs * y;
        }
      }
    if (!rotated) break;
  }
  std::vector<double> sv(static_cast<std::size_t>(cols));
  for (I c = 0; c < cols; ++c) {
    double n = 0;
    for (I r = 0; r < rows; ++r) n += col(r, c) * col(r, c);
    sv[static_cast<std::size_t>(c)] = std::sqrt(n);
  }
  std::sort(sv.rbegin(), sv.rend());
  return sv;
}

}  // namespace

PropertyResult check_key_translation(Kernel& k, const Case& c, Layout layout, std::uint64_t seed) {
  const char* name = "key_translation";
  if (auto why = detail::not_claimed(k, c, false); !why.empty()) return PropertyResult::not_claimed(name, c.id, why);
  if (c.problem.softcap) return PropertyResult::not_applicable(name, c.id, "a softcap is not shift invariant");
  // Keys on a grid where K and K + t are both exact in the storage dtype, so the two cases'
  // exact scores differ by exactly scale * <q_i, t> in every row: the same weights, the same O.
  const double M = max_abs(c.k);
  const double g = exact_grid(c.problem.dtype, M);
  if (g == 0) return PropertyResult::not_applicable(name, c.id, "K + t would overflow the dtype");
  Case base = c;
  base.dout.clear();
  for (double& x : base.k) x = on_grid(x, g);
  Case moved = base;
  gen::Rng rng(seed ^ 0x6b65797472616eull);
  std::vector<double> t(static_cast<std::size_t>(c.problem.shape.Dk));
  for (double& x : t) x = on_grid(rng.uniform(-M, M), g);
  for (std::size_t n = 0; n < moved.k.size(); ++n) moved.k[n] += t[n % t.size()];
  moved.id = c.id + " (keys translated)";
  // Each run is judged with its own bound (the translated scores are larger, so harder to
  // compute) around the common exact value.
  const Outputs a = detail::run(k, base, layout).out, b = detail::run(k, moved, layout).out;
  const detail::Exact ea = detail::exact_forward(k, base), eb = detail::exact_forward(k, moved);
  double ratio = 0;
  const std::string d = detail::disagreement(base, "out", a.out, b.out, ea.exact.out, ea.bounds.out, eb.bounds.out,
                                             ea.out_dtype, &ratio);
  if (d.empty()) return PropertyResult::pass(name, base.id).with_ratio(ratio);
  return PropertyResult::fail(name, base.id, "adding one vector to every key changed O beyond both allowances", d)
      .with_ratio(ratio);
}

PropertyResult check_v_linearity(Kernel& k, const Case& c, Layout layout, std::uint64_t seed) {
  const char* name = "v_linearity";
  if (auto why = detail::not_claimed(k, c, false); !why.empty()) return PropertyResult::not_claimed(name, c.id, why);
  // V1, V2 and V1 + V2 all exact in the storage dtype (grid of exact_grid), so
  // O(V1 + V2) = O(V1) + O(V2) holds exactly for the exact outputs.
  const double M = max_abs(c.v);
  const double g = exact_grid(c.problem.dtype, M);
  if (g == 0) return PropertyResult::not_applicable(name, c.id, "V1 + V2 would overflow the dtype");
  Case c1 = c, c2 = c, c12 = c;
  for (Case* x : {&c1, &c2, &c12}) x->dout.clear();
  gen::Rng rng(seed ^ 0x76206c696eull);
  for (std::size_t n = 0; n < c.v.size(); ++n) {
    c1.v[n] = on_grid(c.v[n], g);
    c2.v[n] = on_grid(std::clamp(rng.normal() * M, -M, M), g);
    c12.v[n] = c1.v[n] + c2.v[n];
  }
  c2.id = c.id + " (V2)";
  c12.id = c.id + " (V1 + V2)";
  const Outputs o1 = detail::run(k, c1, layout).out, o2 = detail::run(k, c2, layout).out,
                o12 = detail::run(k, c12, layout).out;
  const detail::Exact e1 = detail::exact_forward(k, c1), e2 = detail::exact_forward(k, c2),
                      e12 = detail::exact_forward(k, c12);
  double worst = 0;
  for (std::size_t n = 0; n < o12.out.size(); ++n) {
    const double a = o1.out[n], b = o2.out[n], ab = o12.out[n];
    if (!std::isfinite(a) || !std::isfinite(b) || !std::isfinite(ab))
      return PropertyResult::fail(name, c12.id, "non-finite output", detail::element_name(c, "out", n)).with_kind(FailKind::non_finite);
    // |ab - a - b| <= |ab - x12| + |a - x1| + |b - x2| since x12 = x1 + x2 exactly; each term is
    // within its threshold for a correct kernel; 2^-52 (|ab| + |a| + |b|) covers this double sum.
    const double allowed = bound::threshold(ab, e12.exact.out[n], e12.bounds.out[n], e12.out_dtype) +
                           bound::threshold(a, e1.exact.out[n], e1.bounds.out[n], e1.out_dtype) +
                           bound::threshold(b, e2.exact.out[n], e2.bounds.out[n], e2.out_dtype) +
                           0x1p-52 * (std::abs(ab) + std::abs(a) + std::abs(b));
    const double err = std::abs(ab - a - b);
    const double ratio = allowed > 0 ? err / allowed : (err == 0 ? 0 : HUGE_VAL);
    if (ratio > worst) worst = ratio;
    if (ratio > 1) {
      std::ostringstream o;
      o.precision(17);
      o << detail::element_name(c, "out", n) << ": O(V1+V2) = " << ab << ", O(V1) + O(V2) = " << a + b << ", allowed "
        << allowed;
      return PropertyResult::fail(name, c12.id, "O is not linear in V", o.str()).with_ratio(ratio);
    }
  }
  return PropertyResult::pass(name, c.id).with_ratio(worst);
}

PropertyResult check_score_rank(Kernel& k, DType dtype, std::uint64_t seed, Layout layout) {
  const char* name = "score_rank";
  // log P_ij = s_ij - L_i and S = scale Q K^T has rank <= Dk; multiplying by the centring
  // projection J = I - 11^T/Tk removes the row constant L_i: rank(log P J) <= Dk. With the
  // kernel's weights W = P + E_w the computed matrix is A = log P J + E J + R (R: rounding of
  // this check), so by Weyl sigma_{Dk+1}(A) <= ||E||_F + ||R||_F, where
  // |log w - log p| <= log(w / (w - t)) for |w - p| <= t < w (t: the element's acceptance
  // threshold, which a correct kernel's weight meets).
  gen::Rng pick(seed);
  const I dk = pick.uniform_int(1, 4), T = 20;
  Case c = own_case(dtype, Shape{1, 2, 2, T, T, dk, dk}, seed, 1.0, "score_rank seed=" + std::to_string(seed));
  if (auto why = detail::not_claimed(k, c, false); !why.empty()) return PropertyResult::not_claimed(name, c.id, why);
  const Case id = detail::with_identity_v(c);
  const Outputs w = detail::run(k, id, layout).out;
  const detail::Exact e = detail::exact_forward(k, id);
  double worst = 0;
  for (I h = 0; h < 2; ++h) {
    std::vector<double> a(static_cast<std::size_t>(T * T));
    double err2 = 0, norm2 = 0;
    for (I i = 0; i < T; ++i) {
      double mean = 0;
      for (I j = 0; j < T; ++j) {
        const std::size_t n = id.oi(0, h, i, j);
        const double t = bound::threshold(w.out[n], e.exact.out[n], e.bounds.out[n], e.out_dtype);
        if (!(w.out[n] > t))
          return PropertyResult::not_applicable(name, c.id, "a weight within its allowance of 0");
        const double delta = std::log(w.out[n] / (w.out[n] - t));
        err2 += delta * delta;
        a[static_cast<std::size_t>(i * T + j)] = std::log(w.out[n]);
        mean += a[static_cast<std::size_t>(i * T + j)] / static_cast<double>(T);
      }
      for (I j = 0; j < T; ++j) {
        double& x = a[static_cast<std::size_t>(i * T + j)];
        x -= mean;
        norm2 += x * x;
      }
    }
    const std::vector<double> sv = singular_values(a, T, T);
    // R: logs, the centring and the Jacobi rotations each cost a few eps per element.
    const double allowed = std::sqrt(err2) + 1e3 * 0x1p-53 * static_cast<double>(T) * std::sqrt(norm2);
    const double excess = sv[static_cast<std::size_t>(dk)];
    worst = std::max(worst, excess / allowed);
    if (excess > allowed) {
      std::ostringstream o;
      o.precision(6);
      o << "head " << h << ": sigma_" << dk + 1 << " = " << excess << " > " << allowed << " (Dk = " << dk
        << ", sigma_1 = " << sv[0] << ")";
      return PropertyResult::fail(name, c.id, "the log-weights have rank above Dk: the scores are not scale Q K^T",
                                  o.str())
          .with_ratio(excess / allowed);
    }
  }
  return PropertyResult::pass(name, c.id).with_ratio(worst);
}

PropertyResult check_entropy_temperature(Kernel& k, DType dtype, std::uint64_t seed, Layout layout) {
  const char* name = "entropy_temperature";
  // Weights softmax(beta s) have entropy non-increasing in beta (dH/dbeta = -beta Var_P(s) <= 0).
  // beta is the kernel's scale: the default 1/sqrt(Dk) and twice and half of it.
  const I dk = 8, T = 16;
  Case base = own_case(dtype, Shape{1, 2, 2, 8, T, dk, dk}, seed, 1.5, "entropy_temperature seed=" + std::to_string(seed));
  const double s0 = base.problem.effective_scale();
  std::vector<double> entropy[3], slack[3];
  const double scales[3] = {2 * s0, s0, s0 / 2};  // rising temperature
  for (int t = 0; t < 3; ++t) {
    Case c = base;
    if (t != 1) c.problem.scale = scales[t];
    if (auto why = detail::not_claimed(k, c, false); !why.empty()) return PropertyResult::not_claimed(name, c.id, why);
    const Case id = detail::with_identity_v(c);
    const Outputs w = detail::run(k, id, layout).out;
    const detail::Exact e = detail::exact_forward(k, id);
    for (I h = 0; h < 2; ++h)
      for (I i = 0; i < 8; ++i) {
        // |eta(a) - eta(b)| <= eta(|a - b|) for a, b in [0, 1], |a - b| <= 1/2, and eta is
        // increasing up to 1/e: sum_j eta(t_j) bounds |H(W) - H(P)|. W is clamped to [0, 1],
        // which only moves it toward P.
        double hsum = 0, s = 0;
        for (I j = 0; j < T; ++j) {
          const std::size_t n = id.oi(0, h, i, j);
          const double tj = bound::threshold(w.out[n], e.exact.out[n], e.bounds.out[n], e.out_dtype);
          if (!(tj <= 1 / std::numbers::e) || !std::isfinite(w.out[n])) return PropertyResult::not_applicable(name, c.id, "weights too coarse");
          hsum += eta(std::clamp(w.out[n], 0.0, 1.0));
          s += eta(tj);
        }
        entropy[t].push_back(hsum);
        slack[t].push_back(s + 1e-12 * T);
      }
  }
  double worst = 0;
  for (std::size_t r = 0; r < entropy[0].size(); ++r)
    for (int t = 0; t < 2; ++t) {
      const double drop = entropy[t][r] - entropy[t + 1][r], allowed = slack[t][r] + slack[t + 1][r];
      worst = std::max(worst, drop / allowed);
      if (drop > allowed) {
        std::ostringstream o;
        o.precision(6);
        o << "row " << r << ": entropy " << entropy[t][r] << " at scale " << scales[t] << ", " << entropy[t + 1][r]
          << " at scale " << scales[t + 1] << " (allowed drop " << allowed << ")";
        return PropertyResult::fail(name, base.id, "entropy fell as the temperature rose", o.str()).with_ratio(drop / allowed);
      }
    }
  return PropertyResult::pass(name, base.id).with_ratio(worst);
}

PropertyResult check_score_variance(Kernel& k, DType dtype, std::uint64_t seed, Layout layout) {
  const char* name = "score_variance";
  // N = B*H = 256 independent slices, one query each, Tk = 64 keys, Dk = 64, Q and K N(0, 1).
  // With the default scale 1/sqrt(Dk) a slice's scores are N(0, |q|^2 / Dk) given q; their
  // sample variance over the keys, X = (|q|^2 / Dk) chi2_{Tk-1} / (Tk-1), has E X = 1 and
  // Var X = (1 + 2/Dk)(1 + 2/(Tk-1)) - 1 = 0.064. The mean of N slices has standard deviation
  // 0.0158. Accepted: mean in [0.75, 4/3]. False alarm: < 0.004 by Chebyshev (distribution
  // free), about 1e-15 by the normal approximation (the band is 15.8 sd wide below and 21 above).
  // A 1/Dk or 1/sqrt(d_model) scale gives 1/64 or 1/H, no scale gives 64: far outside.
  // The scores are read black-box as log-weights (V = identity), centred per row: log w_j =
  // s_j - L. The weights' rounding (relative 2^-8 in bf16) moves the variance by < 1%.
  const I B = 8, H = 32, T = 64, D = 64;
  Case c = own_case(dtype, Shape{B, H, H, 1, T, D, D}, seed, 1.0, "score_variance seed=" + std::to_string(seed));
  if (auto why = detail::not_claimed(k, c, false); !why.empty()) return PropertyResult::not_claimed(name, c.id, why);
  const Case id = detail::with_identity_v(c);
  const Outputs w = detail::run(k, id, layout).out;
  double sum = 0;
  for (I b = 0; b < B; ++b)
    for (I h = 0; h < H; ++h) {
      double mean = 0, m2 = 0;
      for (I j = 0; j < T; ++j) {
        const double x = w.out[id.oi(b, h, 0, j)];
        if (!(x > 0) || !std::isfinite(x)) {
          std::ostringstream o;
          o << "weight of key " << j << " in slice b=" << b << ",h=" << h << " is " << x;
          return PropertyResult::fail(name, c.id, "a weight is not positive: scores spread far beyond unit variance", o.str());
        }
        const double l = std::log(x), d = l - mean;
        mean += d / static_cast<double>(j + 1);
        m2 += d * (l - mean);
      }
      sum += m2 / static_cast<double>(T - 1);
    }
  const double var = sum / static_cast<double>(B * H);
  std::ostringstream o;
  o << "mean score variance " << var << " over " << B * H << " slices (accepted [0.75, 1.333])";
  // Ratio: how far out of the band, in the band's own log-width (<= 1 inside).
  const double ratio = std::abs(std::log(var)) / std::log(4.0 / 3.0);
  if (var >= 0.75 && var <= 4.0 / 3.0) return PropertyResult::pass(name, c.id, o.str()).with_ratio(ratio);
  return PropertyResult::fail(name, c.id, "the default scale does not give unit score variance", o.str()).with_ratio(ratio);
}

}  // namespace attnv::checks
