#pragma once
// A small deterministic case for the plugin tests.
#include <cmath>

#include "problem/case.h"

namespace attnv::plugin::testing {

inline Case small_case(std::int64_t Tq, std::int64_t Tk, std::int64_t D, DType dt = DType::f32) {
  Problem p;
  p.shape = {1, 2, 2, Tq, Tk, D, D};
  p.dtype = dt;
  Case c = make_zero_case(p, false);
  int n = 0;
  for (auto* t : {&c.q, &c.k, &c.v})
    for (double& x : *t) x = std::sin(0.7 * ++n);
  round_to_storage(c);
  c.id = "plugin_test/small";
  return c;
}

}  // namespace attnv::plugin::testing
