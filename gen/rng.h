#pragma once
// A small, portable, seeded random source (splitmix64 seeding xoshiro256**). Written here rather
// than taken from <random> because the standard distributions differ between standard libraries,
// and a seed must name the same case everywhere.
#include <cmath>
#include <cstdint>

namespace attnv::gen {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& w : s_) {
      seed += 0x9e3779b97f4a7c15ull;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      w = z ^ (z >> 31);
    }
  }
  std::uint64_t next() {
    const std::uint64_t r = rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
    s_[2] ^= s_[0]; s_[3] ^= s_[1]; s_[1] ^= s_[2]; s_[0] ^= s_[3];
    s_[2] ^= t; s_[3] = rotl(s_[3], 45);
    return r;
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Integer in [lo, hi] (inclusive).
  std::int64_t uniform_int(std::int64_t lo, std::int64_t hi) {
    const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
    return lo + static_cast<std::int64_t>(span == 0 ? next() : next() % span);
  }
  bool bernoulli(double p) { return uniform() < p; }
  double normal() {  // Box-Muller; log and cos are correctly rounded enough for test data
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  // Student-t-like heavy tail: normal / sqrt(chi2_nu / nu) approximated with nu normals.
  double heavy_tail(int nu = 2) {
    double chi = 0;
    for (int i = 0; i < nu; ++i) { const double z = normal(); chi += z * z; }
    return normal() / std::sqrt(chi / nu + 1e-300);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace attnv::gen
