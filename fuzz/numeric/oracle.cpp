#include "fuzz/numeric/oracle.h"

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "fuzz/numeric/numeric_signal.h"
#include "problem/dtype.h"
#include "problem/element_name.h"
#include "problem/error.h"
#include "problem/kernel_fault.h"
#include "problem/validate.h"
#include "reference/fast/fast.h"

namespace attnv::fuzz {
namespace {

constexpr int kFpExceptions = FE_OVERFLOW | FE_INVALID | FE_DIVBYZERO;

// Floating-point exceptions around the kernel call only: the reference and the bound raise
// flags legitimately (log(0) = -inf for a fully masked row).
class FpGuard {
 public:
  explicit FpGuard(FpCheck mode) : mode_(mode) {
    if (mode_ == FpCheck::off) return;
    std::feclearexcept(FE_ALL_EXCEPT);
    if (mode_ == FpCheck::trap) feenableexcept(kFpExceptions);
  }
  ~FpGuard() {
    if (mode_ == FpCheck::trap) fedisableexcept(kFpExceptions);
    if (mode_ != FpCheck::off) std::feclearexcept(FE_ALL_EXCEPT);
  }
  FpGuard(const FpGuard&) = delete;
  FpGuard& operator=(const FpGuard&) = delete;
  // The exceptions raised since construction (flags mode; a trap never gets here).
  std::string raised() const {
    if (mode_ != FpCheck::flags) return "";
    const int f = std::fetestexcept(kFpExceptions);
    std::string s;
    if (f & FE_OVERFLOW) s += "overflow ";
    if (f & FE_INVALID) s += "invalid-operation ";
    if (f & FE_DIVBYZERO) s += "division-by-zero ";
    if (!s.empty()) s.pop_back();
    return s;
  }

