// The oracle's analytic backward against central finite differences computed in mp_real itself,
// for every element of dq, dk and dv, and of dsinks where the case has sinks.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "reference/oracle/mp_real.h"
#include "reference/oracle/oracle_impl.h"
#include "reference/oracle/tests/test_cases.h"

namespace attnv::reference {
namespace {

using namespace oracle_detail;
using Inputs = RealInputs<mp_real>;

mp_real loss(const Case& c, const ReadPlan& plan, const Inputs& in) {
  const RealOutputs<mp_real> f = forward_all(c, plan, in, /*threads=*/1);
  mp_real sum = 0;
  for (std::size_t n = 0; n < f.out.size(); ++n)
    if (!in.dout[n].is_zero()) sum += in.dout[n] * f.out[n];
  return sum;
}

double max_abs(const std::vector<double>& xs) {
  double m = 0;
  for (double x : xs)
    if (std::isfinite(x)) m = std::max(m, std::abs(x));
  return m;
}

// The tolerance for |FD - analytic| on one element x (derivation).
// f(x) = sum over the rows x feeds of g = dO_i . O_i = E_P[w], w_j = dO_i . v_j,
// |w| <= Omega = Dv max|dO| max|v|. Logits t_j = phi(r_j) + bias with r_j linear in x, slope
// |a| <= A (A = scale max|k| for a q element, scale max|q| for a k element); phi = c tanh(r/c)
// has |phi'| <= 1, |phi''| <= 0.77/c, |phi'''| <= 2/c^2 (phi = identity without softcap).
// Derivatives of a softmax mean are joint cumulants under P:
//   g''' = k4(w,t',t',t') + 3 k3(w,t',t'') + k2(w,t'''),
// and for |X_i| <= R_i: |k2| <= R R, |k3| <= 2 R R R, |k4| <= 7 R R R R. So
//   |g'''| <= Omega (7 A^3 + 6 A (0.77 A^2 / c) + 2 A^3 / c^2).
// A q element feeds 1 row; a k element feeds at most G Tq rows; f is linear in v (g''' = 0).
// Central difference: |FD - f'| <= h^2/6 max|f'''| + (|f_hat - f| at x+-h)/h, and the loss
// is computed with relative error <= N u (u = mp_real epsilon, N = 10 (Tk (Dk + Dv) + 10)
// generous) on a magnitude <= rows Omega (1 + max|t|); perturbing x by h is itself rounded
// (error u |x|, giving |f'| u |x| / h). With h = 1e-30 and u ~ 1e-100 the rounding terms are
// ~1e-70, the truncation term ~1e-61 times the bound: both far below any real bug (a scale
// off by one double ulp changes gradients by ~1e-16, checked below).
// A sink z_h is a logit of slope 1 whose value w is 0 (so |w| <= Omega still): its A is 1 and
// no softcap acts on it, |g'''| <= 7 Omega per row, and z_h feeds the B Tq rows of head h.
struct Tolerance {
  double trunc_q = 0, trunc_k = 0, trunc_sink = 0, rounding = 0;
};

Tolerance tolerance(const Case& c, double h) {
  const Problem& p = c.problem;
  const Shape& s = p.shape;
  const double scale = p.effective_scale();
  const double Q = max_abs(c.q), K = max_abs(c.k), V = max_abs(c.v), W = max_abs(c.dout);
  const double B = p.has_bias ? max_abs(c.bias) : 0;
  const double omega = static_cast<double>(s.Dv) * W * V;
  auto third = [&](double A) {
    if (!p.softcap) return omega * 7 * A * A * A;
    const double cap = *p.softcap;
    return omega * (7 * A * A * A + 6 * A * 0.77 * A * A / cap + 2 * A * A * A / (cap * cap));
  };
  Tolerance t;
  t.trunc_q = h * h / 6 * third(scale * K);
  t.trunc_k = h * h / 6 * static_cast<double>(p.group() * s.Tq) * third(scale * Q);
  t.trunc_sink = h * h / 6 * static_cast<double>(s.B * s.Tq) * 7 * omega;
  const double u = static_cast<double>(std::numeric_limits<mp_real>::epsilon());
  const double n_ops = 10.0 * static_cast<double>(s.Tk * (s.Dk + s.Dv) + 10);
  // ALiBi adds a constant to each logit (its slope times a distance below Tk + Tq): it moves the
  // logits' magnitude, not their slopes in q or k.
  const double alibi = p.has_alibi ? max_abs(c.alibi) * static_cast<double>(s.Tk + s.Tq) : 0;
  const double max_t = (p.softcap ? *p.softcap + B : scale * s.Dk * Q * K + B) + alibi;
  const double rows = static_cast<double>(s.B * s.Hq * s.Tq);
  const double S = p.has_sinks ? max_abs(c.sinks) : 0;
  const double max_grad = rows * omega * (1 + scale * std::max(Q, K)) + 1;  // |f'| crude (|df/dz| <= rows Omega)
  t.rounding = (n_ops * u * rows * omega * (1 + max_t) + max_grad * u * (std::max({Q, K, V, S}) + h)) / h;
  return t;
}

struct CheckResult {
  int elements = 0, failures = 0;
  double worst_ratio = 0;  // max |FD - analytic| / tolerance
};

// Compares the analytic gradients `g` with central differences of the loss of `c`.
CheckResult check_gradients(const Case& c, const RealOutputs<mp_real>& g) {
  const ReadPlan plan = plan_reads(c, true);
  check_read_values(c, plan, true);
  Inputs in = to_real_inputs<mp_real>(c, plan, true);
  const double h_d = 1e-30;
  const mp_real h = mp_real(h_d);
  const Tolerance tol = tolerance(c, h_d);
  CheckResult r;
  auto check = [&](std::vector<mp_real>& x, const std::vector<mp_real>& grad, double trunc,
                   const char* name) {
    for (std::size_t n = 0; n < x.size(); ++n) {
      const mp_real keep = x[n];
      x[n] = keep + h;
      const mp_real up = loss(c, plan, in);
      x[n] = keep - h;
      const mp_real down = loss(c, plan, in);
      x[n] = keep;
      const mp_real fd = (up - down) / (2 * h);
      const double err = static_cast<double>(abs(fd - grad[n]));
      const double bound = trunc + tol.rounding;
      ++r.elements;
      r.worst_ratio = std::max(r.worst_ratio, err / bound);
      if (err > bound) {
        ++r.failures;
        if (r.failures <= 3)
          ADD_FAILURE() << c.id << " " << name << "[" << n << "]: |fd - analytic| = " << err
                        << " > " << bound << " (analytic " << static_cast<double>(grad[n]) << ")";
      }
    }
  };
  check(in.q, g.dq, tol.trunc_q, "dq");
  check(in.k, g.dk, tol.trunc_k, "dk");
  check(in.v, g.dv, 0, "dv");  // the loss is linear in v: no truncation error
  if (c.problem.has_sinks) check(in.sinks, g.dsinks, tol.trunc_sink, "dsinks");
  return r;
}

RealOutputs<mp_real> analytic(const Case& c) {
  const ReadPlan plan = plan_reads(c, true);
  return backward_all(c, plan, to_real_inputs<mp_real>(c, plan, true), 1);
}

// Small cases with softcap, masks and grouped heads (every third has a softcap forced on).
Case gradient_case(std::uint64_t seed, double value_scale = 1.5) {
  oracle_test::TinyLimits lim;
  lim.max_t = 4;
  lim.max_d = 3;
  lim.value_scale = value_scale;
  Case c = oracle_test::tiny_random_case(seed, true, lim);
  if (seed % 3 == 0) c.problem.softcap = 0.75;
  return c;
}

TEST(OracleGradients, AnalyticMatchesHighPrecisionFiniteDifferences) {
  int softcap = 0, grouped = 0, masked = 0, elements = 0;
  double worst = 0;
  for (std::uint64_t seed = 3000; seed < 3080; ++seed) {
    // Every fourth case has logits in the hundreds: saturated softcaps, near one-hot P.
    const Case c = gradient_case(seed, seed % 4 == 1 ? 20.0 : 1.5);
    softcap += c.problem.softcap.has_value();
    grouped += c.problem.group() > 1;
    masked += c.problem.causal || c.problem.has_mask || c.problem.has_bias || c.problem.has_kv_len ||
              c.problem.window.bounded();
    const CheckResult r = check_gradients(c, analytic(c));
    EXPECT_EQ(r.failures, 0) << c.id << " " << describe(c.problem);
    elements += r.elements;
    worst = std::max(worst, r.worst_ratio);
  }
  EXPECT_GE(softcap, 20);
  EXPECT_GE(grouped, 20);
  EXPECT_GE(masked, 40);
  std::printf("gradient check: %d elements, worst |fd - analytic| / tolerance = %.3g\n", elements, worst);
}

// The sinks' gradient dsinks_h = -sum_i P_sink,i D_i (docs/semantics.md) against differences of
// the loss in z_h, on the same cases with a sink per head (of either sign, now and then dominant).
TEST(OracleGradients, SinkGradientMatchesFiniteDifferences) {
  int sinks = 0;
  double worst = 0;
  for (std::uint64_t seed = 3100; seed < 3130; ++seed) {
    Case c = gradient_case(seed, seed % 4 == 1 ? 20.0 : 1.5);
    c.problem.has_sinks = true;
    c.sinks.resize(static_cast<std::size_t>(c.problem.shape.Hq));
    for (std::size_t h = 0; h < c.sinks.size(); ++h)
      c.sinks[h] = static_cast<double>(static_cast<float>(((seed * 7 + h * 3) % 11) * 0.75 - 3.0));
    c.id += " +sinks";
    const CheckResult r = check_gradients(c, analytic(c));
    EXPECT_EQ(r.failures, 0) << c.id << " " << describe(c.problem);
    sinks += static_cast<int>(c.sinks.size());
    worst = std::max(worst, r.worst_ratio);
  }
  EXPECT_GE(sinks, 30);
  std::printf("gradient check with sinks: worst |fd - analytic| / tolerance = %.3g\n", worst);
}

// ALiBi's distances join the logits of the backward as of the forward: the oracle's gradients
// with slopes against differences of its own forward (either alignment, every kind of mask).
TEST(OracleGradients, AlibiGradientsMatchFiniteDifferences) {
  int cases = 0, elements = 0;
  double worst = 0;
  for (std::uint64_t seed = 3200; seed < 3230; ++seed) {
    Case c = gradient_case(seed, seed % 4 == 1 ? 20.0 : 1.5);
    c.problem.has_alibi = true;
    c.alibi.resize(static_cast<std::size_t>(c.problem.shape.Hq));
    for (std::size_t h = 0; h < c.alibi.size(); ++h) c.alibi[h] = std::exp2(-static_cast<double>((seed + h) % 5));
    c.id += " +alibi";
    const CheckResult r = check_gradients(c, analytic(c));
    EXPECT_EQ(r.failures, 0) << c.id << " " << describe(c.problem);
    ++cases;
    elements += r.elements;
    worst = std::max(worst, r.worst_ratio);
  }
  EXPECT_EQ(cases, 30);
  EXPECT_GT(elements, 300);
  std::printf("gradient check with ALiBi: %d elements, worst |fd - analytic| / tolerance = %.3g\n", elements, worst);
}

// The check catches a sink gradient with the wrong sign (+P_sink D, the mutant dsink_sign_flipped).
TEST(OracleGradients, CatchesASinkGradientWithTheWrongSign) {
  Case c = gradient_case(3101);
  c.problem.has_sinks = true;
  c.sinks.assign(static_cast<std::size_t>(c.problem.shape.Hq), 0.5);
  RealOutputs<mp_real> g = analytic(c);
  for (auto& x : g.dsinks) x = -x;
  bool caught = false;
  ::testing::TestPartResultArray swallowed;
  {
    ::testing::ScopedFakeTestPartResultReporter quiet(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &swallowed);
    caught = check_gradients(c, g).failures > 0;
  }
  EXPECT_TRUE(caught) << c.id << " " << describe(c.problem);
}

// A planted bug the check must catch: gradients computed with a scale one double ulp off (the
// classic 1/sqrt(Dk) computed another way) are wrong by ~1e-16 relative.
TEST(OracleGradients, CatchesAScaleOneUlpOff) {
  // The first softcapped case where some row sees two keys (with one key P = 1 and dS = 0,
  // so no gradient depends on the scale).
  std::uint64_t seed = 3000;
  auto scale_matters = [](const Case& k) {
    const ReadPlan plan = plan_reads(k, true);
    for (const auto& keys : plan.keys)
      if (keys.size() >= 2) return true;
    return false;
  };
  while (!(gradient_case(seed).problem.softcap && scale_matters(gradient_case(seed)))) ++seed;
  Case c = gradient_case(seed);
  c.problem.scale = c.problem.effective_scale();
  Case wrong = c;
  wrong.problem.scale = std::nextafter(*c.problem.scale, 2.0);
  const RealOutputs<mp_real> g = analytic(wrong);
  bool caught = false;
  ::testing::TestPartResultArray swallowed;  // the expected failures are not this test's
  {
    ::testing::ScopedFakeTestPartResultReporter quiet(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &swallowed);
    caught = check_gradients(c, g).failures > 0;
  }
  EXPECT_TRUE(caught) << c.id << " " << describe(c.problem);
}

}  // namespace
}  // namespace attnv::reference
