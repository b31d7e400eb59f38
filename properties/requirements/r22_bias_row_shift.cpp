// Adding t_i to every bias entry of query row i adds t_i to every logit of the row (the bias
// comes after the softcap), which the softmax cancels: O is unchanged and the LSE grows by
// exactly t_i. Bias and shifts lie on a grid where b + t is exact in the storage dtype, so the
// two cases' exact outputs are related exactly; each run is judged with its own bound.
#include <cmath>

#include "gen/rng.h"
#include "properties/checks/runs.h"
#include "properties/conformance/requirement.h"

namespace attnv::conformance {
namespace {

checks::PropertyResult check_bias_row_shift(Kernel& k, const generators::PropertyCase& pc) {
  const char* name = "bias_row_shift";
  using checks::PropertyResult;
  Case base = pc.c;
  base.dout.clear();
  if (!base.problem.has_bias) {  // a zero bias: the shift is then the whole bias
    base.problem.has_bias = true;
    base.bias.assign(static_cast<std::size_t>(base.problem.shape.Tq * base.problem.shape.Tk), 0.0);
  }
  if (auto why = checks::detail::not_claimed(k, base, false); !why.empty()) return PropertyResult::not_claimed(name, base.id, why);
  double M = 1;
  for (double b : base.bias) M = std::isfinite(b) ? std::max(M, std::abs(b)) : M;
  const double g = checks::detail::exact_grid(base.problem.dtype, M);
  if (g == 0) return PropertyResult::not_applicable(name, base.id, "bias + t would overflow the dtype");
  for (double& b : base.bias) b = std::isfinite(b) ? checks::detail::on_grid(b, g) : b;
  Case moved = base;
  gen::Rng rng(pc.seed ^ 0x62696173736866ull);
  const std::int64_t Tq = base.problem.shape.Tq, Tk = base.problem.shape.Tk;
  std::vector<double> t(static_cast<std::size_t>(Tq));
  for (double& x : t) x = checks::detail::on_grid(rng.uniform(-M, M), g);
  // Row i of every plane (per batch, per head) gets the same t_i: every row (b, h, i) shifts by t_i.
  for (std::size_t n = 0; n < moved.bias.size(); ++n)
    moved.bias[n] += t[static_cast<std::size_t>((static_cast<std::int64_t>(n) / Tk) % Tq)];
  moved.id = base.id + " (bias rows shifted)";
  const Outputs a = checks::detail::run(k, base, pc.layout).out, b = checks::detail::run(k, moved, pc.layout).out;
  const checks::detail::Exact ea = checks::detail::exact_forward(k, base), eb = checks::detail::exact_forward(k, moved);
  double ratio = 0;
  std::string d = checks::detail::disagreement(base, "out", a.out, b.out, ea.exact.out, ea.bounds.out, eb.bounds.out,
                                              ea.out_dtype, &ratio);
  // LSE (when claimed): lse_b - t_i against lse_a, each within its own allowance (rounding at
  // the output dtype, as bound::compare judges the LSE).
  const DType ld = ea.out_dtype;
  for (std::size_t n = 0; d.empty() && n < a.lse.size() && n < b.lse.size(); ++n) {
    const double ti = t[n % static_cast<std::size_t>(Tq)], ex = ea.exact.lse[n];
    const bool agree = std::isfinite(ex) ? std::abs(b.lse[n] - ti - a.lse[n]) <= bound::threshold(a.lse[n], ex, ea.bounds.lse[n], ld) +
                                                                                     bound::threshold(b.lse[n], ex + ti, eb.bounds.lse[n], ld)
                                         : a.lse[n] == ex && b.lse[n] == ex;
    if (!agree)
      d = checks::detail::element_name(base, "lse", n) + ": " + std::to_string(a.lse[n]) + ", shifted by t = " + std::to_string(ti) +
          " gave " + std::to_string(b.lse[n]) + " (exact " + std::to_string(ex) + " and " + std::to_string(ex + ti) + ")";
  }
  if (d.empty()) return PropertyResult::pass(name, base.id).with_ratio(ratio);
  return PropertyResult::fail(name, base.id, "adding t_i to bias row i changed O, or did not shift the LSE by t_i", d).with_ratio(ratio);
}

}  // namespace

Requirement r22_bias_row_shift() {
  return {
      .id = "R22",
      .property = "bias_row_shift",
      .statement = "adding t_i to bias row i leaves O unchanged, LSE + t_i",
      .mutants = {"bias_scaled"},
      .needs = "bias",
      .missing = needs_claim(&Capabilities::bias, "bias"),
      .check = check_bias_row_shift,
      .cases = {100, 750, 7500},
  };
}

}  // namespace attnv::conformance
