#pragma once
// The dropout mask of docs/dropout.md, implemented from the document alone (reference/ never
// includes core/): Philox-4x32-10 and the keep rule. The core has its own implementation
// (core/dropout.h); tests check both agree and match the published known answers.
#include <array>
#include <cstdint>

namespace attnv::reference {

// Philox-4x32-10 of a counter and a key (docs/dropout.md, "The generator").
std::array<std::uint32_t, 4> philox4x32_10(const std::array<std::uint32_t, 4>& counter,
                                           const std::array<std::uint32_t, 2>& key);

// m_ij of docs/dropout.md: whether weight (b, h, i, j) is kept under (p, seed).
bool dropout_kept(double p, std::uint64_t seed, std::int64_t b, std::int64_t h, std::int64_t i,
                  std::int64_t j);

}  // namespace attnv::reference
