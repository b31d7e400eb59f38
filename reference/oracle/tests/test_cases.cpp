#include "reference/oracle/tests/test_cases.h"

#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "gen/rng.h"

namespace attnv::reference::oracle_test {

Case tiny_random_case(std::uint64_t seed, bool with_dout, const TinyLimits& lim) {
  gen::Rng rng(seed * 7919 + 13);
  Problem p;
  Shape& s = p.shape;
  s.B = rng.uniform_int(1, 2);
  s.Hkv = rng.uniform_int(1, 2);
  s.Hq = s.Hkv * rng.uniform_int(1, 3);
  s.Tq = rng.uniform_int(1, lim.max_t);
  s.Tk = rng.uniform_int(1, lim.max_t);
  s.Dk = rng.uniform_int(1, lim.max_d);
  s.Dv = rng.uniform_int(1, lim.max_d);
  p.dtype = kAllDTypes[rng.uniform_int(0, 3)];
  if (rng.bernoulli(0.4)) p.scale = rng.uniform(0.1, 3.0);
  if (rng.bernoulli(0.4)) p.softcap = rng.uniform(0.5, 5.0);
  p.causal = rng.bernoulli(0.4);
  p.alignment = rng.bernoulli(0.5) ? Alignment::top_left : Alignment::bottom_right;
  if (rng.bernoulli(0.3)) {
    p.window.left = rng.bernoulli(0.7) ? rng.uniform_int(0, 3) : -1;
    p.window.right = rng.bernoulli(0.7) ? rng.uniform_int(0, 3) : -1;
  }
  p.has_mask = rng.bernoulli(0.3);
  p.has_bias = rng.bernoulli(0.3);
  p.has_kv_len = rng.bernoulli(0.3);
  Case c = make_zero_case(p, with_dout);
  c.id = "oracle_tiny/" + std::to_string(seed);
  for (auto* vec : {&c.q, &c.k, &c.v, &c.dout})
    for (double& x : *vec) x = lim.value_scale * rng.normal();
  for (auto& m : c.mask) m = rng.bernoulli(0.75) ? 1 : 0;
  for (double& x : c.bias)
    x = rng.bernoulli(0.15) ? -std::numeric_limits<double>::infinity() : 2.0 * rng.normal();
  for (auto& n : c.kv_len) n = rng.bernoulli(0.15) ? 0 : rng.uniform_int(0, s.Tk);
  round_to_storage(c);
  return c;
}

bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t n = 0; n < a.size(); ++n)
    if (std::bit_cast<std::uint64_t>(a[n]) != std::bit_cast<std::uint64_t>(b[n])) return false;
  return true;
}

}  // namespace attnv::reference::oracle_test
