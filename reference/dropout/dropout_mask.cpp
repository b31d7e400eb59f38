#include "reference/dropout/dropout_mask.h"

#include <cmath>

namespace attnv::reference {
namespace {

constexpr std::uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
constexpr std::uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;

struct HiLo {
  std::uint32_t hi, lo;
};
HiLo mul_hi_lo(std::uint32_t a, std::uint32_t b) {
  const std::uint64_t prod = static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b);
  return {static_cast<std::uint32_t>(prod >> 32), static_cast<std::uint32_t>(prod & 0xFFFFFFFFu)};
}

}  // namespace

std::array<std::uint32_t, 4> philox4x32_10(const std::array<std::uint32_t, 4>& counter,
                                           const std::array<std::uint32_t, 2>& key) {
  std::uint32_t x0 = counter[0], x1 = counter[1], x2 = counter[2], x3 = counter[3];
  std::uint32_t k0 = key[0], k1 = key[1];
  for (int round = 1; round <= 10; ++round) {
    const HiLo a = mul_hi_lo(kMul0, x0);
    const HiLo c = mul_hi_lo(kMul1, x2);
    const std::uint32_t n0 = c.hi ^ x1 ^ k0, n1 = c.lo, n2 = a.hi ^ x3 ^ k1, n3 = a.lo;
    x0 = n0;
    x1 = n1;
    x2 = n2;
    x3 = n3;
    k0 += kWeyl0;  // the bump after the last round is never used
    k1 += kWeyl1;
  }
  return {x0, x1, x2, x3};
}

bool dropout_kept(double p, std::uint64_t seed, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) {
  const std::array<std::uint32_t, 2> key = {static_cast<std::uint32_t>(seed & 0xFFFFFFFFu),
                                            static_cast<std::uint32_t>(seed >> 32)};
  const std::array<std::uint32_t, 4> counter = {static_cast<std::uint32_t>(j / 4), static_cast<std::uint32_t>(i),
                                                static_cast<std::uint32_t>(h), static_cast<std::uint32_t>(b)};
  const std::uint32_t w = philox4x32_10(counter, key)[static_cast<std::size_t>(j % 4)];
  const double tau = std::floor((1.0 - p) * 4294967296.0);  // exact: a power-of-two scaling
  return static_cast<double>(w) < tau;
}

}  // namespace attnv::reference
