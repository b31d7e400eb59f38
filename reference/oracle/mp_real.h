#pragma once
// The oracle's precision, chosen in this one place (as Boost.Math's tools/mp_t.hpp does).
// Included only by the oracle's own .cpp files: Boost.Multiprecision is slow to compile.
//
// 100 decimal digits (MPFR: 336 bits, unit roundoff ~1e-101) is far beyond f64: an attention
// output passes through ~Tk*(Dk+Dv) operations, so even at Tk = 1e6 the accumulated relative
// error (~1e-94) cannot move a rounding to double unless the value sits within 1e-94 of a
// midpoint between two doubles.
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <boost/multiprecision/mpfr.hpp>

namespace attnv::reference {

inline constexpr unsigned kOracleDigits10 = 100;

// The oracle: MPFR (correctly rounded exp/log/tanh, thread-safe for separate objects).
using mp_real = boost::multiprecision::number<
    boost::multiprecision::mpfr_float_backend<kOracleDigits10>, boost::multiprecision::et_off>;

// An independent code base used only to check the oracle (same precision, so the two rounded
// doubles must agree bit for bit).
using mp_check_real = boost::multiprecision::number<
    boost::multiprecision::cpp_bin_float<kOracleDigits10>, boost::multiprecision::et_off>;

}  // namespace attnv::reference
