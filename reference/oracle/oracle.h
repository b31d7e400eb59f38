#pragma once
// The oracle: attention computed in Boost.Multiprecision at the precision fixed in mp_real.h
// (>= 100 decimal digits), then rounded to the nearest double. It decides truth on small problems
// and on sampled rows of large ones. Written from SPEC, independently of core/.
//
// Hidden keys are never read into arithmetic, so NaN/inf there cannot leak. Non-finite values
// that are read (q, visible k/v rows, visible bias, dout) throw InputError naming the element.
#include <cstdint>
#include <vector>

#include "problem/case.h"

namespace attnv::reference {

// Two independent multiprecision code bases: MPFR is the oracle; cpp_bin_float checks it.
enum class Backend { mpfr, cpp_bin_float };

struct OracleRow {
  std::vector<double> out;  // O_i, Dv values
  double lse = 0;           // L_i; -inf when the row has no visible key
  // Only when asked for (with_radius): see OracleAccuracy.
  std::vector<double> out_radius;
  double lse_radius = 0;
  std::int64_t unresolved = 0;
};

// What the oracle knows of its own accuracy (extension; costs about as much again as the values).
// radius holds, element by element in the layout of Outputs, a bound (rounded up) on the
// distance between the multiprecision value before rounding and the exact one: ~1e-97 of the
// sum of the magnitudes of the terms. An element is unresolved when [value - radius,
// value + radius] straddles a rounding boundary between doubles, so the double returned may not
// be the correctly rounded exact value; in practice this happens only where terms cancel
// exactly (a gradient that is exactly 0 computed as ~1e-102, e.g. dq when the visible keys are
// equal), where |value| <= radius.
struct OracleAccuracy {
  Outputs radius;
  std::int64_t elements = 0;
  std::int64_t unresolved = 0;
};

// Forward for every row: Outputs.out and Outputs.lse.
Outputs oracle_forward(const Case& c, Backend backend = Backend::mpfr,
                       OracleAccuracy* accuracy = nullptr);
// One row (b, h, i): O(Tk * (Dk + Dv)) multiprecision work.
OracleRow oracle_row(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i,
                     Backend backend = Backend::mpfr, bool with_radius = false);
// Forward and backward: out, lse, dq, dk, dv of sum(dO * O). Requires c.dout.
Outputs oracle_backward(const Case& c, Backend backend = Backend::mpfr,
                        OracleAccuracy* accuracy = nullptr);

}  // namespace attnv::reference
