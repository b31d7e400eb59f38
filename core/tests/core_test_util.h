#pragma once
// Shared checks of the core tests: run a kernel through the interface on a case, compare with
// the exact reference under the bound of the kernel's own declared precision model.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "problem/buffers.h"
#include "problem/case.h"
#include "core/isa.h"
#include "problem/kernel.h"

namespace attnv::core::testing {

// Runs `k` on `c` in `layout` and checks, with reference::fast_forward and bound::forward_bound under
// k.precision(dtype): every O and LSE element accepted, fully masked rows exactly O = 0 and
// LSE = -inf, and the inputs unchanged. `outputs` (optional) receives the kernel's outputs.
::testing::AssertionResult forward_within_bound(Kernel& k, const Case& c, Layout layout,
                                                Outputs* outputs = nullptr);

// A small problem: B=1, Hq=2, Hkv=1, Dk=Dv=16.
Problem make_problem(std::int64_t tq, std::int64_t tk, DType t = DType::f32);

// One of kFeatureVariants multi-head problems on the shape (tq, tk, Dk=24, dv): B=2, Hq=4, GQA
// (even variants) or MQA (odd), and per variant one visibility rule or option: causal in both
// alignments, windows, mask, bias with softcap, kv_len with a custom scale, softcap with causal,
// and mask + bias + causal together.
inline constexpr int kFeatureVariants = 9;
Problem feature_variant(int variant, std::int64_t tq, std::int64_t tk, std::int64_t dv, DType t);

// A case with normal(0, 1) values in the given problem's shape (mask: ~80% visible; bias:
// small values, some -inf; kv_len: random in [0, Tk]), rounded to the storage dtype.
Case random_case(const Problem& p, std::uint64_t seed);

// c with a normal(0, 1) dout (rounded to the storage dtype), for the backward.
Case with_dout(Case c, std::uint64_t seed);

// The ISA paths (core/isa.h) this CPU runs, portable first, widest last: tests that cover
// every path loop over these (the others cannot run here; isa_test.cpp says which are missing).
std::vector<Isa> runnable_isas();
// The paths that compute `storage` differently: runnable_isas(), plus the opt-in avx512_bf16
// path for bf16 when this CPU runs it (it differs from avx512 for bf16 storage only; isa.h).
std::vector<Isa> runnable_isas(DType storage);

// Bitwise equality of two kernel outputs (NaN-free by construction of the cases).
bool bitwise_equal(const Outputs& a, const Outputs& b);
// Bitwise equality of dQ, dK and dV.
bool same_gradients(const Outputs& a, const Outputs& b);

}  // namespace attnv::core::testing
