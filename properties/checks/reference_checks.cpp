// Properties judged directly against the reference and its bound.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "properties/checks/checks.h"
#include "properties/checks/recording.h"
#include "properties/checks/runs.h"
#include "reference/fast/fast.h"
#include "problem/visibility.h"

namespace attnv::checks {
namespace {

using detail::element_name;

// The judge's verdict (judge/judge.h) as a property result: a failed call or a comparison that
// fails is a FAIL of its kind; a case whose every element has an infinite bound judged nothing
// (an f16 accumulator over ~1024 keys, where the model's gamma_n passes 1).
PropertyResult verdict(const char* name, const Case& c, const judge::Judgement& j) {
  const bound::Comparison& cmp = j.comparison;
  if (j.ok() && cmp.elements() > 0 && j.exercised == 0)
    return PropertyResult::not_exercised(
               name, c.id,
               j.uninformative > 0 ? "every element's allowance covers its visible values' range (uninformative)"
                                   : "the declared precision model bounds no element of this case")
        .with_exercised(0, j.uninformative);
  PropertyResult r = j.ok() ? PropertyResult::pass(name, c.id) : PropertyResult::fail(name, c.id, j.message, j.worst);
  if (j.failed) r.with_kind(*j.failed);
  if (cmp.tensors.empty()) return r;  // the call itself failed: nothing was compared
  r.with_ratio(cmp.worst_ratio()).with_exercised(j.exercised, j.uninformative);
  for (const auto& t : cmp.tensors) r.hist += t.hist;
  r.tightness = cmp.tightness();
  return r;
}

PropertyResult judge_against(const char* name, const Case& c, Outputs got, const detail::Exact& e) {
  return verdict(name, c, judge::judge_outputs(c, std::move(got), e));
}

// R1 and R2: one call judged as attnv fuzz judges it (judge::judge_call), its run recorded.
PropertyResult judge_one_call(const char* name, Kernel& k, const Case& c, Layout layout, bool backward) {
  const detail::Exact e = backward ? detail::exact_backward(k, c) : detail::exact_forward(k, c);
  judge::Options opt;
  opt.backward = backward;
  opt.on_run = [](const Case& rc, Layout l, bool b, const Outputs& o) { detail::record_run(rc, l, b, o); };
  return verdict(name, c, judge::judge_call(k, c, layout, e, opt));
}

}  // namespace

PropertyResult check_matches_reference(Kernel& k, const Case& c, Layout layout) {
  if (auto why = detail::not_claimed(k, c, false); !why.empty()) return PropertyResult::not_claimed("matches_reference", c.id, why);
  return judge_one_call("matches_reference", k, c, layout, false);
}

PropertyResult check_backward_matches_reference(Kernel& k, const Case& c, Layout layout) {
  const char* name = "backward_matches_reference";
  if (!c.has_dout()) return PropertyResult::not_applicable(name, c.id, "no dout");
  if (auto why = detail::not_claimed(k, c, true); !why.empty()) return PropertyResult::not_claimed(name, c.id, why);
  return judge_one_call(name, k, c, layout, true);
}

PropertyResult check_rows_sum_to_one(Kernel& k, const Case& c, Layout layout) {
  const char* name = "rows_sum_to_one";
  if (auto why = detail::not_claimed(k, c, false); !why.empty()) return PropertyResult::not_claimed(name, c.id, why);
  const Shape& s = c.problem.shape;
  // V = ones: O = 1 on rows with a visible key (exactly representable, so the reference and the
  // bound judge "= 1" with no rounding of their own), 0 on the others.
  {
    Case ones = c;
    ones.dout.clear();
    std::fill(ones.v.begin(), ones.v.end(), 1.0);
    ones.id = c.id + " (V = ones)";
    // O alone: the LSE of this case is the original's, and judging it here charged LSE bugs to
    // R3 ("out: 0 failures; lse: 48 failures"); they are R1's.
    Outputs got = detail::run(k, ones, layout).out;
    got.lse.clear();
    PropertyResult r = judge_against(name, ones, std::move(got), detail::exact_forward(k, ones));
    if (!r.ok) return r;
  }
  // The identity needs Dv = Tk: skipped where that would make the case slow to run.
  if (s.Tk > 256 || s.B * s.Hq * s.Tq * s.Tk * (s.Dk + s.Tk) > 2000000)
    return PropertyResult::pass(name, c.id, "V = identity skipped: case too large for Dv = Tk");
  // V = identity rows: O_i is the weight row P_i.
  const Case id = detail::with_identity_v(c);
  const Outputs got = detail::run(k, id, layout).out;
  const detail::Exact e = detail::exact_forward(k, id);
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t h = 0; h < s.Hq; ++h)
      for (std::int64_t i = 0; i < s.Tq; ++i) {
        const bool any = detail::row_sees_any(id, b, h, i);
        double sum = 0, allowance = 0;
        for (std::int64_t j = 0; j < s.Tk; ++j) {
          const std::size_t n = id.oi(b, h, i, j);
          const double w = got.out[n];
          std::ostringstream where;
          where.precision(17);
          where << element_name(id, "out", n) << " (weight of key " << j << ") = " << w;
          if (!(w >= 0))
            return PropertyResult::fail(name, id.id, "a weight is negative or NaN", where.str())
                .with_kind(std::isnan(w) ? FailKind::non_finite : FailKind::outside_bound);
          if (!visible(id, b, h, i, j) && w != 0)
            return PropertyResult::fail(name, id.id, "a hidden key has a nonzero weight", where.str());
          sum += w;
          allowance += bound::threshold(w, e.exact.out[n], e.bounds.out[n], e.out_dtype);
        }
        // sum_j w_j - 1 = sum_j (w_j - P_j): within the sum of the per-weight allowances.
        const double target = any ? 1.0 : 0.0;
        // The double sum of Tk doubles rounds too: Tk * 2^-53 * sum is a strict cover.
        allowance += static_cast<double>(s.Tk) * 0x1p-53 * std::abs(sum);
        if (std::abs(sum - target) > allowance) {
          std::ostringstream o;
          o.precision(17);
          o << "row b=" << b << ",h=" << h << ",i=" << i << " weights sum to " << sum << ", expected " << target
            << " within " << allowance;
          return PropertyResult::fail(name, id.id, "weights do not sum to 1", o.str());
        }
      }
  return PropertyResult::pass(name, c.id);
}

