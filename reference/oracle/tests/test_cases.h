#pragma once
// Small random cases with every SPEC option, for the oracle's own tests (independent of
// gen/families so the oracle is not tested only on what the families happen to draw).
#include <cstdint>

#include "problem/case.h"

namespace attnv::reference::oracle_test {

struct TinyLimits {
  std::int64_t max_t = 6;  // Tq, Tk <= max_t
  std::int64_t max_d = 4;  // Dk, Dv <= max_d
  double value_scale = 1.5;
};

// Shapes B 1-2, Hkv 1-2, G 1-3; random dtype, scale, softcap, causal, both alignments, window,
// mask, bias (some -inf), kv_len (some 0); values normal * value_scale rounded to the dtype.
Case tiny_random_case(std::uint64_t seed, bool with_dout, const TinyLimits& lim = {});

// True when the two vectors hold the same doubles bit for bit (NaN payloads included).
bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace attnv::reference::oracle_test
