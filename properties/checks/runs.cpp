#include "properties/checks/runs.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "problem/kernel_fault.h"
#include "properties/checks/recording.h"
#include "problem/visibility.h"

namespace attnv::checks::detail {

std::string not_claimed(Kernel& k, const Case& c, bool backward) {
  const Capabilities caps = k.capabilities();
  std::string why = caps.unsupported(c.problem);
  if (why.empty() && backward && !caps.backward) why = "backward";
  return why;
}

Run run(Kernel& k, const Case& c, Layout layout, bool backward) {
  Run r = judge::run(k, c, layout, backward);
  record_run(c, layout, backward, r.out);
  // An output element never written reads as attnv's poison NaN: said as what it is, whatever
  // the check would have made of the NaN.
  if (r.unwritten.count > 0) throw KernelFault(FaultKind::missing_output, r.unwritten.message());
  return r;
}

Exact exact_forward(Kernel& k, const Case& c) {
  Exact e = judge::reference(k, c, false);
  record_exact(c, e.exact, e.bounds);
  return e;
}

Exact exact_backward(Kernel& k, const Case& c) {
  Exact e = judge::reference(k, c, true);
  record_exact(c, e.exact, e.bounds);
  return e;
}

namespace {
bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }
}  // namespace

std::string disagreement(const Case& c, const std::string& tensor, const std::vector<double>& a,
                         const std::vector<double>& b, const std::vector<double>& exact,
                         const std::vector<double>& bnd, DType out_dtype) {
  return disagreement(c, tensor, a, b, exact, bnd, bnd, out_dtype);
}

std::string disagreement(const Case& c, const std::string& tensor, const std::vector<double>& a,
                         const std::vector<double>& b, const std::vector<double>& exact,
                         const std::vector<double>& bnd_a, const std::vector<double>& bnd_b, DType out_dtype,
                         double* worst_ratio) {
  if (a.size() != b.size() || a.size() != exact.size()) return tensor + ": sizes differ";
  double worst = 0;
  std::size_t worst_n = 0;
  std::string non_finite;
  for (std::size_t n = 0; n < a.size(); ++n) {
    if (!std::isfinite(a[n]) || !std::isfinite(b[n]) || !std::isfinite(exact[n])) {
      // The two runs are judged against each other: the same bits (NaN included) agree, however
      // far both are from the exact value. That distance is R1's to judge; an invariance check
      // that called "-49998.9 vs -49998.9 (exact -inf)" a change named the wrong cause.
      const bool same = same_bits(a[n], b[n]) || (std::isnan(a[n]) && std::isnan(b[n]));
      if (!same && non_finite.empty()) {
        std::ostringstream o;
        o.precision(17);  // two values differing in their last bits must not print alike ("4.62535 vs 4.62535")
        o << element_name(c, tensor, n) << ": " << a[n] << " vs " << b[n] << " (exact " << exact[n] << ")";
        non_finite = o.str();
      }
      continue;
    }
    const double allowed = bound::threshold(a[n], exact[n], bnd_a[n], out_dtype) + bound::threshold(b[n], exact[n], bnd_b[n], out_dtype);
    const double ratio = allowed > 0 ? std::abs(a[n] - b[n]) / allowed : (a[n] == b[n] ? 0 : HUGE_VAL);
    if (ratio > worst) { worst = ratio; worst_n = n; }
  }
  if (worst_ratio) *worst_ratio = worst;
  if (!non_finite.empty()) return non_finite;
  if (worst <= 1) return "";
  std::ostringstream o;
  o.precision(17);
  o << element_name(c, tensor, worst_n) << ": " << a[worst_n] << " vs " << b[worst_n] << " (exact "
    << exact[worst_n] << ", bounds " << bnd_a[worst_n] << " and " << bnd_b[worst_n] << ", " << worst << "x the summed allowance)";
  return o.str();
}

Case with_identity_v(const Case& c) {
  const Shape& s = c.problem.shape;
  Case id = c;
  id.dout.clear();
  id.problem.shape.Dv = s.Tk;
  id.v.assign(static_cast<std::size_t>(v_elements(id.problem.shape)), 0.0);
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t h = 0; h < s.Hkv; ++h)
      for (std::int64_t j = 0; j < s.Tk; ++j) id.v[id.vi(b, h, j, j)] = 1.0;
  id.id = c.id + " (V = identity)";
  return id;
}

bool row_sees_any(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i) {
  return !visible_keys(c, b, h, i).empty();
}

double exact_grid(DType t, double M) {
  if (!(M > 0)) M = 1;
  if (!(4 * M < max_finite(t))) return 0;
  const double g = std::ldexp(1.0, std::ilogb(4 * M) + 1 - mantissa_bits(t));
  const double smallest = std::ldexp(1.0, min_exponent(t) + 1 - mantissa_bits(t));  // subnormal spacing
  return std::max(g, smallest);
}

double on_grid(double x, double g) { return std::nearbyint(x / g) * g; }

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

}  // namespace attnv::checks::detail
