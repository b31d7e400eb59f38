#pragma once
// Test helper: double-double values against MPFR at 320 bits (far beyond the 106 bits checked).
#include <mpfr.h>

#include <cmath>

#include "reference/fast/dd.h"

namespace attnv::reference::test {

class Mp {
 public:
  Mp() { mpfr_init2(v_, 320); mpfr_set_zero(v_, 1); }
  explicit Mp(double x) : Mp() { mpfr_set_d(v_, x, MPFR_RNDN); }
  explicit Mp(dd::DD x) : Mp() {
    mpfr_set_d(v_, x.hi, MPFR_RNDN);
    mpfr_add_d(v_, v_, x.lo, MPFR_RNDN);  // exact at 320 bits unless the exponents are 200 apart
  }
  Mp(const Mp& o) : Mp() { mpfr_set(v_, o.v_, MPFR_RNDN); }
  Mp& operator=(const Mp& o) { mpfr_set(v_, o.v_, MPFR_RNDN); return *this; }
  ~Mp() { mpfr_clear(v_); }
  mpfr_ptr get() { return v_; }
  mpfr_srcptr get() const { return v_; }
  double to_double() const { return mpfr_get_d(v_, MPFR_RNDN); }

 private:
  mpfr_t v_;
};

// |approx - exact| as a double (rounded up).
inline double abs_error(dd::DD approx, const Mp& exact) {
  Mp e(approx);
  mpfr_sub(e.get(), e.get(), exact.get(), MPFR_RNDN);
  mpfr_abs(e.get(), e.get(), MPFR_RNDN);
  return mpfr_get_d(e.get(), MPFR_RNDU);
}
// |approx - exact| / |exact| in units of u^2 = 2^-106.
inline double rel_error_u2(dd::DD approx, const Mp& exact) {
  Mp e(approx);
  mpfr_sub(e.get(), e.get(), exact.get(), MPFR_RNDN);
  mpfr_div(e.get(), e.get(), exact.get(), MPFR_RNDN);
  mpfr_abs(e.get(), e.get(), MPFR_RNDN);
  mpfr_mul_2si(e.get(), e.get(), 106, MPFR_RNDN);
  return mpfr_get_d(e.get(), MPFR_RNDU);
}

}  // namespace attnv::reference::test
