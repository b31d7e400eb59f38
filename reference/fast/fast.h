#pragma once
// The fast reference: attention in double-double arithmetic (compensated dot products, a
// double-double exp/log/tanh, compensated accumulation, double-double division), vectorized and
// parallel over (batch, head, row blocks). Each element carries a rigorous error radius; when the
// radius decides the rounding, the double returned is the correctly rounded f64 of the exact
// value. Elements whose radius straddles a rounding boundary (in practice: exact cancellation to
// ~0) are counted as unresolved; their value is still within the radius of the exact one.
#include <cstdint>

#include "problem/case.h"

namespace attnv::reference {

struct FastOptions {
  int threads = 0;  // <= 0: default_threads()
};

struct FastStats {
  std::int64_t elements = 0;    // output elements computed (out, lse, and gradients if asked)
  std::int64_t unresolved = 0;  // elements whose rounding the error radius could not decide
};

// What the fast reference knows of each element (extension, filled only when asked for), in the
// layout of Outputs: radius bounds |v - exact| where v is the double-double value before its
// rounding to double (the double returned is v's nearest double, so |returned - exact| <=
// radius + ulp/2); resolved is 1 where [v - radius, v + radius] rounds to one double (then the
// double returned is the correctly rounded exact value), else 0. Non-rigorous only if the
// derivations in row_softmax.cpp, fast_backward.cpp and accumulator.h are wrong.
struct FastAccuracy {
  Outputs radius;
  Outputs resolved;
};

// Forward: Outputs.out and Outputs.lse.
Outputs fast_forward(const Case& c, const FastOptions& opt = {}, FastStats* stats = nullptr,
                     FastAccuracy* accuracy = nullptr);
// Forward and backward: out, lse, dq, dk, dv of sum(dO * O). Requires c.dout.
Outputs fast_backward(const Case& c, const FastOptions& opt = {}, FastStats* stats = nullptr,
                      FastAccuracy* accuracy = nullptr);

}  // namespace attnv::reference