 private:
  FpCheck mode_;
};

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

// The first element whose bits differ between two runs, named; "" when none.
std::string first_difference(const Case& c, const Outputs& a, const Outputs& b) {
  const std::pair<const char*, const std::vector<double> Outputs::*> fields[] = {
      {"out", &Outputs::out}, {"lse", &Outputs::lse}, {"dq", &Outputs::dq}, {"dk", &Outputs::dk}, {"dv", &Outputs::dv}};
  for (const auto& [name, f] : fields)
    if (!same_bits(a.*f, b.*f)) return bitwise_difference(c, name, a.*f, b.*f);
  return "";
}

// The worst element of the first tensor that fails (else of the worst tensor), named.
std::string worst_element(const Case& c, const bound::Comparison& cmp) {
  const bound::TensorReport* pick = nullptr;
  for (const auto& t : cmp.tensors)
    if (!t.ok()) { pick = &t; break; }
  if (!pick)
    for (const auto& t : cmp.tensors)
      if (!pick || t.worst_ratio > pick->worst_ratio) pick = &t;
  if (!pick || pick->worst_index < 0) return pick && pick->non_finite ? std::to_string(pick->non_finite) + " non-finite " + pick->name + " elements" : "";
  std::ostringstream o;
  o.precision(17);
  o << element_name(c, pick->name, static_cast<std::size_t>(pick->worst_index)) << " = " << pick->worst_out
    << ", exact " << pick->worst_exact << ", bound " << pick->worst_bound << " (" << pick->worst_ratio << "x the allowance)";
  if (pick->non_finite) o << "; " << pick->non_finite << " non-finite " << pick->name << " elements";
  return o.str();
}

// The first NaN the kernel wrote into O or a gradient, named; "" when none.
std::string first_nan(const Case& c, const Outputs& got) {
  const std::pair<const char*, const std::vector<double> Outputs::*> fields[] = {
      {"out", &Outputs::out}, {"dq", &Outputs::dq}, {"dk", &Outputs::dk}, {"dv", &Outputs::dv}};
  for (const auto& [name, f] : fields) {
    const std::vector<double>& v = got.*f;
    for (std::size_t i = 0; i < v.size(); ++i)
      if (std::isnan(v[i])) return element_name(c, name, i) + " = NaN";
  }
  return "";
}

// max |scale q_i . k_j| over every query and key (softcap applied), ignoring masks.
double max_logit(const Case& c) {
  const Shape& s = c.problem.shape;
  const double scale = c.problem.effective_scale();
  const std::int64_t group = s.Hq / s.Hkv;
  double m = 0;
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t h = 0; h < s.Hq; ++h)
      for (std::int64_t i = 0; i < s.Tq; ++i)
        for (std::int64_t j = 0; j < s.Tk; ++j) {
          double dot = 0;
          for (std::int64_t d = 0; d < s.Dk; ++d) dot += c.q[c.qi(b, h, i, d)] * c.k[c.ki(b, h / group, j, d)];
          m = std::max(m, std::fabs(scale * dot));
        }
  return c.problem.softcap ? std::min(m, *c.problem.softcap) : m;
}

bool gradients_representable(const Outputs& exact, DType out) {
  const double limit = max_finite(out) / 4;
  for (const auto* g : {&exact.dq, &exact.dk, &exact.dv})
    for (double x : *g)
      if (!(std::fabs(x) <= limit)) return false;
  return true;
}

struct Call {
  Outputs got;
  bool inputs_unchanged = true;
  std::optional<Finding> failure;  // the call failed (crashed, hung, ...) or raised fp_exception
  std::string declined;            // the kernel threw InputError
};

Call call_kernel(Kernel& k, const Case& c, Layout layout, bool backward, bool lse, const OracleOptions& opt) {
  Call r;
  CaseBuffers buf(c, layout, backward);
  // A kernel that does not claim the LSE is not asked for it (as the property checks do).
  if (!lse) buf.views().lse = TensorRef{};
  if (const auto errs = check_views(c.problem, buf.views()); !errs.empty())
    throw std::logic_error("the oracle made invalid views: " + errs.front());
  std::string raised;
  try {
    FpGuard guard(opt.fp);
    k.forward(c.problem, buf.views());
    if (backward) k.backward(c.problem, buf.views());
    raised = guard.raised();
  } catch (const InputError& e) {
    r.declined = e.what();
    return r;
  } catch (const KernelFault& e) {  // a plugin's crash, hang, canary or refusal: says what it did itself
    r.failure = Finding{fail_kind(e.kind()), e.what(), "", c, layout, {}, backward};
    return r;
  } catch (const std::exception& e) {
    r.failure = Finding{FailKind::crashed, std::string("threw: ") + e.what(), "", c, layout, {}, backward};
    return r;
  } catch (...) {
    r.failure = Finding{FailKind::crashed, "threw an exception that is not a std::exception", "", c, layout, {}, backward};
    return r;
  }
  r.got = buf.outputs();
  r.inputs_unchanged = buf.inputs_unchanged();
  if (!raised.empty())
    r.failure = Finding{FailKind::fp_exception, raised + " raised inside the kernel", "", c, layout, r.got, backward};
  return r;
}

}  // namespace

Capabilities fuzzed_claims(const Kernel& k, std::optional<DType> dtype) {
  Capabilities c = k.capabilities();
  if (c.dtypes.empty()) throw InputError("kernel " + k.name() + " claims no dtype");
  if (dtype) {
    if (std::find(c.dtypes.begin(), c.dtypes.end(), *dtype) == c.dtypes.end()) {
      std::string claimed;
      for (DType d : c.dtypes) claimed += (claimed.empty() ? "" : ", ") + std::string(dtype_name(d));
      throw InputError("--dtype " + std::string(dtype_name(*dtype)) + ": kernel " + k.name() +
                       " does not claim it (it claims " + claimed + ")");
    }
    c.dtypes = {*dtype};
  }
  return c;
}

