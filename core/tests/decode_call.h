#pragma once
// A decode call of the core tests laid out in memory (DecodeCall) and the random decode step it
// is built from (decode_case): shared by decode_test.cpp and paged_decode_test.cpp.
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core_test_util.h"
#include "problem/buffers.h"
#include "problem/case.h"
#include "problem/tensor.h"

namespace attnv::core::testing {

using I = std::int64_t;
using Shape4 = std::array<I, 4>;
inline constexpr double kFill = 7.0;  // the cache beyond cache_len: exact in every dtype, unlike the data

// A decode call laid out in memory: `full` is the equivalent forward (q [B,Hq,n,Dk], k and v the
// whole cache after the append, kv_len = cache_len + n); the cache starts with full's rows below
// cache_len[b] and kFill beyond, the new tokens are full's rows cache_len[b] .. + n - 1.
class DecodeCall {
 public:
  DecodeCall(const Case& full, Layout layout, double fill = kFill)
      : full_(full), n_(full.problem.shape.Tq), fill_(fill), cache_case_(cache_case(full, fill)),
        cache_(cache_case_, layout, false),
        step_case_(step_case(full)), step_(step_case_, layout, false) {
    for (I b = 0; b < full.problem.shape.B; ++b) cache_len_.push_back(full.kv_len[static_cast<std::size_t>(b)] - n_);
    problem_ = full.problem;
    problem_.has_kv_len = false;
    views_.q = step_.views().q;
    views_.k_new = step_.views().k;
    views_.v_new = step_.views().v;
    views_.k_cache = cache_.views().k;
    views_.v_cache = cache_.views().v;
    views_.cache_len = cache_len_.data();
    views_.out = step_.views().out;
    views_.lse = step_.views().lse;
    views_.sinks = step_.views().sinks;
    views_.alibi = step_.views().alibi;
  }
  const Problem& problem() const { return problem_; }
  DecodeViews& views() { return views_; }
  Outputs outputs() const { return step_.outputs(); }
  bool inputs_unchanged() const { return step_.inputs_unchanged(); }

  // "" when the cache holds full's rows below cache_len + n (cache_len before the call when
  // `appended` is false) and kFill beyond, bit for bit.
  std::string cache_difference(bool appended = true) const {
    const Shape& s = full_.problem.shape;
    for (int which = 0; which < 2; ++which) {
      const TensorRef& t = which == 0 ? views_.k_cache : views_.v_cache;
      const I D = which == 0 ? s.Dk : s.Dv;
      for (I b = 0; b < s.B; ++b)
        for (I h = 0; h < s.Hkv; ++h)
          for (I j = 0; j < s.Tk; ++j)
            for (I d = 0; d < D; ++d) {
              const bool filled = j < full_.kv_len[static_cast<std::size_t>(b)] - (appended ? 0 : n_);
              const double want = !filled ? fill_ : which == 0 ? full_.k[full_.ki(b, h, j, d)] : full_.v[full_.vi(b, h, j, d)];
              const double got = load(t, {b, h, j, d});
              if (std::isnan(want) ? !std::isnan(got) : std::memcmp(&got, &want, sizeof got) != 0)
                return std::string(which == 0 ? "k" : "v") + "_cache b=" + std::to_string(b) + " h=" + std::to_string(h) +
                       " j=" + std::to_string(j) + " d=" + std::to_string(d) + ": " + std::to_string(got) + " expected " +
                       std::to_string(want);
            }
    }
    return "";
  }

 private:
  static Case cache_case(const Case& full, double fill) {
    Problem p = full.problem;
    p.shape.Tq = 1;
    p.has_kv_len = false;
    Case c = make_zero_case(p, false);
    const Shape& s = p.shape;
    for (I b = 0; b < s.B; ++b)
      for (I h = 0; h < s.Hkv; ++h)
        for (I j = 0; j < s.Tk; ++j) {
          const bool old = j < full.kv_len[static_cast<std::size_t>(b)] - full.problem.shape.Tq;
          for (I d = 0; d < s.Dk; ++d) c.k[c.ki(b, h, j, d)] = old ? full.k[full.ki(b, h, j, d)] : fill;
          for (I d = 0; d < s.Dv; ++d) c.v[c.vi(b, h, j, d)] = old ? full.v[full.vi(b, h, j, d)] : fill;
        }
    return c;
  }
  static Case step_case(const Case& full) {
    Problem p = full.problem;
    const I n = p.shape.Tq;
    p.shape.Tk = n;
    p.has_kv_len = false;
    Case c = make_zero_case(p, false);
    c.q = full.q;
    c.sinks = full.sinks;
    c.alibi = full.alibi;
    const Shape& s = p.shape;
    for (I b = 0; b < s.B; ++b) {
      const I c0 = full.kv_len[static_cast<std::size_t>(b)] - n;
      for (I h = 0; h < s.Hkv; ++h)
        for (I i = 0; i < n; ++i) {
          for (I d = 0; d < s.Dk; ++d) c.k[c.ki(b, h, i, d)] = full.k[full.ki(b, h, c0 + i, d)];
          for (I d = 0; d < s.Dv; ++d) c.v[c.vi(b, h, i, d)] = full.v[full.vi(b, h, c0 + i, d)];
        }
    }
    return c;
  }

  const Case& full_;
  I n_;
  double fill_;
  Case cache_case_;
  CaseBuffers cache_;
  Case step_case_;
  CaseBuffers step_;
  std::vector<I> cache_len_;
  Problem problem_;
  DecodeViews views_;
};

// The equivalent forward of a decode step: n new tokens per batch after cache_len[b] old ones.
inline Case decode_case(DType t, I hq, I hkv, I n, I capacity, const std::vector<I>& cache_len, std::uint64_t seed,
                 I dk = 24, I dv = 20) {
  Problem p;
  p.shape = Shape{static_cast<I>(cache_len.size()), hq, hkv, n, capacity, dk, dv};
  p.dtype = t;
  p.causal = true;
  p.alignment = Alignment::bottom_right;
  p.has_kv_len = true;
  Case c = random_case(p, seed);
  for (std::size_t b = 0; b < cache_len.size(); ++b) c.kv_len[b] = cache_len[b] + n;
  return c;
}

}  // namespace attnv::core::testing