PropertyResult check_convex_hull(Kernel& k, const Case& c, Layout layout) {
  const char* name = "convex_hull";
  if (auto why = detail::not_claimed(k, c, false); !why.empty()) return PropertyResult::not_claimed(name, c.id, why);
  const Shape& s = c.problem.shape;
  const Outputs got = detail::run(k, c, layout).out;
  const detail::Exact e = detail::exact_forward(k, c);
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t i = 0; i < s.Tq; ++i)
      for (std::int64_t h = 0; h < s.Hq; ++h) {
        const std::vector<std::int64_t> keys = visible_keys(c, b, h, i);
        if (keys.empty()) continue;  // fully masked rows: check_fully_masked_rows
        const std::int64_t hk = h / c.problem.group();
        for (std::int64_t d = 0; d < s.Dv; ++d) {
          double lo = HUGE_VAL, hi = -HUGE_VAL;
          for (std::int64_t j : keys) {
            lo = std::min(lo, c.v[c.vi(b, hk, j, d)]);
            hi = std::max(hi, c.v[c.vi(b, hk, j, d)]);
          }
          const std::size_t n = c.oi(b, h, i, d);
          const double o = got.out[n];
          // The allowance at the exact value when the output is not finite (threshold(o, ...) would
          // take an ulp of inf and print "widened by nan").
          const double slack = bound::threshold(std::isfinite(o) ? o : e.exact.out[n], e.exact.out[n], e.bounds.out[n], e.out_dtype);
          if (!(o >= lo - slack && o <= hi + slack)) {
            std::ostringstream w;
            w.precision(17);
            w << element_name(c, "out", n) << " = " << o << " outside [" << lo << ", " << hi << "] widened by " << slack;
            return PropertyResult::fail(name, c.id, "output outside the convex hull of the visible values", w.str());
          }
        }
      }
  return PropertyResult::pass(name, c.id);
}

PropertyResult check_unbiased_rounding(Kernel& k, const std::vector<Case>& cases, Layout layout) {
  const char* name = "unbiased_rounding";
  std::vector<double> means;
  for (const Case& c : cases) {
    if (!detail::not_claimed(k, c, false).empty()) continue;
    const Outputs got = detail::run(k, c, layout).out;
    const Outputs exact = reference::fast_forward(c);
    means.push_back(bound::mean_signed_error_ulps(got.out, exact.out, detail::kernel_precision(k, c.problem).out));
  }
  const bound::SignTest t = bound::sign_test(means);
  std::ostringstream o;
  o << t.toward_zero << " of " << t.cases << " cases err toward zero (share " << t.share << ", p = " << t.p_value << ")";
  const std::string id = std::to_string(cases.size()) + " cases";
  if (t.biased) return PropertyResult::fail(name, id, "outputs biased toward zero (truncation?)", o.str()).with_exercised(t.cases);
  return PropertyResult::pass(name, id, o.str()).with_exercised(t.cases);
}

}  // namespace attnv::checks
