#include "judge/judge.h"

#include <cmath>
#include <cstring>
#include <sstream>
#include <utility>

#include "problem/element_name.h"
#include "problem/kernel_fault.h"
#include "problem/validate.h"
#include "reference/fast/fast.h"

namespace attnv::judge {
namespace {

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

Judgement failure(FailKind kind, std::string message, Outputs got = {}) {
  Judgement j;
  j.failed = kind;
  j.message = std::move(message);
  j.got = std::move(got);
  return j;
}

}  // namespace

void widen_unresolved(bound::Bounds& b, const reference::FastAccuracy& a) {
  const auto widen = [](std::vector<double>& bound, const std::vector<double>& radius, const std::vector<double>& resolved) {
    if (bound.size() != radius.size() || bound.size() != resolved.size()) return;
    for (std::size_t e = 0; e < bound.size(); ++e)
      if (resolved[e] == 0) bound[e] += radius[e] + 0x1p-1074;
  };
  widen(b.out, a.radius.out, a.resolved.out);
  widen(b.lse, a.radius.lse, a.resolved.lse);
  widen(b.dq, a.radius.dq, a.resolved.dq);
  widen(b.dk, a.radius.dk, a.resolved.dk);
  widen(b.dv, a.radius.dv, a.resolved.dv);
  widen(b.dsinks, a.radius.dsinks, a.resolved.dsinks);
}

Reference reference(Kernel& k, const Case& c, bool backward, int threads) {
  Reference r;
  const reference::FastOptions fo{.threads = threads};
  reference::FastAccuracy accuracy;
  r.exact = backward ? reference::fast_backward(c, fo, nullptr, &accuracy) : reference::fast_forward(c, fo, nullptr, &accuracy);
  const PrecisionModel m = kernel_precision(k, c.problem);
  r.bounds = backward ? bound::backward_bound(c, r.exact, m) : bound::forward_bound(c, r.exact, m);
  widen_unresolved(r.bounds, accuracy);
  r.out_dtype = m.out;
  return r;
}

Run run(Kernel& k, const Case& c, Layout layout, bool backward, FpCheck fp) {
  CaseBuffers buf(c, layout, backward);
  const Capabilities caps = k.capabilities();
  const bool lse = caps.lse || (backward && caps.backward_reads_lse);
  if (!lse) buf.views().lse = TensorRef{};
  if (auto e = check_views(c.problem, buf.views()); !e.empty()) throw HarnessError("attnv made invalid kernel views: " + e[0]);
  buf.poison_outputs();
  Run r;
  kernel_call([&] {
    FpWatch watch(fp);
    k.forward(c.problem, buf.views());
    if (backward) k.backward(c.problem, buf.views());
    r.fp_raised = watch.raised();
  });
  r.out = buf.outputs();
  if (!lse) r.out.lse.clear();
  r.inputs_unchanged = buf.inputs_unchanged();
  r.unwritten = buf.unwritten_outputs();
  return r;
}

Judgement judge_call(Kernel& k, const Case& c, Layout layout, const Reference& ref, const Options& opt) {
  Run first;
  try {
    first = run(k, c, layout, opt.backward, opt.fp);
  } catch (const KernelDeclined&) {
    throw;  // declined through supports(): not a call to judge (NOT SUPPORTED, a fuzz skip)
  } catch (const KernelFault& e) {
    return failure(fail_kind(e.kind()), e.what());
  }
  if (opt.on_run) opt.on_run(c, layout, opt.backward, first.out);
  if (!first.fp_raised.empty())
    return failure(FailKind::fp_exception, first.fp_raised + " raised inside the kernel", std::move(first.out));
  if (!first.inputs_unchanged) return failure(FailKind::input_written, "the kernel wrote into an input buffer", std::move(first.out));
  if (first.unwritten.count > 0) return failure(FailKind::missing_output, first.unwritten.message(), std::move(first.out));
  if (opt.twice) {
    Run again;
    try {
      again = run(k, c, layout, opt.backward, opt.fp);
    } catch (const KernelDeclined& e) {  // accepted once, declined the same call again
      return failure(FailKind::nondeterministic, std::string("second call: ") + e.what(), std::move(first.out));
    } catch (const KernelFault& e) {
      return failure(fail_kind(e.kind()), std::string("second call: ") + e.what(), std::move(first.out));
    }
    if (opt.on_run) opt.on_run(c, layout, opt.backward, again.out);
    if (!again.fp_raised.empty())
      return failure(FailKind::fp_exception, "second call: " + again.fp_raised + " raised inside the kernel", std::move(first.out));
    if (std::string d = first_difference(c, first.out, again.out); !d.empty()) {
      Judgement j = failure(FailKind::nondeterministic, "a second call on the same inputs gave different bits", std::move(first.out));
      j.worst = std::move(d);
      return j;
    }
  }
  return judge_outputs(c, std::move(first.out), ref);
}

Judgement judge_outputs(const Case& c, Outputs got, const Reference& ref) {
  Judgement j;
  j.comparison = bound::compare(got, ref.exact, ref.bounds, ref.out_dtype);
  // An element whose allowance covers the visible values' range would pass any of them: judged,
  // but no evidence (docs/certificate.md, "Tightness").
  j.uninformative = j.comparison.uninformative();
  j.exercised = j.comparison.elements() - j.comparison.unjudged() - j.uninformative;
  j.got = std::move(got);
  if (j.comparison.ok()) return j;
  bool non_finite = false;
  for (const auto& t : j.comparison.tensors) non_finite = non_finite || t.non_finite > 0;
  // A NaN or inf is no rounding error: it ranks first, whatever the finite elements did.
  j.failed = non_finite ? FailKind::non_finite : FailKind::outside_bound;
  j.message = j.comparison.summary();
  j.worst = worst_failure(c, j.comparison);
  return j;
}

std::string worst_failure(const Case& c, const bound::Comparison& cmp) {
  for (const auto& t : cmp.tensors) {
    if (t.ok()) continue;
    std::ostringstream o;
    o.precision(17);
    // The allowance printed is the threshold the element was judged by, not the bound alone: a
    // bf16 error of 1.6e-3 is judged against ~2e-3, and "bound 4.9e-7 (1.62x)" misstates both.
    if (t.worst_index >= 0) {
      o << element_name(c, t.name, static_cast<std::size_t>(t.worst_index)) << " = " << t.worst_out << ", exact "
        << t.worst_exact;
      // An exact 0 with bound 0 (a fully masked row's O, a hidden key's gradient) allows +-0 alone:
      // no rounding allowance, and no ratio to print ("infx the allowance" said nothing).
      if (!std::isfinite(t.worst_exact))
        o << ", allowed exactly " << t.worst_exact << " (a non-finite exact value)";
      else if (t.worst_exact == 0 && t.worst_bound == 0)
        o << ", allowed exactly +-0 (an exact 0 with bound 0)";
      else {
        o << ", allowed " << t.worst_threshold << " (bound " << t.worst_bound << " + rounding)";
        if (std::isfinite(t.worst_out)) o << ", " << t.worst_ratio << "x the allowance";
      }
    }
    if (t.non_finite) o << (t.worst_index >= 0 ? "; " : "") << t.non_finite << " non-finite " << t.name << " elements";
    if (t.worst_index < 0 && !t.non_finite) o << t.name << ": " << t.failures << " of " << t.elements << " elements rejected (wrong size?)";
    return o.str();
  }
  return "";
}

std::string first_difference(const Case& c, const Outputs& a, const Outputs& b) {
  const std::pair<const char*, const std::vector<double> Outputs::*> fields[] = {
      {"out", &Outputs::out}, {"lse", &Outputs::lse}, {"dq", &Outputs::dq}, {"dk", &Outputs::dk}, {"dv", &Outputs::dv},
      {"dsinks", &Outputs::dsinks}};
  for (const auto& [name, f] : fields)
    if (!same_bits(a.*f, b.*f)) return bitwise_difference(c, name, a.*f, b.*f);
  return "";
}

}  // namespace attnv::judge