bool backward_range(const Case& c) {
  const auto max_abs = [](const std::vector<double>& v) {
    double m = 0;
    for (double x : v) {
      if (!std::isfinite(x)) return std::numeric_limits<double>::infinity();
      m = std::max(m, std::fabs(x));
    }
    return m;
  };
  const auto min_nonzero = [](const std::vector<double>& v) {
    double m = std::numeric_limits<double>::infinity();
    for (double x : v)
      if (x != 0) m = std::min(m, std::fabs(x));
    return m;
  };
  const Shape& s = c.problem.shape;
  // |q|, |k| <= 2^10 and |v| <= 2^16 as well: with a softcap the logits stay small however
  // large q is, and backward_bound gave NaN bounds for |q| = 2^40 there.
  if (!(max_abs(c.q) <= 0x1p10) || !(max_abs(c.k) <= 0x1p10) || !(max_abs(c.v) <= 0x1p16)) return false;
  // Logits within +-32: P >= e^-64, so dS = P (dP - D) stays far above the underflow.
  double bias = 0;
  for (double x : c.bias)
    if (x != -std::numeric_limits<double>::infinity()) bias = std::max(bias, std::fabs(x));
  if (!(bias <= 16)) return false;
  if (max_logit(c) + bias > 32) return false;
  // No input near the underflow (nonzero |x| >= 2^-30): dK = scale sum dS q with subnormal q
  // was judged outside the bound for the naive kernel and the core alike (a gap of the
  // backward bound's domain, not of either kernel).
  for (const auto* v : {&c.q, &c.k, &c.v})
    if (!(min_nonzero(*v) >= 0x1p-30)) return false;
  // dS = P (dP - D) with |dP| <= |dO| |v| Dv (|dO| < 16) must fit the storage dtype with room:
  // a kernel may round dS to it (FlashAttention-2 does), and the bound does not model that
  // overflowing (the naive kernel gave dQ = inf in f16 past it).
  const double ds = 2 * 16 * max_abs(c.v) * static_cast<double>(s.Dv);
  return ds <= max_finite(c.problem.dtype) / 4;
}

Case genome_case(const Genome& g, const Capabilities& claims, bool backward) {
  Case c = to_case(g, claims);
  if (!backward || !backward_range(c)) return c;
  // dO from the seed, as the explicit-code defaults are: random sign and mantissa, |dO| in
  // [2^-4, 2^4), so the gradients stay in the range the bound is derived for.
  c.dout.resize(static_cast<std::size_t>(q_elements(c.problem.shape) / c.problem.shape.Dk * c.problem.shape.Dv));
  const std::uint64_t seed = static_cast<std::uint64_t>(seed_of(g)) ^ 0xD0D0D0D0ULL << 32;
  for (std::size_t i = 0; i < c.dout.size(); ++i) {
    const std::uint64_t r = splitmix(seed + i);
    const double mag = std::ldexp(1.0 + static_cast<double>((r >> 4) & 511) / 512.0, static_cast<int>((r >> 1) & 7) - 4);
    c.dout[i] = round_to(c.problem.dtype, (r & 1) ? -mag : mag);
  }
  return c;
}

Layout genome_layout(const Genome& g, const Capabilities& claims) {
  return claims.strided ? layout_of(g) : Layout::bhtd;
}

namespace {
Verdict judge_prepared(Kernel& k, const Case& c, Layout layout, const OracleOptions& opt, Verdict v,
                       const PrecisionModel& model, const Capabilities& caps);
}  // namespace

Verdict judge_case(Kernel& k, const Case& c, Layout layout, const OracleOptions& opt) {
  if (const auto errs = check_case(c); !errs.empty()) throw std::logic_error("the oracle got an invalid case: " + errs.front());
  const Capabilities caps = k.capabilities();
  Verdict v;
  v.backward = opt.backward && c.has_dout() && caps.backward;
  const PrecisionModel model = k.precision(c.problem.dtype);
  try {
    v.exact = v.backward ? ref::fast_backward(c, ref::FastOptions{.threads = 1})
                         : ref::fast_forward(c, ref::FastOptions{.threads = 1});
  } catch (const InputError& e) {
    // The fast reference declines cases whose error radius it cannot keep finite (huge
    // logits that cancel). Not a kernel finding; the forward alone may still be judged.
    if (!v.backward) {
      v.skipped_why = std::string("the reference declined the case: ") + e.what();
      return v;
    }
    v.backward = false;
  }
  // Gradients that overflow the output dtype (or come near it) are left out: rounding them
  // raises the overflow flag legitimately, and the bound is not derived for intermediates
  // that overflow. The forward is still judged.
  if (v.backward && !gradients_representable(v.exact, model.out)) v.backward = false;
  if (!v.backward && v.exact.out.empty()) {
    try {
      v.exact = ref::fast_forward(c, ref::FastOptions{.threads = 1});
    } catch (const InputError& e) {
      v.skipped_why = std::string("the reference declined the case: ") + e.what();
      return v;
    }
  }
  // A finding records the case as judged: without dout when the backward was left out, so a
  // reproducer replays exactly the forward.
  if (v.backward || !c.has_dout()) return judge_prepared(k, c, layout, opt, std::move(v), model, caps);
  Case forward_only = c;
  forward_only.dout.clear();
  return judge_prepared(k, forward_only, layout, opt, std::move(v), model, caps);
}

