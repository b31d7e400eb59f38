#pragma once
// Test helper: the fast reference against the oracle, element by element. Where the fast radius
// decides the rounding the two doubles must be equal bit for bit (unless the oracle's own radius
// admits the difference); where it does not, the oracle must lie within the fast radius.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace attnv::reference::test {

inline double ulp_of(double x) {
  const double a = std::fabs(x);
  return std::nextafter(a, INFINITY) - a;
}

struct Agreement {
  std::int64_t compared = 0;      // elements where the fast radius decides the rounding
  std::int64_t mismatched = 0;    // ... and the bits differ although the oracle is sure
  std::int64_t unresolved = 0;    // fast radius undecided
  std::int64_t outside = 0;       // ... and the oracle lies outside radius + ulp
  std::int64_t oracle_doubt = 0;  // differences the oracle's own radius cannot exclude
  double max_resolved_radius_ulps = 0;
  std::string first_problem;
  std::string first_doubt, first_unresolved;

  void note(const std::string& what) {
    if (first_problem.empty()) first_problem = what;
  }
  bool ok() const { return mismatched == 0 && outside == 0; }
};

// Compares one tensor. oracle_radius may be empty (no oracle accuracy for sampled rows).
inline void compare(const std::string& where, const std::vector<double>& fast,
             const std::vector<double>& oracle, const std::vector<double>& fast_radius,
             const std::vector<double>& fast_resolved, const std::vector<double>& oracle_radius,
             Agreement& a) {
  ASSERT_EQ(fast.size(), oracle.size()) << where;
  for (std::size_t e = 0; e < fast.size(); ++e) {
    const double f = fast[e], o = oracle[e];
    const bool same = f == o || (std::isnan(f) && std::isnan(o));
    if (fast_resolved[e] != 0) {
      ++a.compared;
      if (std::isfinite(f) && f != 0)
        a.max_resolved_radius_ulps = std::max(a.max_resolved_radius_ulps, fast_radius[e] / ulp_of(f));
      if (same) continue;
      // The oracle's double is the rounding of a value within its radius of the exact one: a
      // difference is the oracle's doubt only if that radius reaches the midpoint.
      const double r = oracle_radius.empty() ? 0.0 : oracle_radius[e];
      if (r >= std::fabs(f - o) / 2) {
        ++a.oracle_doubt;
        if (a.first_doubt.empty()) {
          std::ostringstream msg;
          msg.precision(17);
          msg << where << "[" << e << "]: fast " << f << " (radius " << fast_radius[e] << ") oracle " << o << " (radius " << r << ")";
          a.first_doubt = msg.str();
        }
        continue;
      }
      ++a.mismatched;
      std::ostringstream msg;
      msg.precision(17);
      msg << where << "[" << e << "]: fast " << f << " oracle " << o << " (fast radius "
          << fast_radius[e] << ")";
      a.note(msg.str());
    } else {
      ++a.unresolved;
      if (a.first_unresolved.empty()) {
        std::ostringstream msg;
        msg.precision(17);
        msg << where << "[" << e << "]: fast " << f << " (radius " << fast_radius[e] << ") oracle " << o;
        a.first_unresolved = msg.str();
      }
      if (same) continue;
      // Both doubles are roundings (half an ulp each) of values within their radii of the exact
      // one; the oracle's radius counts too (at 100 digits it can exceed a subnormal gradient:
      // large_logits/1190/bf16 backward, dq[101], oracle -7.05e-279 +- 4.8e-272, exact -2.93e-320
      // by MPFR at 4000 bits, fast -2.92e-320 +- 4.6e-319).
      const double r = oracle_radius.empty() ? 0.0 : oracle_radius[e];
      if (!(std::fabs(f - o) <= fast_radius[e] + r + ulp_of(f) + ulp_of(o))) {
        ++a.outside;
        std::ostringstream msg;
        msg.precision(17);
        msg << where << "[" << e << "] (unresolved): fast " << f << " oracle " << o
            << " radius " << fast_radius[e];
        a.note(msg.str());
      }
    }
  }
}

inline void report(const char* what, const Agreement& a) {
  std::printf("[ measured ] %s: %lld elements decided, %lld bitwise mismatches, %lld oracle-doubtful, "
              "%lld undecided (%lld outside radius), largest decided radius %.3g ulp\n",
              what, static_cast<long long>(a.compared), static_cast<long long>(a.mismatched),
              static_cast<long long>(a.oracle_doubt), static_cast<long long>(a.unresolved),
              static_cast<long long>(a.outside), a.max_resolved_radius_ulps);
  if (!a.first_doubt.empty()) std::printf("             first oracle-doubtful: %s\n", a.first_doubt.c_str());
  if (!a.first_unresolved.empty()) std::printf("             first undecided: %s\n", a.first_unresolved.c_str());
}

}  // namespace attnv::reference::test
