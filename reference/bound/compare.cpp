// The acceptance rule and the element-by-element comparison (BOUND.md section 6).
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <utility>

#include "problem/kernel_fault.h"
#include "reference/bound/bound.h"

namespace attnv::bound {

double threshold(double out, double exact, double b, DType out_dtype) {
  // 2^-53 |exact|: the reference returns the correctly rounded double of the exact value.
  // ulp_out(out) / 2: the kernel's own final rounding to its output dtype (ulp(out) >= ulp of
  // the value it rounded, whichever side of a binade boundary it landed on).
  return b + std::ldexp(std::fabs(exact), -53) + 0.5 * ulp(out_dtype, out);
}

bool overflow_allowed(double out, double exact, double b, DType out_dtype) {
  // Round to nearest sends every value >= Omega = max + ulp(max)/2 to inf. An infinite output is
  // correct rounding iff some value within the allowance of the exact one reaches Omega
  // (BOUND.md section 6: an exact value near the top of f16 may legitimately round to inf).
  if (!std::isinf(out) || !std::isfinite(exact) || std::signbit(out) != std::signbit(exact)) return false;
  const double top = max_finite(out_dtype);
  const double omega = top + 0.5 * ulp(out_dtype, top);
  return std::fabs(exact) + b + std::ldexp(std::fabs(exact), -53) >= omega;
}

bool accept(double out, double exact, double b, DType out_dtype) {
  if (!std::isfinite(exact)) return out == exact;  // LSE = -inf of a fully masked row
  if (!std::isfinite(out)) return overflow_allowed(out, exact, b, out_dtype);
  if (b == 0 && exact == 0) return out == 0;  // fully masked rows, hidden keys: exactly zero
  return std::fabs(out - exact) <= threshold(out, exact, b, out_dtype);
}

void RatioHistogram::add(double ratio) {
  int bin;
  if (!(ratio > 0)) bin = 0;  // exact (NaN ratios cannot occur: callers pass finite errors or inf)
  else if (ratio >= 10) bin = kBins - 1;
  else bin = std::clamp(1 + static_cast<int>(std::floor((std::log10(ratio) + 6) * 4)), 1, kBins - 2);
  ++count[static_cast<std::size_t>(bin)];
}

RatioHistogram& RatioHistogram::operator+=(const RatioHistogram& o) {
  for (int i = 0; i < kBins; ++i) count[static_cast<std::size_t>(i)] += o.count[static_cast<std::size_t>(i)];
  return *this;
}

std::int64_t RatioHistogram::total() const {
  std::int64_t t = 0;
  for (std::int64_t c : count) t += c;
  return t;
}

double RatioHistogram::lower_edge(int i) {
  if (i <= 0) return 0;
  if (i == 1) return 0;  // everything below 1e-6 (but not exact) lands here
  if (i >= kBins - 1) return 10;
  return std::pow(10.0, -6 + (i - 1) / 4.0);
}

double RatioHistogram::upper_edge(int i) {
  if (i <= 0) return 0;
  if (i >= kBins - 1) return HUGE_VAL;
  return std::pow(10.0, -6 + i / 4.0);
}

void TightnessHistogram::add(double r) {
  int bin;
  if (!(r < 1e3)) bin = kBins - 1;  // inf (an allowance of a value that overflowed) too
  else if (r < 1e-17) bin = 0;
  else bin = std::clamp(1 + static_cast<int>(std::floor((std::log10(r) + 17) * 4)), 1, kBins - 2);
  ++count[static_cast<std::size_t>(bin)];
  max = std::max(max, r);
}

TightnessHistogram& TightnessHistogram::operator+=(const TightnessHistogram& o) {
  for (int i = 0; i < kBins; ++i) count[static_cast<std::size_t>(i)] += o.count[static_cast<std::size_t>(i)];
  max = std::max(max, o.max);
  return *this;
}

std::int64_t TightnessHistogram::total() const {
  std::int64_t t = 0;
  for (std::int64_t c : count) t += c;
  return t;
}

std::int64_t TightnessHistogram::at_least_own_size() const {
  std::int64_t n = 0;
  for (int i = 69; i < kBins; ++i) n += count[static_cast<std::size_t>(i)];  // bin 69 starts at 10^0
  return n;
}

double TightnessHistogram::median_at_most() const {
  const std::int64_t n = total();
  if (n == 0) return 0;
  std::int64_t seen = 0;
  for (int i = 0; i < kBins; ++i) {
    seen += count[static_cast<std::size_t>(i)];
    if (2 * seen >= n) {
      if (i == kBins - 1) return HUGE_VAL;
      return std::min(max, std::pow(10.0, -17 + i / 4.0));  // bin i's upper edge, never above the largest
    }
  }
  return max;
}

namespace {

TensorReport compare_tensor(const char* name, const std::vector<double>& out,
                            const std::vector<double>& exact, const std::vector<double>& bnd,
                            DType out_dtype) {
  TensorReport r;
  r.name = name;
  r.out_dtype = out_dtype;
  r.elements = static_cast<std::int64_t>(exact.size());
  if (out.size() != exact.size() || bnd.size() != exact.size()) {
    r.failures = r.elements;  // a wrong-sized answer fails everywhere
    r.worst_ratio = HUGE_VAL;
    return r;
  }
  for (std::size_t e = 0; e < exact.size(); ++e) {
    const double o = out[e], x = exact[e], b = bnd[e];
    const bool ok = accept(o, x, b, out_dtype);
    if (!ok) ++r.failures;
    if (ok && !std::isfinite(o)) continue;  // an allowed overflow to inf: no finite error to rate
    if (std::isfinite(x) && !std::isfinite(o)) {
      ++r.non_finite;
      r.hist.add(HUGE_VAL);
      if (r.non_finite == 1) {  // the first one is the worst element, whatever came before
        r.worst_ratio = HUGE_VAL;
        r.worst_index = static_cast<std::int64_t>(e);
        r.worst_out = o;
        r.worst_exact = x;
        r.worst_bound = b;
        r.worst_threshold = threshold(x, x, b, out_dtype);
      }
      continue;
    }
    if (!std::isfinite(x)) {
      // A non-finite exact value (a fully masked row's LSE = -inf) requires the identical value:
      // a failure here outranks every passing element, or the finding would quote one of those
      // (0.42x) and never show the failing LSEs.
      if (!ok && r.non_finite == 0 && !(r.worst_ratio > 1)) {
        r.worst_ratio = HUGE_VAL;
        r.worst_index = static_cast<std::int64_t>(e);
        r.worst_out = o;
        r.worst_exact = x;
        r.worst_bound = b;
        r.worst_threshold = 0;
      }
      continue;
    }
    if (std::isinf(b)) {  // accepted, but nothing was judged
      ++r.unjudged;
      continue;
    }
    if (x != 0) r.tightness.add(threshold(x, x, b, out_dtype) / std::fabs(x));
    const double err = std::fabs(o - x);
    const double thr = threshold(o, x, b, out_dtype);
    if (b > 0) {
      const double beyond = err - (thr - b);
      if (beyond > 0) r.worst_bound_usage = std::max(r.worst_bound_usage, beyond / b);
    }
    double ratio = 0;
    if (err > 0) ratio = (b == 0 && x == 0) ? HUGE_VAL : err / thr;
    r.hist.add(ratio);
    if (r.non_finite == 0 && (ratio > r.worst_ratio || r.worst_index < 0)) {
      r.worst_ratio = ratio;
      r.worst_index = static_cast<std::int64_t>(e);
      r.worst_out = o;
      r.worst_exact = x;
      r.worst_bound = b;
      r.worst_threshold = thr;
    }
  }
  return r;
}

}  // namespace

Comparison compare(const Outputs& kernel, const Outputs& exact, const Bounds& bounds,
                   DType out_dtype) {
  Comparison c;
  // accept() reads a NaN bound as "outside it": that would be a finding charged to the kernel
  // for a defect of attnv's own arithmetic (an unbounded factor times a zero term gives NaN,
  // where +inf, "nothing bounded", was meant). Refused here as attnv's error, by name.
  const std::pair<const char*, const std::vector<double>*> all[] = {
      {"out", &bounds.out}, {"lse", &bounds.lse}, {"dq", &bounds.dq},
      {"dk", &bounds.dk},   {"dv", &bounds.dv},   {"dsinks", &bounds.dsinks}};
  for (const auto& [name, v] : all)
    for (std::size_t e = 0; e < v->size(); ++e)
      if (std::isnan((*v)[e]))
        throw HarnessError(std::string("attnv's error bound is NaN at ") + name + "[" + std::to_string(e) +
                           "]: a defect of attnv's bound (reference/bound), not of the kernel; nothing was judged");
  struct Field {
    const char* name;
    const std::vector<double> Outputs::*o;
    const std::vector<double> Bounds::*b;
  };
  const Field fields[] = {{"out", &Outputs::out, &Bounds::out}, {"lse", &Outputs::lse, &Bounds::lse},
                          {"dq", &Outputs::dq, &Bounds::dq},    {"dk", &Outputs::dk, &Bounds::dk},
                          {"dv", &Outputs::dv, &Bounds::dv},    {"dsinks", &Outputs::dsinks, &Bounds::dsinks}};
  for (const Field& f : fields) {
    const auto& ex = exact.*(f.o);
    const auto& bd = bounds.*(f.b);
    const auto& ke = kernel.*(f.o);
    if (ex.empty() || bd.empty() || ke.empty()) continue;
    c.tensors.push_back(compare_tensor(f.name, ke, ex, bd, out_dtype));
    // Tightness (issue 39): an O element whose allowance covers its visible values' range passes
    // any value in that range, so it is counted apart and is no evidence.
    if (f.b == &Bounds::out && bounds.out_range.size() == ex.size()) {
      TensorReport& t = c.tensors.back();
      for (std::size_t e = 0; e < ex.size(); ++e) {
        const double range = bounds.out_range[e];
        if (std::isfinite(ex[e]) && std::isfinite(bd[e]) && range > 0 && threshold(ex[e], ex[e], bd[e], out_dtype) >= range)
          ++t.uninformative;
      }
    }
  }
  return c;
}

bool Comparison::ok() const {
  for (const auto& t : tensors)
    if (!t.ok()) return false;
  return true;
}

std::int64_t Comparison::elements() const {
  std::int64_t n = 0;
  for (const auto& t : tensors) n += t.elements;
  return n;
}

std::int64_t Comparison::unjudged() const {
  std::int64_t n = 0;
  for (const auto& t : tensors) n += t.unjudged;
  return n;
}

TightnessHistogram Comparison::tightness() const {
  TightnessHistogram h;
  for (const auto& t : tensors) h += t.tightness;
  return h;
}

std::int64_t Comparison::uninformative() const {
  std::int64_t n = 0;
  for (const auto& t : tensors) n += t.uninformative;
  return n;
}

double Comparison::worst_ratio() const {
  double w = 0;
  for (const auto& t : tensors) w = std::max(w, t.worst_ratio);
  return w;
}

std::string Comparison::summary() const {
  std::ostringstream o;
  for (const auto& t : tensors) {
    o << t.name << ": " << t.elements << " elements, " << t.failures << " failures, "
      << t.non_finite << " non-finite, worst error/threshold " << t.worst_ratio;
    if (t.worst_index >= 0)
      o << " at [" << t.worst_index << "] (kernel " << t.worst_out << ", exact " << t.worst_exact
        << ", bound " << t.worst_bound << ")";
    // An error of at most a few smallest normals of the computing dtype (f32 for the 16-bit
    // storages, which compute in it; f64 for f64) is the signature of a kernel that flushes
    // subnormals (FTZ/DAZ) without declaring it: a flushed intermediate or output errs by
    // < min_normal (BOUND.md section 12). The threshold was f32's for every dtype, so any f64
    // error below 4.7e-38 was blamed on flushing.
    const DType computing = t.out_dtype == DType::f64 ? DType::f64 : DType::f32;
    const double err = std::fabs(t.worst_out - t.worst_exact), mn = min_normal(computing);
    if (t.failures > 0 && t.worst_index >= 0 && std::isfinite(err) && err > 0 && err <= 4 * mn)
      o << " [error " << err << " <= 4 min_normal(" << dtype_name(computing) << ") = " << 4 * mn
        << ": subnormals flushed to zero? a kernel that flushes subnormals (FTZ/DAZ) must declare flush_subnormals; "
           "one that does not has a finding in the subnormal range]";
    o << '\n';
  }
  return o.str();
}

}  // namespace attnv::bound
