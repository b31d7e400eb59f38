#pragma once
// Shared checks of the core tests: run a kernel through the interface on a case, compare with
// the exact reference under the bound of the kernel's own declared precision model.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "problem/buffers.h"
#include "problem/case.h"
#include "problem/kernel.h"

namespace attnv::core::testing {

// Runs `k` on `c` in `layout` and checks, with ref::fast_forward and bound::forward_bound under
// k.precision(dtype): every O and LSE element accepted, fully masked rows exactly O = 0 and
// LSE = -inf, and the inputs unchanged. `outputs` (optional) receives the kernel's outputs.
::testing::AssertionResult forward_within_bound(Kernel& k, const Case& c, Layout layout,
                                                Outputs* outputs = nullptr);

// A case with normal(0, 1) values in the given problem's shape (mask: ~80% visible; bias:
// small values, some -inf; kv_len: random in [0, Tk]), rounded to the storage dtype.
Case random_case(const Problem& p, std::uint64_t seed);

// Bitwise equality of two kernel outputs (NaN-free by construction of the cases).
bool bitwise_equal(const Outputs& a, const Outputs& b);

}  // namespace attnv::core::testing
