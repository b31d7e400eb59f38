#pragma once
// Dropout on the attention weights (training only), exactly as docs/dropout.md defines it: a
// Philox-4x32-10 counter-based generator, so the mask of element (b, h, i, j) is a pure function
// of (seed, b, h, i, j) -- no state, any thread order, and the reference (reference/dropout/,
// written from the document, not from this file) reproduces it independently.
#include <array>
#include <cmath>
#include <cstdint>

#include "problem/layer.h"

namespace attnv::core {

using attnv::DropoutOptions;  // problem/layer.h: the options are the problem's

// Philox-4x32-10 (Salmon et al., SC'11; Random123's philox4x32_R with R = 10).
inline std::array<std::uint32_t, 4> philox4x32_10(std::array<std::uint32_t, 4> ctr,
                                                   std::array<std::uint32_t, 2> key) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += 0x9E3779B9u;
      key[1] += 0xBB67AE85u;
    }
    const std::uint64_t p0 = std::uint64_t{0xD2511F53u} * ctr[0];
    const std::uint64_t p1 = std::uint64_t{0xCD9E8D57u} * ctr[2];
    ctr = {static_cast<std::uint32_t>(p1 >> 32) ^ ctr[1] ^ key[0], static_cast<std::uint32_t>(p1),
           static_cast<std::uint32_t>(p0 >> 32) ^ ctr[3] ^ key[1], static_cast<std::uint32_t>(p0)};
  }
  return ctr;
}

// keep iff word < threshold, threshold = floor((1 - p) 2^32) (docs/dropout.md): a kept weight
// has probability threshold / 2^32 = 1 - p within 2^-32.
inline std::uint64_t dropout_threshold(double p) {
  return static_cast<std::uint64_t>(std::floor(std::ldexp(1.0 - p, 32)));
}

// Whether key j of row (b, h, i) is kept: counter (j / 4, i, h, b), word j mod 4.
inline bool dropout_keep(const DropoutOptions& d, std::uint64_t threshold, std::int64_t b,
                         std::int64_t h, std::int64_t i, std::int64_t j) {
  const std::array<std::uint32_t, 4> ctr = {static_cast<std::uint32_t>(j >> 2), static_cast<std::uint32_t>(i),
                                            static_cast<std::uint32_t>(h), static_cast<std::uint32_t>(b)};
  const std::array<std::uint32_t, 2> key = {static_cast<std::uint32_t>(d.seed),
                                            static_cast<std::uint32_t>(d.seed >> 32)};
  return philox4x32_10(ctr, key)[static_cast<std::size_t>(j & 3)] < threshold;
}

// Zeroes the dropped weights of keys [j0, j0 + n) of row (b, h, i) in w; one Philox block per
// 4 keys (any j0: a forward tile starts where the block's visible keys start).
template <class T>
void dropout_row(const DropoutOptions& d, std::uint64_t threshold, std::int64_t b, std::int64_t h,
                 std::int64_t i, std::int64_t j0, int n, T* w) {
  const std::array<std::uint32_t, 2> key = {static_cast<std::uint32_t>(d.seed),
                                            static_cast<std::uint32_t>(d.seed >> 32)};
  std::array<std::uint32_t, 4> words{};
  for (int c = 0; c < n; ++c) {
    const std::int64_t j = j0 + c;
    if (c == 0 || (j & 3) == 0)
      words = philox4x32_10({static_cast<std::uint32_t>(j >> 2), static_cast<std::uint32_t>(i),
                             static_cast<std::uint32_t>(h), static_cast<std::uint32_t>(b)}, key);
    if (words[static_cast<std::size_t>(j & 3)] >= threshold) w[c] = T(0);
  }
}

}  // namespace attnv::core
