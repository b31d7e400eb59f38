#pragma once
// Ziv's test: a double-double value known to within an absolute radius decides its rounding to
// double when every point of [value - radius, value + radius] rounds to the same double.
#include <cmath>
#include <limits>

#include "reference/fast/dd.h"

namespace attnv::reference::dd {

// The nearest double d of v = hi + lo is hi + lo. The exact offset v - d = (hi - d) + lo: hi - d
// is exact (d and hi are adjacent or equal doubles), the sum rounds once (relative error u,
// absorbed in the factor 1 + 2^-50). The interval rounds to d when offset + radius stays below
// half the gap to the next double up, and radius - offset below half the gap down; strict
// inequalities, so a tie is never claimed decided.
inline bool decides_rounding(DD v, double radius) {
  const double d = v.hi + v.lo;
  if (radius == 0) return !std::isnan(d);  // exact, -inf of a fully masked row included
  if (!std::isfinite(d) || !(radius >= 0)) return false;
  const double offset = (v.hi - d) + v.lo;
  const double up = std::nextafter(d, std::numeric_limits<double>::infinity()) - d;
  const double down = d - std::nextafter(d, -std::numeric_limits<double>::infinity());
  const double slack = 1.0 + 0x1p-50;
  return (offset + radius) * slack < 0.5 * up && (radius - offset) * slack < 0.5 * down;
}

}  // namespace attnv::reference::dd