namespace {
// The rest of judge_case, once the reference has answered and the backward is decided.
Verdict judge_prepared(Kernel& k, const Case& c, Layout layout, const OracleOptions& opt, Verdict v,
                       const PrecisionModel& model, const Capabilities& caps) {
  if (!v.backward) v.exact.dq.clear(), v.exact.dk.clear(), v.exact.dv.clear();
  const bound::Bounds bounds = v.backward ? bound::backward_bound(c, v.exact, model) : bound::forward_bound(c, v.exact, model);
  const bool lse = caps.lse || v.backward;

  Call first = call_kernel(k, c, layout, v.backward, lse, opt);
  if (!first.declined.empty()) {
    v.skipped_why = "the kernel declined the case: " + first.declined;
    return v;
  }
  v.judged = true;
  if (first.failure) {
    v.finding = std::move(first.failure);
    return v;
  }
  Outputs& got = first.got;
  // A kernel that does not claim the LSE is judged on O alone: the reference's LSE, rounded to
  // the LSE dtype, stands in for its own.
  if (!lse) {
    got.lse = v.exact.lse;
    for (double& x : got.lse) x = round_to(lse_dtype(c.problem.dtype), x);
  }
  const auto finding = [&](FailKind kind, std::string message, std::string worst) {
    v.finding = Finding{kind, std::move(message), std::move(worst), c, layout, got, v.backward};
    return v;
  };
  if (!first.inputs_unchanged) return finding(FailKind::input_written, "the kernel wrote into an input buffer", "");
  if (opt.twice) {
    Call again = call_kernel(k, c, layout, v.backward, lse, opt);
    if (again.failure) {
      v.finding = std::move(again.failure);
      v.finding->message = "second call: " + v.finding->message;
      return v;
    }
    if (!lse) again.got.lse = got.lse;
    if (!again.declined.empty())
      return finding(FailKind::nondeterministic, "the second call declined the case: " + again.declined, "");
    if (std::string d = first_difference(c, got, again.got); !d.empty())
      return finding(FailKind::nondeterministic, "a second call on the same inputs gave different bits", d);
  }
  v.comparison = bound::compare(got, v.exact, bounds, model.out);
  signal_buckets(c, v.exact, v.comparison, v.buckets);
  if (std::string nan = first_nan(c, got); !nan.empty())
    return finding(FailKind::non_finite, "NaN in the output\n" + v.comparison.summary(), nan);
  if (!v.comparison.ok())
    return finding(FailKind::outside_bound, "outside the error bound\n" + v.comparison.summary(), worst_element(c, v.comparison));
  return v;
}

}  // namespace

Verdict judge_genome(Kernel& k, const Genome& g, const Capabilities& claims, const OracleOptions& opt) {
  const Case c = genome_case(g, claims, opt.backward && claims.backward);
  return judge_case(k, c, genome_layout(g, claims), opt);
}

std::string case_line(const Case& c, Layout layout) {
  std::ostringstream o;
  o << describe(c.problem) << " layout " << layout_name(layout);
  const auto range = [&](const char* name, const std::vector<double>& v) {
    if (v.empty()) return;
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    bool nonfinite = false;
    for (double x : v) {
      if (!std::isfinite(x)) { nonfinite = true; continue; }
      if (x != 0) lo = std::min(lo, std::fabs(x));
      hi = std::max(hi, std::fabs(x));
    }
    o.precision(3);
    o << " |" << name << "| in [" << (std::isfinite(lo) ? lo : 0.0) << ", " << hi << "]" << (nonfinite ? "+nonfinite" : "");
  };
  range("q", c.q);
  range("k", c.k);
  range("v", c.v);
  range("bias", c.bias);
  if (c.has_dout()) o << " +dout";
  for (std::size_t b = 0; b < c.kv_len.size(); ++b) o << " kv_len[" << b << "]=" << c.kv_len[b];
  return o.str();
}

}  // namespace attnv::fuzz
